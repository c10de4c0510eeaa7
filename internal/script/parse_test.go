package script

import (
	"errors"
	"path/filepath"
	"reflect"
	"strings"
	"testing"
	"time"

	slotdv1 "github.com/slotd/slotd/api/proto/slotd/v1"
)

// A malformed script is refused with the file, the line and column, the
// step and the field, and what would be right.
func TestMalformedScriptNamesFileLineAndField(t *testing.T) {
	t.Parallel()
	cases := []struct {
		name, src string
		want      []string // the whole error, one line per problem
	}{
		{
			name: "typo in an expectation",
			src: `tool: bank.open_dispute
steps:
  - args: {amount: "1 200"}
    expect:
      acton: ask
`,
			want: []string{`x.yaml:5:7: step 1: expect.acton: unknown field "acton"; did you mean "action"?`},
		},
		{
			name: "unknown action",
			src: `tool: bank.open_dispute
steps:
  - args: {}
  - args: {}
    expect:
      action: asks
`,
			want: []string{`x.yaml:6:15: step 2: expect.action: unknown action "asks"; one of ask, reconfirm, confirm, ready, repair, resume, handoff, cancelled`},
		},
		{
			name: "unknown decision in a change",
			src: `tool: bank.open_dispute
steps:
  - args: {}
    expect:
      changes:
        - {slot: amount, decision: ignored}
`,
			want: []string{`x.yaml:6:36: step 1: expect.changes[0].decision: unknown decision "ignored"; one of filled, unchanged, overwritten, pending, ignored_null, rejected, carried, confirmed, discarded, cleared, migrated`},
		},
		{
			name: "no tool",
			src: `steps:
  - args: {}
`,
			want: []string{`x.yaml:1:1: tool: required: the contract name every turn is sent with, e.g. bank.open_dispute`},
		},
		{
			name: "no steps",
			src:  "tool: t\nsteps: []\n",
			want: []string{`x.yaml:2:8: steps: expected a non-empty list of steps`},
		},
		{
			name: "a step that sends nothing",
			src: `tool: t
steps:
  - expect: {action: ask}
`,
			want: []string{`x.yaml:3:5: step 1: a step needs args, confirm, reset, complete or parallel (args: {} sends a turn without arguments)`},
		},
		{
			name: "a step that does two things",
			src: `tool: t
steps:
  - args: {}
    reset: true
`,
			want: []string{`x.yaml:3:5: step 1: a step does one thing: a turn (args and/or confirm), reset, complete, or parallel`},
		},
		{
			name: "a bad duration",
			src: `tool: t
steps:
  - advance: 45 minutes
    args: {}
`,
			want: []string{`x.yaml:3:14: step 1: advance: "45 minutes" is not a duration; write e.g. 45m, 1h30m, 2d or 1d12h`},
		},
		{
			name: "a bad clock and time zone",
			src: `tool: t
time_zone: Moscow
clock: yesterday
steps:
  - args: {}
`,
			want: []string{
				`x.yaml:2:12: time_zone: "Moscow" is not an IANA time zone such as Europe/Moscow`,
				`x.yaml:3:8: clock: "yesterday" is not a time; write 2026-08-23T13:00:00+03:00 (RFC 3339) or 2026-08-23 13:00 (in the script's time_zone)`,
			},
		},
		{
			name: "an expectation a reset cannot meet",
			src: `tool: t
steps:
  - reset: true
    expect:
      ask: amount
`,
			want: []string{`x.yaml:5:7: step 1: expect.ask: a reset step cannot be checked for ask; it can be checked for slots, changes, status, version, error, problem`},
		},
		{
			name: "same_as of a later step",
			src: `tool: t
steps:
  - args: {}
    expect:
      idempotency_key: {same_as: 2}
  - args: {}
`,
			want: []string{`x.yaml:5:34: step 1: expect.idempotency_key.same_as: "2" is not an earlier step (a number below 1, or the name of an earlier step)`},
		},
		{
			name: "args that are not a mapping",
			src: `tool: t
steps:
  - args: [1, 2]
`,
			want: []string{`x.yaml:3:11: step 1: args: expected a mapping of argument names to values (the model's tool-call arguments), got a list`},
		},
		{
			name: "a confirmation that is neither yes nor no",
			src: `tool: t
steps:
  - confirm: maybe
`,
			want: []string{`x.yaml:3:14: step 1: confirm: expected yes or no (accept or decline)`},
		},
		{
			name: "slots: null",
			src: `tool: t
steps:
  - args: {}
    expect: {slots: null}
`,
			want: []string{`x.yaml:4:21: step 1: expect.slots: slots: null checks nothing; write slots: {exact: {}} for a session without slots`},
		},
		{
			name: "an unknown gRPC code",
			src: `tool: t
steps:
  - args: {}
    expect: {error: Invalid}
`,
			want: []string{`x.yaml:4:21: step 1: expect.error: unknown gRPC code "Invalid"; e.g. InvalidArgument, NotFound, FailedPrecondition, Unimplemented`},
		},
		{
			name: "an error and a response at once",
			src: `tool: t
steps:
  - args: {}
    expect: {error: NotFound, action: ask}
`,
			want: []string{`x.yaml:4:31: step 1: expect.action: a step that expects an error has no response to check; it can be checked for its problem`},
		},
		{
			name: "a turn_id on a reset",
			src: `tool: t
steps:
  - reset: true
    turn_id: x
`,
			want: []string{`x.yaml:3:5: step 1: turn_id: only a turn has a turn_id`},
		},
		{
			name: "a parallel step of one call",
			src: `tool: t
steps:
  - parallel:
      - {tool: a, args: {}}
`,
			want: []string{`x.yaml:4:7: step 1: parallel: expected a list of two or more calls, each a mapping with tool, args (or confirm), turn_id and expect`},
		},
		{
			name: "a parallel step with its own expect",
			src: `tool: t
steps:
  - parallel: [{args: {}}, {tool: b, args: {}}]
    expect: {action: ask}
`,
			want: []string{`x.yaml:4:5: step 1: expect: a parallel step has no response of its own: give each call its expect`},
		},
		{
			name: "a parallel step that also sends args",
			src: `tool: t
steps:
  - args: {}
    parallel: [{args: {}}, {tool: b, args: {}}]
`,
			want: []string{`x.yaml:3:5: step 1: a step does one thing: a turn (args and/or confirm), reset, complete, or parallel`},
		},
		{
			name: "a call that sends nothing, a call with a typo",
			src: `tool: t
steps:
  - parallel:
      - {tool: a}
      - {tool: b, argz: {}}
`,
			want: []string{
				`x.yaml:4:10: step 1: parallel[0]: a call needs args or confirm (args: {} sends a call without arguments)`,
				`x.yaml:5:19: step 1: parallel[1].argz: unknown field "argz"; did you mean "args"?`,
			},
		},
		{
			name: "a call checked for what only a completion has",
			src: `tool: t
steps:
  - parallel:
      - {args: {}, expect: {output: {a: 1}}}
      - {tool: b, args: {}}
`,
			want: []string{`x.yaml:4:29: step 1: parallel[0].expect.output: a turn step cannot be checked for output; it can be checked for action, ask, question_contains, allowed, slots, missing, changes, arguments, replayed, status, version, idempotency_key, error, problem, resumed, notice_contains, open_sessions, ended_sessions`},
		},
		{
			name: "the key of a parallel step",
			src: `tool: t
steps:
  - parallel: [{args: {}}, {tool: b, args: {}}]
  - args: {}
    expect: {idempotency_key: {same_as: 1}}
`,
			want: []string{`x.yaml:5:41: step 2: expect.idempotency_key.same_as: step 1 is parallel: its calls have a key each; refer to a single turn`},
		},
		{
			name: "ended sessions as a list",
			src: `tool: t
steps:
  - args: {}
    expect: {ended_sessions: [bank.open_dispute]}
`,
			want: []string{`x.yaml:4:30: step 1: expect.ended_sessions: expected a mapping of tools to the status each ended with, e.g. {bank.open_dispute: abandoned}; {} for none`},
		},
		{
			name: "two mistakes in one step: the first is reported",
			src: `tool: t
steps:
  - confirm: maybe
    advance: soon
`,
			want: []string{`x.yaml:3:14: step 1: confirm: expected yes or no (accept or decline)`},
		},
		{
			name: "several problems at once",
			src: `tool: t
stepz: []
steps:
  - args: {}
    expect: {missing: reason}
  - complete: {}
`,
			want: []string{
				`x.yaml:2:1: stepz: unknown field "stepz"; did you mean "steps"?`,
				`x.yaml:5:23: step 1: expect.missing: expected a list, e.g. [a, b]; [] for none`,
				`x.yaml:6:15: step 2: complete: give exactly one of result or failure`,
			},
		},
	}
	for _, tc := range cases {
		t.Run(tc.name, func(t *testing.T) {
			t.Parallel()
			_, err := Parse("x.yaml", []byte(tc.src))
			if err == nil {
				t.Fatalf("Parse accepted the malformed script:\n%s", tc.src)
			}
			got := err.Error()
			want := strings.Join(tc.want, "\n")
			if got != want {
				t.Errorf("error:\n got: %s\nwant: %s", got, want)
			}
			var e *Error
			if !errors.As(err, &e) || e.File != "x.yaml" || e.Pos.Line == 0 {
				t.Errorf("the error is not an *Error with file and line: %#v", err)
			}
		})
	}
}

