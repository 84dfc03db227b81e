package main

import (
	"bytes"
	"context"
	"os"
	"path/filepath"
	"regexp"
	"strings"
	"testing"
)

// The command tree run in process: exit codes, what each command prints,
// and that a failed build leaves the old site alone.

const fixture = "../../generator/testdata/site/content"

type result struct {
	code           int
	stdout, stderr string
}

func cli(t *testing.T, env map[string]string, args ...string) result {
	t.Helper()
	var out, errb bytes.Buffer
	code := run(context.Background(), args, strings.NewReader(""), &out, &errb, func(k string) string { return env[k] })
	return result{code, out.String(), errb.String()}
}

// copyContent copies the fixture content tree into a temp dir.
func copyContent(t *testing.T) string {
	t.Helper()
	dir := filepath.Join(t.TempDir(), "content")
	if err := os.CopyFS(dir, os.DirFS(fixture)); err != nil {
		t.Fatal(err)
	}
	return dir
}

func TestBuildAndContentErrors(t *testing.T) {
	content := copyContent(t)
	work := t.TempDir()
	pub, bank := filepath.Join(work, "public"), filepath.Join(work, "bank.json")
	r := cli(t, nil, "build", "--content", content, "--out", pub, "--bank", bank)
	if r.code != exitOK || !strings.Contains(r.stdout, "published questions") {
		t.Fatalf("build: %+v", r)
	}
	catalog, err := os.ReadFile(filepath.Join(pub, "catalog.json"))
	if err != nil {
		t.Fatal(err)
	}
	if _, err := os.Stat(bank); err != nil {
		t.Fatalf("no bank bundle: %v", err)
	}

	// Break one question: exit 3, file:line on stderr, the old site intact.
	q := filepath.Join(content, "certifications/cissp/questions/01-risk.yaml")
	src, _ := os.ReadFile(q)
	os.WriteFile(q, bytes.Replace(src, []byte("    answer: C\n"), []byte("    answer: Z\n"), 1), 0o644)
	r = cli(t, nil, "build", "--content", content, "--out", pub, "--bank", bank)
	if r.code != exitContent {
		t.Fatalf("broken content: exit %d, want %d\n%s", r.code, exitContent, r.stderr)
	}
	if !regexp.MustCompile(`cissp/questions/01-risk\.yaml:16: answer "Z" must be one of the option letters`).MatchString(r.stderr) {
		t.Errorf("stderr lacks file:line and the fix:\n%s", r.stderr)
	}
	after, err := os.ReadFile(filepath.Join(pub, "catalog.json"))
	if err != nil || !bytes.Equal(after, catalog) {
		t.Errorf("a failed build changed the existing public/ (%v)", err)
	}
	entries, _ := os.ReadDir(work)
	for _, e := range entries {
		if strings.Contains(e.Name(), "staging") {
			t.Errorf("left a staging directory: %s", e.Name())
		}
	}
}

func TestUsageErrors(t *testing.T) {
	for _, args := range [][]string{
		{"build", "--no-such-flag"},
		{"build", "extra-argument"},
		{"build", "--content", filepath.Join(t.TempDir(), "missing")},
		{"keys", "set-tier", "key_x"},
		{"pay", "http://127.0.0.1:1/api/v1/x402?certification=cissp&limit=10"},
		{"serve", "--public", t.TempDir()},
	} {
		if r := cli(t, nil, args...); r.code != exitUsage || !strings.Contains(r.stderr, "certbank help") {
			t.Errorf("%v: exit %d, want %d\n%s", args, r.code, exitUsage, r.stderr)
		}
	}
}

func TestServeRefusesBadMemoryLimit(t *testing.T) {
	for _, v := range []string{"lots", "16MiB", "-1GiB"} {
		r := cli(t, nil, "serve", "--memory-limit", v)
		if r.code != exitUsage || !strings.Contains(r.stderr, "--memory-limit \""+v+"\"") || !strings.Contains(r.stderr, "auto") {
			t.Errorf("serve --memory-limit %s: exit %d, want %d naming the value and the choices\n%s", v, r.code, exitUsage, r.stderr)
		}
	}
}

func TestChecksFailWithExit3(t *testing.T) {
	content := copyContent(t)
	// The fixture has a handful of questions per certification, so the
	// answer-letter balance rule fires: strict lint fails, plain lint warns.
	if r := cli(t, nil, "lint", "--content", content); r.code != exitOK || !strings.Contains(r.stdout, "[answer-balance]") {
		t.Errorf("lint: %+v", r)
	}
	r := cli(t, nil, "lint", "--strict", "--content", content)
	if r.code != exitContent || !strings.Contains(r.stderr, "--strict fails on any") || strings.Contains(r.stderr, "nothing was written") {
		t.Errorf("lint --strict: %+v", r)
	}
	// The fixture has questions with one solver and a disagreement.
	r = cli(t, nil, "verify", "status", "--check", "--content", content)
	if r.code != exitContent || !strings.Contains(r.stderr, "not every question is verified") {
		t.Errorf("verify status --check: %+v", r)
	}
}

