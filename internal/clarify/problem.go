package clarify

import (
	"strings"

	"github.com/slotd/slotd/contract"
	"github.com/slotd/slotd/internal/phrase"
	"github.com/slotd/slotd/problem"
)

// The problems a turn or a completion answers with are worded in the turn's
// language throughout, as its questions are: the title by the problem's type
// (clients switch on the type, never on the title), and a detail that says
// the first field error with the glue of the same language. The field errors
// themselves come worded from the contract, in that language too.

// RefusedProblem is the problem of a turn that refused values: what came,
// why it does not fit and what would.
func RefusedProblem(c *contract.Contract, locale string, refused []problem.FieldError) *problem.Problem {
	return fieldProblem(c, locale, problem.TypeInvalidValue, refused)
}

// RepairProblem is the problem of a REPAIR: the rules of the contract the
// arguments break.
func RepairProblem(c *contract.Contract, locale string, violations []problem.FieldError) *problem.Problem {
	return fieldProblem(c, locale, problem.TypeRuleViolated, violations)
}

// fieldProblem is a problem of type typ about the field errors errs, its
// detail the first of them.
func fieldProblem(c *contract.Contract, locale, typ string, errs []problem.FieldError) *problem.Problem {
	return &problem.Problem{
		Type:   typ,
		Title:  ProblemTitle(c, locale, typ),
		Detail: fieldDetail(phrase.Lang(locale, c.DefaultLocale), errs[0]),
		Errors: errs,
	}
}

// HandoffProblem says why a person must take over: the slot that was still
// not accepted after n attempts, with the field errors of the last attempt.
func HandoffProblem(c *contract.Contract, locale, slot string, n int, last *problem.Problem) *problem.Problem {
	lang := phrase.Lang(locale, c.DefaultLocale)
	p := &problem.Problem{
		Type:  problem.TypeHandoff,
		Title: ProblemTitle(c, locale, problem.TypeHandoff),
		Detail: phrase.Text(lang, "problem.handoff_detail", phrase.Args{
			"slot": slot, "n": n, "noun": phrase.Count(lang, "attempt", n)}),
		OwnerActionRequired: true,
	}
	if last != nil {
		p.Errors = last.Errors
	}
	return p
}

// ProblemTitle is the title of a problem type a response carries, in the
// turn's language (problem.TitleIn); "" for a type slotd has no title for.
func ProblemTitle(c *contract.Contract, locale, typ string) string {
	return problem.TitleIn(phrase.Lang(locale, c.DefaultLocale), typ)
}

// fieldDetail says one field error as a problem's detail: where (unless it
// is the whole object), why, and the allowed values and the expected form
// when there are any.
func fieldDetail(lang phrase.Language, e problem.FieldError) string {
	args := phrase.Args{"message": e.Message}
	if e.Pointer != "" {
		args["pointer"] = e.Pointer
	}
	if len(e.Allowed) > 0 {
		args["allowed"] = strings.Join(e.Allowed, ", ")
	}
	if e.Format != "" {
		args["format"] = e.Format
	}
	return phrase.Text(lang, "problem.field", args)
}
