package session

import (
	"context"
	"encoding/json"
	"fmt"
	"time"

	"github.com/slotd/slotd/contract"
	"github.com/slotd/slotd/internal/clarify"
	"github.com/slotd/slotd/problem"
)

// FailureKind is how a backend call failed.
type FailureKind string

// The failure kinds CompleteSession understands.
const (
	FailureTimeout      FailureKind = "timeout"
	FailureUnavailable  FailureKind = "unavailable"
	FailureRateLimited  FailureKind = "rate_limited"
	FailureUnauthorized FailureKind = "unauthorized"
	FailureInternal     FailureKind = "internal"
)

// Failure is a transport failure of the backend call.
type Failure struct {
	Kind              FailureKind `json:"kind"`
	HTTPStatus        int         `json:"http_status,omitempty"`
	RetryAfterSeconds int         `json:"retry_after_seconds,omitempty"`
}

// CompleteRequest is the outcome of the backend call made after READY:
// either the backend's raw result or a failure.
type CompleteRequest struct {
	Lookup  Lookup
	Result  any
	Failure *Failure
	// IdempotencyKey is the READY key the backend was called with; when
	// given it must be the session's.
	IdempotencyKey string
	Now            time.Time
}

// Completion is what CompleteSession answers: the object for the model's
// context and what the session does next.
type Completion struct {
	Session View           `json:"session"`
	Output  map[string]any `json:"output"`
	// Action is READY when retrying the call is safe (same idempotency key),
	// HANDOFF when a person must take over, "" when the session completed.
	Action         clarify.Action   `json:"action,omitempty"`
	Problem        *problem.Problem `json:"problem,omitempty"`
	IdempotencyKey string           `json:"idempotency_key,omitempty"`
}

// Bounds of a backend result: larger than a turn's arguments (a list of
// flights), as deep as any JSON a service answers with needs to be.
const (
	maxResultDepth  = 16
	maxResultValues = 8192
	maxResultText   = 64 << 10
)

// defaultRetryAfter is what a timeout or an outage tells the model to wait
// when the backend said nothing.
const defaultRetryAfter = 30

// Complete records the backend call's outcome. A result is shaped by the
// tool's output contract: accepted or rejected (a business refusal is a
// normal result, not an error), the session completes. A retryable failure
// keeps the slots, so the next turn answers READY again with the same
// idempotency key; any other failure, or a result that breaks the output
// contract, ends the session with a hand-off to a person.
func (e *Engine) Complete(ctx context.Context, req CompleteRequest) (*Completion, error) {
	if err := e.prepareCompletion(&req); err != nil {
		return nil, err
	}
	commit, err := e.store.Update(ctx, req.Lookup, func(s *Session) (*Commit, error) {
		return e.completion(s, req)
	})
	if err != nil {
		return nil, err
	}
	return commit.Completion, nil
}

// prepareCompletion validates a completion before any lookup, sets its
// clock, and finds its session from the idempotency key: a late or retried
// outcome lands on the session the backend call was made for, never on a
// newer one of the conversation.
func (e *Engine) prepareCompletion(req *CompleteRequest) error {
	switch {
	case req.Failure == nil && req.Result == nil:
		return problem.InvalidRequest("outcome", "either result or failure is required")
	case req.Failure != nil:
		if _, ok := failures[req.Failure.Kind]; !ok {
			return problem.InvalidRequest("failure.kind", "one of timeout, unavailable, rate_limited, unauthorized, internal")
		}
	default:
		b := bounds{depth: maxResultDepth, values: maxResultValues, text: maxResultText, field: "result"}
		if err := b.check("result", req.Result, 1); err != nil {
			return err
		}
	}
	if len(req.IdempotencyKey) > maxIDLength {
		return problem.InvalidRequest("idempotency_key", "not a key slotd gave with READY")
	}
	now, err := e.turnClock(req.Now)
	if err != nil {
		return err
	}
	req.Now = now
	switch id := sessionOfKey(req.IdempotencyKey); {
	case req.IdempotencyKey != "" && id == "":
		return problem.InvalidRequest("idempotency_key", "not a key slotd gave with READY")
	case req.Lookup.SessionID != "" && id != "" && id != req.Lookup.SessionID:
		return problem.InvalidRequest("idempotency_key", "the key belongs to another session")
	case id != "":
		req.Lookup.SessionID = id
	case req.Lookup.SessionID == "" && (req.Lookup.ConversationID == "" || req.Lookup.Tool == ""):
		// Without a key or a session id, conversation_id and tool find the
		// conversation's open session of the tool (an orchestrator that ran
		// the backend may hold no more than that).
		return problem.InvalidRequest("idempotency_key",
			"required, or session_id, or conversation_id with tool: the key READY gave names the session the backend call was for")
	}
	return req.Lookup.validate()
}

// completion plans the completion of the locked session: its commit, with
// the answer.
func (e *Engine) completion(s *Session, req CompleteRequest) (*Commit, error) {
	if len(s.Completion) > 0 {
		// A retried CompleteSession of a session it already ended gets the
		// same answer, and writes nothing.
		if req.IdempotencyKey != "" && req.IdempotencyKey != s.CompletedKey {
			return nil, ErrNotActive
		}
		out := &Completion{}
		if err := json.Unmarshal(s.Completion, out); err != nil {
			return nil, fmt.Errorf("session: stored completion: %w", err)
		}
		return &Commit{Completion: out}, nil
	}
	key := idempotencyKey(s.ID, s.State.Slots)
	switch {
	case s.LastAction != string(clarify.Ready) && s.Status != Active:
		return nil, ErrNotActive
	case s.LastAction != string(clarify.Ready):
		return nil, notReady(s.LastAction)
	case req.IdempotencyKey != "" && req.IdempotencyKey != key:
		return nil, problem.WrongIdempotencyKey()
	}
	c := e.contracts.Get(s.Tool)
	if c == nil {
		return nil, problem.UnknownTool(s.Tool, e.contracts.Names())
	}
	out := e.outcome(c, s, req, key)
	if s.Status != Active && out.Action == clarify.Ready {
		// The session ended (a change of topic, a reset, an expiry) while
		// the call was in flight: no turn can retry it any more.
		out.Action, out.IdempotencyKey = clarify.Handoff, ""
		out.Problem.OwnerActionRequired = true
	}
	return completionCommit(c, s, req, out, key)
}

