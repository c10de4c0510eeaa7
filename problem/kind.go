package problem

import (
	"fmt"
	"strings"
)

// Kind is what sort of problem a problem is: what the caller should make of
// it. The gRPC adapter (package api) alone says which gRPC code and HTTP
// status each kind answers with; below it, code that fails says only the
// kind.
type Kind int

// The kinds slotd has. The zero Kind is none of them: a problem made without
// a kind is a mistake, answered as internal.
const (
	// KindInvalidRequest: the request is malformed; its owner must fix it.
	KindInvalidRequest Kind = iota + 1
	// KindTooLarge: the request was refused for its size before it was
	// decoded.
	KindTooLarge
	// KindInvalidValue: an argument was refused (a business outcome, in the
	// response).
	KindInvalidValue
	// KindRuleViolated: the arguments break a cross-field rule (in the
	// response, with REPAIR).
	KindRuleViolated
	// KindHandoff: a person must take over the conversation (in the
	// response).
	KindHandoff
	// KindBackendFailure: the backend call failed or answered outside its
	// output contract (in CompleteSession's response).
	KindBackendFailure
	// KindBackendTimeout: the backend call timed out (in CompleteSession's
	// response).
	KindBackendTimeout
	// KindUnknownTool: no contract has the tool's name.
	KindUnknownTool
	// KindNotFound: no such session or conversation for this tenant.
	KindNotFound
	// KindUnavailable: the store cannot be reached; retrying is safe.
	KindUnavailable
	// KindBusy: the conversation was held by another turn too long;
	// retrying is safe.
	KindBusy
	// KindConflict: the call does not fit the session's state (a wrong
	// idempotency key, nothing ready to complete); retrying does not help.
	KindConflict
	// KindEnded: the session has ended and takes no more changes.
	KindEnded
	// KindTooLong: the session reached its turn limit.
	KindTooLong
	// KindOverloaded: the call was shed; retrying after a wait is safe.
	KindOverloaded
	// KindUnauthenticated: no valid key.
	KindUnauthenticated
	// KindPermissionDenied: the key may not make this call.
	KindPermissionDenied
	// KindDeadline: the call's deadline passed.
	KindDeadline
	// KindCancelled: the caller gave up on the call.
	KindCancelled
	// KindUnimplemented: the server has no such method.
	KindUnimplemented
	// KindInternal: anything else; the details stay in the log.
	KindInternal

	kindEnd
)

var kindNames = [...]string{
	KindInvalidRequest:   "invalid-request",
	KindTooLarge:         "too-large",
	KindInvalidValue:     "invalid-value",
	KindRuleViolated:     "rule-violated",
	KindHandoff:          "handoff",
	KindBackendFailure:   "backend-failure",
	KindBackendTimeout:   "backend-timeout",
	KindUnknownTool:      "unknown-tool",
	KindNotFound:         "not-found",
	KindUnavailable:      "unavailable",
	KindBusy:             "busy",
	KindConflict:         "conflict",
	KindEnded:            "ended",
	KindTooLong:          "too-long",
	KindOverloaded:       "overloaded",
	KindUnauthenticated:  "unauthenticated",
	KindPermissionDenied: "permission-denied",
	KindDeadline:         "deadline",
	KindCancelled:        "cancelled",
	KindUnimplemented:    "unimplemented",
	KindInternal:         "internal",
}

// Kinds lists every kind, so that a table keyed by kind can be checked for
// gaps.
func Kinds() []Kind {
	out := make([]Kind, 0, kindEnd-1)
	for k := KindInvalidRequest; k < kindEnd; k++ {
		out = append(out, k)
	}
	return out
}

func (k Kind) String() string {
	if k > 0 && k < kindEnd {
		return kindNames[k]
	}
	return fmt.Sprintf("Kind(%d)", int(k))
}

// ResponseKind is the kind of a problem that a response carries, a business
// outcome of a call that succeeded, read off its type: a response is stored
// as JSON and replayed, which keeps the type but no kind. It is KindInternal
// for a type no response carries.
func ResponseKind(typ string) Kind {
	switch {
	case typ == TypeInvalidValue:
		return KindInvalidValue
	case typ == TypeRuleViolated:
		return KindRuleViolated
	case typ == TypeHandoff:
		return KindHandoff
	case typ == TypeBackendTimeout:
		return KindBackendTimeout
	case strings.HasPrefix(typ, backendPrefix):
		return KindBackendFailure
	}
	return KindInternal
}
