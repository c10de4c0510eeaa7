package server

import (
	"bytes"
	"context"
	"errors"
	"fmt"
	"io"
	"log/slog"
	"net"
	"net/http"
	"regexp"
	"strconv"
	"strings"
	"time"

	"github.com/grpc-ecosystem/grpc-gateway/v2/runtime"
	"google.golang.org/grpc/codes"
	healthpb "google.golang.org/grpc/health/grpc_health_v1"
	"google.golang.org/grpc/status"
	"google.golang.org/protobuf/encoding/protojson"

	"github.com/slotd/slotd/api/openapi"
	slotdv1 "github.com/slotd/slotd/api/proto/slotd/v1"
	"github.com/slotd/slotd/internal/api"
	"github.com/slotd/slotd/internal/auth"
	"github.com/slotd/slotd/internal/certs"
	"github.com/slotd/slotd/internal/metrics"
	"github.com/slotd/slotd/problem"
)

// The HTTP/JSON gateway (grpc-gateway) answers on its own listener. It calls
// this server's services in the process (api.Local, local.go), so every
// check a gRPC call meets (auth, limits, recovery) applies to an HTTP call
// exactly as to a gRPC one, and its errors are the same problems, sent as
// application/problem+json.

const (
	// maxHTTPBody bounds a request body, as api.Limits bounds a gRPC
	// request: a larger one is refused with 413 before it is decoded.
	maxHTTPBody = 1 << 20
	// maxJSONDepth bounds how deeply a body's JSON nests; slotd accepts
	// far less (arguments eight levels deep), and the JSON decoder is
	// never asked to go deeper.
	maxJSONDepth = 32
	// ProblemContentType is the media type of an error body (RFC 9457).
	ProblemContentType = api.ProblemContentType
	// OpenAPIPath serves the OpenAPI document of the HTTP API.
	OpenAPIPath = "/v1/openapi.json"
	// HealthPath answers 200 when slotd is SERVING, 503 otherwise.
	HealthPath = "/healthz"
)

type gateway struct {
	lis  net.Listener
	http *http.Server
}

// newGateway binds the HTTP listener (TLS when src is not nil) and serves
// its routes through local.
func newGateway(cfg Config, log *slog.Logger, local *api.Local, keys *auth.Keys, src *certs.Source, m *metrics.Metrics) (*gateway, error) {
	g := &gateway{}
	mux := runtime.NewServeMux(
		runtime.WithMarshalerOption(runtime.MIMEWildcard, &runtime.JSONPb{
			// Proto field names, as in the proto, the OpenAPI document and
			// the problem documents. Scalars and lists are always present
			// ("retryable": false, "missing": []) so that a JSON client needs
			// no defaults of its own; unset messages stay absent. Unknown
			// fields are refused: a misspelt field is an error, not a
			// silently empty slot.
			MarshalOptions:   protojson.MarshalOptions{UseProtoNames: true, EmitDefaultValues: true},
			UnmarshalOptions: protojson.UnmarshalOptions{},
		}),
		runtime.WithIncomingHeaderMatcher(incomingHeader),
		runtime.WithOutgoingHeaderMatcher(outgoingHeader),
		runtime.WithErrorHandler(writeProblem),
		runtime.WithRoutingErrorHandler(routingProblem),
		runtime.WithHealthzEndpoint(healthpb.NewHealthClient(local)),
	)
	ctx := context.Background()
	if err := slotdv1.RegisterSlotServiceHandlerClient(ctx, mux, local.SlotClient()); err != nil {
		return nil, err
	}
	if err := slotdv1.RegisterAdminServiceHandlerClient(ctx, mux, slotdv1.NewAdminServiceClient(local)); err != nil {
		return nil, err
	}
	if err := mux.HandlePath(http.MethodGet, OpenAPIPath, func(w http.ResponseWriter, _ *http.Request, _ map[string]string) {
		w.Header().Set("Content-Type", "application/json")
		_, _ = w.Write(openapi.Document)
	}); err != nil {
		return nil, err
	}
	lis, err := listen(cfg.HTTPListen)
	if err != nil {
		return nil, err
	}
	gate := newGate(cfg.HTTPMaxUnauthConnsPerSource, cfg.HTTPMaxUnauthConns, metrics.NewEdge(m))
	g.lis = withTLS(gate.listener(lis), src, "h2", "http/1.1")
	g.http = &http.Server{
		Handler:     edge(keys, m, mux, true),
		ErrorLog:    slog.NewLogLogger(log.Handler(), slog.LevelWarn),
		ConnContext: connContext,
	}
	hardenHTTP(g.http, cfg.HTTPReadTimeout, cfg.Limits.MaxDeadline)
	return g, nil
}

