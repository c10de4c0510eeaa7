package api

import (
	"context"
	"errors"
	"log/slog"

	"google.golang.org/grpc/codes"
	"google.golang.org/grpc/status"

	"github.com/slotd/slotd/problem"
	"github.com/slotd/slotd/session"
)

// retryAfterUnavailable is how long a client should wait before retrying a
// turn the store could not take.
const retryAfterUnavailable = 1

var codeNames = map[string]codes.Code{
	"InvalidArgument":    codes.InvalidArgument,
	"NotFound":           codes.NotFound,
	"Unavailable":        codes.Unavailable,
	"Aborted":            codes.Aborted,
	"Internal":           codes.Internal,
	"FailedPrecondition": codes.FailedPrecondition,
	"Unauthenticated":    codes.Unauthenticated,
	"PermissionDenied":   codes.PermissionDenied,
	"ResourceExhausted":  codes.ResourceExhausted,
	"DeadlineExceeded":   codes.DeadlineExceeded,
	"Canceled":           codes.Canceled,
}

// Status turns any error into a gRPC status carrying a slotd.v1.Problem in
// its details. Errors it does not know become INTERNAL without details; the
// error itself goes to the log, never to the client.
func Status(ctx context.Context, log *slog.Logger, err error) error {
	pe := classify(ctx, err)
	if pe.Code == "Internal" {
		log.ErrorContext(ctx, "internal error", "err", err)
	}
	code, ok := codeNames[pe.Code]
	if !ok {
		// A problem with a code this table lacks must never read as success.
		log.ErrorContext(ctx, "problem with an unknown code", "code", pe.Code, "type", pe.Problem.Type)
		code = codes.Internal
	}
	st := status.New(code, pe.Problem.Title)
	if withDetails, derr := st.WithDetails(ProblemMessage(&pe.Problem)); derr == nil {
		st = withDetails
	}
	return st.Err()
}

func classify(ctx context.Context, err error) *problem.Error {
	var pe *problem.Error
	switch {
	case errors.As(err, &pe):
		return pe
	case errors.Is(err, session.ErrNotFound):
		return problem.NotFound("session")
	case errors.Is(err, session.ErrNotActive):
		return &problem.Error{Code: "FailedPrecondition", Problem: problem.Problem{
			Type: problem.TypeConflict, Title: "The session has ended", Status: 409,
			Detail: "An ended session takes no more changes; the next turn starts a new one.",
		}}
	case errors.Is(err, session.ErrUnavailable):
		return problem.Unavailable(retryAfterUnavailable)
	case errors.Is(err, session.ErrBusy) && ctx.Err() == nil:
		return problem.Conflict(retryAfterUnavailable)
	case errors.Is(err, context.DeadlineExceeded) || errors.Is(ctx.Err(), context.DeadlineExceeded):
		return &problem.Error{Code: "DeadlineExceeded", Problem: problem.Problem{
			Type: problem.TypeUnavailable, Title: "The deadline passed", Status: 504,
			Detail: "The turn may or may not have been applied; retrying with the same turn_id is safe.", Retryable: true,
		}}
	case errors.Is(err, context.Canceled) || errors.Is(ctx.Err(), context.Canceled):
		return &problem.Error{Code: "Canceled", Problem: problem.Problem{
			Type: problem.TypeUnavailable, Title: "The call was cancelled", Status: 499, Retryable: true,
		}}
	}
	return problem.Internal()
}
