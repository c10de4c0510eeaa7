package contract_test

import (
	"encoding/json"
	"os"
	"path/filepath"
	"reflect"
	"strings"
	"testing"
	"time"

	"github.com/slotd/slotd/contract"
)

// corpusFile is one file of testdata/corpus: argument objects as models
// send them to one tool, with what slotd must make of each.
type corpusFile struct {
	Tool     string       `json:"tool"`
	Contract string       `json:"contract"` // a testdata contract; the shipped one when empty
	Now      time.Time    `json:"now"`
	Locale   string       `json:"locale"`
	Cases    []corpusCase `json:"cases"`
}

type corpusCase struct {
	Name   string         `json:"name"`
	Locale string         `json:"locale"`
	Args   map[string]any `json:"args"`
	// Want is every normalized value, exactly.
	Want map[string]any `json:"want"`
	// Errors are the refusals, in order: pointer exactly, message and
	// format as substrings, allowed values exactly when given.
	Errors []corpusError `json:"errors"`
	// Missing, when given, is what the whole check then asks for.
	Missing *[]string `json:"missing"`
	// Violations, when given, are the rules the whole object breaks.
	Violations []corpusError `json:"violations"`
}

type corpusError struct {
	Pointer string   `json:"pointer"`
	Message string   `json:"message"`
	Allowed []string `json:"allowed"`
	Format  string   `json:"format"`
}

// TestDirtyCorpus runs every recorded argument object through the before
// phase (NormalizeArgs) and, where the case says, the whole check.
func TestDirtyCorpus(t *testing.T) {
	t.Parallel()
	files, err := filepath.Glob("testdata/corpus/*.json")
	if err != nil {
		t.Fatal(err)
	}
	shippedCat, err := contract.LoadDir("../contracts")
	if err != nil {
		t.Fatal(err)
	}
	total := 0
	for _, file := range files {
		src, err := os.ReadFile(file)
		if err != nil {
			t.Fatal(err)
		}
		var cf corpusFile
		if err := json.Unmarshal(src, &cf); err != nil {
			t.Fatalf("%s: %v", file, err)
		}
		c := shippedCat.Get(cf.Tool)
		if cf.Contract != "" {
			csrc, err := os.ReadFile(cf.Contract)
			if err != nil {
				t.Fatal(err)
			}
			if c, err = contract.Parse(filepath.Base(cf.Contract), csrc); err != nil {
				t.Fatalf("%s: %v", cf.Contract, err)
			}
		}
		if c == nil || c.Name != cf.Tool {
			t.Fatalf("%s: no contract %s", file, cf.Tool)
		}
		total += len(cf.Cases)
		for _, tc := range cf.Cases {
			t.Run(cf.Tool+"/"+tc.Name, func(t *testing.T) {
				t.Parallel()
				locale := tc.Locale
				if locale == "" {
					locale = cf.Locale
				}
				env := contract.Env{Now: cf.Now, Location: c.Location(), Locale: locale}
				got, errs := c.NormalizeArgs(tc.Args, env)
				if !reflect.DeepEqual(got, tc.Want) && len(got)+len(tc.Want) > 0 {
					t.Errorf("args %v\n got %v\nwant %v", tc.Args, got, tc.Want)
				}
				if len(errs) != len(tc.Errors) {
					t.Fatalf("args %v: refusals %+v, want %d like %+v", tc.Args, errs, len(tc.Errors), tc.Errors)
				}
				for i, want := range tc.Errors {
					got := errs[i]
					if got.Pointer != want.Pointer || !strings.Contains(got.Message, want.Message) || !strings.Contains(got.Format, want.Format) {
						t.Errorf("refusal %d = %q %q %q, want %q and texts containing %q, %q", i, got.Pointer, got.Message, got.Format, want.Pointer, want.Message, want.Format)
					}
					if want.Allowed != nil && !reflect.DeepEqual(got.Allowed, want.Allowed) {
						t.Errorf("refusal %d allowed = %q, want %q", i, got.Allowed, want.Allowed)
					}
					if got.Input == "" {
						t.Errorf("refusal %d does not say what was received", i)
					}
					assertNoCard(t, got)
				}
				if tc.Missing == nil && tc.Violations == nil {
					return
				}
				r := c.CheckIn(got, locale)
				if tc.Missing != nil && !reflect.DeepEqual(r.Missing, *tc.Missing) && len(r.Missing)+len(*tc.Missing) > 0 {
					t.Errorf("missing = %q, want %q", r.Missing, *tc.Missing)
				}
				if len(r.Violations) != len(tc.Violations) {
					t.Fatalf("violations = %+v, want %+v", r.Violations, tc.Violations)
				}
				for i, want := range tc.Violations {
					if got := r.Violations[i]; got.Pointer != want.Pointer || !strings.Contains(got.Message, want.Message) {
						t.Errorf("violation %d = %q %q, want %q containing %q", i, got.Pointer, got.Message, want.Pointer, want.Message)
					}
				}
			})
		}
	}
	if total < 150 {
		t.Errorf("the corpus has %d argument objects, want at least 150", total)
	}
}
