// Package server assembles slotd: contracts, the session store, the engine,
// and the gRPC server with health and reflection. cmd/slotd parses flags
// into a Config and calls Run.
package server

import (
	"context"
	"errors"
	"fmt"
	"log/slog"
	"net"
	"runtime"
	"strings"
	"sync"
	"time"

	"github.com/jackc/pgx/v5/pgconn"
	"github.com/jackc/pgx/v5/pgxpool"
	"go.opentelemetry.io/otel/trace"
	"google.golang.org/grpc"
	"google.golang.org/grpc/credentials"
	"google.golang.org/grpc/health"
	healthpb "google.golang.org/grpc/health/grpc_health_v1"
	"google.golang.org/grpc/reflection"

	slotdv1 "github.com/slotd/slotd/api/proto/slotd/v1"
	"github.com/slotd/slotd/contract"
	"github.com/slotd/slotd/internal/api"
	"github.com/slotd/slotd/internal/app/console"
	"github.com/slotd/slotd/internal/app/mcp"
	"github.com/slotd/slotd/internal/auth"
	"github.com/slotd/slotd/internal/certs"
	"github.com/slotd/slotd/internal/session"
	"github.com/slotd/slotd/internal/session/memstore"
	"github.com/slotd/slotd/internal/session/pgstore"
	"github.com/slotd/slotd/internal/setting"
	"github.com/slotd/slotd/internal/tracing"
	"github.com/slotd/slotd/migrations"
	"github.com/slotd/slotd/problem"
)

// Config is everything slotd serve needs, each component's settings in
// its own Config (Session, Limits, MCP, TLS). Zero fields take their
// defaults (WithDefaults), but where the field says what zero means;
// slotd serve's flags (cmd/slotd: serveSettings) start from other values
// for some of those, as its README table says.
type Config struct {
	// Listen is the gRPC address.
	Listen string
	// HTTPListen is the address of the HTTP/JSON gateway (gateway.go); ""
	// serves none. slotd serve defaults it to 127.0.0.1:8080.
	HTTPListen string
	// DisableMCP turns off the MCP endpoint (/mcp on HTTPListen; mcp.go),
	// which is on by default.
	DisableMCP bool
	// DisableConsole turns off the ops console (/console/ on HTTPListen;
	// console.go), which is on by default.
	DisableConsole bool
	// MCP bounds the MCP endpoint's sessions and waiting forms; zero
	// fields take mcp's defaults, but its body bound, which is the HTTP
	// listener's, and its calls' timeout, which is Limits.DefaultDeadline.
	MCP mcp.Limits
	// Contracts is the folder of contract files.
	Contracts string
	// Store is "postgres" (default) or "memory" (a demo; nothing is kept).
	Store string
	// DatabaseURL is the Postgres connection string.
	DatabaseURL string
	// CreateDatabase creates DatabaseURL's database when the server does
	// not have it; without it a missing database stops slotd.
	CreateDatabase bool
	// ShutdownTimeout bounds the graceful stop.
	ShutdownTimeout time.Duration
	// HealthInterval is how often readiness is checked.
	HealthInterval time.Duration
	// HTTPReadTimeout bounds the time to read an HTTP request, body
	// included, on the gateway and metrics listeners; 30s when 0.
	HTTPReadTimeout time.Duration
	// HTTPMaxUnauthConns and HTTPMaxUnauthConnsPerSource bound the HTTP
	// listener's connections that have not authenticated a request yet, in
	// all and per source address (gate.go); 512 and 128 when 0.
	HTTPMaxUnauthConns          int
	HTTPMaxUnauthConnsPerSource int
	// MemoryLimit is the soft limit of the Go heap in bytes (0: none),
	// which slotd serve sets for its process (debug.SetMemoryLimit); New
	// leaves it alone, as it is the process's, not one server's.
	MemoryLimit int64
	// APIKeys is SLOTD_API_KEYS: "tenant:key,...".
	APIKeys string
	// AdminKeys is SLOTD_ADMIN_KEYS: "key,..." or "name:key,...".
	AdminKeys string
	// Session is the engine's: the lifetimes, attempts and open sessions
	// of what contracts leave open, the client clock's window, and the
	// server's clock (also the admin service's and the console's).
	Session session.Config
	// Retention is how long ended sessions are kept before the janitor
	// purges them; 0 keeps them.
	Retention time.Duration
	// JanitorInterval is how often the janitor runs; 0 turns it off.
	JanitorInterval time.Duration
	// Limits bound each call; zero fields take api's defaults, but
	// TenantMaxInFlight, which is MaxInFlight divided among the tenants of
	// APIKeys.
	Limits api.Limits
	// TenantLimits is SLOTD_TENANT_LIMITS: "tenant:n,...", tenants whose
	// share of the in-flight turns is not Limits.TenantMaxInFlight.
	TenantLimits string
	// MetricsListen is the address of /metrics, /healthz and /readyz
	// (observe.go); "" serves none. slotd serve defaults it to
	// 127.0.0.1:9464.
	MetricsListen string
	// Pprof adds net/http/pprof to the metrics listener.
	Pprof bool
	// TLS names the PEM files of the server's certificate and key (every
	// listener then speaks TLS 1.2 or later) and of the CAs whose client
	// certificates it requires (mutual TLS). The files are read again when
	// they change.
	TLS certs.Files
	// AllowPlaintext lets a listener beyond loopback speak plaintext, for
	// a set-up that terminates TLS in front of slotd (a mesh's sidecar, a
	// load balancer). Without it, such a listener needs TLS.
	AllowPlaintext bool
	// Tracer makes the spans of turns and of their Postgres round trips
	// (trace.go); nil traces nothing. slotd serve builds it from the
	// OTEL_* environment (internal/tracing).
	Tracer trace.TracerProvider
}

