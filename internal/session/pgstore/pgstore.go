// Package pgstore keeps sessions in Postgres through a pgx pool. A turn is
// one short transaction: lock the conversation's row, answer a known turn_id
// from the stored response, read the active session, write the new state,
// the turn and its slot changes. Driver errors are translated here and never
// leave the package.
package pgstore

import (
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"io"
	"net"
	"syscall"
	"time"

	"github.com/jackc/pgerrcode"
	"github.com/jackc/pgx/v5"
	"github.com/jackc/pgx/v5/pgconn"
	"github.com/jackc/pgx/v5/pgxpool"

	"github.com/slotd/slotd/internal/merge"
	"github.com/slotd/slotd/internal/session"
	"github.com/slotd/slotd/migrations"
)

// Store is a Postgres session.Store.
type Store struct {
	pool *pgxpool.Pool
}

var _ session.Store = (*Store)(nil)

// New wraps a pool whose database is migrated (see migrations.Up) and
// whose config went through Configure.
func New(pool *pgxpool.Pool) *Store { return &Store{pool: pool} }

// Configure readies a pool's config for the store. It hears the warnings
// Postgres sends, so that a COMMIT answered with one is not taken as
// durable (see inTx); without it the store still works, but a commit whose
// wait for a synchronous standby was cancelled reads as a success.
//
// It also moves the session's timeouts (TxSettings) from the connection's
// startup parameters, where the URL puts them, into each transaction: the
// store sets them with SET LOCAL in the transaction's first batch, which
// costs no round trip. A transaction-mode pooler refuses startup parameters
// it does not know, or, told to ignore them, drops them silently; a setting
// that lives as long as the transaction goes wherever the transaction goes.
func Configure(cfg *pgxpool.Config) {
	var names, values []string
	for _, name := range TxSettings {
		if v, ok := cfg.ConnConfig.RuntimeParams[name]; ok {
			names, values = append(names, name), append(values, v)
			delete(cfg.ConnConfig.RuntimeParams, name)
		}
	}
	if len(names) > 0 {
		after := cfg.AfterConnect
		cfg.AfterConnect = func(ctx context.Context, c *pgx.Conn) error {
			c.PgConn().CustomData()[settingsKey] = txSettings{names, values}
			if after != nil {
				return after(ctx, c)
			}
			return nil
		}
	}
	next := cfg.ConnConfig.OnNotice
	cfg.ConnConfig.OnNotice = func(c *pgconn.PgConn, n *pgconn.Notice) {
		if n.SeverityUnlocalized == "WARNING" {
			c.CustomData()[warningKey] = n.Code
		}
		if next != nil {
			next(c, n)
		}
	}
}

// TxSettings are the settings Configure moves from a connection's startup
// into each of the store's transactions.
var TxSettings = []string{"lock_timeout", "statement_timeout", "idle_in_transaction_session_timeout"}

// settingsKey holds, in a connection's CustomData, the txSettings that
// Configure took from the URL.
const settingsKey = "slotd.pgstore.settings"

// txSettings are settings and their values, in the order of TxSettings.
type txSettings struct{ names, values []string }

// setLocal sets settings for the rest of the transaction (set_config's
// true): one statement, its values passed as parameters.
const setLocal = `SELECT set_config(name, value, true) FROM unnest($1::text[], $2::text[]) AS s(name, value)`

// Settings are the settings, by name, that each of the store's
// transactions on c begins with.
func Settings(c *pgx.Conn) map[string]string {
	out := map[string]string{}
	if set, ok := c.PgConn().CustomData()[settingsKey].(txSettings); ok {
		for i, name := range set.names {
			out[name] = set.values[i]
		}
	}
	return out
}

// queueSettings queues the statement that sets the settings of c, if it
// has any, and reports whether it did.
func queueSettings(b *pgx.Batch, c *pgx.Conn) bool {
	set, ok := c.PgConn().CustomData()[settingsKey].(txSettings)
	if ok {
		b.Queue(setLocal, set.names, set.values)
	}
	return ok
}