// serve runs the HTTP server; its error is sent to errc.
func (g *gateway) serve(errc chan<- error) {
	go func() {
		if err := g.http.Serve(g.lis); !errors.Is(err, http.ErrServerClosed) {
			errc <- err
		}
	}()
}

// shutdown lets in-flight HTTP calls finish until ctx ends, then cuts the
// rest.
func (g *gateway) shutdown(ctx context.Context) {
	if err := g.http.Shutdown(ctx); err != nil {
		_ = g.http.Close()
	}
}

func (g *gateway) close() {
	if g.lis != nil {
		g.lis.Close()
	}
}

// edge is what an HTTP request meets before the JSON decoder: the key
// checked (a refused request costs no decoding, and its connection is
// closed), then the body read within
// maxHTTPBody (413 past it) and its nesting bounded by maxJSONDepth, in one
// pass of linear cost. With carry, the request's context carries the
// principal its key stands for, which local then only checks against the
// method (the gateway's routes); without, the services see the key again
// in the call's metadata (MCP's tool calls, which do not run in the
// context of the request that carries them).
func edge(keys *auth.Keys, m *metrics.Metrics, next http.Handler, carry bool) http.Handler {
	return http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		if r.ProtoMajor == 2 {
			defer func() {
				if r.Context().Err() != nil {
					cancelled(r.Context())
				}
			}()
		}
		public := r.Method == http.MethodGet && (r.URL.Path == OpenAPIPath || r.URL.Path == HealthPath)
		if !public {
			who, err := keys.Check(r.Header.Values("Authorization"))
			if err != nil {
				var pe *problem.Error
				if !errors.As(err, &pe) {
					pe = problem.Unauthenticated("")
				}
				m.Refused("http", refusal(pe.Kind))
				refuse(w, pe)
				return
			}
			authenticated(r.Context())
			if carry {
				r = r.WithContext(withEdgePrincipal(r.Context(), who))
			}
		}
		if r.ContentLength > maxHTTPBody {
			sendError(w, tooLarge())
			return
		}
		body, err := io.ReadAll(http.MaxBytesReader(w, r.Body, maxHTTPBody))
		var tooBig *http.MaxBytesError
		switch {
		case errors.As(err, &tooBig):
			sendError(w, tooLarge())
			return
		case err != nil:
			// A body that stopped coming, or a broken connection: the error
			// names sockets, so it is not passed on.
			sendError(w, malformed("the request body could not be read in time"))
			return
		case tooDeep(body, maxJSONDepth):
			sendError(w, malformed(fmt.Sprintf("the body nests deeper than %d levels", maxJSONDepth)))
			return
		}
		r.Body = io.NopCloser(bytes.NewReader(body))
		next.ServeHTTP(w, r)
	})
}

func tooLarge() *problem.Error {
	return problem.TooLarge("the body is over " + strconv.Itoa(maxHTTPBody) + " bytes")
}

// malformed is a body refused before the JSON decoder saw it; unlike
// problem.InvalidRequest it names no field, as there is none yet.
func malformed(detail string) *problem.Error { return problem.Malformed(detail) }

// tooDeep reports whether JSON text nests arrays and objects deeper than
// max, in one pass that minds strings and their escapes. Text that is not
// JSON is left to the decoder.
func tooDeep(b []byte, max int) bool {
	depth, inString, escaped := 0, false, false
	for _, c := range b {
		switch {
		case inString:
			switch {
			case escaped:
				escaped = false
			case c == '\\':
				escaped = true
			case c == '"':
				inString = false
			}
		case c == '"':
			inString = true
		case c == '{' || c == '[':
			if depth++; depth > max {
				return true
			}
		case c == '}' || c == ']':
			depth--
		}
	}
	return false
}

// Headers that pass between HTTP and gRPC under their own names; others
// follow grpc-gateway's defaults (Authorization passes through as
// "authorization" metadata; Grpc-Metadata-* both ways). The W3C trace
// context passes so that a turn over HTTP is traced as the caller's child.
var passHeaders = map[string]string{
	"slotd-replayed": "Slotd-Replayed",
	"x-request-id":   "X-Request-Id",
	"traceparent":    "Traceparent",
	"tracestate":     "Tracestate",
}

