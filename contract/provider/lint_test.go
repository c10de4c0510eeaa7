package provider_test

import (
	"fmt"
	"strings"
	"testing"
	"testing/fstest"

	"github.com/slotd/slotd/contract/provider"
)

func TestLintShippedContractsAreClean(t *testing.T) {
	t.Parallel()
	fs, err := provider.LintDir("../../contracts")
	if err != nil {
		t.Fatal(err)
	}
	if len(fs) > 0 {
		t.Errorf("the shipped contracts have findings:\n%v", fs)
	}
}

func TestLint(t *testing.T) {
	t.Parallel()
	ok := `{"type": "object", "description": "A tool.", "properties": {"a": {"type": "string", "description": "A."}}, "x-slotd": {"name": "t.%s"}}`
	tests := []struct {
		name  string
		files map[string]string
		want  []provider.Finding // File, Pointer, Severity and a substring of Message
	}{
		{
			name:  "not JSON",
			files: map[string]string{"bad.json": `{"type": `},
			want:  []provider.Finding{{File: "c/bad.json", Pointer: "", Severity: "error", Message: "not JSON"}},
		},
		{
			name: "an invalid keyword, with its pointer",
			files: map[string]string{"bad.json": `{"type": "object", "description": "x", "properties": {"a": {"type": "string", "minLength": "three"}},
				"x-slotd": {"name": "t.bad"}}`},
			want: []provider.Finding{{File: "c/bad.json", Pointer: "/properties/a/minLength", Severity: "error", Message: "metaschema"}},
		},
		{
			name: "an unknown normalizer",
			files: map[string]string{"bad.json": `{"type": "object", "description": "x", "properties": {"phone": {"type": "string", "description": "p",
				"x-slotd": {"normalize": ["phone_e164"]}}}, "x-slotd": {"name": "t.bad"}}`},
			want: []provider.Finding{{File: "c/bad.json", Pointer: "/properties/phone", Severity: "error", Message: `unknown normalizer "phone_e164"`}},
		},
		{
			name: "a typo in x-slotd, an amount without a currency, no description",
			files: map[string]string{"warn.json": `{"type": "object", "description": "x", "properties": {
				"sum": {"type": "number", "x-slotd": {"normalise": ["amount"], "normalize": ["amount"]}}}, "x-slotd": {"name": "t.warn"}}`},
			want: []provider.Finding{
				{File: "c/warn.json", Pointer: "/properties/sum/x-slotd/normalise", Severity: "warning", Message: `unknown x-slotd member "normalise"`},
				{File: "c/warn.json", Pointer: "/properties/sum", Severity: "warning", Message: "no description"},
				{File: "c/warn.json", Pointer: "/properties/sum/x-slotd", Severity: "warning", Message: "currency"},
			},
		},
		{
			name: "value labels for a value the enum lacks, with their pointer",
			files: map[string]string{"labels.json": `{"type": "object", "description": "x", "properties": {"reason": {"type": "string", "description": "r",
				"enum": ["fraud"], "x-slotd": {"value_labels": {"fraud": {"en": "fraudulent charge"}, "fruad": {"en": "typo"}}}}}, "x-slotd": {"name": "t.labels"}}`},
			want: []provider.Finding{{File: "c/labels.json", Pointer: "/properties/reason/x-slotd/value_labels/fruad", Severity: "error", Message: `"fruad" is not a value of the enum`}},
		},
		{
			name: "values labelled in fewer locales than the others, or not at all",
			files: map[string]string{"labels.json": `{"type": "object", "description": "x", "properties": {"reason": {"type": "string", "description": "r",
				"enum": ["fraud", "duplicate", "other"], "x-slotd": {"value_labels": {
					"fraud": {"en": "fraudulent charge", "uk": "шахрайська операція", "ru": "мошенническая операция"},
					"duplicate": {"en": "duplicate charge"}}}}}, "x-slotd": {"name": "t.labels"}}`},
			want: []provider.Finding{
				{File: "c/labels.json", Pointer: "/properties/reason/x-slotd/value_labels/duplicate", Severity: "warning", Message: "no label in uk, ru, which other values have"},
				{File: "c/labels.json", Pointer: "/properties/reason/x-slotd/value_labels", Severity: "warning", Message: `"other" has no label: users are shown the code`},
			},
		},
		{
			name:  "the root is not an object",
			files: map[string]string{"arr.json": `{"type": "array", "description": "x", "properties": {"a": {"type": "string", "description": "A."}}, "x-slotd": {"name": "t.arr"}}`},
			want:  []provider.Finding{{File: "c/arr.json", Pointer: "/type", Severity: "error", Message: `"type": "object"`}},
		},
		{
			name:  "two names export as one tool",
			files: map[string]string{"a.json": fmt.Sprintf(ok, "x.y"), "b.json": fmt.Sprintf(ok, "x_y")},
			want:  []provider.Finding{{File: "c/b.json", Pointer: "/x-slotd/name", Severity: "error", Message: `export as the tool "t_x_y"`}},
		},
		{
			name: "more strict tools than one request takes",
			files: func() map[string]string {
				m := map[string]string{}
				for i := 0; i < 21; i++ {
					m[fmt.Sprintf("t%02d.json", i)] = fmt.Sprintf(ok, fmt.Sprintf("n%02d", i))
				}
				return m
			}(),
			want: []provider.Finding{{File: "c/t20.json", Pointer: "", Severity: "warning", Message: "21 strict tools; one request takes at most 20"}},
		},
		{
			name: "more optional and union parameters than one request takes",
			files: func() map[string]string {
				m := map[string]string{}
				for i := 0; i < 5; i++ {
					var props []string
					for j := 0; j < 6; j++ {
						props = append(props, fmt.Sprintf(`"p%d": {"type": ["string", "integer"], "description": "d"}`, j))
					}
					m[fmt.Sprintf("t%d.json", i)] = fmt.Sprintf(`{"type": "object", "description": "x", "properties": {%s}, "x-slotd": {"name": "t.n%d"}}`, strings.Join(props, ","), i)
				}
				return m
			}(),
			want: []provider.Finding{
				{File: "c/t4.json", Pointer: "/properties/p0", Severity: "warning", Message: "anthropic: the set has 30 optional parameters; one request takes at most 24"},
				{File: "c/t2.json", Pointer: "/properties/p4", Severity: "warning", Message: "anthropic: the set has 30 union-typed parameters; one request takes at most 16"},
			},
		},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			t.Parallel()
			fsys := fstest.MapFS{}
			for name, src := range tt.files {
				fsys["c/"+name] = &fstest.MapFile{Data: []byte(src)}
			}
			got, err := provider.LintFS(fsys, "c", "c")
			if err != nil {
				t.Fatal(err)
			}
			for _, w := range tt.want {
				found := false
				for _, f := range got {
					if f.File == w.File && f.Pointer == w.Pointer && f.Severity == w.Severity && strings.Contains(f.Message, w.Message) {
						found = true
					}
				}
				if !found {
					t.Errorf("no finding like %v in:\n%v", w, got)
				}
			}
			wantErr := false
			for _, w := range tt.want {
				wantErr = wantErr || w.Severity == "error"
			}
			if provider.HasErrors(got) != wantErr {
				t.Errorf("HasErrors = %v, want %v: %v", provider.HasErrors(got), wantErr, got)
			}
		})
	}
}