// settingsError is an error of the statement that sets a transaction's
// settings (TxSettings): what Diagnose needs to tell a value Postgres
// refused for one of them from another invalid parameter value.
type settingsError struct{ err error }

func (e *settingsError) Error() string { return "pgstore: transaction settings: " + e.err.Error() }
func (e *settingsError) Unwrap() error { return e.err }

// warningKey marks, in a connection's CustomData, a warning that came
// since inTx last cleared it.
const warningKey = "slotd.pgstore.warning"

// errNotReplicated is a COMMIT that Postgres answered with a warning: the
// one it sends when a wait for synchronous replication is cancelled ("The
// transaction has already committed locally, but might not have been
// replicated to the standby"). The unit of work may be lost if the primary
// fails now, so it is not acknowledged; a retry with the same turn_id is
// answered from what was stored, once Postgres can say it is replicated.
var errNotReplicated = fmt.Errorf("%w: the commit is not known to be replicated", session.ErrUnavailable)

// inTx runs fn in one read-committed transaction on a connection held
// until the COMMIT's warnings have been read.
func (st *Store) inTx(ctx context.Context, fn func(tx pgx.Tx) error) error {
	conn, err := st.pool.Acquire(ctx)
	if err != nil {
		return err
	}
	defer conn.Release()
	data := conn.Conn().PgConn().CustomData()
	err = pgx.BeginTxFunc(ctx, conn, readCommitted, func(tx pgx.Tx) error {
		b := &pgx.Batch{}
		if queueSettings(b, conn.Conn()) {
			if err := tx.SendBatch(ctx, b).Close(); err != nil {
				return &settingsError{err}
			}
		}
		err := fn(tx)
		// Only what the COMMIT itself says counts.
		delete(data, warningKey)
		return err
	})
	if _, warned := data[warningKey]; warned {
		delete(data, warningKey)
		if err == nil {
			return errNotReplicated
		}
	}
	return err
}

// inBatches runs one read-committed unit of work in two round trips, the
// fewest a read, a decision in Go and a write can take: BEGIN and the
// transaction's settings ride in first, whose answers (after theirs) read
// takes; plan then returns the writes, sent in one batch that ends with
// COMMIT. A nil batch from plan commits alone. As in inTx, a warning
// answered to the COMMIT's batch means the commit is not known to be
// replicated.
func (st *Store) inBatches(ctx context.Context, first *pgx.Batch, read func(pgx.BatchResults) error, plan func() (*pgx.Batch, error)) error {
	conn, err := st.pool.Acquire(ctx)
	if err != nil {
		return err
	}
	defer conn.Release()
	data := conn.Conn().PgConn().CustomData()
	b := &pgx.Batch{}
	b.BeginTx(readCommitted)
	preamble := 1
	if queueSettings(b, conn.Conn()) {
		preamble++
	}
	b.QueuedQueries = append(b.QueuedQueries, first.QueuedQueries...)
	br := conn.SendBatch(ctx, b)
	tx := br.Tx()
	for i := range preamble {
		if _, err = br.Exec(); err != nil {
			if i == 1 {
				err = &settingsError{err}
			}
			break
		}
	}
	if err == nil {
		err = read(br)
	}
	if cerr := br.Close(); err == nil {
		err = cerr
	}
	var last *pgx.Batch
	if err == nil {
		last, err = plan()
	}
	if err != nil {
		_ = tx.Rollback(ctx)
		delete(data, warningKey)
		return err
	}
	// Only what the COMMIT's batch says counts.
	delete(data, warningKey)
	if last == nil {
		err = tx.Commit(ctx)
	} else {
		err = commitBatch(ctx, tx, last)
	}
	if _, warned := data[warningKey]; warned {
		delete(data, warningKey)
		if err == nil {
			return errNotReplicated
		}
	}
	return err
}

