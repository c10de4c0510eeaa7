package integration

import (
	"context"
	"fmt"
	"io"
	"log/slog"
	"net"
	"net/http"
	"regexp"
	"strings"
	"testing"
	"time"

	"google.golang.org/grpc/codes"
	"google.golang.org/grpc/metadata"
	"google.golang.org/grpc/status"
	"google.golang.org/protobuf/types/known/durationpb"
	"google.golang.org/protobuf/types/known/structpb"
	"google.golang.org/protobuf/types/known/timestamppb"

	slotdv1 "github.com/slotd/slotd/api/proto/slotd/v1"
	"github.com/slotd/slotd/internal/app/server"
	"github.com/slotd/slotd/internal/testkit/servertest"
)

// Every RPC validates its input before any lookup, on gRPC and HTTP alike:
// bad input gets a problem, never a 500, a leaked SQL error or a socket
// address.

// leaky finds what a problem or a log must never show: SQL errors, Go error
// text and socket addresses.
var leaky = regexp.MustCompile(`SQLSTATE|pgx|pgconn|goroutine|\.go:\d|127\.0\.0\.1:\d+|\[::1\]:\d+|i/o timeout|read tcp|broken pipe`)

func TestEveryRPCValidatesBeforeLookingUp(t *testing.T) {
	t.Parallel()
	inst := startServer(t, dbtestURL(t), contractsDir(t), withHTTP, withKeys, func(c *server.Config) {
		c.HTTPReadTimeout = 500 * time.Millisecond
	})
	base := "http://" + inst.srv.HTTPAddr()
	bank := as(bankKey)
	ready := playToReady(t, inst, "valid-ready")

	nul, err := structpb.NewValue(map[string]any{"status": "accepted", "case_id": "case\x00-1"})
	if err != nil {
		t.Fatal(err)
	}
	deep := structpb.NewStringValue("x")
	for i := 0; i < 20; i++ {
		deep = structpb.NewListValue(&structpb.ListValue{Values: []*structpb.Value{deep}})
	}
	grpcCases := []struct {
		name  string
		call  func() error
		field string
	}{
		{"a NUL in a backend result", func() error {
			_, err := inst.client.CompleteSession(bank, &slotdv1.CompleteSessionRequest{ConversationId: ready.Session.ConversationId,
				IdempotencyKey: ready.IdempotencyKey, Outcome: &slotdv1.CompleteSessionRequest_Result{Result: nul}})
			return err
		}, "/result/case_id"},
		{"a backend result nested 20 deep", func() error {
			_, err := inst.client.CompleteSession(bank, &slotdv1.CompleteSessionRequest{ConversationId: ready.Session.ConversationId,
				IdempotencyKey: ready.IdempotencyKey, Outcome: &slotdv1.CompleteSessionRequest_Result{Result: deep}})
			return err
		}, ""},
		{"a session id as a URN", func() error {
			_, err := inst.client.GetSession(bank, &slotdv1.GetSessionRequest{SessionId: "urn:uuid:" + ready.Session.Id})
			return err
		}, "/session_id"},
		{"a session id in braces", func() error {
			_, err := inst.client.ResetSession(bank, &slotdv1.ResetSessionRequest{SessionId: "{" + ready.Session.Id + "}"})
			return err
		}, "/session_id"},
		{"a session id without dashes", func() error {
			_, err := inst.client.CompleteSession(bank, &slotdv1.CompleteSessionRequest{SessionId: strings.ReplaceAll(ready.Session.Id, "-", ""),
				Outcome: &slotdv1.CompleteSessionRequest_Failure{Failure: &slotdv1.BackendFailure{Kind: slotdv1.FailureKind_FAILURE_KIND_TIMEOUT}}})
			return err
		}, "/session_id"},
		{"a NUL in an admin filter", func() error {
			_, err := inst.admin.ListSessions(as(adminKey), &slotdv1.ListSessionsRequest{Tenant: "bank\x00"})
			return err
		}, "/tenant"},
		{"a 300-byte tool filter", func() error {
			_, err := inst.admin.ResetStaleSessions(as(adminKey), &slotdv1.ResetStaleSessionsRequest{Tool: strings.Repeat("t", 300),
				IdleLongerThan: durationpb.New(time.Hour)})
			return err
		}, "/tool"},
		{"a history lookup by a URN", func() error {
			_, err := inst.admin.GetSessionHistory(as(adminKey), &slotdv1.GetSessionHistoryRequest{SessionId: "urn:uuid:" + ready.Session.Id, Tenant: "bank"})
			return err
		}, "/session_id"},
		{"a page token that is no session id", func() error {
			_, err := inst.admin.ListSessions(as(adminKey), &slotdv1.ListSessionsRequest{PageToken: "' OR 1=1 --"})
			return err
		}, "/page_token"},
	}
	for _, tc := range grpcCases {
		err := tc.call()
		st := status.Convert(err)
		if st.Code() != codes.InvalidArgument {
			t.Errorf("%s: %v, want INVALID_ARGUMENT", tc.name, err)
			continue
		}
		p := problemOf(t, st)
		if tc.field != "" && (len(p.Errors) == 0 || p.Errors[0].Pointer != tc.field) {
			t.Errorf("%s: problem %v, want it to point at %s", tc.name, p, tc.field)
		}
		if leaky.MatchString(p.Detail + p.Title + st.Message()) {
			t.Errorf("%s: the problem leaks: %v", tc.name, p)
		}
	}

	// The same over HTTP: 400 with a problem, never a 500.
	for _, tc := range []struct {
		name, method, path, body string
	}{
		{"a NUL in a backend result", http.MethodPost, "/v1/session/complete", fmt.Sprintf(
			`{"conversation_id": %q, "idempotency_key": %q, "result": {"status": "accepted", "case_id": "a\u0000b"}}`,
			ready.Session.ConversationId, ready.IdempotencyKey)},
		{"a session id as a URN", http.MethodGet, "/v1/session?session_id=urn:uuid:" + ready.Session.Id, ""},
		{"a NUL in a turn id", http.MethodPost, "/v1/turn", `{"conversation_id": "c", "tool": "bank.open_dispute", "turn_id": "a\u0000"}`},
	} {
		r := httpCall(t, tc.method, base+tc.path, bankKey, tc.body)
		if r.status != http.StatusBadRequest || !strings.HasPrefix(r.header.Get("Content-Type"), "application/problem+json") {
			t.Errorf("HTTP, %s: %d %s, want 400 problem+json", tc.name, r.status, r.body)
		}
		if leaky.Match(r.body) {
			t.Errorf("HTTP, %s: the problem leaks: %s", tc.name, r.body)
		}
	}
	for _, chunked := range []bool{false, true} {
		big := `{"conversation_id": "c", "tool": "bank.open_dispute", "turn_id": "big", "arguments": {"x": "` + strings.Repeat("ж", 1600000) + `"}}`
		req, _ := http.NewRequest(http.MethodPost, base+"/v1/turn", strings.NewReader(big))
		if chunked {
			req.ContentLength = -1 // unknown: sent chunked
			req.Body = io.NopCloser(strings.NewReader(big))
		}
		req.Header.Set("Authorization", "Bearer "+bankKey)
		resp, err := http.DefaultClient.Do(req)
		if err != nil {
			t.Fatal(err)
		}
		body, _ := io.ReadAll(resp.Body)
		resp.Body.Close()
		if resp.StatusCode != http.StatusRequestEntityTooLarge {
			t.Errorf("a 3 MiB body (chunked %v): %d %s, want 413", chunked, resp.StatusCode, body)
		}
	}

	// A body that stops coming: 400 after the read timeout, naming no
	// socket.
	nc, err := net.Dial("tcp", inst.srv.HTTPAddr())
	if err != nil {
		t.Fatal(err)
	}
	defer nc.Close()
	fmt.Fprintf(nc, "POST /v1/turn HTTP/1.1\r\nHost: x\r\nAuthorization: Bearer %s\r\nContent-Type: application/json\r\nContent-Length: 500\r\n\r\n{\"conversation_id\": ", bankKey)
	_ = nc.SetReadDeadline(time.Now().Add(10 * time.Second))
	reply, _ := io.ReadAll(nc)
	if !strings.HasPrefix(string(reply), "HTTP/1.1 400") || leaky.Match(reply) {
		t.Errorf("a slow body: %q; want a 400 that names no socket", reply)
	}

	// Headers that stop coming: the connection is closed after the header
	// timeout.
	slow, err := net.Dial("tcp", inst.srv.HTTPAddr())
	if err != nil {
		t.Fatal(err)
	}
	defer slow.Close()
	fmt.Fprintf(slow, "GET /v1/contracts HTTP/1.1\r\nHost: x\r\nX-Slow: ")
	_ = slow.SetReadDeadline(time.Now().Add(10 * time.Second))
	start := time.Now()
	_, _ = io.ReadAll(slow)
	if d := time.Since(start); d > 5*time.Second {
		t.Errorf("a request whose headers never end held its connection %v; want it closed after the header timeout", d)
	}

	// A body that is not the method's JSON: the decoder's words, with no Go
	// error text.
	r := httpCall(t, http.MethodPost, base+"/v1/turn", bankKey, `{"conversation_id": "c", "tool": "bank.open_dispute", "turn_id": "u", "approved": true}`)
	if r.status != http.StatusBadRequest || !strings.Contains(string(r.body), `unknown field \"approved\"`) || strings.Contains(string(r.body), "proto:") {
		t.Errorf("an unknown field: %d %s; want 400 naming the field in slotd's words", r.status, r.body)
	}

	// Two authorization headers: refused, over gRPC and HTTP, even when
	// both are good.
	two := metadata.AppendToOutgoingContext(context.Background(), "authorization", "Bearer "+bankKey, "authorization", "Bearer "+bankKey)
	if _, err := inst.client.ListContracts(two, &slotdv1.ListContractsRequest{}); status.Code(err) != codes.Unauthenticated {
		t.Errorf("two authorization headers over gRPC: %v, want UNAUTHENTICATED", err)
	}
	req, _ := http.NewRequest(http.MethodGet, base+"/v1/contracts", nil)
	req.Header.Add("Authorization", "Bearer "+bankKey)
	req.Header.Add("Authorization", "Bearer "+adminKey)
	resp, err := http.DefaultClient.Do(req)
	if err != nil {
		t.Fatal(err)
	}
	resp.Body.Close()
	if resp.StatusCode != http.StatusUnauthorized {
		t.Errorf("two authorization headers over HTTP: %d, want 401", resp.StatusCode)
	}
	// Both refusals are counted.
	for _, listener := range []string{"grpc", "http"} {
		if n := refusedCalls(t, inst, listener, "unauthenticated"); n < 1 {
			t.Errorf("slotd_refused_calls_total{listener=%q, reason=unauthenticated} = %v, want at least 1", listener, n)
		}
	}
}

