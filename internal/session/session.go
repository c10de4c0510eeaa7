// Package session owns a conversation's sessions: loading and locking the
// active one for a turn, running the turn (Engine.Turn in engine.go; the
// stages of its plan are listed in plan.go, in the order they happen), and
// persisting slots, the turn, its response and every slot change in one unit
// of work through a Store.
package session

import (
	"context"
	"errors"
	"fmt"
	"time"

	"github.com/slotd/slotd/internal/merge"
)

// Status is where a session is in its life.
type Status string

// The statuses. Only an active session takes turns.
const (
	Active    Status = "active"
	Completed Status = "completed"
	Abandoned Status = "abandoned"
	Expired   Status = "expired"
	Reset     Status = "reset"
	Cancelled Status = "cancelled"
	// Failed: the backend call failed in a way a retry cannot fix.
	Failed Status = "failed"
)

// Errors a Store translates its failures into; nothing above a store sees a
// driver error.
var (
	// ErrNotFound: no such session or conversation for this tenant.
	ErrNotFound = errors.New("session: not found")
	// ErrUnavailable: the store cannot be reached or failed over; retryable.
	ErrUnavailable = errors.New("session: store unavailable")
	// ErrBusy: a lock or statement timeout; retryable with the same turn_id.
	ErrBusy = errors.New("session: conversation busy")
	// ErrNotActive: the session has ended and takes no more changes.
	ErrNotActive = errors.New("session: not active")
)

// UnavailableError is an ErrUnavailable whose cause the store could name:
// a setting of the database or of a pooler in front of it that an operator
// must change. The caller is told Cause and Fix (plain words, never SQL, an
// address or a password); Err, the driver's error with the server's
// message, goes to the log only.
type UnavailableError struct {
	Cause string
	Fix   string
	Err   error
}

func (e *UnavailableError) Error() string {
	return fmt.Sprintf("%v: %s: %v", ErrUnavailable, e.Cause, e.Err)
}

// Unwrap makes the error both an ErrUnavailable and the driver's error.
func (e *UnavailableError) Unwrap() []error { return []error{ErrUnavailable, e.Err} }

// Key names a conversation. The same conversation_id under two tenants is
// two conversations.
type Key struct {
	Tenant         string
	ConversationID string
}

// Lookup finds a session: by SessionID when set; else the conversation's
// open session of Tool; else the conversation's most recently used open
// session.
type Lookup struct {
	Tenant         string
	ConversationID string
	SessionID      string
	Tool           string
	// Latest finds the conversation's most recent session, open or not,
	// when no SessionID is given.
	Latest bool
}

// Session is one tool's slot-filling run within a conversation.
type Session struct {
	ID      string
	Key     Key
	Tool    string
	Status  Status
	Version int64
	State   merge.State
	// LastAction is the action the previous turn answered with; a
	// confirmation answers it.
	LastAction string
	// ApprovedKey is the idempotency key of the arguments the user approved.
	ApprovedKey string
	// Held are a turn's raw arguments kept while the user is asked whether
	// to resume a stale session.
	Held map[string]any
	// Attempts counts failed attempts per slot since its last accepted value.
	Attempts map[string]int
	// Completion is the stored answer of the CompleteSession that ended the
	// session, returned again to a retry; CompletedKey is its key.
	Completion   []byte
	CompletedKey string
	Locale       string
	TimeZone     string
	CreatedAt    time.Time
	UpdatedAt    time.Time
	// LastUse is the time of the session's last turn (UpdatedAt moves
	// also when a backend call is recorded), and PreviousUse that of the
	// turn before it: by them a turn on another tool tells that this one
	// was used in between, even when a call of the same model message used
	// it again just now.
	LastUse     time.Time
	PreviousUse time.Time
	EndedAt     time.Time
	// Marks are what the session's turns have shown about the model's
	// arguments (facts.go); kept with the session, never in a response.
	Marks Marks
	// Open: the session is one of its conversation's open sessions — it
	// takes turns, or it ended outside a turn (an expiry, a reset) and no
	// turn of its tool has said so yet.
	Open bool
	// ContractVersion is the version of the tool's contract the session
	// runs on: the one it started with, or the one a migration moved it to.
	ContractVersion string
}

// lastUse is the time of the session's last turn; for a session stored
// before LastUse was kept, its UpdatedAt.
func (s *Session) lastUse() time.Time {
	if s.LastUse.IsZero() {
		return s.UpdatedAt
	}
	return s.LastUse
}

// Use is the session's last turns as a Use.
func (s *Session) Use() Use {
	return Use{Tool: s.Tool, At: s.lastUse(), Previous: s.PreviousUse}
}

// WrittenAfter says whether s comes after o in the order the stores read
// a conversation's sessions in: by updated_at, and of sessions written at
// the same instant by id (pgstore's "ORDER BY updated_at DESC, id DESC").
func (s *Session) WrittenAfter(o *Session) bool {
	return s.UpdatedAt.After(o.UpdatedAt) || s.UpdatedAt.Equal(o.UpdatedAt) && s.ID > o.ID
}

// Clone returns a copy sharing no maps with s.
func (s *Session) Clone() *Session {
	c := *s
	c.State = s.State.Clone()
	if s.Attempts != nil {
		c.Attempts = make(map[string]int, len(s.Attempts))
		for k, v := range s.Attempts {
			c.Attempts[k] = v
		}
	}
	if s.Held != nil {
		c.Held = make(map[string]any, len(s.Held))
		for k, v := range s.Held {
			c.Held[k] = v
		}
	}
	return &c
}