// A value of the wrong shape is named by its field, as a reader of the
// script knows it, not by the library's words for YAML nodes.
func TestWrongShapeNamesTheField(t *testing.T) {
	t.Parallel()
	for src, want := range map[string]string{
		"tool: t\nsteps:\n  - args: {}\n    expect:\n      problem: {errors: {pointer: /amount}}\n":                 "x.yaml:5:25: step 1: expect.problem.errors: want a list",
		"tool: t\nsteps:\n  - args: {}\n    expect:\n      problem:\n        errors:\n          pointer: /amount\n": "x.yaml:7:18: step 1: expect.problem.errors: want a list",
	} {
		if _, err := Parse("x.yaml", []byte(src)); err == nil || err.Error() != want {
			t.Errorf("%q: error %v, want %s", src, err, want)
		}
	}
}

func TestYAMLSyntaxErrorHasLine(t *testing.T) {
	t.Parallel()
	for _, tc := range []struct{ name, src, prefix string }{
		{"unclosed flow mapping", "tool: t\nsteps:\n  - args: {amount: 1\n  - reset\n", "x.yaml:4:"},
		{"duplicate key", "tool: t\ntool: u\nsteps: [reset]\n", "x.yaml:2:1: YAML: mapping key \"tool\" already defined at [1:1]"},
		{"tab indentation", "tool: t\nsteps:\n\t- reset\n", "x.yaml:3:"},
	} {
		t.Run(tc.name, func(t *testing.T) {
			t.Parallel()
			_, err := Parse("x.yaml", []byte(tc.src))
			if err == nil || !strings.HasPrefix(err.Error(), tc.prefix) || !strings.Contains(err.Error(), "YAML") {
				t.Errorf("error = %v, want one starting with %q that says YAML", err, tc.prefix)
			}
		})
	}
}

