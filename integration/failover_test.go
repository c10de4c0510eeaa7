package integration

import (
	"context"
	"fmt"
	"sort"
	"sync"
	"sync/atomic"
	"testing"
	"time"

	"google.golang.org/grpc/codes"
	"google.golang.org/grpc/status"

	slotdv1 "github.com/slotd/slotd/api/proto/slotd/v1"
	"github.com/slotd/slotd/internal/app/server"
	"github.com/slotd/slotd/internal/testkit/dbtest"
	"github.com/slotd/slotd/internal/testkit/servertest"
)

// TestFailoverLosesNoAcknowledgedTurn kills slotd's Postgres primary under
// load and promotes its synchronous standby. slotd, given both hosts in one
// URL with target_session_attrs=read-write, must carry on by itself: no
// restart, no new configuration. Every turn an orchestrator was answered OK
// for is on the promoted standby, and no turn is applied twice, though
// orchestrators retry the same turn_id across the switch.
func TestFailoverLosesNoAcknowledgedTurn(t *testing.T) {
	t.Parallel()
	deadline := time.Now().Add(50 * time.Second)
	ctx, cancel := context.WithDeadline(context.Background(), deadline)
	t.Cleanup(cancel)

	primary, standby, url := startReplicated(ctx, t)
	inst := startServer(t, url, contractsDir(t))

	const workers, turns = 16, 40
	var (
		mu         sync.Mutex
		acked      = map[string]*slotdv1.TurnResponse{} // turn_id → the OK answer
		ackedEarly int                                  // of them, answered before the kill
		killing    time.Time                            // zero until the primary is being killed
		killedAt   time.Time                            // zero until it is dead
		firstAfter time.Time                            // the first OK answer to a call sent after its death
		failed     = map[codes.Code]int{}               // failed calls since the kill began, by code
		replayed   int                                  // OK answers that were a stored response
	)
	observe := func(turnID string, a attempt) {
		mu.Lock()
		defer mu.Unlock()
		if a.err != nil {
			if !killing.IsZero() {
				failed[status.Code(a.err)]++
			}
			return
		}
		acked[turnID] = a.resp
		if killedAt.IsZero() {
			ackedEarly++
		} else if a.sent.After(killedAt) && (firstAfter.IsZero() || a.answered.Before(firstAfter)) {
			firstAfter = a.answered
		}
		if a.replayed {
			replayed++
		}
	}
	var done atomic.Int64
	var wg sync.WaitGroup
	convs := make([]string, workers)
	for i := range convs {
		convs[i] = fmt.Sprintf("failover-%02d", i)
		wg.Add(1)
		go func() {
			defer wg.Done()
			for j := 1; j <= turns; j++ {
				req := manySlotsTurn(t, convs[i], j)
				if _, ok := landTurn(t, func() slotdv1.SlotServiceClient { return inst.client }, req, deadline,
					func(a attempt) { observe(req.TurnId, a) }); !ok {
					return
				}
				done.Add(1)
			}
		}()
	}

	// Kill the primary once a third of the turns are in, then promote.
	for done.Load() < workers*turns/3 {
		if ctx.Err() != nil {
			wg.Wait()
			t.Fatalf("only %d of %d turns landed before the deadline, with the primary alive", done.Load(), workers*turns)
		}
		time.Sleep(time.Millisecond)
	}
	mu.Lock()
	killing = time.Now()
	mu.Unlock()
	primary.kill(t)
	mu.Lock()
	killedAt = time.Now()
	mu.Unlock()
	standby.promote(t)
	promoted := time.Since(killedAt)
	wg.Wait()
	if t.Failed() {
		return
	}
	servertest.WaitServing(t, inst.conn)

	mu.Lock()
	defer mu.Unlock()
	if firstAfter.IsZero() {
		t.Fatal("no turn succeeded after the kill")
	}
	nFailed := 0
	for _, n := range failed {
		nFailed += n
	}
	if nFailed == 0 {
		t.Error("no call failed after the kill: the test did not test anything")
	}
	if ackedEarly >= workers*turns {
		t.Error("every turn was in before the kill: the test did not test anything")
	}
	// The primary is dead when pg_ctl's immediate stop returns; promotion
	// starts then, as soon as a failover manager could start it.
	t.Logf("recovery: %s from the primary's death to the first turn sent after it that landed (%s from the start of the kill, which took %s; pg_ctl promote returned after %s)",
		firstAfter.Sub(killedAt).Round(time.Millisecond), firstAfter.Sub(killing).Round(time.Millisecond),
		killedAt.Sub(killing).Round(time.Millisecond), promoted.Round(time.Millisecond))
	t.Logf("%d turns acknowledged before the kill, %d after; %d calls failed from the kill on (%s), all retryable; replays of a stored response: %d",
		ackedEarly, len(acked)-ackedEarly, nFailed, codeCounts(failed), replayed)

	// Everything is read from the promoted standby: the old primary is gone.
	assertAppliedOnce(ctx, t, standby.databaseURL("slotd"), convs, turns, acked)
}