// completionCommit ends the session (or keeps it for a retry) and records
// what the model was given, never the raw answer with fields the output
// contract drops or masks.
func completionCommit(c *contract.Contract, s *Session, req CompleteRequest, out *Completion, key string) (*Commit, error) {
	next := s.Clone()
	next.Version++
	next.UpdatedAt = req.Now
	ended := next.EndedAt
	if ended.IsZero() {
		ended = req.Now
	}
	kind := "result"
	switch out.Action {
	case clarify.Ready:
		// Retryable: the slots stay; the next turn answers READY again.
		kind = "retryable failure"
	case clarify.Handoff:
		next.Status, next.EndedAt, next.LastAction = Failed, ended, string(clarify.Handoff)
		kind = "failure"
	default:
		// The backend did the work, even for a session that ended
		// meanwhile: it is completed.
		next.Status, next.EndedAt = Completed, ended
	}
	out.Session = viewOf(next, c, nil)
	completion, err := json.Marshal(out)
	if err != nil {
		return nil, err
	}
	if next.Status != Active {
		next.Completion, next.CompletedKey, next.Open = completion, key, false
	}
	request, err := json.Marshal(map[string]any{"kind": kind, "output": out.Output, "failure": req.Failure})
	if err != nil {
		return nil, err
	}
	commit := &Commit{Completion: out, Turn: &TurnRecord{ID: "complete:" + newID(), SessionID: s.ID, Version: next.Version,
		Action: string(out.Action), Request: request, Response: completion, At: req.Now}}
	if next.Status == Active {
		commit.Session = next
	} else {
		commit.Ended = []*Session{next}
	}
	return commit, nil
}

func notReady(last string) error { return problem.NotReady(last) }

type failureSpec struct {
	retryable   bool
	ownerAction bool
	typ         string // its title, in the session's language, is clarify.ProblemTitle's
}

var failures = map[FailureKind]failureSpec{
	FailureTimeout:      {true, false, "backend-timeout"},
	FailureUnavailable:  {true, false, "backend-unavailable"},
	FailureRateLimited:  {true, false, "backend-rate-limited"},
	FailureUnauthorized: {false, true, "backend-unauthorized"},
	FailureInternal:     {false, true, "backend-error"},
}

// outcome computes the model-facing object and the next action.
func (e *Engine) outcome(c *contract.Contract, s *Session, req CompleteRequest, key string) *Completion {
	if f := req.Failure; f != nil {
		spec := failures[f.Kind]
		p := &problem.Problem{
			Type:                problem.Base + spec.typ,
			Title:               clarify.ProblemTitle(c, s.Locale, problem.Base+spec.typ),
			Status:              502,
			Retryable:           spec.retryable,
			OwnerActionRequired: spec.ownerAction,
		}
		if f.Kind == FailureTimeout {
			p.Status = 504
		}
		if spec.retryable {
			p.RetryAfterSeconds = f.RetryAfterSeconds
			if p.RetryAfterSeconds <= 0 {
				p.RetryAfterSeconds = defaultRetryAfter
			}
			p.Detail = clarify.FailureText(c, s.Locale, true, p.RetryAfterSeconds)
			return &Completion{Output: errorOutput(p), Action: clarify.Ready, Problem: p, IdempotencyKey: key}
		}
		p.Detail = clarify.FailureText(c, s.Locale, false, 0)
		return &Completion{Output: errorOutput(p), Action: clarify.Handoff, Problem: p}
	}
	if o := c.Output(); o != nil {
		shaped, violations := o.Shape(req.Result, s.Locale)
		if len(violations) > 0 {
			p := &problem.Problem{
				Type: problem.TypeBackendOutputInvalid, Title: clarify.ProblemTitle(c, s.Locale, problem.TypeBackendOutputInvalid),
				Status: 502, Detail: clarify.FailureText(c, s.Locale, false, 0), OwnerActionRequired: true, Errors: violations,
			}
			return &Completion{Output: errorOutput(p), Action: clarify.Handoff, Problem: p}
		}
		return &Completion{Output: shaped}
	}
	if obj, ok := contract.Redacted(req.Result).(map[string]any); ok {
		return &Completion{Output: obj}
	}
	return &Completion{Output: map[string]any{"result": contract.Redacted(req.Result)}}
}

// errorOutput is the output object of a failure: status error with the
// problem, the shape the dispute example's output contract gives it.
func errorOutput(p *problem.Problem) map[string]any {
	e := map[string]any{
		"type": p.Type, "title": p.Title, "status": p.Status, "detail": p.Detail,
		"retryable": p.Retryable, "owner_action_required": p.OwnerActionRequired,
	}
	if p.RetryAfterSeconds > 0 {
		e["retry_after_seconds"] = p.RetryAfterSeconds
	}
	return map[string]any{"status": "error", "error": e}
}
