package integration

import (
	"bytes"
	"context"
	"net"
	"net/http"
	"strings"
	"sync"
	"testing"
	"time"

	"golang.org/x/net/http2"
	"golang.org/x/net/http2/hpack"
	"google.golang.org/grpc"
	"google.golang.org/grpc/codes"
	"google.golang.org/grpc/credentials/insecure"
	"google.golang.org/grpc/metadata"
	"google.golang.org/grpc/status"
	"google.golang.org/protobuf/proto"
	"google.golang.org/protobuf/types/known/structpb"

	slotdv1 "github.com/slotd/slotd/api/proto/slotd/v1"
)

// The edge of a slotd serve process under attack: requests nested ten
// thousand levels deep, and floods of streams that never send a body. The
// process's memory is capped (proc_test.go).

// deepValue is a list (or an object) nested depth levels deep around "x".
func deepValue(depth int, object bool) *structpb.Value {
	v := structpb.NewStringValue("x")
	for i := 0; i < depth; i++ {
		if object {
			v = structpb.NewStructValue(&structpb.Struct{Fields: map[string]*structpb.Value{"k": v}})
		} else {
			v = structpb.NewListValue(&structpb.ListValue{Values: []*structpb.Value{v}})
		}
	}
	return v
}

// deepTurn is a Turn request whose reason is nested depth levels deep, as
// protobuf and as JSON.
func deepTurn(t *testing.T, depth int, object bool) ([]byte, string) {
	t.Helper()
	req := &slotdv1.TurnRequest{ConversationId: "deep", Tool: "bank.open_dispute", TurnId: "deep-1",
		Arguments: &structpb.Struct{Fields: map[string]*structpb.Value{"reason": deepValue(depth, object)}}}
	b, err := proto.Marshal(req)
	if err != nil {
		t.Fatal(err)
	}
	open, closing := "[", "]"
	if object {
		open, closing = `{"k":`, "}"
	}
	js := `{"conversation_id": "deep", "tool": "bank.open_dispute", "turn_id": "deep-1", "arguments": {"reason": ` +
		strings.Repeat(open, depth) + `"x"` + strings.Repeat(closing, depth) + `}}`
	return b, js
}

// cost is what one refused request cost slotd: time as the client saw it,
// and heap allocated in the server.
type cost struct {
	elapsed time.Duration
	alloc   float64
}

// TestDeepNestingIsRefusedCheaply sends Turn requests nested 10 000 and
// 20 000 deep, as lists and as objects, over gRPC and HTTP, with and
// without a key, to a slotd whose memory is capped. Each is refused with
// the right code in well under 100 ms and 10 MB of heap, and twice the
// depth costs at most about twice as much.
func TestDeepNestingIsRefusedCheaply(t *testing.T) {
	t.Parallel()
	p := startProcess(t, "--api-keys", "bank:"+bankKey)
	conn, err := grpc.NewClient(p.addr, grpc.WithTransportCredentials(insecure.NewCredentials()),
		grpc.WithDefaultCallOptions(grpc.MaxCallSendMsgSize(8<<20)))
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { conn.Close() })
	type way struct {
		name string
		send func(wire []byte, js string, key string) (code string)
	}
	grpcWay := func(wire []byte, _ string, key string) string {
		ctx, cancel := context.WithTimeout(context.Background(), 10*time.Second)
		defer cancel()
		if key != "" {
			ctx = metadata.AppendToOutgoingContext(ctx, "authorization", "Bearer "+key)
		}
		err := conn.Invoke(ctx, "/slotd.v1.SlotService/Turn", &wire, &slotdv1.TurnResponse{}, grpc.ForceCodecV2(rawCodec{}))
		return status.Code(err).String()
	}
	httpWay := func(_ []byte, js string, key string) string {
		ctx, cancel := context.WithTimeout(context.Background(), 10*time.Second)
		defer cancel()
		req, _ := http.NewRequestWithContext(ctx, http.MethodPost, "http://"+p.httpAddr+"/v1/turn", strings.NewReader(js))
		if key != "" {
			req.Header.Set("Authorization", "Bearer "+key)
		}
		resp, err := http.DefaultClient.Do(req)
		if err != nil {
			return err.Error()
		}
		resp.Body.Close()
		return resp.Status
	}
	for _, w := range []way{{"gRPC", grpcWay}, {"HTTP", httpWay}} {
		for _, object := range []bool{false, true} {
			for _, key := range []string{"", bankKey} {
				shape, who := "lists", "without a key"
				if object {
					shape = "objects"
				}
				if key != "" {
					who = "with a key"
				}
				want := map[bool]map[string]string{
					false: {"gRPC": "Unauthenticated", "HTTP": "401 Unauthorized"},
					true:  {"gRPC": "InvalidArgument", "HTTP": "400 Bad Request"},
				}[key != ""][w.name]
				measure := func(depth int) cost {
					wire, js := deepTurn(t, depth, object)
					best := cost{elapsed: time.Hour}
					for i := 0; i < 3; i++ {
						before := p.metrics(t, "go_memstats_alloc_bytes_total")["go_memstats_alloc_bytes_total"]
						start := time.Now()
						code := w.send(wire, js, key)
						elapsed := time.Since(start)
						after := p.metrics(t, "go_memstats_alloc_bytes_total")["go_memstats_alloc_bytes_total"]
						if code != want {
							t.Fatalf("%s, %s nested %d deep, %s: %s, want %s", w.name, shape, depth, who, code, want)
						}
						best.elapsed = min(best.elapsed, elapsed)
						if i == 0 || after-before < best.alloc {
							best.alloc = after - before
						}
					}
					return best
				}
				one, two := measure(10000), measure(20000)
				t.Logf("%s, %s, %s: 10 000 deep %v and %s; 20 000 deep %v and %s", w.name, shape, who,
					one.elapsed, mib(one.alloc), two.elapsed, mib(two.alloc))
				// The cost is judged by what slotd allocates, which the
				// machine's load does not change; the times are logged.
				for _, c := range []cost{one, two} {
					if c.alloc > 10<<20 {
						t.Errorf("%s, %s, %s: refused with %s allocated; want under 10 MiB",
							w.name, shape, who, mib(c.alloc))
					}
				}
				// Twice the depth: at most twice the cost, give or take what
				// a scrape of /metrics and slotd's own background work (its
				// janitor, keepalives, the runtime) allocate meanwhile, which
				// is up to about a MiB; the quadratic copy this guards
				// against costs hundreds of MiB at these depths.
				if two.alloc > 2*one.alloc+2<<20 {
					t.Errorf("%s, %s, %s: 20 000 deep cost %v and %s, 10 000 deep %v and %s: more than double",
						w.name, shape, who, two.elapsed, mib(two.alloc), one.elapsed, mib(one.alloc))
				}
			}
		}
	}
	if !p.alive() {
		t.Fatal("slotd died")
	}
}