// refusedCalls reads slotd_refused_calls_total of a server.
func refusedCalls(t *testing.T, inst *instance, listener, reason string) float64 {
	t.Helper()
	fams, err := inst.srv.Metrics().Registry().Gather()
	if err != nil {
		t.Fatal(err)
	}
	for _, f := range fams {
		if f.GetName() != "slotd_refused_calls_total" {
			continue
		}
		for _, m := range f.Metric {
			labels := map[string]string{}
			for _, l := range m.Label {
				labels[l.GetName()] = l.GetValue()
			}
			if labels["listener"] == listener && labels["reason"] == reason {
				return m.Counter.GetValue()
			}
		}
	}
	t.Fatal("no slotd_refused_calls_total series")
	return 0
}

// playToReady plays the dispute example with approval to READY.
func playToReady(t *testing.T, inst *instance, conv string) *slotdv1.TurnResponse {
	t.Helper()
	var resp *slotdv1.TurnResponse
	for i, args := range []string{`{"card_last4": "•• 4417", "operation_date": "вчера", "amount": "1 200,50 ₽", "reason": "fraud"}`, ""} {
		req := &slotdv1.TurnRequest{ConversationId: conv, Tool: "bank.open_dispute", TurnId: fmt.Sprintf("%s/%d", conv, i),
			Locale: "ru", Now: nowPB(), Arguments: structOf(t, args)}
		if args == "" {
			req.Confirmation = &slotdv1.Confirmation{Accept: true}
		}
		var err error
		if resp, err = inst.client.Turn(as(bankKey), req); err != nil {
			t.Fatal(err)
		}
	}
	if resp.Action != slotdv1.Action_ACTION_READY {
		t.Fatalf("%s: %v, want READY", conv, resp.Action)
	}
	return resp
}

