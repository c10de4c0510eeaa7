package session_test

import (
	"context"
	"errors"
	"strings"
	"testing"
	"time"

	"github.com/slotd/slotd/contract"
	"github.com/slotd/slotd/internal/clarify"
	"github.com/slotd/slotd/internal/session"
	"github.com/slotd/slotd/internal/session/memstore"
	"github.com/slotd/slotd/problem"
)

// The engine around the planner: validation before any work, replays,
// completions, resets and the operators' calls, on the memory store.

var now = time.Date(2026, 8, 23, 10, 0, 0, 0, time.UTC)

// bank is the tenant the tests' turns are of.
var bank = session.Lookup{Tenant: "bank"}

func newEngine(t *testing.T) (*session.Engine, *memstore.Store) {
	t.Helper()
	cat, err := contract.LoadDir("../../contracts")
	if err != nil {
		t.Fatal(err)
	}
	st := memstore.New()
	e := session.NewEngine(st, cat, session.Config{Clock: func() time.Time { return now }, TrustClientClock: true})
	return e, st
}

func turn(t *testing.T, e *session.Engine, id string, args map[string]any, confirm ...bool) *session.Result {
	t.Helper()
	req := session.TurnRequest{Tenant: "bank", ConversationID: "chat-42", Tool: "bank.open_dispute", TurnID: id,
		Arguments: args, Locale: "ru"}
	if len(confirm) == 1 {
		req.Confirmation = &confirm[0]
	}
	res, err := e.Turn(context.Background(), req)
	if err != nil {
		t.Fatalf("turn %s: %v", id, err)
	}
	return res
}

// ready plays the dispute example to READY.
func ready(t *testing.T, e *session.Engine) *session.Result {
	t.Helper()
	turn(t, e, "1", map[string]any{"card_last4": "•• 4417", "operation_date": "вчера", "amount": "1 200,50 ₽", "reason": "fraud"})
	res := turn(t, e, "2", nil, true)
	if res.Action != clarify.Ready {
		t.Fatalf("the dispute answered %s, want READY", res.Action)
	}
	return res
}

func problemOf(t *testing.T, err error) *problem.Error {
	t.Helper()
	var pe *problem.Error
	if !errors.As(err, &pe) {
		t.Fatalf("%v: want a problem", err)
	}
	return pe
}

