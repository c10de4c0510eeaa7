package pgstore

import (
	"errors"
	"fmt"
	"regexp"

	"github.com/jackc/pgerrcode"
	"github.com/jackc/pgx/v5/pgconn"

	"github.com/slotd/slotd/internal/session"
)

// execModeFix is what a pooler's lost or doubled prepared statements call for.
const execModeFix = "Behind a transaction-mode pooler set default_query_exec_mode=cache_describe " +
	"(or exec, or simple_protocol) in SLOTD_DATABASE_URL; see docs/scaling.md, \"Behind a connection pooler\"."

// Diagnose names the cause of a database error that a setting of the
// database, or of a connection pooler in front of it, explains, and what an
// operator should change; nil for any other error. Each is retryable: the
// transaction it broke was rolled back, and another connection or host may
// not have the fault.
func Diagnose(err error) *session.UnavailableError {
	var pgErr *pgconn.PgError
	if !errors.As(err, &pgErr) {
		return nil
	}
	u := &session.UnavailableError{Err: err}
	switch pgErr.Code {
	case pgerrcode.DuplicatePreparedStatement, pgerrcode.InvalidSQLStatementName:
		u.Cause = "a prepared statement slotd made on one server connection was missing or already there on another: " +
			"a connection pooler in transaction mode gives each transaction whichever server connection is free"
		u.Fix = execModeFix
	case pgerrcode.ProtocolViolation:
		name, ok := refusedParameter(pgErr.Message)
		if !ok {
			return nil
		}
		u.Cause = "the connection pooler refused the startup parameter " + name + " of SLOTD_DATABASE_URL"
		u.Fix = "Remove " + name + " from SLOTD_DATABASE_URL (slotd sets lock_timeout, statement_timeout and " +
			"idle_in_transaction_session_timeout in each transaction, pooler or not), or add it to the pooler's ignore_startup_parameters."
	case pgerrcode.InvalidCatalogName:
		u.Cause = "the database named in SLOTD_DATABASE_URL does not exist on a server it lists, or the pooler has no entry for it"
		u.Fix = "Create the database, correct the URL, or add the database to the pooler's [databases] section."
	case pgerrcode.CannotConnectNow:
		u.Cause = "a server of SLOTD_DATABASE_URL is starting up, shutting down or in recovery"
		u.Fix = "Retry; with several hosts, add target_session_attrs=primary to SLOTD_DATABASE_URL so that a standby is skipped."
	case pgerrcode.InvalidParameterValue:
		if !errors.As(err, new(*settingsError)) {
			return nil
		}
		u.Cause = "Postgres refused the value of a setting slotd sets in each transaction"
		u.Fix = "Correct lock_timeout, statement_timeout or idle_in_transaction_session_timeout in SLOTD_DATABASE_URL (e.g. 3s)."
	case pgerrcode.IdleInTransactionSessionTimeout:
		u.Cause = "the server ended a transaction that idled longer than idle_in_transaction_session_timeout"
		u.Fix = "Raise idle_in_transaction_session_timeout in SLOTD_DATABASE_URL, or find what stalls slotd between a turn's two round trips."
	case pgerrcode.IdleSessionTimeout:
		u.Cause = "the server closed a connection that idled longer than its idle_session_timeout"
		u.Fix = "Set idle_session_timeout to 0 for slotd's role, or above the pool's pool_max_conn_idle_time."
	default:
		return nil
	}
	return u
}

// refusedParameter reads the name of the parameter out of PgBouncer's
// "unsupported startup parameter: NAME" (a FATAL with SQLSTATE 08P01); a
// name that is not a plain identifier is not repeated. The message is the
// only place PgBouncer puts the name; the error is unavailable by its
// SQLSTATE's class whether or not the message reads so, and only the fix
// named depends on it.
func refusedParameter(msg string) (string, bool) {
	m := refusedParameterRE.FindStringSubmatch(msg)
	if m == nil {
		return "", false
	}
	if !identRE.MatchString(m[1]) {
		return "(a parameter)", true
	}
	return m[1], true
}

var (
	refusedParameterRE = regexp.MustCompile(`unsupported startup parameter:?\s*(\S*)`)
	identRE            = regexp.MustCompile(`^[A-Za-z_][A-Za-z0-9_.]{0,62}$`)
)

// Describe is an error of the store as an operator's log line may show it:
// for a server's error, its own message and SQLSTATE, and the cause and fix
// when Diagnose names them. Neither carries the URL or its password.
func Describe(err error) string {
	var pgErr *pgconn.PgError
	if !errors.As(err, &pgErr) {
		return err.Error()
	}
	text := fmt.Sprintf("postgres: %s: %s (SQLSTATE %s)", pgErr.Severity, pgErr.Message, pgErr.Code)
	if u := Diagnose(err); u != nil {
		text += "; " + u.Cause + ". " + u.Fix
	}
	return text
}
