package script

import (
	"fmt"
	"io"
	"strings"
)

// A contract change is checked against the scripts by playing them twice,
// with the contracts in use (the baseline) and with the next ones, each
// step played whatever came before it (KeepGoing): a step that passes with
// the baseline and fails with the next contracts is one the change breaks.

// StepChange is a step whose outcome the next contracts change.
type StepChange struct {
	Script *Script
	// Before is the step played with the baseline, After with the next
	// contracts; After is nil when the next play stopped before it.
	Before, After *StepResult
}

// Comparison is how the next contracts change the scripts' steps.
type Comparison struct {
	// Broken pass with the baseline and fail with the next contracts;
	// Fixed the other way round.
	Broken, Fixed []StepChange
	// Steps counts the steps compared, and FailingBefore those failing
	// with the baseline already (not the change's doing).
	Steps, FailingBefore int
}

// Compare matches two plays of the same scripts, in the same order (as
// RunAll returns them), step by step.
func Compare(before, after []*Result) *Comparison {
	c := &Comparison{}
	for i, b := range before {
		if i >= len(after) || b.Skipped {
			continue
		}
		a := after[i]
		for k, st := range b.Steps {
			c.Steps++
			var next *StepResult
			if k < len(a.Steps) {
				next = a.Steps[k]
			}
			switch failedAfter := next == nil || next.Failed(); {
			case st.Failed():
				c.FailingBefore++
				if !failedAfter {
					c.Fixed = append(c.Fixed, StepChange{Script: b.Script, Before: st, After: next})
				}
			case failedAfter:
				c.Broken = append(c.Broken, StepChange{Script: b.Script, Before: st, After: next})
			}
		}
	}
	return c
}

// WriteText reports the comparison: each broken step with what the next
// contracts answered, each fixed one, and a summary line.
func (c *Comparison) WriteText(w io.Writer) {
	for _, ch := range c.Broken {
		fmt.Fprintf(w, "BROKEN  %s\n", ch.label())
		if ch.After == nil {
			fmt.Fprintln(w, "    not played: the script stopped before it")
			continue
		}
		if ch.After.Err != nil {
			fmt.Fprintf(w, "    %v\n", ch.After.Err)
		}
		for _, m := range ch.After.Mismatches {
			fmt.Fprintf(w, "    %s\n", m.String())
		}
	}
	for _, ch := range c.Fixed {
		fmt.Fprintf(w, "FIXED   %s\n", ch.label())
	}
	fmt.Fprintf(w, "%d of %d steps broken by the next contracts, %d fixed, %d failing with the baseline already\n",
		len(c.Broken), c.Steps, len(c.Fixed), c.FailingBefore)
}

func (ch StepChange) label() string {
	st := ch.Before
	var b strings.Builder
	fmt.Fprintf(&b, "%s step %d", ch.Script.Name, st.N)
	if st.Name != "" {
		fmt.Fprintf(&b, " %q", st.Name)
	}
	fmt.Fprintf(&b, " (%s:%d): %s", ch.Script.File, st.Pos.Line, st.Sent)
	return b.String()
}
