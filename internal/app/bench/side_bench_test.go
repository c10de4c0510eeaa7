package bench

import (
	"context"
	"fmt"
	"io"
	"log/slog"
	"sync/atomic"
	"testing"

	"github.com/slotd/slotd/internal/app/server"
	"github.com/slotd/slotd/internal/logline"
	"github.com/slotd/slotd/internal/testkit/servertest"
)

// BenchmarkSlotdSide is the slotd side of the bench without Postgres: the
// bench's own gRPC client and dialogues against an in-process slotd on the
// memory store. What it measures is what slotd adds to a turn's database
// work (gRPC, conversion, planning, the log line and metrics): the part
// the bench ratio slotd/direct is about.
func BenchmarkSlotdSide(b *testing.B) {
	srv, err := server.New(server.Config{
		Listen: "127.0.0.1:0", MetricsListen: "127.0.0.1:0", Contracts: "../../../contracts", Store: "memory",
	}, slog.New(logline.NewJSON(io.Discard, nil)))
	if err != nil {
		b.Fatal(err)
	}
	servertest.Run(b, srv.Run)
	conn := servertest.Dial(b, srv.Addr(), server.ClientWindows()...)
	servertest.WaitServing(b, conn)
	ctx := context.Background()
	ds := Mix()
	if err := prepare(ds); err != nil {
		b.Fatal(err)
	}
	turn := (&slotdSide{conn: conn}).grpcTurn(Config{})
	var worker atomic.Int64
	b.ReportAllocs()
	b.SetParallelism(16) // 32 conversations on two cores, as the bench drives
	b.ResetTimer()
	cpu0 := processCPU()
	defer func() { b.ReportMetric(float64((processCPU()-cpu0).Microseconds())/float64(b.N), "cpu-µs/turn") }()
	b.RunParallel(func(pb *testing.PB) {
		w := worker.Add(1)
		for n := 0; ; n++ {
			d := &ds[(int(w)+n)%len(ds)]
			conv := fmt.Sprintf("side-%d-%d", w, n)
			for step := range d.Steps {
				if !pb.Next() {
					return
				}
				if err := turn(ctx, d, step, conv, fmt.Sprintf("%s/%d", conv, step+1)); err != nil {
					b.Error(err)
					return
				}
			}
		}
	})
}
