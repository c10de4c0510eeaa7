package script

import (
	"encoding/json"
	"errors"
	"fmt"
	"os"
	"regexp"
	"slices"
	"sort"
	"strconv"
	"strings"

	slotdv1 "github.com/slotd/slotd/api/proto/slotd/v1"
)

// stepLayout is where a step sits in its file, for Record to rewrite its
// expect block and nothing else.
type stepLayout struct {
	keyLine, keyCol int // its first key, or the word reset
	scalar          bool
	flow            bool
	expectLine      int // the line of its expect key; 0 without one
}

// Record writes what each step of the results received into the script
// files as the step's expectations, replacing any it had; comments and
// everything else in the files stay as they were. Run the scripts with
// Runner.Record set first. It returns the files written.
func Record(results []*Result) ([]string, error) {
	var files []string
	byFile := map[string][]*Result{}
	for _, r := range results {
		if _, ok := byFile[r.Script.File]; !ok {
			files = append(files, r.Script.File)
		}
		byFile[r.Script.File] = append(byFile[r.Script.File], r)
	}
	var written []string
	var errs []error
	for _, f := range files {
		data, err := os.ReadFile(f)
		if err != nil {
			errs = append(errs, err)
			continue
		}
		out, err := recordInto(f, data, byFile[f])
		if err != nil {
			errs = append(errs, err)
			continue
		}
		if err := os.WriteFile(f, out, 0o644); err != nil {
			errs = append(errs, err)
			continue
		}
		written = append(written, f)
	}
	return written, errors.Join(errs...)
}

type edit struct {
	start, end int // 1-based lines, end exclusive
	lines      []string
}

// recordInto rewrites one file's content with the recorded expectations.
func recordInto(file string, data []byte, results []*Result) ([]byte, error) {
	lines := strings.Split(string(data), "\n")
	var edits []edit
	for _, r := range results {
		if r.Skipped {
			continue
		}
		for _, sr := range r.Steps {
			if sr.Err != nil {
				return nil, fmt.Errorf("%s: %s: step %d: not recorded: %v", file, r.Script.Name, sr.N, sr.Err)
			}
		}
		if n, total := len(r.Steps), len(r.Script.steps); n < total {
			return nil, fmt.Errorf("%s: %s: not recorded: only %d of %d steps were played", file, r.Script.Name, n, total)
		}
		for i, sr := range r.Steps {
			st, got := []*step{r.Script.steps[i]}, []*observed{sr.got}
			if st[0].kind == kindParallel {
				st, got = st[0].calls, sr.got.calls
			}
			for j := range st {
				e, err := stepEdit(lines, st[j], recorded(got[j], st[j].call > 0))
				if err != nil {
					return nil, fmt.Errorf("%s:%d: step %d: %w", file, st[j].pos.Line, sr.N, err)
				}
				edits = append(edits, e)
			}
		}
	}
	// Bottom up, so that line numbers above stay right; where an insertion
	// and a replacement start on the same line, the replacement goes first.
	sort.Slice(edits, func(i, j int) bool {
		if edits[i].start != edits[j].start {
			return edits[i].start > edits[j].start
		}
		return edits[i].end > edits[j].end
	})
	for _, e := range edits {
		tail := append([]string{}, lines[e.end-1:]...)
		lines = append(append(lines[:e.start-1], e.lines...), tail...)
	}
	text := strings.Join(lines, "\n")
	if !strings.HasSuffix(text, "\n") {
		text += "\n"
	}
	out := []byte(text)
	if _, err := Parse(file, out); err != nil {
		return nil, fmt.Errorf("%s: the recorded script does not read back (please report this): %w", file, err)
	}
	return out, nil
}

func indentOf(line string) int { return len(line) - len(strings.TrimLeft(line, " ")) }

func isNoise(line string) bool {
	t := strings.TrimSpace(line)
	return t == "" || strings.HasPrefix(t, "#")
}

// blockEnd is the line just after the block that starts at line start and
// whose content is indented by indent spaces or more: the first later line
// with content indented less (with siblings, also one indented the same),
// moved back over trailing blank and comment lines, which stay outside.
func blockEnd(lines []string, start, limit, indent int, siblings bool) int {
	end := limit
	for l := start + 1; l < limit; l++ {
		line := lines[l-1]
		if isNoise(line) {
			continue
		}
		in := indentOf(line)
		if in < indent || (siblings && in == indent) || strings.HasPrefix(line, "---") || strings.HasPrefix(line, "...") {
			end = l
			break
		}
	}
	for end-1 > start && isNoise(lines[end-2]) {
		end--
	}
	return end
}