// flooder opens HTTP/2 connections to a gRPC server and starts streams on
// them that send their headers and never a body, as an attacker does.
type flooder struct {
	mu    sync.Mutex
	conns []net.Conn
}

func (f *flooder) open(t *testing.T, addr, key string, streams int) {
	t.Helper()
	nc, err := net.Dial("tcp", addr)
	if err != nil {
		t.Fatal(err)
	}
	f.mu.Lock()
	f.conns = append(f.conns, nc)
	f.mu.Unlock()
	if _, err := nc.Write([]byte(http2.ClientPreface)); err != nil {
		t.Fatal(err)
	}
	var wmu sync.Mutex
	fr := http2.NewFramer(nc, nc)
	if err := fr.WriteSettings(); err != nil {
		t.Fatal(err)
	}
	go func() {
		// Answer the server's settings; read and drop everything else.
		for {
			frame, err := fr.ReadFrame()
			if err != nil {
				return
			}
			if s, ok := frame.(*http2.SettingsFrame); ok && !s.IsAck() {
				wmu.Lock()
				_ = fr.WriteSettingsAck()
				wmu.Unlock()
			}
		}
	}()
	var block bytes.Buffer
	enc := hpack.NewEncoder(&block)
	for i := 0; i < streams; i++ {
		block.Reset()
		for _, h := range [][2]string{
			{":method", "POST"}, {":scheme", "http"}, {":path", "/slotd.v1.SlotService/Turn"}, {":authority", addr},
			{"content-type", "application/grpc"}, {"te", "trailers"}, {"authorization", "Bearer " + key},
		} {
			_ = enc.WriteField(hpack.HeaderField{Name: h[0], Value: h[1]})
		}
		wmu.Lock()
		err := fr.WriteHeaders(http2.HeadersFrameParam{StreamID: uint32(2*i + 1), BlockFragment: block.Bytes(), EndHeaders: true})
		wmu.Unlock()
		if err != nil {
			t.Fatalf("stream %d: %v", i, err)
		}
	}
}

func (f *flooder) close() {
	f.mu.Lock()
	defer f.mu.Unlock()
	for _, c := range f.conns {
		c.Close()
	}
	f.conns = nil
}

// Bounds of a slotd flooded with 20 connections of 1 000 body-less streams
// each, with a valid key: 256 streams a connection are let in (the others
// refused by HTTP/2), each holding some kilobytes until its deadline.
const (
	floodConns       = 20
	floodStreams     = 1000
	floodGoroutines  = floodConns*256 + 300
	floodMemory      = 128 << 20
	floodTurnLatency = time.Second
)

