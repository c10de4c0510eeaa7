// Package sessiontest is the conformance suite every session.Store passes:
// replays of a turn_id, one writer per conversation, serialized turns and
// updates, rollback of failed work, round trips of every field, key scoping,
// the history's order, and the lifecycle queries (listing, ending idle
// sessions while skipping busy conversations, purging, erasing) — most of it through
// the Store interface directly, plus a handful of end-to-end checks through
// session.Engine that need a store to remember a session between turns
// (pending re-confirmations, stale sessions, resets, topic changes, attempts
// and marks). The engine's own behaviour is tested in package session,
// against the planner. A store's test package calls Run with a constructor
// that gives each subtest a fresh, empty store.
package sessiontest

import (
	"bytes"
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"os"
	"path/filepath"
	"reflect"
	"strings"
	"sync"
	"testing"
	"time"

	"github.com/slotd/slotd/contract"
	"github.com/slotd/slotd/internal/session"
)

// Now is the suite's clock: the dispute example's "today", 2026-08-23 10:00 UTC
// (13:00 in Moscow, so "вчера" is 2026-08-22).
var Now = time.Date(2026, 8, 23, 10, 0, 0, 0, time.UTC)

// Tool names the suite uses.
const (
	Dispute = "bank.open_dispute"     // shipped: irreversible card_last4 and amount
	Flights = "travel.search_flights" // shipped: reversible slots only
	Twenty  = "test.twenty"           // inline: twenty optional reversible strings
)

// TwentySlots are the slots of the inline Twenty contract, in order.
var TwentySlots = func() []string {
	out := make([]string, 20)
	for i := range out {
		out[i] = fmt.Sprintf("s%02d", i+1)
	}
	return out
}()

