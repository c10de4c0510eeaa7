// Package bench measures slotd against the limit of its own database work:
// it drives concurrent multi-turn conversations through a real gRPC client
// against a running slotd (or one it starts in-process), and in the same
// run does each turn's database work directly through pgx — pgstore's own
// statements and transaction, with the commits the engine makes for the
// same dialogues — at the same concurrency. The ratio of the two rates is
// what slotd costs on top of Postgres.
package bench

import (
	"context"
	"errors"
	"fmt"
	"io"
	"log/slog"
	"net/url"
	"os"
	"runtime/pprof"
	"slices"
	"sync"
	"sync/atomic"
	"time"

	"github.com/jackc/pgx/v5/pgxpool"
	"google.golang.org/grpc"
	"google.golang.org/grpc/credentials/insecure"
	"google.golang.org/grpc/metadata"

	slotdv1 "github.com/slotd/slotd/api/proto/slotd/v1"
	"github.com/slotd/slotd/contract"
	"github.com/slotd/slotd/internal/app/server"
	"github.com/slotd/slotd/internal/app/serving"
	"github.com/slotd/slotd/internal/logline"
	"github.com/slotd/slotd/internal/session"
	"github.com/slotd/slotd/internal/session/pgstore"
	"github.com/slotd/slotd/internal/tracing"
	"github.com/slotd/slotd/migrations"
)

// Config is one bench run.
type Config struct {
	// Addr is a running slotd's gRPC address; "" starts one in-process on
	// a throwaway database.
	Addr string
	// Transport is the path the slotd side's turns take: TransportGRPC
	// (""), TransportHTTP or TransportMCP.
	Transport string
	// HTTPAddr is the HTTP address (host:port) of the slotd at Addr, for
	// the HTTP and MCP transports.
	HTTPAddr string
	// DatabaseURL is slotd's database when Addr is set; otherwise the
	// Postgres server the throwaway database is made on.
	DatabaseURL string
	// Via is the URL of a connection pooler in front of DatabaseURL's
	// server (PgBouncer in transaction mode, say), for an in-process
	// slotd: slotd connects through it, to the throwaway database by its
	// name and with the pooler's exec mode, while the direct side connects
	// straight to Postgres. The two rates are then slotd behind the pooler
	// against the same database work done directly.
	Via string
	// Contracts is the folder of the contracts slotd serves.
	Contracts string
	// MetricsURL is a running slotd's /metrics, read for its pool size and
	// for its memory and CPU under load; an in-process slotd's is found by
	// itself.
	MetricsURL string
	// TenantKey is sent as "authorization: Bearer KEY" when set.
	TenantKey string
	// Tenant is the tenant the direct side writes as; it must be the one
	// TenantKey stands for, so both sides write the same keys.
	Tenant string
	// Conversations is how many conversations run at once, on each side.
	Conversations int
	// Rate paces each side at this many turns a second in all (0: as fast
	// as the conversations go, the saturation point). Real conversations
	// think between turns; a paced run shows latency under a given load
	// rather than at the machine's limit. A turn's latency is measured from
	// its sending, never from its slot in the pace.
	Rate int
	// Duration bounds each side's measured time, split evenly over the
	// rounds, unless Turns is set.
	Duration time.Duration
	// Turns bounds each side's measurement by a number of turns, split
	// evenly over the rounds.
	Turns int
	// Rounds is how many measured rounds each side runs, the order
	// alternating (slotd then direct, direct then slotd, slotd then
	// direct, ...) so that what drifts during a run, the tables growing
	// and the neighbours' load, falls on both sides alike. 0 is 3, or 1
	// with ConversationTurns: the first and last tenth of a long
	// conversation need whole conversations.
	Rounds int
	// Warmup runs before each side's first round and is not counted.
	Warmup time.Duration
	// ConversationTurns > 0 replaces the mix with flight searches of this
	// many turns each (a long conversation).
	ConversationTurns int
	// Preload inserts this many sessions, with a turn and five slot
	// changes each, before the run.
	Preload int
	// KeepDatabase keeps the throwaway database.
	KeepDatabase bool
	// ServerLog receives the in-process slotd's log (its one line per
	// turn); nil discards it, after it was formatted all the same.
	ServerLog io.Writer
	// Progress receives what the bench is doing; nil is silent.
	Progress io.Writer
	// CPUProfile receives a CPU profile of this process during the slotd
	// side's first measured round (with an in-process slotd: slotd and its
	// client). Only the first: a process runs one profile at a time, and a
	// profile cannot pause while the direct side runs.
	CPUProfile io.Writer
}

