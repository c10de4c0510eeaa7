package client

import (
	"strings"
	"time"

	"google.golang.org/protobuf/types/known/structpb"
	"google.golang.org/protobuf/types/known/timestamppb"

	slotdv1 "github.com/slotd/slotd/api/proto/slotd/v1"
)

// Action is the one next step the orchestrator takes: the proto's Action
// without its ACTION_ prefix.
type Action string

// The actions slotd answers with.
const (
	// ActionAsk: say Question.Text to the user.
	ActionAsk Action = "ASK"
	// ActionReconfirm: a changed irreversible value waits; ask the user
	// (Question.Text shows old and new) and send Confirmation.
	ActionReconfirm Action = "RECONFIRM"
	// ActionConfirm: every slot is valid; ask the user to approve the
	// summary in Question.Text and send Confirmation.
	ActionConfirm Action = "CONFIRM"
	// ActionReady: call the backend with Arguments and IdempotencyKey, then
	// Complete.
	ActionReady Action = "READY"
	// ActionRepair: the slots break a cross-field rule; hand Problem (with
	// its allowed values) back to the model.
	ActionRepair Action = "REPAIR"
	// ActionResume: the conversation was idle; ask whether to go on.
	ActionResume Action = "RESUME"
	// ActionHandoff: hand the conversation to a person.
	ActionHandoff Action = "HANDOFF"
	// ActionCancelled: the user declined the final approval.
	ActionCancelled Action = "CANCELLED"
)

func actionOf(a slotdv1.Action) Action {
	if a == slotdv1.Action_ACTION_UNSPECIFIED {
		return ""
	}
	return Action(strings.TrimPrefix(a.String(), "ACTION_"))
}

// Decision says what a turn did to one slot: the proto's Decision without
// its DECISION_ prefix ("FILLED", "OVERWRITTEN", "PENDING", "REJECTED"...).
type Decision string

// Status is where a session is in its life: "ACTIVE", "COMPLETED"...
type Status string

// OpenSession is one of the conversation's other open sessions.
type OpenSession struct {
	Tool      string
	SessionID string
	// Missing are its required slots still empty.
	Missing    []string
	LastAction Action
	UpdatedAt  time.Time
}

// TurnResult is slotd's answer to one turn.
type TurnResult struct {
	// TurnID is the turn_id the answer is for: the one Turn made, or the one
	// given with the TurnID option.
	TurnID string
	Action Action
	// Question is what to ask; nil for READY and REPAIR.
	Question *Question
	// Changes say what the turn did to each slot it touched; a change with a
	// Message is to be told to the user.
	Changes []Change
	// Arguments are the normalized arguments, for CONFIRM and READY.
	Arguments map[string]any
	// IdempotencyKey is for the backend call after READY.
	IdempotencyKey string
	// Problem says why a value was refused or what a cross-field rule needs
	// (REPAIR). It is a business outcome: do not retry it, hand it to the
	// model.
	Problem *Problem
	Session Session
	// PreviousSession is the first session this turn ended or found ended
	// (expired, reset, abandoned to make room); EndedSessions all of them.
	PreviousSession *Session
	EndedSessions   []Session
	// Notice is what to tell the user about the sessions themselves: an
	// expiry, the tools closed to make room, what a session the conversation
	// came back to holds.
	Notice string
	// OpenSessions are the conversation's other open sessions, parked while
	// this tool is used.
	OpenSessions []OpenSession
	// Resumed: the first turn back on a session after other tools were
	// used; Notice says what it holds and still needs.
	Resumed bool
	// Replayed says slotd had applied this turn_id before and answered with
	// the stored response.
	Replayed bool
	// Attempts is how many calls it took (1 without retries).
	Attempts int
	// Response is the message as received.
	Response *slotdv1.TurnResponse
}

// Question is what to ask the user.
type Question struct {
	// Slot is the slot asked about; empty for CONFIRM.
	Slot string
	// Text is the question by meaning, in the session's locale.
	Text string
	// AllowedValues are the values the slot accepts, when it has an enum.
	AllowedValues []string
	// Format is the expected format, e.g. "YYYY-MM-DD".
	Format string
	// Old and New are the held and the waiting value, for RECONFIRM.
	Old, New any
}

