package logline_test

import (
	"bytes"
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"io"
	"log/slog"
	"math"
	"math/rand/v2"
	"strings"
	"sync"
	"sync/atomic"
	"testing"
	"time"
	"unicode"

	"github.com/slotd/slotd/internal/dirtytest"
	"github.com/slotd/slotd/internal/logline"
	"github.com/slotd/slotd/session"
)

func dirty(r *rand.Rand) string { return dirtytest.String(r, 3000) }

var zones = []*time.Location{time.UTC, time.Local, time.FixedZone("", 3*3600), time.FixedZone("NPT", 5*3600+45*60),
	time.FixedZone("X", -(9*3600 + 30*60))}

func randomTime(r *rand.Rand) time.Time {
	switch r.IntN(20) {
	case 0:
		return time.Time{}
	case 1:
		return time.Now() // with a monotonic reading
	case 2:
		return time.Date(-1+r.IntN(2)*10001, 1, 1, 0, 0, 0, 0, time.UTC) // outside 0-9999
	case 3:
		return time.Date(r.IntN(10000), time.Month(1+r.IntN(12)), 1+r.IntN(28), 0, 0, 0, 0, time.UTC)
	}
	ns := []int{0, 1, 100, 1_000, 1_000_000, 120_000_000, 999_999_999}
	n := ns[r.IntN(len(ns))]
	if r.IntN(2) == 0 {
		n = r.IntN(1e9)
	}
	return time.Unix(1.7e9+r.Int64N(1e9), int64(n)).In(zones[r.IntN(len(zones))])
}

func randomLatency(r *rand.Rand) float64 {
	switch r.IntN(12) {
	case 0:
		return 0
	case 1:
		return float64(time.Duration(math.MaxInt64).Microseconds()) / 1000
	case 2:
		return 1e-3
	case 3:
		return []float64{1e-7, 5e-324, 1e21, 1.5e300, -2.5e-9, math.Copysign(0, -1), 1e20, 999999.9999}[r.IntN(8)]
	case 4:
		return []float64{math.NaN(), math.Inf(1), math.Inf(-1)}[r.IntN(3)]
	case 5:
		return math.Float64frombits(r.Uint64())
	}
	return float64(r.Int64N(int64(1<<r.IntN(40)))) / 1000
}

func randomResult(r *rand.Rand) *session.Result {
	if r.IntN(4) == 0 {
		return nil
	}
	return dirtytest.Result(r, 3000)
}

func randomTurn(r *rand.Rand) logline.Turn {
	levels := []slog.Level{slog.LevelInfo, slog.LevelWarn, slog.LevelDebug, slog.LevelError, slog.LevelInfo + 2, -8}
	// Most turns are not traced.
	traceID := ""
	if r.IntN(3) == 0 {
		traceID = dirty(r)
	}
	return logline.Turn{Time: randomTime(r), Level: levels[r.IntN(len(levels))],
		RequestID: dirty(r), TraceID: traceID, Tenant: dirty(r), Tool: dirty(r), ConversationID: dirty(r), TurnID: dirty(r),
		Action: dirty(r), Code: dirty(r), LatencyMS: randomLatency(r), Result: randomResult(r)}
}

// WriteTurn writes what slog's JSON handler writes of the turn's record,
// byte for byte, or leaves the record to it.
func TestWriteTurnWritesAsSlog(t *testing.T) {
	t.Parallel()
	r := rand.New(rand.NewPCG(1, 2))
	written := 0
	for i := range 6000 {
		turn := randomTurn(r)
		var opts *slog.HandlerOptions
		if i%2 == 0 {
			opts = &slog.HandlerOptions{Level: slog.LevelDebug}
		}
		var got, want bytes.Buffer
		ok, err := logline.NewJSON(&got, opts).WriteTurn(turn)
		if err != nil {
			t.Fatal(err)
		}
		if err := slog.NewJSONHandler(&want, opts).Handle(context.Background(), turn.Record()); err != nil {
			t.Fatal(err)
		}
		y := turn.Time.Year()
		if wantOK := y >= 0 && y < 10000 && !math.IsNaN(turn.LatencyMS) && !math.IsInf(turn.LatencyMS, 0); ok != wantOK {
			t.Fatalf("WriteTurn of a turn at %v, latency %v: %v, want %v", turn.Time, turn.LatencyMS, ok, wantOK)
		}
		if !ok {
			if got.Len() != 0 {
				t.Fatalf("WriteTurn wrote %q and reported it did not", got.String())
			}
			continue
		}
		written++
		if !bytes.Equal(got.Bytes(), logline.EscapeInvisible(want.Bytes())) {
			t.Fatalf("turn %d:\nWriteTurn: %q\nslog:      %q", i, got.String(), want.String())
		}
	}
	if written < 4500 {
		t.Errorf("WriteTurn wrote %d turns of 6000", written)
	}
}