// Side is one side's measurement, its rounds summed: turns, errors and
// time added, the latencies of all its turns together.
type Side struct {
	Turns       int64         `json:"turns"`
	Errors      int64         `json:"errors"`
	Elapsed     time.Duration `json:"-"`
	TurnsPerSec float64       `json:"turns_per_s"`
	P50         time.Duration `json:"-"`
	P95         time.Duration `json:"-"`
	P99         time.Duration `json:"-"`
	Max         time.Duration `json:"-"`
	// FirstError is an example of what went wrong.
	FirstError string `json:"first_error,omitempty"`

	// CPU is the processor time per turn.
	CPU CPU `json:"-"`

	// Early and Late are the median latencies of the first and the last
	// tenth of a long conversation's turns.
	Early, Late time.Duration `json:"-"`
}

// Report is a run's outcome.
type Report struct {
	Config   Config
	Mode     string // in-process or the address
	Sessions int64  // sessions stored when the measurement started
	Slotd    Side
	Direct   Side
	// Ratio is slotd's rate over the direct rate.
	Ratio float64
	// Rounds are the rates of each round, in order.
	Rounds []RoundResult
	// Updates counts both sides' updates of session rows over the whole
	// run, warmups included, and how many of them were HOT (in place,
	// writing no index). Postgres hands in a connection's counts late, and
	// all of them only when it ends: with both sides open all the run, the
	// updates cannot be told apart by side.
	Updates Updates
	// RSS is slotd's resident memory at its peak (in-process: the whole
	// bench process, client included); 0 when unknown.
	RSS      int64
	RSSWhat  string
	Dialogue []string
	// PoolMax is the size of slotd's connection pool, and of the direct
	// side's; PoolNote says why they may differ.
	PoolMax  int32
	PoolNote string
}

// RoundResult is one round's rate of each side.
type RoundResult struct {
	SlotdTurnsPerSec, DirectTurnsPerSec float64
}

// Ratio is the round's slotd rate over its direct rate, 0 without a
// direct rate.
func (r RoundResult) Ratio() float64 {
	if r.DirectTurnsPerSec <= 0 {
		return 0
	}
	return r.SlotdTurnsPerSec / r.DirectTurnsPerSec
}

