package main

import (
	"bytes"
	"context"
	"errors"
	"net/http"
	"net/http/httptest"
	"os"
	"path/filepath"
	"strings"
	"testing"

	"github.com/certbank/certbank/verify"
)

// The run functions of lint, migrate, pay and verify import/run/override,
// called with their options structs as the cobra commands call them.

// testApp returns an app writing to buffers, with no environment.
func testApp() (*app, *bytes.Buffer, *bytes.Buffer) {
	var out, errb bytes.Buffer
	return &app{stdout: &out, stderr: &errb, getenv: func(string) string { return "" }}, &out, &errb
}

func isUsage(err error) bool {
	var u usageError
	return errors.As(err, &u)
}

func isCheckFailed(err error) bool {
	var c checkFailed
	return errors.As(err, &c)
}

func TestRunLint(t *testing.T) {
	content := verifyContent(t)
	// A vendor name in a neutral certification is a finding.
	path := filepath.Join(content, "certifications/scrum-psm1/questions/01-framework.yaml")
	clean, _ := os.ReadFile(path)
	tests := []struct {
		name      string
		o         lintOptions
		edit      func(string) string
		want      string
		usage     bool
		checkFail bool
	}{
		{"as is", lintOptions{content: content}, nil, "questions in 2 certifications", false, false},
		{"missing dir", lintOptions{content: filepath.Join(content, "nope")}, nil, "", true, false},
		{"finding, not strict", lintOptions{content: content}, vendorEdit, "[vendor-name]", false, false},
		{"finding, strict", lintOptions{content: content, strict: true}, vendorEdit, "[vendor-name]", false, true},
	}
	for _, tc := range tests {
		t.Run(tc.name, func(t *testing.T) {
			text := string(clean)
			if tc.edit != nil {
				text = tc.edit(text)
			}
			if err := os.WriteFile(path, []byte(text), 0o644); err != nil {
				t.Fatal(err)
			}
			a, out, _ := testApp()
			err := a.runLint(&tc.o)
			if isUsage(err) != tc.usage || isCheckFailed(err) != tc.checkFail {
				t.Fatalf("error %v; want usage %v, check failed %v", err, tc.usage, tc.checkFail)
			}
			if !strings.Contains(out.String(), tc.want) {
				t.Errorf("output lacks %q:\n%s", tc.want, out)
			}
			if tc.edit == nil && strings.Contains(out.String(), "vendor-name") {
				t.Errorf("a finding the fixture does not have:\n%s", out)
			}
		})
	}
}

// vendorEdit makes the fixture's first explanation name a real vendor.
func vendorEdit(s string) string {
	return strings.Replace(s, "explanation: >-\n", "explanation: >-\n      Microsoft teams do this too.\n", 1)
}

func TestRunMigrate(t *testing.T) {
	a, out, _ := testApp()
	db := filepath.Join(t.TempDir(), "m.db")
	if err := a.runMigrate(context.Background(), &migrateOptions{dsn: "sqlite:" + db}); err != nil {
		t.Fatal(err)
	}
	if !strings.Contains(out.String(), "schema up to date") {
		t.Errorf("output %q", out)
	}
	if _, err := os.Stat(db); err != nil {
		t.Errorf("no database file: %v", err)
	}
	// Twice is fine; a bad DSN is refused.
	if err := a.runMigrate(context.Background(), &migrateOptions{dsn: "sqlite:" + db}); err != nil {
		t.Errorf("second migrate: %v", err)
	}
	if err := a.runMigrate(context.Background(), &migrateOptions{dsn: "mysql://x"}); err == nil {
		t.Error("a mysql DSN was accepted")
	}
}

func TestRunVerifyImportAndOverride(t *testing.T) {
	content := verifyContent(t)
	open := func() (*verify.Bank, error) { return verify.Open(content) }
	dir := t.TempDir()
	if r := cli(t, nil, "verify", "sheet", "--content", content, "--certification", "scrum-psm1", "--dir", dir); r.code != exitOK {
		t.Fatalf("sheet: %+v", r)
	}
	answers := map[string]string{}
	for id, l := range scrumKeys {
		answers[id] = l
	}
	wrong := "07493def-2ce7-46c9-a2c3-3c5ede61f64e"
	answers[wrong] = "A" // the key is D
	sheet := fill(t, filepath.Join(dir, "scrum-psm1-01.txt"), answers)

	a, out, _ := testApp()
	if err := a.runVerifyImport(open, &verifyImportOptions{files: []string{sheet}}); !isUsage(err) {
		t.Errorf("import without --solver: %v, want a usage error", err)
	}
	err := a.runVerifyImport(open, &verifyImportOptions{solver: "bob", date: "2026-11-25", files: []string{sheet}})
	if err != nil || !strings.Contains(out.String(), `recorded 5 answers of "bob" (4 agree with the stored answer, 1 disagree)`) {
		t.Fatalf("import: %v\n%s", err, out)
	}

	tests := []struct {
		name  string
		o     verifyOverrideOptions
		usage bool
		ok    bool
	}{
		{"no reason", verifyOverrideOptions{id: wrong, solver: "bob"}, true, false},
		{"unknown solver", verifyOverrideOptions{id: wrong, solver: "carol", reason: "reviewed"}, true, false},
		{"recorded", verifyOverrideOptions{id: wrong, solver: "bob", reason: "D is right: the guide says so"}, false, true},
	}
	for _, tc := range tests {
		out.Reset()
		err := a.runVerifyOverride(open, &tc.o)
		if isUsage(err) != tc.usage || (err == nil) != tc.ok {
			t.Errorf("%s: error %v", tc.name, err)
		}
	}
	b, _ := open()
	st, err := b.Status("scrum-psm1")
	if err != nil || len(st.Disagreeing) != 0 {
		t.Errorf("after the override: %v, disagreeing %+v", err, st.Disagreeing)
	}
}