// A caller's clock is taken within five minutes of the server's, unless the
// server trusts client clocks.
func TestClientClockIsBounded(t *testing.T) {
	t.Parallel()
	inst := startServer(t, "", contractsDir(t), withHTTP, func(c *server.Config) { c.Session.TrustClientClock = false })
	for _, tc := range []struct {
		name string
		now  time.Time
		ok   bool
	}{
		{"the end of time", time.Date(9999, 12, 31, 23, 59, 59, 0, time.UTC), false},
		{"an hour ago", time.Now().Add(-time.Hour), false},
		{"six minutes ahead", time.Now().Add(6 * time.Minute), false},
		{"a minute ago", time.Now().Add(-time.Minute), true},
		{"now", time.Now(), true},
	} {
		_, err := inst.client.Turn(context.Background(), &slotdv1.TurnRequest{ConversationId: "clock-" + tc.name, Tool: "bank.open_dispute",
			TurnId: "1", Now: timestamppb.New(tc.now), Arguments: structOf(t, `{"card_last4": "4417"}`)})
		if tc.ok != (err == nil) {
			t.Errorf("gRPC, %s: %v, want ok=%v", tc.name, err, tc.ok)
		}
		if err != nil && (status.Code(err) != codes.InvalidArgument || problemOf(t, status.Convert(err)).Errors[0].Pointer != "/now") {
			t.Errorf("gRPC, %s: %v, want INVALID_ARGUMENT naming now", tc.name, err)
		}
		body := fmt.Sprintf(`{"conversation_id": "clock-http-%s", "tool": "bank.open_dispute", "turn_id": "1", "now": %q}`,
			strings.ReplaceAll(tc.name, " ", "-"), tc.now.UTC().Format(time.RFC3339))
		r := httpCall(t, http.MethodPost, "http://"+inst.srv.HTTPAddr()+"/v1/turn", "", body)
		if tc.ok != (r.status == http.StatusOK) || !tc.ok && !strings.Contains(string(r.body), `"pointer":"/now"`) {
			t.Errorf("HTTP, %s: %d %s, want ok=%v (400 naming now)", tc.name, r.status, r.body, tc.ok)
		}
	}
}