// Run runs the bench: the same dialogues against slotd and as the same
// database work done directly, at the same concurrency, in rounds that
// alternate which side goes first. Both sides stay open for the whole run.
func Run(ctx context.Context, cfg Config) (*Report, error) {
	if err := cfg.check(); err != nil {
		return nil, err
	}
	progress := cfg.Progress
	if progress == nil {
		progress = io.Discard
	}
	cat, err := contract.LoadDir(cfg.Contracts)
	if err != nil {
		return nil, err
	}
	dialogues := Mix()
	if cfg.ConversationTurns > 0 {
		dialogues = []Dialogue{Long(cfg.ConversationTurns)}
	}
	if err := prepare(dialogues); err != nil {
		return nil, err
	}
	templates, err := captureTemplates(ctx, cat, dialogues)
	if err != nil {
		return nil, err
	}
	rep := &Report{Config: cfg, Mode: cfg.Addr}
	for _, d := range dialogues {
		rep.Dialogue = append(rep.Dialogue, d.Name)
	}
	dbURL, pool, cleanup, err := openDatabase(ctx, cfg, rep, progress)
	if err != nil {
		return nil, err
	}
	defer cleanup()
	sl, err := openSlotd(ctx, cfg, dbURL)
	if err != nil {
		return nil, err
	}
	defer sl.close()
	direct, err := openDirect(ctx, cfg, dbURL, sl.metricsURL, rep, dialogues, templates)
	if err != nil {
		return nil, err
	}
	defer direct.close()

	runID := fmt.Sprintf("%x", time.Now().UnixNano())
	fmt.Fprintf(progress, "slotd bench: %d conversations on each side, slotd (%s, over %s) and direct pgx work, %d rounds\n",
		cfg.Conversations, rep.Mode, transportName(cfg.Transport), cfg.Rounds)
	rep.RSSWhat = "peak of slotd under load (its process_resident_memory_bytes)"
	if sl.srv != nil {
		rep.RSSWhat = "peak under load of the bench process: slotd and its client"
	}
	turn, err := sl.turn(cfg, dialogues)
	if err != nil {
		return nil, err
	}
	slotd := &sideRun{name: "slotd", prefix: "bench-" + runID + "-slotd", turn: turn,
		meter: cpuMeter{pool: pool, metricsURL: cfg.MetricsURL}, profile: cfg.CPUProfile, rssURL: sl.metricsURL}
	directRun := &sideRun{name: "direct", prefix: "bench-" + runID + "-direct", turn: direct.turn, meter: cpuMeter{pool: pool}}
	upd := sessionUpdates(ctx, pool)
	rep.Rounds = measure(ctx, cfg, dialogues, slotd, directRun, checkpointer(pool, progress), progress)
	if rep.RSS = slotd.rss; rep.RSS == 0 {
		rep.RSSWhat = "unknown: give --metrics-url of the slotd at --addr"
	}
	// Postgres counts a connection's updates about once a second; a
	// connection that ends counts them all.
	sl.close()
	direct.close()
	if sl.srv != nil && cfg.Via == "" {
		// A pooler keeps its server connections: they never go.
		waitGone(ctx, pool, slotdAppName)
	}
	waitGone(ctx, pool, directAppName)
	rep.Updates = sessionUpdates(ctx, pool).since(upd)
	rep.Slotd, rep.Direct = slotd.result(longest(dialogues)), directRun.result(longest(dialogues))
	if rep.Direct.TurnsPerSec > 0 {
		rep.Ratio = rep.Slotd.TurnsPerSec / rep.Direct.TurnsPerSec
	}
	return rep, ctx.Err()
}

// ConfigError is a Config the bench cannot run: a usage error of slotd
// bench, worded for its flags.
type ConfigError struct{ msg string }

func (e *ConfigError) Error() string { return "bench: " + e.msg }

// Usage is the error without the package's prefix, for a command line.
func (e *ConfigError) Usage() string { return e.msg }

// check refuses a config the bench cannot run, and fills defaults.
func (cfg *Config) check() error {
	switch {
	case cfg.Conversations < 1:
		return &ConfigError{"at least one conversation (--conversations)"}
	case cfg.Duration <= 0 && cfg.Turns <= 0:
		return &ConfigError{"give a duration (--duration) or a number of turns (--turns)"}
	case cfg.DatabaseURL == "":
		return &ConfigError{"a Postgres URL is needed (--database-url or SLOTD_DATABASE_URL): the direct side and an in-process slotd use it"}
	case cfg.Rounds < 0:
		return &ConfigError{"the number of rounds (--rounds) cannot be negative"}
	case cfg.Via != "" && cfg.Addr != "":
		return &ConfigError{"--via is for an in-process slotd; a slotd at --addr connects as its own URL says"}
	case cfg.Transport != "" && cfg.Transport != TransportGRPC && cfg.Transport != TransportHTTP && cfg.Transport != TransportMCP:
		return &ConfigError{fmt.Sprintf("unknown transport %q (--transport): grpc, http or mcp", cfg.Transport)}
	case cfg.HTTPAddr != "" && cfg.Addr == "":
		return &ConfigError{"--http-addr is the HTTP address of the slotd at --addr: give both"}
	case cfg.Addr != "" && cfg.HTTPAddr == "" && (cfg.Transport == TransportHTTP || cfg.Transport == TransportMCP):
		return &ConfigError{"--transport " + cfg.Transport + " against the slotd at --addr needs its HTTP address (--http-addr)"}
	}
	if cfg.Transport == "" {
		cfg.Transport = TransportGRPC
	}
	if cfg.Contracts == "" {
		cfg.Contracts = "./contracts"
	}
	if cfg.Rounds == 0 {
		cfg.Rounds = 3
		if cfg.ConversationTurns > 0 {
			cfg.Rounds = 1
		}
	}
	if cfg.Turns > 0 && cfg.Turns < cfg.Rounds {
		return &ConfigError{fmt.Sprintf("%d turns (--turns) cannot be split over %d rounds (--rounds)", cfg.Turns, cfg.Rounds)}
	}
	return nil
}

