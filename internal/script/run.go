package script

import (
	"cmp"
	"context"
	"crypto/rand"
	"encoding/hex"
	"encoding/json"
	"errors"
	"fmt"
	"strings"
	"sync"
	"time"

	"google.golang.org/grpc"
	"google.golang.org/grpc/codes"
	"google.golang.org/grpc/metadata"
	"google.golang.org/grpc/status"
	"google.golang.org/protobuf/types/known/structpb"
	"google.golang.org/protobuf/types/known/timestamppb"

	slotdv1 "github.com/slotd/slotd/api/proto/slotd/v1"
)

// ReplayedHeader is the response header slotd sets on the stored response
// to a turn_id it has seen before.
const ReplayedHeader = "slotd-replayed"

// Runner plays scripts over a gRPC connection to slotd. Its zero value
// needs only Conn.
type Runner struct {
	// Conn is the connection to slotd, e.g. a *grpc.ClientConn.
	Conn grpc.ClientConnInterface
	// TenantKey, when set, is sent as "authorization: Bearer KEY" with every
	// call.
	TenantKey string
	// Parallel is how many scripts RunAll plays at once; 1 when zero.
	Parallel int
	// KeepGoing plays the rest of a script after a failed step. By default a
	// script stops at its first failed step: the steps after it mostly
	// repeat the same failure.
	KeepGoing bool
	// Timeout bounds each call; 10s when zero.
	Timeout time.Duration
	// Clock is the start clock of a script that sets none; time.Now when nil.
	Clock func() time.Time
	// Record plays scripts without checking what they expect and keeps each
	// response, so that Record can write it into the script as its
	// expectations.
	Record bool
}

// Result is how one script went.
type Result struct {
	Script *Script
	// ConversationID is the conversation the script played, to look up its
	// history in slotd.
	ConversationID string
	// Steps are the steps played, in order; a script stops at its first
	// failed step unless the runner keeps going.
	Steps    []*StepResult
	Duration time.Duration
	// Skipped says the script was not played: its Skip is set.
	Skipped bool
}

// StepResult is how one step went.
type StepResult struct {
	// N is the step's 1-based position in the script.
	N    int
	Name string
	Pos  Pos
	// Sent says briefly what the step sent.
	Sent string
	// Mismatches are the expectations the response did not meet.
	Mismatches []Mismatch
	// Err is a call that failed where the script expected a response.
	Err      error
	Duration time.Duration

	user string
	got  *observed
}

// Mismatch is one expected field that came out differently.
type Mismatch struct {
	// Field names what was checked, e.g. "slots.amount" or "changes[amount].decision".
	Field string
	// Pos is where the script states the expectation.
	Pos Pos
	// Want and Got are the expected and the actual value, as text.
	Want, Got string
}

// Failed says whether the step failed.
func (s *StepResult) Failed() bool { return s.Err != nil || len(s.Mismatches) > 0 }

// Failed says whether the script failed: a step failed, or it stopped
// before its end.
func (r *Result) Failed() bool {
	if r.Skipped {
		return false
	}
	for _, s := range r.Steps {
		if s.Failed() {
			return true
		}
	}
	return len(r.Steps) < len(r.Script.steps)
}

// observed is a response of any kind of step, or the error that came
// instead, in the shape the checks read.
type observed struct {
	kind      stepKind
	err       *status.Status
	action    slotdv1.Action
	question  *slotdv1.Question
	session   *slotdv1.Session
	changes   []*slotdv1.Change
	arguments *structpb.Struct
	key       string
	problem   *slotdv1.Problem
	replayed  bool
	output    *structpb.Struct
	resumed   bool
	notice    string
	open      []string           // the tools of the other open sessions
	ended     []*slotdv1.Session // the sessions the turn ended or found ended
	// calls are the responses to a parallel step's calls, in its order.
	calls []*observed
}

func (r *Runner) timeout() time.Duration {
	if r.Timeout > 0 {
		return r.Timeout
	}
	return 10 * time.Second
}

