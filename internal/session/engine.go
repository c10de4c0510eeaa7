package session

import (
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"sync"
	"time"

	"github.com/google/uuid"

	"github.com/slotd/slotd/contract"
	"github.com/slotd/slotd/internal/redact"
	"github.com/slotd/slotd/problem"
)

// Engine runs turns against a Store with a catalog of contracts.
type Engine struct {
	store     Store
	contracts *contract.Catalog
	clock     func() time.Time
	defaults  Config
	zones     sync.Map // name → *time.Location
	versions  *Versions
	replay    ReplaySource
}

// NewEngine builds an engine on store and contracts with cfg, whose zero
// fields take their defaults (Config.WithDefaults). It panics when cfg is
// not valid (Config.Validate), as a server checks its settings first.
func NewEngine(store Store, contracts *contract.Catalog, cfg Config) *Engine {
	cfg = cfg.WithDefaults()
	if err := cfg.Validate(); err != nil {
		panic("session.NewEngine: " + err.Error())
	}
	return &Engine{store: store, contracts: contracts, clock: cfg.Clock, defaults: cfg}
}

// Contracts is the engine's catalog.
func (e *Engine) Contracts() *contract.Catalog { return e.contracts }

// Lifetimes are the tool's stale_after and ttl, or the server's defaults.
func (e *Engine) Lifetimes(tool string) (staleAfter, ttl time.Duration) {
	return lifetimes(e.contracts, e.defaults, tool)
}

// Turn runs one turn: it validates the request, locks the conversation
// through the store, plans the turn on the conversation's current session
// (plan.go) and commits the plan in the same unit of work. A turn_id seen
// before gets its stored response, Replayed.
func (e *Engine) Turn(ctx context.Context, req TurnRequest) (*Result, error) {
	c, err := e.prepare(&req)
	if err != nil {
		return nil, err
	}
	// A session on a version this replica has not loaded makes the unit of
	// work end early (versionNeed); the version is read outside it and the
	// turn runs again. A session moved to yet another version in between
	// needs another read: a few rounds at most, as versions change rarely.
	var got *fetched
	var applied Applied
	for round := 0; ; round++ {
		applied, err = e.store.Turn(ctx, Key{Tenant: req.Tenant, ConversationID: req.ConversationID}, req.TurnID,
			func(cv Conversation) (*Commit, error) {
				up, err := e.upgradeOf(c, cv.Open, got)
				if err != nil {
					return nil, err
				}
				_, commit, err := plan(planInput{contract: c, contracts: e.contracts, config: e.defaults, req: req,
					open: cv.Open, left: cv.Left, zones: e.zonesOf(req, cv.Open), newID: newID, upgrade: up})
				tracePlan(ctx, commit, err)
				return commit, err
			})
		var need *versionNeed
		if !errors.As(err, &need) {
			break
		}
		if round == 3 {
			return nil, fmt.Errorf("%w: %v", ErrBusy, err)
		}
		if got, err = e.fetchVersion(ctx, need); err != nil {
			return nil, err
		}
	}
	if err != nil {
		return nil, err
	}
	var result *Result
	if applied.Replayed && applied.Tool != "" && applied.Tool != c.Name {
		return nil, turnOfAnotherTool(req.TurnID, applied.Tool)
	}
	if applied.Replayed && !sameContent(applied.Request, redactRequest(req, c)) {
		return nil, turnRewritten(req.TurnID)
	}
	if applied.Replayed {
		result = &Result{Replayed: true}
		if err := json.Unmarshal(applied.Response, result); err != nil {
			return nil, fmt.Errorf("session: stored response of turn %s: %w", req.TurnID, err)
		}
	} else {
		result = applied.Commit.Result
	}
	result.Request = req
	return result, nil
}

// prepare validates a turn request, finds its contract and sets its clock.
func (e *Engine) prepare(req *TurnRequest) (*contract.Contract, error) {
	if err := req.validate(); err != nil {
		return nil, err
	}
	c := e.contracts.Get(req.Tool)
	if c == nil {
		return nil, problem.UnknownTool(req.Tool, e.contracts.Names())
	}
	now, err := e.turnClock(req.Now)
	if err != nil {
		return nil, err
	}
	req.Now = now
	if req.TimeZone != "" {
		if _, err := e.location(req.TimeZone); err != nil {
			return nil, problem.InvalidRequest("time_zone", "not an IANA time zone such as Europe/Moscow")
		}
	}
	return c, nil
}

// turnClock is the clock a call runs on: the server's, or the caller's
// `now` when it is trusted or within the window of the server's.
func (e *Engine) turnClock(now time.Time) (time.Time, error) {
	server := e.clock().UTC()
	if now.IsZero() {
		return server, nil
	}
	now = now.UTC()
	if e.defaults.TrustClientClock {
		return now, nil
	}
	if d := now.Sub(server); d > e.defaults.ClockWindow || d < -e.defaults.ClockWindow {
		return time.Time{}, problem.InvalidRequest("now", fmt.Sprintf(
			"the client clock is %s off the server's; it may be at most %s off (leave now out to use the server's clock)",
			d.Round(time.Second), e.defaults.ClockWindow))
	}
	return now, nil
}

// zonesOf are the time zones a turn may resolve dates in: the request's and
// the open sessions'.
func (e *Engine) zonesOf(req TurnRequest, open []*Session) map[string]*time.Location {
	zones := make(map[string]*time.Location, len(open)+1)
	add := func(name string) {
		if loc, err := e.location(name); err == nil {
			zones[name] = loc
		}
	}
	add(req.TimeZone)
	for _, s := range open {
		add(s.TimeZone)
	}
	return zones
}

// turnOfAnotherTool refuses a turn_id already used on the conversation for
// another tool: answering it with the other call's stored response would
// hand one tool call another's answer.
func turnOfAnotherTool(turnID, tool string) error {
	return problem.TurnOfAnotherTool(turnID, tool)
}

// turnRewritten refuses a turn_id used again with other content: a retry
// carries the same request, and replaying the first answer to a changed one
// would drop what the user said this time without a word.
func turnRewritten(turnID string) error { return problem.TurnRewritten(turnID) }

// location loads a time zone once per name.
func (e *Engine) location(name string) (*time.Location, error) {
	if v, ok := e.zones.Load(name); ok {
		return v.(*time.Location), nil
	}
	loc, err := time.LoadLocation(name)
	if err != nil {
		return nil, err
	}
	e.zones.Store(name, loc)
	return loc, nil
}

// newID is a new session's id: a UUID (version 7) that no masking changes.
func newID() string {
	for {
		id, err := uuid.NewV7()
		if err != nil {
			id = uuid.New()
		}
		// A few random ids in ten thousand have digit groups that read as
		// the tail of a card number, and would be masked wherever they are
		// shown (a problem naming the session, a log line): draw again.
		if s := id.String(); redact.String(s) == s {
			return s
		}
	}
}