// openDatabase is the database both sides work on: a throwaway one for an
// in-process slotd, else slotd's own; migrated, preloaded, counted.
func openDatabase(ctx context.Context, cfg Config, rep *Report, progress io.Writer) (string, *pgxpool.Pool, func(), error) {
	dbURL, drop := cfg.DatabaseURL, func() {}
	if cfg.Addr == "" {
		rep.Mode = "in-process"
		var err error
		if dbURL, drop, err = throwawayDatabase(ctx, cfg.DatabaseURL, cfg.KeepDatabase, progress); err != nil {
			return "", nil, nil, err
		}
	}
	pool, err := pgxpool.New(ctx, dbURL)
	if err != nil {
		drop()
		return "", nil, nil, fmt.Errorf("bench: postgres: %w", err)
	}
	cleanup := func() { pool.Close(); drop() }
	if _, err := migrations.Up(ctx, pool); err != nil {
		cleanup()
		return "", nil, nil, fmt.Errorf("bench: migrate: %w", err)
	}
	if cfg.Preload > 0 {
		if err := preload(ctx, pool, cfg.Preload, progress); err != nil {
			cleanup()
			return "", nil, nil, err
		}
	}
	if err := pool.QueryRow(ctx, "SELECT count(*) FROM sessions").Scan(&rep.Sessions); err != nil {
		cleanup()
		return "", nil, nil, fmt.Errorf("bench: count sessions: %w", err)
	}
	return dbURL, pool, cleanup, nil
}

// slotdSide is the slotd the bench drives: started in-process, or at
// cfg.Addr.
type slotdSide struct {
	srv        *server.Server // nil at cfg.Addr
	stop       func()
	conn       *grpc.ClientConn
	httpBase   string // http://host:port of the HTTP gateway, "" when unknown
	metricsURL string
	closing    sync.Once
}

func openSlotd(ctx context.Context, cfg Config, dbURL string) (*slotdSide, error) {
	sl := &slotdSide{stop: func() {}, metricsURL: cfg.MetricsURL}
	if cfg.HTTPAddr != "" {
		sl.httpBase = "http://" + cfg.HTTPAddr
	}
	addr := cfg.Addr
	if addr == "" {
		var err error
		slotdURL := dbURL
		if cfg.Via != "" {
			if slotdURL, err = throughPooler(cfg.Via, dbURL); err != nil {
				return nil, err
			}
		}
		if sl.srv, sl.stop, err = startServer(ctx, cfg, withAppName(slotdURL, slotdAppName)); err != nil {
			return nil, err
		}
		addr = sl.srv.Addr()
		sl.httpBase = "http://" + sl.srv.HTTPAddr()
		sl.metricsURL = "http://" + sl.srv.MetricsAddr() + "/metrics"
	}
	conn, err := grpc.NewClient(addr, append(server.ClientWindows(), grpc.WithTransportCredentials(insecure.NewCredentials()))...)
	if err != nil {
		sl.stop()
		return nil, fmt.Errorf("bench: slotd address %q: %w", addr, err)
	}
	sl.conn = conn
	if err := serving.Await(ctx, conn, nil); err != nil {
		sl.close()
		return nil, fmt.Errorf("bench: %w", err)
	}
	return sl, nil
}

