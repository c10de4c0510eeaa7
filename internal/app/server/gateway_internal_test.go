package server

import (
	"context"
	"encoding/json"
	"log/slog"
	"net/http"
	"net/http/httptest"
	"strings"
	"testing"

	"google.golang.org/grpc/codes"
	"google.golang.org/grpc/status"

	"github.com/slotd/slotd/internal/api"
	"github.com/slotd/slotd/internal/session"
	"github.com/slotd/slotd/problem"
)

// The gateway answers a problem with the HTTP status api gives its kind, and
// a bare code of the gateway or the transport with api's problem for it.
func TestGatewayProblemStatuses(t *testing.T) {
	t.Parallel()
	slotd := func(err error) error { return api.Status(context.Background(), slog.New(slog.DiscardHandler), err) }
	for _, tc := range []struct {
		name       string
		err        error
		wantStatus int
		wantType   string
		detail     string // in the detail, when not ""
		retryAfter string
	}{
		{"overloaded", slotd(problem.Overloaded(1)), 429, problem.TypeOverloaded, "", "1"},
		{"store away", slotd(session.ErrUnavailable), 503, problem.TypeUnavailable, "", "1"},
		{"session ended", slotd(session.ErrNotActive), 409, problem.TypeConflict, "", ""},
		{"unknown tool", slotd(problem.UnknownTool("x", nil)), 404, problem.TypeUnknownTool, "", ""},
		{"the transport's size limit", status.Error(codes.ResourceExhausted, "grpc: received message larger than max"), 413, problem.TypeInvalidRequest, "", ""},
		{"the JSON decoder", status.Error(codes.InvalidArgument, `proto: (line 1:2): unknown field "tol"`), 400, problem.TypeInvalidRequest,
			`the body does not decode: at line 1, column 2: unknown field "tol"`, ""},
		{"a transport's words", status.Error(codes.InvalidArgument, "read tcp 10.0.0.5:8080: reset"), 400, problem.TypeInvalidRequest,
			"the body is not a JSON request of this method", ""},
		{"not serving", status.Error(codes.Unavailable, "NOT_SERVING"), 503, problem.TypeUnavailable, "", "1"},
		{"a code without a problem", status.Error(codes.DataLoss, "x"), 500, problem.TypeInternal, "", ""},
	} {
		t.Run(tc.name, func(t *testing.T) {
			t.Parallel()
			w := httptest.NewRecorder()
			writeProblem(context.Background(), nil, nil, w, httptest.NewRequest(http.MethodPost, "/v1/turn", nil), tc.err)
			var p problem.Problem
			if err := json.Unmarshal(w.Body.Bytes(), &p); err != nil {
				t.Fatalf("body %q: %v", w.Body, err)
			}
			if w.Code != tc.wantStatus || p.Status != tc.wantStatus || p.Type != tc.wantType || w.Header().Get("Content-Type") != ProblemContentType {
				t.Errorf("%d %s %s, want %d with a %s problem of that status", w.Code, w.Header().Get("Content-Type"), w.Body, tc.wantStatus, tc.wantType)
			}
			if tc.detail != "" && p.Detail != tc.detail {
				t.Errorf("detail %q, want %q", p.Detail, tc.detail)
			}
			if strings.Contains(p.Detail, "proto:") || strings.Contains(p.Detail, "10.0.0.5") {
				t.Errorf("detail %q passes Go's or a socket's text on", p.Detail)
			}
			if got := w.Header().Get("Retry-After"); got != tc.retryAfter {
				t.Errorf("Retry-After %q, want %q", got, tc.retryAfter)
			}
		})
	}
}