// commitBatch sends b with a COMMIT queued last, and rolls back when a
// statement failed. pgx's Tx is not told of the COMMIT: once it succeeded
// the transaction is over and the connection idle, and the Tx is dropped.
func commitBatch(ctx context.Context, tx pgx.Tx, b *pgx.Batch) error {
	b.Queue("COMMIT")
	br := tx.SendBatch(ctx, b)
	var err error
	for range b.Len() {
		var tag pgconn.CommandTag
		if tag, err = br.Exec(); err != nil {
			break
		}
		if tag.String() == "ROLLBACK" {
			err = pgx.ErrTxCommitRollback
		}
	}
	if cerr := br.Close(); err == nil {
		err = cerr
	}
	if err != nil {
		_ = tx.Rollback(ctx)
	}
	return err
}

const sessionColumns = `s.id, s.tenant, s.conversation_id, s.tool, s.status, s.version, s.state,
	s.last_action, s.approved_key, s.locale, s.time_zone, s.created_at, s.updated_at, s.ended_at, s.open, s.contract_version`

const (
	// ensureConversation makes sure the row to lock exists; a concurrent
	// first turn waits here for the other's insert to commit.
	ensureConversation = `INSERT INTO conversations (tenant, conversation_id) VALUES ($1, $2)
		ON CONFLICT (tenant, conversation_id) DO NOTHING`
	lockConversation = `SELECT 1 FROM conversations
		WHERE tenant = $1 AND conversation_id = $2 FOR UPDATE`
	selectTurnResponse = `SELECT response, tool, request FROM turns
		WHERE tenant = $1 AND conversation_id = $2 AND turn_id = $3`
	// selectOpen reads the conversation's open sessions through the partial
	// index sessions_open: a few rows, whatever the table holds.
	selectOpen = `SELECT ` + sessionColumns + ` FROM sessions s
		WHERE s.tenant = $1 AND s.conversation_id = $2 AND s.open`
	// selectLeft reads the use of the session that left the open set last
	// (by updated_at, when it ended), through the primary key's
	// conversation prefix: the state of that one row is read, not of every
	// ended session of the conversation.
	selectLeft = `SELECT tool, coalesce((state->>'last_use')::timestamptz, updated_at),
			(state->>'previous_use')::timestamptz FROM sessions s
		WHERE s.tenant = $1 AND s.conversation_id = $2 AND s.id = (
			SELECT l.id FROM sessions l WHERE l.tenant = $1 AND l.conversation_id = $2 AND NOT l.open
			ORDER BY l.updated_at DESC, l.id DESC LIMIT 1)`
	selectOpenOfTool = `SELECT ` + sessionColumns + ` FROM sessions s
		WHERE s.tenant = $1 AND s.conversation_id = $2 AND s.open AND s.tool = $3 AND s.status = 'active'`
	selectRecentOpen = `SELECT ` + sessionColumns + ` FROM sessions s
		WHERE s.tenant = $1 AND s.conversation_id = $2 AND s.open AND s.status = 'active'
		ORDER BY s.updated_at DESC, s.id DESC LIMIT 1`
	selectLatest = `SELECT ` + sessionColumns + ` FROM sessions s
		WHERE s.tenant = $1 AND s.conversation_id = $2 ORDER BY s.id DESC LIMIT 1`
	selectByID = `SELECT ` + sessionColumns + ` FROM sessions s
		WHERE s.id = $1 AND s.tenant = $2 AND ($3 = '' OR s.conversation_id = $3)`
	upsertSession = `INSERT INTO sessions (id, tenant, conversation_id, tool, status, version, state,
			last_action, approved_key, locale, time_zone, created_at, updated_at, ended_at, open, contract_version)
		VALUES ($1, $2, $3, $4, $5, $6, $7, $8, $9, $10, $11, $12, $13, $14, $15, $16)
		ON CONFLICT (tenant, conversation_id, id) DO UPDATE SET status = EXCLUDED.status,
			version = CASE WHEN sessions.version = EXCLUDED.version - 1 THEN EXCLUDED.version ELSE -1 END,
			state = EXCLUDED.state, last_action = EXCLUDED.last_action,
			approved_key = EXCLUDED.approved_key, locale = EXCLUDED.locale,
			time_zone = EXCLUDED.time_zone, updated_at = EXCLUDED.updated_at, ended_at = EXCLUDED.ended_at,
			open = EXCLUDED.open, contract_version = EXCLUDED.contract_version`
	insertTurn = `INSERT INTO turns (tenant, conversation_id, turn_id, session_id, tool, version, action, request, response, created_at, contract_version)
		VALUES ($1, $2, $3, $4, $5, $6, $7, $8, $9, $10, $11)`
	insertChange = `INSERT INTO slot_changes (tenant, conversation_id, session_id, version, ord, turn_id, slot, old_value, new_value, decision, created_at, note)
		VALUES ($1, $2, $3, $4, $5, $6, $7, $8, $9, $10, $11, $12)`
	selectTurns = `SELECT turn_id, session_id, version, action, request, response, created_at, contract_version, replays, replayed_at
		FROM turns WHERE tenant = $1 AND conversation_id = $2 AND session_id = $3 ORDER BY version`
	selectChanges = `SELECT session_id, version, coalesce(turn_id, ''), slot, old_value, new_value, decision, created_at, coalesce(note, '')
		FROM slot_changes WHERE tenant = $1 AND conversation_id = $2 AND session_id = $3 ORDER BY version, ord`
)

