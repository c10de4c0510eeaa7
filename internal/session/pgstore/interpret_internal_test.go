package pgstore

import (
	"context"
	"errors"
	"fmt"
	"io"
	"net"
	"os"
	"syscall"
	"testing"
	"time"

	"github.com/jackc/pgerrcode"
	"github.com/jackc/pgx/v5/pgconn"

	"github.com/slotd/slotd/internal/session"
)

// want is what interpret makes of a driver's error.
type want int

const (
	wantBusy want = iota
	wantUnavailable
	wantDiagnosed // unavailable, with a named cause and fix
	wantStale
	wantCancelled
	wantDeadline
	wantOther // neither: the gRPC adapter answers internal
)

func (w want) String() string {
	return [...]string{"busy", "unavailable", "diagnosed", "stale version", "cancelled", "deadline", "other"}[w]
}

// got classifies interpret's answer as the layers above it read it.
func got(err error) want {
	var u *session.UnavailableError
	switch {
	case errors.Is(err, context.Canceled):
		return wantCancelled
	case errors.Is(err, context.DeadlineExceeded):
		return wantDeadline
	case errors.Is(err, session.ErrBusy):
		return wantBusy
	case errors.As(err, &u):
		return wantDiagnosed
	case errors.Is(err, session.ErrUnavailable):
		return wantUnavailable
	case errors.Is(err, errStaleVersion):
		return wantStale
	}
	return wantOther
}

// Each driver error is classified by its SQLSTATE or its type, whatever its
// message says: the messages here are the server's own, reworded, or lies.
func TestInterpretBySQLStateAndType(t *testing.T) {
	t.Parallel()
	pg := func(code, msg string) error {
		return fmt.Errorf("pgstore: turn: %w", &pgconn.PgError{Severity: "ERROR", Code: code, Message: msg})
	}
	cancelled, cancel := context.WithCancel(context.Background())
	cancel()
	expired, cancel2 := context.WithTimeout(context.Background(), -time.Second)
	defer cancel2()
	for _, tc := range []struct {
		name string
		err  error
		want want
	}{
		{"serialization failure", pg(pgerrcode.SerializationFailure, "could not serialize access due to concurrent update"), wantBusy},
		{"deadlock", pg(pgerrcode.DeadlockDetected, "deadlock detected"), wantBusy},
		{"unique violation", pg(pgerrcode.UniqueViolation, `duplicate key value violates unique constraint "turns_pkey"`), wantBusy},
		{"lock timeout", pg(pgerrcode.LockNotAvailable, "canceling statement due to lock timeout"), wantBusy},
		{"statement timeout", pg(pgerrcode.QueryCanceled, "canceling statement due to statement timeout"), wantBusy},
		{"busy whatever its words", pg(pgerrcode.SerializationFailure, "connection refused; conn closed"), wantBusy},
		{"admin shutdown", pg(pgerrcode.AdminShutdown, "terminating connection due to administrator command"), wantUnavailable},
		{"crash shutdown", pg(pgerrcode.CrashShutdown, "terminating connection because of crash of another server process"), wantUnavailable},
		{"connection failure", pg(pgerrcode.ConnectionFailure, "server conn crashed?"), wantUnavailable},
		{"too many connections", pg(pgerrcode.TooManyConnections, "sorry, too many clients already"), wantUnavailable},
		{"out of memory", pg(pgerrcode.OutOfMemory, "out of memory"), wantUnavailable},
		{"not migrated", pg(pgerrcode.UndefinedTable, `relation "conversations" does not exist`), wantUnavailable},
		{"starting up", pg(pgerrcode.CannotConnectNow, "the database system is starting up"), wantDiagnosed},
		{"pooler lost a statement", pg(pgerrcode.InvalidSQLStatementName, `prepared statement "stmtcache_1" does not exist`), wantDiagnosed},
		{"a refused setting of the URL", &settingsError{pg(pgerrcode.InvalidParameterValue, `invalid value for parameter "lock_timeout": "soon"`)}, wantDiagnosed},
		{"another invalid value, in the words of a setting", pg(pgerrcode.InvalidParameterValue, `invalid value for parameter "lock_timeout": "soon"`), wantOther},
		{"stale version", fmt.Errorf("upsert: %w", &pgconn.PgError{Code: pgerrcode.CheckViolation, ConstraintName: versionCheck}), wantStale},
		{"another check", fmt.Errorf("upsert: %w", &pgconn.PgError{Code: pgerrcode.CheckViolation, ConstraintName: "sessions_status_check"}), wantOther},
		{"a syntax error that says busy words", pg(pgerrcode.SyntaxError, "deadlock detected: connection reset by peer"), wantOther},

		{"connection closed", fmt.Errorf("begin: %w", pgconn.ErrConnClosed), wantUnavailable},
		{"net closed", fmt.Errorf("read: %w", net.ErrClosed), wantUnavailable},
		{"unexpected EOF", fmt.Errorf("receive message: %w", io.ErrUnexpectedEOF), wantUnavailable},
		{"reset socket", &net.OpError{Op: "read", Net: "tcp", Err: os.NewSyscallError("read", syscall.ECONNRESET)}, wantUnavailable},
		{"text alone is not a lost connection", errors.New("conn closed: unexpected EOF: broken pipe: connection reset: connection refused"), wantOther},

		{"cancelled", fmt.Errorf("pgconn: %w", cancelled.Err()), wantCancelled},
		{"deadline", fmt.Errorf("timeout: %w", expired.Err()), wantDeadline},
		{"passed through", fmt.Errorf("engine: %w", session.ErrNotFound), wantOther},
	} {
		t.Run(tc.name, func(t *testing.T) {
			t.Parallel()
			err := interpret(tc.err)
			if g := got(err); g != tc.want {
				t.Errorf("interpret(%v) = %v: %v, want %v", tc.err, err, g, tc.want)
			}
			if tc.want == wantCancelled || tc.want == wantDeadline {
				if errors.Is(err, session.ErrBusy) || errors.Is(err, session.ErrUnavailable) {
					t.Errorf("a context's error is also busy or unavailable: %v", err)
				}
			}
		})
	}
	if err := interpret(session.ErrNotFound); !errors.Is(err, session.ErrNotFound) {
		t.Errorf("a session error is not passed on: %v", err)
	}
}