// RunAll plays scripts, Parallel at a time, each in its own conversation,
// and returns their results in the order of scripts.
func (r *Runner) RunAll(ctx context.Context, scripts []*Script) []*Result {
	out := make([]*Result, len(scripts))
	n := max(r.Parallel, 1)
	sem := make(chan struct{}, n)
	var wg sync.WaitGroup
	for i, s := range scripts {
		wg.Add(1)
		sem <- struct{}{}
		go func() {
			defer wg.Done()
			defer func() { <-sem }()
			out[i] = r.Run(ctx, s)
		}()
	}
	wg.Wait()
	return out
}

// Run plays one script in a conversation of its own.
func (r *Runner) Run(ctx context.Context, s *Script) *Result {
	start := time.Now()
	res := &Result{Script: s, ConversationID: conversationID(s.Name)}
	if s.Skip != "" {
		res.Skipped = true
		return res
	}
	if r.Conn == nil {
		res.Steps = append(res.Steps, &StepResult{N: 1, Err: errors.New("script.Runner has no Conn")})
		return res
	}
	if r.TenantKey != "" {
		ctx = metadata.AppendToOutgoingContext(ctx, "authorization", "Bearer "+r.TenantKey)
	}
	clock := s.Clock
	if clock.IsZero() {
		clock = time.Now()
		if r.Clock != nil {
			clock = r.Clock()
		}
	}
	client := slotdv1.NewSlotServiceClient(r.Conn)
	seen := map[int]*observed{}
	lastKey := ""
	for _, st := range s.steps {
		clock = clock.Add(st.advance)
		sr := &StepResult{N: st.n, Name: st.name, Pos: st.pos, user: st.user, Sent: st.describe()}
		t0 := time.Now()
		var o *observed
		if st.kind == kindParallel {
			o = r.playParallel(ctx, client, s, st, res.ConversationID, clock)
		} else {
			o = r.play(ctx, client, s, st, res.ConversationID, clock, lastKey)
		}
		sr.Duration = time.Since(t0)
		sr.got = o
		seen[st.n] = o
		for _, c := range append([]*observed{o}, o.calls...) {
			if c.err == nil && c.action == slotdv1.Action_ACTION_READY && c.key != "" {
				lastKey = c.key
			}
		}
		sr.Mismatches, sr.Err = r.verify(st, o, seen)
		res.Steps = append(res.Steps, sr)
		if sr.Err != nil || (sr.Failed() && !r.KeepGoing) || ctx.Err() != nil {
			break
		}
	}
	res.Duration = time.Since(start)
	return res
}

// verify is what a step's response says of the step: a call that failed
// where a response was expected, and the expectations it does not meet.
// A parallel step is each of its calls, named by their place.
func (r *Runner) verify(st *step, o *observed, seen map[int]*observed) ([]Mismatch, error) {
	if st.kind == kindParallel {
		var errs []error
		var out []Mismatch
		for i, call := range st.calls {
			ms, err := r.verify(call, o.calls[i], seen)
			label := fmt.Sprintf("parallel[%d] (%s)", i+1, call.turnIDOr())
			if err != nil {
				errs = append(errs, fmt.Errorf("%s: %w", label, err))
			}
			for _, m := range ms {
				m.Field = label + "." + m.Field
				out = append(out, m)
			}
		}
		return out, errors.Join(errs...)
	}
	if r.Record {
		if o.err != nil && fatal(o.err.Code()) {
			return nil, callError(o.err)
		}
		return nil, nil
	}
	var err error
	if o.err != nil && (st.expect == nil || st.expect.Error == nil) {
		err = callError(o.err)
	}
	if st.expect == nil {
		return nil, err
	}
	return st.expect.check(o, seen), err
}

