package script

import (
	"encoding/json"
	"fmt"
	"maps"
	"reflect"
	"slices"
	"sort"
	"strings"
	"unicode"

	"google.golang.org/protobuf/types/known/structpb"

	slotdv1 "github.com/slotd/slotd/api/proto/slotd/v1"
)

// check compares a response with what the step expects; seen holds the
// responses of the steps played so far, by step number.
func (e *expect) check(o *observed, seen map[int]*observed) []Mismatch {
	var out []Mismatch
	miss := func(field string, pos Pos, want, got string) {
		out = append(out, Mismatch{Field: field, Pos: pos, Want: want, Got: got})
	}

	if e.Error != nil {
		switch {
		case o.err == nil:
			miss("error", e.Error.pos, e.Error.v.String(), "a response ("+o.describe()+")")
		case o.err.Code() != e.Error.v:
			miss("error", e.Error.pos, e.Error.v.String(), o.err.Code().String()+": "+o.err.Message())
		}
	}
	if o.err != nil {
		// A failed call that was not expected is the step's error, reported
		// once; one that was can be checked for its problem only.
		if e.Error != nil && e.Problem != nil {
			out = append(out, checkProblem(e.Problem, o.problem)...)
		}
		return out
	}

	if e.Action != nil && o.action != e.Action.v {
		miss("action", e.Action.pos, short(e.Action.v), short(o.action))
	}
	if e.Ask != nil {
		if e.Action == nil && o.action != slotdv1.Action_ACTION_ASK {
			miss("action (ask implies ASK)", e.Ask.pos, "ASK", short(o.action))
		}
		if got := o.question.GetSlot(); got != e.Ask.v {
			miss("ask", e.Ask.pos, quote(e.Ask.v), orNothing(quote(got), "no question about a slot"))
		}
	}
	if e.QuestionContains != nil {
		text := o.question.GetText()
		for _, s := range e.QuestionContains.v {
			if !strings.Contains(text, s) {
				miss("question_contains", e.QuestionContains.pos, "text containing "+quote(s), orNothing(quote(text), "no question"))
			}
		}
	}
	if e.Allowed != nil {
		checkList(&out, "allowed", e.Allowed, o.question.GetAllowedValues())
	}
	if e.Slots != nil {
		out = append(out, checkMap("slots", &e.Slots.mapWant, o.session.GetSlots())...)
	}
	if e.Missing != nil {
		checkList(&out, "missing", e.Missing, o.session.GetMissing())
	}
	if e.Changes != nil {
		out = append(out, checkChanges(e.Changes, o.changes)...)
	}
	if e.Arguments != nil {
		out = append(out, checkMap("arguments", e.Arguments, o.arguments)...)
	}
	if e.Output != nil {
		out = append(out, checkMap("output", e.Output, o.output)...)
	}
	if e.Problem != nil {
		out = append(out, checkProblem(e.Problem, o.problem)...)
	}
	if e.Replayed != nil && o.replayed != e.Replayed.v {
		want, got := "a replayed response (header slotd-replayed: true)", "a fresh response"
		if !e.Replayed.v {
			want, got = got, want
		}
		miss("replayed", e.Replayed.pos, want, got)
	}
	out = append(out, e.checkSessions(o)...)
	if e.Status != nil && o.session.GetStatus() != e.Status.v {
		miss("status", e.Status.pos, short(e.Status.v), short(o.session.GetStatus()))
	}
	if e.Version != nil && o.session.GetVersion() != e.Version.v {
		miss("version", e.Version.pos, fmt.Sprint(e.Version.v), fmt.Sprint(o.session.GetVersion()))
	}
	if k := e.IdempotencyKey; k != nil {
		switch {
		case k.present != nil && *k.present && o.key == "":
			miss("idempotency_key", k.pos, "a key", "none")
		case k.present != nil && !*k.present && o.key != "":
			miss("idempotency_key", k.pos, "none", quote(o.key))
		case k.sameAs > 0:
			prior := seen[k.sameAs]
			switch {
			case prior == nil || prior.key == "":
				miss("idempotency_key", k.pos, fmt.Sprintf("the key of step %d", k.sameAs), fmt.Sprintf("step %d had no key", k.sameAs))
			case prior.key != o.key:
				miss("idempotency_key", k.pos, fmt.Sprintf("%s (the key of step %d)", quote(prior.key), k.sameAs), orNothing(quote(o.key), "none"))
			}
		}
	}
	return out
}