// Turn implements session.Store. It takes two round trips: BEGIN,
// create-if-absent, lock, idempotency check and read in one; the writes and
// COMMIT in the other.
func (st *Store) Turn(ctx context.Context, key session.Key, turnID string, fn session.TurnFunc) (session.Applied, error) {
	for attempt := 0; ; attempt++ {
		applied, err := st.turn(ctx, key, turnID, fn)
		// The janitor (or an erasure) deleted the conversation's row
		// between the insert that found it and the lock, which then locked
		// nothing: begin again, and the insert makes the row anew.
		if errors.Is(err, errConversationGone) && attempt < 3 {
			continue
		}
		if err != nil {
			return session.Applied{}, interpret(err)
		}
		return applied, nil
	}
}

// turn is one attempt of Turn.
func (st *Store) turn(ctx context.Context, key session.Key, turnID string, fn session.TurnFunc) (session.Applied, error) {
	var applied session.Applied
	var cv session.Conversation
	b := &pgx.Batch{}
	b.Queue(ensureConversation, key.Tenant, key.ConversationID)
	b.Queue(lockConversation, key.Tenant, key.ConversationID)
	b.Queue(selectTurnResponse, key.Tenant, key.ConversationID, turnID)
	b.Queue(selectOpen, key.Tenant, key.ConversationID)
	b.Queue(selectLeft, key.Tenant, key.ConversationID)
	err := st.inBatches(ctx, b, func(br pgx.BatchResults) (err error) {
		cv, err = readTurn(br, &applied)
		return err
	}, func() (*pgx.Batch, error) {
		if applied.Replayed {
			return replayBatch(key, turnID), nil
		}
		var err error
		if applied.Commit, err = fn(cv); err != nil {
			return nil, err
		}
		if t := applied.Commit.Turn; t != nil {
			applied.Response = t.Response
		}
		return writeBatch(key, applied.Commit)
	})
	return applied, err
}

// readTurn reads the answers of a turn's first batch: the stored response
// of a turn_id seen before, else the conversation as the turn reads it.
func readTurn(br pgx.BatchResults, applied *session.Applied) (session.Conversation, error) {
	var cv session.Conversation
	if _, err := br.Exec(); err != nil {
		return cv, err
	}
	tag, err := br.Exec()
	if err != nil {
		return cv, err
	}
	if tag.RowsAffected() != 1 {
		return cv, errConversationGone
	}
	err = br.QueryRow().Scan(&applied.Response, &applied.Tool, &applied.Request)
	switch {
	case err == nil:
		applied.Replayed = true
		return cv, nil
	case !errors.Is(err, pgx.ErrNoRows):
		return cv, err
	}
	rows, err := br.Query()
	if err != nil {
		return cv, err
	}
	if cv.Open, err = scanSessions(rows); err != nil {
		return cv, err
	}
	var previous *time.Time
	err = br.QueryRow().Scan(&cv.Left.Tool, &cv.Left.At, &previous)
	if previous != nil {
		cv.Left.Previous = *previous
	}
	if errors.Is(err, pgx.ErrNoRows) {
		err = nil
	}
	return cv, err
}