// What models really send must reach slotd as it was written: nulls, empty
// and invisible strings, numbers as numbers, text as text.
func TestArgsAreSentAsWritten(t *testing.T) {
	t.Parallel()
	s := parseOne(t, `
tool: bank.open_dispute
steps:
  - args:
      card_last4: "•• 4417"
      amount: 1200.50
      count: 12
      as_text: "1200.50"
      date: 2026-08-22
      empty: ""
      nothing: null
      tilde: ~
      zwsp: "\u200b"
      nbsp: "1\u00a0200"
      flag: yes
      real_bool: true
      nested: {list: [1, "two", null], deep: {x: -1.5e3}}
      forced: !!str 0417
`)
	want := map[string]any{
		"card_last4": "•• 4417", "amount": 1200.5, "count": 12.0, "as_text": "1200.50", "date": "2026-08-22",
		"empty": "", "nothing": nil, "tilde": nil, "zwsp": "\u200b", "nbsp": "1\u00a0200", "flag": "yes", "real_bool": true,
		"nested": map[string]any{"list": []any{1.0, "two", nil}, "deep": map[string]any{"x": -1500.0}},
		"forced": "0417",
	}
	if got := s.steps[0].args; !reflect.DeepEqual(got, want) {
		t.Errorf("args:\n got %s\nwant %s", show(got), show(want))
	}
}

