// Package logline is slotd's slog handler for JSON logs. It writes every
// record as slog's JSON handler does, and writes the line slotd logs per
// turn itself: that line is most of what slotd logs, and slog's generic
// work on its attributes (and encoding/json for its one float) made it cost
// more than a microsecond of each turn.
package logline

import (
	"io"
	"log/slog"
	"math"
	"strconv"
	"sync"
	"time"
	"unicode"
	"unicode/utf16"
	"unicode/utf8"

	"github.com/slotd/slotd/session"
)

// Handler is a slog.Handler that writes records as slog.JSONHandler does
// (it is one), and writes a Turn's line itself, byte for byte as the JSON
// handler writes the turn's record.
//
// WithAttrs and WithGroup return the JSON handler's own: what they add is
// outside what a Turn line knows, so the handler they make has no WriteTurn
// and the turn's record goes through slog.
type Handler struct {
	*slog.JSONHandler
	w *lockedWriter
	// fast is false when the options change what the JSON handler writes
	// of a record (ReplaceAttr): then only it writes lines. AddSource does
	// not: a turn's record has no program counter, and the JSON handler
	// writes no source for it.
	fast bool
}

// lockedWriter makes each line's one Write exclusive, the JSON handler's
// and WriteTurn's alike: the JSON handler locks a mutex of its own, which
// WriteTurn cannot reach.
type lockedWriter struct {
	mu sync.Mutex
	w  io.Writer
}

