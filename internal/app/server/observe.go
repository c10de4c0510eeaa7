package server

import (
	"context"
	"errors"
	"log/slog"
	"net"
	"net/http"
	"net/http/pprof"
	"time"

	"go.opentelemetry.io/otel/trace"
	"google.golang.org/grpc"
	"google.golang.org/grpc/codes"
	healthpb "google.golang.org/grpc/health/grpc_health_v1"

	"github.com/slotd/slotd/internal/api"
	"github.com/slotd/slotd/internal/certs"
	"github.com/slotd/slotd/internal/clarify"
	"github.com/slotd/slotd/internal/logline"
	"github.com/slotd/slotd/internal/metrics"
	"github.com/slotd/slotd/internal/redact"
	"github.com/slotd/slotd/internal/session/pgstore"
	"github.com/slotd/slotd/internal/tracing"
	"github.com/slotd/slotd/problem"
)

// observer is what operators see of slotd: Prometheus metrics, one log
// line per turn, and an HTTP listener with /metrics, /healthz, /readyz
// (and pprof when asked for).
type observer struct {
	m   *metrics.Metrics
	log *slog.Logger
	lis net.Listener // nil when Config.MetricsListen is ""
	srv *http.Server
	// readTimeout bounds reading a request.
	readTimeout time.Duration
	// now is the clock of the log lines.
	now func() time.Time
	// tracer makes the calls' spans; nil when tracing is off.
	tracer trace.Tracer
}

// newObserver makes the collectors and binds the metrics listener, so that
// a busy port fails New like the gRPC one does.
func newObserver(cfg Config, log *slog.Logger, tools []string, src *certs.Source) (*observer, error) {
	o := &observer{m: metrics.New(tools), log: log, readTimeout: cfg.HTTPReadTimeout, now: time.Now}
	if cfg.Tracer != nil {
		o.tracer = cfg.Tracer.Tracer(tracing.Name)
	}
	if cfg.MetricsListen == "" {
		return o, nil
	}
	lis, err := listenTLS(cfg.MetricsListen, src, "h2", "http/1.1")
	if err != nil {
		return nil, err
	}
	o.lis = lis
	if cfg.Pprof {
		if host, _, err := net.SplitHostPort(cfg.MetricsListen); err != nil || !net.ParseIP(host).IsLoopback() {
			log.Warn("pprof is on, on a listener that is not loopback-only: profiles show the program's internals", "addr", cfg.MetricsListen)
		}
	}
	return o, nil
}

// watchPool exports the Postgres pool's numbers.
func (o *observer) watchPool(s *Server) {
	if s.pool == nil {
		return
	}
	o.m.WatchPool(func() metrics.PoolStats {
		st := s.pool.Stat()
		return metrics.PoolStats{
			AcquiredConns: st.AcquiredConns(), IdleConns: st.IdleConns(), TotalConns: st.TotalConns(),
			MaxConns: st.MaxConns(), ConstructingConns: st.ConstructingConns(),
			AcquireCount: st.AcquireCount(), EmptyAcquireCount: st.EmptyAcquireCount(),
			CanceledAcquireCount: st.CanceledAcquireCount(), NewConnsCount: st.NewConnsCount(),
			AcquireDuration: st.AcquireDuration(),
		}
	})
}

// MetricsAddr is the address of the metrics listener; "" when it is off.
func (s *Server) MetricsAddr() string {
	if s.obs.lis == nil {
		return ""
	}
	return s.obs.lis.Addr().String()
}

// Metrics is the server's collectors, for embedding and tests.
func (s *Server) Metrics() *metrics.Metrics { return s.obs.m }

// unary counts every call (the gRPC metrics). It sits inside the recovery
// interceptor and outside load shedding and the Errors interceptor, so that
// it sees every call's code, refused ones' too.
func (o *observer) unary() grpc.UnaryServerInterceptor {
	return o.m.GRPC.UnaryServerInterceptor()
}

// stream counts streaming calls (health watches, reflection).
func (o *observer) stream() grpc.StreamServerInterceptor {
	return o.m.GRPC.StreamServerInterceptor()
}

var _ api.Observer = (*observer)(nil)

// TurnStarted implements api.Observer.
func (o *observer) TurnStarted(context.Context) { o.m.TurnStarted() }

// TurnDone implements api.Observer: the turn metrics and the turn's log
// line.
func (o *observer) TurnDone(ctx context.Context, r api.TurnReport) {
	t := metrics.Turn{Tool: r.Request.Tool, Duration: r.Elapsed}
	if r.Code != codes.OK {
		t.Code, t.NotReplicated = r.Code.String(), pgstore.NotReplicated(r.Err)
	} else if res := r.Result; res != nil {
		t.Action, t.Replayed, t.Facts = string(res.Action), res.Replayed, res.Facts
	}
	o.m.TurnDone(t)
	o.annotateTurn(ctx, r, t)
	o.logTurn(ctx, r, t)
}

