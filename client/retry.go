package client

import (
	"context"
	"fmt"
	"math/rand/v2"
	"time"

	"google.golang.org/grpc/codes"
	"google.golang.org/grpc/status"

	slotdv1 "github.com/slotd/slotd/api/proto/slotd/v1"
)

// RetryPolicy bounds the retries of one call. A call is retried only when
// slotd's problem says it is retryable, or when the call never reached
// slotd (the transport's UNAVAILABLE, an attempt that timed out): the same
// turn_id makes every retry of a turn safe, the policy only keeps it short.
type RetryPolicy struct {
	// MaxAttempts counts the first call too; 1 turns retries off.
	MaxAttempts int
	// MinDelay is the first wait when slotd names none; it doubles on each
	// retry.
	MinDelay time.Duration
	// MaxDelay caps any one wait, slotd's retry_after_seconds included.
	MaxDelay time.Duration
	// Jitter adds up to this fraction of each wait at random, so that many
	// clients refused together do not come back together; a negative value
	// adds none.
	Jitter float64
	// AttemptTimeout bounds each attempt; 0 leaves only ctx's deadline.
	AttemptTimeout time.Duration
}

// DefaultRetryPolicy is the policy of a Client made without WithRetry:
// about five seconds of retries when slotd asks for a second between them.
var DefaultRetryPolicy = RetryPolicy{MaxAttempts: 5, MinDelay: 200 * time.Millisecond, MaxDelay: 5 * time.Second, Jitter: 0.2}

func (p RetryPolicy) withDefaults() RetryPolicy {
	if p.MaxAttempts <= 0 {
		p.MaxAttempts = DefaultRetryPolicy.MaxAttempts
	}
	if p.MinDelay <= 0 {
		p.MinDelay = DefaultRetryPolicy.MinDelay
	}
	if p.MaxDelay <= 0 {
		p.MaxDelay = DefaultRetryPolicy.MaxDelay
	}
	if p.Jitter == 0 {
		p.Jitter = DefaultRetryPolicy.Jitter
	}
	if p.Jitter < 0 {
		p.Jitter = 0
	}
	return p
}

// wait is how long to wait before retry number n (1 for the first retry):
// slotd's retry_after when it gave one, else MinDelay doubled n-1 times;
// capped at MaxDelay, then up to Jitter of it added (and capped again).
// random is a number in [0, 1).
func (p RetryPolicy) wait(n int, retryAfter time.Duration, random float64) time.Duration {
	d := retryAfter
	if d <= 0 {
		d = p.MinDelay
		for i := 1; i < n && d < p.MaxDelay; i++ {
			d *= 2
		}
	}
	d = min(d, p.MaxDelay)
	d += time.Duration(float64(d) * p.Jitter * random)
	return min(d, p.MaxDelay)
}

// Retry is told to OnRetry before each wait.
type Retry struct {
	// Attempt is the attempt that failed (1 for the first call).
	Attempt int
	// Wait is how long the client waits before the next attempt.
	Wait time.Duration
	// Err is the failure, an *Error.
	Err error
}

// Error is a call that failed: a system failure slotd answered with (Code
// and Problem from the status details), or one of the transport (Problem
// nil). A business outcome is never an Error: it is a result with Problem.
type Error struct {
	// Code is the gRPC code.
	Code codes.Code
	// Message is the status message.
	Message string
	// Problem is slotd's problem; nil when slotd did not answer.
	Problem *Problem
	// Attempts is how many calls were made.
	Attempts int
	// GaveUp says why the client stopped retrying a retryable failure; ""
	// when it was not retryable.
	GaveUp string
	err    error
	ctxErr error // the context's error, when it ended the retries
}

