package api

import (
	"bytes"
	"context"
	"errors"
	"fmt"
	"log/slog"
	"net/http"
	"reflect"
	"strings"
	"testing"

	"google.golang.org/grpc/codes"
	"google.golang.org/grpc/mem"
	"google.golang.org/grpc/status"
	"google.golang.org/protobuf/proto"

	slotdv1 "github.com/slotd/slotd/api/proto/slotd/v1"
	"github.com/slotd/slotd/internal/session"
	"github.com/slotd/slotd/problem"
)

func TestStatusMapsEveryFailure(t *testing.T) {
	t.Parallel()
	expired, cancel := context.WithTimeout(context.Background(), 0)
	defer cancel()
	leaky := "postgres://slotd:hunter2@10.0.0.5:5432/slotd SQLSTATE 08006 at pgstore.go:120 card 4276123456784417"
	for _, tc := range []struct {
		name      string
		ctx       context.Context
		err       error
		code      codes.Code
		retryable bool
		owner     bool
		typ       string
	}{
		{"store unavailable", context.Background(), fmt.Errorf("%w: %s", session.ErrUnavailable, leaky), codes.Unavailable, true, false, problem.TypeUnavailable},
		{"lock timeout", context.Background(), fmt.Errorf("%w (SQLSTATE 55P03): %s", session.ErrBusy, leaky), codes.Aborted, true, false, problem.TypeConflict},
		{"deadline", expired, fmt.Errorf("%w: %w", session.ErrBusy, context.DeadlineExceeded), codes.DeadlineExceeded, true, false, problem.TypeUnavailable},
		{"a store's deadline", context.Background(), fmt.Errorf("pgstore: %w", context.DeadlineExceeded), codes.DeadlineExceeded, true, false, problem.TypeUnavailable},
		{"a store's cancellation", context.Background(), fmt.Errorf("pgstore: %w", context.Canceled), codes.Canceled, true, false, problem.TypeUnavailable},
		{"busy as the deadline passes", expired, fmt.Errorf("%w (SQLSTATE 40001): %s", session.ErrBusy, leaky), codes.Aborted, true, false, problem.TypeConflict},
		{"an error of no cause after the deadline", expired, errors.New(leaky), codes.DeadlineExceeded, true, false, problem.TypeUnavailable},
		{"not found", context.Background(), fmt.Errorf("pgstore: %w", session.ErrNotFound), codes.NotFound, false, false, problem.TypeNotFound},
		{"ended", context.Background(), session.ErrNotActive, codes.FailedPrecondition, false, false, problem.TypeConflict},
		{"unknown tool", context.Background(), problem.UnknownTool("x", []string{"a", "b"}), codes.NotFound, false, true, problem.TypeUnknownTool},
		{"bad request", context.Background(), problem.InvalidRequest("turn_id", "required"), codes.InvalidArgument, false, true, problem.TypeInvalidRequest},
		{"overload", context.Background(), problem.Overloaded(1), codes.ResourceExhausted, true, false, problem.TypeOverloaded},
		{"anything else", context.Background(), errors.New(leaky), codes.Internal, false, true, problem.TypeInternal},
		{"a problem of a kind the table lacks", context.Background(), &problem.Error{Kind: problem.Kind(1000), Problem: problem.Problem{Type: problem.TypeConflict, Title: "x"}}, codes.Internal, false, false, problem.TypeConflict},
	} {
		t.Run(tc.name, func(t *testing.T) {
			t.Parallel()
			var logs bytes.Buffer
			err := Status(tc.ctx, slog.New(slog.NewJSONHandler(&logs, nil)), tc.err)
			st := status.Convert(err)
			if st.Code() != tc.code {
				t.Fatalf("code %v, want %v", st.Code(), tc.code)
			}
			p := problemIn(t, err)
			if p.Retryable != tc.retryable || p.OwnerActionRequired != tc.owner || p.Type != tc.typ {
				t.Errorf("problem %v: want retryable=%v owner=%v type=%s", p, tc.retryable, tc.owner, tc.typ)
			}
			if tc.retryable && tc.code != codes.DeadlineExceeded && tc.code != codes.Canceled && p.RetryAfterSeconds <= 0 {
				t.Errorf("a retryable problem without retry_after: %v", p)
			}
			text := st.Message() + p.Title + p.Detail
			for _, e := range p.Errors {
				text += e.Input + e.Message
			}
			for _, leak := range []string{"hunter2", "postgres://", "SQLSTATE", "pgstore.go", "4276123456784417", "10.0.0.5"} {
				if strings.Contains(text, leak) {
					t.Errorf("the answer leaks %q: %s", leak, text)
				}
			}
			if tc.code == codes.Internal && logs.Len() == 0 {
				t.Errorf("an internal error is not logged")
			}
		})
	}
}

