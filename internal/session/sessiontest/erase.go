package sessiontest

import (
	"errors"
	"fmt"
	"sync"
	"testing"
	"time"

	"github.com/slotd/slotd/internal/session"
)

// testErase: an erasure removes every session, turn and change of the
// conversation and nothing of another conversation, nor of the same
// conversation id under another tenant; a turn_id of the erased
// conversation is new again; erasing again finds nothing and is no error.
func testErase(t *testing.T, h *harness) {
	d := h.send(Dispute, map[string]any{"card_last4": "•• 4417"})
	h.send(Flights, map[string]any{"from": "mad"})
	first := h.req(Flights, map[string]any{"to": "bcn"})
	h.do(first)

	other := h.req(Flights, map[string]any{"from": "lis"})
	other.ConversationID = "conv-other"
	kept := h.do(other)
	elsewhere := h.req(Flights, map[string]any{"from": "opo"})
	elsewhere.Tenant = "other-bank"
	kept2 := h.do(elsewhere)

	rec := session.Erasure{Tenant: h.tenant, ConversationHash: session.ConversationHash(h.key()), At: Now, By: "ops"}
	got, err := h.store.Erase(h.ctx, h.key(), rec)
	if err != nil || !got.Found || got.Sessions != 2 {
		t.Fatalf("Erase = %+v, %v; want found with 2 sessions", got, err)
	}
	for _, l := range []session.Lookup{h.byID(d.Session.ID), h.active(), {Tenant: h.tenant, ConversationID: h.conv, Latest: true},
		{Tenant: h.tenant, ConversationID: h.conv, Tool: Flights}} {
		if s, err := h.store.Session(h.ctx, l); !errors.Is(err, session.ErrNotFound) {
			t.Errorf("after the erasure Session(%+v) = %+v, %v; want %v", l, s, err, session.ErrNotFound)
		}
	}
	if _, err := h.store.History(h.ctx, h.byID(d.Session.ID)); !errors.Is(err, session.ErrNotFound) {
		t.Errorf("after the erasure History = %v; want %v", err, session.ErrNotFound)
	}
	list, err := h.store.List(h.ctx, session.Filter{AnyTenant: true, Limit: 10})
	if err != nil {
		t.Fatal(err)
	}
	var ids []string
	for _, s := range list {
		if s.Key == h.key() {
			t.Errorf("the erased conversation still lists session %s", s.ID)
		}
		ids = append(ids, s.ID)
	}
	wantList(t, "sessions left", ids, sortedIDs(kept.Session.ID, kept2.Session.ID))
	tenants, err := h.store.Tenants(h.ctx, session.Lookup{ConversationID: h.conv}, 5)
	if err != nil || len(tenants) != 1 || tenants[0] != "other-bank" {
		t.Errorf("tenants holding the conversation after the erasure = %v, %v; want only other-bank", tenants, err)
	}
	for _, r := range []session.TurnRequest{other, elsewhere} {
		hist, err := h.engine.History(h.ctx, session.Lookup{Tenant: r.Tenant, ConversationID: r.ConversationID})
		if err != nil || len(hist.Turns) != 1 || len(hist.Changes) != 1 {
			t.Errorf("conversation %s/%s after another's erasure: %+v, %v; want its turn and change", r.Tenant, r.ConversationID, hist, err)
		}
	}

	// The turn_id is new again: the conversation starts afresh.
	res, err := h.engine.Turn(h.ctx, first)
	if err != nil || res.Replayed || res.Session.Version != 1 {
		t.Errorf("a turn_id of the erased conversation again = %+v, %v; want a new session at version 1", res, err)
	}
	if _, err := h.store.Erase(h.ctx, h.key(), rec); err != nil {
		t.Fatal(err)
	}
	again, err := h.store.Erase(h.ctx, h.key(), rec)
	if err != nil || again.Found || again.Sessions != 0 {
		t.Errorf("erasing an erased conversation = %+v, %v; want nothing found and no error", again, err)
	}
	if again, err := h.store.Erase(h.ctx, session.Key{Tenant: h.tenant, ConversationID: "never-seen"}, rec); err != nil || again.Found {
		t.Errorf("erasing a conversation never seen = %+v, %v; want nothing found and no error", again, err)
	}
}