func (e *Error) Error() string {
	msg := e.Message
	if e.Problem != nil {
		msg = e.Problem.Title
		if e.Problem.Detail != "" {
			msg += ": " + e.Problem.Detail
		}
	}
	s := fmt.Sprintf("slotd: %s: %s", e.Code, msg)
	if e.Attempts > 1 {
		s += fmt.Sprintf(" (after %d attempts)", e.Attempts)
	}
	if e.GaveUp != "" {
		s += "; " + e.GaveUp
	}
	return s
}

// Unwrap is the gRPC error, and the context's error when the context ended
// the retries, so that errors.Is(err, context.DeadlineExceeded) works.
func (e *Error) Unwrap() []error {
	if e.ctxErr != nil {
		return []error{e.err, e.ctxErr}
	}
	return []error{e.err}
}

// GRPCStatus is the status of the last attempt.
func (e *Error) GRPCStatus() *status.Status { return status.Convert(e.err) }

// Retryable says the failure was one a later call might not have; the
// client retried it as long as its policy and the context allowed.
func (e *Error) Retryable() bool { return retryable(e.Code, e.Problem) }

// retryable is the one rule: slotd's problem decides; without one (slotd
// was not reached) only the transport's UNAVAILABLE and an attempt's own
// timeout are worth another try.
func retryable(code codes.Code, p *Problem) bool {
	if p != nil {
		return p.Retryable
	}
	return code == codes.Unavailable || code == codes.DeadlineExceeded
}

func asError(err error, attempts int) *Error {
	st := status.Convert(err)
	e := &Error{Code: st.Code(), Message: st.Message(), Attempts: attempts, err: err}
	for _, d := range st.Details() {
		if p, ok := d.(*slotdv1.Problem); ok {
			e.Problem = problemOf(p)
			break
		}
	}
	return e
}

// call runs one call under the retry policy and returns how many attempts
// it made.
func (c *Client) call(ctx context.Context, fn func(context.Context) error) (int, error) {
	p := c.cfg.retry
	ctx = c.outgoing(ctx)
	for attempt := 1; ; attempt++ {
		actx, cancel := ctx, context.CancelFunc(func() {})
		if p.AttemptTimeout > 0 {
			actx, cancel = context.WithTimeout(ctx, p.AttemptTimeout)
		}
		err := fn(actx)
		cancel()
		if err == nil {
			return attempt, nil
		}
		e := asError(err, attempt)
		if cerr := ctxErr(ctx); cerr != nil {
			e.ctxErr = cerr
			if retryable(e.Code, e.Problem) {
				e.GaveUp = "the context ended"
			}
			return attempt, e
		}
		if !retryable(e.Code, e.Problem) {
			return attempt, e
		}
		if attempt >= p.MaxAttempts {
			e.GaveUp = fmt.Sprintf("no attempts left (the policy allows %d)", p.MaxAttempts)
			return attempt, e
		}
		var retryAfter time.Duration
		if e.Problem != nil {
			retryAfter = e.Problem.RetryAfter
		}
		wait := p.wait(attempt, retryAfter, rand.Float64())
		if dl, ok := ctx.Deadline(); ok && time.Until(dl) < wait {
			e.GaveUp = fmt.Sprintf("the context's deadline comes before the retry in %s", wait.Round(time.Millisecond))
			return attempt, e
		}
		if c.cfg.onRetry != nil {
			c.cfg.onRetry(Retry{Attempt: attempt, Wait: wait, Err: e})
		}
		t := time.NewTimer(wait)
		select {
		case <-ctx.Done():
			t.Stop()
			e.GaveUp, e.ctxErr = "the context ended", ctx.Err()
			return attempt, e
		case <-t.C:
		}
	}
}

// ctxErr is ctx's error, also in the moment between its deadline passing
// (when gRPC's own timer may already have failed the call) and ctx saying so.
func ctxErr(ctx context.Context) error {
	if err := ctx.Err(); err != nil {
		return err
	}
	if dl, ok := ctx.Deadline(); ok && !time.Now().Before(dl) {
		return context.DeadlineExceeded
	}
	return nil
}