// write sends a commit's statements in one batch.
func write(ctx context.Context, tx pgx.Tx, key session.Key, c *session.Commit) error {
	b, err := writeBatch(key, c)
	if err != nil {
		return err
	}
	return tx.SendBatch(ctx, b).Close()
}

// writeBatch is a batch of a commit's statements. Every write advances a
// session's version by exactly one: an upsert that would not sets it to -1,
// which the table's check refuses, so that the COMMIT sent after it in the
// same batch never runs. Holding the conversation's lock, it never should.
func writeBatch(key session.Key, c *session.Commit) (*pgx.Batch, error) {
	b := &pgx.Batch{}
	for _, s := range append(append([]*session.Session{}, c.Ended...), c.Session) {
		if s == nil {
			continue
		}
		state, err := json.Marshal(stateDoc{State: s.State, Held: s.Held, Completion: s.Completion, CompletedKey: s.CompletedKey, Marks: s.Marks, Attempts: s.Attempts, LastUse: s.LastUse, PreviousUse: s.PreviousUse})
		if err != nil {
			return nil, err
		}
		b.Queue(upsertSession, s.ID, s.Key.Tenant, s.Key.ConversationID, s.Tool, string(s.Status), s.Version,
			string(state), s.LastAction, s.ApprovedKey, s.Locale, s.TimeZone, s.CreatedAt, s.UpdatedAt, nullTime(s.EndedAt), s.Open, s.ContractVersion)
	}
	if t := c.Turn; t != nil {
		tool := ""
		if c.Session != nil {
			tool = c.Session.Tool
		}
		b.Queue(insertTurn, key.Tenant, key.ConversationID, t.ID, t.SessionID, tool, t.Version, t.Action,
			string(t.Request), string(t.Response), t.At, t.ContractVersion)
	}
	// ords number the changes of each session version.
	type version struct {
		session string
		version int64
	}
	ords := map[version]int{}
	for _, ch := range c.Changes {
		old, err := jsonValue(ch.Old)
		if err != nil {
			return nil, err
		}
		nu, err := jsonValue(ch.New)
		if err != nil {
			return nil, err
		}
		k := version{ch.SessionID, ch.Version}
		ord := ords[k]
		ords[k] = ord + 1
		var turnID *string
		if ch.TurnID != "" {
			turnID = &ch.TurnID
		}
		var note *string
		if ch.Note != "" {
			note = &ch.Note
		}
		b.Queue(insertChange, key.Tenant, key.ConversationID, ch.SessionID, ch.Version, ord, turnID, ch.Slot, old, nu, string(ch.Decision), ch.At, note)
	}
	return b, nil
}

// readCommitted pins the isolation every unit of work relies on: each
// statement after the conversation's lock sees what committed before it,
// whatever the database's default.
var readCommitted = pgx.TxOptions{IsoLevel: pgx.ReadCommitted}

var errStaleVersion = errors.New("pgstore: session version did not advance")

// versionCheck is the check on sessions.version that a stale upsert breaks.
const versionCheck = "sessions_version_check"

// errConversationGone: a turn's lock found no conversation row, which a
// purge or an erasure deleted after the turn's insert had found it.
var errConversationGone = fmt.Errorf("%w: the conversation's row went while a turn locked it", session.ErrBusy)