// Change is what a turn did to one slot.
type Change struct {
	Slot     string
	Old, New any
	Decision Decision
	// Message is what to tell the user, e.g. "Понял, меняю сумму на 1340.00".
	Message string
}

// Session is a conversation's slots and where they stand.
type Session struct {
	ID             string
	ConversationID string
	Tool           string
	Status         Status
	// Version increases by one with every applied turn.
	Version int64
	// Slots are the normalized values (decimals and dates as strings).
	Slots map[string]any
	// Missing are the required slots still empty, in contract order.
	Missing []string
	// Pending are irreversible changes waiting for re-confirmation.
	Pending   []PendingChange
	Locale    string
	TimeZone  string
	CreatedAt time.Time
	UpdatedAt time.Time
	// EndedAt is zero while the session is active.
	EndedAt time.Time
	// Attempts are the failed attempts per slot since its last accepted value.
	Attempts map[string]int
}

// PendingChange is an irreversible change waiting for re-confirmation.
type PendingChange struct {
	Slot     string
	Old, New any
}

// Problem is an RFC 9457 problem with the members an agent decides by.
type Problem struct {
	Type   string
	Title  string
	Status int
	Detail string
	// Instance identifies this occurrence, when slotd gives one.
	Instance string
	// Retryable says the same call may succeed later (with the same turn_id).
	Retryable bool
	// RetryAfter is how long slotd asks to wait before the retry.
	RetryAfter time.Duration
	// OwnerActionRequired says a person (the operator or the integrator),
	// not a retry, must fix it.
	OwnerActionRequired bool
	// Errors name each refused argument and what would fit.
	Errors []FieldError
}

// FieldError says what is wrong with one argument and what would fit.
type FieldError struct {
	// Pointer is the JSON pointer of the argument, e.g. "/reason".
	Pointer string
	// Input is what was received, as JSON text (card numbers masked).
	Input         string
	Message       string
	AllowedValues []string
	// Format is the expected format with an example.
	Format string
}

// ToolSchema is a tool's input schema for a provider's strict mode.
type ToolSchema struct {
	// Tool is the contract's name, the one Turn takes ("bank.open_dispute").
	Tool string
	// Name is the tool's name as the provider accepts it, the one the model
	// calls ("bank_open_dispute": OpenAI's names have no dots). Map it back
	// to Tool before calling Turn.
	Name        string
	Description string
	// Parameters is the JSON Schema to give to the model as the tool's
	// input schema.
	Parameters map[string]any
	Provider   string
	// Version is the contract's content hash.
	Version string
}

// FailureKind is how a backend call failed: "TIMEOUT", "UNAVAILABLE",
// "RATE_LIMITED", "UNAUTHORIZED" or "INTERNAL".
type FailureKind string

// The failure kinds CompleteFailed understands.
const (
	FailureTimeout      FailureKind = "TIMEOUT"
	FailureUnavailable  FailureKind = "UNAVAILABLE"
	FailureRateLimited  FailureKind = "RATE_LIMITED"
	FailureUnauthorized FailureKind = "UNAUTHORIZED"
	FailureInternal     FailureKind = "INTERNAL"
)

// Failure is a failed backend call.
type Failure struct {
	Kind FailureKind
	// HTTPStatus is the backend's status, when there was one.
	HTTPStatus int
	// RetryAfter is the backend's Retry-After, when it gave one.
	RetryAfter time.Duration
}

// Completion is slotd's answer to Complete and CompleteFailed.
type Completion struct {
	Session Session
	// Output is the object to put into the model's context, valid against
	// the tool's output contract.
	Output map[string]any
	// Action is READY when retrying the backend with the same key is safe,
	// HANDOFF when a person must take over, "" when the session completed.
	Action  Action
	Problem *Problem
}

