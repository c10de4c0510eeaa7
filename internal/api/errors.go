package api

import (
	"context"
	"encoding/json"
	"errors"
	"log/slog"
	"net/http"
	"strconv"

	"google.golang.org/grpc"
	"google.golang.org/grpc/codes"
	"google.golang.org/grpc/status"

	slotdv1 "github.com/slotd/slotd/api/proto/slotd/v1"
	"github.com/slotd/slotd/internal/session"
	"github.com/slotd/slotd/problem"
)

// retryAfterUnavailable is how long a client should wait before retrying a
// turn the store could not take.
const retryAfterUnavailable = 1

// answer is how a kind of problem leaves the process: the gRPC code of the
// call, the HTTP status that is the problem document's status member and
// the gateway's status line (RFC 9457 wants the two equal), and whether
// calling again is safe (the problem's retryable member). Every transport
// (gRPC, the HTTP gateway, MCP) answers a kind with its row.
type answer struct {
	code      codes.Code
	http      int
	retryable bool
}

// statusClientClosed is the HTTP status of a call its client gave up on
// (nginx's 499, which grpc-gateway also answers CANCELLED with).
const statusClientClosed = 499

// answers is the one table of what each kind answers with. A kind answered
// with OK is a business outcome: it travels in a successful response, never
// as an error, and its problem says itself whether a retry helps (a
// backend's rate limit does, its refusal does not).
var answers = map[problem.Kind]answer{
	problem.KindInvalidRequest:   {codes.InvalidArgument, http.StatusBadRequest, false},
	problem.KindTooLarge:         {codes.ResourceExhausted, http.StatusRequestEntityTooLarge, false},
	problem.KindInvalidValue:     {codes.OK, http.StatusUnprocessableEntity, false},
	problem.KindRuleViolated:     {codes.OK, http.StatusUnprocessableEntity, false},
	problem.KindHandoff:          {codes.OK, http.StatusUnprocessableEntity, false},
	problem.KindBackendFailure:   {codes.OK, http.StatusBadGateway, false},
	problem.KindBackendTimeout:   {codes.OK, http.StatusGatewayTimeout, false},
	problem.KindUnknownTool:      {codes.NotFound, http.StatusNotFound, false},
	problem.KindNotFound:         {codes.NotFound, http.StatusNotFound, false},
	problem.KindUnavailable:      {codes.Unavailable, http.StatusServiceUnavailable, true},
	problem.KindBusy:             {codes.Aborted, http.StatusConflict, true},
	problem.KindConflict:         {codes.FailedPrecondition, http.StatusConflict, false},
	problem.KindEnded:            {codes.FailedPrecondition, http.StatusConflict, false},
	problem.KindTooLong:          {codes.FailedPrecondition, http.StatusConflict, false},
	problem.KindOverloaded:       {codes.ResourceExhausted, http.StatusTooManyRequests, true},
	problem.KindUnauthenticated:  {codes.Unauthenticated, http.StatusUnauthorized, false},
	problem.KindPermissionDenied: {codes.PermissionDenied, http.StatusForbidden, false},
	problem.KindDeadline:         {codes.DeadlineExceeded, http.StatusGatewayTimeout, true},
	problem.KindCancelled:        {codes.Canceled, statusClientClosed, true},
	problem.KindUnimplemented:    {codes.Unimplemented, http.StatusNotImplemented, false},
	problem.KindInternal:         {codes.Internal, http.StatusInternalServerError, false},
}

// failure is what a problem of kind k answers with as an error; false for a
// kind the table lacks or one that belongs in a response, which must never
// read as success and answers as internal.
func failure(k problem.Kind) (answer, bool) {
	a, ok := answers[k]
	if !ok || a.code == codes.OK {
		return answers[problem.KindInternal], false
	}
	return a, true
}