// checkSessions compares what a turn says of the conversation's sessions:
// whether it came back to a parked one, its notice, the other open
// sessions (in any order) and the sessions it ended.
func (e *expect) checkSessions(o *observed) []Mismatch {
	var out []Mismatch
	if e.Resumed != nil && o.resumed != e.Resumed.v {
		want, got := "resumed (the first turn back on a parked session)", "not resumed"
		if !e.Resumed.v {
			want, got = got, want
		}
		out = append(out, Mismatch{Field: "resumed", Pos: e.Resumed.pos, Want: want, Got: got})
	}
	if e.NoticeContains != nil {
		for _, s := range e.NoticeContains.v {
			if !strings.Contains(o.notice, s) {
				out = append(out, Mismatch{Field: "notice_contains", Pos: e.NoticeContains.pos, Want: "a notice containing " + quote(s), Got: orNothing(quote(o.notice), "no notice")})
			}
		}
	}
	if e.OpenSessions != nil {
		want := val[texts]{v: slices.Sorted(slices.Values(e.OpenSessions.v)), pos: e.OpenSessions.pos}
		checkList(&out, "open_sessions", &want, slices.Sorted(slices.Values(o.open)))
	}
	if w := e.EndedSessions; w != nil {
		got := map[string]string{}
		for _, s := range o.ended {
			got[s.Tool] = short(s.Status)
		}
		for _, tool := range slices.Sorted(maps.Keys(w.want)) {
			st := w.want[tool]
			if g, ok := got[tool]; !ok {
				out = append(out, Mismatch{Field: "ended_sessions." + tool, Pos: st.pos, Want: "ended " + short(st.v), Got: "not ended; " + describeEnded(o.ended)})
			} else if g != short(st.v) {
				out = append(out, Mismatch{Field: "ended_sessions." + tool, Pos: st.pos, Want: "ended " + short(st.v), Got: "ended " + g})
			}
			delete(got, tool)
		}
		for _, tool := range slices.Sorted(maps.Keys(got)) {
			out = append(out, Mismatch{Field: "ended_sessions." + tool, Pos: w.pos, Want: "not ended (not listed)", Got: "ended " + got[tool]})
		}
	}
	return out
}

func describeEnded(ss []*slotdv1.Session) string {
	if len(ss) == 0 {
		return "no session ended"
	}
	var parts []string
	for _, s := range ss {
		parts = append(parts, s.Tool+" "+short(s.Status))
	}
	return "ended: " + strings.Join(parts, ", ")
}

func checkList(out *[]Mismatch, field string, w *val[texts], got []string) {
	if slices.Equal(w.v, got) {
		return
	}
	m := Mismatch{Field: field, Pos: w.pos, Want: show([]string(w.v)), Got: show(nonNil(got))}
	var lacking, extra []string
	for _, s := range w.v {
		if !slices.Contains(got, s) {
			lacking = append(lacking, s)
		}
	}
	for _, s := range got {
		if !slices.Contains(w.v, s) {
			extra = append(extra, s)
		}
	}
	var notes []string
	if len(lacking) > 0 {
		notes = append(notes, "lacks "+strings.Join(lacking, ", "))
	}
	if len(extra) > 0 {
		notes = append(notes, "has also "+strings.Join(extra, ", "))
	}
	if len(notes) == 0 {
		notes = append(notes, "same values in another order")
	}
	m.Got += " (" + strings.Join(notes, "; ") + ")"
	*out = append(*out, m)
}