func TestRunVerifyRun(t *testing.T) {
	content := verifyContent(t)
	open := func() (*verify.Bank, error) { return verify.Open(content) }
	// A program solver that always answers C.
	prog := filepath.Join(t.TempDir(), "solver.sh")
	if err := os.WriteFile(prog, []byte("#!/bin/sh\ncat >/dev/null\necho C\n"), 0o755); err != nil {
		t.Fatal(err)
	}
	tests := []struct {
		name  string
		o     verifyRunOptions
		usage bool
		want  string
	}{
		{"no solver", verifyRunOptions{run: verify.RunOptions{Concurrency: 1}}, true, ""},
		{"bad spec", verifyRunOptions{specs: []string{"=cmd:" + prog}, run: verify.RunOptions{Concurrency: 1}}, true, ""},
		{"zero concurrency", verifyRunOptions{specs: []string{"c-bot=cmd:" + prog}}, true, ""},
		{"answers", verifyRunOptions{specs: []string{"c-bot, a test program=cmd:" + prog}, run: verify.RunOptions{Certification: "scrum-psm1", Concurrency: 2, Retries: 1}},
			false, "5 of 5 questions answered (4 agree with the stored answer, 1 disagree)"},
		{"again: nothing to ask", verifyRunOptions{specs: []string{"c-bot, a test program=cmd:" + prog}, run: verify.RunOptions{Certification: "scrum-psm1", Concurrency: 2}},
			false, "0 of 0 questions answered"},
	}
	for _, tc := range tests {
		a, out, _ := testApp()
		err := a.runVerifyRun(context.Background(), open, &tc.o)
		if isUsage(err) != tc.usage || (!tc.usage && err != nil) {
			t.Errorf("%s: error %v", tc.name, err)
		}
		if !strings.Contains(out.String(), tc.want) {
			t.Errorf("%s: output lacks %q:\n%s", tc.name, tc.want, out)
		}
	}
}

func TestRunPay(t *testing.T) {
	srv := httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		if r.URL.Query().Get("fail") != "" {
			http.Error(w, `{"error":"boom"}`, http.StatusInternalServerError)
			return
		}
		w.Header().Set("Content-Type", "application/json")
		w.Write([]byte(`{"meta":{"certification":"cissp","price_paid_usdc":"0"},"questions":[{"id":"q1","question":"Which port?","difficulty":"easy","domain":"Net","options":{"A":"22","B":"80","C":"443","D":"25"}}]}`))
	}))
	defer srv.Close()
	const key = "0x4c0883a69102937d6231471b5dbb6204fe5129617082792ae468d01a3f362318"
	tests := []struct {
		name  string
		o     payOptions
		usage bool
		err   string
		want  string
	}{
		{"no key", payOptions{url: srv.URL, devWallet: -1, maxUSDC: "0.05"}, true, "no payer key", ""},
		{"key and dev wallet", payOptions{url: srv.URL, keyHex: key, devWallet: 0, maxUSDC: "0.05"}, true, "not both", ""},
		{"bad max", payOptions{url: srv.URL, keyHex: key, devWallet: -1, maxUSDC: "lots"}, true, "must be a USDC amount", ""},
		{"server error", payOptions{url: srv.URL + "?fail=1", keyHex: key, devWallet: -1, maxUSDC: "0.05"}, false, "the server answered 500", ""},
		{"free answer printed", payOptions{url: srv.URL, devWallet: 0, maxUSDC: "0.05"}, false, "", "1. [Net · easy] Which port?"},
		{"raw", payOptions{url: srv.URL, keyHex: key, devWallet: -1, maxUSDC: "0.05", raw: true}, false, "", `"price_paid_usdc":"0"`},
	}
	for _, tc := range tests {
		a, out, _ := testApp()
		err := a.runPay(context.Background(), srv.Client(), &tc.o)
		if isUsage(err) != tc.usage {
			t.Errorf("%s: error %v, usage error wanted: %v", tc.name, err, tc.usage)
		}
		if tc.err != "" && (err == nil || !strings.Contains(err.Error(), tc.err)) {
			t.Errorf("%s: error %v, want %q", tc.name, err, tc.err)
		}
		if tc.want != "" && (err != nil || !strings.Contains(out.String(), tc.want)) {
			t.Errorf("%s: %v, output lacks %q:\n%s", tc.name, err, tc.want, out)
		}
	}
}
