package integration

import (
	"context"
	"fmt"
	"net/url"
	"os"
	"os/exec"
	"strings"
	"sync"
	"testing"
	"time"

	"google.golang.org/grpc"
	"google.golang.org/grpc/credentials/insecure"

	slotdv1 "github.com/slotd/slotd/api/proto/slotd/v1"
	"github.com/slotd/slotd/internal/testkit/dbtest"
)

// viaPooler is a new migrated database's URL through a fresh PgBouncer in
// transaction mode, with the query parameters of kv (name, value, ...).
func viaPooler(t *testing.T, kv ...string) string {
	t.Helper()
	u, err := url.Parse(dbtest.StartPgBouncer(t).URL(t, dbtest.NewDatabase(t)))
	if err != nil {
		t.Fatal(err)
	}
	q := u.Query()
	for i := 0; i < len(kv); i += 2 {
		q.Set(kv[i], kv[i+1])
	}
	u.RawQuery = q.Encode()
	return u.String()
}

// slotd serve behind PgBouncer in transaction mode, with the timeouts in
// its URL as an operator writes them and the exec mode the docs give:
// it becomes ready (the schema is migrated: no advisory lock is taken),
// and concurrent conversations' turns, retries included, are each applied
// once.
func TestServeBehindPgBouncer(t *testing.T) {
	t.Parallel()
	via := viaPooler(t, "default_query_exec_mode", "cache_describe",
		"lock_timeout", "3s", "statement_timeout", "5s", "idle_in_transaction_session_timeout", "15s")
	p := startProcess(t, "--store", "postgres", "--database-url", via)
	conn, err := grpc.NewClient(p.addr, grpc.WithTransportCredentials(insecure.NewCredentials()))
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { conn.Close() })
	client := slotdv1.NewSlotServiceClient(conn)
	args := []string{`{"card_last4": "•• 4417"}`, `{"operation_date": "2026-08-22", "amount": "1 200,50 ₽"}`, `{"reason": "Duplicate"}`}
	const conversations = 16
	var wg sync.WaitGroup
	for c := range conversations {
		wg.Go(func() {
			for i, a := range args {
				req := &slotdv1.TurnRequest{ConversationId: fmt.Sprintf("conv-%02d", c), Tool: "bank.open_dispute",
					TurnId: fmt.Sprintf("turn-%d", i), Arguments: structOf(t, a), Now: nowPB()}
				for try := range 2 { // the second is the orchestrator's retry
					ctx, cancel := context.WithTimeout(context.Background(), 10*time.Second)
					resp, err := client.Turn(ctx, req)
					cancel()
					if err != nil {
						t.Errorf("conversation %d turn %d (try %d) behind PgBouncer: %v", c, i, try, err)
						return
					}
					if v := resp.GetSession().GetVersion(); v != int64(i+1) {
						t.Errorf("conversation %d turn %d (try %d): session version %d, want %d", c, i, try, v, i+1)
					}
				}
			}
		})
	}
	wg.Wait()
}

// A startup parameter the pooler refuses keeps slotd from becoming ready,
// and its log says which one, in the pooler's words, and what to do.
func TestServeLogsRefusedStartupParameter(t *testing.T) {
	t.Parallel()
	prlimit, err := exec.LookPath("prlimit")
	if err != nil {
		t.Fatal("this test runs slotd under prlimit (util-linux), which is not on PATH")
	}
	via := viaPooler(t, "search_path", "public")
	_, log := launch(t, prlimit, buildSlotd(t), nil, []string{"--store", "postgres", "--database-url", via})
	deadline := time.Now().Add(15 * time.Second)
	for {
		b, _ := os.ReadFile(log)
		text := string(b)
		if strings.Contains(text, "postgres not ready") {
			for _, want := range []string{"unsupported startup parameter", "search_path", "ignore_startup_parameters"} {
				if !strings.Contains(text, want) {
					t.Errorf("the log lacks %q:\n%s", want, tail(text, 2000))
				}
			}
			return
		}
		if time.Now().After(deadline) {
			t.Fatalf("no 'postgres not ready' line within 15s:\n%s", tail(text, 2000))
		}
		time.Sleep(100 * time.Millisecond)
	}
}
