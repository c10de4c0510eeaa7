package main

import (
	"bytes"
	"encoding/json"
	"os"
	"path/filepath"
	"strings"
	"testing"
)

func TestContractExport(t *testing.T) {
	t.Parallel()
	tests := []struct {
		args     []string
		snapshot string // the output equals this file
		contains []string
	}{
		{args: []string{"export", "--provider", "openai", "--contracts", "../../contracts", "bank.open_dispute"},
			snapshot: "../../contracts/snapshots/bank.open_dispute.openai.json"},
		{args: []string{"export", "--contracts", "../../contracts", "travel.search_flights", "--provider", "anthropic"},
			snapshot: "../../contracts/snapshots/travel.search_flights.anthropic.json"},
		{args: []string{"export", "--contracts", "../../contracts", "travel.search_flights"},
			snapshot: "../../contracts/snapshots/travel.search_flights.plain.json"},
		{args: []string{"export", "--provider", "openai", "--parameters", "--contracts", "../../contracts", "bank.open_dispute"},
			contains: []string{`"additionalProperties": false`, `"required": [`}},
		{args: []string{"list", "--contracts", "../../contracts"},
			contains: []string{"NAME", "bank.open_dispute", "yes", "travel.search_flights", "no"}},
	}
	for _, tt := range tests {
		t.Run(strings.Join(tt.args, " "), func(t *testing.T) {
			t.Parallel()
			var out bytes.Buffer
			if err := contractTo(&out, tt.args); err != nil {
				t.Fatalf("slotd contract %v: %v", tt.args, err)
			}
			if tt.snapshot != "" {
				want, err := os.ReadFile(tt.snapshot)
				if err != nil {
					t.Fatal(err)
				}
				if out.String() != string(want) {
					t.Errorf("output differs from %s:\n%s", tt.snapshot, out.String())
				}
			}
			for _, c := range tt.contains {
				if !strings.Contains(out.String(), c) {
					t.Errorf("output does not contain %q:\n%s", c, out.String())
				}
			}
			if strings.Contains(out.String(), "x-slotd") {
				t.Errorf("x-slotd leaks into the output:\n%s", out.String())
			}
		})
	}
}

func TestContractCommandErrors(t *testing.T) {
	t.Parallel()
	tests := []struct {
		args []string
		want string
	}{
		{nil, "usage"},
		{[]string{"export", "--contracts", "../../contracts", "--provider", "gemini", "bank.open_dispute"}, "unknown provider"},
		{[]string{"export", "--contracts", "../../contracts", "bank.close_account"}, `no contract named "bank.close_account"`},
		{[]string{"export", "--contracts", "../../contracts"}, "usage"},
		{[]string{"frobnicate"}, "unknown contract command"},
	}
	for _, tt := range tests {
		var out bytes.Buffer
		err := contractTo(&out, tt.args)
		if err == nil || !strings.Contains(err.Error(), tt.want) {
			t.Errorf("slotd contract %v: error %v, want one saying %q", tt.args, err, tt.want)
		}
	}
}

func TestContractLint(t *testing.T) {
	t.Parallel()
	var out bytes.Buffer
	if err := contractTo(&out, []string{"lint", "../../contracts"}); err != nil {
		t.Fatalf("lint of the shipped contracts: %v\n%s", err, out.String())
	}
	if !strings.Contains(out.String(), "0 errors, 0 warnings") {
		t.Errorf("lint output:\n%s", out.String())
	}
	for _, want := range []string{"bank.open_dispute", "anthropic", "all 2 tools", "~TOKENS", "estimate"} {
		if !strings.Contains(out.String(), want) {
			t.Errorf("lint does not print the export sizes (%q missing):\n%s", want, out.String())
		}
	}

	dir := t.TempDir()
	bad := `{"type": "object", "description": "x", "properties": {"a": {"type": "string", "minLength": -1}}, "x-slotd": {"name": "t.bad"}}`
	warn := `{"type": "object", "description": "x", "properties": {"b": {"type": "string"}}, "x-slotd": {"name": "t.warn"}}`
	for name, src := range map[string]string{"bad.json": bad, "warn.json": warn} {
		if err := os.WriteFile(filepath.Join(dir, name), []byte(src), 0o644); err != nil {
			t.Fatal(err)
		}
	}
	out.Reset()
	err := contractTo(&out, []string{"lint", dir})
	if err == nil || !strings.Contains(err.Error(), "1 errors") {
		t.Errorf("lint of a broken file: error %v, want 1 error", err)
	}
	for _, want := range []string{filepath.Join(dir, "bad.json") + "#/properties/a/minLength: error", filepath.Join(dir, "warn.json") + "#/properties/b: warning", "1 errors, 1 warnings"} {
		if !strings.Contains(out.String(), want) {
			t.Errorf("lint output does not say %q:\n%s", want, out.String())
		}
	}

	// --json, and --strict fails on warnings alone.
	if err := os.Remove(filepath.Join(dir, "bad.json")); err != nil {
		t.Fatal(err)
	}
	out.Reset()
	if err := contractTo(&out, []string{"lint", "--json", dir}); err != nil {
		t.Fatalf("lint with warnings only: %v", err)
	}
	var findings []map[string]string
	if err := json.Unmarshal(out.Bytes(), &findings); err != nil || len(findings) != 1 || findings[0]["pointer"] != "/properties/b" {
		t.Errorf("lint --json = %s (%v), want one finding at /properties/b", out.String(), err)
	}
	if err := contractTo(&out, []string{"lint", "--strict", dir}); err == nil {
		t.Errorf("lint --strict with a warning succeeded")
	}
}