// checkMap matches an object: each listed key has the value (null: the key
// is absent or null); exact also refuses keys not listed.
func checkMap(field string, w *mapWant, got *structpb.Struct) []Mismatch {
	var out []Mismatch
	if w.none {
		if got != nil {
			out = append(out, Mismatch{Field: field, Pos: w.pos, Want: "none", Got: show(got.AsMap())})
		}
		return out
	}
	if got == nil && len(w.entries) > 0 && field != "slots" {
		return append(out, Mismatch{Field: field, Pos: w.pos, Want: show(w.object()), Got: "none"})
	}
	actual := got.AsMap()
	listed := map[string]bool{}
	for _, en := range w.entries {
		listed[en.key] = true
		g, ok := actual[en.key]
		name := field + "." + en.key
		switch {
		case en.value == nil:
			if ok && g != nil {
				out = append(out, Mismatch{Field: name, Pos: en.pos, Want: "nothing (not set)", Got: show(g)})
			}
		case !ok:
			out = append(out, Mismatch{Field: name, Pos: en.pos, Want: show(en.value), Got: "nothing (not set)"})
		case !reflect.DeepEqual(en.value, g):
			out = append(out, Mismatch{Field: name, Pos: en.pos, Want: show(en.value), Got: show(g) + typeNote(en.value, g)})
		}
	}
	if w.exact {
		var extra []string
		for k := range actual {
			if !listed[k] {
				extra = append(extra, k)
			}
		}
		sort.Strings(extra)
		for _, k := range extra {
			out = append(out, Mismatch{Field: field + "." + k, Pos: w.pos, Want: "nothing (exact: not listed)", Got: show(actual[k])})
		}
	}
	return out
}

func (w *mapWant) object() map[string]any {
	m := make(map[string]any, len(w.entries))
	for _, en := range w.entries {
		m[en.key] = en.value
	}
	return m
}

// typeNote explains a difference that the rendering alone may hide.
func typeNote(want, got any) string {
	tw, tg := jsonType(want), jsonType(got)
	if tw == tg {
		return ""
	}
	note := fmt.Sprintf(" (expected %s, got %s", tw, tg)
	if tg == "text" {
		note += `: quote the value in the script, e.g. "1200.50"`
	}
	return note + ")"
}

func jsonType(v any) string {
	switch v.(type) {
	case nil:
		return "null"
	case string:
		return "text"
	case float64:
		return "a number"
	case bool:
		return "a boolean"
	case []any:
		return "a list"
	case map[string]any:
		return "an object"
	}
	return fmt.Sprintf("%T", v)
}

func checkChanges(w *changesWant, actual []*slotdv1.Change) []Mismatch {
	var out []Mismatch
	used := make([]bool, len(actual))
	for _, item := range w.items {
		name := "changes[" + string(item.Slot.v) + "]"
		var candidates []int
		for i, ch := range actual {
			if !used[i] && ch.Slot == string(item.Slot.v) {
				candidates = append(candidates, i)
			}
		}
		if len(candidates) == 0 {
			out = append(out, Mismatch{Field: name, Pos: item.pos, Want: "a change of " + string(item.Slot.v) + item.describe(), Got: "none; " + describeChanges(actual)})
			continue
		}
		best, bestDiff := candidates[0], item.diff(name, actual[candidates[0]])
		for _, i := range candidates[1:] {
			if len(bestDiff) == 0 {
				break
			}
			if d := item.diff(name, actual[i]); len(d) < len(bestDiff) {
				best, bestDiff = i, d
			}
		}
		used[best] = true
		out = append(out, bestDiff...)
	}
	if w.exact {
		for i, ch := range actual {
			if !used[i] {
				out = append(out, Mismatch{Field: "changes[" + ch.Slot + "]", Pos: w.pos, Want: "no such change (exact: not listed)", Got: describeChange(ch)})
			}
		}
	}
	return out
}

