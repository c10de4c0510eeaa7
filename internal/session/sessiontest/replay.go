package sessiontest

import (
	"context"
	"fmt"
	"sync"
	"testing"
	"time"

	"github.com/slotd/slotd/internal/session"
)

// The kinds of conversation ReplayHistory makes on the dispute example,
// and what a replay with its v2 (DisputeV2) finds in each.
const (
	// ReplayFraud reaches READY on v1; v2 asks for the merchant and never
	// gets one: READY lost, merchant newly asked.
	ReplayFraud = "fraud"
	// ReplayWrongAmount reaches READY on v1 with a reason v2 retired:
	// READY lost, reason newly refused.
	ReplayWrongAmount = "wrong_amount"
	// ReplayDuplicate gives the sensitive original_operation_id, which the
	// history masks: reported masked, played as absent.
	ReplayDuplicate = "duplicate"
	// ReplayCard gives a full card number for the card, which the history
	// keeps cut to its last four digits: reported masked.
	ReplayCard = "card"
	// ReplayBalance is a balance check, which v2 does not change.
	ReplayBalance = "balance"
)

// ReplayKinds are the kinds in the order ReplayHistory cycles through.
var ReplayKinds = []string{ReplayFraud, ReplayWrongAmount, ReplayDuplicate, ReplayCard, ReplayBalance}

// ReplayConversation is the id of ReplayHistory's conversation i.
func ReplayConversation(prefix string, i int) string { return fmt.Sprintf("%s-%05d", prefix, i) }

// ReplayHistory takes n conversations, of tenant "bank", named
// ReplayConversation(prefix, i), through e (which serves the dispute
// example, its versions registered), conversation i of kind
// ReplayKinds[i%5], with workers conversations at a time. Turns are a
// minute apart from Now.
func ReplayHistory(t testing.TB, e *session.Engine, prefix string, n, workers int) {
	t.Helper()
	ctx := context.Background()
	var wg sync.WaitGroup
	errs := make(chan error, workers)
	next := make(chan int)
	for range max(workers, 1) {
		wg.Go(func() {
			for i := range next {
				if err := replayConversation(ctx, e, prefix, i); err != nil {
					select {
					case errs <- err:
					default:
					}
				}
			}
		})
	}
	for i := range n {
		next <- i
	}
	close(next)
	wg.Wait()
	close(errs)
	if err := <-errs; err != nil {
		t.Fatalf("sessiontest: %v", err)
	}
}

// VersionedStore is a store that also keeps contract versions, as
// pgstore's and memstore's do.
type VersionedStore interface {
	session.Store
	session.VersionStore
}

// StoreHistory registers the dispute example's versions on st, as
// replica-a did an hour before Now, and takes ReplayHistory's n
// conversations through an engine on st.
func StoreHistory(t testing.TB, st VersionedStore, prefix string, n, workers int) {
	t.Helper()
	cat := Catalog(t)
	v := session.NewVersions(st, cat)
	if _, err := v.Register(context.Background(), "replica-a", Now.Add(-time.Hour)); err != nil {
		t.Fatal(err)
	}
	e := NewEngine(st, cat)
	e.UseVersions(v)
	ReplayHistory(t, e, prefix, n, workers)
}

func replayConversation(ctx context.Context, e *session.Engine, prefix string, i int) error {
	conv := ReplayConversation(prefix, i)
	at := Now
	yes := true
	turn := func(k int, tool string, args map[string]any, confirm *bool) (*session.Result, error) {
		at = at.Add(time.Minute)
		r, err := e.Turn(ctx, session.TurnRequest{Tenant: "bank", ConversationID: conv, Tool: tool, TurnID: fmt.Sprintf("t%d", k),
			Arguments: args, Confirmation: confirm, Locale: "en", Now: at})
		if err != nil {
			return nil, fmt.Errorf("%s turn %d: %w", conv, k, err)
		}
		return r, nil
	}
	dispute := func(args ...map[string]any) error {
		for k, a := range args {
			if _, err := turn(k+1, Dispute, a, nil); err != nil {
				return err
			}
		}
		_, err := turn(len(args)+1, Dispute, nil, &yes)
		return err
	}
	switch ReplayKinds[i%len(ReplayKinds)] {
	case ReplayFraud:
		return dispute(map[string]any{"card_last4": "•• 4417", "operation_date": "2026-08-20"},
			map[string]any{"amount": "1 200,50 ₽", "reason": "fraud"})
	case ReplayWrongAmount:
		return dispute(map[string]any{"card_last4": "4417", "operation_date": "2026-08-21", "amount": 640, "reason": "Wrong_Amount"})
	case ReplayDuplicate:
		return dispute(map[string]any{"card_last4": "4417", "operation_date": "2026-08-19", "amount": "99.90", "reason": "duplicate"},
			map[string]any{"original_operation_id": "OP-55120"})
	case ReplayCard:
		return dispute(map[string]any{"card_last4": "4111 1111 1111 1111", "operation_date": "2026-08-18", "amount": "15000", "reason": "fraud"})
	default:
		_, err := turn(1, "bank.check_balance", map[string]any{"card_last4": "4417"}, nil)
		return err
	}
}