// Update implements session.Store.
func (st *Store) Update(ctx context.Context, l session.Lookup, fn func(s *session.Session) (*session.Commit, error)) (*session.Commit, error) {
	s, err := st.Session(ctx, l)
	if err != nil {
		return nil, err
	}
	// Read again under the lock: a turn may have moved on, even to a new
	// session of the tool.
	l.Tenant, l.ConversationID = s.Key.Tenant, s.Key.ConversationID
	if l.SessionID == "" && !l.Latest {
		l.Tool = s.Tool
	}
	var commit *session.Commit
	var cur *session.Session
	b := &pgx.Batch{}
	b.Queue(lockConversation, s.Key.Tenant, s.Key.ConversationID)
	q, args := lookupQuery(l)
	b.Queue(q, args...)
	err = st.inBatches(ctx, b, func(br pgx.BatchResults) error {
		if _, err := br.Exec(); err != nil { // the lock
			return err
		}
		var err error
		cur, err = scanSession(br.QueryRow())
		return err
	}, func() (*pgx.Batch, error) {
		var err error
		if commit, err = fn(cur); err != nil {
			return nil, err
		}
		return writeBatch(s.Key, commit)
	})
	if err != nil {
		return nil, interpret(err)
	}
	return commit, nil
}

// UpdateOpen implements session.Store.
func (st *Store) UpdateOpen(ctx context.Context, key session.Key, fn session.OpenFunc) (*session.Commit, error) {
	var commit *session.Commit
	var open []*session.Session
	b := &pgx.Batch{}
	b.Queue(lockConversation, key.Tenant, key.ConversationID)
	b.Queue(selectOpen, key.Tenant, key.ConversationID)
	err := st.inBatches(ctx, b, func(br pgx.BatchResults) error {
		tag, err := br.Exec()
		if err != nil {
			return err
		}
		if tag.RowsAffected() == 0 {
			return session.ErrNotFound
		}
		rows, err := br.Query()
		if err != nil {
			return err
		}
		if open, err = scanSessions(rows); err != nil {
			return err
		}
		if len(open) == 0 {
			return session.ErrNotFound
		}
		return nil
	}, func() (*pgx.Batch, error) {
		var err error
		if commit, err = fn(open); err != nil {
			return nil, err
		}
		return writeBatch(key, commit)
	})
	if err != nil {
		return nil, interpret(err)
	}
	return commit, nil
}

// querier is a pool or a transaction.
type querier interface {
	QueryRow(ctx context.Context, sql string, args ...any) pgx.Row
}

// lookupRow queries the session a lookup finds.
func lookupRow(ctx context.Context, q querier, l session.Lookup) pgx.Row {
	sql, args := lookupQuery(l)
	return q.QueryRow(ctx, sql, args...)
}

// lookupQuery is the statement that finds a lookup's session.
func lookupQuery(l session.Lookup) (string, []any) {
	switch {
	case l.SessionID != "":
		return selectByID, []any{l.SessionID, l.Tenant, l.ConversationID}
	case l.Latest:
		return selectLatest, []any{l.Tenant, l.ConversationID}
	case l.Tool != "":
		return selectOpenOfTool, []any{l.Tenant, l.ConversationID, l.Tool}
	}
	return selectRecentOpen, []any{l.Tenant, l.ConversationID}
}

// Session implements session.Store.
func (st *Store) Session(ctx context.Context, l session.Lookup) (*session.Session, error) {
	s, err := scanSession(lookupRow(ctx, st.pool, l))
	return s, interpret(err)
}

// History implements session.Store.
func (st *Store) History(ctx context.Context, l session.Lookup) (*session.History, error) {
	s, err := st.Session(ctx, l)
	if err != nil {
		return nil, err
	}
	h := &session.History{}
	rows, err := st.pool.Query(ctx, selectTurns, s.Key.Tenant, s.Key.ConversationID, s.ID)
	if err != nil {
		return nil, interpret(err)
	}
	for rows.Next() {
		var t session.TurnRecord
		if err := rows.Scan(&t.ID, &t.SessionID, &t.Version, &t.Action, &t.Request, &t.Response, &t.At, &t.ContractVersion, &t.Replays, &t.ReplayedAt); err != nil {
			rows.Close()
			return nil, interpret(err)
		}
		h.Turns = append(h.Turns, t)
	}
	if err := rows.Err(); err != nil {
		return nil, interpret(err)
	}
	rows, err = st.pool.Query(ctx, selectChanges, s.Key.Tenant, s.Key.ConversationID, s.ID)
	if err != nil {
		return nil, interpret(err)
	}
	defer rows.Close()
	for rows.Next() {
		var ch session.ChangeRecord
		var old, nu []byte
		var decision string
		if err := rows.Scan(&ch.SessionID, &ch.Version, &ch.TurnID, &ch.Slot, &old, &nu, &decision, &ch.At, &ch.Note); err != nil {
			return nil, interpret(err)
		}
		ch.Decision = merge.Decision(decision)
		if ch.Old, err = fromJSON(old); err != nil {
			return nil, err
		}
		if ch.New, err = fromJSON(nu); err != nil {
			return nil, err
		}
		h.Changes = append(h.Changes, ch)
	}
	return h, interpret(rows.Err())
}