func (sl *slotdSide) close() {
	sl.closing.Do(func() {
		sl.conn.Close()
		sl.stop()
	})
}

// turn plays one step of a dialogue through slotd over cfg.Transport.
func (sl *slotdSide) turn(cfg Config, ds []Dialogue) (turnFunc, error) {
	switch cfg.Transport {
	case TransportHTTP:
		return httpTurn(httpClient(cfg.Conversations), sl.httpBase, cfg.TenantKey, ds)
	case TransportMCP:
		return mcpTurn(httpClient(cfg.Conversations), sl.httpBase, cfg.TenantKey), nil
	}
	return sl.grpcTurn(cfg), nil
}

// grpcTurn plays one step of a dialogue through slotd's gRPC API.
func (sl *slotdSide) grpcTurn(cfg Config) turnFunc {
	codec := grpc.ForceCodecV2(clientCodec{})
	return func(ctx context.Context, d *Dialogue, step int, conv, turnID string) error {
		st := d.Steps[step]
		if cfg.TenantKey != "" {
			ctx = metadata.AppendToOutgoingContext(ctx, "authorization", "Bearer "+cfg.TenantKey)
		}
		var got actionOnly
		req := &wireRequest{base: st.wire, conversation: conv, turnID: turnID}
		if err := sl.conn.Invoke(ctx, slotdv1.SlotService_Turn_FullMethodName, req, &got, codec); err != nil {
			return err
		}
		if got.action != st.Want {
			return fmt.Errorf("%s step %d: slotd answered %s, want %s", d.Name, step+1, got.action, st.Want)
		}
		return nil
	}
}

// directSide does each turn's database work directly: pgstore's own Turn
// with the commit the engine made for the same step, on a pool as large as
// slotd's.
type directSide struct {
	pool *pgxpool.Pool
	turn turnFunc
}

func openDirect(ctx context.Context, cfg Config, dbURL, metricsURL string, rep *Report, dialogues []Dialogue, templates [][]template) (*directSide, error) {
	dcfg, err := pgxpool.ParseConfig(dbURL)
	if err != nil {
		return nil, fmt.Errorf("bench: postgres: %w", err)
	}
	if n, ok := scrape(ctx, metricsURL, "slotd_pg_pool_max_conns"); ok && n > 0 {
		dcfg.MaxConns = int32(n)
		rep.PoolMax = dcfg.MaxConns
	} else {
		rep.PoolNote = fmt.Sprintf("slotd's pool size is unknown (give --metrics-url); the direct side used %d connections", dcfg.MaxConns)
	}
	server.ConfigurePool(dcfg) // as slotd does: the same work in the same sessions on both sides
	dcfg.ConnConfig.RuntimeParams["application_name"] = directAppName
	pool, err := pgxpool.NewWithConfig(ctx, dcfg)
	if err != nil {
		return nil, fmt.Errorf("bench: postgres: %w", err)
	}
	store := pgstore.New(pool)
	return &directSide{pool: pool, turn: func(ctx context.Context, d *Dialogue, step int, conv, turnID string) error {
		t := templates[slices.IndexFunc(dialogues, func(x Dialogue) bool { return x.Name == d.Name })][step]
		key := session.Key{Tenant: cfg.Tenant, ConversationID: conv}
		_, err := store.Turn(ctx, key, turnID, func(cv session.Conversation) (*session.Commit, error) {
			return rebase(t, cv.Open, key, turnID, time.Now().UTC())
		})
		return err
	}}, nil
}

func (d *directSide) close() { d.pool.Close() }

type turnFunc func(ctx context.Context, d *Dialogue, step int, conv, turnID string) error

type sample struct {
	d   time.Duration
	pos int32 // the turn's place in its dialogue, from 0
}