// TestBodylessStreamFloodIsBounded floods a memory-capped slotd with
// streams that never send a body and checks that its goroutines and memory
// stay within the stated bounds, that a normal turn is still answered
// within a second, and that the flood's resources go when it does.
func TestBodylessStreamFloodIsBounded(t *testing.T) {
	t.Parallel()
	p := startProcess(t, "--api-keys", "bank:"+bankKey)
	names := []string{"go_goroutines", "process_resident_memory_bytes"}
	before := p.metrics(t, names...)

	var f flooder
	t.Cleanup(f.close)
	var wg sync.WaitGroup
	for i := 0; i < floodConns; i++ {
		wg.Add(1)
		go func() { defer wg.Done(); f.open(t, p.addr, bankKey, floodStreams) }()
	}
	wg.Wait()
	time.Sleep(time.Second) // let slotd take in every frame sent

	conn, err := grpc.NewClient(p.addr, grpc.WithTransportCredentials(insecure.NewCredentials()))
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { conn.Close() })
	ctx, cancel := context.WithTimeout(metadata.AppendToOutgoingContext(context.Background(), "authorization", "Bearer "+bankKey), floodTurnLatency)
	defer cancel()
	start := time.Now()
	resp, err := slotdv1.NewSlotServiceClient(conn).Turn(ctx, &slotdv1.TurnRequest{ConversationId: "during-the-flood",
		Tool: "bank.open_dispute", TurnId: "1", Arguments: structOf(t, `{"card_last4": "•• 4417"}`)})
	if err != nil || resp.Action != slotdv1.Action_ACTION_ASK {
		t.Fatalf("a turn during the flood: %v, %v; want ACTION_ASK within %v", resp.GetAction(), err, floodTurnLatency)
	}
	latency := time.Since(start)

	during := p.metrics(t, names...)
	grew := during["go_goroutines"] - before["go_goroutines"]
	rss := during["process_resident_memory_bytes"] - before["process_resident_memory_bytes"]
	t.Logf("%d connections × %d body-less streams: goroutines %.0f → %.0f, RSS %s → %s; a turn took %v",
		floodConns, floodStreams, before["go_goroutines"], during["go_goroutines"],
		mib(before["process_resident_memory_bytes"]), mib(during["process_resident_memory_bytes"]), latency)
	if grew > floodGoroutines || rss > floodMemory {
		t.Errorf("the flood added %.0f goroutines and %s of RSS; want at most %d and %s", grew, mib(rss), floodGoroutines, mib(floodMemory))
	}
	if grew < floodConns*100 {
		t.Errorf("the flood added only %.0f goroutines: the streams did not reach slotd, the test tests nothing", grew)
	}

	f.close()
	deadline := time.Now().Add(10 * time.Second)
	for {
		after := p.metrics(t, "go_goroutines")["go_goroutines"]
		if after < before["go_goroutines"]+50 {
			break
		}
		if time.Now().After(deadline) {
			t.Fatalf("10 s after the flood: %.0f goroutines, %.0f before it", after, before["go_goroutines"])
		}
		time.Sleep(200 * time.Millisecond)
	}
	if !p.alive() {
		t.Fatal("slotd died")
	}
}

// A refused stream costs the flood nothing but a refusal: without a key,
// every stream is answered UNAUTHENTICATED at once, before its body.
func TestBodylessStreamsWithoutAKeyAreRefusedAtOnce(t *testing.T) {
	t.Parallel()
	p := startProcess(t, "--api-keys", "bank:"+bankKey)
	before := p.metrics(t, "go_goroutines")["go_goroutines"]
	var f flooder
	t.Cleanup(f.close)
	for i := 0; i < 5; i++ {
		f.open(t, p.addr, "not-a-key-of-this-server", floodStreams)
	}
	time.Sleep(500 * time.Millisecond)
	if grew := p.metrics(t, "go_goroutines")["go_goroutines"] - before; grew > 50 {
		t.Errorf("unauthenticated body-less streams hold %.0f goroutines; want them refused at once", grew)
	}
	if st := status.Convert(deniedTurn(t, p.addr)); st.Code() != codes.Unauthenticated {
		t.Errorf("a turn without a key: %v, want UNAUTHENTICATED", st)
	}
}

func deniedTurn(t *testing.T, addr string) error {
	t.Helper()
	conn, err := grpc.NewClient(addr, grpc.WithTransportCredentials(insecure.NewCredentials()))
	if err != nil {
		t.Fatal(err)
	}
	defer conn.Close()
	_, err = slotdv1.NewSlotServiceClient(conn).Turn(context.Background(), &slotdv1.TurnRequest{ConversationId: "c", Tool: "bank.open_dispute", TurnId: "1"})
	return err
}
