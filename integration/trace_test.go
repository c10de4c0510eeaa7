package integration

import (
	"bytes"
	"compress/gzip"
	"context"
	"crypto/rand"
	"encoding/hex"
	"encoding/json"
	"fmt"
	"io"
	"net"
	"net/http"
	"os"
	"strings"
	"sync"
	"testing"
	"time"

	collectortracepb "go.opentelemetry.io/proto/otlp/collector/trace/v1"
	commonpb "go.opentelemetry.io/proto/otlp/common/v1"
	tracepb "go.opentelemetry.io/proto/otlp/trace/v1"
	"google.golang.org/grpc"
	"google.golang.org/grpc/credentials/insecure"
	"google.golang.org/grpc/metadata"
	"google.golang.org/protobuf/proto"

	slotdv1 "github.com/slotd/slotd/api/proto/slotd/v1"
	"github.com/slotd/slotd/internal/app/mcp"
)

// otlpReceiver is an OTLP trace receiver, over HTTP (protobuf) and gRPC,
// that keeps every span it is sent.
type otlpReceiver struct {
	collectortracepb.UnimplementedTraceServiceServer
	mu    sync.Mutex
	spans []*tracepb.Span
	// scopes are the spans' instrumentation scopes, by span id.
	scopes map[string]string
}

func (r *otlpReceiver) keep(req *collectortracepb.ExportTraceServiceRequest) {
	r.mu.Lock()
	defer r.mu.Unlock()
	for _, rs := range req.GetResourceSpans() {
		for _, ss := range rs.GetScopeSpans() {
			for _, sp := range ss.GetSpans() {
				r.spans = append(r.spans, sp)
				r.scopes[hex.EncodeToString(sp.GetSpanId())] = ss.GetScope().GetName()
			}
		}
	}
}

// Export implements the gRPC TraceService.
func (r *otlpReceiver) Export(_ context.Context, req *collectortracepb.ExportTraceServiceRequest) (*collectortracepb.ExportTraceServiceResponse, error) {
	r.keep(req)
	return &collectortracepb.ExportTraceServiceResponse{}, nil
}

// ServeHTTP takes POST /v1/traces as OTLP/HTTP sends it.
func (r *otlpReceiver) ServeHTTP(w http.ResponseWriter, req *http.Request) {
	if req.Method != http.MethodPost || req.URL.Path != "/v1/traces" || req.Header.Get("Content-Type") != "application/x-protobuf" {
		http.Error(w, "not an OTLP/HTTP protobuf export", http.StatusBadRequest)
		return
	}
	var body io.Reader = req.Body
	if req.Header.Get("Content-Encoding") == "gzip" {
		gz, err := gzip.NewReader(req.Body)
		if err != nil {
			http.Error(w, err.Error(), http.StatusBadRequest)
			return
		}
		body = gz
	}
	b, err := io.ReadAll(body)
	if err != nil {
		http.Error(w, err.Error(), http.StatusBadRequest)
		return
	}
	var in collectortracepb.ExportTraceServiceRequest
	if err := proto.Unmarshal(b, &in); err != nil {
		http.Error(w, err.Error(), http.StatusBadRequest)
		return
	}
	r.keep(&in)
	out, _ := proto.Marshal(&collectortracepb.ExportTraceServiceResponse{})
	w.Header().Set("Content-Type", "application/x-protobuf")
	_, _ = w.Write(out)
}

// startReceiver serves an OTLP receiver on a free loopback port, over HTTP
// or gRPC, and returns it with its endpoint.
func startReceiver(t *testing.T, protocol string) (*otlpReceiver, string) {
	t.Helper()
	r := &otlpReceiver{scopes: map[string]string{}}
	lis, err := net.Listen("tcp", "127.0.0.1:0")
	if err != nil {
		t.Fatal(err)
	}
	endpoint := "http://" + lis.Addr().String()
	if protocol == "grpc" {
		srv := grpc.NewServer()
		collectortracepb.RegisterTraceServiceServer(srv, r)
		go func() { _ = srv.Serve(lis) }()
		t.Cleanup(srv.Stop)
		return r, endpoint
	}
	srv := &http.Server{Handler: r, ReadHeaderTimeout: 5 * time.Second}
	go func() { _ = srv.Serve(lis) }()
	t.Cleanup(func() { srv.Close() })
	return r, endpoint
}

