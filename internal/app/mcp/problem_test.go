package mcp

import (
	"context"
	"fmt"
	"log/slog"
	"net/http"
	"reflect"
	"strings"
	"testing"

	sdk "github.com/modelcontextprotocol/go-sdk/mcp"
	"google.golang.org/grpc/codes"
	"google.golang.org/grpc/status"

	"github.com/slotd/slotd/internal/api"
	"github.com/slotd/slotd/problem"
)

// MCP answers every kind of problem with the status and retry advice the
// gRPC and HTTP answers carry: api's table, whether the problem came back
// from SlotService in a status (what the HTTP gateway writes is that
// status's problem) or was made by this package. A problem that says the
// opposite of its kind's row is corrected alike on every path.
func TestProblemsAnswerAsOnGRPCAndHTTP(t *testing.T) {
	t.Parallel()
	ctx := context.Background()
	log := slog.New(slog.DiscardHandler)
	for _, k := range problem.Kinds() {
		t.Run(k.String(), func(t *testing.T) {
			t.Parallel()
			pe := &problem.Error{Kind: k, Problem: problem.Problem{Type: problem.Base + k.String(), Title: "t",
				Detail: "d", Retryable: !api.Retryable(k), RetryAfterSeconds: 3}}
			grpcErr := api.Status(ctx, log, pe)
			onWire := api.ProblemOfStatus(status.Convert(grpcErr)) // gRPC's details, the gateway's document
			viaService := problemFromError(ctx, grpcErr)
			local := problemFromError(ctx, fmt.Errorf("mcp: %w", pe))

			wantStatus, wantRetry := api.HTTPStatus(k), api.Retryable(k)
			if status.Code(grpcErr) == codes.Internal && k != problem.KindInternal {
				// A kind a response carries is never an error's.
				wantStatus, wantRetry = http.StatusInternalServerError, false
			}
			for name, p := range map[string]problem.Problem{"gRPC and HTTP": onWire, "MCP via SlotService": *viaService, "MCP's own": *local} {
				if p.Status != wantStatus || p.Retryable != wantRetry {
					t.Errorf("%s: status %d retryable %v, want %d and %v", name, p.Status, p.Retryable, wantStatus, wantRetry)
				}
				if p.RetryAfterSeconds != onWire.RetryAfterSeconds {
					t.Errorf("%s: retry after %d s, gRPC and HTTP say %d", name, p.RetryAfterSeconds, onWire.RetryAfterSeconds)
				}
			}
			text := failure("conv-1", viaService).Content[0].(*sdk.TextContent).Text
			if safe := strings.Contains(text, "Calling again with the same arguments is safe"); safe != wantRetry {
				t.Errorf("the tool result says %q; retryable is %v", text, wantRetry)
			}
		})
	}
}

// A status without a problem (the transport's, or a call that never
// reached SlotService) gets the problem the HTTP gateway answers it with.
func TestBareStatusAnswersAsTheGateway(t *testing.T) {
	t.Parallel()
	for code := codes.Canceled; code <= codes.Unauthenticated; code++ {
		got := problemFromError(context.Background(), status.Error(code, "dial tcp 10.0.0.5:9090: connection refused"))
		if want := api.ProblemForCode(code); !reflect.DeepEqual(*got, want) {
			t.Errorf("%v: MCP answers %+v, the gateway %+v", code, *got, want)
		}
		if strings.Contains(got.Detail+got.Title, "10.0.0.5") {
			t.Errorf("%v: the transport's text reached the problem: %+v", code, *got)
		}
	}
}

// A refused argument carries its kind's status, as every problem does.
func TestRefusedArgumentHasItsStatus(t *testing.T) {
	t.Parallel()
	_, p := readInput([]byte(`[1, 2]`))
	if p == nil || p.Status != api.HTTPStatus(problem.KindInvalidRequest) || p.Retryable {
		t.Errorf("arguments that are not an object: %+v, want status %d, not retryable", p, api.HTTPStatus(problem.KindInvalidRequest))
	}
}
