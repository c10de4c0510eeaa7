package session

import (
	"time"

	"github.com/slotd/slotd/contract"
	"github.com/slotd/slotd/internal/clarify"
	"github.com/slotd/slotd/internal/merge"
	"github.com/slotd/slotd/problem"
)

// A turn is a plan over plain values: the contract, the request and the
// conversation's current session in, the result and the commit out. It does
// no I/O, reads no clock and no context; Engine.Turn validates the request,
// locks the conversation through the Store, plans and commits.
//
// The stages, in the order a turn happens:
//
//	lifetime  lifetime.go   ended, expired, too long, stale: what becomes of the tool's open session
//	resume    resume.go     a stale session: hold the arguments and ask whether to go on
//	open      open.go       the session the turn works on, its locale and clock; carry-over from
//	                        the other open sessions; an exclusive tool, the open-session cap
//	answer    answer.go     the user's yes or no to the last question
//	merge     arguments.go  normalize each argument, refuse what does not fit, merge the rest
//	decide    decide.go     the next step (clarify.Decide), a declined approval, an approval spent
//	cap       attempts.go   failed attempts per slot; a hand-off at the cap
//	present   present.go    the one place that masks and shapes what leaves the engine
//	record    record.go     the session stamped, the marks and facts, the commit

// planInput is everything a turn's plan depends on.
type planInput struct {
	// contract is the turn's tool; contracts all the tools, for a session
	// of another one.
	contract  *contract.Contract
	contracts *contract.Catalog
	config    Config
	// req is validated, with its clock set.
	req TurnRequest
	// open are the conversation's open sessions: at most one per tool,
	// active, or ended outside a turn and not yet seen by one.
	open []*Session
	// left is the last use of a session that has left the open set.
	left Use
	// zones are the time zones the turn may resolve dates in (the
	// request's and the open sessions'), by name.
	zones map[string]*time.Location
	// newID draws the id of a session the turn opens; most turns open
	// none, and a replayed one is not planned.
	newID func() string
	// upgrade is what the tool's open session needs of its contract
	// version when it is not the catalog's (version.go); nil when it is.
	upgrade *upgrade
}

// turn is a turn being planned: what each stage found, for the next.
type turn struct {
	in planInput
	// c is the contract of the session the turn works on.
	c *contract.Contract
	// s is that session: a clone of the current one, or a new one.
	s      *Session
	commit Commit
	// others are the conversation's other open sessions that take turns,
	// most recently used first.
	others []*Session
	// ended are the sessions this turn ended or found ended, in the order
	// found, and notices what to tell the user of the sessions themselves.
	ended   []*Session
	notices []string
	// resumed: the turn came back to a session parked while other tools
	// were used.
	resumed bool
	// args and confirm are the request's, once a RESUME has had its say.
	args    map[string]any
	confirm *bool
	// resume: the session is stale; the turn asks whether to go on.
	resume bool
	env    contract.Env

	// changes are every slot change of the turn, in the order reported,
	// with values as received: present masks them.
	changes []merge.Change
	// merged are the changes the arguments made (not carry-over, not the
	// user's answer).
	merged []merge.Change
	// rejected are the slots whose value was refused, and refused why.
	rejected []string
	refused  []problem.FieldError
	// nulls are the slots the arguments named with a JSON null.
	nulls []string
	// declined: the user said no to the final approval.
	declined bool
	report   contract.Report
	step     clarify.Step
	// key is the idempotency key of the slots as decide found them, when
	// it needed it: for an approval given or for READY.
	key     string
	problem *problem.Problem
	valid   []ValidAfter
	// request is the request as the history keeps it.
	request TurnRequest
	// from is the version the session moves from to c (migrate), and
	// migration what the move did; notes are the history's notes of the
	// move's changes, the first ones of changes.
	from      *contract.Contract
	migration *Migration
	notes     []string
}

// plan runs the stages of a turn.
func plan(in planInput) (*Result, *Commit, error) {
	t := &turn{in: in, c: in.contract}
	if err := t.lifetime(); err != nil {
		return nil, nil, err
	}
	if err := t.pin(); err != nil {
		return nil, nil, err
	}
	if t.resume {
		t.holdForResume()
	} else {
		t.open()
		if t.from != nil {
			t.migrate()
		}
		t.answer()
		t.merge()
		t.decide()
		t.cap()
	}
	return t.record(t.present())
}
