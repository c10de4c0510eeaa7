package logline_test

import (
	"bytes"
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"log/slog"
	"strings"
	"sync"
	"sync/atomic"
	"testing"
	"time"
	"unicode"

	"github.com/slotd/slotd/internal/logline"
)

// logTurn writes t's record through h.
func logTurn(t *testing.T, h slog.Handler, turn logline.Turn) {
	t.Helper()
	if err := h.Handle(context.Background(), turn.Record()); err != nil {
		t.Fatal(err)
	}
}

func TestTraceIDFollowsRequestID(t *testing.T) {
	t.Parallel()
	for _, tc := range []struct{ traceID, want string }{
		{"4bf92f3577b34da6a3ce929d0e0e4736", `"request_id":"r-1","trace_id":"4bf92f3577b34da6a3ce929d0e0e4736","tenant"`},
		{"", `"request_id":"r-1","tenant"`},
	} {
		var b bytes.Buffer
		logTurn(t, logline.NewJSON(&b, nil), logline.Turn{Level: slog.LevelInfo, RequestID: "r-1", TraceID: tc.traceID, Tenant: "bank"})
		if !strings.Contains(b.String(), tc.want) {
			t.Errorf("trace id %q: line %s, want it to hold %s", tc.traceID, b.String(), tc.want)
		}
	}
}

// Bidi controls and other format characters in what a line carries are
// written as \u escapes, in a turn's line and in any other record alike,
// through the handler and the ones it makes, and read back as they were
// sent.
func TestInvisibleCharactersAreEscaped(t *testing.T) {
	t.Parallel()
	const id = "conv-\u202eexe.txt\u202c-\u2066x\u2069-\u200b\u00ad-\U000e0041-\u202a\u202b\u202d\u2067\u2068\ufeff"
	var buf bytes.Buffer
	h := logline.NewJSON(&buf, nil)
	logTurn(t, h, logline.Turn{Time: time.Now(), Level: slog.LevelInfo, ConversationID: id, Code: "OK"})
	slog.New(h).Info("refused", "conversation_id", id, id, "as a key")
	slog.New(h).With("conversation_id", id).Warn("shed")
	lines := strings.Split(strings.TrimSpace(buf.String()), "\n")
	if len(lines) != 3 {
		t.Fatalf("want 3 lines, got %q", buf.String())
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

// A failing writer's error reaches the caller.
func TestWriteErrorIsReturned(t *testing.T) {
	t.Parallel()
	broken := errors.New("disk full")
	w := logline.Escaping(failing{broken})
	if n, err := w.Write([]byte("{\"msg\":\"x\u202e\"}\n")); !errors.Is(err, broken) || n != 0 {
		t.Errorf("Write = %d, %v; want 0 and the writer's error", n, err)
	}
}

type failing struct{ err error }

func (f failing) Write([]byte) (int, error) { return 0, f.err }

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

// Lines written at once from many goroutines, turn records and others,
// through the handler and the ones it makes, are each one Write, one after
// another.
func TestConcurrentLinesDoNotInterleave(t *testing.T) {
	t.Parallel()
	var w exclusive
	h := logline.NewJSON(&w, nil)
	log := slog.New(h)
	with, group := log.With("conn", "c-1"), log.WithGroup("g")
	const goroutines, lines = 32, 300
	var wg sync.WaitGroup
	for g := range goroutines {
		wg.Go(func() {
			for i := range lines {
				switch i % 4 {
				case 0, 1:
					turn := logline.Turn{Time: time.Now(), Level: slog.LevelInfo, Tenant: "acme",
						ConversationID: fmt.Sprintf("conv-\u202e%d-%d", g, i), Code: "OK", LatencyMS: 1.25}
					if err := h.Handle(context.Background(), turn.Record()); err != nil {
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

func ExampleTurn_Record() {
	var buf bytes.Buffer
	h := logline.NewJSON(&buf, nil)
	turn := logline.Turn{Time: time.Date(2026, 8, 23, 10, 0, 0, 0, time.UTC), Level: slog.LevelInfo,
		Tenant: "acme", Tool: "bank.open_dispute", Action: "ASK", Code: "OK", LatencyMS: 1.25}
	_ = h.Handle(context.Background(), turn.Record())
	fmt.Print(buf.String())
	// Output:
	// {"time":"2026-08-23T10:00:00Z","level":"INFO","msg":"turn","request_id":"","tenant":"acme","tool":"bank.open_dispute","conversation_id":"","turn_id":"","action":"ASK","code":"OK","latency_ms":1.25}
}
