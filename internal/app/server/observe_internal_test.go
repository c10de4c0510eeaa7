package server

import (
	"bytes"
	"context"
	"encoding/json"
	"log/slog"
	"math"
	"math/rand/v2"
	"strings"
	"testing"
	"time"
	"unicode"
	"unicode/utf8"

	"google.golang.org/grpc"
	"google.golang.org/grpc/codes"
	"google.golang.org/grpc/metadata"

	"github.com/slotd/slotd/internal/api"
	"github.com/slotd/slotd/internal/logline"
	"github.com/slotd/slotd/internal/metrics"
	"github.com/slotd/slotd/internal/redact"
	"github.com/slotd/slotd/internal/session"
	"github.com/slotd/slotd/internal/testkit/dirtytest"
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

// A turn's line, whatever the turn carries, is one line of JSON without a
// format character as it is, each id masked as logged.
func TestTurnLineOfDirtyTurns(t *testing.T) {
	t.Parallel()
	var buf bytes.Buffer
	o := testObserver(t, logline.NewJSON(&buf, nil), time.Now)
	r := rand.New(rand.NewPCG(5, 6))
	for i := range 2000 {
		rep, turn := randomReport(r)
		buf.Reset()
		o.logTurn(withRequestID(t, requestID(r)), rep, turn)
		line := strings.TrimSuffix(buf.String(), "\n")
		var m map[string]any
		if strings.Contains(line, "\n") || json.Unmarshal([]byte(line), &m) != nil {
			t.Fatalf("report %d: not one line of JSON: %q", i, buf.String())
		}
		if strings.ContainsFunc(line, func(r rune) bool { return unicode.Is(unicode.Cf, r) }) {
			t.Fatalf("report %d: a format character as it is: %q", i, line)
		}
		// Invalid UTF-8 reads back as U+FFFD, byte by byte.
		id, _ := m["conversation_id"].(string)
		if want := redact.LoggedID(rep.Request.ConversationID); m["msg"] != "turn" || utf8.ValidString(want) && id != want {
			t.Fatalf("report %d: line %q, want the turn's with its id masked", i, line)
		}
	}
}
