package generator_test

import (
	"bytes"
	"os"
	"path/filepath"
	"runtime"
	"testing"

	"github.com/certbank/certbank"
	"github.com/certbank/certbank/generator"
	"github.com/certbank/certbank/generator/synth"
)

// TestGolden builds the fixture with a fixed date, writes it with
// Output.Write and compares the whole tree with testdata/site/want/ and the
// bank bundle with testdata/site/bank.json: missing, extra and changed files
// all fail. `go test ./generator -run TestGolden -update` rewrites them.
func TestGolden(t *testing.T) {
	pub, bank := writeFixture(t, t.TempDir())
	got := readTree(t, pub)
	gotBank, err := os.ReadFile(bank)
	if err != nil {
		t.Fatal(err)
	}
	if *update {
		if err := os.RemoveAll(fixtureWant); err != nil {
			t.Fatal(err)
		}
		for p, data := range got {
			dst := filepath.Join(fixtureWant, filepath.FromSlash(p))
			if err := os.MkdirAll(filepath.Dir(dst), 0o755); err != nil {
				t.Fatal(err)
			}
			if err := os.WriteFile(dst, data, 0o644); err != nil {
				t.Fatal(err)
			}
		}
		if err := os.WriteFile(fixtureBank, gotBank, 0o644); err != nil {
			t.Fatal(err)
		}
		t.Logf("rewrote %s (%d files) and %s", fixtureWant, len(got), fixtureBank)
		return
	}
	want := readTree(t, fixtureWant)
	if len(want) == 0 {
		t.Fatalf("%s is empty; run go test ./generator -run TestGolden -update", fixtureWant)
	}
	compareTrees(t, "public/", got, want)
	wantBank, err := os.ReadFile(fixtureBank)
	if err != nil {
		t.Fatal(err)
	}
	compareTrees(t, "bank bundle", map[string][]byte{"bank.json": gotBank}, map[string][]byte{"bank.json": wantBank})
}

// TestOutputFilesMatchDisk checks that Write puts exactly Output.Files
// under public/ and exactly BankJSON at the bank path, and that BankJSON is
// what certbank.WriteBank makes of Output.Bank (the service reads it with
// certbank.ReadBank).
func TestOutputFilesMatchDisk(t *testing.T) {
	_, out := buildFixture(t)
	dir := t.TempDir()
	pub, bank := filepath.Join(dir, "public"), filepath.Join(dir, "bank.json")
	if err := out.Write(pub, bank); err != nil {
		t.Fatal(err)
	}
	compareTrees(t, "public/ vs Output.Files", readTree(t, pub), out.Files)
	disk, err := os.ReadFile(bank)
	if err != nil {
		t.Fatal(err)
	}
	if !bytes.Equal(disk, out.BankJSON) {
		t.Error("the bank file differs from Output.BankJSON")
	}
	var buf bytes.Buffer
	if err := certbank.WriteBank(&buf, out.Bank); err != nil {
		t.Fatal(err)
	}
	if !bytes.Equal(buf.Bytes(), out.BankJSON) {
		t.Errorf("Output.BankJSON is not certbank.WriteBank(Output.Bank):\n%s", lineDiff(buf.Bytes(), out.BankJSON))
	}
	back, err := certbank.ReadBank(bytes.NewReader(disk))
	if err != nil {
		t.Fatalf("ReadBank of the written bundle: %v", err)
	}
	if len(back.Questions) != len(out.Bank.Questions) || len(back.Certifications) != len(out.Bank.Certifications) {
		t.Errorf("ReadBank gave %d questions and %d certifications, want %d and %d",
			len(back.Questions), len(back.Certifications), len(out.Bank.Questions), len(out.Bank.Certifications))
	}
	if st, err := os.Stat(bank); err != nil || st.Mode().Perm() != 0o600 {
		t.Errorf("bank bundle mode %v (%v), want 0600: it holds every answer", st.Mode().Perm(), err)
	}
}

// TestDeterministic builds the same content twice into two directories
// and compares every file byte for byte, once with the default GOMAXPROCS
// and once with GOMAXPROCS=1 (Load decodes files in parallel).
func TestDeterministic(t *testing.T) {
	pubA, bankA := writeFixture(t, t.TempDir())
	pubB, bankB := writeFixture(t, t.TempDir())
	prev := runtime.GOMAXPROCS(1)
	pubC, bankC := writeFixture(t, t.TempDir())
	runtime.GOMAXPROCS(prev)

	a := readTree(t, pubA)
	read := func(p string) []byte {
		data, err := os.ReadFile(p)
		if err != nil {
			t.Fatal(err)
		}
		return data
	}
	a["../bank.json"] = read(bankA)
	b := readTree(t, pubB)
	b["../bank.json"] = read(bankB)
	c := readTree(t, pubC)
	c["../bank.json"] = read(bankC)
	compareTrees(t, "second build", b, a)
	compareTrees(t, "build with GOMAXPROCS=1", c, a)
	if len(a) < 20 {
		t.Errorf("only %d files built; the comparison proves little", len(a))
	}
}

// TestBankJSONIsWriteBank: the bundle the build encodes (in parallel
// chunks) is byte for byte what certbank.WriteBank writes, for a bank of
// several hundred synthetic questions, an empty bank, and a nil one.
func TestBankJSONIsWriteBank(t *testing.T) {
	dir := t.TempDir()
	if err := synth.Write(dir, 3, 150, 42); err != nil {
		t.Fatal(err)
	}
	c, err := generator.Load(os.DirFS(dir), "content")
	if err != nil {
		t.Fatal(err)
	}
	full := c.Questions
	for _, tc := range []struct {
		name string
		qs   []certbank.Question
	}{{"450 questions", full}, {"one question", full[:1]}, {"empty", []certbank.Question{}}, {"nil", nil}} {
		t.Run(tc.name, func(t *testing.T) {
			c.Questions = tc.qs
			c.Sources = c.Sources[:0]
			for range tc.qs {
				c.Sources = append(c.Sources, generator.Source{File: "content/x.yaml", Line: 1})
			}
			out, err := generator.Build(c, generator.Options{Date: fixtureDate})
			if err != nil {
				t.Fatal(err)
			}
			var want bytes.Buffer
			if err := certbank.WriteBank(&want, out.Bank); err != nil {
				t.Fatal(err)
			}
			if !bytes.Equal(out.BankJSON, want.Bytes()) {
				t.Errorf("BankJSON differs from WriteBank:\n%s", lineDiff(want.Bytes(), out.BankJSON))
			}
		})
	}
}
