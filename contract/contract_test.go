package contract_test

import (
	"reflect"
	"strings"
	"testing"
	"testing/fstest"
	"time"

	"github.com/slotd/slotd/contract"
)

// shipped loads one of the contracts in the repository's contracts/.
func shipped(t testing.TB, name string) *contract.Contract {
	t.Helper()
	cat, err := contract.LoadDir("../contracts")
	if err != nil {
		t.Fatalf("LoadDir(../contracts): %v", err)
	}
	c := cat.Get(name)
	if c == nil {
		t.Fatalf("contract %s is not shipped; have %v", name, cat.Names())
	}
	return c
}

// mustParse compiles an inline contract or stops the test.
func mustParse(t testing.TB, src string) *contract.Contract {
	t.Helper()
	c, err := contract.Parse("inline.json", []byte(src))
	if err != nil {
		t.Fatalf("Parse: %v", err)
	}
	return c
}

func mustLocation(t testing.TB, name string) *time.Location {
	t.Helper()
	loc, err := time.LoadLocation(name)
	if err != nil {
		t.Fatalf("time zone %s: %v", name, err)
	}
	return loc
}

// moscowEnv is the turn clock of most cases: Monday 24 August 2026, noon in
// Moscow, so "вчера" is 2026-08-23 and "позавчера" 2026-08-22.
func moscowEnv(t testing.TB) contract.Env {
	loc := mustLocation(t, "Europe/Moscow")
	return contract.Env{Now: time.Date(2026, 8, 24, 12, 0, 0, 0, loc), Location: loc}
}

func TestLoadDirShipped(t *testing.T) {
	t.Parallel()
	cat, err := contract.LoadDir("../contracts")
	if err != nil {
		t.Fatalf("LoadDir(../contracts): %v", err)
	}
	if got, want := cat.Names(), []string{"bank.block_card", "bank.check_balance", "bank.open_dispute", "travel.search_flights"}; !reflect.DeepEqual(got, want) {
		t.Fatalf("Names() = %v, want %v", got, want)
	}

	tests := []struct {
		name          string
		properties    []string
		required      []string
		irreversible  []string
		confirm       bool
		exclusive     bool
		timeZone      string
		defaultLocale string
	}{
		{
			name:          "bank.block_card",
			properties:    []string{"card_last4", "reason"},
			required:      []string{"card_last4", "reason"},
			irreversible:  []string{"card_last4"},
			confirm:       true,
			exclusive:     true,
			timeZone:      "Europe/Moscow",
			defaultLocale: "ru",
		},
		{
			name:          "bank.check_balance",
			properties:    []string{"card_last4"},
			required:      []string{},
			timeZone:      "Europe/Moscow",
			defaultLocale: "ru",
		},
		{
			name:          "bank.open_dispute",
			properties:    []string{"card_last4", "operation_date", "amount", "reason", "original_operation_id"},
			required:      []string{"card_last4", "operation_date", "amount", "reason"},
			irreversible:  []string{"card_last4", "amount"},
			confirm:       true,
			timeZone:      "Europe/Moscow",
			defaultLocale: "ru",
		},
		{
			name:          "travel.search_flights",
			properties:    []string{"from", "to", "date"},
			required:      []string{"from", "to", "date"},
			confirm:       false,
			timeZone:      "Europe/Kyiv",
			defaultLocale: "uk",
		},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			t.Parallel()
			c := cat.Get(tt.name)
			if c == nil {
				t.Fatalf("Get(%q) = nil", tt.name)
			}
			var names, irreversible []string
			for _, p := range c.Properties {
				names = append(names, p.Name)
				if p.Irreversible {
					irreversible = append(irreversible, p.Name)
				}
				if c.Property(p.Name) != p {
					t.Errorf("Property(%q) is not the property listed in Properties", p.Name)
				}
			}
			if !reflect.DeepEqual(names, tt.properties) {
				t.Errorf("properties (contract order) = %v, want %v", names, tt.properties)
			}
			if !reflect.DeepEqual(c.Required, tt.required) {
				t.Errorf("Required = %v, want %v", c.Required, tt.required)
			}
			if !reflect.DeepEqual(irreversible, tt.irreversible) {
				t.Errorf("irreversible = %v, want %v", irreversible, tt.irreversible)
			}
			if c.Confirm != tt.confirm || c.TimeZone != tt.timeZone || c.DefaultLocale != tt.defaultLocale {
				t.Errorf("confirm, zone, locale = %v, %q, %q; want %v, %q, %q",
					c.Confirm, c.TimeZone, c.DefaultLocale, tt.confirm, tt.timeZone, tt.defaultLocale)
			}
			if c.Exclusive != tt.exclusive {
				t.Errorf("Exclusive = %v, want %v", c.Exclusive, tt.exclusive)
			}
			if got := c.Location().String(); got != tt.timeZone {
				t.Errorf("Location() = %s, want %s", got, tt.timeZone)
			}
			if c.Version == "" || len(c.Source) == 0 {
				t.Errorf("version %q and source of %d bytes: want both set", c.Version, len(c.Source))
			}
			if c.Property("no_such_slot") != nil {
				t.Errorf("Property(no_such_slot) = non-nil, want nil")
			}
		})
	}
}

