// Package problem owns the RFC 9457 problem documents slotd answers with:
// their stable type URIs, the members an agent needs to decide what to do
// next (retryable, retry_after_seconds, owner_action_required), the
// per-field errors that list what would fit, and the Kind of each problem.
// It knows no transport: which gRPC code and HTTP status a kind answers
// with is the gRPC adapter's to say.
//
// Every problem slotd makes is made here, its title worded by the phrase
// catalog (internal/phrase), which holds it in each language slotd speaks.
// The problems a turn's response carries are worded in the turn's language
// by package clarify; the failures made here are said in English.
//
// This package is public: code outside slotd imports it to read slotd's
// problems, and package contract returns them. slotd's public Go packages
// are client, contract (with contract/normalizer and contract/provider),
// problem and the wire API in api/proto/slotd/v1; everything else is
// internal to the slotd binary and may change without notice.
package problem

import (
	"fmt"
	"strings"

	"github.com/slotd/slotd/internal/redact"
)

// Type URIs are stable: clients switch on them. docs/problems.md lists them.
const (
	// Base prefixes every type URI slotd answers with.
	Base = "https://slotd.dev/problems/"

	TypeInvalidValue   = Base + "invalid-value"
	TypeRuleViolated   = Base + "rule-violated"
	TypeInvalidRequest = Base + "invalid-request"
	TypeUnknownTool    = Base + "unknown-tool"
	TypeNotFound       = Base + "not-found"
	TypeUnavailable    = Base + "unavailable"
	TypeConflict       = Base + "conflict"
	TypeInternal       = Base + "internal"
	TypeOverloaded     = Base + "overloaded"
	TypeTooLong        = Base + "conversation-too-long"
	TypeHandoff        = Base + "handoff"

	TypeUnauthenticated  = Base + "unauthenticated"
	TypePermissionDenied = Base + "permission-denied"

	// Problems of the backend call, which CompleteSession reports.
	TypeBackendTimeout       = Base + "backend-timeout"
	TypeBackendOutputInvalid = Base + "backend-output-invalid"
	backendPrefix            = Base + "backend-"
)

// Problem is an RFC 9457 problem document with slotd's extension members.
// Status is the HTTP status of the problem's Kind: the gRPC adapter sets it
// when the problem leaves the process, whatever it held before.
type Problem struct {
	Type                string       `json:"type"`
	Title               string       `json:"title"`
	Status              int          `json:"status"`
	Detail              string       `json:"detail,omitempty"`
	Instance            string       `json:"instance,omitempty"`
	Retryable           bool         `json:"retryable"`
	RetryAfterSeconds   int          `json:"retry_after_seconds,omitempty"`
	OwnerActionRequired bool         `json:"owner_action_required"`
	Errors              []FieldError `json:"errors,omitempty"`
}

// FieldError says what is wrong with one argument and what would fit.
type FieldError struct {
	// Pointer is the JSON pointer of the argument, e.g. "/reason".
	Pointer string `json:"pointer"`
	// Input is what was received, rendered as JSON text and redacted.
	Input   string `json:"input,omitempty"`
	Message string `json:"message"`
	// Allowed lists the values that fit, when the slot has an enum.
	Allowed []string `json:"allowed_values,omitempty"`
	// Format describes the expected form with an example.
	Format string `json:"format,omitempty"`
}

// Error is the field error as a Go error, for logs and tests; its glue is
// English. A problem's detail says a field error in the turn's language
// (clarify words it).
func (e FieldError) Error() string {
	s := fmt.Sprintf("%s: %s", e.Pointer, e.Message)
	if len(e.Allowed) > 0 {
		s += "; allowed: " + strings.Join(e.Allowed, ", ")
	}
	if e.Format != "" {
		s += "; expected: " + e.Format
	}
	return s
}

// Error lets a Problem travel as a Go error through the layers below the
// gRPC adapter, which answers it with the gRPC code and HTTP status of its
// Kind and fills in the problem's status member.
type Error struct {
	Kind    Kind
	Problem Problem
}

func (e *Error) Error() string {
	if e.Problem.Detail != "" {
		return e.Problem.Title + ": " + e.Problem.Detail
	}
	return e.Problem.Title
}

// InvalidRequest is a malformed request naming the offending field.
func InvalidRequest(field, msg string) *Error {
	return &Error{Kind: KindInvalidRequest, Problem: Problem{
		Type:                TypeInvalidRequest,
		Title:               title("title.malformed"),
		Detail:              field + ": " + msg,
		OwnerActionRequired: true,
		Errors:              []FieldError{{Pointer: "/" + field, Message: msg}},
	}}
}

// TooLarge is a request refused for its size before it was decoded.
func TooLarge(detail string) *Error {
	return &Error{Kind: KindTooLarge, Problem: Problem{
		Type:                TypeInvalidRequest,
		Title:               title("title.too_large"),
		Detail:              detail,
		OwnerActionRequired: true,
	}}
}

