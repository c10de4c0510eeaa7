// Package clarify decides the one next step of a turn and words it: which
// slot to ask about (by meaning, never by field name), which changed
// irreversible value to re-confirm, when to ask for approval, and when the
// arguments are ready. It is pure: the same input gives the same step. Its
// sentences are those of internal/phrase; a contract's own texts are filled
// with the same placeholders.
package clarify

import (
	"fmt"
	"maps"
	"slices"
	"strconv"
	"strings"
	"time"
	"unicode"
	"unicode/utf8"

	"github.com/slotd/slotd/contract"
	"github.com/slotd/slotd/internal/merge"
	"github.com/slotd/slotd/internal/phrase"
	"github.com/slotd/slotd/problem"
)

// Action is the next step.
type Action string

// The actions, as they appear in responses and in the history.
const (
	Ask       Action = "ASK"
	Reconfirm Action = "RECONFIRM"
	Confirm   Action = "CONFIRM"
	Ready     Action = "READY"
	Repair    Action = "REPAIR"
	Resume    Action = "RESUME"
	Handoff   Action = "HANDOFF"
	Cancelled Action = "CANCELLED"
)

// Input is everything the decision depends on.
type Input struct {
	Contract *contract.Contract
	State    merge.State
	// Report is the contract's whole check of State.Slots.
	Report contract.Report
	// Rejected lists the slots whose value this turn was refused.
	Rejected []string
	// Approved is true when the user approved exactly these arguments.
	Approved bool
	Locale   string
}

// Question is what to ask the user, in the session's locale.
type Question struct {
	Slot    string   `json:"slot,omitempty"`
	Text    string   `json:"text"`
	Allowed []string `json:"allowed_values,omitempty"`
	Format  string   `json:"format,omitempty"`
	Old     any      `json:"old,omitempty"`
	New     any      `json:"new,omitempty"`
}

// Step is the decision.
type Step struct {
	Action   Action
	Question *Question
	// Violations explain a REPAIR.
	Violations []problem.FieldError
}

// Decide picks the next step, in this order: a pending re-confirmation; a
// value refused this turn (asked again); the first missing slot in contract
// order; a failed cross-field rule (REPAIR); approval of a summary when the
// tool is an action; READY.
func Decide(in Input) Step {
	c := in.Contract
	if pending := c.InOrder(slices.Collect(maps.Keys(in.State.Pending))); len(pending) > 0 {
		slot := pending[0]
		return Step{Action: Reconfirm, Question: in.reconfirm(slot)}
	}
	if rejected := c.InOrder(in.Rejected); len(rejected) > 0 {
		return Step{Action: Ask, Question: in.ask(rejected[0])}
	}
	if len(in.Report.Missing) > 0 {
		return Step{Action: Ask, Question: in.ask(in.Report.Missing[0])}
	}
	if len(in.Report.Violations) > 0 {
		step := Step{Action: Repair, Violations: in.Report.ViolationsIn(in.Locale)}
		for _, v := range in.Report.Violations {
			if slot := contract.SlotOf(v.Pointer); c.Property(slot) != nil {
				step.Question = in.ask(slot)
				break
			}
		}
		return step
	}
	if c.Confirm && !in.Approved {
		return Step{Action: Confirm, Question: &Question{Text: in.summary()}}
	}
	return Step{Action: Ready}
}

func (in Input) ask(slot string) *Question {
	c := in.Contract
	p := c.Property(slot)
	text, from := p.AskIn(in.Locale, c.DefaultLocale)
	if text == "" {
		text = phrase.Text(in.lang(), "step.ask", phrase.Args{"label": p.Label(in.Locale, c.DefaultLocale)})
	} else {
		text = in.in(from).fill(text, phrase.Args{"label": p.Label(from, c.DefaultLocale)})
	}
	return &Question{
		Slot:    slot,
		Text:    text,
		Allowed: p.AllowedValues(),
		Format:  formatOf(p, in.Locale),
	}
}

