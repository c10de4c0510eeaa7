package main

import (
	"context"
	"errors"
	"flag"
	"fmt"
	"io"
	"log/slog"
	"os"
	"regexp"
	"strings"
	"time"

	"google.golang.org/grpc"
	"google.golang.org/grpc/credentials/insecure"
	healthpb "google.golang.org/grpc/health/grpc_health_v1"

	"github.com/slotd/slotd/internal/server"
	"github.com/slotd/slotd/script"
)

const scriptUsage = `usage: slotd script run [flags] PATH...

Plays conversation scripts (files, or folders of *.yaml) against slotd, each
in a conversation of its own, and reports per step what was expected and what
came. Exits non-zero when a script fails. The format is in docs/scripts.md.

flags:`

// scriptCommand dispatches "slotd script SUBCOMMAND".
func scriptCommand(ctx context.Context, args []string) error {
	if len(args) == 0 || args[0] != "run" {
		fmt.Fprintln(os.Stderr, scriptUsage[:strings.Index(scriptUsage, "\n\nflags:")])
		return errors.New(`"slotd script" needs the subcommand run`)
	}
	return scriptRun(ctx, args[1:], os.Stdout, os.Stderr)
}

func envOr(name, def string) string {
	if v := os.Getenv(name); v != "" {
		return v
	}
	return def
}

func scriptRun(ctx context.Context, args []string, stdout, stderr io.Writer) error {
	fs := flag.NewFlagSet("slotd script run", flag.ContinueOnError)
	fs.SetOutput(stderr)
	fs.Usage = func() {
		fmt.Fprintln(stderr, scriptUsage)
		fs.PrintDefaults()
	}
	addr := fs.String("addr", envOr("SLOTD_ADDR", "127.0.0.1:50051"), "slotd's gRPC address (env SLOTD_ADDR)")
	dial := addDialFlags(fs)
	inProcess := fs.Bool("in-process", false, "start slotd in this process on a free port: on Postgres when SLOTD_DATABASE_URL is set, else on the memory store")
	contracts := fs.String("contracts", envOr("SLOTD_CONTRACTS", "./contracts"), "contracts folder for --in-process (env SLOTD_CONTRACTS)")
	tenantKey := fs.String("tenant-key", os.Getenv("SLOTD_TENANT_KEY"), "API key sent as \"authorization: Bearer KEY\" (env SLOTD_TENANT_KEY)")
	parallel := fs.Int("parallel", 1, "how many scripts to play at once")
	keepGoing := fs.Bool("keep-going", false, "play the rest of a script after a failed step")
	run := fs.String("run", "", "play only scripts whose name or file matches this regular expression")
	junit := fs.String("junit", "", "also write the results as JUnit XML to this file")
	record := fs.Bool("record", false, "play without checking and write each response into the script as its expectations")
	timeout := fs.Duration("timeout", 10*time.Second, "bound on each call")
	verbose := fs.Bool("v", false, "list passing scripts and every step")

	// Flags may come after the paths too: slotd script run scripts/ --junit out.xml.
	var paths []string
	for {
		if err := fs.Parse(args); err != nil {
			if errors.Is(err, flag.ErrHelp) {
				return nil
			}
			return err
		}
		if fs.NArg() == 0 {
			break
		}
		paths = append(paths, fs.Arg(0))
		args = fs.Args()[1:]
	}
	if len(paths) == 0 {
		fs.Usage()
		return errors.New("no script files or folders given")
	}
	if *parallel < 1 {
		return errors.New("--parallel must be at least 1")
	}
	var filter *regexp.Regexp
	if *run != "" {
		var err error
		if filter, err = regexp.Compile(*run); err != nil {
			return fmt.Errorf("--run: %w", err)
		}
	}
	explicitAddr := false
	fs.Visit(func(f *flag.Flag) { explicitAddr = explicitAddr || f.Name == "addr" })
	if *inProcess && explicitAddr {
		return errors.New("give --addr or --in-process, not both")
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
		return fmt.Errorf("no script matches --run %q", *run)
	}

	target := *addr
	if *inProcess {
		a, stop, err := startInProcess(ctx, *contracts, stderr)
		if err != nil {
			return err
		}
		defer stop()
		target = a
	}
	creds, err := dial.credentials()
	if err != nil {
		return err
	}
	if *inProcess {
		// The in-process slotd listens on loopback in plaintext.
		creds = grpc.WithTransportCredentials(insecure.NewCredentials())
	}
	conn, err := grpc.NewClient(target, creds)
	if err != nil {
		return fmt.Errorf("slotd address %q: %w", target, err)
	}
	defer conn.Close()

	runner := &script.Runner{Conn: conn, TenantKey: *tenantKey, Parallel: *parallel, KeepGoing: *keepGoing,
		Timeout: *timeout, Record: *record}
	results := runner.RunAll(ctx, scripts)
	report := script.NewReport(results, loadErr, time.Since(start))

	var recordErr error
	if *record {
		var written []string
		written, recordErr = script.Record(results)
		for _, f := range written {
			fmt.Fprintf(stdout, "recorded %s\n", f)
		}
	}
	report.WriteText(stdout, *verbose)
	if *junit != "" {
		if err := writeJUnit(*junit, report); err != nil {
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
func startInProcess(ctx context.Context, contracts string, stderr io.Writer) (string, func(), error) {
	// SLOTD_API_KEYS makes --tenant-key meaningful in-process too.
	// Scripts play conversations at the clocks they name.
	cfg := server.Config{Listen: "127.0.0.1:0", Contracts: contracts, Store: "memory", APIKeys: os.Getenv("SLOTD_API_KEYS"),
		TrustClientClock: true}
	if url := os.Getenv("SLOTD_DATABASE_URL"); url != "" {
		cfg.Store, cfg.DatabaseURL = "postgres", url
		fmt.Fprintln(stderr, "slotd script: in-process slotd on Postgres (SLOTD_DATABASE_URL)")
	} else {
		fmt.Fprintln(stderr, "slotd script: in-process slotd on the memory store, as SLOTD_DATABASE_URL is not set")
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
	health := healthpb.NewHealthClient(conn)
	deadline := time.Now().Add(30 * time.Second)
	for {
		resp, err := health.Check(ctx, &healthpb.HealthCheckRequest{})
		if err == nil && resp.Status == healthpb.HealthCheckResponse_SERVING {
			return srv.Addr(), stop, nil
		}
		if time.Now().After(deadline) || ctx.Err() != nil {
			stop()
			return "", nil, errors.New("in-process slotd did not become ready within 30s (is Postgres at SLOTD_DATABASE_URL reachable?)")
		}
		time.Sleep(50 * time.Millisecond)
	}
}
