package server_test

import (
	"bytes"
	"context"
	"encoding/binary"
	"io"
	"net"
	"testing"
	"time"

	"golang.org/x/net/http2"
	"golang.org/x/net/http2/hpack"
	healthpb "google.golang.org/grpc/health/grpc_health_v1"
	"google.golang.org/protobuf/proto"

	"github.com/slotd/slotd/internal/app/server"
	"github.com/slotd/slotd/internal/testkit/servertest"
)

// TestFlowControlWindowsAreStatic: slotd announces fixed flow-control
// windows (64 KiB a stream, 1 MiB a connection) and sends no
// bandwidth-probing ping after a call's data, as grpc-go's dynamic windows
// do on every round of data (and may grow a connection's window to 16 MiB).
func TestFlowControlWindowsAreStatic(t *testing.T) {
	t.Parallel()
	in := start(t, "", nil)
	nc, err := net.Dial("tcp", in.srv.Addr())
	if err != nil {
		t.Fatal(err)
	}
	defer nc.Close()
	_ = nc.SetDeadline(time.Now().Add(5 * time.Second))
	if _, err := nc.Write([]byte(http2.ClientPreface)); err != nil {
		t.Fatal(err)
	}
	fr := http2.NewFramer(nc, nc)
	if err := fr.WriteSettings(); err != nil {
		t.Fatal(err)
	}
	var block bytes.Buffer
	enc := hpack.NewEncoder(&block)
	for _, h := range [][2]string{
		{":method", "POST"}, {":scheme", "http"}, {":path", "/grpc.health.v1.Health/Check"}, {":authority", "slotd"},
		{"content-type", "application/grpc"}, {"te", "trailers"},
	} {
		_ = enc.WriteField(hpack.HeaderField{Name: h[0], Value: h[1]})
	}
	if err := fr.WriteHeaders(http2.HeadersFrameParam{StreamID: 1, BlockFragment: block.Bytes(), EndHeaders: true}); err != nil {
		t.Fatal(err)
	}
	msg, err := proto.Marshal(&healthpb.HealthCheckRequest{Service: ""})
	if err != nil {
		t.Fatal(err)
	}
	frame := binary.BigEndian.AppendUint32([]byte{0}, uint32(len(msg)))
	if err := fr.WriteData(1, true, append(frame, msg...)); err != nil {
		t.Fatal(err)
	}
	var streamWindow, connWindow uint32 = 65535, 65535
	for done := false; !done; {
		f, err := fr.ReadFrame()
		if err != nil {
			t.Fatalf("reading slotd's frames: %v", err)
		}
		switch f := f.(type) {
		case *http2.SettingsFrame:
			if v, ok := f.Value(http2.SettingInitialWindowSize); ok && !f.IsAck() {
				streamWindow = v
			}
			if !f.IsAck() {
				_ = fr.WriteSettingsAck()
			}
		case *http2.WindowUpdateFrame:
			if f.StreamID == 0 {
				connWindow += f.Increment
			}
		case *http2.PingFrame:
			if !f.IsAck() {
				t.Errorf("slotd sent a ping (% x) after a call's data: its windows are dynamic", f.Data)
			}
		case *http2.HeadersFrame:
			done = f.StreamEnded()
		}
	}
	if streamWindow != 64<<10 || connWindow < 1<<20 {
		t.Errorf("windows: %d a stream, %d the connection; want 65536 and 1 MiB", streamWindow, connWindow)
	}
}

// TestClientWindowsAreSlotds: a client dialled with server.ClientWindows
// (the bench's) announces slotd's own static windows, 64 KiB a stream and
// 1 MiB a connection, not grpc-go's dynamic 64 KiB − 1 that grows.
func TestClientWindowsAreSlotds(t *testing.T) {
	t.Parallel()
	lis, err := net.Listen("tcp", "127.0.0.1:0")
	if err != nil {
		t.Fatal(err)
	}
	defer lis.Close()
	conn := servertest.Dial(t, lis.Addr().String(), server.ClientWindows()...)
	go func() {
		_, _ = healthpb.NewHealthClient(conn).Check(context.Background(), &healthpb.HealthCheckRequest{})
	}()
	nc, err := lis.Accept()
	if err != nil {
		t.Fatal(err)
	}
	defer nc.Close()
	_ = nc.SetDeadline(time.Now().Add(5 * time.Second))
	preface := make([]byte, len(http2.ClientPreface))
	if _, err := io.ReadFull(nc, preface); err != nil || string(preface) != http2.ClientPreface {
		t.Fatalf("client preface %q, %v", preface, err)
	}
	fr := http2.NewFramer(nc, nc)
	var streamWindow, connWindow uint32 = 0, 65535
	for streamWindow == 0 || connWindow == 65535 {
		f, err := fr.ReadFrame()
		if err != nil {
			t.Fatalf("reading the client's frames: %v (stream window %d, connection window %d)", err, streamWindow, connWindow)
		}
		switch f := f.(type) {
		case *http2.SettingsFrame:
			if v, ok := f.Value(http2.SettingInitialWindowSize); ok && !f.IsAck() {
				streamWindow = v
			}
		case *http2.WindowUpdateFrame:
			if f.StreamID == 0 {
				connWindow += f.Increment
			}
		}
	}
	if streamWindow != 64<<10 || connWindow != 1<<20 {
		t.Errorf("the client announces a stream window of %d and a connection window of %d, want %d and %d",
			streamWindow, connWindow, 64<<10, 1<<20)
	}
}