// Run runs the conformance suite against the stores newStore makes. Each
// subtest calls newStore once and may run in parallel with the others, so
// the stores must not share state.
func Run(t *testing.T, newStore func(t *testing.T) session.Store) {
	t.Helper()
	cat := Catalog(t)
	setup := func(t *testing.T) *harness {
		t.Helper()
		t.Parallel()
		return newHarness(t, cat, newStore(t))
	}

	t.Run("Ready", func(t *testing.T) { testReady(t, setup(t)) })

	t.Run("Idempotency", func(t *testing.T) {
		t.Parallel()
		t.Run("SameTurnTwice", func(t *testing.T) { testSameTurnTwice(t, setup(t)) })
		t.Run("RetryAfterLaterTurns", func(t *testing.T) { testRetryAfterLaterTurns(t, setup(t)) })
		t.Run("Concurrent", func(t *testing.T) { testConcurrentSameTurn(t, setup(t)) })
		t.Run("StoreDoesNotCallFn", func(t *testing.T) { testStoreReplay(t, setup(t)) })
		t.Run("ReplaysRecorded", func(t *testing.T) { testReplaysRecorded(t, setup(t)) })
	})

	t.Run("Pending", func(t *testing.T) {
		t.Parallel()
		t.Run("Accept", func(t *testing.T) { testPending(t, setup(t), true) })
		t.Run("Decline", func(t *testing.T) { testPending(t, setup(t), false) })
	})

	t.Run("Concurrency", func(t *testing.T) {
		t.Parallel()
		t.Run("DistinctTurns", func(t *testing.T) { testConcurrentDistinctTurns(t, setup(t)) })
		t.Run("DisputeAndFlights", func(t *testing.T) { testConcurrentShippedSlots(t, setup(t)) })
		t.Run("StoreTurnsSerialize", func(t *testing.T) { testStoreTurnsSerialize(t, setup(t)) })
		t.Run("StoreUpdatesAndTurnsSerialize", func(t *testing.T) { testStoreUpdatesSerialize(t, setup(t)) })
	})

	t.Run("Scoping", func(t *testing.T) {
		t.Parallel()
		t.Run("Tenants", func(t *testing.T) { testTenants(t, setup(t)) })
		t.Run("TurnIDPerConversation", func(t *testing.T) { testTurnIDPerConversation(t, setup(t)) })
		t.Run("NotFound", func(t *testing.T) { testNotFound(t, setup(t)) })
		t.Run("FindWithoutTenant", func(t *testing.T) { testFindWithoutTenant(t, setup(t)) })
	})

	t.Run("Reset", func(t *testing.T) { testReset(t, setup(t)) })

	t.Run("Lifecycle", func(t *testing.T) {
		t.Parallel()
		t.Run("StaleResume", func(t *testing.T) { testStaleResume(t, setup(t)) })
		t.Run("EndSessionsSkipsBusy", func(t *testing.T) { testEndSessionsSkipsBusy(t, setup(t)) })
		t.Run("ListAndPurge", func(t *testing.T) { testListAndPurge(t, setup(t)) })
		t.Run("ListByPrefix", func(t *testing.T) { testListByPrefix(t, setup(t)) })
		t.Run("AttemptsPersist", func(t *testing.T) { testAttemptsPersist(t, setup(t)) })
		t.Run("PerSession", func(t *testing.T) { testLifecyclePerSession(t, setup(t)) })
	})
	t.Run("Digression", func(t *testing.T) { testDigression(t, setup(t)) })

	t.Run("History", func(t *testing.T) {
		t.Parallel()
		t.Run("OrderedByVersion", func(t *testing.T) { testHistoryOrder(t, setup(t)) })
	})

	t.Run("Failure", func(t *testing.T) {
		t.Parallel()
		t.Run("TurnFuncError", func(t *testing.T) { testTurnFuncError(t, setup(t)) })
		t.Run("UpdateFuncError", func(t *testing.T) { testUpdateFuncError(t, setup(t)) })
	})

	t.Run("Facts", func(t *testing.T) { testFacts(t, setup(t)) })

	t.Run("Store", func(t *testing.T) {
		t.Parallel()
		t.Run("RoundTrip", func(t *testing.T) { testStoreRoundTrip(t, setup(t)) })
		t.Run("Left", func(t *testing.T) { testStoreLeft(t, setup(t)) })
	})

	t.Run("Erasure", func(t *testing.T) {
		t.Parallel()
		t.Run("EveryRowOfTheConversation", func(t *testing.T) { testErase(t, setup(t)) })
		t.Run("WaitsForTurn", func(t *testing.T) { testEraseWaitsForTurn(t, setup(t)) })
		t.Run("PurgeRacesTurns", func(t *testing.T) { testPurgeRacesTurns(t, setup(t)) })
	})
}

// Catalog is the shipped contracts plus the inline Twenty contract. The
// shipped ones are found in the module's contracts/ directory, whatever
// package the test runs in.
func Catalog(t testing.TB) *contract.Catalog {
	t.Helper()
	shipped, err := contract.LoadDir(ContractsDir(t))
	if err != nil {
		t.Fatalf("sessiontest: load shipped contracts: %v", err)
	}
	twenty, err := contract.Parse("twenty.json", twentySource())
	if err != nil {
		t.Fatalf("sessiontest: parse inline contract: %v", err)
	}
	cat, err := contract.NewCatalog(append(shipped.All(), twenty)...)
	if err != nil {
		t.Fatalf("sessiontest: catalog: %v", err)
	}
	for _, name := range []string{Dispute, Flights} {
		if cat.Get(name) == nil {
			t.Fatalf("sessiontest: the shipped contracts lack %s; got %v", name, cat.Names())
		}
	}
	return cat
}

// ContractsDir is the module's contracts/ directory: the first go.mod above
// the working directory (a test runs in its package's directory) marks the
// module root.
func ContractsDir(t testing.TB) string {
	t.Helper()
	dir, err := os.Getwd()
	if err != nil {
		t.Fatalf("sessiontest: %v", err)
	}
	for {
		if _, err := os.Stat(filepath.Join(dir, "go.mod")); err == nil {
			return filepath.Join(dir, "contracts")
		}
		parent := filepath.Dir(dir)
		if parent == dir {
			t.Fatalf("sessiontest: no go.mod above the working directory, so no contracts/ to load")
		}
		dir = parent
	}
}

