package main

import (
	"context"
	"fmt"
	"io"
	"log/slog"
	"os"
	"regexp"
	"time"

	"google.golang.org/grpc"
	"google.golang.org/grpc/credentials/insecure"

	"github.com/slotd/slotd/internal/app/server"
	"github.com/slotd/slotd/internal/app/serving"
	"github.com/slotd/slotd/internal/script"
	"github.com/slotd/slotd/internal/session"
)

var scriptCommand = &command{
	name:    "script",
	summary: "play conversation scripts against slotd and check each step",
	subs:    []*command{scriptRunCommand},
}

var scriptRunCommand = &command{
	name:    "run",
	args:    "PATH...",
	summary: "play scripts (files, or folders of *.yaml) and report what differed",
	about: `Plays conversation scripts (files, or folders of *.yaml, such as
integration/scripts) against slotd, each in a conversation of its own, and
reports per step what was expected and what came. Exits 1 when a script
fails. With --in-process it starts its own slotd (on Postgres when
--database-url is given, else on the memory store). The format is in
docs/scripts.md.

With --baseline DIR it checks a contract change instead: it plays every
script twice in this process, on the memory store, with the contracts of
DIR (those in use) and with those of --contracts (the next ones), every
step whatever came before it, and reports the steps that pass with DIR and
fail with --contracts. It exits 1 when the change breaks a step.`,
	setup: func(fs *flags) runFunc {
		var o scriptOptions
		fs.String(&o.addr, "addr", "SLOTD_ADDR", "127.0.0.1:50051", "slotd's gRPC address")
		o.dial = addDialFlags(fs)
		fs.Bool(&o.inProcess, "in-process", "SLOTD_SCRIPT_IN_PROCESS", false, "start slotd in this process on a free port instead of calling --addr")
		fs.String(&o.contracts, "contracts", "SLOTD_CONTRACTS", "./contracts", "contracts folder for --in-process")
		fs.String(&o.databaseURL, "database-url", "SLOTD_DATABASE_URL", "", "Postgres for --in-process; the memory store without it")
		fs.String(&o.apiKeys, "api-keys", "SLOTD_API_KEYS", "", "tenant keys of the --in-process slotd, tenant:key,...")
		fs.String(&o.tenantKey, "tenant-key", "SLOTD_TENANT_KEY", "", "API key sent as \"authorization: Bearer KEY\"")
		fs.Int(&o.parallel, "parallel", "SLOTD_SCRIPT_PARALLEL", 1, "how many scripts to play at once")
		fs.Bool(&o.keepGoing, "keep-going", "SLOTD_SCRIPT_KEEP_GOING", false, "play the rest of a script after a failed step")
		fs.String(&o.run, "run", "SLOTD_SCRIPT_RUN", "", "play only scripts whose name or file matches this regular expression")
		fs.String(&o.junit, "junit", "SLOTD_SCRIPT_JUNIT", "", "also write the results as JUnit XML to this file")
		fs.Bool(&o.record, "record", "SLOTD_SCRIPT_RECORD", false, "play without checking and write each response into the script as its expectations")
		fs.Duration(&o.timeout, "timeout", "SLOTD_SCRIPT_TIMEOUT", 10*time.Second, "bound on each call")
		fs.Bool(&o.verbose, "v", "SLOTD_SCRIPT_VERBOSE", false, "list passing scripts and every step")
		fs.String(&o.baseline, "baseline", "SLOTD_SCRIPT_BASELINE", "", "contracts in use: report the steps that pass with them and fail with --contracts")
		return func(ctx context.Context, c *cli, paths []string) error {
			o.explicitAddr = fs.onCommandLine("addr")
			return scriptRun(ctx, c, o, paths)
		}
	},
}

// scriptOptions are slotd script run's flags.
type scriptOptions struct {
	addr, contracts, databaseURL, apiKeys, tenantKey, run, junit string
	// baseline is the contracts folder a replay compares --contracts with.
	baseline                                            string
	dial                                                *dialFlags
	inProcess, keepGoing, record, verbose, explicitAddr bool
	parallel                                            int
	timeout                                             time.Duration
}