// TestEveryKindAnswers checks the one table: every kind has a gRPC code and
// an HTTP status, the table holds nothing else, and Status answers each
// kind with its row, its status member filled in; a kind that belongs in a
// response never answers an error with OK.
func TestEveryKindAnswers(t *testing.T) {
	t.Parallel()
	responses := map[problem.Kind]bool{problem.KindInvalidValue: true, problem.KindRuleViolated: true,
		problem.KindHandoff: true, problem.KindBackendFailure: true, problem.KindBackendTimeout: true}
	kinds := problem.Kinds()
	if len(answers) != len(kinds) {
		t.Errorf("the table has %d rows for %d kinds", len(answers), len(kinds))
	}
	for _, k := range kinds {
		t.Run(k.String(), func(t *testing.T) {
			t.Parallel()
			a, ok := answers[k]
			if !ok {
				t.Fatalf("no row for kind %v", k)
			}
			if a.http < 400 || a.http > 599 || HTTPStatus(k) != a.http {
				t.Errorf("HTTP status %d (HTTPStatus says %d), want a 4xx or 5xx", a.http, HTTPStatus(k))
			}
			if (a.code == codes.OK) != responses[k] {
				t.Errorf("code %v: only the kinds of a response's problem answer OK", a.code)
			}
			var logs bytes.Buffer
			err := Status(context.Background(), slog.New(slog.NewJSONHandler(&logs, nil)),
				&problem.Error{Kind: k, Problem: problem.Problem{Type: problem.Base + k.String(), Title: "t"}})
			st, p := status.Convert(err), problemIn(t, err)
			want, wantStatus := a.code, a.http
			if responses[k] {
				want, wantStatus = codes.Internal, http.StatusInternalServerError
				if logs.Len() == 0 {
					t.Errorf("an error of a response's kind is not logged")
				}
			}
			if st.Code() != want || p.Status != int32(wantStatus) {
				t.Errorf("Status: %v with problem status %d, want %v and %d", st.Code(), p.Status, want, wantStatus)
			}
		})
	}
	if got := HTTPStatus(problem.Kind(0)); got != http.StatusInternalServerError {
		t.Errorf("HTTPStatus of no kind = %d, want 500", got)
	}
}

// TestRetryAdviceIsTheTables: every problem slotd makes says the retry
// advice of its kind's row, and an answer carries the row's advice
// whatever the problem said.
func TestRetryAdviceIsTheTables(t *testing.T) {
	t.Parallel()
	for _, pe := range []*problem.Error{
		problem.InvalidRequest("turn_id", "required"), problem.TooLarge("big"), problem.UnknownTool("x", nil),
		problem.NotFound("session"), problem.Ended(), problem.Unavailable(1), problem.UnavailableBecause(1, "c", "f"),
		problem.Conflict(1), problem.Overloaded(2), problem.DeadlinePassed(), problem.Cancelled(),
		problem.Unauthenticated("no key"), problem.PermissionDenied("admin"), problem.Internal(),
		problem.Malformed("x"), problem.ServerUnavailable(), problem.Unimplemented(), problem.NoRoute("x"),
		problem.MethodNotAllowed("x"), problem.BatchRefused("x"), problem.SessionsFull("x", 60),
		problem.TenantSessionsFull("x", 60), problem.TurnOfAnotherTool("t", "a"), problem.TurnRewritten("t"),
		problem.WrongIdempotencyKey(), problem.NotReady("ASK"), problem.TooManyTurns(100), problem.StateConflict(),
	} {
		if pe.Problem.Retryable != Retryable(pe.Kind) {
			t.Errorf("%s (%v): retryable %v, the table says %v", pe.Problem.Title, pe.Kind, pe.Problem.Retryable, Retryable(pe.Kind))
		}
		flipped := *pe
		flipped.Problem.Retryable = !flipped.Problem.Retryable
		got := problemIn(t, Status(context.Background(), slog.New(slog.DiscardHandler), &flipped))
		if got.Retryable != Retryable(pe.Kind) || int(got.Status) != HTTPStatus(pe.Kind) {
			t.Errorf("%s answered retryable=%v status=%d, the table says %v and %d", pe.Problem.Title, got.Retryable, got.Status, Retryable(pe.Kind), HTTPStatus(pe.Kind))
		}
		if p := ProblemOfError(context.Background(), &flipped); p.Retryable != Retryable(pe.Kind) || p.Status != HTTPStatus(pe.Kind) {
			t.Errorf("ProblemOfError(%s) = retryable=%v status=%d, the table says %v and %d", pe.Problem.Title, p.Retryable, p.Status, Retryable(pe.Kind), HTTPStatus(pe.Kind))
		}
	}
}

