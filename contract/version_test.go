package contract

import (
	"encoding/json"
	"os"
	"strings"
	"testing"
)

func TestVersionIsTheCanonicalJSONsHash(t *testing.T) {
	src, err := os.ReadFile("../contracts/bank.open_dispute.json")
	if err != nil {
		t.Fatal(err)
	}
	c, err := Parse("dispute", src)
	if err != nil {
		t.Fatal(err)
	}
	// The same document indented otherwise, members of the root in another
	// order and an escaped character written as an escape: the same version.
	reformatted := "{\n\n  \"x-slotd\" : " + string(mustMember(t, src, "x-slotd")) + ",\r\n" + strings.TrimPrefix(strings.TrimSpace(string(withoutMember(t, src, "x-slotd"))), "{")
	reformatted = strings.Replace(reformatted, "\"type\"", "\"\\u0074ype\"", 1)
	r, err := Parse("reformatted", []byte(reformatted))
	if err != nil {
		t.Fatalf("%v\n%s", err, reformatted)
	}
	if r.Version != c.Version || len(c.Version) != 16 {
		t.Errorf("reformatted version %s, want %s (16 hex digits)", r.Version, c.Version)
	}
	if string(r.Canonical) != string(c.Canonical) {
		t.Errorf("canonical forms differ:\n%s\n%s", r.Canonical, c.Canonical)
	}
	// One word of a description changed: a new version.
	changed := strings.Replace(string(src), `"description": "`, `"description": "Disputed: `, 1)
	if changed == string(src) {
		t.Fatal("the dispute example has no description")
	}
	v2, err := Parse("v2", []byte(changed))
	if err != nil {
		t.Fatal(err)
	}
	if v2.Version == c.Version {
		t.Errorf("a retired enum value kept version %s", c.Version)
	}
	if c.Upgrade != Pin {
		t.Errorf("upgrade %q by default, want pin", c.Upgrade)
	}
}

func TestUpgradeIsPinOrMigrate(t *testing.T) {
	for _, tc := range []struct{ value, want, err string }{
		{`"migrate"`, Migrate, ""}, {`"pin"`, Pin, ""}, {`"Migrate "`, "", `x-slotd.upgrade is "Migrate "`}, {`"latest"`, "", "pin"},
	} {
		src := `{"type":"object","properties":{"a":{"type":"string"}},"x-slotd":{"name":"t.x","upgrade":` + tc.value + `}}`
		c, err := Parse("t", []byte(src))
		switch {
		case tc.err != "" && (err == nil || !strings.Contains(err.Error(), tc.err)):
			t.Errorf("upgrade %s: error %v, want one saying %q", tc.value, err, tc.err)
		case tc.err == "" && (err != nil || c.Upgrade != tc.want):
			t.Errorf("upgrade %s: %v, %v; want %s", tc.value, c, err, tc.want)
		}
	}
}

func mustMember(t *testing.T, src []byte, name string) []byte {
	t.Helper()
	var m map[string]json.RawMessage
	if err := json.Unmarshal(src, &m); err != nil {
		t.Fatal(err)
	}
	return m[name]
}

func withoutMember(t *testing.T, src []byte, name string) []byte {
	t.Helper()
	var m map[string]json.RawMessage
	if err := json.Unmarshal(src, &m); err != nil {
		t.Fatal(err)
	}
	delete(m, name)
	out, err := json.MarshalIndent(m, "", "    ")
	if err != nil {
		t.Fatal(err)
	}
	return out
}