// Ready implements session.Store: the database answers and its schema is
// at the version this build needs.
func (st *Store) Ready(ctx context.Context) error {
	v, err := migrations.Current(ctx, st.pool)
	if err != nil {
		return interpret(err)
	}
	if want := migrations.Latest(); v < want {
		return fmt.Errorf("%w: schema at version %d, need %d", session.ErrUnavailable, v, want)
	}
	return nil
}

func scanSessions(rows pgx.Rows) ([]*session.Session, error) {
	return pgx.CollectRows(rows, func(r pgx.CollectableRow) (*session.Session, error) { return scanSession(r) })
}

func scanSession(row pgx.Row) (*session.Session, error) {
	var s session.Session
	var status string
	var state []byte
	var ended *time.Time
	err := row.Scan(&s.ID, &s.Key.Tenant, &s.Key.ConversationID, &s.Tool, &status, &s.Version, &state,
		&s.LastAction, &s.ApprovedKey, &s.Locale, &s.TimeZone, &s.CreatedAt, &s.UpdatedAt, &ended, &s.Open, &s.ContractVersion)
	if errors.Is(err, pgx.ErrNoRows) {
		return nil, session.ErrNotFound
	}
	if err != nil {
		return nil, err
	}
	s.Status = session.Status(status)
	if ended != nil {
		s.EndedAt = ended.UTC()
	}
	var doc stateDoc
	if err := json.Unmarshal(state, &doc); err != nil {
		return nil, fmt.Errorf("pgstore: session %s state: %w", s.ID, err)
	}
	s.State, s.Held, s.Completion, s.CompletedKey = doc.State, doc.Held, doc.Completion, doc.CompletedKey
	s.Marks, s.Attempts, s.LastUse, s.PreviousUse = doc.Marks, doc.Attempts, doc.LastUse, doc.PreviousUse
	if s.State.Slots == nil {
		s.State.Slots = map[string]any{}
	}
	s.CreatedAt, s.UpdatedAt = s.CreatedAt.UTC(), s.UpdatedAt.UTC()
	return &s, nil
}

// stateDoc is the sessions.state column: the slots, the pending changes, the
// arguments held while a resume question waits, and the session's marks.
type stateDoc struct {
	merge.State
	Held         map[string]any  `json:"held,omitempty"`
	Attempts     map[string]int  `json:"attempts,omitempty"`
	Completion   json.RawMessage `json:"completion,omitempty"`
	CompletedKey string          `json:"completed_key,omitempty"`
	Marks        session.Marks   `json:"marks,omitzero"`
	LastUse      time.Time       `json:"last_use,omitzero"`
	PreviousUse  time.Time       `json:"previous_use,omitzero"`
}

// jsonValue is v as JSON text, nil for nil. JSON goes to Postgres as a
// string, never as []byte, which the exec and simple_protocol modes send
// as bytea.
func jsonValue(v any) (*string, error) {
	if v == nil {
		return nil, nil
	}
	b, err := json.Marshal(v)
	if err != nil {
		return nil, err
	}
	s := string(b)
	return &s, nil
}

func fromJSON(b []byte) (any, error) {
	if b == nil {
		return nil, nil
	}
	var v any
	if err := json.Unmarshal(b, &v); err != nil {
		return nil, fmt.Errorf("pgstore: history value: %w", err)
	}
	return v, nil
}