func (c *changeWant) describe() string {
	var parts []string
	if c.Decision != nil {
		parts = append(parts, short(c.Decision.v))
	}
	if c.Old != nil {
		parts = append(parts, "old "+show(c.Old.v))
	}
	if c.New != nil {
		parts = append(parts, "new "+show(c.New.v))
	}
	if len(parts) == 0 {
		return ""
	}
	return " (" + strings.Join(parts, ", ") + ")"
}

func (c *changeWant) diff(name string, ch *slotdv1.Change) []Mismatch {
	var out []Mismatch
	if c.Decision != nil && ch.Decision != c.Decision.v {
		out = append(out, Mismatch{Field: name + ".decision", Pos: c.Decision.pos, Want: short(c.Decision.v), Got: short(ch.Decision)})
	}
	for _, side := range []struct {
		field string
		w     *val[any]
		got   *structpb.Value
	}{{"old", c.Old, ch.Old}, {"new", c.New, ch.New}} {
		if side.w == nil {
			continue
		}
		var g any
		if side.got != nil {
			g = side.got.AsInterface()
		}
		if !reflect.DeepEqual(side.w.v, g) {
			out = append(out, Mismatch{Field: name + "." + side.field, Pos: side.w.pos, Want: showNull(side.w.v), Got: showNull(g) + typeNote(side.w.v, g)})
		}
	}
	if c.MessageContains != nil && !strings.Contains(ch.Message, c.MessageContains.v) {
		out = append(out, Mismatch{Field: name + ".message_contains", Pos: c.MessageContains.pos, Want: "text containing " + quote(c.MessageContains.v), Got: orNothing(quote(ch.Message), "no message")})
	}
	return out
}

func checkProblem(w *problemWant, p *slotdv1.Problem) []Mismatch {
	var out []Mismatch
	miss := func(field string, pos Pos, want, got string) {
		out = append(out, Mismatch{Field: field, Pos: pos, Want: want, Got: got})
	}
	if w.none {
		if p != nil {
			miss("problem", w.pos, "none", describeProblem(p))
		}
		return out
	}
	if p == nil {
		miss("problem", w.pos, "a problem", "none")
		return out
	}
	if w.Type != nil && p.Type != w.Type.v {
		miss("problem.type", w.Type.pos, w.Type.v, orNothing(p.Type, "no type"))
	}
	if w.Title != nil && p.Title != w.Title.v {
		miss("problem.title", w.Title.pos, quote(w.Title.v), quote(p.Title))
	}
	if w.Status != nil && p.Status != w.Status.v {
		miss("problem.status", w.Status.pos, fmt.Sprint(w.Status.v), fmt.Sprint(p.Status))
	}
	if w.DetailContains != nil && !strings.Contains(p.Detail, w.DetailContains.v) {
		miss("problem.detail_contains", w.DetailContains.pos, "text containing "+quote(w.DetailContains.v), orNothing(quote(p.Detail), "no detail"))
	}
	if w.Retryable != nil && p.Retryable != w.Retryable.v {
		miss("problem.retryable", w.Retryable.pos, fmt.Sprint(w.Retryable.v), fmt.Sprint(p.Retryable))
	}
	byPointer := map[string]*slotdv1.FieldError{}
	var pointers []string
	for _, fe := range p.Errors {
		if _, dup := byPointer[fe.Pointer]; !dup {
			byPointer[fe.Pointer] = fe
		}
		pointers = append(pointers, fe.Pointer)
	}
	atPointers := "errors at " + show(nonNil(pointers))
	if w.Pointer != nil {
		for _, ptr := range w.Pointer.v {
			if byPointer[ptr] == nil {
				miss("problem.pointer", w.Pointer.pos, "an error at "+ptr, atPointers)
			}
		}
	}
	for _, fw := range w.Errors {
		name := "problem.errors[" + string(fw.Pointer.v) + "]"
		fe := byPointer[string(fw.Pointer.v)]
		if fe == nil {
			miss(name, fw.pos, "an error at "+string(fw.Pointer.v), atPointers)
			continue
		}
		if fw.Input != nil && fe.Input != fw.Input.v {
			miss(name+".input", fw.Input.pos, quote(fw.Input.v), quote(fe.Input))
		}
		if fw.InputContains != nil && !strings.Contains(fe.Input, fw.InputContains.v) {
			miss(name+".input_contains", fw.InputContains.pos, "text containing "+quote(fw.InputContains.v), quote(fe.Input))
		}
		if fw.Allowed != nil {
			checkList(&out, name+".allowed", fw.Allowed, fe.AllowedValues)
		}
		if fw.FormatContains != nil && !strings.Contains(fe.Format, fw.FormatContains.v) {
			miss(name+".format_contains", fw.FormatContains.pos, "text containing "+quote(fw.FormatContains.v), orNothing(quote(fe.Format), "no format"))
		}
	}
	return out
}