// HTTPStatus is the HTTP status of a problem of kind k: the status member of
// its document, and the status line the HTTP gateway answers it with.
func HTTPStatus(k problem.Kind) int {
	if a, ok := answers[k]; ok {
		return a.http
	}
	return http.StatusInternalServerError
}

// Retryable reports whether calling again is safe after a failure of kind
// k: the retryable member of its problem on every transport.
func Retryable(k problem.Kind) bool {
	a, _ := failure(k)
	return a.retryable
}

// Status turns any error into a gRPC status carrying a slotd.v1.Problem in
// its details. Errors it does not know become INTERNAL without details; the
// error itself goes to the log, never to the client.
func Status(ctx context.Context, log *slog.Logger, err error) error {
	pe := classify(ctx, err)
	a, ok := failure(pe.Kind)
	switch {
	case !ok:
		log.ErrorContext(ctx, "problem of a kind that is not an error", "kind", pe.Kind.String(), "type", pe.Problem.Type)
	case pe.Kind == problem.KindInternal:
		log.ErrorContext(ctx, "internal error", "err", err)
	case errors.As(err, new(*session.UnavailableError)):
		// An operator must change a setting: the log says which, with the
		// server's own message.
		log.WarnContext(ctx, "store unavailable", "err", err.Error())
	}
	p := answered(pe.Problem, a)
	st := status.New(a.code, p.Title)
	if withDetails, derr := st.WithDetails(problemMessage(&p)); derr == nil {
		st = withDetails
	}
	return st.Err()
}

// answered is p as it leaves the process with the answer a: its status and
// retry advice are the table's.
func answered(p problem.Problem, a answer) problem.Problem {
	p.Status = a.http
	p.Retryable = a.retryable
	if !a.retryable {
		p.RetryAfterSeconds = 0
	}
	return p
}

// ProblemOfError is the problem a call that failed with err answers with,
// as Status puts it in the status details: its status member and retry
// advice filled in from the table. For the transports that answer outside
// gRPC (MCP).
func ProblemOfError(ctx context.Context, err error) problem.Problem {
	pe := classify(ctx, err)
	a, _ := failure(pe.Kind)
	return answered(pe.Problem, a)
}

// ProblemOfStatus is the problem of a call that failed with st: the one in
// its details (every error slotd's services answer with carries one), or
// ProblemForCode's for a bare code.
func ProblemOfStatus(st *status.Status) problem.Problem {
	for _, d := range st.Details() {
		if pb, ok := d.(*slotdv1.Problem); ok {
			return *ProblemOf(pb)
		}
	}
	return ProblemForCode(st.Code())
}

// codeOf is the code a call that failed with err answers with, as Status
// and the Errors interceptor decide it; OK for no error.
func codeOf(ctx context.Context, err error) codes.Code {
	if err == nil {
		return codes.OK
	}
	if st, ok := asStatus(err); ok {
		return st.Code()
	}
	a, _ := failure(classify(ctx, err).Kind)
	return a.code
}

// asStatus is err's status when err is one itself. A status wrapped in
// another error is not passed on: the wrapping text could say anything.
func asStatus(err error) (*status.Status, bool) {
	if s, ok := err.(interface{ GRPCStatus() *status.Status }); ok {
		return s.GRPCStatus(), true
	}
	return nil, false
}

// classify is the problem of an error, by its type and the sentinel errors
// it wraps, never by its text. A context's error is a passed deadline or a
// cancelled call wherever it came from; a store's busy conversation is a
// retryable conflict. An error that names no cause of a call whose context
// has ended is taken for the context's.
func classify(ctx context.Context, err error) *problem.Error {
	var pe *problem.Error
	var unavailable *session.UnavailableError
	switch {
	case errors.As(err, &pe):
		return pe
	case problem.FromContext(err) != nil:
		return problem.FromContext(err)
	case errors.Is(err, session.ErrNotFound):
		return problem.NotFound("session")
	case errors.Is(err, session.ErrNotActive):
		return problem.Ended()
	case errors.As(err, &unavailable):
		return problem.UnavailableBecause(retryAfterUnavailable, unavailable.Cause, unavailable.Fix)
	case errors.Is(err, session.ErrUnavailable):
		return problem.Unavailable(retryAfterUnavailable)
	case errors.Is(err, session.ErrBusy):
		return problem.Conflict(retryAfterUnavailable)
	case problem.FromContext(ctx.Err()) != nil:
		return problem.FromContext(ctx.Err())
	}
	return problem.Internal()
}