func sortedIDs(ids ...string) []string {
	if len(ids) == 2 && ids[0] > ids[1] {
		ids[0], ids[1] = ids[1], ids[0]
	}
	return ids
}

// testEraseWaitsForTurn: an erasure waits for a turn that holds the
// conversation and removes what the turn wrote.
func testEraseWaitsForTurn(t *testing.T, h *harness) {
	h.send(Flights, map[string]any{"from": "mad"})
	inTurn, release := make(chan struct{}), make(chan struct{})
	turned := make(chan error, 1)
	go func() {
		_, _, err := h.storeTurn(h.key(), "turn-held", func(cv session.Conversation) (*session.Commit, error) {
			open := cv.Open
			close(inTurn)
			<-release
			return storeCommit(only(open), h.key(), "turn-held", Now.Add(time.Second), map[string]any{"counter": float64(1)}), nil
		})
		turned <- err
	}()
	<-inTurn
	erased := make(chan error, 1)
	var got session.Erased
	go func() {
		var err error
		got, err = h.store.Erase(h.ctx, h.key(), session.Erasure{Tenant: h.tenant, ConversationHash: session.ConversationHash(h.key()), At: Now, By: "ops"})
		erased <- err
	}()
	select {
	case err := <-erased:
		t.Fatalf("Erase returned (%v) while a turn held the conversation", err)
	case <-time.After(100 * time.Millisecond):
	}
	close(release)
	if err := <-turned; err != nil {
		t.Fatalf("the held turn: %v", err)
	}
	if err := <-erased; err != nil || !got.Found {
		t.Fatalf("Erase after the turn = %+v, %v", got, err)
	}
	if s, err := h.store.Session(h.ctx, session.Lookup{Tenant: h.tenant, ConversationID: h.conv, Latest: true}); !errors.Is(err, session.ErrNotFound) {
		t.Errorf("what the turn wrote outlived the erasure that waited for it: %+v, %v", s, err)
	}
}

// testPurgeRacesTurns: purges that empty conversations, racing turns on
// them, lose no turn: each turn lands on a conversation that is either
// still there or made again, and each conversation keeps one writer.
func testPurgeRacesTurns(t *testing.T, h *harness) {
	const convs = 8
	keys := make([]session.Key, convs)
	for i := range keys {
		keys[i] = session.Key{Tenant: h.tenant, ConversationID: fmt.Sprintf("purged-%d", i)}
		r := h.req(Flights, map[string]any{"from": "mad"})
		r.ConversationID = keys[i].ConversationID
		h.do(r)
		if _, _, err := h.engine.Reset(h.ctx, session.Lookup{Tenant: h.tenant, ConversationID: keys[i].ConversationID}, Now); err != nil {
			t.Fatal(err)
		}
	}
	var wg sync.WaitGroup
	errs := make([]error, 2*convs)
	start := make(chan struct{})
	wg.Go(func() {
		<-start
		for range 20 {
			if _, err := h.store.Purge(h.ctx, session.Filter{AnyTenant: true, EndedBefore: Now.Add(time.Hour)}, false); err != nil {
				errs[0] = err
				return
			}
		}
	})
	for i, k := range keys {
		for j := range 2 {
			wg.Go(func() {
				<-start
				r := h.req(Flights, map[string]any{"to": "bcn"})
				r.ConversationID, r.Now = k.ConversationID, Now.Add(time.Minute)
				if _, err := h.engine.Turn(h.ctx, r); err != nil {
					errs[2*i+j] = fmt.Errorf("turn %s on %s: %w", r.TurnID, k.ConversationID, err)
				}
			})
		}
	}
	close(start)
	wg.Wait()
	for _, err := range errs {
		if err != nil {
			t.Error(err)
		}
	}
	for _, k := range keys {
		s, err := h.store.Session(h.ctx, session.Lookup{Tenant: k.Tenant, ConversationID: k.ConversationID, Tool: Flights})
		if err != nil || s.Version != 2 {
			t.Errorf("conversation %s after its purge and two turns: %+v, %v; want its new session at version 2", k.ConversationID, s, err)
			continue
		}
		hist, err := h.store.History(h.ctx, session.Lookup{Tenant: k.Tenant, SessionID: s.ID})
		if err != nil || len(hist.Turns) != 2 {
			t.Errorf("conversation %s's new session holds %d turns (%v), want 2", k.ConversationID, len(hist.Turns), err)
		}
	}
}