// assertAppliedOnce checks, in the database at url, that every turn of each
// conversation (of manySlotsTurn) was applied exactly once, in order, and
// that every acknowledged answer is what was stored.
func assertAppliedOnce(ctx context.Context, t *testing.T, url string, convs []string, turns int, acked map[string]*slotdv1.TurnResponse) {
	t.Helper()
	pool := dbtest.Connect(t, url)
	var inRecovery bool
	if err := pool.QueryRow(ctx, `SELECT pg_is_in_recovery()`).Scan(&inRecovery); err != nil || inRecovery {
		t.Fatalf("the database checked is in recovery (%v, %v): want the promoted primary", inRecovery, err)
	}
	for _, conv := range convs {
		rows, err := pool.Query(ctx, `SELECT t.turn_id, t.version, count(c.slot), coalesce(min(c.version), 0),
				coalesce(min(c.slot), ''), coalesce(min(c.decision), ''), coalesce(min(c.new_value #>> '{}'), '')
			FROM turns t LEFT JOIN slot_changes c ON c.session_id = t.session_id AND c.turn_id = t.turn_id
			WHERE t.conversation_id = $1 GROUP BY t.turn_id, t.version ORDER BY t.version, t.turn_id`, conv)
		if err != nil {
			t.Fatal(err)
		}
		type stored struct {
			turnID                 string
			version, changeVersion int64
			changes                int
			slot, decision, value  string
		}
		var got []stored
		for rows.Next() {
			var s stored
			if err := rows.Scan(&s.turnID, &s.version, &s.changes, &s.changeVersion, &s.slot, &s.decision, &s.value); err != nil {
				t.Fatal(err)
			}
			got = append(got, s)
		}
		if err := rows.Err(); err != nil {
			t.Fatal(err)
		}
		if len(got) != turns {
			t.Errorf("%s: %d turns stored, want %d", conv, len(got), turns)
		}
		for i, s := range got {
			j := i + 1
			want := stored{turnID: fmt.Sprintf("%s-%02d", conv, j), version: int64(j), changeVersion: int64(j), changes: 1,
				slot: fmt.Sprintf("slot_%02d", (j-1)%20+1), decision: "FILLED", value: fmt.Sprintf("value %d", j)}
			if j > 20 {
				want.decision = "OVERWRITTEN"
			}
			if s != want {
				t.Errorf("%s: stored turn %d = %+v, want %+v", conv, j, s, want)
			}
		}
		for j := 1; j <= turns; j++ {
			id := fmt.Sprintf("%s-%02d", conv, j)
			resp, ok := acked[id]
			if !ok {
				t.Errorf("%s: never acknowledged", id)
				continue
			}
			if v := resp.GetSession().GetVersion(); v != int64(j) {
				t.Errorf("%s: acknowledged at version %d, want %d", id, v, j)
			}
		}
		var version int64
		if err := pool.QueryRow(ctx, `SELECT version FROM sessions WHERE conversation_id = $1 AND status = 'active'`, conv).Scan(&version); err != nil {
			t.Fatalf("%s: the active session: %v", conv, err)
		}
		if version != int64(turns) {
			t.Errorf("%s: session at version %d, want %d", conv, version, turns)
		}
	}
}