func TestParseErrors(t *testing.T) {
	t.Parallel()
	tests := []struct {
		name string
		src  string
		want []string // substrings of the error
	}{
		{
			name: "not JSON",
			src:  `{"properties": {`,
			want: []string{"bad.json"},
		},
		{
			name: "no x-slotd at all",
			src:  `{"type": "object", "properties": {"a": {"type": "string"}}}`,
			want: []string{"bad.json", "x-slotd.name"},
		},
		{
			name: "x-slotd without a name",
			src:  `{"type": "object", "properties": {"a": {"type": "string"}}, "x-slotd": {"confirm": true}}`,
			want: []string{"bad.json", "x-slotd.name"},
		},
		{
			name: "unknown normalizer",
			src: `{"type": "object", "properties": {
				"phone": {"type": "string", "x-slotd": {"normalize": ["text", "phone_e164"]}}
			}, "x-slotd": {"name": "t.bad"}}`,
			want: []string{"bad.json", "phone", `"phone_e164"`, "amount, currency, date, enum, iata, integer, last4, text, time"},
		},
		{
			name: "required names an unknown property",
			src: `{"type": "object", "properties": {"a": {"type": "string"}},
				"required": ["a", "card_number"], "x-slotd": {"name": "t.bad"}}`,
			want: []string{"bad.json", "required", `"card_number"`},
		},
		{
			name: "unknown time zone",
			src: `{"type": "object", "properties": {"a": {"type": "string"}},
				"x-slotd": {"name": "t.bad", "time_zone": "Europe/Atlantis"}}`,
			want: []string{"bad.json", "time_zone"},
		},
		{
			name: "not an object",
			src:  `[]`,
			want: []string{"bad.json"},
		},
		{
			name: "an invalid schema keyword",
			src: `{"type": "object", "properties": {"a": {"type": "string", "minLength": "three"}},
				"x-slotd": {"name": "t.bad"}}`,
			want: []string{"bad.json"},
		},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			t.Parallel()
			c, err := contract.Parse("bad.json", []byte(tt.src))
			if err == nil {
				t.Fatalf("Parse succeeded with contract %q, want an error mentioning %q", c.Name, tt.want)
			}
			for _, w := range tt.want {
				if !strings.Contains(err.Error(), w) {
					t.Errorf("error %q does not mention %q", err, w)
				}
			}
		})
	}
}

func TestParseKeepsFileOrder(t *testing.T) {
	t.Parallel()
	c := mustParse(t, `{
		"type": "object",
		"properties": {
			"zeta":  {"type": "string"},
			"alpha": {"type": ["string", "null"], "format": "date"},
			"mid":   {"type": "string", "enum": ["a", "b", 3]}
		},
		"required": ["mid", "alpha", "zeta"],
		"x-slotd": {"name": "t.order"}
	}`)
	var names []string
	for _, p := range c.Properties {
		names = append(names, p.Name)
	}
	if want := []string{"zeta", "alpha", "mid"}; !reflect.DeepEqual(names, want) {
		t.Errorf("properties = %v, want file order %v", names, want)
	}
	if want := []string{"zeta", "alpha", "mid"}; !reflect.DeepEqual(c.Required, want) {
		t.Errorf("Required = %v, want contract order %v", c.Required, want)
	}
	if got := c.Property("alpha").Type; got != "string" {
		t.Errorf(`type ["string","null"] gave slot type %q, want "string"`, got)
	}
	if got := c.Property("mid").Enum; !reflect.DeepEqual(got, []string{"a", "b"}) {
		t.Errorf("enum = %v, want the string values [a b]", got)
	}
	if c.TimeZone != "UTC" || c.DefaultLocale != "en" {
		t.Errorf("defaults: zone %q, locale %q; want UTC, en", c.TimeZone, c.DefaultLocale)
	}
}

