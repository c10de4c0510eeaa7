package server

import (
	"bytes"
	"context"
	"io"
	"log/slog"
	"math"
	"math/rand/v2"
	"strings"
	"testing"
	"time"

	"google.golang.org/grpc"
	"google.golang.org/grpc/codes"
	"google.golang.org/grpc/metadata"

	"github.com/slotd/slotd/api"
	"github.com/slotd/slotd/clarify"
	"github.com/slotd/slotd/internal/dirtytest"
	"github.com/slotd/slotd/internal/logline"
	"github.com/slotd/slotd/internal/metrics"
	"github.com/slotd/slotd/merge"
	"github.com/slotd/slotd/session"
)

// testTools are the tools of the tests' observers; a turn of another tool
// is logged as "other".
var testTools = []string{"bank.open_dispute", "travel.search_flights", "інструмент \"ґ\"", "<t>&\u2028", "🙂"}

// testObserver logs through h, at now.
func testObserver(t testing.TB, h slog.Handler, now func() time.Time) *observer {
	t.Helper()
	o, err := newObserver(Config{}, slog.New(h), testTools, nil)
	if err != nil {
		t.Fatal(err)
	}
	o.now = now
	return o
}

// withRequestID is a call's context with the request id slotd takes from
// id ("" for one it makes).
func withRequestID(t testing.TB, id string) context.Context {
	t.Helper()
	ctx := context.Background()
	if id != "" {
		ctx = metadata.NewIncomingContext(ctx, metadata.Pairs(api.RequestIDHeader, id))
	}
	var call context.Context
	_, _ = api.NewGuard(api.Limits{}, slog.New(slog.DiscardHandler)).Recover()(ctx, nil, &grpc.UnaryServerInfo{},
		func(ctx context.Context, _ any) (any, error) { call = ctx; return nil, nil })
	if call == nil {
		t.Fatalf("request id %q refused", id)
	}
	return call
}

func dirty(r *rand.Rand) string { return dirtytest.String(r, 300) }

// requestID is a request id slotd takes from a caller: printable ASCII, or
// "" for one slotd makes.
func requestID(r *rand.Rand) string {
	if r.IntN(4) == 0 {
		return ""
	}
	b := make([]byte, 1+r.IntN(128))
	for i := range b {
		b[i] = byte(0x21 + r.IntN(0x7e-0x21+1))
	}
	return string(b)
}

func randomReport(r *rand.Rand) (api.TurnReport, metrics.Turn) {
	tool := dirty(r)
	if r.IntN(2) == 0 {
		tool = testTools[r.IntN(len(testTools))]
	}
	rep := api.TurnReport{Request: session.TurnRequest{Tenant: dirty(r), ConversationID: dirty(r), Tool: tool, TurnID: dirty(r)},
		Code: codes.Code(r.IntN(20))}
	if r.IntN(2) == 0 {
		rep.Code = codes.OK
	}
	durations := []time.Duration{0, 1, time.Microsecond, 1234567, time.Hour, math.MaxInt64, -time.Millisecond}
	t := metrics.Turn{Tool: tool, Duration: durations[r.IntN(len(durations))]}
	if r.IntN(2) == 0 {
		t.Duration = time.Duration(r.Int64N(int64(1 << r.IntN(50))))
	}
	if rep.Code != codes.OK || r.IntN(5) == 0 {
		return rep, t
	}
	res := dirtytest.Result(r, 300)
	rep.Result = res
	t.Action = dirty(r)
	return rep, t
}

// The turn line logline writes is the one slog's JSON handler writes of
// the turn's record, byte for byte, but for the format characters logline
// escapes in every line.
func TestTurnLineAsSlogWritesIt(t *testing.T) {
	t.Parallel()
	var got, want bytes.Buffer
	var now time.Time
	clock := func() time.Time { return now }
	type pair struct{ logline, slog *observer }
	var pairs []pair
	var handled int
	for _, opts := range []*slog.HandlerOptions{nil, {Level: slog.LevelDebug}} {
		pairs = append(pairs, pair{testObserver(t, countingHandler{logline.NewJSON(&got, opts), &handled}, clock),
			testObserver(t, slog.NewJSONHandler(&want, opts), clock)})
	}
	r := rand.New(rand.NewPCG(5, 6))
	for i := range 5000 {
		rep, turn := randomReport(r)
		now = time.Unix(1.7e9+r.Int64N(1e9), r.Int64N(1e9))
		if i%3 == 0 {
			now = time.Now()
		}
		ctx := withRequestID(t, requestID(r))
		got.Reset()
		want.Reset()
		p := pairs[i%len(pairs)]
		p.logline.logTurn(ctx, rep, turn)
		p.slog.logTurn(ctx, rep, turn)
		// logline escapes invisible characters at its writer, slog's own
		// lines included; slog's handler alone does not.
		escaped := logline.EscapeInvisible(append([]byte(nil), want.Bytes()...))
		if want.Len() == 0 || !bytes.Equal(got.Bytes(), escaped) {
			t.Fatalf("report %d:\nlogline: %q\nslog:    %q", i, got.String(), escaped)
		}
	}
	if handled != 0 {
		t.Errorf("%d turn lines went through slog's Handle: the fast path was not taken", handled)
	}
}