// startReplicated starts a primary and a streaming standby of it, with a
// database slotd, and returns slotd's URL naming both. An acknowledged
// commit is one the standby has written too: the primary waits for it
// (synchronous_commit=on, synchronous_standby_names) before it answers.
// These settings are the primary's own, given at its start, not in the
// postgresql.conf that pg_basebackup copies: the promoted standby must not
// wait for a standby it does not have.
func startReplicated(ctx context.Context, t *testing.T) (primary, standby *cluster, url string) {
	t.Helper()
	primary = startCluster(t, "wal_level=replica", "max_wal_senders=4", "max_replication_slots=4",
		"synchronous_commit=on", "synchronous_standby_names="+standbyName)
	standby = primary.startStandby(t, standbyName)
	primary.waitSyncStandby(ctx, t, standbyName)
	admin := dbtest.Connect(t, primary.url())
	defer admin.Close()
	if _, err := admin.Exec(ctx, "CREATE DATABASE slotd"); err != nil {
		t.Fatal(err)
	}
	url = fmt.Sprintf("postgres://postgres@127.0.0.1:%d,127.0.0.1:%d/slotd?sslmode=disable&target_session_attrs=read-write",
		primary.port, standby.port)
	return primary, standby, url
}

// notReplicated is the server's count of turns not known to be replicated.
func notReplicated(t *testing.T, srv *server.Server) float64 {
	t.Helper()
	fams, err := srv.Metrics().Registry().Gather()
	if err != nil {
		t.Fatal(err)
	}
	for _, f := range fams {
		if f.GetName() == "slotd_turns_not_replicated_total" {
			return f.GetMetric()[0].GetCounter().GetValue()
		}
	}
	t.Fatal("no slotd_turns_not_replicated_total")
	return 0
}

// standbyName is the standby's application_name and replication slot.
const standbyName = "slotd_standby"

// waitFor polls cond for up to ten seconds, and fails saying what it
// waited for.
func waitFor(t *testing.T, what string, cond func() bool) {
	t.Helper()
	for deadline := time.Now().Add(10 * time.Second); !cond(); time.Sleep(20 * time.Millisecond) {
		if time.Now().After(deadline) {
			t.Fatalf("waited 10s for %s", what)
		}
	}
}

// codeCounts is "Unavailable×12, Aborted×1": the codes of failed calls.
func codeCounts(m map[codes.Code]int) string {
	var parts []string
	for c, n := range m {
		parts = append(parts, fmt.Sprintf("%s×%d", c, n))
	}
	sort.Strings(parts)
	if len(parts) == 0 {
		return "none"
	}
	return fmt.Sprint(parts)
}