// An id of a megabyte is refused, and what reaches the log of it is
// bounded.
func TestHugeIDsAreBoundedInTheLog(t *testing.T) {
	t.Parallel()
	logs := &servertest.LogBuffer{}
	cfg := server.Config{Listen: "127.0.0.1:0", Contracts: contractsDir(t), Store: "memory", APIKeys: "bank:" + bankKey}
	srv, err := server.New(cfg, slog.New(slog.NewJSONHandler(logs, nil)))
	if err != nil {
		t.Fatal(err)
	}
	inst := runInstance(t, srv)
	huge := strings.Repeat("c", 900<<10)
	_, err = inst.client.Turn(as(bankKey), &slotdv1.TurnRequest{ConversationId: huge, Tool: "bank.open_dispute", TurnId: "1"})
	if status.Code(err) != codes.InvalidArgument {
		t.Fatalf("a conversation id of 900 KiB: %v, want INVALID_ARGUMENT", err)
	}
	// Without a key it never gets as far as the log.
	_, _ = inst.client.Turn(context.Background(), &slotdv1.TurnRequest{ConversationId: huge + "x", Tool: "bank.open_dispute", TurnId: "1"})
	out := logs.String()
	if len(out) > 8<<10 || !strings.Contains(out, strings.Repeat("c", 200)) {
		t.Errorf("the log holds %d bytes after two turns with a 900 KiB id; want the id cut short:\n%s", len(out), cut(out, 2000))
	}
}

// runInstance runs an already built server until the test ends.
func runInstance(t *testing.T, srv *server.Server) *instance {
	t.Helper()
	servertest.Run(t, srv.Run)
	inst := &instance{srv: srv}
	inst.conn = servertest.Dial(t, srv.Addr())
	inst.client = slotdv1.NewSlotServiceClient(inst.conn)
	inst.admin = slotdv1.NewAdminServiceClient(inst.conn)
	servertest.WaitServing(t, inst.conn)
	return inst
}
