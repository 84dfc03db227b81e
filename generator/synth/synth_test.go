package synth_test

import (
	"bytes"
	"io/fs"
	"os"
	"path/filepath"
	"strings"
	"testing"

	"github.com/certbank/certbank"
	"github.com/certbank/certbank/generator"
	"github.com/certbank/certbank/generator/synth"
)

func TestWriteLoadsAndPublishes(t *testing.T) {
	dir := t.TempDir()
	const certs, perCert = 4, 60
	if err := synth.Write(dir, certs, perCert, 7); err != nil {
		t.Fatal(err)
	}
	c, err := generator.Load(os.DirFS(dir), "content")
	if err != nil {
		t.Fatalf("the synthetic tree does not load:\n%v", err)
	}
	if got := len(c.Certifications); got != certs {
		t.Errorf("%d certifications, want %d", got, certs)
	}
	want := map[string]bool{}
	for _, s := range certbank.Slugs[:certs] {
		want[s] = true
	}
	for _, cert := range c.Certifications {
		if !want[cert.Slug] {
			t.Errorf("certification %q is not one of the first %d slugs", cert.Slug, certs)
		}
		if n := len(cert.Domains); n < 4 || n > 6 {
			t.Errorf("%s has %d domains, want 4–6", cert.Slug, n)
		}
	}
	if got := len(c.Questions); got != certs*perCert {
		t.Fatalf("%d questions, want %d", got, certs*perCert)
	}
	words := func(s string) int { return len(strings.Fields(s)) }
	for _, q := range c.Questions {
		if !c.Site.Quality.Verified(&q) {
			t.Errorf("%s does not meet the quality policy; every synthetic question should publish", q.ID)
		}
		if n := words(q.Stem); n < 34 || n > 46 {
			t.Errorf("%s: stem has %d words, want 34–46", q.ID, n)
		}
		for i, o := range q.Options {
			if n := words(o); n < 7 || n > 13 {
				t.Errorf("%s: option %s has %d words, want 7–13", q.ID, certbank.Letters[i], n)
			}
		}
		if n := words(q.Explanation); n < 70 || n > 92 {
			t.Errorf("%s: explanation has %d words, want 70–90 (+2 for a label)", q.ID, n)
		}
	}

	// About 22% of the question strings are single-quoted, as yaml.v3 writes
	// strings that contain ": ".
	var quoted, total int
	fs.WalkDir(os.DirFS(dir), ".", func(p string, d fs.DirEntry, err error) error {
		if err != nil || d.IsDir() || filepath.Base(p) != "questions.yaml" {
			return err
		}
		data, err := os.ReadFile(filepath.Join(dir, p))
		if err != nil {
			return err
		}
		for _, line := range strings.Split(string(data), "\n") {
			line = strings.TrimSpace(line)
			for _, k := range []string{"question: ", "A: ", "B: ", "C: ", "D: ", "explanation: "} {
				if strings.HasPrefix(line, k) {
					total++
					if strings.HasPrefix(line[len(k):], "'") {
						quoted++
					}
				}
			}
		}
		return nil
	})
	if share := float64(quoted) / float64(total); share < 0.17 || share > 0.27 {
		t.Errorf("%d of %d strings (%.0f%%) are single-quoted, want about 22%%", quoted, total, share*100)
	}
}

func TestWriteIsDeterministic(t *testing.T) {
	a, b, c := t.TempDir(), t.TempDir(), t.TempDir()
	for _, d := range []struct {
		dir  string
		seed int64
	}{{a, 1}, {b, 1}, {c, 2}} {
		if err := synth.Write(d.dir, 2, 10, d.seed); err != nil {
			t.Fatal(err)
		}
	}
	read := func(dir string) []byte {
		data, err := os.ReadFile(filepath.Join(dir, "certifications", certbank.Slugs[0], "questions", "questions.yaml"))
		if err != nil {
			t.Fatal(err)
		}
		return data
	}
	if !bytes.Equal(read(a), read(b)) {
		t.Error("the same seed gave different bytes")
	}
	if bytes.Equal(read(a), read(c)) {
		t.Error("different seeds gave the same bytes")
	}
}

func TestWriteRejectsBadCounts(t *testing.T) {
	for _, tc := range []struct{ certs, perCert int }{{-1, 1}, {len(certbank.Slugs) + 1, 1}, {1, -1}} {
		if err := synth.Write(t.TempDir(), tc.certs, tc.perCert, 1); err == nil {
			t.Errorf("Write(certs=%d, perCert=%d) succeeded, want an error", tc.certs, tc.perCert)
		}
	}
}