// sideRun is one side of the bench over its rounds: how it plays a turn,
// and what its rounds measured so far.
type sideRun struct {
	name    string
	prefix  string // of its conversations' ids
	turn    turnFunc
	meter   cpuMeter
	profile io.Writer // receives a CPU profile of the first measured round
	rssURL  string    // a /metrics read for the peak RSS during the rounds

	rounds   int
	samples  []sample
	errs     int64
	firstErr string
	elapsed  time.Duration
	cpu      cpuSpan
	rss      int64
}

// measure runs cfg.Rounds rounds of both sides, the first side alternating
// (slotd, direct; direct, slotd; ...) so that drift cancels, and answers
// each round's rates. Each side's time or turns are split evenly over the
// rounds; checkpoint runs before each measured round.
func measure(ctx context.Context, cfg Config, ds []Dialogue, slotd, direct *sideRun, checkpoint func(context.Context), progress io.Writer) []RoundResult {
	var out []RoundResult
	for r := range cfg.Rounds {
		if ctx.Err() != nil {
			break
		}
		limit := 0
		if cfg.Turns > 0 {
			limit = cfg.Turns / cfg.Rounds
			if r < cfg.Turns%cfg.Rounds {
				limit++
			}
		}
		order := []*sideRun{slotd, direct}
		if r%2 == 1 {
			order = []*sideRun{direct, slotd}
		}
		var res RoundResult
		for _, s := range order {
			fmt.Fprintf(progress, "slotd bench: round %d of %d, %s side\n", r+1, cfg.Rounds, s.name)
			rate := s.round(ctx, cfg, ds, limit, cfg.Duration/time.Duration(cfg.Rounds), checkpoint)
			if s == slotd {
				res.SlotdTurnsPerSec = rate
			} else {
				res.DirectTurnsPerSec = rate
			}
		}
		out = append(out, res)
	}
	return out
}

// round runs the side's next measured round: cfg.Conversations workers,
// each playing dialogues one after another in new conversations, for limit
// turns or else for d. The side's first round comes after its warmup and,
// with a profile, is CPU-profiled into it. checkpoint runs just before the
// measurement. It answers the round's turns/s.
func (s *sideRun) round(ctx context.Context, cfg Config, ds []Dialogue, limit int, d time.Duration, checkpoint func(context.Context)) float64 {
	first := s.rounds == 0
	prefix := fmt.Sprintf("%s-%d", s.prefix, s.rounds)
	s.rounds++
	if first && cfg.Warmup > 0 {
		run(ctx, cfg.Conversations, 0, cfg.Rate, time.Now().Add(cfg.Warmup), ds, s.prefix+"-warm", s.turn)
	}
	checkpoint(ctx)
	if s.rssURL != "" {
		peak := sampleRSS(ctx, s.rssURL)
		defer func() { s.rss = max(s.rss, peak()) }()
	}
	before := s.meter.sample(ctx)
	profiling := false
	if first && s.profile != nil {
		profiling = pprof.StartCPUProfile(s.profile) == nil
	}
	var until time.Time
	if limit <= 0 {
		until = time.Now().Add(d)
	}
	start := time.Now()
	samples, errs, firstErr := run(ctx, cfg.Conversations, limit, cfg.Rate, until, ds, prefix, s.turn)
	elapsed := time.Since(start)
	if profiling {
		pprof.StopCPUProfile()
	}
	s.cpu.add(before, s.meter.sample(ctx))
	s.samples = append(s.samples, samples...)
	s.errs += errs
	if s.firstErr == "" {
		s.firstErr = firstErr
	}
	s.elapsed += elapsed
	if elapsed <= 0 {
		return 0
	}
	return float64(len(samples)) / elapsed.Seconds()
}

// result is the side's measurement over all its rounds.
func (s *sideRun) result(steps int) Side {
	side := summarize(s.samples, s.errs, s.firstErr, s.elapsed, steps)
	side.CPU = s.cpu.perTurn(side.Turns)
	return side
}

