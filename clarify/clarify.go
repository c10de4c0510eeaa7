// Package clarify decides the one next step of a turn and words it: which
// slot to ask about (by meaning, never by field name), which changed
// irreversible value to re-confirm, when to ask for approval, and when the
// arguments are ready. It is pure: the same input gives the same step.
package clarify

import (
	"fmt"
	"maps"
	"regexp"
	"slices"
	"strings"
	"unicode"
	"unicode/utf8"

	"github.com/slotd/slotd/contract"
	"github.com/slotd/slotd/merge"
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
	text := p.Ask(in.Locale, c.DefaultLocale)
	if text == "" {
		text = phrase(in.Locale, c.DefaultLocale, "ask")
	}
	return &Question{
		Slot:    slot,
		Text:    in.fill(text, map[string]any{"label": p.Label(in.Locale, c.DefaultLocale)}),
		Allowed: p.AllowedValues(),
		Format:  formatOf(p, in.Locale),
	}
}

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
	text := in.fill(phrase(in.Locale, c.DefaultLocale, "reconfirm"), map[string]any{
		"label": capitalize(p.Label(in.Locale, c.DefaultLocale)),
		"old":   in.display(slot, old),
		"new":   in.display(slot, nu),
	})
	return &Question{Slot: slot, Text: text, Old: old, New: nu}
}

func (in Input) summary() string {
	c := in.Contract
	if t := c.ConfirmText(in.Locale); t != "" {
		return in.fill(t, nil)
	}
	return in.fill(phrase(in.Locale, c.DefaultLocale, "confirm"), map[string]any{"summary": in.filled()})
}

// ChangeMessage is what to tell the user about a change, or "" when there is
// nothing to say.
func ChangeMessage(c *contract.Contract, locale string, ch merge.Change) string {
	p := c.Property(ch.Slot)
	if p == nil || ch.Decision != merge.Overwritten {
		return ""
	}
	in := Input{Contract: c, Locale: locale}
	return in.fill(phrase(locale, c.DefaultLocale, "overwritten"), map[string]any{
		"label": p.Label(locale, c.DefaultLocale),
		"new":   in.display(ch.Slot, ch.New),
	})
}

// Notice is what to tell the user about the session itself: "expired" (a
// new session starts), "restarted" (the user chose to start over),
// "closed" (an operator or the orchestrator reset the session),
// "cancelled" (the user declined the final approval).
func Notice(c *contract.Contract, locale, kind string) string {
	return phrase(locale, c.DefaultLocale, kind)
}

// FailureText is what a user can be told when the backend call failed:
// whether retrying is safe and when.
func FailureText(c *contract.Contract, locale string, retryable bool, after int) string {
	if retryable {
		return strings.ReplaceAll(phrase(locale, c.DefaultLocale, "failed_retry"), "{seconds}", fmt.Sprint(after))
	}
	return phrase(locale, c.DefaultLocale, "failed_handoff")
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
	return in.fill(phrase(in.Locale, c.DefaultLocale, "handoff"), map[string]any{"summary": summary, "label": label})
}

// ResumeText asks whether to go on with a stale session, showing what it
// holds.
func ResumeText(in Input) string {
	c := in.Contract
	summary := in.filled()
	if summary == "" {
		return in.fill(phrase(in.Locale, c.DefaultLocale, "resume_empty"), nil)
	}
	return in.fill(phrase(in.Locale, c.DefaultLocale, "resume"), map[string]any{"summary": summary})
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
	key := "resumed"
	if len(labels) == 0 {
		key = "resumed_complete"
	}
	return in.fill(phrase(in.Locale, c.DefaultLocale, key), map[string]any{
		"tool": c.Label(in.Locale), "summary": summary, "missing": strings.Join(labels, ", ")})
}