// playParallel sends a parallel step's calls at once, as an orchestrator
// sends the tool calls of one model message, and waits for every answer.
func (r *Runner) playParallel(ctx context.Context, client slotdv1.SlotServiceClient, s *Script, st *step, conv string, clock time.Time) *observed {
	o := &observed{kind: kindParallel, calls: make([]*observed, len(st.calls))}
	var wg sync.WaitGroup
	for i, call := range st.calls {
		wg.Add(1)
		go func() {
			defer wg.Done()
			o.calls[i] = r.play(ctx, client, s, call, conv, clock, "")
		}()
	}
	wg.Wait()
	return o
}

// fatal errors say nothing about the script: the server is gone or broken.
func fatal(c codes.Code) bool {
	switch c {
	case codes.Unavailable, codes.DeadlineExceeded, codes.Canceled, codes.Unknown, codes.Internal, codes.Unauthenticated:
		return true
	}
	return false
}

func callError(st *status.Status) error {
	msg := fmt.Sprintf("the call failed: %s: %s", st.Code(), st.Message())
	p := problemOf(st)
	if p != nil && p.Detail != "" {
		msg += " (" + p.Detail + ")"
	}
	if tool, known := unknownTool(p); len(known) > 0 {
		msg += "; known tools: " + strings.Join(known, ", ")
		if s := suggest(tool, known); s != "" {
			msg += fmt.Sprintf("; did you mean %q?", s)
		}
	}
	if st.Code() == codes.InvalidArgument && refusesClock(p) {
		msg += "; a script runs on its own clock, sent as each turn's now: start that slotd with " +
			"--client-clock trust (SLOTD_CLIENT_CLOCK=trust; make run does), or run the script in-process without --addr"
	}
	return errors.New(msg)
}

// unknownTool is the tool a problem says slotd has no contract of, and the
// ones it has.
func unknownTool(p *slotdv1.Problem) (string, []string) {
	for _, e := range p.GetErrors() {
		if e.GetPointer() == "/tool" && len(e.GetAllowedValues()) > 0 {
			var tool string
			_ = json.Unmarshal([]byte(e.GetInput()), &tool)
			return tool, e.GetAllowedValues()
		}
	}
	return "", nil
}

// refusesClock tells whether a problem is the server refusing the now a
// script sends, which a slotd outside its clock window does.
func refusesClock(p *slotdv1.Problem) bool {
	for _, e := range p.GetErrors() {
		if e.GetPointer() == "/now" {
			return true
		}
	}
	return false
}

func problemOf(st *status.Status) *slotdv1.Problem {
	for _, d := range st.Details() {
		if p, ok := d.(*slotdv1.Problem); ok {
			return p
		}
	}
	return nil
}