// stepEdit replaces the step's expect block, or adds one at its end.
func stepEdit(lines []string, st *step, body []string) (edit, error) {
	lay := st.layout
	if lay.flow {
		return edit{}, errors.New("written in flow style ({...}); --record needs the step in block style")
	}
	if lay.keyLine < 1 || lay.keyLine > len(lines) {
		return edit{}, errors.New("cannot find the step in the file")
	}
	indent := lay.keyCol - 1
	pad := strings.Repeat(" ", indent)
	block := func(first string) []string {
		out := []string{first}
		for _, l := range body {
			out = append(out, pad+"  "+l)
		}
		return out
	}
	keyLineText := lines[lay.keyLine-1]
	if lay.scalar {
		return edit{start: lay.keyLine, end: lay.keyLine + 1,
			lines: append([]string{keyLineText[:indent] + "reset: true"}, block(pad+"expect:")...)}, nil
	}
	end := blockEnd(lines, lay.keyLine, len(lines)+1, indent, false)
	if lay.expectLine >= lay.keyLine && lay.expectLine < end {
		exEnd := blockEnd(lines, lay.expectLine, end, indent, true)
		prefix := lines[lay.expectLine-1][:indent]
		return edit{start: lay.expectLine, end: exEnd, lines: block(prefix + "expect:")}, nil
	}
	return edit{start: end, end: end, lines: block(pad + "expect:")}, nil
}

// recorded is a response written as expectations: the fields that say what
// slotd decided, not the ones that change from run to run (ids, times).
// The open sessions a call of a parallel step sees depend on which of the
// calls the conversation's lock let in first, so they are left out there.
func recorded(o *observed, call bool) []string {
	var w yamlWriter
	if o.err != nil {
		w.kv(0, "error", o.err.Code().String())
		w.problem(o.problem)
		return w.lines
	}
	if o.kind != kindReset && o.action != slotdv1.Action_ACTION_UNSPECIFIED {
		w.kv(0, "action", strings.ToLower(short(o.action)))
	}
	if q := o.question; q != nil {
		if q.Slot != "" {
			w.kv(0, "ask", scalar(q.Slot))
		}
		if q.Text != "" {
			w.kv(0, "question_contains", scalar(q.Text))
		}
		if len(q.AllowedValues) > 0 {
			w.kv(0, "allowed", flow(toAny(q.AllowedValues)))
		}
	}
	if s := o.session; s != nil {
		w.object("slots", s.GetSlots().AsMap())
		if len(s.Missing) > 0 && o.kind == kindTurn {
			w.kv(0, "missing", flow(toAny(s.Missing)))
		}
	}
	if len(o.changes) > 0 {
		w.line(0, "changes:")
		w.line(1, "exact:")
		for _, ch := range o.changes {
			m := map[string]any{"slot": ch.Slot, "decision": strings.ToLower(short(ch.Decision))}
			if ch.Old != nil {
				m["old"] = ch.Old.AsInterface()
			}
			if ch.New != nil {
				m["new"] = ch.New.AsInterface()
			}
			if ch.Message != "" {
				m["message_contains"] = ch.Message
			}
			w.line(2, "- "+flowOrdered(m, "slot", "decision", "old", "new", "message_contains"))
		}
	}
	if o.arguments != nil {
		w.object("arguments", o.arguments.AsMap())
	}
	if o.output != nil {
		w.object("output", o.output.AsMap())
	}
	if o.key != "" {
		w.kv(0, "idempotency_key", "true")
	}
	w.problem(o.problem)
	if o.replayed {
		w.kv(0, "replayed", "true")
	}
	if o.resumed {
		w.kv(0, "resumed", "true")
	}
	if o.notice != "" {
		w.kv(0, "notice_contains", scalar(o.notice))
	}
	if len(o.open) > 0 && !call {
		w.kv(0, "open_sessions", flow(toAny(slices.Sorted(slices.Values(o.open)))))
	}
	if len(o.ended) > 0 {
		m := map[string]any{}
		for _, s := range o.ended {
			m[s.Tool] = strings.ToLower(short(s.Status))
		}
		w.kv(0, "ended_sessions", flow(m))
	}
	if s := o.session; s != nil && (s.Status != slotdv1.SessionStatus_SESSION_STATUS_ACTIVE || o.kind == kindReset) {
		w.kv(0, "status", strings.ToLower(short(s.Status)))
	}
	return w.lines
}