// A connection that could not be made, and one whose context ended before
// or while it was made, as pgconn reports them.
func TestInterpretConnectErrors(t *testing.T) {
	t.Parallel()
	l, err := net.Listen("tcp", "127.0.0.1:0")
	if err != nil {
		t.Fatal(err)
	}
	addr := l.Addr().String()
	l.Close() // nothing listens there now: the dial is refused
	url := "postgres://slotd@" + addr + "/slotd?connect_timeout=5"

	_, refused := pgconn.Connect(context.Background(), url)
	var ce *pgconn.ConnectError
	if !errors.As(refused, &ce) {
		t.Fatalf("connect to a closed port: %v, want a *pgconn.ConnectError", refused)
	}
	if g := got(interpret(refused)); g != wantUnavailable {
		t.Errorf("a refused connection (%v) is %v, want unavailable", refused, g)
	}

	ctx, cancel := context.WithCancel(context.Background())
	cancel()
	_, gaveUp := pgconn.Connect(ctx, url)
	if g := got(interpret(gaveUp)); g != wantCancelled {
		t.Errorf("a connection its caller gave up on (%v) is %v, want cancelled", gaveUp, g)
	}

	// A server that takes the connection and never answers: the deadline
	// passes while pgconn waits for it.
	hang, err := net.Listen("tcp", "127.0.0.1:0")
	if err != nil {
		t.Fatal(err)
	}
	defer hang.Close()
	go func() {
		for {
			c, err := hang.Accept()
			if err != nil {
				return
			}
			defer c.Close()
		}
	}()
	dctx, dcancel := context.WithTimeout(context.Background(), 100*time.Millisecond)
	defer dcancel()
	_, late := pgconn.Connect(dctx, "postgres://slotd@"+hang.Addr().String()+"/slotd?sslmode=disable")
	if late == nil {
		t.Fatal("a connection to a silent server succeeded")
	}
	if g := got(interpret(late)); g != wantDeadline {
		t.Errorf("a connection whose deadline passed (%v) is %v, want deadline", late, g)
	}
}
