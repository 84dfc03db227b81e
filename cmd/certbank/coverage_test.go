package main

import (
	"encoding/json"
	"strings"
	"testing"
)

func TestCoverage(t *testing.T) {
	tests := []struct {
		name     string
		args     []string
		code     int
		contains []string
	}{
		{"table, no check", []string{"coverage", "--content", fixture, "cissp"}, exitOK,
			[]string{"cissp: 7/500 questions", "domain", "Security and Risk Management", "short", "objectives with no question yet", "0 of 1 certification(s) meet their plan"}},
		{"check fails on a short bank", []string{"coverage", "--content", fixture, "--check"}, exitContent,
			[]string{"orchestrator-cka:", "vendorfour-security-plus:", "! "}},
		{"milestone", []string{"coverage", "--content", fixture, "--target", "250", "cissp"}, exitOK,
			[]string{"cissp: 7/250 questions"}},
		{"unknown slug", []string{"coverage", "--content", fixture, "nope"}, exitUsage, nil},
		{"negative target", []string{"coverage", "--content", fixture, "--target", "-3"}, exitUsage, nil},
		{"plan", []string{"plan", "--content", fixture, "cissp", "-n", "12"}, exitOK,
			[]string{"cissp: 12 slot(s) toward 500 questions (has 7)", "write: ", "already tested"}},
		{"plan needs a slug", []string{"plan", "--content", fixture}, exitUsage, nil},
		{"plan with a bad count", []string{"plan", "--content", fixture, "cissp", "-n", "0"}, exitUsage, nil},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			r := cli(t, nil, tt.args...)
			if r.code != tt.code {
				t.Fatalf("exit %d, want %d\nstdout: %s\nstderr: %s", r.code, tt.code, r.stdout, r.stderr)
			}
			for _, c := range tt.contains {
				if !strings.Contains(r.stdout, c) {
					t.Errorf("stdout lacks %q:\n%s", c, r.stdout)
				}
			}
		})
	}
	r := cli(t, nil, "coverage", "--content", fixture, "--json", "--target", "8", "cissp")
	var reports []struct {
		Slug     string
		Target   int
		Have     int
		Problems []string
	}
	if err := json.Unmarshal([]byte(r.stdout), &reports); err != nil || len(reports) != 1 || reports[0].Target != 8 || reports[0].Have != 7 || len(reports[0].Problems) == 0 {
		t.Errorf("--json: %v %+v\n%s", err, reports, r.stdout)
	}
	r = cli(t, nil, "plan", "--content", fixture, "--json", "-n", "3", "cissp")
	var slots []struct{ Objective, Difficulty, Domain string }
	if err := json.Unmarshal([]byte(r.stdout), &slots); err != nil || len(slots) != 3 || slots[0].Objective == "" || slots[0].Difficulty == "" {
		t.Errorf("plan --json: %v %+v", err, slots)
	}
}