// ClosedText tells the user which unfinished tools a turn closed: to make
// room for a new one, or because the new one replaces them.
func ClosedText(c *contract.Contract, locale string, closed []*contract.Contract) string {
	var names []string
	for _, x := range closed {
		names = append(names, x.Label(locale))
	}
	return strings.ReplaceAll(phrase(locale, c.DefaultLocale, "closed_others"), "{tools}", strings.Join(names, ", "))
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

// display renders a slot's value for a sentence; a value of a slot marked
// x-slotd.sensitive never appears in one.
func (in Input) display(slot string, v any) string {
	if p := in.Contract.Property(slot); p != nil && p.Sensitive {
		return Masked
	}
	return Display(v)
}

// Masked stands for a sensitive value wherever it would be shown.
const Masked = "•••"

var (
	placeholder = regexp.MustCompile(`\{([A-Za-z0-9_.\-]+)\}`)
	optional    = regexp.MustCompile(`\[([^\[\]]*)\]`)
)

// fill replaces {name} with extra[name] or the slot's value. A [bracketed]
// part is kept only when every placeholder in it has a value, so a question
// can mention a slot that may still be empty.
func (in Input) fill(tmpl string, extra map[string]any) string {
	lookup := func(name string) (string, bool) {
		if v, ok := extra[name]; ok {
			return fmt.Sprint(v), true
		}
		if v, ok := in.State.Slots[name]; ok {
			return in.display(name, v), true
		}
		return "", false
	}
	tmpl = optional.ReplaceAllStringFunc(tmpl, func(seg string) string {
		inner := seg[1 : len(seg)-1]
		for _, m := range placeholder.FindAllStringSubmatch(inner, -1) {
			if _, ok := lookup(m[1]); !ok {
				return ""
			}
		}
		return inner
	})
	return placeholder.ReplaceAllStringFunc(tmpl, func(m string) string {
		name := m[1 : len(m)-1]
		if s, ok := lookup(name); ok {
			return s
		}
		if p := in.Contract.Property(name); p != nil {
			return "…"
		}
		return m
	})
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

// phrases are slotd's own sentences, per locale.
var phrases = map[string]map[string]string{
	"ru": {
		"ask":              "Уточните, пожалуйста: {label}.",
		"reconfirm":        "{label}: было {old}, теперь {new}. Заменить?",
		"overwritten":      "Понял, меняю: {label} — {new}.",
		"confirm":          "Проверьте, всё ли верно: {summary}.",
		"cancelled":        "Хорошо, ничего не делаю.",
		"expired":          "Прошлый разговор закрыт за давностью, начинаем заново.",
		"restarted":        "Хорошо, начинаем заново.",
		"closed":           "Прошлый разговор был закрыт, начинаем заново.",
		"resume":           "Мы остановились на этом: {summary}. Продолжаем с того же места?",
		"resume_empty":     "Мы прервались. Продолжаем?",
		"failed_retry":     "Заявка не создана; повторить безопасно через {seconds} с.",
		"failed_handoff":   "Заявка не создана; передаю разговор сотруднику.",
		"handoff":          "Передаю разговор сотруднику. Уже известно: {summary}. Не удалось уточнить: {label}.",
		"resumed":          "Возвращаемся: {tool}. Уже известно: {summary}; осталось уточнить: {missing}.",
		"resumed_complete": "Возвращаемся: {tool}. Уже известно: {summary}.",
		"closed_others":    "Закрываю незавершённое: {tools}.",
	},
	"uk": {
		"ask":              "Уточніть, будь ласка: {label}.",
		"reconfirm":        "{label}: було {old}, тепер {new}. Замінити?",
		"overwritten":      "Зрозумів, змінюю: {label} — {new}.",
		"confirm":          "Перевірте, чи все правильно: {summary}.",
		"cancelled":        "Добре, нічого не роблю.",
		"expired":          "Попередню розмову закрито за давністю, починаємо знову.",
		"restarted":        "Добре, починаємо знову.",
		"closed":           "Попередню розмову було закрито, починаємо знову.",
		"resume":           "Ми зупинилися на цьому: {summary}. Продовжуємо з того ж місця?",
		"resume_empty":     "Ми перервалися. Продовжуємо?",
		"failed_retry":     "Запит не виконано; повторити безпечно через {seconds} с.",
		"failed_handoff":   "Запит не виконано; передаю розмову співробітнику.",
		"handoff":          "Передаю розмову співробітнику. Уже відомо: {summary}. Не вдалося уточнити: {label}.",
		"resumed":          "Повертаємося: {tool}. Уже відомо: {summary}; залишилося уточнити: {missing}.",
		"resumed_complete": "Повертаємося: {tool}. Уже відомо: {summary}.",
		"closed_others":    "Закриваю незавершене: {tools}.",
	},
	"en": {
		"ask":              "Please tell me the {label}.",
		"reconfirm":        "{label}: it was {old}, now {new}. Shall I change it?",
		"overwritten":      "Got it, changing the {label} to {new}.",
		"confirm":          "Please check that this is right: {summary}.",
		"cancelled":        "All right, nothing will be done.",
		"expired":          "The previous conversation expired; starting over.",
		"restarted":        "All right, starting over.",
		"closed":           "The previous conversation was closed; starting over.",
		"resume":           "Here is where we stopped: {summary}. Shall we go on from there?",
		"resume_empty":     "We were interrupted. Shall we go on?",
		"failed_retry":     "Nothing was done yet; retrying is safe in {seconds} seconds.",
		"failed_handoff":   "Nothing was done; a person will take over.",
		"handoff":          "A person will take over from here. Known so far: {summary}. Could not settle: {label}.",
		"resumed":          "Back to {tool}: {summary}; still needed: {missing}.",
		"resumed_complete": "Back to {tool}: {summary}.",
		"closed_others":    "Closing what was left unfinished: {tools}.",
	},
}

func phrase(locale, fallback, key string) string {
	for _, l := range []string{contract.BaseLocale(locale), contract.BaseLocale(fallback), "en"} {
		if s, ok := phrases[l][key]; ok {
			return s
		}
	}
	return ""
}