// maxRecvMsgSize is the transport's own bound, above api.Limits'
// MaxRequestBytes so that a large request gets slotd's problem, not the
// transport's bare RESOURCE_EXHAUSTED.
const maxRecvMsgSize = 2 << 20

// Postgres settings of every connection, unless the URL sets them: no turn
// waits on a lock or a statement without bound, and a connection left in a
// transaction by a crashed peer is cut.
var pgRuntimeParams = map[string]string{
	"lock_timeout":                        "3s",
	"statement_timeout":                   "5s",
	"idle_in_transaction_session_timeout": "15s",
}

// ConfigurePool gives a pool's connections what slotd's own get: the
// settings above (unless the URL sets them) and the store's notice
// handling. The bench's direct side takes it too, so that both sides run
// the same statements in the same sessions.
func ConfigurePool(cfg *pgxpool.Config) {
	for k, v := range pgRuntimeParams {
		if _, set := cfg.ConnConfig.RuntimeParams[k]; !set {
			cfg.ConnConfig.RuntimeParams[k] = v
		}
	}
	pgstore.Configure(cfg)
}

// WithDefaults is a copy of c with its zero fields, and those of its
// components' Configs, set to the defaults.
func (c Config) WithDefaults() Config {
	if c.Listen == "" {
		c.Listen = "127.0.0.1:50051"
	}
	if c.Contracts == "" {
		c.Contracts = "./contracts"
	}
	if c.Store == "" {
		c.Store = "postgres"
	}
	if c.ShutdownTimeout == 0 {
		c.ShutdownTimeout = 15 * time.Second
	}
	if c.HealthInterval == 0 {
		c.HealthInterval = 2 * time.Second
	}
	if c.HTTPReadTimeout == 0 {
		c.HTTPReadTimeout = 30 * time.Second
	}
	if c.HTTPMaxUnauthConns == 0 {
		c.HTTPMaxUnauthConns = 512
	}
	if c.HTTPMaxUnauthConnsPerSource == 0 {
		c.HTTPMaxUnauthConnsPerSource = 128
	}
	c.Session = c.Session.WithDefaults()
	c.Limits = c.Limits.WithDefaults()
	if c.MCP.MaxBodyBytes == 0 {
		c.MCP.MaxBodyBytes = maxHTTPBody
	}
	if c.MCP.CallTimeout == 0 {
		c.MCP.CallTimeout = c.Limits.DefaultDeadline
	}
	c.MCP = c.MCP.WithDefaults()
	return c
}

// Validate says which setting of c, after WithDefaults, is wrong (a
// *setting.Error naming it by its path in Config, such as
// "Session.MaxAttempts"), or nil. What only opening a file or parsing the
// keys can tell is New's to find.
func (c Config) Validate() error {
	switch c.Store {
	case "postgres":
		if c.DatabaseURL == "" {
			return setting.Invalid("DatabaseURL", "is required with the postgres store (or use the memory store for a demo that keeps nothing)")
		}
	case "memory":
	default:
		return setting.Invalid("Store", "must be postgres or memory, not %q", c.Store)
	}
	return setting.First(
		setting.NotNegative("ShutdownTimeout", c.ShutdownTimeout),
		setting.Positive("HealthInterval", c.HealthInterval),
		setting.Positive("HTTPReadTimeout", c.HTTPReadTimeout),
		setting.AtLeast("HTTPMaxUnauthConns", c.HTTPMaxUnauthConns, 1),
		setting.AtLeast("HTTPMaxUnauthConnsPerSource", c.HTTPMaxUnauthConnsPerSource, 1),
		setting.NotNegative("Retention", c.Retention),
		setting.NotNegative("JanitorInterval", c.JanitorInterval),
		setting.In("Session", c.Session.Validate()),
		setting.In("Limits", c.Limits.Validate()),
		setting.In("MCP", c.MCP.Validate()),
	)
}

