package problem

import (
	"context"
	"errors"
	"fmt"
	"strings"

	"github.com/slotd/slotd/internal/phrase"
)

// title is the title of a problem slotd makes: the catalog's sentence for
// key, in English, the language of the failures made here. The catalog
// holds each title in every language slotd speaks.
func title(key string) string { return phrase.Text(phrase.English, key, nil) }

// TitleIn is the title of a problem type a response carries (a refused
// value, a broken rule, a hand-off, a backend's failure), in the language
// l, which is the turn's; "" for a type no response carries.
func TitleIn(l phrase.Language, typ string) string {
	key := "problem." + strings.TrimPrefix(typ, Base)
	if !phrase.Has(key) {
		return ""
	}
	return phrase.Text(l, key, nil)
}

// FromContext is the problem of a call whose context ended: a passed
// deadline or a cancelled call, by the context's error that err wraps; nil
// when err wraps neither.
func FromContext(err error) *Error {
	switch {
	case errors.Is(err, context.DeadlineExceeded):
		return DeadlinePassed()
	case errors.Is(err, context.Canceled):
		return Cancelled()
	}
	return nil
}

// Malformed is a request refused before any field of it was read: a body
// that does not decode, or one refused for its shape.
func Malformed(detail string) *Error {
	return &Error{Kind: KindInvalidRequest, Problem: Problem{
		Type:                TypeInvalidRequest,
		Title:               title("title.malformed"),
		Detail:              detail,
		OwnerActionRequired: true,
	}}
}

// ServerUnavailable is a call that did not reach slotd's services: the
// connection broke, or the server is not serving yet.
func ServerUnavailable() *Error {
	return &Error{Kind: KindUnavailable, Problem: Problem{
		Type:              TypeUnavailable,
		Title:             title("title.server_unavailable"),
		Detail:            "Retrying with the same turn_id is safe.",
		Retryable:         true,
		RetryAfterSeconds: 1,
	}}
}

// StateConflict is a call that does not fit the state of its session, said
// by a status without a problem: retrying it does not help.
func StateConflict() *Error {
	return &Error{Kind: KindConflict, Problem: Problem{
		Type:                TypeConflict,
		Title:               title("title.conflict"),
		OwnerActionRequired: true,
	}}
}

// Unimplemented is a method this server does not have.
func Unimplemented() *Error {
	return &Error{Kind: KindUnimplemented, Problem: Problem{
		Type:                TypeInternal,
		Title:               title("title.unimplemented"),
		OwnerActionRequired: true,
	}}
}

// NoRoute is an HTTP path that leads nowhere; detail says where the routes
// are.
func NoRoute(detail string) *Error {
	return &Error{Kind: KindNotFound, Problem: Problem{
		Type:                TypeNotFound,
		Title:               title("title.not_found"),
		Detail:              detail,
		OwnerActionRequired: true,
	}}
}

// MethodNotAllowed is an HTTP method a path does not take.
func MethodNotAllowed(detail string) *Error {
	return &Error{Kind: KindInvalidRequest, Problem: Problem{
		Type:                TypeInvalidRequest,
		Title:               title("title.method_not_allowed"),
		Detail:              detail,
		OwnerActionRequired: true,
	}}
}

// BatchRefused is a JSON-RPC batch slotd does not take.
func BatchRefused(detail string) *Error {
	return &Error{Kind: KindInvalidRequest, Problem: Problem{
		Type:                TypeInvalidRequest,
		Title:               title("title.batch_refused"),
		Detail:              detail,
		OwnerActionRequired: true,
	}}
}

// SessionsFull is an MCP session refused because the server holds as many
// as it may; TenantSessionsFull, because the tenant does.
func SessionsFull(detail string, retryAfter int) *Error {
	return sessionsFull("title.sessions_full", detail, retryAfter)
}

// TenantSessionsFull is an MCP session refused because its tenant holds as
// many as it may.
func TenantSessionsFull(detail string, retryAfter int) *Error {
	return sessionsFull("title.tenant_sessions_full", detail, retryAfter)
}

func sessionsFull(key, detail string, retryAfter int) *Error {
	return &Error{Kind: KindOverloaded, Problem: Problem{
		Type:              TypeOverloaded,
		Title:             title(key),
		Detail:            detail,
		Retryable:         true,
		RetryAfterSeconds: retryAfter,
	}}
}

// TurnOfAnotherTool refuses a turn_id already used on the conversation for
// another tool.
func TurnOfAnotherTool(turnID, tool string) *Error {
	return &Error{Kind: KindConflict, Problem: Problem{
		Type:  TypeConflict,
		Title: title("title.turn_other_tool"),
		Detail: fmt.Sprintf("turn_id %s already answered a call of %s in this conversation; give every tool call its own turn_id "+
			"(the provider's tool-call id)", Redact(turnID), tool),
		OwnerActionRequired: true,
	}}
}

// TurnRewritten refuses a turn_id used again with other content.
func TurnRewritten(turnID string) *Error {
	return &Error{Kind: KindConflict, Problem: Problem{
		Type:  TypeConflict,
		Title: title("title.turn_rewritten"),
		Detail: fmt.Sprintf("turn_id %s already answered a request with other arguments, confirmation, locale or time zone; "+
			"a retry must resend the same request, and a new user turn needs its own turn_id", Redact(turnID)),
		OwnerActionRequired: true,
	}}
}

// WrongIdempotencyKey refuses a completion whose idempotency key is not the
// session's.
func WrongIdempotencyKey() *Error {
	return &Error{Kind: KindConflict, Problem: Problem{
		Type:                TypeConflict,
		Title:               title("title.wrong_key"),
		Detail:              "The key does not belong to the arguments this session answered READY with.",
		OwnerActionRequired: true,
	}}
}

// NotReady refuses a completion of a session whose last turn, last, was not
// READY.
func NotReady(last string) *Error {
	return &Error{Kind: KindConflict, Problem: Problem{
		Type:                TypeConflict,
		Title:               title("title.not_ready"),
		Detail:              "CompleteSession follows a READY turn; the last turn answered " + last + ".",
		OwnerActionRequired: true,
	}}
}

// TooManyTurns refuses a turn of a session that holds max turns.
func TooManyTurns(max int) *Error {
	return &Error{Kind: KindTooLong, Problem: Problem{
		Type:                TypeTooLong,
		Title:               title("title.too_many_turns"),
		Detail:              fmt.Sprintf("A session keeps at most %d turns; reset it (ResetSession) to go on.", max),
		OwnerActionRequired: true,
	}}
}

// VersionGone refuses a turn on a session whose contract version the store
// no longer holds: slotd never guesses what the session was asked under.
func VersionGone(tool, version string) *Error {
	return &Error{Kind: KindConflict, Problem: Problem{
		Type:  TypeConflict,
		Title: title("title.version_gone"),
		Detail: fmt.Sprintf("The open session of %s started on contract version %s, which no replica serves and the database no longer holds "+
			"(purged from contract_versions). Reset the session (ResetSession) to start over on the current version, "+
			"or restore the version's file on a replica.", Redact(tool), Redact(version)),
		OwnerActionRequired: true,
	}}
}