type yamlWriter struct{ lines []string }

func (w *yamlWriter) line(level int, s string) {
	w.lines = append(w.lines, strings.Repeat("  ", level)+s)
}

func (w *yamlWriter) kv(level int, k, v string) { w.line(level, key(k)+": "+v) }

// object writes {exact: {...}} one key a line, for readable diffs.
func (w *yamlWriter) object(name string, m map[string]any) {
	if len(m) == 0 {
		w.kv(0, name, "{exact: {}}")
		return
	}
	w.line(0, name+":")
	w.line(1, "exact:")
	for _, k := range sortedKeys(m) {
		w.kv(2, k, flow(m[k]))
	}
}

func (w *yamlWriter) problem(p *slotdv1.Problem) {
	if p == nil {
		return
	}
	w.line(0, "problem:")
	w.kv(1, "type", scalar(strings.TrimPrefix(p.Type, ProblemTypeBase)))
	if p.Retryable {
		w.kv(1, "retryable", "true")
	}
	if len(p.Errors) == 0 {
		return
	}
	w.line(1, "errors:")
	for _, fe := range p.Errors {
		m := map[string]any{"pointer": fe.Pointer}
		if fe.Input != "" {
			m["input"] = fe.Input
		}
		if len(fe.AllowedValues) > 0 {
			m["allowed"] = toAny(fe.AllowedValues)
		}
		if fe.Format != "" {
			m["format_contains"] = fe.Format
		}
		w.line(2, "- "+flowOrdered(m, "pointer", "input", "allowed", "format_contains"))
	}
}

func toAny(s []string) []any {
	out := make([]any, len(s))
	for i, x := range s {
		out[i] = x
	}
	return out
}

func sortedKeys(m map[string]any) []string {
	keys := make([]string, 0, len(m))
	for k := range m {
		keys = append(keys, k)
	}
	sort.Strings(keys)
	return keys
}

// flowOrdered writes a mapping in flow style with its keys in a given
// order.
func flowOrdered(m map[string]any, order ...string) string {
	var parts []string
	for _, k := range order {
		if v, ok := m[k]; ok {
			parts = append(parts, key(k)+": "+flow(v))
		}
	}
	return "{" + strings.Join(parts, ", ") + "}"
}

// flow writes any JSON value as YAML flow style.
func flow(v any) string {
	switch t := v.(type) {
	case map[string]any:
		parts := make([]string, 0, len(t))
		for _, k := range sortedKeys(t) {
			parts = append(parts, key(k)+": "+flow(t[k]))
		}
		return "{" + strings.Join(parts, ", ") + "}"
	case []any:
		parts := make([]string, len(t))
		for i, x := range t {
			parts[i] = flow(x)
		}
		return "[" + strings.Join(parts, ", ") + "]"
	case string:
		return scalar(t)
	case nil:
		return "null"
	}
	b, err := json.Marshal(v)
	if err != nil {
		return "null"
	}
	return string(b)
}

var (
	plainText = regexp.MustCompile(`^[A-Za-z_/][A-Za-z0-9_./-]*$`)
	reserved  = map[string]bool{"true": true, "false": true, "null": true, "yes": true, "no": true, "on": true, "off": true, "y": true, "n": true}
)

// scalar writes text so that YAML reads it back as the same text: plain
// when that is safe, else quoted.
func scalar(s string) string {
	if plainText.MatchString(s) && !reserved[strings.ToLower(s)] {
		return s
	}
	if strings.Contains(s, `"`) && !strings.ContainsAny(s, "'\n\r\t") && !hasControl(s) {
		return "'" + s + "'"
	}
	return strconv.Quote(s)
}

func key(k string) string { return scalar(k) }

func hasControl(s string) bool {
	for _, r := range s {
		if r < 0x20 || r == 0x7f || (r >= 0x80 && r < 0xa0) || r == 0x200b || r == 0xfeff {
			return true
		}
	}
	return false
}
