// Package scripttest plays conversation scripts as Go tests: each script a
// subtest that fails with the runner's report. It lives apart from package
// script so that programs using the runner do not link package testing.
package scripttest

import (
	"testing"

	"google.golang.org/grpc"

	"github.com/slotd/slotd/internal/script"
)

// Run plays every script at paths (files or folders) against conn, each as
// a parallel subtest of t named after the script; a script that fails
// fails its subtest with the runner's report, and a malformed file fails t
// with its file, line and field. r may be nil for a default Runner; its
// Conn is set to conn.
//
//	func TestScripts(t *testing.T) {
//		conn, _ := grpc.NewClient(addr, grpc.WithTransportCredentials(insecure.NewCredentials()))
//		scripttest.Run(t, conn, nil, "testdata/scripts")
//	}
func Run(t *testing.T, conn grpc.ClientConnInterface, r *script.Runner, paths ...string) {
	t.Helper()
	runner := script.Runner{}
	if r != nil {
		runner = *r
	}
	runner.Conn = conn
	runner.Record = false
	scripts, err := script.Load(paths...)
	for _, e := range script.NewReport(nil, err, 0).Broken {
		t.Errorf("malformed script: %v", e)
	}
	if len(scripts) == 0 && err == nil {
		t.Fatalf("no scripts at %v", paths)
	}
	for _, s := range scripts {
		t.Run(s.Name, func(t *testing.T) {
			if s.Skip != "" {
				t.Skip(s.Skip)
			}
			t.Parallel()
			res := runner.Run(t.Context(), s)
			if res.Failed() {
				t.Errorf("script %s failed:\n%s", s.Name, res.Text())
			}
		})
	}
}