func TestStepForms(t *testing.T) {
	t.Parallel()
	scripts, err := Parse("dir/flows.yaml", []byte(`
tool: travel.search_flights
time_zone: Europe/Kyiv
clock: 2026-08-24 01:30
steps:
  - args: &first {from: mad}
  - reset
  - confirm: no
  - confirm: Accept
    args: {to: kbp}
    advance: 1d2h30m
  - args: *first
    turn_id: turn-1
  - complete: {failure: {kind: timeout, retry_after_seconds: 3}}
  - args: {<<: {a: 1, b: 2}, b: 3}
---
name: second
tool: t
clock: 2026-08-23T22:30:00Z
steps: [reset]
---
tool: t
steps: [reset]
`))
	if err != nil {
		t.Fatal(err)
	}
	if len(scripts) != 3 {
		t.Fatalf("%d scripts, want 3", len(scripts))
	}
	if got := []string{scripts[0].Name, scripts[1].Name, scripts[2].Name}; !reflect.DeepEqual(got, []string{"flows#1", "second", "flows#3"}) {
		t.Errorf("names = %v", got)
	}
	kyiv, _ := time.LoadLocation("Europe/Kyiv")
	if want := time.Date(2026, 8, 24, 1, 30, 0, 0, kyiv); !scripts[0].Clock.Equal(want) {
		t.Errorf("clock = %v, want %v (a local time in the script's zone)", scripts[0].Clock, want)
	}
	if want := time.Date(2026, 8, 23, 22, 30, 0, 0, time.UTC); !scripts[1].Clock.Equal(want) || !scripts[2].Clock.IsZero() {
		t.Errorf("clocks = %v, %v", scripts[1].Clock, scripts[2].Clock)
	}
	st := scripts[0].steps
	yes, no := true, false
	checks := []struct {
		name string
		got  any
		want any
	}{
		{"step 1 kind", st[0].kind, kindTurn},
		{"step 2 is the word reset", st[1].kind, kindReset},
		{"step 3 confirm no", st[2].confirm, &no},
		{"step 4 confirm Accept", st[3].confirm, &yes},
		{"step 4 args with confirm", st[3].args, map[string]any{"to": "kbp"}},
		{"step 4 advance", st[3].advance, 26*time.Hour + 30*time.Minute},
		{"step 5 alias", st[4].args, map[string]any{"from": "mad"}},
		{"step 5 turn_id", st[4].turnIDOr(), "turn-1"},
		{"step 6 kind", st[5].kind, kindComplete},
		{"step 6 failure", st[5].complete.failure.Kind, slotdv1.FailureKind_FAILURE_KIND_TIMEOUT},
		{"step 6 retry after", st[5].complete.failure.RetryAfterSeconds, int32(3)},
		{"step 7 merge key", st[6].args, map[string]any{"a": 1.0, "b": 3.0}},
		{"default turn_id", st[6].turnIDOr(), "turn-7"},
	}
	for _, c := range checks {
		if !reflect.DeepEqual(c.got, c.want) {
			t.Errorf("%s = %#v, want %#v", c.name, c.got, c.want)
		}
	}
}