func twentySource() []byte {
	var props []string
	for _, s := range TwentySlots {
		props = append(props, fmt.Sprintf(`%q: {"type": "string", "minLength": 1, "description": "slot %s"}`, s, s))
	}
	return []byte(`{
  "$schema": "https://json-schema.org/draft/2020-12/schema",
  "type": "object",
  "properties": {` + strings.Join(props, ",\n") + `},
  "additionalProperties": false,
  "x-slotd": {"name": "` + Twenty + `", "default_locale": "en", "time_zone": "UTC"}
}`)
}

// harness is one subtest's store and engine, and the conversation it talks in.
type harness struct {
	t      *testing.T
	ctx    context.Context
	store  session.Store
	engine *session.Engine
	tenant string
	conv   string

	mu sync.Mutex
	n  int // turns numbered so far
}

func newHarness(t *testing.T, cat *contract.Catalog, store session.Store) *harness {
	ctx, cancel := context.WithTimeout(t.Context(), 2*time.Minute)
	t.Cleanup(cancel)
	return &harness{
		t:      t,
		ctx:    ctx,
		store:  store,
		engine: NewEngine(store, cat),
		tenant: "acme-bank",
		conv:   "conv-7f3a9c",
	}
}

// NewEngine is an engine on the suite's clock (Now) that trusts the
// clock of each turn: the suite replays conversations at fixed times.
func NewEngine(store session.Store, cat *contract.Catalog) *session.Engine {
	return session.NewEngine(store, cat, session.Config{Clock: func() time.Time { return Now }, TrustClientClock: true})
}

// slowEngine is an engine whose turns think for a while between reading
// the active session and writing the commit, so that a store without one
// writer per conversation loses updates for certain rather than by chance.
func (h *harness) slowEngine() *session.Engine {
	return NewEngine(slowStore{h.store}, h.engine.Contracts())
}

type slowStore struct{ session.Store }

func (s slowStore) Turn(ctx context.Context, key session.Key, turnID string, fn session.TurnFunc) (session.Applied, error) {
	return s.Store.Turn(ctx, key, turnID, func(cv session.Conversation) (*session.Commit, error) {
		time.Sleep(2 * time.Millisecond)
		return fn(cv)
	})
}

// only is the one open session of a conversation of one tool, or nil.
func only(open []*session.Session) *session.Session {
	if len(open) == 0 {
		return nil
	}
	return open[0]
}

// storeTurn is the store's Turn with the harness's context, its outcome as
// the response and whether it was replayed.
func (h *harness) storeTurn(key session.Key, turnID string, fn session.TurnFunc) ([]byte, bool, error) {
	a, err := h.store.Turn(h.ctx, key, turnID, fn)
	return a.Response, a.Replayed, err
}

// storeUpdate is the store's Update with the harness's context.
func (h *harness) storeUpdate(l session.Lookup, fn func(*session.Session) (*session.Commit, error)) error {
	_, err := h.store.Update(h.ctx, l, fn)
	return err
}

// key is the harness's conversation.
func (h *harness) key() session.Key {
	return session.Key{Tenant: h.tenant, ConversationID: h.conv}
}

// active looks up the harness conversation's active session.
func (h *harness) active() session.Lookup {
	return session.Lookup{Tenant: h.tenant, ConversationID: h.conv}
}

// byID looks up a session of the harness's tenant by its id.
func (h *harness) byID(id string) session.Lookup {
	return session.Lookup{Tenant: h.tenant, SessionID: id}
}

// req builds a turn of the harness's conversation with the next turn_id.
func (h *harness) req(tool string, args map[string]any) session.TurnRequest {
	h.mu.Lock()
	h.n++
	n := h.n
	h.mu.Unlock()
	return session.TurnRequest{
		Tenant:         h.tenant,
		ConversationID: h.conv,
		Tool:           tool,
		TurnID:         fmt.Sprintf("turn-%03d", n),
		Arguments:      args,
		Now:            Now,
	}
}

