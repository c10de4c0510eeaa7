package integration

import (
	"context"
	"fmt"
	"sync"
	"testing"
	"time"

	"github.com/jackc/pgx/v5"
	"google.golang.org/grpc"
	"google.golang.org/grpc/credentials/insecure"
	"google.golang.org/protobuf/types/known/structpb"
	"google.golang.org/protobuf/types/known/timestamppb"

	slotdv1 "github.com/slotd/slotd/api/proto/slotd/v1"
	"github.com/slotd/slotd/contract"
	"github.com/slotd/slotd/internal/session/sessiontest"
	"github.com/slotd/slotd/internal/testkit/dbtest"
)

// A rolling deploy: two slotd processes on one database, one serving the
// dispute example and one its v2 (a new required slot, a retired enum
// value, a removed slot, a slot made irreversible), 20 conversations whose
// turns alternate between them. With pin every session finishes on v1;
// with migrate every session moves to v2 once and never back. No turn is
// lost, and no session flips between versions.
func TestRollingDeploy(t *testing.T) {
	t.Parallel()
	for _, upgrade := range []string{"pin", "migrate"} {
		t.Run(upgrade, func(t *testing.T) {
			t.Parallel()
			rollingDeploy(t, upgrade)
		})
	}
}

func rollingDeploy(t *testing.T, upgrade string) {
	url := dbtest.NewDatabase(t)
	v1Dir, v2Dir := contractsDir(t), sessiontest.DisputeV2Dir(t, upgrade)
	v1Cat, err := contract.LoadDir(v1Dir)
	if err != nil {
		t.Fatal(err)
	}
	v2Cat, err := contract.LoadDir(v2Dir)
	if err != nil {
		t.Fatal(err)
	}
	v1, v2 := v1Cat.Get("bank.open_dispute").Version, v2Cat.Get("bank.open_dispute").Version
	// The old replica runs first, as in a deploy: its version is the older.
	old := startProcess(t, "--store", "postgres", "--database-url", url, "--contracts", v1Dir)
	fresh := startProcess(t, "--store", "postgres", "--database-url", url, "--contracts", v2Dir)
	var clients []slotdv1.SlotServiceClient
	for _, p := range []*process{old, fresh} {
		conn, err := grpc.NewClient(p.addr, grpc.WithTransportCredentials(insecure.NewCredentials()))
		if err != nil {
			t.Fatal(err)
		}
		t.Cleanup(func() { conn.Close() })
		clients = append(clients, slotdv1.NewSlotServiceClient(conn))
	}
	answers := map[string]any{"card_last4": "4417", "operation_date": "2026-08-20", "amount": "1200.50",
		"reason": "fraud", "merchant": "Ozon", "original_operation_id": "OP-55120"}
	const conversations = 20
	type outcome struct {
		versions  []string
		migrated  int
		arguments map[string]any
		err       error
	}
	out := make([]outcome, conversations)
	var wg sync.WaitGroup
	for i := range conversations {
		wg.Go(func() {
			o := &out[i]
			ctx, cancel := context.WithTimeout(context.Background(), time.Minute)
			defer cancel()
			now := time.Date(2026, 8, 23, 10, 0, 0, 0, time.UTC)
			args := map[string]any{"card_last4": "•• 4417", "operation_date": "2026-08-20", "reason": "wrong_amount",
				"original_operation_id": "OP-55120"}
			var accept *slotdv1.Confirmation
			for k := 0; k < 12; k++ {
				s, err := structpb.NewStruct(args)
				if err != nil {
					o.err = err
					return
				}
				now = now.Add(10 * time.Second)
				r, err := clients[k%2].Turn(ctx, &slotdv1.TurnRequest{ConversationId: fmt.Sprintf("deploy-%s-%02d", upgrade, i),
					Tool: "bank.open_dispute", TurnId: fmt.Sprintf("t%d", k), Arguments: s, Confirmation: accept,
					Now: timestamppb.New(now), Locale: "en"})
				if err != nil {
					o.err = fmt.Errorf("turn %d on replica %d: %w", k, k%2, err)
					return
				}
				o.versions = append(o.versions, r.Session.ContractVersion)
				if r.Migration != nil {
					o.migrated++
				}
				args, accept = map[string]any{}, nil
				switch r.Action {
				case slotdv1.Action_ACTION_READY:
					o.arguments = r.Arguments.AsMap()
					return
				case slotdv1.Action_ACTION_CONFIRM, slotdv1.Action_ACTION_RECONFIRM:
					accept = &slotdv1.Confirmation{Accept: true}
				default:
					if r.Question == nil {
						o.err = fmt.Errorf("turn %d: %s without a question", k, r.Action)
						return
					}
					args[r.Question.Slot] = answers[r.Question.Slot]
				}
			}
			o.err = fmt.Errorf("no READY in 12 turns: versions %v", o.versions)
		})
	}
	wg.Wait()
	lost, flips := 0, 0
	for i, o := range out {
		if o.err != nil {
			lost++
			t.Errorf("conversation %d: %v", i, o.err)
			continue
		}
		for k := 1; k < len(o.versions); k++ {
			if o.versions[k] != o.versions[k-1] && (o.versions[k-1] != v1 || o.versions[k] != v2 || k != 1) {
				flips++
			}
		}
		switch upgrade {
		case "pin":
			for _, v := range o.versions {
				if v != v1 {
					t.Errorf("conversation %d ran on %v, want %s throughout", i, o.versions, v1)
					break
				}
			}
			if o.arguments["reason"] != "wrong_amount" || o.arguments["merchant"] != nil || o.arguments["original_operation_id"] != "OP-55120" {
				t.Errorf("conversation %d: READY with %v, want v1's arguments", i, o.arguments)
			}
		case "migrate":
			if o.versions[0] != v1 || o.versions[len(o.versions)-1] != v2 || o.migrated != 1 {
				t.Errorf("conversation %d ran on %v with %d migrations, want v1 then v2, one move", i, o.versions, o.migrated)
			}
			if o.arguments["reason"] != "fraud" || o.arguments["merchant"] != "Ozon" || o.arguments["original_operation_id"] != nil {
				t.Errorf("conversation %d: READY with %v, want v2's arguments", i, o.arguments)
			}
		}
	}
	if lost != 0 || flips != 0 {
		t.Errorf("%d lost turns, %d flip-flops; want 0 and 0", lost, flips)
	}
	// Both replicas registered their version.
	conn, err := pgx.Connect(context.Background(), url)
	if err != nil {
		t.Fatal(err)
	}
	defer conn.Close(context.Background())
	var n int
	if err := conn.QueryRow(context.Background(), `SELECT count(DISTINCT replica) FROM contract_versions
		WHERE tool = 'bank.open_dispute' AND version IN ($1, $2)`, v1, v2).Scan(&n); err != nil || n != 2 {
		t.Errorf("contract_versions holds the two versions from %d replicas (%v), want 2", n, err)
	}
}