// checkpointer makes a checkpoint before each measured round: the writes
// that follow one (each page's first change after it is written whole to
// the WAL) then fall at the start of every round alike, and the next timed
// checkpoint is minutes away rather than on one side by chance. Without
// the right to (a superuser or a member of pg_checkpoint), it says so once.
func checkpointer(pool *pgxpool.Pool, progress io.Writer) func(context.Context) {
	refused := false
	return func(ctx context.Context) {
		if refused || ctx.Err() != nil {
			return
		}
		if _, err := pool.Exec(ctx, "CHECKPOINT"); err != nil && ctx.Err() == nil {
			refused = true
			fmt.Fprintf(progress, "slotd bench: no checkpoint before the rounds (%v): one may fall in a round\n", err)
		}
	}
}

// pacer hands out the right to send a turn rate times a second (a token not
// taken is dropped: the pace is a ceiling, not a debt); with rate 0 it
// never waits. It reports false when the run is over while waiting.
func pacer(ctx context.Context, rate int) func(until time.Time) bool {
	if rate <= 0 {
		return func(time.Time) bool { return true }
	}
	tokens := make(chan struct{}, 1)
	go func() {
		t := time.NewTicker(time.Second / time.Duration(rate))
		defer t.Stop()
		for {
			select {
			case <-ctx.Done():
				return
			case <-t.C:
				select {
				case tokens <- struct{}{}:
				default:
				}
			}
		}
	}()
	return func(until time.Time) bool {
		var deadline <-chan time.Time
		if !until.IsZero() {
			timer := time.NewTimer(time.Until(until))
			defer timer.Stop()
			deadline = timer.C
		}
		select {
		case <-tokens:
			return true
		case <-deadline:
			return false
		case <-ctx.Done():
			return false
		}
	}
}

func longest(ds []Dialogue) int {
	n := 0
	for _, d := range ds {
		n = max(n, len(d.Steps))
	}
	return n
}

// run plays dialogues in workers until the time until or, with limit > 0,
// until limit turns were started. A turn under way at the end is let
// finish and counted: cancelling it would make pgx close its connection,
// and the next run would pay for a new one.
func run(ctx context.Context, workers, limit, rate int, until time.Time, ds []Dialogue, prefix string, turn turnFunc) ([]sample, int64, string) {
	var started, errs atomic.Int64
	over := func() bool { return ctx.Err() != nil || (!until.IsZero() && !time.Now().Before(until)) }
	pace := pacer(ctx, rate)
	var firstErr atomic.Value
	// play is worker w's run: its turns' samples.
	play := func(w int) []sample {
		var out []sample
		for n := 0; !over(); n++ {
			d := &ds[(w+n)%len(ds)]
			conv := fmt.Sprintf("%s-%d-%d", prefix, w, n)
			for step := range d.Steps {
				if over() {
					break
				}
				if limit > 0 && started.Add(1) > int64(limit) {
					return out
				}
				if !pace(until) {
					break
				}
				t0 := time.Now()
				err := turn(ctx, d, step, conv, fmt.Sprintf("%s/%d", conv, step+1))
				elapsed := time.Since(t0)
				if ctx.Err() != nil {
					break // interrupted: neither a turn nor an error
				}
				if err != nil {
					errs.Add(1)
					firstErr.CompareAndSwap(nil, err.Error())
					break // the conversation is off script: start another
				}
				out = append(out, sample{d: elapsed, pos: int32(step)})
			}
		}
		return out
	}
	results := make([][]sample, workers)
	var wg sync.WaitGroup
	for w := range workers {
		wg.Add(1)
		go func() {
			defer wg.Done()
			results[w] = play(w)
		}()
	}
	wg.Wait()
	var all []sample
	for _, r := range results {
		all = append(all, r...)
	}
	first, _ := firstErr.Load().(string)
	return all, errs.Load(), first
}