// Server is a running slotd.
type Server struct {
	cfg    Config
	log    *slog.Logger
	lis    net.Listener
	grpc   *grpc.Server
	certs  *certs.Source // nil without TLS
	guard  *api.Guard
	health *health.Server
	store  session.Store
	pool   *pgxpool.Pool
	engine *session.Engine
	// versions serves every stored version of a tool's contract
	// (versions.go); nil for a store that keeps none.
	versions *session.Versions
	// slots and admin are slotd's services, served over gRPC and local.
	slots *api.SlotService
	admin *api.AdminService
	// local is the in-process path of the gateway's routes and MCP's tool
	// calls to the services (local.go); nil without an HTTP listener.
	local   *api.Local
	gw      *gateway
	obs     *observer
	console *console.Console // nil when off

	migrated chan struct{}
}

// New loads the contracts, opens the store and binds the listeners. It does
// not wait for Postgres: until the database answers and is migrated, health
// says NOT_SERVING and turns fail with a retryable problem.
func New(cfg Config, log *slog.Logger) (*Server, error) {
	cfg = cfg.WithDefaults()
	if err := cfg.Validate(); err != nil {
		return nil, err
	}
	if log == nil {
		log = slog.Default()
	}
	cat, err := contract.LoadDir(cfg.Contracts)
	if err != nil {
		return nil, err
	}
	keys, err := auth.Parse(cfg.APIKeys, cfg.AdminKeys)
	if err != nil {
		return nil, err
	}
	if keys.Enabled() && keys.TenantKeys() == 0 {
		// With any key every call needs one, and a turn a tenant's: no
		// turn can be taken at all.
		log.Warn("ADMIN KEYS WITHOUT TENANT KEYS: every turn will be refused as unauthenticated, since only a tenant's key may take one; " +
			"set SLOTD_API_KEYS=tenant:key,... (keys of at least 16 characters) beside SLOTD_ADMIN_KEYS")
	}
	if cfg.Limits, err = tenantLimits(cfg.Limits, cfg.TenantLimits, keys); err != nil {
		return nil, err
	}
	s := &Server{cfg: cfg, log: log, migrated: make(chan struct{})}
	if err := s.checkEdge(keys); err != nil {
		return nil, err
	}
	if err := s.openStore(); err != nil {
		return nil, err
	}
	if s.obs, err = newObserver(cfg, log, cat.Names(), s.certs); err != nil {
		s.close()
		return nil, err
	}
	s.obs.watchPool(s)
	s.engine = session.NewEngine(s.obs.m.Store(s.store), cat, cfg.Session)
	s.useVersions()
	if cfg.Store == "memory" {
		if err := s.registerVersions(context.Background()); err != nil {
			s.close()
			return nil, err
		}
	}

	if s.lis, err = listen(cfg.Listen); err != nil {
		s.close()
		return nil, err
	}
	s.guard = api.NewGuard(cfg.Limits, log)
	s.guard.OnRefuse(func(k problem.Kind) { s.obs.m.Refused("grpc", refusal(k)) })
	// Calls over HTTP and MCP are admitted and shed by the same guard, on
	// their in-process path (local.go): they are counted under grpc too.
	s.guard.OnShed(func(reason string) { s.obs.m.Refused("grpc", reason) })
	s.guard.ObserveTurns(s.obs)
	s.health = health.NewServer()
	s.slots = api.NewSlotService(s.engine, api.WithObserver(s.obs))
	s.admin = api.NewAdminService(s.engine, s.log, s.cfg.Session.Clock)
	s.grpc = s.newGRPC(keys, s.certs != nil)
	s.setServing(false)
	if cfg.HTTPListen != "" {
		s.local = s.newLocal(keys)
		if s.gw, err = newGateway(cfg, log, s.local, keys, s.certs, s.obs.m); err != nil {
			s.lis.Close()
			s.close()
			return nil, err
		}
		if err := s.mountMCP(keys); err != nil {
			s.lis.Close()
			s.close()
			return nil, err
		}
		if err := s.mountConsole(keys); err != nil {
			s.lis.Close()
			s.close()
			return nil, err
		}
	}
	return s, nil
}

