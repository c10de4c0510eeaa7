package provider_test

import (
	"encoding/json"
	"reflect"
	"slices"
	"testing"
	"testing/fstest"

	"github.com/slotd/slotd/contract"
	"github.com/slotd/slotd/contract/provider"
)

// The two OpenAI APIs take one strict schema in two wrappings: the
// Responses API's tool has the function's members at its top, Chat
// Completions nests them under "function".
func TestExportOpenAIChatShape(t *testing.T) {
	t.Parallel()
	c := shipped(t, "bank.open_dispute")
	resp, err := provider.Export(c, provider.OpenAI)
	if err != nil {
		t.Fatal(err)
	}
	chat, err := provider.Export(c, provider.OpenAIChat)
	if err != nil {
		t.Fatal(err)
	}
	r, err := resp.Definition()
	if err != nil {
		t.Fatal(err)
	}
	ch, err := chat.Definition()
	if err != nil {
		t.Fatal(err)
	}
	top, nested := decode(t, r), decode(t, ch)
	if got := keys(nested); !reflect.DeepEqual(got, []string{"function", "type"}) || nested["type"] != "function" {
		t.Fatalf("openai-chat definition has members %v (type %v), want exactly type: function and function", got, nested["type"])
	}
	fn, _ := nested["function"].(map[string]any)
	delete(top, "type")
	if !reflect.DeepEqual(fn, top) {
		t.Errorf("openai-chat's function differs from the Responses tool's members:\n%s\n%s", ch, r)
	}
	if fn["name"] != "bank_open_dispute" || fn["strict"] != true {
		t.Errorf("openai-chat function: name %v, strict %v", fn["name"], fn["strict"])
	}
}

// Definitions is the tools member of a request: one array of definitions in
// the order given, each as Definition prints it.
func TestDefinitions(t *testing.T) {
	t.Parallel()
	cat, err := contract.LoadDir("../../contracts")
	if err != nil {
		t.Fatal(err)
	}
	for _, prov := range provider.Names() {
		var tools []*provider.Tool
		var want []any
		for _, c := range cat.All() {
			e, err := provider.Export(c, prov)
			if err != nil {
				t.Fatal(err)
			}
			tools = append(tools, e)
			one, err := e.Definition()
			if err != nil {
				t.Fatal(err)
			}
			var v any
			if err := json.Unmarshal(one, &v); err != nil {
				t.Fatal(err)
			}
			want = append(want, v)
		}
		raw, err := provider.Definitions(tools)
		if err != nil {
			t.Fatal(err)
		}
		var got []any
		if err := json.Unmarshal(raw, &got); err != nil {
			t.Fatalf("%s: Definitions is not a JSON array: %v\n%s", prov, err, raw)
		}
		if !reflect.DeepEqual(got, want) {
			t.Errorf("%s: Definitions differs from the definitions one by one:\n%s", prov, raw)
		}
	}
}

// A tool without arguments exports an empty, closed object of them, with
// the properties member both strict modes want.
func TestExportWithoutProperties(t *testing.T) {
	t.Parallel()
	c := mustParse(t, `{"type": "object", "description": "List the user's cards.", "x-slotd": {"name": "bank.list_cards"}}`)
	for prov, want := range map[string]string{
		provider.OpenAI:     `{"type":"object","properties":{},"additionalProperties":false,"required":[]}`,
		provider.OpenAIChat: `{"type":"object","properties":{},"additionalProperties":false,"required":[]}`,
		provider.Anthropic:  `{"type":"object","properties":{},"additionalProperties":false}`,
	} {
		e, err := provider.Export(c, prov)
		if err != nil {
			t.Fatalf("Export(%s): %v", prov, err)
		}
		raw, err := e.ParametersJSON()
		if err != nil {
			t.Fatal(err)
		}
		var got, exp any
		if err := json.Unmarshal(raw, &got); err != nil {
			t.Fatal(err)
		}
		if err := json.Unmarshal([]byte(want), &exp); err != nil {
			t.Fatal(err)
		}
		if !reflect.DeepEqual(got, exp) {
			t.Errorf("%s parameters = %s, want %s", prov, raw, want)
		}
	}
	findings, err := provider.LintFS(fstest.MapFS{"list_cards.json": {Data: c.Source}}, ".", "")
	if err != nil {
		t.Fatal(err)
	}
	if provider.HasErrors(findings) {
		t.Errorf("lint of a contract without properties: %v", findings)
	}
}

func keys(m map[string]any) []string {
	out := make([]string, 0, len(m))
	for k := range m {
		out = append(out, k)
	}
	slices.Sort(out)
	return out
}