func TestEnumNamesAnyCase(t *testing.T) {
	t.Parallel()
	for _, s := range []string{"ask", "ASK", "ACTION_ASK", "action_ask", "Ask"} {
		if v, ok := parseEnum(s, slotdv1.Action(0).Descriptor()); !ok || slotdv1.Action(v) != slotdv1.Action_ACTION_ASK {
			t.Errorf("%q = %v, %v; want ACTION_ASK", s, v, ok)
		}
	}
	for _, s := range []string{"ignored_null", "IGNORED NULL", "ignored-null", "DECISION_IGNORED_NULL"} {
		if v, ok := parseEnum(s, slotdv1.Decision(0).Descriptor()); !ok || slotdv1.Decision(v) != slotdv1.Decision_DECISION_IGNORED_NULL {
			t.Errorf("%q = %v, %v; want DECISION_IGNORED_NULL", s, v, ok)
		}
	}
	for _, s := range []string{"unspecified", "ACTION_UNSPECIFIED", "", "asking"} {
		if _, ok := parseEnum(s, slotdv1.Action(0).Descriptor()); ok {
			t.Errorf("%q was accepted as an action", s)
		}
	}
}

// A folder is searched for *.yaml and *.yml; a broken file is reported and
// the others still load.
func TestLoadFolderKeepsGoodFiles(t *testing.T) {
	t.Parallel()
	dir := t.TempDir()
	writeFile(t, dir, "a.yaml", "tool: t\nsteps: [reset]\n")
	writeFile(t, dir, "sub/b.yml", "tool: t\nsteps: [reset]\n")
	writeFile(t, dir, "sub/notes.txt", "not a script")
	writeFile(t, dir, ".hidden/c.yaml", "tool: t\nsteps: [reset]\n")
	broken := writeFile(t, dir, "sub/broken.yaml", "tool: t\nsteps:\n  - args: {}\n    expect: {actoin: ask}\n")
	scripts, err := Load(dir, filepath.Join(dir, "missing.yaml"))
	var names []string
	for _, s := range scripts {
		names = append(names, s.Name)
	}
	if !reflect.DeepEqual(names, []string{"a", "b"}) {
		t.Errorf("loaded %v, want [a b]", names)
	}
	want := filepath.Join(dir, "missing.yaml") + ": no such file or folder\n" +
		broken + `:4:14: step 1: expect.actoin: unknown field "actoin"; did you mean "action"?`
	if err == nil || err.Error() != want {
		t.Errorf("error:\n got: %v\nwant: %s", err, want)
	}
}

// Anchors, aliases and merge keys are the YAML library's; a key written in
// a mapping wins over a merged one wherever the merge key is, and a key
// merged into an expectation is checked like one written there.
func TestMergeKeys(t *testing.T) {
	t.Parallel()
	s := parseOne(t, `
tool: t
steps:
  - args: &base {a: 1, b: 2}
  - args: {b: 3, <<: *base}
  - args: {<<: *base, b: 3}
  - args: {<<: [{c: 1}, *base]}
`)
	for i, want := range []map[string]any{
		{"a": 1.0, "b": 2.0},
		{"a": 1.0, "b": 3.0},
		{"a": 1.0, "b": 3.0},
		{"a": 1.0, "b": 2.0, "c": 1.0},
	} {
		if got := s.steps[i].args; !reflect.DeepEqual(got, want) {
			t.Errorf("step %d args = %v, want %v", i+1, got, want)
		}
	}
	_, err := Parse("x.yaml", []byte("tool: t\nsteps:\n  - args: &x {acton: ask}\n    expect: {<<: *x}\n"))
	if want := `x.yaml:4:14: step 1: expect.acton: unknown field "acton"; did you mean "action"?`; err == nil || err.Error() != want {
		t.Errorf("a merged unknown field: error\n got: %v\nwant: %s", err, want)
	}
	_, err = Parse("x.yaml", []byte("tool: t\nsteps:\n  - args: *nowhere\n"))
	if want := `x.yaml:3:12: YAML: could not find alias "nowhere"`; err == nil || err.Error() != want {
		t.Errorf("an alias without its anchor: error\n got: %v\nwant: %s", err, want)
	}
}
