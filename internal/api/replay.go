package api

import (
	"context"
	"fmt"

	"google.golang.org/protobuf/types/known/structpb"

	slotdv1 "github.com/slotd/slotd/api/proto/slotd/v1"
	"github.com/slotd/slotd/contract"
	"github.com/slotd/slotd/internal/clarify"
	"github.com/slotd/slotd/internal/session"
	"github.com/slotd/slotd/problem"
)

// maxReplayContracts bounds the contract documents of one ReplayContracts
// call: a catalog, not an upload.
const maxReplayContracts = 64

// ReplayContracts implements slotd.v1.AdminService: every field is checked,
// and every document parsed, before the history is read.
func (a *AdminService) ReplayContracts(ctx context.Context, req *slotdv1.ReplayContractsRequest) (*slotdv1.ReplayContractsResponse, error) {
	docs := req.GetContracts()
	switch {
	case len(docs) == 0:
		return nil, problem.InvalidRequest("contracts", "required: the next version's contract documents (JSON)")
	case len(docs) > maxReplayContracts:
		return nil, problem.InvalidRequest("contracts", fmt.Sprintf("at most %d contract documents", maxReplayContracts))
	}
	f := session.ReplayFilter{Tool: req.GetTool(), Limit: int(req.GetLimit())}
	if !validName(f.Tool) {
		return nil, problem.InvalidRequest("tool", "a tool name as the contracts name it")
	}
	if f.Limit < 0 || f.Limit > session.MaxReplayLimit {
		return nil, problem.InvalidRequest("limit", fmt.Sprintf("from 1 to %d, or 0 for %d", session.MaxReplayLimit, session.DefaultReplayLimit))
	}
	if d := req.GetSince(); d != nil {
		if err := d.CheckValid(); err != nil || d.AsDuration() <= 0 {
			return nil, problem.InvalidRequest("since", "a positive duration")
		}
		f.Since = a.clock().Add(-d.AsDuration())
	}
	var conds []string
	for i, c := range req.GetFailOn() {
		cs, err := session.ParseFailOn(c)
		if err != nil || len(cs) != 1 {
			return nil, problem.InvalidRequest(fmt.Sprintf("fail_on/%d", i), "one of "+fmt.Sprint(session.FailConditions))
		}
		conds = append(conds, cs[0])
	}
	cs := make([]*contract.Contract, 0, len(docs))
	for i, doc := range docs {
		c, err := contract.Parse(fmt.Sprintf("contracts/%d", i), []byte(doc))
		if err != nil {
			return nil, problem.InvalidRequest(fmt.Sprintf("contracts/%d", i), problem.Redact(err.Error()))
		}
		cs = append(cs, c)
	}
	next, err := contract.NewCatalog(cs...)
	if err != nil {
		return nil, problem.InvalidRequest("contracts", err.Error())
	}
	if f.Tool != "" && next.Get(f.Tool) == nil {
		return nil, problem.InvalidRequest("tool", fmt.Sprintf("not among the contracts given (%v)", next.Names()))
	}
	rep, err := a.engine.ReplayContracts(ctx, next, f)
	if err != nil {
		return nil, err
	}
	a.log.InfoContext(ctx, "replayed contracts", "conversations", rep.Summary.Conversations, "differ", rep.Summary.Differ, "by", by(ctx))
	return replayResponse(rep, rep.Holding(conds))
}

// validName accepts a tool filter that logs and Postgres hold as it is.
func validName(s string) bool {
	if len(s) > 256 {
		return false
	}
	for _, r := range s {
		if r < 0x20 || r == 0x7f || r == 0xfffd {
			return false
		}
	}
	return true
}

func replayResponse(rep *session.ReplayReport, failed []string) (*slotdv1.ReplayContractsResponse, error) {
	s := rep.Summary
	out := &slotdv1.ReplayContractsResponse{Failed: failed, Summary: &slotdv1.ReplaySummary{
		Conversations: int32(s.Conversations), Replayed: int32(s.Replayed), Same: int32(s.Same), Differ: int32(s.Differ),
		ReadyEarlier: int32(s.ReadyEarlier), ReadyLater: int32(s.ReadyLater), ReadyLost: int32(s.ReadyLost),
		ReadyArgumentsDiffer: int32(s.ReadyArgs), NewlyAsked: int32(s.NewlyAsked), NewlyRefused: int32(s.NewlyRefused),
		Masked: int32(s.Masked), NotReplayed: int32(s.NotReplayed),
		NewlyAskedSlots: int32s(s.AskedSlots), NewlyRefusedSlots: int32s(s.RefusedSlots), NotReplayedWhy: int32s(s.NotReplayedWhy),
	}}
	for _, c := range rep.Conversations {
		pc := &slotdv1.ConversationReplay{Tenant: c.Tenant, ConversationId: c.ConversationID, Tools: c.Tools, Turns: int32(c.Turns),
			NotReplayed: c.NotReplayed, Detail: c.Detail, Masked: c.Masked, ReadyBefore: int32(c.ReadyBefore),
			ReadyAfter: int32(c.ReadyAfter), Ready: c.Ready, ReadyArgumentsDiffer: c.ReadyArguments,
			NewlyAsked: c.NewlyAsked, NewlyRefused: c.NewlyRefused}
		for _, d := range c.Diffs {
			before, err := replayStep(d.Before)
			if err != nil {
				return nil, err
			}
			after, err := replayStep(d.After)
			if err != nil {
				return nil, err
			}
			pc.Diffs = append(pc.Diffs, &slotdv1.TurnReplay{Turn: int32(d.Turn), TurnId: d.TurnID, Tool: d.Tool,
				Fields: d.Fields, Before: before, After: after})
		}
		out.Conversations = append(out.Conversations, pc)
	}
	return out, nil
}

func replayStep(s session.ReplayStep) (*slotdv1.ReplayStep, error) {
	out := &slotdv1.ReplayStep{Action: actionOf(clarify.Action(s.Action)), QuestionSlot: s.QuestionSlot, Question: s.Question,
		IdempotencyKey: s.IdempotencyKey, Refused: s.Refused, Error: s.Error}
	if s.Arguments != nil {
		args, err := structpb.NewStruct(s.Arguments)
		if err != nil {
			return nil, err
		}
		out.Arguments = args
	}
	return out, nil
}

func int32s(m map[string]int) map[string]int32 {
	if m == nil {
		return nil
	}
	out := make(map[string]int32, len(m))
	for k, v := range m {
		out[k] = int32(v)
	}
	return out
}
