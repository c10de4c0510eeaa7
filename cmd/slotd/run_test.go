package main

import (
	"context"
	"errors"
	"net"
	"os"
	"os/exec"
	"strings"
	"syscall"
	"testing"
	"time"

	"google.golang.org/grpc"
	"google.golang.org/grpc/credentials/insecure"

	"github.com/slotd/slotd/internal/app/serving"
	"github.com/slotd/slotd/internal/testkit/dbtest"
	"github.com/slotd/slotd/internal/testkit/servertest"
)

// make run ends slotd when make gets SIGTERM (kill, a supervisor) or the
// terminal's Ctrl-C (SIGINT to the whole process group): no process of the
// group is left, the ports are free, and nothing but slotd's own log says
// anything went wrong.
func TestMakeRunStopsOnSignal(t *testing.T) {
	if testing.Short() {
		t.Skip("builds slotd and runs make")
	}
	if _, err := exec.LookPath("make"); err != nil {
		t.Fatal("make is needed to test make run")
	}
	gobin, err := exec.LookPath("go")
	if err != nil {
		t.Fatal(err)
	}
	dbURL := dbtest.NewDatabase(t)
	for _, sig := range []struct {
		name  string
		group bool // sent to the process group, as a terminal does
		sig   syscall.Signal
	}{{"SIGTERM to make", false, syscall.SIGTERM}, {"Ctrl-C", true, syscall.SIGINT}} {
		t.Run(sig.name, func(t *testing.T) {
			grpc, http, metrics := servertest.FreeAddr(t), servertest.FreeAddr(t), servertest.FreeAddr(t)
			cmd := exec.Command("make", "--no-print-directory", "run", "GO="+gobin)
			cmd.Dir = "../.."
			cmd.Env = append(os.Environ(), "SLOTD_TEST_DATABASE_URL="+dbtest.AdminURL(), "SLOTD_DATABASE_URL="+dbURL,
				"SLOTD_LISTEN="+grpc, "SLOTD_HTTP_LISTEN="+http, "SLOTD_METRICS_LISTEN="+metrics, "SLOTD_THROWAWAY_POSTGRES=")
			var out servertest.LogBuffer
			cmd.Stdout, cmd.Stderr = &out, &out
			cmd.SysProcAttr = &syscall.SysProcAttr{Setpgid: true}
			if err := cmd.Start(); err != nil {
				t.Fatal(err)
			}
			pgid := cmd.Process.Pid
			t.Cleanup(func() { _ = syscall.Kill(-pgid, syscall.SIGKILL) })
			exited := make(chan error, 1)
			go func() { exited <- cmd.Wait() }()

			deadline := time.Now().Add(2 * time.Minute) // the build, on a cold cache
			for !listening(grpc) {
				select {
				case err := <-exited:
					t.Fatalf("make run ended before slotd listened: %v\n%s", err, out.String())
				default:
				}
				if time.Now().After(deadline) {
					t.Fatalf("slotd did not listen on %s in time:\n%s", grpc, out.String())
				}
				time.Sleep(100 * time.Millisecond)
			}
			if !strings.Contains(out.String(), "slotd's database: ") {
				t.Errorf("make run does not say which database slotd uses:\n%s", out.String())
			}
			if !sig.group {
				// The shipped scripts run on their own clocks; make run's
				// slotd takes them as the in-process one does.
				awaitServing(t, grpc)
				r := runCLI(t, nil, "script", "run", "--addr", grpc, "../../integration/scripts/")
				if r.code != exitOK {
					t.Errorf("slotd script run --addr against make run: exit %d\n%s%s", r.code, r.stdout, r.stderr)
				}
			}

			target := pgid
			if sig.group {
				target = -pgid
			}
			if err := syscall.Kill(target, sig.sig); err != nil {
				t.Fatal(err)
			}
			select {
			case <-exited:
			case <-time.After(30 * time.Second):
				t.Fatalf("make run still runs 30s after %s:\n%s", sig.name, out.String())
			}
			// make is gone; so must be everything it started.
			gone := time.Now().Add(10 * time.Second)
			for syscall.Kill(-pgid, 0) == nil {
				if time.Now().After(gone) {
					t.Fatalf("a process of make run's group outlived it after %s:\n%s", sig.name, out.String())
				}
				time.Sleep(50 * time.Millisecond)
			}
			if err := syscall.Kill(-pgid, 0); !errors.Is(err, syscall.ESRCH) {
				t.Errorf("process group check: %v", err)
			}
			for _, addr := range []string{grpc, http, metrics} {
				if listening(addr) {
					t.Errorf("%s is still served after %s", addr, sig.name)
				}
			}
			log := out.String()
			for _, noise := range []string{"make: ***", "Error", `"level":"ERROR"`, "signal: "} {
				if strings.Contains(log, noise) {
					t.Errorf("after %s the output says %q:\n%s", sig.name, noise, log)
				}
			}
			if !strings.Contains(log, "slotd stopping") {
				t.Errorf("slotd did not stop gracefully after %s:\n%s", sig.name, log)
			}
		})
	}
}

// awaitServing waits until the slotd at addr is ready to take turns.
func awaitServing(t *testing.T, addr string) {
	t.Helper()
	conn, err := grpc.NewClient(addr, grpc.WithTransportCredentials(insecure.NewCredentials()))
	if err != nil {
		t.Fatal(err)
	}
	defer conn.Close()
	if err := serving.Await(context.Background(), conn, nil); err != nil {
		t.Fatalf("make run's slotd never became ready: %v", err)
	}
}

func listening(addr string) bool {
	c, err := net.DialTimeout("tcp", addr, 200*time.Millisecond)
	if err != nil {
		return false
	}
	c.Close()
	return true
}
