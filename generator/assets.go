package generator

import (
	"bytes"
	"fmt"
	"path"

	"github.com/tdewolff/minify/v2"
	"github.com/tdewolff/minify/v2/css"
	"github.com/tdewolff/minify/v2/js"
)

// assetMinifier shrinks the site's scripts and stylesheets: the sources in
// templates/assets stay readable, and a hub stays within its page-weight
// budget (e2e "page weight"). The output is deterministic.
var assetMinifier = func() *minify.M {
	m := minify.New()
	m.AddFunc("text/css", css.Minify)
	m.AddFunc("text/javascript", (&js.Minifier{KeepVarNames: false}).Minify)
	return m
}()

// minifyAsset returns the asset at p minified when it is a script or a
// stylesheet, and as it is otherwise.
func minifyAsset(p string, data []byte) ([]byte, error) {
	mime := map[string]string{".js": "text/javascript", ".css": "text/css"}[path.Ext(p)]
	if mime == "" {
		return data, nil
	}
	var out bytes.Buffer
	if err := assetMinifier.Minify(mime, &out, bytes.NewReader(data)); err != nil {
		return nil, fmt.Errorf("minify %s: %w", p, err)
	}
	return out.Bytes(), nil
}