func TestTurnValidatesBeforeAnyWork(t *testing.T) {
	t.Parallel()
	e, st := newEngine(t)
	long := strings.Repeat("x", 300)
	nested := any("x")
	for i := 0; i < 9; i++ {
		nested = []any{nested}
	}
	many := map[string]any{}
	for i := 0; i < 65; i++ {
		many[strings.Repeat("a", i+1)] = i
	}
	wide := map[string]any{}
	for i := 0; i < 600; i++ {
		wide[strings.Repeat("w", i+1)[:1]+string(rune('a'+i%26))+strings.Repeat("z", i/26)] = "v"
	}
	for _, tc := range []struct {
		name    string
		edit    func(r *session.TurnRequest)
		pointer string
	}{
		{"no conversation", func(r *session.TurnRequest) { r.ConversationID = "" }, "/conversation_id"},
		{"no tool", func(r *session.TurnRequest) { r.Tool = "" }, "/tool"},
		{"no turn id", func(r *session.TurnRequest) { r.TurnID = "" }, "/turn_id"},
		{"a long conversation id", func(r *session.TurnRequest) { r.ConversationID = long }, "/conversation_id"},
		{"a control character", func(r *session.TurnRequest) { r.TurnID = "t\x1b[2J" }, "/turn_id"},
		{"a long tool", func(r *session.TurnRequest) { r.Tool = long }, "/tool"},
		{"a locale that is no tag", func(r *session.TurnRequest) { r.Locale = "ru; DROP" }, "/locale"},
		{"a locale subtag of nine", func(r *session.TurnRequest) { r.Locale = "ru-abcdefghi" }, "/locale"},
		{"a card number in the conversation id", func(r *session.TurnRequest) { r.ConversationID = "c 4111 1111 1111 1111" }, "/conversation_id"},
		{"a card number in the turn id", func(r *session.TurnRequest) { r.TurnID = "4111111111111111" }, "/turn_id"},
		{"a card number as an argument name", func(r *session.TurnRequest) { r.Arguments = map[string]any{"4111-1111-1111-1111": "x"} }, "/arguments"},
		{"65 arguments", func(r *session.TurnRequest) { r.Arguments = many }, "/arguments"},
		{"600 values", func(r *session.TurnRequest) { r.Arguments = map[string]any{"reason": wide} }, "/arguments"},
		{"nested 10 deep", func(r *session.TurnRequest) { r.Arguments = map[string]any{"reason": nested} }, ""},
		{"a NUL", func(r *session.TurnRequest) { r.Arguments = map[string]any{"reason": "a\x00b"} }, "/arguments/reason"},
		{"a NUL in a key", func(r *session.TurnRequest) { r.Arguments = map[string]any{"reason": map[string]any{"a\x00": 1}} }, "/arguments/reason"},
		{"a long string", func(r *session.TurnRequest) { r.Arguments = map[string]any{"reason": strings.Repeat("я", 3000)} }, "/arguments/reason"},
		{"an unknown time zone", func(r *session.TurnRequest) { r.TimeZone = "Mars/Olympus_Mons" }, "/time_zone"},
		{"a card number in the time zone", func(r *session.TurnRequest) { r.TimeZone = "Europe/4111:1111:1111:1111" }, "/time_zone"},
		{"a card number in the tool", func(r *session.TurnRequest) { r.Tool = "bank ⁴¹¹¹ ¹¹¹¹ ¹¹¹¹ ¹¹¹¹" }, "/tool"},
	} {
		req := session.TurnRequest{ConversationID: "c", Tool: "bank.open_dispute", TurnID: "t", Arguments: map[string]any{"reason": "fraud"}}
		tc.edit(&req)
		_, err := e.Turn(context.Background(), req)
		pe := problemOf(t, err)
		if pe.Kind != problem.KindInvalidRequest || tc.pointer != "" && pe.Problem.Errors[0].Pointer != tc.pointer {
			t.Errorf("%s: %v (%+v), want INVALID_ARGUMENT at %s", tc.name, err, pe.Problem.Errors, tc.pointer)
		}
		if strings.Contains(tc.name, "card number") && !strings.Contains(pe.Problem.Errors[0].Message, "card number") {
			t.Errorf("%s: %q, want it refused for the card number", tc.name, pe.Problem.Errors[0].Message)
		}
	}
	if _, err := e.Turn(context.Background(), session.TurnRequest{ConversationID: "c", Tool: "bank.close_account", TurnID: "t"}); problemOf(t, err).Kind != problem.KindUnknownTool {
		t.Errorf("an unknown tool: %v, want NOT_FOUND", err)
	}
	if _, err := st.Session(context.Background(), session.Lookup{ConversationID: "c"}); !errors.Is(err, session.ErrNotFound) {
		t.Errorf("a refused request left a session: %v", err)
	}
}

func TestTurnReplaysAKnownTurnID(t *testing.T) {
	t.Parallel()
	e, _ := newEngine(t)
	first := turn(t, e, "1", map[string]any{"card_last4": "4417", "amount": "1 340 ₽"})
	again := turn(t, e, "1", map[string]any{"card_last4": "4417", "amount": "1 340 ₽"})
	if first.Replayed || !again.Replayed || again.Session.Version != 1 || again.Session.Slots["amount"] != "1340.00" {
		t.Errorf("a retried turn_id: replayed %v/%v, %+v; want the stored answer", first.Replayed, again.Replayed, again.Session)
	}
	if again.Facts.FirstReady || len(again.Facts.Valid) != 0 {
		t.Errorf("a replay reports facts %+v, want none", again.Facts)
	}
}

