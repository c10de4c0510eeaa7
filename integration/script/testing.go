package script

import (
	"testing"

	"google.golang.org/grpc"
)

// Test plays every script at paths (files or folders) against conn, each as
// a parallel subtest of t named after the script; a script that fails
// fails its subtest with the runner's report, and a malformed file fails t
// with its file, line and field. r may be nil for a default Runner; its
// Conn is set to conn.
//
//	func TestScripts(t *testing.T) {
//		conn, _ := grpc.NewClient(addr, grpc.WithTransportCredentials(insecure.NewCredentials()))
//		script.Test(t, conn, nil, "testdata/scripts")
//	}
func Test(t *testing.T, conn grpc.ClientConnInterface, r *Runner, paths ...string) {
	t.Helper()
	runner := Runner{}
	if r != nil {
		runner = *r
	}
	runner.Conn = conn
	runner.Record = false
	scripts, err := Load(paths...)
	for _, e := range flatten(err) {
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