func summarize(samples []sample, errs int64, firstErr string, elapsed time.Duration, steps int) Side {
	s := Side{Turns: int64(len(samples)), Errors: errs, FirstError: firstErr, Elapsed: elapsed}
	if elapsed > 0 {
		s.TurnsPerSec = float64(len(samples)) / elapsed.Seconds()
	}
	if len(samples) == 0 {
		return s
	}
	ds := make([]time.Duration, len(samples))
	for i, x := range samples {
		ds[i] = x.d
	}
	slices.Sort(ds)
	s.P50, s.P95, s.P99, s.Max = percentile(ds, 50), percentile(ds, 95), percentile(ds, 99), ds[len(ds)-1]
	if steps >= 20 {
		tenth := int32(steps / 10)
		var early, late []time.Duration
		for _, x := range samples {
			switch {
			case x.pos < tenth:
				early = append(early, x.d)
			case x.pos >= int32(steps)-tenth:
				late = append(late, x.d)
			}
		}
		slices.Sort(early)
		slices.Sort(late)
		s.Early, s.Late = percentile(early, 50), percentile(late, 50)
	}
	return s
}

// percentile is the nearest-rank percentile of sorted durations.
func percentile(sorted []time.Duration, p int) time.Duration {
	if len(sorted) == 0 {
		return 0
	}
	i := (len(sorted)*p + 99) / 100
	return sorted[min(max(i-1, 0), len(sorted)-1)]
}

// startServer runs slotd in this process on :0 against the database.
func startServer(ctx context.Context, cfg Config, dbURL string) (*server.Server, func(), error) {
	w := cfg.ServerLog
	if w == nil {
		w = io.Discard
	}
	log := slog.New(logline.NewJSON(w, nil))
	// Traced as slotd serve traces, when the OTEL_* environment says so:
	// the bench then measures what tracing costs.
	tp, err := tracing.FromEnv(ctx)
	if err != nil {
		return nil, nil, fmt.Errorf("bench: tracing (OTEL_* environment): %w", err)
	}
	scfg := server.Config{
		Listen: "127.0.0.1:0", MetricsListen: "127.0.0.1:0", HTTPListen: "127.0.0.1:0", Contracts: cfg.Contracts,
		Store: "postgres", DatabaseURL: dbURL, APIKeys: os.Getenv("SLOTD_API_KEYS"),
		HealthInterval: 200 * time.Millisecond,
	}
	if tp != nil {
		scfg.Tracer = tp
	}
	srv, err := server.New(scfg, log)
	if err != nil {
		return nil, nil, fmt.Errorf("bench: in-process slotd: %w", err)
	}
	ctx, cancel := context.WithCancel(context.WithoutCancel(ctx))
	done := make(chan error, 1)
	go func() { done <- srv.Run(ctx) }()
	return srv, func() {
		cancel()
		<-done
		if tp != nil {
			_ = tp.Shutdown(context.Background())
		}
	}, nil
}

// sampleRSS reads process_resident_memory_bytes from a /metrics URL once a
// second until the returned function is called, which answers the
// largest value seen (0 when none could be read).
func sampleRSS(ctx context.Context, metricsURL string) func() int64 {
	if metricsURL == "" {
		return func() int64 { return 0 }
	}
	ctx, cancel := context.WithCancel(ctx)
	var peak atomic.Int64
	done := make(chan struct{})
	go func() {
		defer close(done)
		t := time.NewTicker(time.Second)
		defer t.Stop()
		for {
			if v, ok := scrape(ctx, metricsURL, "process_resident_memory_bytes"); ok && int64(v) > peak.Load() {
				peak.Store(int64(v))
			}
			select {
			case <-ctx.Done():
				return
			case <-t.C:
			}
		}
	}()
	return func() int64 {
		cancel()
		<-done
		return peak.Load()
	}
}

// throughPooler is the URL of the pooler at via for the database of dbURL:
// via's address, user and parameters, dbURL's database.
func throughPooler(via, dbURL string) (string, error) {
	v, err := url.Parse(via)
	if err != nil || (v.Scheme != "postgres" && v.Scheme != "postgresql") {
		return "", errors.New("bench: --via must be a postgres:// URL")
	}
	d, err := url.Parse(dbURL)
	if err != nil {
		return "", fmt.Errorf("bench: the database URL: %w", err)
	}
	v.Path = d.Path
	return v.String(), nil
}