// countingHandler counts the records handed to its handler, keeping its
// WriteTurn.
type countingHandler struct {
	*logline.Handler
	n *int
}

func (h countingHandler) Handle(ctx context.Context, r slog.Record) error {
	*h.n++
	return h.Handler.Handle(ctx, r)
}

// A logline handler whose lines slog's JSON handler writes otherwise than
// a Turn has them leaves the turn line to it.
func TestTurnLineLeftToSlog(t *testing.T) {
	t.Parallel()
	upper := func(_ []string, a slog.Attr) slog.Attr {
		if a.Key == "tenant" {
			a.Value = slog.StringValue(strings.ToUpper(a.Value.String()))
		}
		return a
	}
	for _, tc := range []struct {
		name   string
		opts   *slog.HandlerOptions
		derive func(slog.Handler) slog.Handler
		want   string
	}{
		{"ReplaceAttr", &slog.HandlerOptions{ReplaceAttr: upper}, nil, `"tenant":"ACME"`},
		{"AddSource", &slog.HandlerOptions{AddSource: true}, nil, `"tenant":"acme"`},
		{"WithAttrs", nil, func(h slog.Handler) slog.Handler { return h.WithAttrs([]slog.Attr{slog.String("service", "slotd")}) },
			`"msg":"turn","service":"slotd","request_id"`},
		{"WithGroup", nil, func(h slog.Handler) slog.Handler { return h.WithGroup("slotd") }, `"msg":"turn","slotd":{"request_id"`},
	} {
		var got, want bytes.Buffer
		var h, plain slog.Handler = logline.NewJSON(&got, tc.opts), slog.NewJSONHandler(&want, tc.opts)
		if tc.derive != nil {
			h, plain = tc.derive(h), tc.derive(plain)
		}
		rep := api.TurnReport{Request: session.TurnRequest{Tenant: "acme", Tool: "bank.open_dispute"}, Code: codes.OK,
			Result: &session.Result{Changes: []session.Change{{Change: merge.Change{Decision: merge.Filled}}}}}
		turn := metrics.Turn{Tool: "bank.open_dispute", Action: "ASK", Duration: 1500 * time.Microsecond}
		now := time.Now()
		ctx := withRequestID(t, "")
		testObserver(t, h, func() time.Time { return now }).logTurn(ctx, rep, turn)
		testObserver(t, plain, func() time.Time { return now }).logTurn(ctx, rep, turn)
		if got.String() != want.String() || !strings.Contains(got.String(), tc.want) {
			t.Errorf("%s:\nlogline: %s\nslog:    %s\nwant it to hold %s", tc.name, got.String(), want.String(), tc.want)
		}
	}
}

// BenchmarkLogTurn is a dispute's ASK turn's log line, as slog's JSON
// handler writes it and as logline does.
func BenchmarkLogTurn(b *testing.B) {
	rep := api.TurnReport{
		Request: session.TurnRequest{Tenant: "acme", ConversationID: "bench-18ec9b9caa6a247c-slotd-12-34",
			Tool: "bank.open_dispute", TurnID: "bench-18ec9b9caa6a247c-slotd-12-34/2"},
		Code: codes.OK,
		Result: &session.Result{Session: session.View{ID: "0f4d6f0a-5a3e-4c63-9d55-3e2b1f7c8a90", Version: 2},
			Changes: []session.Change{{Change: merge.Change{Slot: "card_last4", Decision: merge.Filled}},
				{Change: merge.Change{Slot: "amount", Decision: merge.Rejected}},
				{Change: merge.Change{Slot: "reason", Decision: merge.IgnoredNull}}},
			Question: &clarify.Question{Slot: "amount"}},
	}
	turn := metrics.Turn{Tool: "bank.open_dispute", Action: "ASK", Duration: 2345 * time.Microsecond}
	for _, bc := range []struct {
		name string
		h    slog.Handler
	}{
		{"slog", slog.NewJSONHandler(io.Discard, nil)},
		{"logline", logline.NewJSON(io.Discard, nil)},
	} {
		o := testObserver(b, bc.h, time.Now)
		ctx := withRequestID(b, "")
		b.Run(bc.name, func(b *testing.B) {
			b.ReportAllocs()
			for b.Loop() {
				o.logTurn(ctx, rep, turn)
			}
		})
		b.Run(bc.name+"/parallel", func(b *testing.B) {
			b.ReportAllocs()
			b.RunParallel(func(pb *testing.PB) {
				for pb.Next() {
					o.logTurn(ctx, rep, turn)
				}
			})
		})
	}
}