// A traced turn's line carries its trace id after the request id; an
// untraced one's has no trace_id at all.
func TestTraceIDFollowsRequestID(t *testing.T) {
	t.Parallel()
	for _, tc := range []struct{ traceID, want string }{
		{"4bf92f3577b34da6a3ce929d0e0e4736", `"request_id":"r-1","trace_id":"4bf92f3577b34da6a3ce929d0e0e4736","tenant"`},
		{"", `"request_id":"r-1","tenant"`},
	} {
		var b bytes.Buffer
		turn := logline.Turn{Level: slog.LevelInfo, RequestID: "r-1", TraceID: tc.traceID, Tenant: "bank"}
		if ok, err := logline.NewJSON(&b, nil).WriteTurn(turn); !ok || err != nil {
			t.Fatalf("WriteTurn: %v, %v", ok, err)
		}
		if !strings.Contains(b.String(), tc.want) {
			t.Errorf("trace id %q: line %s, want it to hold %s", tc.traceID, b.String(), tc.want)
		}
	}
}

// Bidi controls and other format characters in what a line carries are
// written as \u escapes, in a turn's line and in any other record alike, and
// read back as they were sent.
func TestInvisibleCharactersAreEscaped(t *testing.T) {
	t.Parallel()
	const id = "conv-\u202eexe.txt\u202c-\u2066x\u2069-\u200b\u00ad-\U000e0041-\u202a\u202b\u202d\u2067\u2068\ufeff"
	var buf bytes.Buffer
	h := logline.NewJSON(&buf, nil)
	if ok, err := h.WriteTurn(logline.Turn{Time: time.Now(), Level: slog.LevelInfo, ConversationID: id, Code: "OK"}); !ok || err != nil {
		t.Fatalf("WriteTurn: %v, %v", ok, err)
	}
	slog.New(h).Info("refused", "conversation_id", id, id, "as a key")
	lines := strings.Split(strings.TrimSpace(buf.String()), "\n")
	if len(lines) != 2 {
		t.Fatalf("want 2 lines, got %q", buf.String())
	}
	for _, line := range lines {
		for _, r := range line {
			if unicode.Is(unicode.Cf, r) || unicode.IsControl(r) {
				t.Errorf("line %q holds %U as it is", line, r)
			}
		}
		for _, esc := range []string{`\u202e`, `\u202c`, `\u2066`, `\u2069`, `\u200b`, `\u00ad`, `\udb40\udc41`, `\ufeff`} {
			if !strings.Contains(line, esc) {
				t.Errorf("line %q lacks %s", line, esc)
			}
		}
		var m map[string]any
		if err := json.Unmarshal([]byte(line), &m); err != nil || m["conversation_id"] != id {
			t.Errorf("line %q reads back as %q (%v), want the id as sent", line, m["conversation_id"], err)
		}
	}
	if b := []byte(`{"msg":"plain – ascii and ünïcode"}`); &logline.EscapeInvisible(b)[0] != &b[0] {
		t.Error("a line without format characters was copied")
	}
}