// in is the input with the values of a contract's text shown in the
// locale the text was found under, when the turn's locale lacked it.
func (in Input) in(locale string) Input {
	in.Locale = locale
	return in
}

// lang is the language of slotd's own sentences for the turn.
func (in Input) lang() phrase.Language { return phrase.Lang(in.Locale, in.Contract.DefaultLocale) }

// formatOf is the expected form of a slot without an enum (an enum's
// allowed values say it all).
func formatOf(p *contract.Property, locale string) string {
	if len(p.Enum) > 0 {
		return ""
	}
	return contract.ExpectedIn(p, locale)
}

func (in Input) reconfirm(slot string) *Question {
	c := in.Contract
	p := c.Property(slot)
	old, nu := in.State.Slots[slot], in.State.Pending[slot]
	text := phrase.Text(in.lang(), "step.reconfirm", phrase.Args{
		"label": capitalize(p.Label(in.Locale, c.DefaultLocale)),
		"old":   in.display(slot, old),
		"new":   in.display(slot, nu),
	})
	return &Question{Slot: slot, Text: text, Old: old, New: nu}
}

func (in Input) summary() string {
	c := in.Contract
	if t, from := c.ConfirmTextIn(in.Locale); t != "" {
		return in.in(from).fill(t, nil)
	}
	summary := in.filled()
	if summary == "" {
		// A tool without arguments: what is approved is the tool itself.
		summary = c.Label(in.Locale)
	}
	return phrase.Text(in.lang(), "step.confirm", phrase.Args{"summary": summary})
}

// ChangeMessage is what to tell the user about a change, or "" when there is
// nothing to say.
func ChangeMessage(c *contract.Contract, locale string, ch merge.Change) string {
	p := c.Property(ch.Slot)
	if p == nil || ch.Decision != merge.Overwritten {
		return ""
	}
	in := Input{Contract: c, Locale: locale}
	return phrase.Text(in.lang(), "step.overwritten", phrase.Args{
		"label": p.Label(locale, c.DefaultLocale),
		"new":   in.display(ch.Slot, ch.New),
	})
}

// Notice is what to tell the user about the session itself: "expired" (a
// new session starts), "restarted" (the user chose to start over),
// "closed" (an operator or the orchestrator reset the session),
// "cancelled" (the user declined the final approval).
func Notice(c *contract.Contract, locale, kind string) string {
	if key := "notice." + kind; phrase.Has(key) {
		return phrase.Text(phrase.Lang(locale, c.DefaultLocale), key, nil)
	}
	return ""
}

// FailureText is what a user can be told when the backend call failed:
// whether retrying is safe and when.
func FailureText(c *contract.Contract, locale string, retryable bool, after int) string {
	lang := phrase.Lang(locale, c.DefaultLocale)
	if retryable {
		return phrase.Text(lang, "failure.retry", phrase.Args{"seconds": after})
	}
	return phrase.Text(lang, "failure.handoff", nil)
}

// HandoffText tells the user a person takes over, with what is known and
// what could not be had.
func HandoffText(in Input, slot string) string {
	c := in.Contract
	label := slot
	if p := c.Property(slot); p != nil {
		label = p.Label(in.Locale, c.DefaultLocale)
	}
	summary := in.filled()
	if summary == "" {
		summary = "—"
	}
	return phrase.Text(in.lang(), "step.handoff", phrase.Args{"summary": summary, "label": label})
}

// ResumeText asks whether to go on with a stale session, showing what it
// holds.
func ResumeText(in Input) string {
	summary := in.filled()
	if summary == "" {
		return phrase.Text(in.lang(), "step.resume_empty", nil)
	}
	return phrase.Text(in.lang(), "step.resume", phrase.Args{"summary": summary})
}