func TestNewCatalogRefusesDuplicateNames(t *testing.T) {
	t.Parallel()
	a := mustParse(t, `{"type": "object", "properties": {"a": {"type": "string"}}, "x-slotd": {"name": "bank.open_dispute"}}`)
	b := mustParse(t, `{"type": "object", "properties": {"b": {"type": "string"}}, "x-slotd": {"name": "bank.open_dispute"}}`)
	if cat, err := contract.NewCatalog(a, b); err == nil {
		t.Fatalf("NewCatalog with two bank.open_dispute = %v, want an error", cat.Names())
	} else if !strings.Contains(err.Error(), "bank.open_dispute") {
		t.Errorf("error %q does not name the duplicate", err)
	}

	c := mustParse(t, `{"type": "object", "properties": {"c": {"type": "string"}}, "x-slotd": {"name": "a.first"}}`)
	cat, err := contract.NewCatalog(a, c)
	if err != nil {
		t.Fatalf("NewCatalog of distinct names: %v", err)
	}
	if got, want := cat.Names(), []string{"a.first", "bank.open_dispute"}; !reflect.DeepEqual(got, want) {
		t.Errorf("Names() = %v, want sorted %v", got, want)
	}
	if all := cat.All(); len(all) != 2 || all[0] != c || all[1] != a {
		t.Errorf("All() is not the contracts sorted by name: %v", all)
	}
	if cat.Get("bank.open_dispute") != a || cat.Get("nope") != nil {
		t.Errorf("Get does not find by exact name")
	}
}

func TestLoadFS(t *testing.T) {
	t.Parallel()
	one := `{"type": "object", "properties": {"a": {"type": "string"}}, "x-slotd": {"name": "t.one"}}`
	two := `{"type": "object", "properties": {"a": {"type": "string"}}, "x-slotd": {"name": "t.two"}}`
	tests := []struct {
		name      string
		fsys      fstest.MapFS
		wantNames []string
		wantErr   string
	}{
		{
			name: "only *.json directly in the directory",
			fsys: fstest.MapFS{
				"c/one.json":        {Data: []byte(one)},
				"c/two.json":        {Data: []byte(two)},
				"c/README.md":       {Data: []byte("# not a contract")},
				"c/old/three.json":  {Data: []byte("not even JSON")},
				"c/one.json.orig":   {Data: []byte("{")},
				"elsewhere/x.json":  {Data: []byte("{")},
				"c/sub.json/a.json": {Data: []byte("{")},
			},
			wantNames: []string{"t.one", "t.two"},
		},
		{
			name: "two files, one name",
			fsys: fstest.MapFS{
				"c/one.json":  {Data: []byte(one)},
				"c/copy.json": {Data: []byte(one)},
			},
			wantErr: "t.one",
		},
		{
			name:    "a broken file names itself",
			fsys:    fstest.MapFS{"c/one.json": {Data: []byte(one)}, "c/broken.json": {Data: []byte(`{"x-slotd": {}}`)}},
			wantErr: "broken.json",
		},
		{
			name:    "no contract at all",
			fsys:    fstest.MapFS{"c/README.md": {Data: []byte("#")}},
			wantErr: "no *.json contract",
		},
		{
			name:    "no such directory",
			fsys:    fstest.MapFS{},
			wantErr: "contracts",
		},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			t.Parallel()
			cat, err := contract.LoadFS(tt.fsys, "c")
			if tt.wantErr != "" {
				if err == nil {
					t.Fatalf("LoadFS = %v, want an error mentioning %q", cat.Names(), tt.wantErr)
				}
				if !strings.Contains(err.Error(), tt.wantErr) {
					t.Errorf("error %q does not mention %q", err, tt.wantErr)
				}
				return
			}
			if err != nil {
				t.Fatalf("LoadFS: %v", err)
			}
			if got := cat.Names(); !reflect.DeepEqual(got, tt.wantNames) {
				t.Errorf("Names() = %v, want %v", got, tt.wantNames)
			}
		})
	}
}