// TestBareCodesAnswerTheirKind: the problem of a bare code is of a kind
// whose row answers with that code, where the table has one.
func TestBareCodesAnswerTheirKind(t *testing.T) {
	t.Parallel()
	have := map[codes.Code]bool{}
	for _, a := range answers {
		have[a.code] = true
	}
	for code := codes.OK + 1; code <= codes.Unauthenticated; code++ {
		p := ProblemForCode(code)
		st := ProblemOfStatus(status.New(code, "no details"))
		if !reflect.DeepEqual(st, p) {
			t.Errorf("ProblemOfStatus(bare %v) = %+v, ProblemForCode says %+v", code, st, p)
		}
		if !have[code] {
			continue
		}
		var kind problem.Kind
		for _, k := range problem.Kinds() {
			if answers[k].code == code && answers[k].http == p.Status {
				kind = k
			}
		}
		if kind == 0 {
			t.Errorf("ProblemForCode(%v) = status %d, which no kind answering %v has", code, p.Status, code)
		} else if p.Retryable != Retryable(kind) {
			t.Errorf("ProblemForCode(%v): retryable %v, the table says %v", code, p.Retryable, Retryable(kind))
		}
	}
}

// TestBareCodesGetAProblem: a status without a problem (the gateway's or
// the transport's) gets one of the kind its code stands for.
func TestBareCodesGetAProblem(t *testing.T) {
	t.Parallel()
	for _, tc := range []struct {
		code   codes.Code
		status int
		typ    string
	}{
		{codes.InvalidArgument, 400, problem.TypeInvalidRequest},
		{codes.ResourceExhausted, 413, problem.TypeInvalidRequest}, // the transport's size limit
		{codes.Unavailable, 503, problem.TypeUnavailable},
		{codes.DeadlineExceeded, 504, problem.TypeUnavailable},
		{codes.Canceled, 499, problem.TypeUnavailable},
		{codes.NotFound, 404, problem.TypeNotFound},
		{codes.Unimplemented, 501, problem.TypeInternal},
		{codes.Unknown, 500, problem.TypeInternal},
		{codes.DataLoss, 500, problem.TypeInternal},
	} {
		p := ProblemForCode(tc.code)
		if p.Status != tc.status || p.Type != tc.typ || p.Title == "" {
			t.Errorf("ProblemForCode(%v) = %+v, want status %d, type %s and a title", tc.code, p, tc.status, tc.typ)
		}
	}
}

// FuzzStatus: whatever the error text, the answer is a status with a problem
// and never the text itself.
func FuzzStatus(f *testing.F) {
	f.Add("postgres://u:p@h/db", 0)
	f.Add("SQLSTATE 40001 serialization failure", 1)
	f.Add("4276 1234 5678 4417", 2)
	f.Add("", 3)
	f.Fuzz(func(t *testing.T, text string, kind int) {
		var err error
		switch kind % 4 {
		case 0:
			err = errors.New(text)
		case 1:
			err = fmt.Errorf("%w: %s", session.ErrUnavailable, text)
		case 2:
			err = fmt.Errorf("%w: %s", session.ErrBusy, text)
		default:
			err = problem.InvalidRequest("arguments", "bad")
		}
		st := status.Convert(Status(context.Background(), slog.New(slog.DiscardHandler), err))
		if st.Code() == codes.OK || st.Code() == codes.Unknown {
			t.Fatalf("code %v", st.Code())
		}
		var p *slotdv1.Problem
		for _, d := range st.Details() {
			p, _ = d.(*slotdv1.Problem)
		}
		if p == nil || p.Type == "" || p.Title == "" {
			t.Fatalf("no problem: %v", st)
		}
		if len(text) > 8 && (strings.Contains(st.Message(), text) || strings.Contains(p.Detail, text)) {
			t.Fatalf("the error text reached the client: %q", text)
		}
	})
}

