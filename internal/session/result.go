package session

import (
	"time"

	"github.com/slotd/slotd/internal/clarify"
	"github.com/slotd/slotd/internal/merge"
	"github.com/slotd/slotd/problem"
)

// Result is a turn's response. It is stored as JSON with the turn and
// returned unchanged when the same turn_id comes again.
type Result struct {
	Session        View              `json:"session"`
	Action         clarify.Action    `json:"action"`
	Question       *clarify.Question `json:"question,omitempty"`
	Changes        []Change          `json:"changes,omitempty"`
	Arguments      map[string]any    `json:"arguments,omitempty"`
	IdempotencyKey string            `json:"idempotency_key,omitempty"`
	Problem        *problem.Problem  `json:"problem,omitempty"`
	TurnID         string            `json:"turn_id"`
	// Previous is the first session this turn ended or found ended
	// (expired, abandoned, reset), and Ended all of them.
	Previous *View  `json:"previous_session,omitempty"`
	Ended    []View `json:"ended_sessions,omitempty"`
	// Notice tells the user what happened to the sessions themselves.
	Notice string `json:"notice,omitempty"`
	// OpenSessions are the conversation's other open sessions, parked.
	OpenSessions []OpenSession `json:"open_sessions,omitempty"`
	// Resumed: the turn came back to a session parked while other tools
	// were used; Notice says what it holds.
	Resumed bool `json:"resumed,omitempty"`
	// Migration says how the turn moved its session to a newer contract
	// version (x-slotd.upgrade: migrate).
	Migration *Migration `json:"migration,omitempty"`
	// Replayed is true when the response was stored by an earlier delivery.
	Replayed bool `json:"-"`
	// Facts are what the turn showed, for metrics and logs (facts.go).
	Facts Facts `json:"-"`
	// Request is the turn as the engine ran it (its clock filled in), for
	// logs and metrics.
	Request TurnRequest `json:"-"`
}

// OpenSession is one of the conversation's other open sessions, as a turn
// reports it.
type OpenSession struct {
	Tool       string         `json:"tool"`
	SessionID  string         `json:"session_id"`
	Missing    []string       `json:"missing,omitempty"`
	LastAction clarify.Action `json:"last_action,omitempty"`
	UpdatedAt  time.Time      `json:"updated_at"`
}

// Change is a slot change as reported to the orchestrator.
type Change struct {
	merge.Change
	Message string `json:"message,omitempty"`
}

// View is a session as reported to the orchestrator.
type View struct {
	ID             string         `json:"id"`
	ConversationID string         `json:"conversation_id"`
	Tool           string         `json:"tool"`
	Status         Status         `json:"status"`
	Version        int64          `json:"version"`
	Slots          map[string]any `json:"slots"`
	Missing        []string       `json:"missing,omitempty"`
	Pending        []merge.Change `json:"pending,omitempty"`
	Locale         string         `json:"locale,omitempty"`
	TimeZone       string         `json:"time_zone,omitempty"`
	CreatedAt      time.Time      `json:"created_at"`
	UpdatedAt      time.Time      `json:"updated_at"`
	EndedAt        time.Time      `json:"ended_at,omitzero"`
	// Attempts counts failed attempts per slot since its last accepted value.
	Attempts map[string]int `json:"attempts,omitempty"`
	// ContractVersion is the version of the tool's contract the session
	// runs on.
	ContractVersion string `json:"contract_version,omitempty"`
}