// ProblemForCode is the problem of a status that carries none: a call that
// never reached slotd's services (a body the HTTP gateway could not decode,
// a broken connection, a health check that said NOT_SERVING, the
// transport's own size limit), with its status member and retry advice
// filled in. A bare RESOURCE_EXHAUSTED is the transport's size limit:
// slotd's own shedding always says so in a problem.
func ProblemForCode(code codes.Code) problem.Problem {
	var pe *problem.Error
	switch code {
	case codes.InvalidArgument:
		pe = problem.Malformed("")
	case codes.Unavailable:
		pe = problem.ServerUnavailable()
	case codes.DeadlineExceeded:
		pe = problem.DeadlinePassed()
	case codes.Canceled:
		pe = problem.Cancelled()
	case codes.Aborted:
		pe = problem.Conflict(retryAfterUnavailable)
	case codes.FailedPrecondition:
		pe = problem.StateConflict()
	case codes.NotFound:
		pe = problem.NotFound("")
	case codes.Unimplemented:
		pe = problem.Unimplemented()
	case codes.ResourceExhausted:
		pe = problem.TooLarge("")
	case codes.Unauthenticated:
		pe = problem.Unauthenticated("")
	case codes.PermissionDenied:
		pe = problem.PermissionDenied("")
	default:
		pe = problem.Internal()
	}
	a, _ := failure(pe.Kind)
	return answered(pe.Problem, a)
}

// ProblemContentType is the media type of a problem document (RFC 9457).
const ProblemContentType = "application/problem+json"

// WriteProblem answers an HTTP request with the problem document p, its
// status member the HTTP status httpStatus, as RFC 9457 wants, and a
// Retry-After header when p names a wait.
func WriteProblem(w http.ResponseWriter, httpStatus int, p problem.Problem) {
	p.Status = httpStatus
	body, err := json.Marshal(p)
	if err != nil {
		httpStatus = http.StatusInternalServerError
		body, _ = json.Marshal(answered(problem.Internal().Problem, answers[problem.KindInternal]))
	}
	h := w.Header()
	h.Set("Content-Type", ProblemContentType)
	h.Set("Content-Length", strconv.Itoa(len(body)))
	if p.RetryAfterSeconds > 0 {
		h.Set("Retry-After", strconv.Itoa(p.RetryAfterSeconds))
	}
	w.WriteHeader(httpStatus)
	_, _ = w.Write(body)
}

// Errors is the innermost interceptor: whatever error a handler returns
// leaves as a status made by Status, so that handlers return domain errors
// and none can answer with a raw one. A status is passed on as it is.
func (g *Guard) Errors() grpc.UnaryServerInterceptor {
	return func(ctx context.Context, req any, _ *grpc.UnaryServerInfo, handler grpc.UnaryHandler) (any, error) {
		resp, err := handler(ctx, req)
		if err == nil {
			return resp, nil
		}
		if _, ok := asStatus(err); ok {
			return nil, err
		}
		return nil, Status(ctx, g.log, err)
	}
}

// ErrorsStream is Errors for streaming calls.
func (g *Guard) ErrorsStream() grpc.StreamServerInterceptor {
	return func(srv any, ss grpc.ServerStream, _ *grpc.StreamServerInfo, handler grpc.StreamHandler) error {
		err := handler(srv, ss)
		if err == nil {
			return nil
		}
		if _, ok := asStatus(err); ok {
			return err
		}
		return Status(ss.Context(), g.log, err)
	}
}