// ResumedText tells the user the conversation is back on a session parked
// while other tools were used: what it holds and what it still needs.
func ResumedText(in Input, missing []string) string {
	c := in.Contract
	summary := in.filled()
	if summary == "" {
		summary = "—"
	}
	var labels []string
	for _, slot := range missing {
		if p := c.Property(slot); p != nil {
			labels = append(labels, p.Label(in.Locale, c.DefaultLocale))
		}
	}
	key := "notice.resumed"
	if len(labels) == 0 {
		key = "notice.resumed_complete"
	}
	return phrase.Text(in.lang(), key, phrase.Args{
		"tool": c.Label(in.Locale), "summary": summary, "missing": strings.Join(labels, ", ")})
}

// ClosedText tells the user which unfinished tools a turn closed: to make
// room for a new one, or because the new one replaces them.
func ClosedText(c *contract.Contract, locale string, closed []*contract.Contract) string {
	var names []string
	for _, x := range closed {
		names = append(names, x.Label(locale))
	}
	return phrase.Text(phrase.Lang(locale, c.DefaultLocale), "notice.closed_others", phrase.Args{"tools": strings.Join(names, ", ")})
}

// filled lists the filled slots as "label: value; …" in contract order,
// sensitive values masked: the summary of CONFIRM, RESUME and HANDOFF.
func (in Input) filled() string {
	c := in.Contract
	var parts []string
	for _, p := range c.Properties {
		if v, ok := in.State.Slots[p.Name]; ok {
			parts = append(parts, p.Label(in.Locale, c.DefaultLocale)+": "+in.display(p.Name, v))
		}
	}
	return strings.Join(parts, "; ")
}

// display renders a slot's value for a sentence the user reads: an enum
// value by its label (x-slotd.value_labels), a date in the language's long
// form ("22 ноября 2026"), true and false as a yes and a no; anything else,
// amounts too, as Display writes it. A value of a slot marked
// x-slotd.sensitive never appears in one. Only sentences change: the slots,
// the arguments and the allowed values stay the canonical codes and dates.
func (in Input) display(slot string, v any) string {
	p := in.Contract.Property(slot)
	switch {
	case p == nil:
		return Display(v)
	case p.Sensitive:
		return Masked
	}
	switch t := v.(type) {
	case string:
		if l := p.ValueLabel(t, in.Locale, in.Contract.DefaultLocale); l != "" {
			return l
		}
		if isDate(p) {
			if d, err := time.Parse(time.DateOnly, t); err == nil {
				return phrase.LongDate(in.lang(), d)
			}
		}
	case bool:
		return phrase.Text(in.lang(), "value."+strconv.FormatBool(t), nil)
	}
	return Display(v)
}

// isDate reports a slot that holds a calendar day: format date, or the date
// normalizer.
func isDate(p *contract.Property) bool {
	return p.Format == "date" || slices.Contains(p.Normalizers(), "date")
}

// Masked stands for a sensitive value wherever it would be shown.
const Masked = "•••"

// fill fills a contract's own text (a question, the approval summary):
// {name} is extra[name], else the slot's value as shown; a [bracketed] part
// whose slot is still empty is left out, and such a slot outside brackets
// is "…". A name that is neither stays as written.
func (in Input) fill(tmpl string, extra phrase.Args) string {
	value := func(name string) (string, bool) {
		if v, ok := extra[name]; ok {
			return fmt.Sprint(v), true
		}
		if v, ok := in.State.Slots[name]; ok {
			return in.display(name, v), true
		}
		return "", false
	}
	absent := func(name string) string {
		if in.Contract.Property(name) != nil {
			return "…"
		}
		return "{" + name + "}"
	}
	return phrase.Fill(tmpl, value, absent)
}

// Display renders a slot value for a sentence.
func Display(v any) string {
	switch t := v.(type) {
	case nil:
		return "—"
	case string:
		return t
	case float64:
		return fmt.Sprintf("%v", t)
	}
	return fmt.Sprint(v)
}

func capitalize(s string) string {
	r, n := utf8.DecodeRuneInString(s)
	if r == utf8.RuneError {
		return s
	}
	return string(unicode.ToUpper(r)) + s[n:]
}