// orchestratorSpan is a span of the caller's own: its trace and span ids
// and its W3C traceparent.
type orchestratorSpan struct {
	traceID, spanID, traceparent string
}

func newOrchestratorSpan(t *testing.T) orchestratorSpan {
	var tid [16]byte
	var sid [8]byte
	_, _ = rand.Read(tid[:])
	_, _ = rand.Read(sid[:])
	s := orchestratorSpan{traceID: hex.EncodeToString(tid[:]), spanID: hex.EncodeToString(sid[:])}
	s.traceparent = "00-" + s.traceID + "-" + s.spanID + "-01"
	return s
}

// chain is what the receiver holds of one turn's trace: slotd's turn span,
// the child of the orchestrator's span, and the Postgres spans under it.
type chain struct {
	turn     *tracepb.Span
	postgres []*tracepb.Span
	all      []*tracepb.Span
}

// chainOf finds the turn span of the orchestrator's trace and its Postgres
// descendants.
func (r *otlpReceiver) chainOf(o orchestratorSpan) chain {
	r.mu.Lock()
	defer r.mu.Unlock()
	var c chain
	parents := map[string]string{}
	for _, sp := range r.spans {
		if hex.EncodeToString(sp.GetTraceId()) != o.traceID {
			continue
		}
		c.all = append(c.all, sp)
		parents[hex.EncodeToString(sp.GetSpanId())] = hex.EncodeToString(sp.GetParentSpanId())
		if hex.EncodeToString(sp.GetParentSpanId()) == o.spanID && sp.GetName() == "slotd.v1.SlotService/Turn" {
			c.turn = sp
		}
	}
	if c.turn == nil {
		return c
	}
	turnID := hex.EncodeToString(c.turn.GetSpanId())
	for _, sp := range c.all {
		id := hex.EncodeToString(sp.GetSpanId())
		if !strings.Contains(r.scopes[id], "otelpgx") {
			continue
		}
		// Up the chain of parents to the turn's span.
		for p := parents[id]; p != ""; p = parents[p] {
			if p == turnID {
				c.postgres = append(c.postgres, sp)
				break
			}
		}
	}
	return c
}

// TestTraceOneTurnPerTransport runs slotd with the OTEL_* environment
// pointing at a receiver in the test, once per OTLP protocol, and sends one
// turn over gRPC, one over HTTP and one over MCP, each the child of an
// orchestrator's span: each turn's span must be that span's child, the
// Postgres round trips the turn's, and the turn's log line must carry the
// trace id. Nothing the user said may reach a span.
func TestTraceOneTurnPerTransport(t *testing.T) {
	for _, protocol := range []string{"http/protobuf", "grpc"} {
		t.Run(strings.ReplaceAll(protocol, "/", "-"), func(t *testing.T) {
			rcv, endpoint := startReceiver(t, protocol)
			t.Setenv("OTEL_EXPORTER_OTLP_ENDPOINT", endpoint)
			t.Setenv("OTEL_EXPORTER_OTLP_PROTOCOL", protocol)
			t.Setenv("OTEL_BSP_SCHEDULE_DELAY", "50")
			p := startProcess(t, "--store", "postgres", "--database-url", dbtestURL(t))
			traceTurns(t, p, rcv)
		})
	}
}