func TestKeysAndPayments(t *testing.T) {
	env := map[string]string{"CERTBANK_DATABASE": "sqlite:" + filepath.Join(t.TempDir(), "db.sqlite")}
	r := cli(t, env, "keys", "create", "--name", "Ada", "--email", "Ada@Example.com")
	key := strings.Fields(r.stdout)
	if r.code != exitOK || len(key) == 0 || !strings.HasPrefix(key[0], "cb_live_") {
		t.Fatalf("create: %+v", r)
	}
	if r := cli(t, env, "keys", "create", "--email", "ada@example.com"); r.code != exitError || !strings.Contains(r.stderr, "exists") {
		t.Errorf("second key for the same email: %+v", r)
	}
	if r := cli(t, env, "keys", "set-tier", "ada@example.com", "enterprise"); r.code != exitUsage || !strings.Contains(r.stderr, "--until") {
		t.Errorf("set-tier without --until: %+v", r)
	}
	if r := cli(t, env, "keys", "set-tier", "ada@example.com", "enterprise", "--until", "2027-01-31"); r.code != exitOK || !strings.Contains(r.stdout, "until 2027-01-31") {
		t.Errorf("set-tier: %+v", r)
	}
	if r := cli(t, env, "keys", "show", key[0]); r.code != exitOK || !strings.Contains(r.stdout, "enterprise (until 2027-01-31)") || !strings.Contains(r.stdout, "0 requests") {
		t.Errorf("show by key: %+v", r)
	}
	r = cli(t, env, "keys", "rotate", "ada@example.com")
	newKey := strings.Fields(r.stdout)
	if r.code != exitOK || len(newKey) == 0 || newKey[0] == key[0] {
		t.Fatalf("rotate: %+v", r)
	}
	if r := cli(t, env, "keys", "show", key[0]); r.code == exitOK {
		t.Errorf("the old key still resolves after rotation: %+v", r)
	}
	if r := cli(t, env, "keys", "revoke", newKey[0]); r.code != exitOK {
		t.Errorf("revoke: %+v", r)
	}
	if r := cli(t, env, "keys", "list"); r.code != exitOK || !strings.Contains(r.stdout, "ada@example.com") || !strings.Contains(r.stdout, "revoked") {
		t.Errorf("list: %+v", r)
	}
	if r := cli(t, env, "payments", "list"); r.code != exitOK || !strings.Contains(r.stdout, "0 payments, 0 USDC settled") {
		t.Errorf("payments list: %+v", r)
	}
	if r := cli(t, env, "payments", "export"); r.code != exitOK || !strings.HasPrefix(r.stdout, "created_at,updated_at,status,payer") {
		t.Errorf("payments export: %+v", r)
	}
	if r := cli(t, env, "payments", "list", "--status", "lost"); r.code != exitUsage {
		t.Errorf("bad status: %+v", r)
	}
}

func TestMemoryLimit(t *testing.T) {
	for _, tc := range []struct {
		flag, env string
		live      uint64
		want      int64
	}{
		{"auto", "", 36 << 20, 36<<20 + 9<<20 + 48<<20},
		{"auto", "", 1 << 20, 64 << 20}, // the floor
		{"auto", "200MiB", 36 << 20, 0}, // GOMEMLIMIT wins
		{"off", "", 36 << 20, 0},
		{"256MiB", "", 36 << 20, 256 << 20},
		{"1GiB", "", 0, 1 << 30},
		{"100000000", "", 0, 100000000},
	} {
		if got, _ := memoryLimit(tc.flag, tc.env, tc.live); got != tc.want {
			t.Errorf("memoryLimit(%q, %q, %d) = %d, want %d", tc.flag, tc.env, tc.live, got, tc.want)
		}
	}
	for _, bad := range []string{"", "lots", "-5MiB", "1.5GiB", "0", "16MiB", "12 MiB"} {
		if err := checkMemoryLimit(bad); err == nil {
			t.Errorf("checkMemoryLimit(%q) accepted it", bad)
		}
	}
	for _, good := range []string{"auto", "off", "64MiB", "2GiB"} {
		if err := checkMemoryLimit(good); err != nil {
			t.Errorf("checkMemoryLimit(%q) = %v", good, err)
		}
	}
}