func TestComplete(t *testing.T) {
	t.Parallel()
	ctx := context.Background()
	t.Run("accepted", func(t *testing.T) {
		e, _ := newEngine(t)
		r := ready(t, e)
		req := session.CompleteRequest{Lookup: bank, IdempotencyKey: r.IdempotencyKey,
			Result: map[string]any{"status": "accepted", "case_id": "DSP-1", "card": "4111 1111 1111 1111", "risk_score": 0.3}}
		out, err := e.Complete(ctx, req)
		if err != nil || out.Output["status"] != "accepted" || out.Output["risk_score"] != nil || out.Session.Status != session.Completed {
			t.Fatalf("accepted: %+v, %v; want the output contract's object and the session completed", out, err)
		}
		again, err := e.Complete(ctx, req)
		if err != nil || again.Output["case_id"] != "DSP-1" {
			t.Errorf("a retried completion: %+v, %v; want the same answer", again, err)
		}
		// Another key: the last digit changed (keys end in a random hex digit).
		other := r.IdempotencyKey[:len(r.IdempotencyKey)-1] + "0"
		if other == r.IdempotencyKey {
			other = other[:len(other)-1] + "1"
		}
		if _, err := e.Complete(ctx, session.CompleteRequest{Lookup: bank, IdempotencyKey: other,
			Failure: &session.Failure{Kind: session.FailureTimeout}}); !errors.Is(err, session.ErrNotActive) {
			t.Errorf("another key on a completed session: %v, want ErrNotActive", err)
		}
	})
	t.Run("each way of naming the session", func(t *testing.T) {
		accepted := map[string]any{"status": "accepted", "case_id": "DSP-2"}
		for name, lookup := range map[string]func(r *session.Result) (session.Lookup, string){
			"the key": func(r *session.Result) (session.Lookup, string) {
				return session.Lookup{Tenant: "bank"}, r.IdempotencyKey
			},
			"the session id": func(r *session.Result) (session.Lookup, string) {
				return session.Lookup{Tenant: "bank", SessionID: r.Session.ID}, ""
			},
			"the conversation, tool": func(r *session.Result) (session.Lookup, string) {
				return session.Lookup{Tenant: "bank", ConversationID: "chat-42", Tool: "bank.open_dispute"}, ""
			},
			"the conversation and key": func(r *session.Result) (session.Lookup, string) {
				return session.Lookup{Tenant: "bank", ConversationID: "chat-42"}, r.IdempotencyKey
			},
		} {
			e, _ := newEngine(t)
			r := ready(t, e)
			l, key := lookup(r)
			out, err := e.Complete(ctx, session.CompleteRequest{Lookup: l, IdempotencyKey: key, Result: accepted})
			if err != nil || out.Session.ID != r.Session.ID || out.Session.Status != session.Completed {
				t.Errorf("by %s: %+v, %v; want the READY session completed", name, out, err)
			}
		}
		e, _ := newEngine(t)
		ready(t, e)
		_, err := e.Complete(ctx, session.CompleteRequest{Lookup: session.Lookup{Tenant: "bank", ConversationID: "chat-42"}, Result: accepted})
		if pe := problemOf(t, err); pe.Kind != problem.KindInvalidRequest || !strings.Contains(pe.Problem.Errors[0].Message, "conversation_id with tool") {
			t.Errorf("the conversation without a tool: %v, want INVALID_ARGUMENT that names the ways", err)
		}
		_, err = e.Complete(ctx, session.CompleteRequest{Lookup: session.Lookup{Tenant: "bank", ConversationID: "chat-42", Tool: "bank.check_balance"}, Result: accepted})
		if !errors.Is(err, session.ErrNotFound) {
			t.Errorf("a tool with no open session: %v, want not found", err)
		}
	})
	t.Run("a retryable failure keeps the slots", func(t *testing.T) {
		e, _ := newEngine(t)
		r := ready(t, e)
		out, err := e.Complete(ctx, session.CompleteRequest{Lookup: bank, IdempotencyKey: r.IdempotencyKey,
			Failure: &session.Failure{Kind: session.FailureTimeout, RetryAfterSeconds: 7}})
		if err != nil || out.Action != clarify.Ready || out.IdempotencyKey != r.IdempotencyKey || out.Problem.RetryAfterSeconds != 7 || out.Session.Status != session.Active {
			t.Fatalf("a timeout: %+v, %v", out, err)
		}
		if out.Problem.Title != "Сервис не ответил вовремя" || out.Problem.Detail != "Заявка не создана; повторить безопасно через 7 с." ||
			out.Output["error"].(map[string]any)["title"] != out.Problem.Title {
			t.Errorf("a ru session's failure: %q: %q; output %v; want both in Russian, the output's too", out.Problem.Title, out.Problem.Detail, out.Output)
		}
		if again := turn(t, e, "3", nil); again.Action != clarify.Ready || again.IdempotencyKey != r.IdempotencyKey {
			t.Errorf("the turn after a timeout: %s %q, want READY with the same key", again.Action, again.IdempotencyKey)
		}
	})
	t.Run("a failure past retrying hands off", func(t *testing.T) {
		e, _ := newEngine(t)
		r := ready(t, e)
		out, err := e.Complete(ctx, session.CompleteRequest{Lookup: bank, IdempotencyKey: r.IdempotencyKey, Failure: &session.Failure{Kind: session.FailureUnauthorized}})
		if err != nil || out.Action != clarify.Handoff || out.Session.Status != session.Failed || out.Output["status"] != "error" {
			t.Fatalf("unauthorized: %+v, %v", out, err)
		}
	})
	t.Run("a result that breaks the output contract hands off", func(t *testing.T) {
		e, _ := newEngine(t)
		r := ready(t, e)
		out, err := e.Complete(ctx, session.CompleteRequest{Lookup: bank, IdempotencyKey: r.IdempotencyKey, Result: map[string]any{"status": "maybe"}})
		if err != nil || out.Action != clarify.Handoff || out.Problem == nil || len(out.Problem.Errors) == 0 {
			t.Fatalf("status maybe: %+v, %v", out, err)
		}
		if p := out.Problem; p.Title != "Ответ сервиса не соответствует выходному контракту инструмента" || p.Errors[0].Message != "должно быть одним из: accepted, rejected, error" {
			t.Errorf("a ru session's output problem: %q, errors %+v; want them in Russian", p.Title, p.Errors)
		}
	})
	t.Run("a session that ended meanwhile", func(t *testing.T) {
		e, _ := newEngine(t)
		r := ready(t, e)
		if _, _, err := e.Reset(ctx, session.Lookup{Tenant: "bank", ConversationID: "chat-42"}, now); err != nil {
			t.Fatal(err)
		}
		out, err := e.Complete(ctx, session.CompleteRequest{Lookup: bank, IdempotencyKey: r.IdempotencyKey, Failure: &session.Failure{Kind: session.FailureTimeout}})
		if err != nil || out.Action != clarify.Handoff || !out.Problem.OwnerActionRequired {
			t.Errorf("a timeout after a reset: %+v, %v; want a hand-off", out, err)
		}
	})
	t.Run("refused before any lookup", func(t *testing.T) {
		e, _ := newEngine(t)
		r := ready(t, e)
		deep := any("x")
		for i := 0; i < 20; i++ {
			deep = []any{deep}
		}
		for name, req := range map[string]session.CompleteRequest{
			"no outcome":               {IdempotencyKey: r.IdempotencyKey},
			"an unknown failure":       {IdempotencyKey: r.IdempotencyKey, Failure: &session.Failure{Kind: "exploded"}},
			"a NUL in the result":      {IdempotencyKey: r.IdempotencyKey, Result: map[string]any{"case_id": "a\x00"}},
			"a deep result":            {IdempotencyKey: r.IdempotencyKey, Result: deep},
			"no key, no session":       {Result: map[string]any{"status": "accepted"}},
			"a key slotd never gave":   {IdempotencyKey: "sd_nope", Result: map[string]any{"status": "accepted"}},
			"a long key":               {IdempotencyKey: strings.Repeat("k", 300), Result: map[string]any{"status": "accepted"}},
			"a key of another":         {IdempotencyKey: r.IdempotencyKey, Lookup: session.Lookup{SessionID: "0190a1b2-c3d4-7e5f-8a9b-0c1d2e3f4a5b"}, Result: map[string]any{}},
			"a session id as a URN":    {Lookup: session.Lookup{SessionID: "urn:uuid:" + r.Session.ID}, Result: map[string]any{}},
			"a clock far off, trusted": {Lookup: bank, IdempotencyKey: r.IdempotencyKey, Result: map[string]any{"status": "x"}, Now: now.Add(-time.Nanosecond)},
		} {
			_, err := e.Complete(ctx, req)
			if name == "a clock far off, trusted" {
				if err != nil {
					t.Errorf("%s: %v", name, err)
				}
				continue
			}
			if pe := problemOf(t, err); pe.Kind != problem.KindInvalidRequest {
				t.Errorf("%s: %v, want INVALID_ARGUMENT", name, err)
			}
		}
	})
	t.Run("not ready", func(t *testing.T) {
		e, _ := newEngine(t)
		r := turn(t, e, "1", map[string]any{"card_last4": "4417"})
		_, err := e.Complete(ctx, session.CompleteRequest{Lookup: session.Lookup{Tenant: "bank", SessionID: r.Session.ID}, Result: map[string]any{}})
		if pe := problemOf(t, err); pe.Kind != problem.KindConflict || !strings.Contains(pe.Problem.Detail, "ASK") {
			t.Errorf("completing an ASK: %v", err)
		}
		turn(t, e, "2", map[string]any{"operation_date": "вчера", "amount": "1", "reason": "fraud"})
		rr := turn(t, e, "3", nil, true)
		_, err = e.Complete(ctx, session.CompleteRequest{Lookup: session.Lookup{Tenant: "bank", SessionID: rr.Session.ID}, IdempotencyKey: "sd_" + strings.ReplaceAll(rr.Session.ID, "-", "") + "_000000000000000000000000", Result: map[string]any{}})
		if pe := problemOf(t, err); pe.Kind != problem.KindConflict {
			t.Errorf("another key of the same session: %v, want FAILED_PRECONDITION", err)
		}
	})
}

