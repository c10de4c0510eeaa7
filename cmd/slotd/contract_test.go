package main

import (
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
		{args: []string{"export", "--provider", "openai-chat", "--contracts", "../../contracts", "bank.open_dispute"},
			snapshot: "../../contracts/snapshots/bank.open_dispute.openai-chat.json"},
		{args: []string{"list", "--contracts", "../../contracts"},
			contains: []string{"NAME", "bank.open_dispute", "yes", "travel.search_flights", "no"}},
	}
	for _, tt := range tests {
		t.Run(strings.Join(tt.args, " "), func(t *testing.T) {
			t.Parallel()
			r := runCLI(t, nil, append([]string{"contract"}, tt.args...)...)
			if r.code != 0 {
				t.Fatalf("slotd contract %v: exit %d: %s", tt.args, r.code, r.stderr)
			}
			if tt.snapshot != "" {
				want, err := os.ReadFile(tt.snapshot)
				if err != nil {
					t.Fatal(err)
				}
				if r.stdout != string(want) {
					t.Errorf("output differs from %s:\n%s", tt.snapshot, r.stdout)
				}
			}
			for _, c := range tt.contains {
				if !strings.Contains(r.stdout, c) {
					t.Errorf("output does not contain %q:\n%s", c, r.stdout)
				}
			}
			if strings.Contains(r.stdout, "x-slotd") {
				t.Errorf("x-slotd leaks into the output:\n%s", r.stdout)
			}
		})
	}
}

func TestContractLint(t *testing.T) {
	t.Parallel()
	r := runCLI(t, nil, "contract", "lint", "../../contracts")
	if r.code != 0 {
		t.Fatalf("lint of the shipped contracts: exit %d\n%s%s", r.code, r.stdout, r.stderr)
	}
	if !strings.Contains(r.stdout, "0 errors, 0 warnings") {
		t.Errorf("lint output:\n%s", r.stdout)
	}
	for _, want := range []string{"bank.open_dispute", "anthropic", "all 4 tools", "~TOKENS", "estimate"} {
		if !strings.Contains(r.stdout, want) {
			t.Errorf("lint does not print the export sizes (%q missing):\n%s", want, r.stdout)
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
	r = runCLI(t, nil, "contract", "lint", dir)
	if r.code != 1 || !strings.Contains(r.stderr, "1 errors") {
		t.Errorf("lint of a broken file: exit %d, %q; want 1 and 1 error", r.code, r.stderr)
	}
	for _, want := range []string{filepath.Join(dir, "bad.json") + "#/properties/a/minLength: error", filepath.Join(dir, "warn.json") + "#/properties/b: warning", "1 errors, 1 warnings"} {
		if !strings.Contains(r.stdout, want) {
			t.Errorf("lint output does not say %q:\n%s", want, r.stdout)
		}
	}

	// --json, and --strict fails on warnings alone.
	if err := os.Remove(filepath.Join(dir, "bad.json")); err != nil {
		t.Fatal(err)
	}
	r = runCLI(t, nil, "contract", "lint", "--json", dir)
	if r.code != 0 {
		t.Fatalf("lint with warnings only: exit %d: %s", r.code, r.stderr)
	}
	var findings []map[string]string
	if err := json.Unmarshal([]byte(r.stdout), &findings); err != nil || len(findings) != 1 || findings[0]["pointer"] != "/properties/b" {
		t.Errorf("lint --json = %s (%v), want one finding at /properties/b", r.stdout, err)
	}
	if r := runCLI(t, nil, "contract", "lint", "--strict", dir); r.code != 1 {
		t.Errorf("lint --strict with a warning: exit %d, want 1", r.code)
	}
}

// export --all prints every contract's definition as one JSON array, in
// the provider's shape: the tools member of a request.
func TestContractExportAll(t *testing.T) {
	t.Parallel()
	for prov, check := range map[string]func(def map[string]any) bool{
		"openai": func(d map[string]any) bool {
			return d["type"] == "function" && d["name"] != nil && d["parameters"] != nil
		},
		"openai-chat": func(d map[string]any) bool {
			fn, _ := d["function"].(map[string]any)
			return d["type"] == "function" && len(d) == 2 && fn["name"] != nil && fn["parameters"] != nil && fn["strict"] == true
		},
		"anthropic": func(d map[string]any) bool { return d["input_schema"] != nil && d["type"] == nil },
		"plain":     func(d map[string]any) bool { return d["name"] != nil && d["parameters"] != nil },
		"mcp":       func(d map[string]any) bool { return d["name"] != nil && d["inputSchema"] != nil && d["strict"] == nil },
	} {
		r := runCLI(t, nil, "contract", "export", "--all", "--provider", prov, "--contracts", "../../contracts")
		if r.code != 0 {
			t.Fatalf("export --all --provider %s: exit %d: %s", prov, r.code, r.stderr)
		}
		var defs []map[string]any
		if err := json.Unmarshal([]byte(r.stdout), &defs); err != nil {
			t.Fatalf("export --all --provider %s is not a JSON array of objects: %v\n%s", prov, err, r.stdout)
		}
		if shipped, _ := filepath.Glob("../../contracts/*.json"); len(defs) != len(shipped) || len(defs) != 4 {
			t.Errorf("export --all --provider %s: %d tools, want the %d shipped", prov, len(defs), len(shipped))
		}
		for _, d := range defs {
			if !check(d) {
				t.Errorf("export --all --provider %s: a definition not in the provider's shape: %v", prov, d)
			}
		}
		if strings.Contains(r.stdout, "x-slotd") {
			t.Errorf("x-slotd leaks into export --all --provider %s", prov)
		}
	}
}