// play sends one step and reads what came back.
func (r *Runner) play(ctx context.Context, client slotdv1.SlotServiceClient, s *Script, st *step, conv string, clock time.Time, lastKey string) *observed {
	ctx, cancel := context.WithTimeout(ctx, r.timeout())
	defer cancel()
	o := &observed{kind: st.kind}
	var err error
	switch st.kind {
	case kindTurn:
		req := &slotdv1.TurnRequest{
			ConversationId: conv, Tool: cmp.Or(st.tool, s.Tool), TurnId: st.turnIDOr(), Locale: s.Locale, TimeZone: s.TimeZone,
			Now: timestamppb.New(clock),
		}
		if st.args != nil {
			if req.Arguments, err = structpb.NewStruct(st.args); err != nil {
				o.err = status.New(codes.InvalidArgument, "the script's args are not JSON: "+err.Error())
				return o
			}
		}
		if st.confirm != nil {
			req.Confirmation = &slotdv1.Confirmation{Accept: *st.confirm}
		}
		var header metadata.MD
		var resp *slotdv1.TurnResponse
		resp, err = client.Turn(ctx, req, grpc.Header(&header))
		if err == nil {
			o.action, o.question, o.session, o.changes = resp.Action, resp.Question, resp.Session, resp.Changes
			o.arguments, o.key, o.problem = resp.Arguments, resp.IdempotencyKey, resp.Problem
			o.resumed, o.notice, o.ended = resp.Resumed, resp.Notice, resp.EndedSessions
			for _, op := range resp.OpenSessions {
				o.open = append(o.open, op.Tool)
			}
			if v := header.Get(ReplayedHeader); len(v) > 0 && v[0] == "true" {
				o.replayed = true
			}
		}
	case kindReset:
		var resp *slotdv1.ResetSessionResponse
		resp, err = client.ResetSession(ctx, &slotdv1.ResetSessionRequest{ConversationId: conv, Tool: st.tool})
		if err == nil {
			o.session, o.changes = resp.Session, resp.Changes
		}
	case kindComplete:
		c := st.complete
		req := &slotdv1.CompleteSessionRequest{ConversationId: conv, Tool: st.tool, IdempotencyKey: c.idempotencyKey, Now: timestamppb.New(clock)}
		if req.IdempotencyKey == "" {
			req.IdempotencyKey = lastKey
		}
		if c.hasResult {
			v, verr := structpb.NewValue(c.result)
			if verr != nil {
				o.err = status.New(codes.InvalidArgument, "the script's result is not JSON: "+verr.Error())
				return o
			}
			req.Outcome = &slotdv1.CompleteSessionRequest_Result{Result: v}
		} else {
			req.Outcome = &slotdv1.CompleteSessionRequest_Failure{Failure: c.failure}
		}
		var resp *slotdv1.CompleteSessionResponse
		resp, err = client.CompleteSession(ctx, req)
		if err == nil {
			o.action, o.session, o.output, o.problem = resp.Action, resp.Session, resp.Output, resp.Problem
		}
	}
	if err != nil {
		o.err = status.Convert(err)
		o.problem = problemOf(o.err)
	}
	return o
}

// turnIDOr is the step's turn_id, or turn-N: a script can replay step N by
// giving turn_id: turn-N.
func (st *step) turnIDOr() string {
	switch {
	case st.turnID != "":
		return st.turnID
	case st.call > 0:
		return fmt.Sprintf("turn-%d.%d", st.n, st.call)
	}
	return fmt.Sprintf("turn-%d", st.n)
}

// describe says briefly what a step sends.
func (st *step) describe() string {
	var parts []string
	if st.advance > 0 {
		parts = append(parts, "after "+st.advance.String())
	}
	if st.tool != "" {
		parts = append(parts, "tool "+st.tool)
	}
	switch st.kind {
	case kindParallel:
		calls := make([]string, len(st.calls))
		for i, c := range st.calls {
			calls[i] = c.describe()
		}
		parts = append(parts, "parallel ["+strings.Join(calls, " | ")+"]")
	case kindTurn:
		if st.hasArgs {
			if st.args == nil {
				parts = append(parts, "args null")
			} else {
				parts = append(parts, "args "+show(st.args))
			}
		}
		if st.confirm != nil {
			parts = append(parts, "confirm "+map[bool]string{true: "yes", false: "no"}[*st.confirm])
		}
		if st.turnID != "" {
			parts = append(parts, "turn_id "+st.turnID)
		}
	case kindReset:
		parts = append(parts, "reset")
	case kindComplete:
		if st.complete.hasResult {
			parts = append(parts, "complete result "+show(st.complete.result))
		} else {
			parts = append(parts, "complete failure "+strings.TrimPrefix(st.complete.failure.Kind.String(), "FAILURE_KIND_"))
		}
	}
	return strings.Join(parts, ", ")
}

// conversationID is unique per run, so that a script can be played again
// against the same server, and says which script it belongs to.
func conversationID(name string) string {
	var b strings.Builder
	b.WriteString("script-")
	n, dash := 0, false
	for _, r := range strings.ToLower(name) {
		if n >= 48 {
			break
		}
		switch {
		case r >= 'a' && r <= 'z', r >= '0' && r <= '9':
			b.WriteRune(r)
			dash = false
		case !dash:
			b.WriteByte('-')
			dash = true
		default:
			continue
		}
		n++
	}
	buf := make([]byte, 6)
	_, _ = rand.Read(buf)
	b.WriteString("-" + hex.EncodeToString(buf))
	return b.String()
}