// TurnRecord is an applied turn and the response it got.
type TurnRecord struct {
	ID        string
	SessionID string
	Version   int64
	Action    string
	// Request is the turn's request as JSON, with card-like numbers masked.
	Request []byte
	// Response is the engine's response as JSON, returned again on a retry.
	Response []byte
	At       time.Time
	// ContractVersion is the contract version the turn ran on.
	ContractVersion string
	// Replays is how many times the turn_id came again and was answered
	// from Response; ReplayedAt when the last of them came (at most
	// MaxReplayTimes, oldest first).
	Replays    int
	ReplayedAt []time.Time
}

// MaxReplayTimes bounds the replay times a turn keeps: a client retrying
// without end grows a count, not a list.
const MaxReplayTimes = 16

// ChangeRecord is one slot change in the history: the audit trail.
type ChangeRecord struct {
	SessionID string
	Version   int64
	TurnID    string
	Slot      string
	Old       any
	New       any
	Decision  merge.Decision
	At        time.Time
	// Note says why a change made outside the user's arguments was made:
	// a move to a new contract version names both versions.
	Note string
}

// Commit is what one unit of work writes.
type Commit struct {
	// Session is the session the work is about: new, or the loaded one
	// with Version increased by one.
	Session *Session
	// Ended are the other sessions the work writes, each with Version
	// increased by one: ended by it (status and EndedAt set), or ended
	// before and now no longer open.
	Ended []*Session
	// Turn is nil for work that is not a turn (a reset).
	Turn    *TurnRecord
	Changes []ChangeRecord
	// Result is the answer of the turn the commit is of, and Completion
	// that of a CompleteSession: what the engine hands back once the store
	// has written the commit. Stores do not write them.
	Result     *Result
	Completion *Completion
}

// Applied is what Store.Turn did: answered a turn_id seen before from its
// stored response, or wrote the commit the turn made.
type Applied struct {
	// Replayed: the turn_id was applied before; fn was not called.
	Replayed bool
	// Response is the turn's response as stored.
	Response []byte
	// Tool is the tool of the stored turn, when Replayed.
	Tool string
	// Request is the stored turn's request as the history keeps it, when
	// Replayed: a retry must carry the same content.
	Request []byte
	// Commit is what fn made and the store wrote; nil when Replayed.
	Commit *Commit
}

// History is a session's turns and slot changes, oldest first.
type History struct {
	Turns   []TurnRecord
	Changes []ChangeRecord
}

// Conversation is what a turn reads of its conversation under the lock.
type Conversation struct {
	// Open are the conversation's open sessions (see Session.Open), in no
	// particular order.
	Open []*Session
	// Left is the session that left the open set last (completed,
	// cancelled, failed, or ended and seen by a turn): its tool and when it
	// was last used; zero when none has. By it a turn tells that another
	// tool was used and finished since its own session's last turn.
	Left Use
}

// Use is when a session of a tool had its last turn, and the one before.
type Use struct {
	Tool     string
	At       time.Time
	Previous time.Time
}

// TurnFunc computes a turn's commit from its conversation. It runs while
// the conversation is locked.
type TurnFunc func(c Conversation) (*Commit, error)

// OpenFunc computes a commit from a conversation's open sessions, in no
// particular order. It runs while the conversation is locked.
type OpenFunc func(open []*Session) (*Commit, error)

// Store keeps sessions. Implementations pass sessiontest.Run.
type Store interface {
	// Turn locks the conversation (one writer per conversation, also across
	// processes) and, unless turnID was applied before, calls fn and writes
	// its commit in the same unit of work. For a turnID seen before it
	// returns the stored response, Replayed, and does not call fn.
	Turn(ctx context.Context, key Key, turnID string, fn TurnFunc) (Applied, error)
	// Update locks the session's conversation, calls fn with the session
	// as it is under the lock, writes fn's commit and returns it.
	Update(ctx context.Context, l Lookup, fn func(s *Session) (*Commit, error)) (*Commit, error)
	// UpdateOpen locks a conversation, calls fn with its open sessions,
	// writes fn's commit and returns it; ErrNotFound when the conversation
	// has none.
	UpdateOpen(ctx context.Context, key Key, fn OpenFunc) (*Commit, error)
	// Session reads one session.
	Session(ctx context.Context, l Lookup) (*Session, error)
	// History reads a session's turns and changes.
	History(ctx context.Context, l Lookup) (*History, error)
	// Ready reports whether the store can take turns.
	Ready(ctx context.Context) error

	// List reads sessions matching f, ordered by id, at most f.Limit.
	List(ctx context.Context, f Filter) ([]*Session, error)
	// EndSessions ends a bounded batch of active sessions matching f, the
	// oldest (by creation) first, calling fn for each while its
	// conversation is locked and skipping conversations locked by a turn.
	// It returns the ids ended (or, with dryRun, that would be, changing
	// nothing).
	EndSessions(ctx context.Context, f Filter, dryRun bool, fn EndFunc) ([]string, error)
	// Purge deletes a bounded batch of sessions ended before f.EndedBefore,
	// with their turns and history, and the conversations they leave
	// without a session. A conversation a turn holds keeps its row; a turn
	// that finds its conversation's row gone makes it again.
	Purge(ctx context.Context, f Filter, dryRun bool) ([]string, error)
	// Erase removes every row that holds the conversation, waiting for a
	// turn in progress, and writes rec, in one unit of work.
	Erase(ctx context.Context, key Key, rec Erasure) (Erased, error)
	// Tenants lists, sorted, at most limit tenants holding a session with
	// l.SessionID (in l.ConversationID, when that is set too), or without
	// a session id a session of l.ConversationID; l.Tenant is not read.
	// Operators look sessions up without naming their tenant through it.
	Tenants(ctx context.Context, l Lookup, limit int) ([]string, error)
}