// newGRPC builds the gRPC server with every service, bounded and guarded
// (edge.go), speaking TLS when withTLS.
func (s *Server) newGRPC(keys *auth.Keys, withTLS bool) *grpc.Server {
	opts := append(transportOptions(),
		grpc.ForceServerCodecV2(s.guard.Codec()),
		grpc.MaxRecvMsgSize(maxRecvMsgSize),
		grpc.InTapHandle(s.guard.Tap(keys.Authorize)),
		// Calls run on reused goroutines, whose stacks have already grown
		// to a turn's depth: a new goroutine per call spends slotd's CPU
		// growing its stack (see runtime.morestack in
		// `slotd bench --cpuprofile`). More calls than workers still get a
		// goroutine each.
		grpc.NumStreamWorkers(uint32(16*runtime.GOMAXPROCS(0))),
		grpc.ChainUnaryInterceptor(s.unaryInterceptors()...),
		grpc.ChainStreamInterceptor(s.guard.RecoverStream(), s.obs.stream(), s.guard.ErrorsStream()),
	)
	if withTLS {
		opts = append(opts, grpc.Creds(credentials.NewTLS(s.certs.ServerConfig("h2"))))
	}
	srv := grpc.NewServer(opts...)
	s.register(srv)
	reflection.Register(srv)
	s.obs.m.GRPC.InitializeMetrics(srv)
	return srv
}

// openStore opens the configured store: a Postgres pool (not connected yet)
// or the memory store.
func (s *Server) openStore() error {
	cfg := s.cfg
	switch cfg.Store {
	case "memory":
		s.log.Warn("STORE IS IN MEMORY: sessions are lost on restart and not shared between replicas; use it for demos only")
		s.store = memstore.New()
		close(s.migrated)
		return nil
	case "postgres":
	default:
		return fmt.Errorf("unknown store %q (postgres or memory)", cfg.Store)
	}
	if cfg.DatabaseURL == "" {
		return errors.New("SLOTD_DATABASE_URL is required with the postgres store (or use --store memory for a demo)")
	}
	pcfg, err := pgxpool.ParseConfig(cfg.DatabaseURL)
	if err != nil {
		return errors.New("SLOTD_DATABASE_URL is not a valid Postgres connection string")
	}
	if pcfg.ConnConfig.ConnectTimeout == 0 || pcfg.ConnConfig.ConnectTimeout > 3*time.Second {
		pcfg.ConnConfig.ConnectTimeout = 3 * time.Second
	}
	if !strings.Contains(cfg.DatabaseURL, "pool_max_conns") {
		// pgxpool's default is one per core, at least four; a turn holds
		// its connection while the engine works between its two batches,
		// so Postgres idles unless there are more (`slotd bench` with
		// pool_max_conns in the URL compares the sizes).
		pcfg.MaxConns = int32(4 * runtime.GOMAXPROCS(0))
	}
	ConfigurePool(pcfg)
	if cfg.Tracer != nil {
		pcfg.ConnConfig.Tracer = tracing.PoolTracer(cfg.Tracer)
	}
	if s.pool, err = pgxpool.NewWithConfig(context.Background(), pcfg); err != nil {
		return errors.New("postgres pool: " + safeErr(err))
	}
	s.store = pgstore.New(s.pool)
	return nil
}

// HTTPAddr is the address the HTTP/JSON gateway listens on; "" when it
// serves none.
func (s *Server) HTTPAddr() string {
	if s.gw == nil {
		return ""
	}
	return s.gw.lis.Addr().String()
}

// Addr is the address the gRPC server listens on.
func (s *Server) Addr() string { return s.lis.Addr().String() }

func (s *Server) now() time.Time { return s.cfg.Session.Clock() }

// Engine is the server's turn engine, for embedding and tests.
func (s *Server) Engine() *session.Engine { return s.engine }

func (s *Server) setServing(ok bool) {
	st := healthpb.HealthCheckResponse_NOT_SERVING
	if ok {
		st = healthpb.HealthCheckResponse_SERVING
	}
	s.health.SetServingStatus("", st)
	s.health.SetServingStatus(slotdv1.SlotService_ServiceDesc.ServiceName, st)
}