func nullTime(t time.Time) *time.Time {
	if t.IsZero() {
		return nil
	}
	return &t
}

// interpret translates driver errors into session errors, by SQLSTATE and
// by the driver's error types, never by their text. A cancelled or expired
// context stays the context's error, which the gRPC adapter answers as a
// cancelled call or a passed deadline. Whatever it does not recognise is
// wrapped without its text reaching a client: the gRPC adapter answers
// INTERNAL and logs it.
func interpret(err error) error {
	if err == nil {
		return nil
	}
	if errors.Is(err, session.ErrNotFound) || errors.Is(err, session.ErrNotActive) ||
		errors.Is(err, session.ErrBusy) || errors.Is(err, session.ErrUnavailable) {
		return err
	}
	if u := Diagnose(err); u != nil {
		return u
	}
	var pgErr *pgconn.PgError
	if errors.As(err, &pgErr) {
		switch {
		case busyCodes[pgErr.Code]:
			return fmt.Errorf("%w (SQLSTATE %s)", session.ErrBusy, pgErr.Code)
		case pgerrcode.IsConnectionException(pgErr.Code), pgerrcode.IsInsufficientResources(pgErr.Code), shutdownCodes[pgErr.Code]:
			return fmt.Errorf("%w (SQLSTATE %s)", session.ErrUnavailable, pgErr.Code)
		case pgErr.Code == pgerrcode.CheckViolation && pgErr.ConstraintName == versionCheck:
			return fmt.Errorf("%w (%s)", errStaleVersion, pgErr.ConstraintName)
		case pgErr.Code == pgerrcode.UndefinedTable:
			// The database is not migrated.
			return fmt.Errorf("%w: schema missing", session.ErrUnavailable)
		}
		return fmt.Errorf("pgstore: %w", err)
	}
	if errors.Is(err, context.DeadlineExceeded) || errors.Is(err, context.Canceled) {
		return fmt.Errorf("pgstore: %w", err)
	}
	if pgconn.SafeToRetry(err) || pgconn.Timeout(err) || isConnError(err) {
		return fmt.Errorf("%w: %w", session.ErrUnavailable, err)
	}
	return fmt.Errorf("pgstore: %w", err)
}

// busyCodes are the SQLSTATEs of a transaction that lost a race for a
// conversation or waited too long for it: retrying the turn is safe. A
// unique violation is a concurrent transaction that wrote the same row
// first; the retry reads what it wrote.
var busyCodes = map[string]bool{
	pgerrcode.LockNotAvailable:     true, // lock_timeout
	pgerrcode.QueryCanceled:        true, // statement_timeout
	pgerrcode.SerializationFailure: true,
	pgerrcode.DeadlockDetected:     true,
	pgerrcode.UniqueViolation:      true,
}

// shutdownCodes are the SQLSTATEs of a server that ended the connection:
// an administrator's or a crash's shutdown, or a server not taking
// connections yet. Another connection or host may answer.
var shutdownCodes = map[string]bool{
	pgerrcode.AdminShutdown:    true,
	pgerrcode.CrashShutdown:    true,
	pgerrcode.CannotConnectNow: true,
}

// isConnError reports an error of the connection rather than of the
// statement: one that could not be made, or was lost mid-transaction (the
// server went away, the socket was reset or closed).
func isConnError(err error) bool {
	var ce *pgconn.ConnectError
	if errors.As(err, &ce) {
		return true
	}
	var ne net.Error
	if errors.As(err, &ne) {
		return true
	}
	for _, target := range connErrors {
		if errors.Is(err, target) {
			return true
		}
	}
	return false
}

// connErrors are the errors of a connection lost under a statement.
var connErrors = []error{
	pgconn.ErrConnClosed, net.ErrClosed, io.EOF, io.ErrUnexpectedEOF,
	syscall.ECONNRESET, syscall.ECONNREFUSED, syscall.ECONNABORTED, syscall.EPIPE,
}
