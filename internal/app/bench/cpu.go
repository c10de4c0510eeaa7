package bench

import (
	"bufio"
	"context"
	"fmt"
	"net/http"
	"os"
	"strconv"
	"strings"
	"syscall"
	"time"

	"github.com/jackc/pgx/v5/pgxpool"
)

// CPU is the processor time a side spent in its rounds, divided by its
// turns: a measure of cost that other work on the machine does not move,
// unlike turns/s and latency. Each field is 0 when it could not be read.
type CPU struct {
	// Bench is this process: the gRPC client (and an in-process slotd) on
	// the slotd side, pgx on the direct side.
	Bench time.Duration `json:"-"`
	// Slotd is a slotd at --addr (its process_cpu_seconds_total).
	Slotd time.Duration `json:"-"`
	// Postgres is the backends serving this database (only when Postgres
	// runs on this machine: read from /proc).
	Postgres time.Duration `json:"-"`
	// Others is the share of the machine's processors that other work
	// took during the side's rounds (from /proc/stat): above a few
	// percent, the run's rates and latencies are not to be trusted.
	Others float64 `json:"-"`
}

type cpuMeter struct {
	pool       *pgxpool.Pool
	metricsURL string
}

type cpuSample struct {
	self, slotd time.Duration
	postgres    map[int]time.Duration // by backend pid; nil when unreadable
	busy, total time.Duration         // the whole machine, from /proc/stat
}

func (m cpuMeter) sample(ctx context.Context) cpuSample {
	s := cpuSample{self: processCPU()}
	if m.metricsURL != "" {
		if v, ok := scrape(ctx, m.metricsURL, "process_cpu_seconds_total"); ok {
			s.slotd = time.Duration(v * float64(time.Second))
		}
	}
	s.postgres = m.backends(ctx)
	s.busy, s.total = machine()
	return s
}

// processCPU is the processor time this process has spent, 0 when it
// cannot be read.
func processCPU() time.Duration {
	var ru syscall.Rusage
	if syscall.Getrusage(syscall.RUSAGE_SELF, &ru) != nil {
		return 0
	}
	return time.Duration(ru.Utime.Nano() + ru.Stime.Nano())
}

// machine is the processor time the whole machine spent busy and in all,
// from the first line of /proc/stat (clock ticks of 10 ms).
func machine() (busy, total time.Duration) {
	b, err := os.ReadFile("/proc/stat")
	if err != nil {
		return 0, 0
	}
	line, _, _ := strings.Cut(string(b), "\n")
	f := strings.Fields(line)
	if len(f) < 6 || f[0] != "cpu" {
		return 0, 0
	}
	var idle int64
	for i, x := range f[1:] {
		n, _ := strconv.ParseInt(x, 10, 64)
		total += time.Duration(n) * 10 * time.Millisecond
		if i == 3 || i == 4 { // idle, iowait
			idle += n
		}
	}
	return total - time.Duration(idle)*10*time.Millisecond, total
}

// backends reads the processor time of each Postgres backend connected to
// this database (one thread each) from /proc/PID/schedstat, in nanoseconds.
func (m cpuMeter) backends(ctx context.Context) map[int]time.Duration {
	if m.pool == nil {
		return nil
	}
	rows, err := m.pool.Query(ctx, `SELECT pid FROM pg_stat_activity WHERE datname = current_database() AND backend_type = 'client backend'`)
	if err != nil {
		return nil
	}
	defer rows.Close()
	out := map[int]time.Duration{}
	for rows.Next() {
		var pid int
		if rows.Scan(&pid) != nil {
			return nil
		}
		b, err := os.ReadFile(fmt.Sprintf("/proc/%d/schedstat", pid))
		if err != nil {
			continue // gone since the query, or Postgres is not on this machine
		}
		f := strings.Fields(string(b))
		if len(f) < 1 {
			return nil
		}
		ns, err := strconv.ParseInt(f[0], 10, 64)
		if err != nil {
			return nil
		}
		out[pid] = time.Duration(ns)
	}
	if len(out) == 0 {
		return nil
	}
	return out
}

// cpuSpan is the CPU spent between pairs of samples, summed over the
// spans added: a side's measured rounds. A quantity that one span could not
// read is unknown for the sum.
type cpuSpan struct {
	self, slotd, postgres                  time.Duration
	busy, total                            time.Duration // the whole machine
	noSelf, noSlotd, noPostgres, noMachine bool
}

// add adds the span from sample a to sample b.
func (s *cpuSpan) add(a, b cpuSample) {
	d := func(sum *time.Duration, unknown *bool, x, y time.Duration) {
		if x <= 0 || y <= 0 || y < x {
			*unknown = true
			return
		}
		*sum += y - x
	}
	d(&s.self, &s.noSelf, a.self, b.self)
	d(&s.slotd, &s.noSlotd, a.slotd, b.slotd)
	if a.postgres == nil || b.postgres == nil {
		s.noPostgres = true
		return
	}
	// Per backend: a connection opened during the span counts from zero,
	// one closed during it keeps what it spent before the end unseen.
	var pg time.Duration
	for pid, t := range b.postgres {
		pg += t - a.postgres[pid]
	}
	s.postgres += pg
	if b.total <= a.total || b.busy <= 0 {
		s.noMachine = true
		return
	}
	s.busy += b.busy - a.busy
	s.total += b.total - a.total
}

// perTurn is the span's CPU per turn.
func (s cpuSpan) perTurn(turns int64) CPU {
	if turns <= 0 {
		return CPU{}
	}
	per := func(d time.Duration, unknown bool) time.Duration {
		if unknown {
			return 0
		}
		return d / time.Duration(turns)
	}
	out := CPU{Bench: per(s.self, s.noSelf), Slotd: per(s.slotd, s.noSlotd), Postgres: per(s.postgres, s.noPostgres)}
	if !s.noPostgres && !s.noMachine && s.total > 0 {
		// The machine's busy time less what the bench process, slotd and
		// the backends spent is other work.
		out.Others = max(0, float64(s.busy-s.self-s.slotd-s.postgres)/float64(s.total))
	}
	return out
}

// scrape reads one unlabelled sample from a Prometheus /metrics page.
func scrape(ctx context.Context, metricsURL, name string) (float64, bool) {
	req, err := http.NewRequestWithContext(ctx, http.MethodGet, metricsURL, nil)
	if err != nil {
		return 0, false
	}
	resp, err := http.DefaultClient.Do(req)
	if err != nil {
		return 0, false
	}
	defer resp.Body.Close()
	sc := bufio.NewScanner(resp.Body)
	sc.Buffer(make([]byte, 64<<10), 1<<20)
	for sc.Scan() {
		if rest, ok := strings.CutPrefix(sc.Text(), name+" "); ok {
			v, err := strconv.ParseFloat(strings.TrimSpace(rest), 64)
			return v, err == nil
		}
	}
	return 0, false
}
