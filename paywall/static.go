package paywall

import (
	"crypto/sha256"
	"encoding/hex"
	"mime"
	"net/http"
	"path"
	"strings"
)

// staticSite serves the built public/ tree from memory.
type staticSite struct {
	files map[string]staticFile
	page  []byte // 404.html
}

type staticFile struct {
	data  []byte
	ctype string
	etag  string
}

func newStaticSite(files map[string][]byte) *staticSite {
	s := &staticSite{files: map[string]staticFile{}}
	for p, data := range files {
		ct := mime.TypeByExtension(path.Ext(p))
		switch {
		case strings.HasSuffix(p, ".json") || strings.HasSuffix(p, "/x402") && strings.HasPrefix(p, ".well-known/"):
			ct = "application/json; charset=utf-8"
		case strings.HasSuffix(p, ".txt"):
			ct = "text/plain; charset=utf-8"
		case strings.HasSuffix(p, ".xml"):
			ct = "application/xml; charset=utf-8"
		case ct == "":
			ct = "application/octet-stream"
		}
		sum := sha256.Sum256(data)
		s.files[p] = staticFile{data: data, ctype: ct, etag: `"` + hex.EncodeToString(sum[:8]) + `"`}
	}
	s.page = files["404.html"]
	return s
}

// has reports whether r names a file (or a directory's index) of the site.
func (s *staticSite) has(r *http.Request) bool {
	p := strings.TrimPrefix(path.Clean("/"+r.URL.Path), "/")
	if _, ok := s.files[p]; ok {
		return true
	}
	_, ok := s.files[strings.TrimPrefix(p+"/index.html", "/")]
	return ok
}

func (s *staticSite) ServeHTTP(w http.ResponseWriter, r *http.Request) {
	if r.Method != http.MethodGet && r.Method != http.MethodHead {
		w.Header().Set("Allow", "GET, HEAD")
		http.Error(w, "method not allowed", http.StatusMethodNotAllowed)
		return
	}
	p := strings.TrimPrefix(path.Clean("/"+r.URL.Path), "/")
	f, ok := s.files[p]
	if !ok && (p == "" || strings.HasSuffix(r.URL.Path, "/")) {
		f, ok = s.files[strings.TrimPrefix(p+"/index.html", "/")]
	}
	if !ok {
		if _, dir := s.files[p+"/index.html"]; dir {
			http.Redirect(w, r, "/"+p+"/", http.StatusMovedPermanently)
			return
		}
		w.Header().Set("Content-Type", "text/html; charset=utf-8")
		w.WriteHeader(http.StatusNotFound)
		w.Write(s.page)
		return
	}
	h := w.Header()
	h.Set("Content-Type", f.ctype)
	h.Set("ETag", f.etag)
	h.Set("X-Content-Type-Options", "nosniff")
	if strings.HasPrefix(p, "assets/") {
		h.Set("Cache-Control", "public, max-age=31536000, immutable")
	} else {
		h.Set("Cache-Control", "public, max-age=300")
	}
	if strings.HasPrefix(p, "api/") || strings.HasPrefix(p, ".well-known/") || p == "catalog.json" || p == "openapi.json" {
		h.Set("Access-Control-Allow-Origin", "*")
	}
	if strings.HasSuffix(f.ctype, "html; charset=utf-8") || strings.HasPrefix(f.ctype, "text/html") {
		h.Set("Content-Security-Policy", "default-src 'self'; script-src 'self'; style-src 'self'; img-src 'self' data:; connect-src 'self'; base-uri 'none'; form-action 'self'; frame-ancestors 'none'")
		h.Set("Referrer-Policy", "strict-origin-when-cross-origin")
	}
	if match := r.Header.Get("If-None-Match"); match != "" && match == f.etag {
		w.WriteHeader(http.StatusNotModified)
		return
	}
	if r.Method == http.MethodHead {
		return
	}
	w.Write(f.data)
}
