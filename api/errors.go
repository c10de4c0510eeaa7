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

	"github.com/slotd/slotd/problem"
	"github.com/slotd/slotd/session"
)

// retryAfterUnavailable is how long a client should wait before retrying a
// turn the store could not take.
const retryAfterUnavailable = 1

// answer is how a kind of problem leaves the process: the gRPC code of the
// call, and the HTTP status that is the problem document's status member
// and the gateway's status line (RFC 9457 wants the two equal).
type answer struct {
	code codes.Code
	http int
}

// statusClientClosed is the HTTP status of a call its client gave up on
// (nginx's 499, which grpc-gateway also answers CANCELLED with).
const statusClientClosed = 499

// answers is the one table of what each kind answers with. A kind answered
// with OK is a business outcome: it travels in a successful response, never
// as an error.
var answers = map[problem.Kind]answer{
	problem.KindInvalidRequest:   {codes.InvalidArgument, http.StatusBadRequest},
	problem.KindTooLarge:         {codes.ResourceExhausted, http.StatusRequestEntityTooLarge},
	problem.KindInvalidValue:     {codes.OK, http.StatusUnprocessableEntity},
	problem.KindRuleViolated:     {codes.OK, http.StatusUnprocessableEntity},
	problem.KindHandoff:          {codes.OK, http.StatusUnprocessableEntity},
	problem.KindBackendFailure:   {codes.OK, http.StatusBadGateway},
	problem.KindBackendTimeout:   {codes.OK, http.StatusGatewayTimeout},
	problem.KindUnknownTool:      {codes.NotFound, http.StatusNotFound},
	problem.KindNotFound:         {codes.NotFound, http.StatusNotFound},
	problem.KindUnavailable:      {codes.Unavailable, http.StatusServiceUnavailable},
	problem.KindBusy:             {codes.Aborted, http.StatusConflict},
	problem.KindConflict:         {codes.FailedPrecondition, http.StatusConflict},
	problem.KindEnded:            {codes.FailedPrecondition, http.StatusConflict},
	problem.KindTooLong:          {codes.FailedPrecondition, http.StatusConflict},
	problem.KindOverloaded:       {codes.ResourceExhausted, http.StatusTooManyRequests},
	problem.KindUnauthenticated:  {codes.Unauthenticated, http.StatusUnauthorized},
	problem.KindPermissionDenied: {codes.PermissionDenied, http.StatusForbidden},
	problem.KindDeadline:         {codes.DeadlineExceeded, http.StatusGatewayTimeout},
	problem.KindCancelled:        {codes.Canceled, statusClientClosed},
	problem.KindUnimplemented:    {codes.Unimplemented, http.StatusNotImplemented},
	problem.KindInternal:         {codes.Internal, http.StatusInternalServerError},
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
	p := pe.Problem
	p.Status = a.http
	st := status.New(a.code, p.Title)
	if withDetails, derr := st.WithDetails(problemMessage(&p)); derr == nil {
		st = withDetails
	}
	return st.Err()
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

func classify(ctx context.Context, err error) *problem.Error {
	var pe *problem.Error
	var unavailable *session.UnavailableError
	switch {
	case errors.As(err, &pe):
		return pe
	case errors.Is(err, session.ErrNotFound):
		return problem.NotFound("session")
	case errors.Is(err, session.ErrNotActive):
		return problem.Ended()
	case errors.As(err, &unavailable):
		return problem.UnavailableBecause(retryAfterUnavailable, unavailable.Cause, unavailable.Fix)
	case errors.Is(err, session.ErrUnavailable):
		return problem.Unavailable(retryAfterUnavailable)
	case errors.Is(err, session.ErrBusy) && ctx.Err() == nil:
		return problem.Conflict(retryAfterUnavailable)
	case errors.Is(err, context.DeadlineExceeded) || errors.Is(ctx.Err(), context.DeadlineExceeded):
		return problem.DeadlinePassed()
	case errors.Is(err, context.Canceled) || errors.Is(ctx.Err(), context.Canceled):
		return problem.Cancelled()
	}
	return problem.Internal()
}

// ProblemForCode is the problem of a status that carries none: a call that
// never reached slotd's services (a body the HTTP gateway could not decode,
// a broken connection, a health check that said NOT_SERVING, the
// transport's own size limit), with its status member filled in. A bare
// RESOURCE_EXHAUSTED is the transport's size limit: slotd's own shedding
// always says so in a problem.
func ProblemForCode(code codes.Code) problem.Problem {
	var pe *problem.Error
	switch code {
	case codes.InvalidArgument:
		pe = &problem.Error{Kind: problem.KindInvalidRequest, Problem: problem.Problem{Type: problem.TypeInvalidRequest,
			Title: "The request is malformed", OwnerActionRequired: true}}
	case codes.Unavailable:
		pe = &problem.Error{Kind: problem.KindUnavailable, Problem: problem.Problem{Type: problem.TypeUnavailable,
			Title: "slotd is unavailable", Detail: "Retrying with the same turn_id is safe.", Retryable: true, RetryAfterSeconds: 1}}
	case codes.DeadlineExceeded:
		pe = problem.DeadlinePassed()
	case codes.Canceled:
		pe = problem.Cancelled()
	case codes.NotFound:
		pe = &problem.Error{Kind: problem.KindNotFound, Problem: problem.Problem{Type: problem.TypeNotFound, Title: "Not found"}}
	case codes.Unimplemented:
		pe = &problem.Error{Kind: problem.KindUnimplemented, Problem: problem.Problem{Type: problem.TypeInternal,
			Title: "Not implemented by this server", OwnerActionRequired: true}}
	case codes.ResourceExhausted:
		pe = problem.TooLarge("")
	default:
		pe = problem.Internal()
	}
	p := pe.Problem
	p.Status = HTTPStatus(pe.Kind)
	return p
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
		httpStatus, body = http.StatusInternalServerError, []byte(`{"type":"`+problem.TypeInternal+`","title":"Internal error","status":500}`)
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