func incomingHeader(key string) (string, bool) {
	if k := strings.ToLower(key); passHeaders[k] != "" {
		return k, true
	}
	return runtime.DefaultHeaderMatcher(key)
}

func outgoingHeader(key string) (string, bool) {
	if h, ok := passHeaders[key]; ok {
		return h, true
	}
	if key == "content-type" {
		return "", false
	}
	return runtime.MetadataHeaderPrefix + key, true
}

// writeProblem is the gateway's error handler: the Problem in the status
// details (every error slotd's services return carries one, its status
// member filled in by api), or api's problem for the bare code of an error
// of the gateway or the transport, as an RFC 9457 document whose status
// member is the HTTP status.
func writeProblem(ctx context.Context, _ *runtime.ServeMux, _ runtime.Marshaler, w http.ResponseWriter, r *http.Request, err error) {
	st := status.Convert(err)
	code := st.Code()
	p, ok := problemFromStatus(st)
	if !ok {
		p = api.ProblemForCode(code)
		if code == codes.InvalidArgument {
			p.Detail = decodeDetail(st.Message())
		}
	}
	if p.Status == 0 {
		// A problem api did not make: its status is the code's.
		p.Status = api.ProblemForCode(code).Status
	}
	if md, ok := runtime.ServerMetadataFromContext(ctx); ok {
		if ids := md.HeaderMD.Get("x-request-id"); len(ids) == 1 {
			w.Header().Set("X-Request-Id", ids[0])
		}
	}
	api.WriteProblem(w, p.Status, p)
}

func routingProblem(_ context.Context, _ *runtime.ServeMux, _ runtime.Marshaler, w http.ResponseWriter, r *http.Request, httpStatus int) {
	p := problem.NoRoute("no such HTTP route; the routes are in " + OpenAPIPath).Problem
	if httpStatus == http.StatusMethodNotAllowed {
		p = problem.MethodNotAllowed(r.Method + " is not allowed here; the routes are in " + OpenAPIPath).Problem
	}
	api.WriteProblem(w, httpStatus, p)
}

// refuse answers a request refused before authentication at once and
// closes its connection. Without "Connection: close", net/http reads up to
// 256 KiB of an unread body (as slowly as the client sends it) before it
// answers, to keep the connection; with it, the answer goes first, and the
// body is then read and dropped for at most refusedLinger, so that a client
// still sending gets the answer before the close (a close with unread data
// is a reset, which can cost the client the answer). Over HTTP/2 the
// header is dropped and the connection told to go away.
func refuse(w http.ResponseWriter, pe *problem.Error) {
	w.Header().Set("Connection", "close")
	sendError(w, pe)
	rc := http.NewResponseController(w)
	_ = rc.Flush()
	_ = rc.SetReadDeadline(time.Now().Add(refusedLinger))
}

// refusedLinger bounds the time a refused request's connection stays open
// after its answer.
const refusedLinger = 500 * time.Millisecond

// sendError answers a problem made at the edge, before any service ran.
func sendError(w http.ResponseWriter, pe *problem.Error) {
	api.WriteProblem(w, api.HTTPStatus(pe.Kind), pe.Problem)
}

func problemFromStatus(st *status.Status) (problem.Problem, bool) {
	for _, d := range st.Details() {
		pb, ok := d.(*slotdv1.Problem)
		if !ok {
			continue
		}
		return *api.ProblemOf(pb), true
	}
	return problem.Problem{}, false
}

// decodeDetail is the detail of a body the gateway could not decode. The
// JSON decoder's own words say what to fix; anything else (a transport's)
// may name sockets and is not passed on. The words are redacted as any
// echoed input is.
func decodeDetail(msg string) string {
	if rest, ok := strings.CutPrefix(msg, "proto:"); ok {
		return "the body does not decode: " + cut(problem.Redact(jsonPosition.ReplaceAllString(strings.TrimSpace(rest), "at line $1, column $2")), 300)
	}
	if msg == afterTheBody {
		return "the body goes on after its JSON object; send one object"
	}
	return "the body is not a JSON request of this method"
}

// afterTheBody is the gateway's error for a body with more than the
// request's JSON value in it (a second object, stray text), refused before
// the call is made.
const afterTheBody = "unexpected data after request body"

// jsonPosition is how the JSON decoder names a place in the body.
var jsonPosition = regexp.MustCompile(`\(line (\d+):(\d+)\)`)

func cut(s string, n int) string {
	if r := []rune(s); len(r) > n {
		return string(r[:n]) + "…"
	}
	return s
}