// FuzzCodec: any bytes decode, or fail, without a panic; what decodes with
// a repair is marked, and the marked request is valid UTF-8 throughout.
func FuzzCodec(f *testing.F) {
	good, _ := proto.Marshal(&slotdv1.TurnRequest{ConversationId: "c", Tool: "bank.open_dispute", TurnId: "t"})
	f.Add(good)
	bad := bytes.Replace(good, []byte("bank"), []byte{0xff, 0xfe, 0xfd, 0xfc}, 1)
	f.Add(bad)
	f.Add([]byte{0x0a, 0x02, 0xc3, 0x28})
	f.Fuzz(func(t *testing.T, b []byte) {
		var req slotdv1.TurnRequest
		if err := (Codec{}).Unmarshal(mem.BufferSlice{mem.SliceBuffer(b)}, &req); err != nil {
			return
		}
		if _, err := proto.Marshal(&req); err != nil && invalidUTF8Field(&req) == "" {
			t.Fatalf("decoded an unencodable request without marking it: %v", err)
		}
	})
}

func TestCodecMarksInvalidUTF8(t *testing.T) {
	t.Parallel()
	good, _ := proto.Marshal(&slotdv1.TurnRequest{ConversationId: "c", Tool: "bank.open_dispute", TurnId: "t"})
	var req slotdv1.TurnRequest
	if err := (Codec{}).Unmarshal(mem.BufferSlice{mem.SliceBuffer(good)}, &req); err != nil || invalidUTF8Field(&req) != "" {
		t.Fatalf("a valid request: %v, marked %q", err, invalidUTF8Field(&req))
	}
	bad := bytes.Replace(good, []byte("bank"), []byte{0xff, 0xfe, 0xfd, 0xfc}, 1)
	req.Reset()
	if err := (Codec{}).Unmarshal(mem.BufferSlice{mem.SliceBuffer(bad)}, &req); err != nil {
		t.Fatal(err)
	}
	if got := invalidUTF8Field(&req); got != "tool" {
		t.Errorf("marked field = %q, want tool", got)
	}
}

func TestCodecMarksGarbage(t *testing.T) {
	t.Parallel()
	var req slotdv1.TurnRequest
	garbage := []byte{0x0a, 0xff, 0xff, 0xff, 0xff, 0x0f} // a length past the end
	if err := (Codec{}).Unmarshal(mem.BufferSlice{mem.SliceBuffer(garbage)}, &req); err != nil {
		t.Fatal(err)
	}
	if field, why := undecodable(&req); field != "request" || why == "" {
		t.Errorf("garbage marked %q, %q; want request and a reason", field, why)
	}
}

// A store unavailability with a named cause (a pooler's lost prepared
// statement, here) answers a retryable UNAVAILABLE whose detail names the
// cause and the fix, never the driver's text; the log has the server's
// message.
func TestUnavailableNamesTheFix(t *testing.T) {
	t.Parallel()
	driver := errors.New(`failed to connect to user=slotd database=slotd: 10.0.0.5:6432: server error: ERROR: prepared statement "stmtcache_4f1c" does not exist (SQLSTATE 26000)`)
	err := &session.UnavailableError{Cause: "a prepared statement went missing", Fix: "Set default_query_exec_mode=cache_describe.", Err: driver}
	var logs bytes.Buffer
	st := status.Convert(Status(context.Background(), slog.New(slog.NewJSONHandler(&logs, nil)), fmt.Errorf("engine: %w", err)))
	if st.Code() != codes.Unavailable {
		t.Fatalf("code %v, want %v", st.Code(), codes.Unavailable)
	}
	p := problemIn(t, st.Err())
	if !p.Retryable || !strings.Contains(p.Detail, "a prepared statement went missing") || !strings.Contains(p.Detail, "cache_describe") {
		t.Errorf("problem %v: want a retryable one whose detail names the cause and the fix", p)
	}
	if text := p.Title + p.Detail; strings.Contains(text, "stmtcache") || strings.Contains(text, "10.0.0.5") {
		t.Errorf("the answer leaks the driver's text: %s", text)
	}
	if !strings.Contains(logs.String(), `stmtcache_4f1c\" does not exist`) {
		t.Errorf("the log lacks the server's message: %s", logs.String())
	}
}

// invalidUTF8Field is the field Codec marked, or "".
func invalidUTF8Field(m proto.Message) string {
	field, _ := undecodable(m)
	return field
}
