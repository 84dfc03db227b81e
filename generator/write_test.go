package generator_test

import (
	"os"
	"path/filepath"
	"strings"
	"testing"

	"github.com/certbank/certbank/generator"
)

// snapshot is every file under dir (public and private) by path.
func snapshot(t *testing.T, dir string) map[string][]byte { return readTree(t, dir) }

// TestWriteFailureKeepsOldSite: when Write fails, the public directory
// written before is untouched byte for byte and no staging directory is
// left behind.
func TestWriteFailureKeepsOldSite(t *testing.T) {
	_, out := buildFixture(t)
	tests := []struct {
		name string
		// fail returns an Output and a bank path that make Write fail.
		fail func(t *testing.T, dir string) (*generator.Output, string)
	}{
		{"bank directory cannot be created", func(t *testing.T, dir string) (*generator.Output, string) {
			blocker := filepath.Join(dir, "private-is-a-file")
			if err := os.WriteFile(blocker, []byte("x"), 0o644); err != nil {
				t.Fatal(err)
			}
			return out, filepath.Join(blocker, "bank.json")
		}},
		{"bank path is a directory", func(t *testing.T, dir string) (*generator.Output, string) {
			p := filepath.Join(dir, "bank-dir")
			if err := os.MkdirAll(filepath.Join(p+".tmp", "x"), 0o755); err != nil {
				t.Fatal(err)
			}
			return out, p
		}},
		{"bank path is an existing directory", func(t *testing.T, dir string) (*generator.Output, string) {
			p := filepath.Join(dir, "bank-is-a-dir")
			if err := os.MkdirAll(filepath.Join(p, "x"), 0o755); err != nil {
				t.Fatal(err)
			}
			return out, p
		}},
		{"a public file cannot be written", func(t *testing.T, dir string) (*generator.Output, string) {
			// "catalog.json" is a file, so "catalog.json/x" cannot be one.
			bad := &generator.Output{Files: map[string][]byte{}, Bank: out.Bank, BankJSON: out.BankJSON}
			for p, d := range out.Files {
				bad.Files[p] = d
			}
			bad.Files["catalog.json/x"] = []byte("{}")
			return bad, filepath.Join(dir, "private", "bank.json")
		}},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			dir := t.TempDir()
			pub, bank := writeFixture(t, dir)
			before := snapshot(t, pub)
			beforeBank, err := os.ReadFile(bank)
			if err != nil {
				t.Fatal(err)
			}
			o, badBank := tt.fail(t, dir)
			// The second build's content differs, so a partial write would show.
			o.Files["index.html"] = []byte("<!doctype html><title>new</title>")
			defer func() { o.Files["index.html"] = out.Files["index.html"] }()
			if err := o.Write(pub, badBank); err == nil {
				t.Fatal("Write succeeded; the test did not make it fail")
			}
			compareTrees(t, "public/ after a failed Write", snapshot(t, pub), before)
			if after, err := os.ReadFile(bank); err != nil || string(after) != string(beforeBank) {
				t.Errorf("the old bank bundle changed (%v)", err)
			}
			entries, err := os.ReadDir(dir)
			if err != nil {
				t.Fatal(err)
			}
			for _, e := range entries {
				if strings.Contains(e.Name(), "staging") {
					t.Errorf("Write left %s behind", e.Name())
				}
			}
		})
	}
}

// TestWriteReplacesSite: a successful Write replaces the whole site, so
// files of the previous build that the new one lacks disappear, and it
// leaves no staging directory or temporary bank file.
func TestWriteReplacesSite(t *testing.T) {
	dir := t.TempDir()
	pub, bank := writeFixture(t, dir)
	stale := filepath.Join(pub, "certifications", "gone", "index.html")
	if err := os.MkdirAll(filepath.Dir(stale), 0o755); err != nil {
		t.Fatal(err)
	}
	if err := os.WriteFile(stale, []byte("old"), 0o644); err != nil {
		t.Fatal(err)
	}
	_, out := buildFixture(t)
	if err := out.Write(pub, bank); err != nil {
		t.Fatal(err)
	}
	if _, err := os.Stat(stale); !os.IsNotExist(err) {
		t.Errorf("a file of the previous site survived the rebuild (%v)", err)
	}
	compareTrees(t, "public/", snapshot(t, pub), out.Files)
	for _, d := range []string{dir, filepath.Dir(bank)} {
		entries, _ := os.ReadDir(d)
		for _, e := range entries {
			if strings.Contains(e.Name(), "staging") || strings.HasSuffix(e.Name(), ".tmp") {
				t.Errorf("Write left %s in %s", e.Name(), d)
			}
		}
	}
}

// TestWriteRefusesBankInsidePublic: the bank bundle holds every answer, so
// Write refuses any bank path inside the public directory and writes
// nothing.
func TestWriteRefusesBankInsidePublic(t *testing.T) {
	_, out := buildFixture(t)
	tests := []struct {
		bank    string // relative to the temp dir; public is "site/public"
		refused bool
	}{
		{"site/public/bank.json", true},
		{"site/public/private/bank.json", true},
		{"site/public/.well-known/../bank.json", true},
		{"site/public", true},
		{"site/bank.json", false},
		{"site/public-bank.json", false},
		{"site/public/../bank.json", false},
		{"site/publicity/bank.json", false},
	}
	for _, tt := range tests {
		t.Run(tt.bank, func(t *testing.T) {
			dir := t.TempDir()
			pub := filepath.Join(dir, "site", "public")
			// filepath.Join would clean the ".." away; keep it as given.
			bank := dir + string(filepath.Separator) + filepath.FromSlash(tt.bank)
			err := out.Write(pub, bank)
			if !tt.refused {
				if err != nil {
					t.Fatalf("Write(%s) failed: %v", tt.bank, err)
				}
				return
			}
			if err == nil {
				t.Fatalf("Write accepted the bank bundle at %s, inside public/", tt.bank)
			}
			if !strings.Contains(err.Error(), "must not be inside") {
				t.Errorf("error %q does not say why", err)
			}
			if _, err := os.Stat(filepath.Join(dir, "site")); !os.IsNotExist(err) {
				t.Errorf("a refused Write still created files (%v)", err)
			}
		})
	}
}