func TestResetAndReads(t *testing.T) {
	t.Parallel()
	ctx := context.Background()
	e, _ := newEngine(t)
	first := turn(t, e, "1", map[string]any{"card_last4": "4417", "amount": "1 200 ₽"})
	active := session.Lookup{Tenant: "bank", ConversationID: "chat-42"}
	got, err := e.Get(ctx, active)
	if err != nil || got.ID != first.Session.ID {
		t.Fatalf("Get: %v, %v", got, err)
	}
	if v := e.View(got); len(v.Missing) != 2 || v.Slots["amount"] != "1200.00" {
		t.Errorf("View: %+v", v)
	}
	ended, changes, err := e.Reset(ctx, active, now.Add(time.Minute))
	if err != nil || len(ended) != 1 || ended[0].Status != session.Reset || len(changes) != 2 || changes[0].Decision != "CLEARED" {
		t.Fatalf("Reset: %+v %+v %v", ended, changes, err)
	}
	if _, _, err := e.Reset(ctx, session.Lookup{Tenant: "bank", SessionID: first.Session.ID}, time.Time{}); !errors.Is(err, session.ErrNotActive) {
		t.Errorf("a second reset: %v, want ErrNotActive", err)
	}
	h, err := e.History(ctx, session.Lookup{Tenant: "bank", SessionID: first.Session.ID})
	if err != nil || len(h.Turns) != 1 || len(h.Changes) != 4 {
		t.Errorf("History: %+v, %v; want one turn and four changes", h, err)
	}
	for _, bad := range []session.Lookup{{}, {ConversationID: "c 4111 1111 1111 1111"}, {SessionID: "{" + first.Session.ID + "}"}, {Tenant: "a\x00"}} {
		if _, err := e.Get(ctx, bad); err == nil {
			t.Errorf("Get(%+v) = nil error", bad)
		}
		if _, err := e.History(ctx, bad); err == nil {
			t.Errorf("History(%+v) = nil error", bad)
		}
	}
	if next := turn(t, e, "2", map[string]any{"reason": "fraud"}); next.Session.ID == first.Session.ID || next.Previous == nil {
		t.Errorf("after a reset: %+v, want a new session that says so", next)
	}
}

