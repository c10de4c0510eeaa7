// Package logline is slotd's JSON log: slog's JSON handler, writing
// through a writer that escapes the characters a reader of the log would
// not see.
package logline

import (
	"io"
	"log/slog"
	"time"
	"unicode"
	"unicode/utf16"
	"unicode/utf8"

	"github.com/slotd/slotd/internal/session"
)

// NewJSON is slog's JSON handler, with opts as slog.NewJSONHandler takes
// them (nil for the defaults), writing each line to w through Escaping.
func NewJSON(w io.Writer, opts *slog.HandlerOptions) *slog.JSONHandler {
	return slog.NewJSONHandler(Escaping(w), opts)
}

// Escaping is w, each line written with its invisible characters escaped
// (EscapeInvisible). slog's handlers write a record with one Write, so the
// lines stay whole.
func Escaping(w io.Writer) io.Writer { return escaping{w} }

type escaping struct{ w io.Writer }

func (e escaping) Write(p []byte) (int, error) {
	if _, err := e.w.Write(EscapeInvisible(p)); err != nil {
		return 0, err
	}
	return len(p), nil
}

// EscapeInvisible writes the format characters (Unicode Cf: bidi controls
// U+202A-U+202E and U+2066-U+2069, zero-width spaces and joiners, soft
// hyphens, tags) of a JSON line as \u escapes, as JSON writes control
// characters: a reader of the log then sees them, and a bidi control cannot
// reorder what the line shows after it. Outside strings a JSON line holds
// ASCII only, so every such rune is inside a string. It returns line itself
// when there is none.
func EscapeInvisible(line []byte) []byte {
	first := -1
	for i := 0; i < len(line); {
		if line[i] < utf8.RuneSelf {
			i++
			continue
		}
		r, size := utf8.DecodeRune(line[i:])
		if unicode.Is(unicode.Cf, r) {
			first = i
			break
		}
		i += size
	}
	if first < 0 {
		return line
	}
	const hex = "0123456789abcdef"
	out := make([]byte, 0, len(line)+32)
	out = append(out, line[:first]...)
	for i := first; i < len(line); {
		r, size := utf8.DecodeRune(line[i:])
		if line[i] < utf8.RuneSelf || !unicode.Is(unicode.Cf, r) {
			out = append(out, line[i:i+size]...)
			i += size
			continue
		}
		units := []rune{r}
		if r > 0xffff {
			hi, lo := utf16.EncodeRune(r)
			units = []rune{hi, lo}
		}
		for _, u := range units {
			out = append(out, '\\', 'u', hex[u>>12&0xf], hex[u>>8&0xf], hex[u>>4&0xf], hex[u&0xf])
		}
		i += size
	}
	return out
}

// Turn is the content of a turn's log line: the message "turn", then these
// fields in this order, as slotd's server puts them in the turn's record.
type Turn struct {
	// Time is the record's time; it is left out when zero.
	Time  time.Time
	Level slog.Level
	// The strings are written as they are: masking ids is the caller's.
	RequestID string
	// TraceID is the turn's trace, when it is traced; the line leaves it
	// out when empty.
	TraceID                string
	Tenant, Tool           string
	ConversationID, TurnID string
	Action, Code           string
	LatencyMS              float64
	// Result adds session_id, version, replayed, the "decisions" group
	// (each change's decision and how many changes got it, in the order
	// they first come; left out when there are no changes), then slot when
	// a question names one, problem and problem_errors when there is a
	// problem, first_ready and first_attempt when the session is ready for
	// the first time.
	Result *session.Result
}

// Record is t as the turn's slog record. It carries no program counter
// (the caller is always the same), so a handler adding the source writes
// none.
func (t Turn) Record() slog.Record {
	rec := slog.NewRecord(t.Time, t.Level, "turn", 0)
	rec.AddAttrs(slog.String("request_id", t.RequestID))
	if t.TraceID != "" {
		rec.AddAttrs(slog.String("trace_id", t.TraceID))
	}
	rec.AddAttrs(slog.String("tenant", t.Tenant), slog.String("tool", t.Tool),
		slog.String("conversation_id", t.ConversationID), slog.String("turn_id", t.TurnID),
		slog.String("action", t.Action), slog.String("code", t.Code), slog.Float64("latency_ms", t.LatencyMS))
	res := t.Result
	if res == nil {
		return rec
	}
	// A group of ints, not a map: a map is encoded through encoding/json.
	var counts []slog.Attr
	for _, c := range countDecisions(nil, res.Changes) {
		counts = append(counts, slog.Int(c.decision, c.n))
	}
	rec.AddAttrs(slog.String("session_id", res.Session.ID), slog.Int64("version", res.Session.Version),
		slog.Bool("replayed", res.Replayed), slog.Attr{Key: "decisions", Value: slog.GroupValue(counts...)})
	if res.Question != nil && res.Question.Slot != "" {
		rec.AddAttrs(slog.String("slot", res.Question.Slot))
	}
	if p := res.Problem; p != nil {
		rec.AddAttrs(slog.String("problem", p.Type), slog.Int("problem_errors", len(p.Errors)))
	}
	if res.Facts.FirstReady {
		rec.AddAttrs(slog.Bool("first_ready", true), slog.Bool("first_attempt", res.Facts.FirstAttempt))
	}
	return rec
}

// decisionCount is how many of a turn's changes got a decision.
type decisionCount struct {
	decision string
	n        int
}

// countDecisions appends to counts each decision the changes got and how
// many got it, in the order they first come.
func countDecisions(counts []decisionCount, changes []session.Change) []decisionCount {
next:
	for _, ch := range changes {
		for i := range counts {
			if counts[i].decision == string(ch.Decision) {
				counts[i].n++
				continue next
			}
		}
		counts = append(counts, decisionCount{string(ch.Decision), 1})
	}
	return counts
}