// TestFailoverAcknowledgesNothingTheStandbyLacks takes the synchronous
// standby away, so that a turn's COMMIT is written on the primary alone and
// waits for the standby. slotd must not acknowledge such a turn, or a
// failover right after would lose it: not when the call's deadline ends
// the wait, and not when an operator cancels the waiting backend, which
// Postgres answers with a warning and a successful COMMIT ("The transaction
// has already committed locally, but might not have been replicated").
// Once the standby is back, the retries of the same turn_ids return the
// stored responses, and the promoted standby has every acknowledged turn.
func TestFailoverAcknowledgesNothingTheStandbyLacks(t *testing.T) {
	t.Parallel()
	deadline := time.Now().Add(50 * time.Second)
	ctx, cancel := context.WithDeadline(context.Background(), deadline)
	t.Cleanup(cancel)
	primary, standby, url := startReplicated(ctx, t)
	inst := startServer(t, url, contractsDir(t))
	admin := dbtest.Connect(t, primary.url())
	client := func() slotdv1.SlotServiceClient { return inst.client }

	convs := []string{"standby-away-deadline", "standby-away-cancel"}
	acked := map[string]*slotdv1.TurnResponse{}
	land := func(conv string, j int) attempt {
		t.Helper()
		req := manySlotsTurn(t, conv, j)
		a, ok := landTurn(t, client, req, deadline, nil)
		if !ok {
			t.FailNow()
		}
		acked[req.TurnId] = a.resp
		return a
	}
	for _, conv := range convs {
		land(conv, 1)
	}
	standby.stop(t)

	// The call's deadline ends slotd's wait: a retryable failure.
	callCtx, callCancel := context.WithTimeout(ctx, 2*time.Second)
	resp, err := inst.client.Turn(callCtx, manySlotsTurn(t, convs[0], 2))
	callCancel()
	if err == nil {
		t.Fatalf("%s turn 2 was acknowledged (version %d) while the synchronous standby was away", convs[0], resp.GetSession().GetVersion())
	}
	if !retryable(t, err) {
		t.Fatalf("%s turn 2 while the standby was away: %v; want a retryable failure", convs[0], err)
	}

	// As the driver closes that connection it cancels its query, which
	// ends the commit's wait: committed on the primary, answered to no one.
	// The next commit to wait is the next turn's.
	syncWaits := func() int {
		t.Helper()
		var n int
		if err := admin.QueryRow(ctx, `SELECT count(*) FROM pg_stat_activity WHERE wait_event = 'SyncRep'`).Scan(&n); err != nil {
			t.Fatalf("commits waiting for the standby: %v", err)
		}
		return n
	}
	waitFor(t, "no commit to wait for the standby after the call's deadline", func() bool { return syncWaits() == 0 })

	// An operator cancels a commit stuck waiting for the standby.
	type outcome struct {
		resp *slotdv1.TurnResponse
		err  error
	}
	done := make(chan outcome, 1)
	go func() {
		callCtx, callCancel := context.WithTimeout(ctx, 10*time.Second)
		defer callCancel()
		resp, err := inst.client.Turn(callCtx, manySlotsTurn(t, convs[1], 2))
		done <- outcome{resp, err}
	}()
	waitFor(t, "the turn's commit to wait for the standby", func() bool { return syncWaits() > 0 })
	if _, err := admin.Exec(ctx, `SELECT pg_cancel_backend(pid) FROM pg_stat_activity WHERE wait_event = 'SyncRep'`); err != nil {
		t.Fatal(err)
	}
	o := <-done
	if o.err == nil {
		t.Fatalf("%s turn 2 was acknowledged (version %d) after its wait for the standby was cancelled", convs[1], o.resp.GetSession().GetVersion())
	}
	if status.Code(o.err) != codes.Unavailable || !retryable(t, o.err) {
		t.Fatalf("%s turn 2 after its wait for the standby was cancelled: %v; want a retryable UNAVAILABLE", convs[1], o.err)
	}
	// The metrics tell it from the database being away.
	if n := notReplicated(t, inst.srv); n != 1 {
		t.Errorf("slotd_turns_not_replicated_total = %v after one cancelled wait for the standby, want 1", n)
	}

	// Its retry, while the standby is still away, is no acknowledgement
	// either: a replay locks the conversation, so its COMMIT waits for the
	// standby to have all that came before it, the stored turn included.
	callCtx, callCancel = context.WithTimeout(ctx, 2*time.Second)
	resp, err = inst.client.Turn(callCtx, manySlotsTurn(t, convs[1], 2))
	callCancel()
	if err == nil || !retryable(t, err) {
		t.Fatalf("%s turn 2 retried while the standby was away: %v (version %d); want a retryable failure",
			convs[1], err, resp.GetSession().GetVersion())
	}

	// Both turns committed on the primary: once the standby has them, the
	// retries are answered from what was stored.
	standby.start(t)
	primary.waitSyncStandby(ctx, t, standbyName)
	for _, conv := range convs {
		if a := land(conv, 2); !a.replayed || a.resp.GetSession().GetVersion() != 2 {
			t.Errorf("%s turn 2 once the standby was back: replayed %v, version %d; want the stored response of version 2",
				conv, a.replayed, a.resp.GetSession().GetVersion())
		}
	}

	admin.Close()
	primary.kill(t)
	standby.promote(t)
	for _, conv := range convs {
		land(conv, 3)
	}
	assertAppliedOnce(ctx, t, standby.databaseURL("slotd"), convs, 3, acked)
}