// CompletionDone implements api.Observer: backend failure kinds, output
// contract violations, hand-offs.
func (o *observer) CompletionDone(_ context.Context, r api.CompletionReport) {
	out := r.Completion
	if r.Code != codes.OK || out == nil {
		return
	}
	c := metrics.Completion{
		Tool:          out.Session.Tool,
		OutputInvalid: out.Problem != nil && out.Problem.Type == problem.TypeBackendOutputInvalid,
		HandedOff:     out.Action == clarify.Handoff,
	}
	if f := r.Request.Failure; f != nil {
		c.FailureKind = string(f.Kind)
	}
	o.m.CompletionDone(c)
}

// logTurn writes the turn's one log line. It carries names, counts and
// ids, never a slot value or an argument: what the user said stays out of
// the logs, and a card number above all. Ids are masked like any echoed
// input, in case a caller put a card number in one.
// A traced turn's line carries its trace id.
func (o *observer) logTurn(ctx context.Context, r api.TurnReport, t metrics.Turn) {
	level := slog.LevelInfo
	switch r.Code {
	case codes.Internal, codes.Unknown, codes.Unavailable, codes.DeadlineExceeded, codes.DataLoss, codes.ResourceExhausted:
		level = slog.LevelWarn
	}
	if !o.log.Enabled(ctx, level) {
		return
	}
	in := r.Request
	// Taken turns' ids too: the engine refuses an id holding a card number
	// by issuer and checksum, while masking cuts any run of 13 to 19
	// digits (conv-1234567890123 is taken, and logs as conv-•••• 0123).
	conversation, turn := redact.LoggedID(in.ConversationID), redact.LoggedID(in.TurnID)
	now, latency := o.now(), float64(t.Duration.Microseconds())/1000
	line := logline.Turn{Time: now, Level: level, RequestID: api.RequestID(ctx),
		Tenant: in.Tenant, Tool: o.m.Tool(in.Tool), ConversationID: conversation, TurnID: turn,
		Action: t.Action, Code: r.Code.String(), LatencyMS: latency, Result: r.Result}
	if traced := trace.SpanContextFromContext(ctx); traced.IsValid() {
		line.TraceID = traced.TraceID().String()
	}
	_ = o.log.Handler().Handle(ctx, line.Record())
}

// run serves the metrics listener until ctx ends. ready tells /readyz
// whether slotd takes turns (the gRPC health's status).
func (o *observer) run(ctx context.Context, pprofOn bool, ready func(context.Context) bool) {
	if o.lis == nil {
		return
	}
	mux := http.NewServeMux()
	mux.Handle("GET /metrics", o.m.Handler())
	mux.HandleFunc("GET /healthz", func(w http.ResponseWriter, r *http.Request) {
		w.Header().Set("Content-Type", "text/plain; charset=utf-8")
		_, _ = w.Write([]byte("ok\n"))
	})
	mux.HandleFunc("GET /readyz", func(w http.ResponseWriter, r *http.Request) {
		w.Header().Set("Content-Type", "text/plain; charset=utf-8")
		if !ready(r.Context()) {
			w.WriteHeader(http.StatusServiceUnavailable)
			_, _ = w.Write([]byte("not ready: postgres is not reachable or not migrated\n"))
			return
		}
		_, _ = w.Write([]byte("ready\n"))
	})
	if pprofOn {
		// Not /debug/pprof/cmdline: the command line may hold a database
		// password or API keys.
		mux.HandleFunc("/debug/pprof/", pprof.Index)
		mux.HandleFunc("/debug/pprof/profile", pprof.Profile)
		mux.HandleFunc("/debug/pprof/symbol", pprof.Symbol)
		mux.HandleFunc("/debug/pprof/trace", pprof.Trace)
	}
	o.srv = &http.Server{Handler: mux, ErrorLog: slog.NewLogLogger(o.log.Handler(), slog.LevelWarn)}
	// A CPU profile or trace runs for as long as it is asked to (30 s by
	// default).
	hardenHTTP(o.srv, o.readTimeout, time.Minute)
	done := make(chan struct{})
	go func() {
		defer close(done)
		if err := o.srv.Serve(o.lis); err != nil && !errors.Is(err, http.ErrServerClosed) {
			o.log.Error("metrics listener stopped", "err", err.Error())
		}
	}()
	o.log.Info("metrics serving", "addr", o.lis.Addr().String(), "pprof", pprofOn)
	<-ctx.Done()
	sctx, cancel := context.WithTimeout(context.Background(), 2*time.Second)
	defer cancel()
	_ = o.srv.Shutdown(sctx)
	<-done
}

// close releases a listener that run never served (New failed later).
func (o *observer) close() {
	if o.lis != nil && o.srv == nil {
		o.lis.Close()
	}
}

// serving is what the gRPC health service says of slotd as a whole.
func (s *Server) serving(ctx context.Context) bool {
	resp, err := s.health.Check(ctx, &healthpb.HealthCheckRequest{})
	return err == nil && resp.GetStatus() == healthpb.HealthCheckResponse_SERVING
}