func traceTurns(t *testing.T, p *process, rcv *otlpReceiver) {
	const card, amount = "•• 4417", "1 200,50 ₽"
	spans := map[string]orchestratorSpan{"grpc": newOrchestratorSpan(t), "http": newOrchestratorSpan(t), "mcp": newOrchestratorSpan(t)}

	conn, err := grpc.NewClient(p.addr, grpc.WithTransportCredentials(insecure.NewCredentials()))
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { conn.Close() })
	ctx, cancel := context.WithTimeout(metadata.AppendToOutgoingContext(context.Background(), "traceparent", spans["grpc"].traceparent), 10*time.Second)
	defer cancel()
	if _, err := slotdv1.NewSlotServiceClient(conn).Turn(ctx, &slotdv1.TurnRequest{ConversationId: "trace-grpc", Tool: "bank.open_dispute",
		TurnId: "turn-1", Arguments: structOf(t, `{"card_last4": "`+card+`", "amount": "`+amount+`"}`), Now: nowPB()}); err != nil {
		t.Fatalf("turn over gRPC: %v", err)
	}

	// A traceparent that is no trace context (an all-zero trace id, a
	// kilobyte of junk) starts a trace of slotd's own; the turn is answered.
	for i, junk := range []string{"00-00000000000000000000000000000000-00f067aa0ba902b7-01", "00-" + strings.Repeat("junk-", 200)} {
		ctx, cancel := context.WithTimeout(metadata.AppendToOutgoingContext(context.Background(), "traceparent", junk), 10*time.Second)
		_, err := slotdv1.NewSlotServiceClient(conn).Turn(ctx, &slotdv1.TurnRequest{ConversationId: fmt.Sprintf("trace-junk-%d", i),
			Tool: "bank.open_dispute", TurnId: "turn-1", Arguments: structOf(t, `{"reason": "Duplicate"}`), Now: nowPB()})
		cancel()
		if err != nil {
			t.Fatalf("turn with traceparent %q: %v", junk, err)
		}
	}

	post := func(path string, hdr map[string]string, body any) {
		t.Helper()
		b, _ := json.Marshal(body)
		req, _ := http.NewRequest(http.MethodPost, "http://"+p.httpAddr+path, bytes.NewReader(b))
		req.Header.Set("Content-Type", "application/json")
		for k, v := range hdr {
			req.Header.Set(k, v)
		}
		resp, err := http.DefaultClient.Do(req)
		if err != nil {
			t.Fatalf("POST %s: %v", path, err)
		}
		defer resp.Body.Close()
		out, _ := io.ReadAll(resp.Body)
		if resp.StatusCode != http.StatusOK || strings.Contains(string(out), `"isError":true`) {
			t.Fatalf("POST %s = %d\n%s", path, resp.StatusCode, out)
		}
	}
	post("/v1/turn", map[string]string{"Traceparent": spans["http"].traceparent}, map[string]any{
		"conversation_id": "trace-http", "tool": "bank.open_dispute", "turn_id": "turn-1", "now": "2026-08-23T10:00:00Z",
		"arguments": map[string]any{"card_last4": card, "amount": amount}})
	post(mcp.Path, map[string]string{"Accept": "application/json, text/event-stream", "Mcp-Protocol-Version": mcp.StatelessVersion,
		"Mcp-Method": "tools/call", "Mcp-Name": "bank_open_dispute"}, map[string]any{
		"jsonrpc": "2.0", "id": 1, "method": "tools/call", "params": map[string]any{
			"name": "bank_open_dispute", "arguments": map[string]any{"card_last4": card, "amount": amount},
			"_meta": map[string]any{"io.modelcontextprotocol/protocolVersion": mcp.StatelessVersion,
				"io.modelcontextprotocol/clientCapabilities": map[string]any{}, "traceparent": spans["mcp"].traceparent}}})

	deadline := time.Now().Add(10 * time.Second)
	for transport, o := range spans {
		var c chain
		for {
			c = rcv.chainOf(o)
			if c.turn != nil && len(c.postgres) >= 2 || time.Now().After(deadline) {
				break
			}
			time.Sleep(50 * time.Millisecond)
		}
		if c.turn == nil {
			t.Errorf("%s: no slotd turn span with the orchestrator's span %s as parent; spans of the trace: %s", transport, o.spanID, names(c.all))
			continue
		}
		if c.turn.GetKind() != tracepb.Span_SPAN_KIND_SERVER {
			t.Errorf("%s: turn span kind %v, want SERVER", transport, c.turn.GetKind())
		}
		// The store's round trips: the lock-and-load batch and the commit.
		if len(c.postgres) < 2 {
			t.Errorf("%s: %d Postgres spans under the turn span, want the store's round trips; spans of the trace: %s", transport, len(c.postgres), names(c.all))
		}
		attrs := attrMap(c.turn.GetAttributes())
		if attrs["slotd.tool"] != "bank.open_dispute" || attrs["slotd.action"] != "ASK" || attrs["slotd.decisions.FILLED"] != "2" {
			t.Errorf("%s: turn span attributes %v, want tool bank.open_dispute, action ASK, 2 slots FILLED", transport, attrs)
		}
		var planned bool
		for _, ev := range c.turn.GetEvents() {
			if ev.GetName() == "plan" && attrMap(ev.GetAttributes())["slotd.merge.changes"] == "2" {
				planned = true
			}
		}
		if !planned {
			t.Errorf("%s: no plan event with 2 changes on the turn span: %v", transport, c.turn.GetEvents())
		}
		// No value the user said, in any span of the trace.
		for _, sp := range c.all {
			for _, kv := range append(sp.GetAttributes(), eventAttrs(sp)...) {
				v := kv.GetValue().String()
				if strings.Contains(v, "4417") || strings.Contains(v, "1 200") || strings.Contains(v, "1200") {
					t.Errorf("%s: span %q attribute %s holds a slot value: %s", transport, sp.GetName(), kv.GetKey(), v)
				}
			}
		}
	}

	// The turn's log line carries the trace id.
	b, err := os.ReadFile(p.log)
	if err != nil {
		t.Fatal(err)
	}
	for transport, o := range spans {
		if !bytes.Contains(b, []byte(`"trace_id":"`+o.traceID+`"`)) {
			t.Errorf("%s: no log line with trace_id %s", transport, o.traceID)
		}
	}
	for i := range 2 {
		conv := fmt.Sprintf(`"conversation_id":"trace-junk-%d"`, i)
		var traceID string
		for line := range strings.Lines(string(b)) {
			var l struct {
				TraceID string `json:"trace_id"`
			}
			if strings.Contains(line, conv) && json.Unmarshal([]byte(line), &l) == nil {
				traceID = l.TraceID
			}
		}
		if len(traceID) != 32 || traceID == strings.Repeat("0", 32) {
			t.Errorf("junk traceparent %d: the turn's log line has trace_id %q, want a new trace's", i, traceID)
			continue
		}
		rcv.mu.Lock()
		var root bool
		for _, sp := range rcv.spans {
			root = root || hex.EncodeToString(sp.GetTraceId()) == traceID && len(sp.GetParentSpanId()) == 0
		}
		rcv.mu.Unlock()
		if !root {
			t.Errorf("junk traceparent %d: no root span of trace %s", i, traceID)
		}
	}
}

func attrMap(kvs []*commonpb.KeyValue) map[string]string {
	m := map[string]string{}
	for _, kv := range kvs {
		v := kv.GetValue()
		switch {
		case v.GetStringValue() != "":
			m[kv.GetKey()] = v.GetStringValue()
		default:
			m[kv.GetKey()] = fmt.Sprint(v.GetIntValue())
		}
	}
	return m
}

func eventAttrs(sp *tracepb.Span) []*commonpb.KeyValue {
	var out []*commonpb.KeyValue
	for _, ev := range sp.GetEvents() {
		out = append(out, ev.GetAttributes()...)
	}
	return out
}

func names(spans []*tracepb.Span) string {
	var s []string
	for _, sp := range spans {
		s = append(s, fmt.Sprintf("%s(%x←%x)", sp.GetName(), sp.GetSpanId(), sp.GetParentSpanId()))
	}
	return strings.Join(s, ", ")
}