func TestOperatorsCalls(t *testing.T) {
	t.Parallel()
	ctx := context.Background()
	e, _ := newEngine(t)
	for i, conv := range []string{"a", "b", "c"} {
		_, err := e.Turn(ctx, session.TurnRequest{Tenant: "bank", ConversationID: conv, Tool: "travel.search_flights", TurnID: "1",
			Arguments: map[string]any{"from": "MAD"}, Now: now.Add(time.Duration(i) * time.Minute)})
		if err != nil {
			t.Fatal(err)
		}
	}
	page, next, err := e.ListSessions(ctx, session.Filter{AnyTenant: true, Limit: 2})
	if err != nil || len(page) != 2 || next == "" {
		t.Fatalf("first page: %d, %q, %v", len(page), next, err)
	}
	rest, next2, err := e.ListSessions(ctx, session.Filter{AnyTenant: true, Limit: 2, After: next})
	if err != nil || len(rest) != 1 || next2 != "" {
		t.Errorf("second page: %d, %q, %v", len(rest), next2, err)
	}
	for _, f := range []session.Filter{{Tenant: "b\x00"}, {Tool: strings.Repeat("t", 300)}, {After: "' OR 1=1"}, {Tenant: "4111 1111 1111 1111"}} {
		if _, _, err := e.ListSessions(ctx, f); err == nil {
			t.Errorf("ListSessions(%+v) = nil error", f)
		}
	}
	dry, err := e.ResetStale(ctx, session.Filter{AnyTenant: true, IdleBefore: now.Add(90 * time.Second)}, true, now)
	if err != nil || len(dry) != 2 {
		t.Errorf("dry run: %v, %v; want the two idle sessions", dry, err)
	}
	if _, err := e.ResetStale(ctx, session.Filter{AnyTenant: true}, false, now); err == nil {
		t.Error("ResetStale without an idle time ran")
	}
	reset, err := e.ResetStale(ctx, session.Filter{AnyTenant: true, IdleBefore: now.Add(90 * time.Second)}, false, time.Time{})
	if err != nil || len(reset) != 2 {
		t.Errorf("reset: %v, %v", reset, err)
	}
	if _, err := e.Purge(ctx, session.Filter{AnyTenant: true}, true); err == nil {
		t.Error("Purge without an age ran")
	}
	purged, err := e.Purge(ctx, session.Filter{AnyTenant: true, EndedBefore: now.Add(time.Hour)}, false)
	if err != nil || len(purged) != 2 {
		t.Errorf("purge: %v, %v", purged, err)
	}
	if f := (session.Filter{Limit: 10000}); f.Bounded() != session.MaxLimit {
		t.Errorf("Bounded(10000) = %d", f.Bounded())
	}
	if staleAfter, ttl := e.Lifetimes("bank.open_dispute"); staleAfter != 30*time.Minute || ttl != 24*time.Hour {
		t.Errorf("Lifetimes = %v, %v", staleAfter, ttl)
	}
	if len(e.Contracts().Names()) < 2 {
		t.Error("Contracts() lost the catalog")
	}
}