func turnResult(r *slotdv1.TurnResponse) *TurnResult {
	out := &TurnResult{
		TurnID: r.GetTurnId(), Action: actionOf(r.GetAction()), IdempotencyKey: r.GetIdempotencyKey(),
		Problem: problemOf(r.GetProblem()), Notice: r.GetNotice(), Response: r,
	}
	if s := sessionOf(r.GetSession()); s != nil {
		out.Session = *s
	}
	if r.PreviousSession != nil {
		out.PreviousSession = sessionOf(r.PreviousSession)
	}
	out.Resumed = r.GetResumed()
	for _, e := range r.GetEndedSessions() {
		out.EndedSessions = append(out.EndedSessions, *sessionOf(e))
	}
	for _, o := range r.GetOpenSessions() {
		out.OpenSessions = append(out.OpenSessions, OpenSession{Tool: o.GetTool(), SessionID: o.GetSessionId(),
			Missing: o.GetMissing(), LastAction: actionOf(o.GetLastAction()), UpdatedAt: timeOf(o.GetUpdatedAt())})
	}
	if q := r.GetQuestion(); q != nil {
		out.Question = &Question{Slot: q.GetSlot(), Text: q.GetText(), AllowedValues: q.GetAllowedValues(),
			Format: q.GetFormat(), Old: valueOf(q.GetOld()), New: valueOf(q.GetNew())}
	}
	for _, ch := range r.GetChanges() {
		out.Changes = append(out.Changes, Change{Slot: ch.GetSlot(), Old: valueOf(ch.GetOld()), New: valueOf(ch.GetNew()),
			Decision: Decision(strings.TrimPrefix(ch.GetDecision().String(), "DECISION_")), Message: ch.GetMessage()})
	}
	if r.Arguments != nil {
		out.Arguments = r.Arguments.AsMap()
	}
	return out
}

func sessionOf(s *slotdv1.Session) *Session {
	if s == nil {
		return nil
	}
	out := &Session{
		ID: s.GetId(), ConversationID: s.GetConversationId(), Tool: s.GetTool(),
		Status: Status(strings.TrimPrefix(s.GetStatus().String(), "SESSION_STATUS_")), Version: s.GetVersion(),
		Slots: s.GetSlots().AsMap(), Missing: s.GetMissing(), Locale: s.GetLocale(), TimeZone: s.GetTimeZone(),
		CreatedAt: timeOf(s.GetCreatedAt()), UpdatedAt: timeOf(s.GetUpdatedAt()), EndedAt: timeOf(s.GetEndedAt()),
	}
	for _, p := range s.GetPending() {
		out.Pending = append(out.Pending, PendingChange{Slot: p.GetSlot(), Old: valueOf(p.GetOld()), New: valueOf(p.GetNew())})
	}
	if len(s.GetAttempts()) > 0 {
		out.Attempts = make(map[string]int, len(s.GetAttempts()))
		for k, v := range s.GetAttempts() {
			out.Attempts[k] = int(v)
		}
	}
	return out
}

func problemOf(p *slotdv1.Problem) *Problem {
	if p == nil {
		return nil
	}
	out := &Problem{
		Type: p.GetType(), Title: p.GetTitle(), Status: int(p.GetStatus()), Detail: p.GetDetail(), Instance: p.GetInstance(),
		Retryable: p.GetRetryable(), RetryAfter: time.Duration(p.GetRetryAfterSeconds()) * time.Second,
		OwnerActionRequired: p.GetOwnerActionRequired(),
	}
	for _, e := range p.GetErrors() {
		out.Errors = append(out.Errors, FieldError{Pointer: e.GetPointer(), Input: e.GetInput(), Message: e.GetMessage(),
			AllowedValues: e.GetAllowedValues(), Format: e.GetFormat()})
	}
	return out
}

// valueOf is a Value as plain Go; absent stays nil.
func valueOf(v *structpb.Value) any {
	if v == nil {
		return nil
	}
	return v.AsInterface()
}

func timeOf(t *timestamppb.Timestamp) time.Time {
	if t == nil {
		return time.Time{}
	}
	return t.AsTime()
}