// confirm builds the user's answer to a RECONFIRM or CONFIRM.
func (h *harness) confirm(tool string, accept bool) session.TurnRequest {
	r := h.req(tool, nil)
	r.Confirmation = &accept
	return r
}

// send runs a new turn and fails the test when it errs.
func (h *harness) send(tool string, args map[string]any) *session.Result {
	h.t.Helper()
	return h.do(h.req(tool, args))
}

func (h *harness) do(r session.TurnRequest) *session.Result {
	h.t.Helper()
	res, err := h.engine.Turn(h.ctx, r)
	if err != nil {
		h.t.Fatalf("Turn %s (%s %v): unexpected error: %v", r.TurnID, r.Tool, r.Arguments, err)
	}
	if res.TurnID != r.TurnID {
		h.t.Fatalf("Turn %s: result turn_id = %q, want %q", r.TurnID, res.TurnID, r.TurnID)
	}
	return res
}

// get reads a session through the engine and fails the test when it errs.
func (h *harness) get(l session.Lookup) *session.Session {
	h.t.Helper()
	s, err := h.engine.Get(h.ctx, l)
	if err != nil {
		h.t.Fatalf("Get(%+v): unexpected error: %v", l, err)
	}
	return s
}

// load reads a session straight from the store.
func (h *harness) load(l session.Lookup) *session.Session {
	h.t.Helper()
	s, err := h.store.Session(h.ctx, l)
	if err != nil {
		h.t.Fatalf("store.Session(%+v): unexpected error: %v", l, err)
	}
	return s
}

func (h *harness) history(l session.Lookup) *session.History {
	h.t.Helper()
	hist, err := h.engine.History(h.ctx, l)
	if err != nil {
		h.t.Fatalf("History(%+v): unexpected error: %v", l, err)
	}
	return hist
}

// wantErr fails unless err is target.
func wantErr(t *testing.T, what string, err, target error) {
	t.Helper()
	if !errors.Is(err, target) {
		t.Errorf("%s: error = %v, want %v", what, err, target)
	}
}

// wantSlots fails unless the session's slots are exactly want.
func wantSlots(t *testing.T, what string, s *session.Session, want map[string]any) {
	t.Helper()
	got := s.State.Slots
	if len(got) == 0 && len(want) == 0 {
		return
	}
	if !reflect.DeepEqual(got, want) {
		t.Errorf("%s: slots = %s, want %s", what, js(got), js(want))
	}
}

// wantPending fails unless the session's pending changes are exactly want.
func wantPending(t *testing.T, what string, s *session.Session, want map[string]any) {
	t.Helper()
	got := s.State.Pending
	if len(got) == 0 && len(want) == 0 {
		return
	}
	if !reflect.DeepEqual(got, want) {
		t.Errorf("%s: pending = %s, want %s", what, js(got), js(want))
	}
}

// decisions lists the result's changes as "slot:DECISION".
func decisions(changes []session.Change) []string {
	out := make([]string, 0, len(changes))
	for _, ch := range changes {
		out = append(out, ch.Slot+":"+string(ch.Decision))
	}
	return out
}

// recorded lists the history's changes of one version as "slot:DECISION".
func recorded(h *session.History, version int64) []string {
	var out []string
	for _, ch := range h.Changes {
		if ch.Version == version {
			out = append(out, ch.Slot+":"+string(ch.Decision))
		}
	}
	return out
}

func wantList(t *testing.T, what string, got, want []string) {
	t.Helper()
	if strings.Join(got, " ") != strings.Join(want, " ") {
		t.Errorf("%s = %v, want %v", what, got, want)
	}
}

func js(v any) string {
	b, err := json.Marshal(v)
	if err != nil {
		return fmt.Sprintf("%#v", v)
	}
	return string(b)
}

// sameJSON reports whether a and b are the same JSON value, whatever their
// spacing and key order (a store may keep JSON in a normalized form).
func sameJSON(a, b []byte) bool {
	var va, vb any
	if json.Unmarshal(a, &va) != nil || json.Unmarshal(b, &vb) != nil {
		return bytes.Equal(a, b)
	}
	return reflect.DeepEqual(va, vb)
}