// describe says briefly what a response holds, to show beside a mismatch.
func (o *observed) describe() string {
	if o.err != nil {
		s := "error " + o.err.Code().String() + ": " + o.err.Message()
		if o.problem != nil {
			s += "; problem " + describeProblem(o.problem)
		}
		return s
	}
	if o.kind == kindReset {
		return "session " + short(o.session.GetStatus())
	}
	if o.kind == kindComplete && o.action == slotdv1.Action_ACTION_UNSPECIFIED {
		// A completion that ended the session answers no next step: what
		// it did is the session's status.
		return "session " + short(o.session.GetStatus())
	}
	if o.kind == kindParallel {
		parts := make([]string, len(o.calls))
		for i, c := range o.calls {
			parts[i] = c.describe()
		}
		return strings.Join(parts, " | ")
	}
	a := short(o.action)
	if q := o.question; q != nil {
		if q.Slot != "" {
			a += " " + q.Slot
		}
		if q.Text != "" {
			a += " " + quote(q.Text)
		}
	}
	return a
}

// details are the lines shown under a failed step: what the response held.
func (o *observed) details() []string {
	if o.err != nil {
		return []string{o.describe()}
	}
	var out []string
	if o.kind == kindParallel {
		for i, c := range o.calls {
			out = append(out, fmt.Sprintf("parallel[%d] (%s):", i+1, c.session.GetTool()))
			for _, line := range c.details() {
				out = append(out, "  "+line)
			}
		}
		return out
	}
	if o.kind != kindReset {
		line := o.describe()
		if q := o.question; q != nil && len(q.AllowedValues) > 0 {
			line += " allowed " + show(q.AllowedValues)
		}
		out = append(out, line)
	}
	if o.replayed {
		out = append(out, "replayed (header slotd-replayed: true)")
	}
	if o.resumed {
		out = append(out, "resumed")
	}
	if o.notice != "" {
		out = append(out, "notice "+quote(o.notice))
	}
	if len(o.open) > 0 {
		out = append(out, "open_sessions "+show(o.open))
	}
	if len(o.ended) > 0 {
		out = append(out, describeEnded(o.ended))
	}
	if s := o.session; s != nil {
		line := "session " + short(s.Status) + fmt.Sprintf(" v%d", s.Version) + " slots " + show(s.GetSlots().AsMap())
		if len(s.Missing) > 0 {
			line += " missing " + show(s.Missing)
		}
		out = append(out, line)
		for _, p := range s.Pending {
			out = append(out, "pending "+p.Slot+" "+showValue(p.Old)+" → "+showValue(p.New))
		}
	}
	if len(o.changes) > 0 {
		out = append(out, "changes: "+describeChanges(o.changes))
	}
	if o.arguments != nil {
		out = append(out, "arguments "+show(o.arguments.AsMap()))
	}
	if o.key != "" {
		out = append(out, "idempotency_key "+o.key)
	}
	if o.output != nil {
		out = append(out, "output "+show(o.output.AsMap()))
	}
	if o.problem != nil {
		out = append(out, "problem "+describeProblem(o.problem))
	}
	return out
}

func describeChanges(chs []*slotdv1.Change) string {
	if len(chs) == 0 {
		return "no changes"
	}
	parts := make([]string, len(chs))
	for i, ch := range chs {
		parts[i] = describeChange(ch)
	}
	return strings.Join(parts, "; ")
}