func scriptRun(ctx context.Context, c *cli, o scriptOptions, paths []string) error {
	if len(paths) == 0 {
		return usagef("give the script files or folders to play, e.g. integration/scripts")
	}
	if o.parallel < 1 {
		return usagef("--parallel must be at least 1")
	}
	var filter *regexp.Regexp
	if o.run != "" {
		var err error
		if filter, err = regexp.Compile(o.run); err != nil {
			return usagef("--run: %v", err)
		}
	}
	if o.inProcess && o.explicitAddr {
		return usagef("give --addr or --in-process, not both")
	}
	if o.baseline != "" && (o.explicitAddr || o.record || o.junit != "") {
		return usagef("--baseline plays the scripts in this process and checks them: not with --addr, --record or --junit")
	}

	start := time.Now()
	scripts, loadErr := script.Load(paths...)
	if filter != nil {
		kept := scripts[:0]
		for _, s := range scripts {
			if filter.MatchString(s.Name) || filter.MatchString(s.File) {
				kept = append(kept, s)
			}
		}
		scripts = kept
	}
	if len(scripts) == 0 && loadErr == nil {
		return fmt.Errorf("no script matches --run %q", o.run)
	}

	if o.baseline != "" {
		if loadErr != nil {
			return loadErr
		}
		return scriptReplay(ctx, c, o, scripts)
	}

	target := o.addr
	creds, err := o.dial.credentials()
	if err != nil {
		return err
	}
	if o.inProcess {
		a, stop, err := startInProcess(ctx, o, c.stderr)
		if err != nil {
			return err
		}
		defer stop()
		// The in-process slotd listens on loopback in plaintext.
		target, creds = a, grpc.WithTransportCredentials(insecure.NewCredentials())
	}
	conn, err := grpc.NewClient(target, creds)
	if err != nil {
		return usagef("--addr %q: %v", target, err)
	}
	defer conn.Close()

	runner := &script.Runner{Conn: conn, TenantKey: o.tenantKey, Parallel: o.parallel, KeepGoing: o.keepGoing,
		Timeout: o.timeout, Record: o.record}
	results := runner.RunAll(ctx, scripts)
	report := script.NewReport(results, loadErr, time.Since(start))

	var recordErr error
	if o.record {
		var written []string
		written, recordErr = script.Record(results)
		for _, f := range written {
			fmt.Fprintf(c.stdout, "recorded %s\n", f)
		}
	}
	report.WriteText(c.stdout, o.verbose)
	if o.junit != "" {
		if err := writeJUnit(o.junit, report); err != nil {
			return err
		}
	}
	if recordErr != nil {
		return fmt.Errorf("--record: %w", recordErr)
	}
	if n := report.Failed(); n > 0 {
		return fmt.Errorf("%d of %d scripts failed", n, report.Failed()+report.Passed())
	}
	return nil
}

// scriptReplay plays scripts with the contracts of o.baseline and of
// o.contracts, in this process on the memory store, and reports the steps
// the change breaks.
func scriptReplay(ctx context.Context, c *cli, o scriptOptions, scripts []*script.Script) error {
	o.databaseURL, o.apiKeys, o.tenantKey = "", "", ""
	var plays [2][]*script.Result
	for i, dir := range []string{o.baseline, o.contracts} {
		o.contracts = dir
		addr, stop, err := startInProcess(ctx, o, io.Discard)
		if err != nil {
			return fmt.Errorf("contracts %s: %w", dir, err)
		}
		conn, err := grpc.NewClient(addr, grpc.WithTransportCredentials(insecure.NewCredentials()))
		if err != nil {
			stop()
			return err
		}
		runner := &script.Runner{Conn: conn, Parallel: o.parallel, KeepGoing: true, Timeout: o.timeout}
		plays[i] = runner.RunAll(ctx, scripts)
		conn.Close()
		stop()
	}
	cmp := script.Compare(plays[0], plays[1])
	cmp.WriteText(c.stdout)
	if n := len(cmp.Broken); n > 0 {
		return fmt.Errorf("the contracts of %s break %d script steps that pass with %s", o.contracts, n, o.baseline)
	}
	return nil
}

func writeJUnit(path string, report *script.Report) error {
	f, err := os.Create(path)
	if err != nil {
		return fmt.Errorf("--junit: %w", err)
	}
	if err := report.WriteJUnit(f); err != nil {
		f.Close()
		return fmt.Errorf("--junit: %w", err)
	}
	return f.Close()
}

// startInProcess runs slotd inside this process on a free loopback port and
// waits until it serves.
func startInProcess(ctx context.Context, o scriptOptions, stderr io.Writer) (string, func(), error) {
	// Scripts play conversations at the clocks they name.
	cfg := server.Config{Listen: "127.0.0.1:0", Contracts: o.contracts, Store: "memory", APIKeys: o.apiKeys,
		Session: session.Config{TrustClientClock: true}}
	if o.databaseURL != "" {
		cfg.Store, cfg.DatabaseURL = "postgres", o.databaseURL
		fmt.Fprintln(stderr, "slotd script: in-process slotd on Postgres (--database-url)")
	} else {
		fmt.Fprintln(stderr, "slotd script: in-process slotd on the memory store, as no --database-url (SLOTD_DATABASE_URL) is given")
	}
	// The server's own warnings would repeat the line above; errors still show.
	log := slog.New(slog.NewTextHandler(stderr, &slog.HandlerOptions{Level: slog.LevelError}))
	srv, err := server.New(cfg, log)
	if err != nil {
		return "", nil, fmt.Errorf("in-process slotd: %w", err)
	}
	ctx, cancel := context.WithCancel(ctx)
	done := make(chan error, 1)
	go func() { done <- srv.Run(ctx) }()
	stop := func() {
		cancel()
		<-done
	}
	conn, err := grpc.NewClient(srv.Addr(), grpc.WithTransportCredentials(insecure.NewCredentials()))
	if err != nil {
		stop()
		return "", nil, err
	}
	defer conn.Close()
	if err := serving.Await(ctx, conn, nil); err != nil {
		stop()
		return "", nil, fmt.Errorf("in-process %w (is Postgres at --database-url reachable?)", err)
	}
	return srv.Addr(), stop, nil
}