// Run serves until ctx is done, then stops gracefully: in-flight turns
// finish (bounded by ShutdownTimeout), new ones are refused.
func (s *Server) Run(ctx context.Context) error {
	defer s.close()
	ctx, cancel := context.WithCancel(ctx)
	defer cancel()
	var wg sync.WaitGroup
	errc := make(chan error, 4)
	if s.pool != nil {
		wg.Add(1)
		go func() {
			defer wg.Done()
			if err := s.migrate(ctx); err != nil {
				errc <- err
			}
		}()
	}
	wg.Add(3)
	go func() { defer wg.Done(); s.watchHealth(ctx) }()
	go func() { defer wg.Done(); s.janitor(ctx) }()
	go func() { defer wg.Done(); s.obs.run(ctx, s.cfg.Pprof, s.serving) }()
	if s.console != nil {
		wg.Add(1)
		go func() { defer wg.Done(); s.console.Run(ctx) }()
	}

	go func() { errc <- s.grpc.Serve(s.lis) }()
	if s.gw != nil {
		s.gw.serve(errc)
	}
	s.log.Info("slotd serving", "addr", s.Addr(), "http", s.HTTPAddr(), "store", s.cfg.Store, "contracts", s.engine.Contracts().Names())

	var err error
	select {
	case err = <-errc:
		s.grpc.Stop()
	case <-ctx.Done():
		s.log.Info("slotd stopping")
		s.health.Shutdown()
		stopBy := time.Now().Add(s.cfg.ShutdownTimeout)
		if s.gw != nil {
			// HTTP first: its in-flight calls hold the same services.
			sctx, stop := context.WithDeadline(context.Background(), stopBy)
			s.gw.shutdown(sctx)
			stop()
		}
		done := make(chan struct{})
		go func() { s.grpc.GracefulStop(); close(done) }()
		select {
		case <-done:
		case <-time.After(time.Until(stopBy)):
			s.grpc.Stop()
		}
	}
	cancel()
	wg.Wait()
	if errors.Is(err, grpc.ErrServerStopped) {
		err = nil
	}
	return err
}

// migrate applies the schema, retrying until Postgres answers. A database
// the server does not have is created with CreateDatabase, else it ends
// slotd with an error that says how to create it: no retry would help.
// One that a host before the primary lacks (databaseExists) is waited for.
func (s *Server) migrate(ctx context.Context) error {
	for attempt := 0; ; attempt++ {
		mctx, cancel := context.WithTimeout(ctx, 60*time.Second)
		v, err := migrations.Up(mctx, s.pool)
		if err == nil {
			err = s.registerVersions(mctx)
		}
		cancel()
		if err == nil {
			s.log.Info("schema migrated", "version", v)
			close(s.migrated)
			s.checkHealth(ctx)
			return nil
		}
		if name, ok := missingDatabase(err, s.pool.Config().ConnConfig); ok && !databaseExists(ctx, s.pool.Config().ConnConfig) {
			if !s.cfg.CreateDatabase {
				return &errNoDatabase{name: name}
			}
			if err := createDatabase(ctx, s.pool.Config().ConnConfig); err != nil {
				return err
			}
			s.log.Info("database created", "database", name)
			continue
		}
		if attempt == 0 || attempt%10 == 0 {
			s.log.Warn("postgres not ready; retrying", "err", safeErr(err))
		}
		select {
		case <-ctx.Done():
			return nil
		case <-time.After(time.Second):
		}
	}
}

func (s *Server) watchHealth(ctx context.Context) {
	t := time.NewTicker(s.cfg.HealthInterval)
	defer t.Stop()
	s.checkHealth(ctx)
	for {
		select {
		case <-ctx.Done():
			return
		case <-t.C:
			s.checkHealth(ctx)
		}
	}
}

func (s *Server) checkHealth(ctx context.Context) {
	select {
	case <-s.migrated:
	default:
		s.setServing(false)
		return
	}
	cctx, cancel := context.WithTimeout(ctx, 2*time.Second)
	defer cancel()
	s.setServing(s.store.Ready(cctx) == nil)
}

func (s *Server) close() {
	if s.obs != nil {
		s.obs.close()
	}
	if s.gw != nil {
		s.gw.close()
	}
	if s.pool != nil {
		s.pool.Close()
	}
}

// safeErr is a failure of the database for the log: the server's own
// message, with a named cause and fix (pgstore.Describe); of any other
// failure only its kind, since a driver's text may carry the connection's
// user, host or database name.
func safeErr(err error) string {
	var pgErr *pgconn.PgError
	var connErr *pgconn.ConnectError
	switch {
	case errors.Is(err, context.DeadlineExceeded):
		return "timeout"
	case errors.As(err, &pgErr):
		return pgstore.Describe(err)
	case errors.As(err, &connErr):
		// The cause without the connection's own words, which name its
		// user and database: "dial tcp 127.0.0.1:5432: connect: connection refused".
		return "cannot connect to postgres: " + errors.Unwrap(connErr).Error()
	}
	return "postgres unavailable: " + err.Error()
}