func TestInOrder(t *testing.T) {
	t.Parallel()
	c := shipped(t, "bank.open_dispute")
	tests := []struct {
		in, want []string
	}{
		{nil, []string{}},
		{[]string{"reason", "card_last4"}, []string{"card_last4", "reason"}},
		{[]string{"original_operation_id", "amount", "operation_date"}, []string{"operation_date", "amount", "original_operation_id"}},
		{[]string{"card_number", "amount", "amount", "AMOUNT"}, []string{"amount"}},
	}
	for _, tt := range tests {
		if got := c.InOrder(tt.in); !reflect.DeepEqual(got, tt.want) {
			t.Errorf("InOrder(%q) = %q, want %q", tt.in, got, tt.want)
		}
	}
}

func TestAskAndLabelLocales(t *testing.T) {
	t.Parallel()
	c := mustParse(t, `{
		"type": "object",
		"properties": {
			"city": {"type": "string", "x-slotd": {
				"ask":   {"ru": "Из какого города?", "en": "Which city?", "uk": "З якого міста?"},
				"label": {"ru": "город", "en": "city"}
			}},
			"zip":  {"type": "string", "x-slotd": {"ask": {"de": "Postleitzahl?", "fr": "Code postal ?"}}},
			"bare": {"type": "string"}
		},
		"x-slotd": {"name": "t.locales", "default_locale": "ru", "confirm_text": {"en": "Go?"}}
	}`)
	tests := []struct {
		slot, locale, fallback string
		wantAsk, wantLabel     string
	}{
		{"city", "ru", "ru", "Из какого города?", "город"},
		{"city", "ru-RU", "en", "Из какого города?", "город"},
		{"city", "uk_UA", "ru", "З якого міста?", "город"}, // no uk label: the fallback locale
		{"city", "de", "ru", "Из какого города?", "город"}, // the fallback locale
		{"city", "de", "pl", "Which city?", "city"},        // then English
		{"zip", "pl", "ru", "Postleitzahl?", "zip"},        // then any, stably; the name as label
		{"bare", "ru", "ru", "", "bare"},                   // no question: the caller words one
		{"city", "", "en", "Which city?", "city"},          // no locale at all
		{"city", "EN", "ru", "Which city?", "city"},        // case-blind: the base language is lower-cased
		{"city", "en-GB", "ru", "Which city?", "city"},     // base locale before the fallback
		{"city", "uk", "xx", "З якого міста?", "city"},     // label: no uk, no xx, English
		{"zip", "fr-CA", "ru", "Code postal ?", "zip"},     // base locale of a non-default language
		{"city", "ru", "", "Из какого города?", "город"},   // empty fallback
		{"bare", "", "", "", "bare"},                       // nothing at all
		{"zip", "", "", "Postleitzahl?", "zip"},            // any, stably
		{"city", "be", "uk", "З якого міста?", "city"},     // the fallback locale where it exists, else English
		{"city", "kk", "en", "Which city?", "city"},        // unknown locale, English fallback
		{"city", "ru_RU.UTF-8", "en", "Из какого города?", "город"},
	}
	for _, tt := range tests {
		p := c.Property(tt.slot)
		if got := p.Ask(tt.locale, tt.fallback); got != tt.wantAsk {
			t.Errorf("%s.Ask(%q, %q) = %q, want %q", tt.slot, tt.locale, tt.fallback, got, tt.wantAsk)
		}
		if got := p.Label(tt.locale, tt.fallback); got != tt.wantLabel {
			t.Errorf("%s.Label(%q, %q) = %q, want %q", tt.slot, tt.locale, tt.fallback, got, tt.wantLabel)
		}
	}
	if got := c.ConfirmText("ru"); got != "Go?" {
		t.Errorf(`ConfirmText("ru") with only an English text = %q, want "Go?"`, got)
	}
	if got := shipped(t, "travel.search_flights").ConfirmText("uk"); got != "" {
		t.Errorf("ConfirmText of a contract without confirm_text = %q, want empty", got)
	}
}

func TestCatalogFindsTheExportName(t *testing.T) {
	t.Parallel()
	cat, err := contract.LoadDir("../contracts")
	if err != nil {
		t.Fatal(err)
	}
	c := cat.Get("bank_open_dispute")
	if c == nil || c.Name != "bank.open_dispute" {
		t.Fatalf("Get(bank_open_dispute) = %v, want bank.open_dispute", c)
	}
	if cat.Get("bank_open_disputes") != nil || len(cat.Names()) != 4 {
		t.Errorf("aliases leak: %v", cat.Names())
	}
}
