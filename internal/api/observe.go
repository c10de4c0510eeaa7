package api

import (
	"context"
	"errors"
	"time"

	"google.golang.org/grpc/codes"

	"github.com/slotd/slotd/internal/session"
)

// Observer is told what the service answered, for logs and metrics. It is
// called on the call's goroutine and must not block.
type Observer interface {
	// TurnStarted is called when a turn reaches the service, or the Limit
	// interceptor refuses one; TurnDone follows it once.
	TurnStarted(ctx context.Context)
	// TurnDone is called once the turn is answered.
	TurnDone(ctx context.Context, t TurnReport)
	// CompletionDone is called once a CompleteSession is answered.
	CompletionDone(ctx context.Context, c CompletionReport)
}

// TurnReport is one turn as the service answered it.
type TurnReport struct {
	// Request is the turn as the engine ran it (its clock filled in) when
	// the engine answered; as the call asked for it otherwise, without its
	// arguments when Limit refused it.
	Request session.TurnRequest
	// Result is the engine's result, with its Facts; nil when the call
	// failed.
	Result *session.Result
	// Err is the error the call failed with, before it became a status.
	Err error
	// Code is the gRPC code the call answered with.
	Code codes.Code
	// Elapsed is the time from the call reaching the service (or Limit) to
	// its answer.
	Elapsed time.Duration
}

// CompletionReport is one CompleteSession as the service answered it.
type CompletionReport struct {
	Request session.CompleteRequest
	// Completion is nil when the call failed.
	Completion *session.Completion
	Err        error
	Code       codes.Code
}

// errPanicked stands for the answer of a call whose handler panicked:
// Recover answers it INTERNAL.
var errPanicked = errors.New("api: the handler panicked")

// ignore is the Observer of a service that was given none.
type ignore struct{}

func (ignore) TurnStarted(context.Context)                      {}
func (ignore) TurnDone(context.Context, TurnReport)             {}
func (ignore) CompletionDone(context.Context, CompletionReport) {}

// Option configures a SlotService.
type Option func(*SlotService)

// WithObserver has the service tell o of every turn and completion.
func WithObserver(o Observer) Option {
	return func(s *SlotService) {
		if o != nil {
			s.observer = o
		}
	}
}