// Options that change what the JSON handler writes leave every line to it;
// WithAttrs and WithGroup make a handler without WriteTurn.
func TestWriteTurnLeavesOtherHandlersToSlog(t *testing.T) {
	t.Parallel()
	turn := logline.Turn{Time: time.Now(), Level: slog.LevelInfo, Tenant: "acme", Code: "OK", LatencyMS: 1.5}
	for _, tc := range []struct {
		name string
		opts *slog.HandlerOptions
		fast bool
	}{
		{"default options", nil, true},
		{"a level", &slog.HandlerOptions{Level: slog.LevelWarn}, true},
		{"ReplaceAttr", &slog.HandlerOptions{ReplaceAttr: func(_ []string, a slog.Attr) slog.Attr { return a }}, false},
		{"AddSource (a turn's record has no source)", &slog.HandlerOptions{AddSource: true}, true},
	} {
		var buf bytes.Buffer
		ok, err := logline.NewJSON(&buf, tc.opts).WriteTurn(turn)
		if ok != tc.fast || err != nil || (buf.Len() > 0) != tc.fast {
			t.Errorf("%s: WriteTurn = %v, %v, wrote %q; want %v", tc.name, ok, err, buf.String(), tc.fast)
		}
	}
	type turnWriter interface {
		WriteTurn(logline.Turn) (bool, error)
	}
	h := logline.NewJSON(io.Discard, nil)
	for name, d := range map[string]slog.Handler{
		"WithAttrs": h.WithAttrs([]slog.Attr{slog.String("k", "v")}), "WithGroup": h.WithGroup("g"),
	} {
		if _, ok := d.(turnWriter); ok {
			t.Errorf("the handler %s makes has WriteTurn", name)
		}
	}
}

// exclusive is a writer that counts the Writes made while another one is
// under way.
type exclusive struct {
	busy     atomic.Bool
	overlaps atomic.Int64
	buf      bytes.Buffer
}

func (w *exclusive) Write(p []byte) (int, error) {
	if !w.busy.CompareAndSwap(false, true) {
		w.overlaps.Add(1)
		return 0, errors.New("a Write while another is under way")
	}
	defer w.busy.Store(false)
	return w.buf.Write(p)
}

// Lines written at once from many goroutines, by WriteTurn and by slog
// through the handler and the ones it makes, are each one Write, one
// after another.
func TestConcurrentLinesDoNotInterleave(t *testing.T) {
	t.Parallel()
	var w exclusive
	h := logline.NewJSON(&w, nil)
	log := slog.New(h)
	with, group := log.With("conn", "c-1"), log.WithGroup("g")
	r := rand.New(rand.NewPCG(3, 4))
	turns := make([]logline.Turn, 64)
	for i := range turns {
		turns[i] = randomTurn(r)
		turns[i].Time, turns[i].LatencyMS = time.Now(), 1.25
	}
	const goroutines, lines = 32, 300
	var wg sync.WaitGroup
	for g := range goroutines {
		wg.Go(func() {
			for i := range lines {
				switch i % 4 {
				case 0, 1:
					if _, err := h.WriteTurn(turns[(g+i)%len(turns)]); err != nil {
						t.Error(err)
						return
					}
				case 2:
					log.Info("metrics serving", "addr", "127.0.0.1:9090", "n", i)
				case 3:
					with.Warn(strings.Repeat("x", i), "g", g)
					group.Info("grouped", "i", i)
				}
			}
		})
	}
	wg.Wait()
	if n := w.overlaps.Load(); n > 0 {
		t.Fatalf("%d Writes while another was under way", n)
	}
	out := strings.Split(strings.TrimSuffix(w.buf.String(), "\n"), "\n")
	if want := goroutines * lines * 5 / 4; len(out) != want {
		t.Errorf("%d lines, want %d", len(out), want)
	}
	for _, line := range out {
		if !json.Valid([]byte(line)) {
			t.Fatalf("a line is not JSON: %q", line)
		}
	}
}

func ExampleHandler_WriteTurn() {
	var buf bytes.Buffer
	h := logline.NewJSON(&buf, nil)
	_, _ = h.WriteTurn(logline.Turn{Time: time.Date(2026, 8, 23, 10, 0, 0, 0, time.UTC), Level: slog.LevelInfo,
		Tenant: "acme", Tool: "bank.open_dispute", Action: "ASK", Code: "OK", LatencyMS: 1.25})
	fmt.Print(buf.String())
	// Output:
	// {"time":"2026-08-23T10:00:00Z","level":"INFO","msg":"turn","request_id":"","tenant":"acme","tool":"bank.open_dispute","conversation_id":"","turn_id":"","action":"ASK","code":"OK","latency_ms":1.25}
}