// UnknownTool names the tools this server knows.
func UnknownTool(tool string, known []string) *Error {
	return &Error{Kind: KindUnknownTool, Problem: Problem{
		Type:                TypeUnknownTool,
		Title:               title("title.unknown_tool"),
		Detail:              fmt.Sprintf("no contract named %q", Redact(tool)),
		OwnerActionRequired: true,
		Errors:              []FieldError{{Pointer: "/tool", Input: Quote(tool), Message: "unknown tool", Allowed: known}},
	}}
}

// NotFound is a session or conversation that does not exist (for this
// tenant); what names it, or is empty for a call that names nothing.
func NotFound(what string) *Error {
	e := &Error{Kind: KindNotFound, Problem: Problem{
		Type:  TypeNotFound,
		Title: title("title.not_found"),
	}}
	if what != "" {
		e.Problem.Detail = what + " not found"
	}
	return e
}

// Ended is a change asked of a session that has ended.
func Ended() *Error {
	return &Error{Kind: KindEnded, Problem: Problem{
		Type:   TypeConflict,
		Title:  title("title.ended"),
		Detail: "An ended session takes no more changes; the next turn starts a new one.",
	}}
}

// Unavailable is a retryable failure of the store.
func Unavailable(retryAfter int) *Error {
	return &Error{Kind: KindUnavailable, Problem: Problem{
		Type:              TypeUnavailable,
		Title:             title("title.store_unavailable"),
		Detail:            "The turn may not have been applied; retrying with the same turn_id is safe: it is applied exactly once.",
		Retryable:         true,
		RetryAfterSeconds: retryAfter,
	}}
}

// UnavailableBecause is Unavailable with its cause named and the fix an
// operator must make: a setting of the database or of a pooler in front
// of it. Retrying is still safe, and helps once the fix is made or another
// host answers.
func UnavailableBecause(retryAfter int, cause, fix string) *Error {
	e := Unavailable(retryAfter)
	e.Problem.Detail = cause + ". " + fix + " " + e.Problem.Detail
	return e
}

// Conflict is a turn that lost a race it cannot wait for; retrying is safe.
func Conflict(retryAfter int) *Error {
	return &Error{Kind: KindBusy, Problem: Problem{
		Type:              TypeConflict,
		Title:             title("title.busy"),
		Detail:            "Another turn of this conversation held it too long; retrying with the same turn_id is safe.",
		Retryable:         true,
		RetryAfterSeconds: retryAfter,
	}}
}

// Overloaded sheds a call instead of queueing it without bound.
func Overloaded(retryAfter int) *Error {
	return &Error{Kind: KindOverloaded, Problem: Problem{
		Type:              TypeOverloaded,
		Title:             title("title.overloaded"),
		Detail:            "The call was not started; retrying with the same turn_id is safe.",
		Retryable:         true,
		RetryAfterSeconds: retryAfter,
	}}
}

// DeadlinePassed is a call whose deadline passed before it was answered.
func DeadlinePassed() *Error {
	return &Error{Kind: KindDeadline, Problem: Problem{
		Type:      TypeUnavailable,
		Title:     title("title.deadline"),
		Detail:    "The turn may or may not have been applied; retrying with the same turn_id is safe.",
		Retryable: true,
	}}
}

// Cancelled is a call its caller gave up on.
func Cancelled() *Error {
	return &Error{Kind: KindCancelled, Problem: Problem{
		Type:      TypeUnavailable,
		Title:     title("title.cancelled"),
		Retryable: true,
	}}
}

// Unauthenticated is a call without a valid key.
func Unauthenticated(detail string) *Error {
	return &Error{Kind: KindUnauthenticated, Problem: Problem{
		Type:                TypeUnauthenticated,
		Title:               title("title.unauthenticated"),
		Detail:              detail,
		OwnerActionRequired: true,
	}}
}

// PermissionDenied is a call whose key may not make it.
func PermissionDenied(detail string) *Error {
	return &Error{Kind: KindPermissionDenied, Problem: Problem{
		Type:                TypePermissionDenied,
		Title:               title("title.permission_denied"),
		Detail:              detail,
		OwnerActionRequired: true,
	}}
}

// Internal hides whatever went wrong; the details stay in the log.
func Internal() *Error {
	return &Error{Kind: KindInternal, Problem: Problem{
		Type:                TypeInternal,
		Title:               title("title.internal"),
		OwnerActionRequired: true,
	}}
}

// Redact masks every card-number-like run of digits, keeping the last four,
// so that an echoed input never carries a card number.
func Redact(s string) string { return redact.String(s) }

// Quote renders a received string for an error message, redacted and cut to
// a readable length.
func Quote(s string) string {
	const max = 200
	s = Redact(s)
	if r := []rune(s); len(r) > max {
		s = string(r[:max]) + "…"
	}
	return fmt.Sprintf("%q", s)
}

// RedactValue masks card-like numbers everywhere in a JSON value, object
// keys included.
func RedactValue(v any) any { return redact.Value(v) }
