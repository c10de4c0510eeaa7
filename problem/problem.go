// Package problem owns the RFC 9457 problem documents slotd answers with:
// their stable type URIs, the members an agent needs to decide what to do
// next (retryable, retry_after_seconds, owner_action_required), and the
// per-field errors that list what would fit.
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
)

// Problem is an RFC 9457 problem document with slotd's extension members.
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
// gRPC adapter, which turns it into a status with the problem in its details.
type Error struct {
	Problem Problem
	// Code is the gRPC code name the adapter answers with ("InvalidArgument").
	Code string
}

func (e *Error) Error() string {
	if e.Problem.Detail != "" {
		return e.Problem.Title + ": " + e.Problem.Detail
	}
	return e.Problem.Title
}

// InvalidRequest is a malformed request naming the offending field.
func InvalidRequest(field, msg string) *Error {
	return &Error{Code: "InvalidArgument", Problem: Problem{
		Type:                TypeInvalidRequest,
		Title:               "The request is malformed",
		Status:              400,
		Detail:              field + ": " + msg,
		OwnerActionRequired: true,
		Errors:              []FieldError{{Pointer: "/" + field, Message: msg}},
	}}
}

// UnknownTool names the tools this server knows.
func UnknownTool(tool string, known []string) *Error {
	return &Error{Code: "NotFound", Problem: Problem{
		Type:                TypeUnknownTool,
		Title:               "Unknown tool",
		Status:              404,
		Detail:              fmt.Sprintf("no contract named %q", Redact(tool)),
		OwnerActionRequired: true,
		Errors:              []FieldError{{Pointer: "/tool", Input: Quote(tool), Message: "unknown tool", Allowed: known}},
	}}
}

// NotFound is a session or conversation that does not exist (for this tenant).
func NotFound(what string) *Error {
	return &Error{Code: "NotFound", Problem: Problem{
		Type:   TypeNotFound,
		Title:  "Not found",
		Status: 404,
		Detail: what + " not found",
	}}
}

// Unavailable is a retryable failure of the store.
func Unavailable(retryAfter int) *Error {
	return &Error{Code: "Unavailable", Problem: Problem{
		Type:              TypeUnavailable,
		Title:             "The session store is unavailable",
		Status:            503,
		Detail:            "The turn may not have been applied; retrying with the same turn_id is safe: it is applied exactly once.",
		Retryable:         true,
		RetryAfterSeconds: retryAfter,
	}}
}

// Conflict is a turn that lost a race it cannot wait for; retrying is safe.
func Conflict(retryAfter int) *Error {
	return &Error{Code: "Aborted", Problem: Problem{
		Type:              TypeConflict,
		Title:             "The conversation is busy",
		Status:            409,
		Detail:            "Another turn of this conversation held it too long; retrying with the same turn_id is safe.",
		Retryable:         true,
		RetryAfterSeconds: retryAfter,
	}}
}

// Overloaded sheds a call instead of queueing it without bound.
func Overloaded(retryAfter int) *Error {
	return &Error{Code: "ResourceExhausted", Problem: Problem{
		Type:              TypeOverloaded,
		Title:             "slotd is overloaded",
		Status:            503,
		Detail:            "The call was not started; retrying with the same turn_id is safe.",
		Retryable:         true,
		RetryAfterSeconds: retryAfter,
	}}
}

// Internal hides whatever went wrong; the details stay in the log.
func Internal() *Error {
	return &Error{Code: "Internal", Problem: Problem{
		Type:                TypeInternal,
		Title:               "Internal error",
		Status:              500,
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