func (l *lockedWriter) Write(p []byte) (int, error) {
	line := EscapeInvisible(p)
	l.mu.Lock()
	defer l.mu.Unlock()
	if _, err := l.w.Write(line); err != nil {
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

// NewJSON makes a Handler writing to w, with opts as slog.NewJSONHandler
// takes them (nil for the defaults).
func NewJSON(w io.Writer, opts *slog.HandlerOptions) *Handler {
	lw := &lockedWriter{w: w}
	return &Handler{
		JSONHandler: slog.NewJSONHandler(lw, opts),
		w:           lw,
		fast:        opts == nil || opts.ReplaceAttr == nil,
	}
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

// Record is t as a slog record, for a handler that is not slotd's own or
// whose options change the line: WriteTurn writes exactly what slog's JSON
// handler writes of it. It carries no program counter (finding it cost a
// fifth of the line), so a handler adding the source writes none.
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

// WriteTurn writes t's line with one Write and reports whether it did. It
// does not when the JSON handler would write something else for the
// turn's record: when the handler's options change what it writes, or for
// values it writes an error for (a year outside 0-9999, a NaN or an
// infinite latency). Like Handle, it does not look at the level.
func (h *Handler) WriteTurn(t Turn) (bool, error) {
	if y := t.Time.Year(); !h.fast || y < 0 || y >= 10000 || math.IsNaN(t.LatencyMS) || math.IsInf(t.LatencyMS, 0) {
		return false, nil
	}
	p := bufPool.Get().(*[]byte)
	*p = t.appendJSON((*p)[:0])
	_, err := h.w.Write(*p)
	// Big buffers are not kept, as slog does not keep them.
	if cap(*p) <= 16<<10 {
		bufPool.Put(p)
	}
	return true, err
}

var bufPool = sync.Pool{New: func() any {
	b := make([]byte, 0, 1024)
	return &b
}}

func (t *Turn) appendJSON(b []byte) []byte {
	b = append(b, '{')
	if !t.Time.IsZero() {
		b = append(b, `"time":"`...)
		b = t.Time.AppendFormat(b, time.RFC3339Nano)
		b = append(b, `",`...)
	}
	b = append(b, `"level":`...)
	b = appendString(b, t.Level.String())
	b = append(b, `,"msg":"turn"`...)
	b = appendField(b, "request_id", t.RequestID)
	if t.TraceID != "" {
		b = appendField(b, "trace_id", t.TraceID)
	}
	b = appendField(b, "tenant", t.Tenant)
	b = appendField(b, "tool", t.Tool)
	b = appendField(b, "conversation_id", t.ConversationID)
	b = appendField(b, "turn_id", t.TurnID)
	b = appendField(b, "action", t.Action)
	b = appendField(b, "code", t.Code)
	b = append(b, `,"latency_ms":`...)
	b = appendFloat(b, t.LatencyMS)
	if res := t.Result; res != nil {
		b = appendField(b, "session_id", res.Session.ID)
		b = append(b, `,"version":`...)
		b = strconv.AppendInt(b, res.Session.Version, 10)
		b = append(b, `,"replayed":`...)
		b = strconv.AppendBool(b, res.Replayed)
		b = appendDecisions(b, res.Changes)
		if q := res.Question; q != nil && q.Slot != "" {
			b = appendField(b, "slot", q.Slot)
		}
		if p := res.Problem; p != nil {
			b = appendField(b, "problem", p.Type)
			b = append(b, `,"problem_errors":`...)
			b = strconv.AppendInt(b, int64(len(p.Errors)), 10)
		}
		if f := res.Facts; f.FirstReady {
			b = append(b, `,"first_ready":true,"first_attempt":`...)
			b = strconv.AppendBool(b, f.FirstAttempt)
		}
	}
	return append(b, "}\n"...)
}

// appendField appends a string field after another; key needs no escaping.
func appendField(b []byte, key, value string) []byte {
	b = append(b, ',', '"')
	b = append(b, key...)
	b = append(b, '"', ':')
	return appendString(b, value)
}

// appendDecisions appends the "decisions" group, as slog writes a group of
// ints: nothing when it is empty.
func appendDecisions(b []byte, changes []session.Change) []byte {
	if len(changes) == 0 {
		return b
	}
	// A turn's changes get a few of the ten decisions there are.
	var arr [10]decisionCount
	counts := countDecisions(arr[:0], changes)
	b = append(b, `,"decisions":{`...)
	for i, c := range counts {
		if i > 0 {
			b = append(b, ',')
		}
		b = appendString(b, c.decision)
		b = append(b, ':')
		b = strconv.AppendInt(b, int64(c.n), 10)
	}
	return append(b, '}')
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

// appendFloat appends f as encoding/json does (which slog's JSON handler
// calls for a float): like strconv's shortest form, but in exponent form
// below 1e-6 and from 1e21 on, with the exponent not padded to two digits.
// f is finite.
func appendFloat(b []byte, f float64) []byte {
	format := byte('f')
	if abs := math.Abs(f); abs != 0 && (abs < 1e-6 || abs >= 1e21) {
		format = 'e'
	}
	b = strconv.AppendFloat(b, f, format, -1, 64)
	if format == 'e' {
		// e-07 becomes e-7.
		if n := len(b); n >= 4 && b[n-4] == 'e' && b[n-3] == '-' && b[n-2] == '0' {
			b[n-2] = b[n-1]
			b = b[:n-1]
		}
	}
	return b
}

// safe holds the bytes written as they are: ASCII but for control
// characters, " and \.
var safe = func() (t [256]bool) {
	for c := ' '; c < utf8.RuneSelf; c++ {
		t[c] = c != '"' && c != '\\'
	}
	return t
}()

// appendString appends s quoted as slog's JSON handler quotes it: ", \ and
// control characters escaped (\n, \r, \t by name), each byte of invalid
// UTF-8 as \ufffd, U+2028 and U+2029 escaped, and nothing escaped for HTML.
func appendString(b []byte, s string) []byte {
	const hex = "0123456789abcdef"
	b = append(b, '"')
	start := 0
	for i := 0; i < len(s); {
		c := s[i]
		if safe[c] {
			i++
			continue
		}
		if c < utf8.RuneSelf {
			b = append(b, s[start:i]...)
			switch c {
			case '"', '\\':
				b = append(b, '\\', c)
			case '\n':
				b = append(b, `\n`...)
			case '\r':
				b = append(b, `\r`...)
			case '\t':
				b = append(b, `\t`...)
			default:
				b = append(b, '\\', 'u', '0', '0', hex[c>>4], hex[c&0xf])
			}
			i++
			start = i
			continue
		}
		r, size := utf8.DecodeRuneInString(s[i:])
		if r == utf8.RuneError && size == 1 {
			b = append(b, s[start:i]...)
			b = append(b, `\ufffd`...)
		} else if r == '\u2028' || r == '\u2029' {
			b = append(b, s[start:i]...)
			b = append(b, '\\', 'u', '2', '0', '2', hex[r&0xf])
		} else {
			i += size
			continue
		}
		i += size
		start = i
	}
	b = append(b, s[start:]...)
	return append(b, '"')
}