func describeChange(ch *slotdv1.Change) string {
	s := ch.Slot + " " + short(ch.Decision)
	switch {
	case ch.Old != nil && ch.New != nil:
		s += " " + showValue(ch.Old) + " → " + showValue(ch.New)
	case ch.New != nil:
		s += " " + showValue(ch.New)
	case ch.Old != nil:
		s += " (was " + showValue(ch.Old) + ")"
	}
	return s
}

func describeProblem(p *slotdv1.Problem) string {
	s := strings.TrimPrefix(p.Type, ProblemTypeBase)
	if p.Title != "" {
		s += " " + quote(p.Title)
	}
	for _, fe := range p.Errors {
		s += "; " + fe.Pointer
		if fe.Input != "" {
			s += " input " + fe.Input
		}
		if len(fe.AllowedValues) > 0 {
			s += " allowed " + show(fe.AllowedValues)
		}
		if fe.Format != "" {
			s += " format " + quote(fe.Format)
		}
	}
	if p.Retryable {
		s += "; retryable"
	}
	return s
}

// short names an enum value the way scripts write it, in capitals: ASK,
// OVERWRITTEN, ACTIVE.
func short(v fmt.Stringer) string {
	s := v.String()
	for _, p := range []string{"ACTION_", "DECISION_", "SESSION_STATUS_", "FAILURE_KIND_"} {
		s = strings.TrimPrefix(s, p)
	}
	return s
}

// show renders a value as compact JSON with keys sorted; in text,
// invisible characters are escaped (\u200b, \u00a0) so that a diff never
// shows two equal-looking values.
func show(v any) string {
	var b strings.Builder
	writeValue(&b, v)
	return b.String()
}

func writeValue(b *strings.Builder, v any) {
	switch t := v.(type) {
	case nil:
		b.WriteString("null")
	case string:
		b.WriteString(quoteText(t))
	case map[string]any:
		b.WriteByte('{')
		for i, k := range sortedKeys(t) {
			if i > 0 {
				b.WriteByte(',')
			}
			b.WriteString(quoteText(k) + ":")
			writeValue(b, t[k])
		}
		b.WriteByte('}')
	case []any:
		b.WriteByte('[')
		for i, x := range t {
			if i > 0 {
				b.WriteByte(',')
			}
			writeValue(b, x)
		}
		b.WriteByte(']')
	case []string:
		writeValue(b, toAny(t))
	default:
		out, err := json.Marshal(v)
		if err != nil {
			fmt.Fprint(b, v)
			return
		}
		b.Write(out)
	}
}

// quoteText quotes like JSON, but keeps printable non-ASCII text as it is
// and escapes what cannot be seen (no-break and zero-width spaces).
func quoteText(s string) string {
	var b strings.Builder
	b.WriteByte('"')
	for _, r := range s {
		switch {
		case r == '"' || r == '\\':
			b.WriteByte('\\')
			b.WriteRune(r)
		case r == '\n':
			b.WriteString(`\n`)
		case r == '\t':
			b.WriteString(`\t`)
		case r == '\r':
			b.WriteString(`\r`)
		case r == ' ' || (unicode.IsPrint(r) && r != '\u00a0'):
			b.WriteRune(r)
		case r > 0xffff:
			fmt.Fprintf(&b, `\U%08x`, r)
		default:
			fmt.Fprintf(&b, `\u%04x`, r)
		}
	}
	b.WriteByte('"')
	return b.String()
}

func showNull(v any) string {
	if v == nil {
		return "nothing (null)"
	}
	return show(v)
}

func showValue(v *structpb.Value) string {
	if v == nil {
		return "null"
	}
	return show(v.AsInterface())
}

func quote(s string) string { return show(s) }

func orNothing(s, nothing string) string {
	if s == "" || s == `""` {
		return nothing
	}
	return s
}

func nonNil(s []string) []string {
	if s == nil {
		return []string{}
	}
	return s
}
