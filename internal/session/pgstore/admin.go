package pgstore

import (
	"context"
	"errors"
	"strings"

	"github.com/jackc/pgx/v5"

	"github.com/slotd/slotd/internal/session"
)

// The filters are one statement each with optional parameters, so that no
// SQL is assembled from strings.
const (
	listSessions = `SELECT ` + sessionColumns + ` FROM sessions s
		WHERE ($1 OR s.tenant = $2)
		  AND ($3 = '' OR s.status = $3)
		  AND ($4 = '' OR s.tool = $4)
		  AND ($5::timestamptz IS NULL OR s.updated_at < $5)
		  AND ($6::timestamptz IS NULL OR s.ended_at < $6)
		  AND ($7::uuid IS NULL OR s.id > $7)
		  AND ($9 = '' OR s.conversation_id LIKE ($9 || '%') ESCAPE '\')
		ORDER BY s.id LIMIT $8`

	// lockIdleSessions locks the conversations of matching active
	// sessions, oldest first, skipping those a turn holds right now. It
	// walks the partial index sessions_active_created: updated_at has no
	// index, so that a turn's update of its session writes none (see
	// migration 003). The oldest active sessions are the likely idle ones,
	// so a batch usually stops early; with none idle it reads every active
	// session once.
	lockIdleSessions = `SELECT s.tenant, s.conversation_id, s.id FROM sessions s
		JOIN conversations c ON c.tenant = s.tenant AND c.conversation_id = s.conversation_id
		WHERE s.status = 'active'
		  AND ($1 OR s.tenant = $2)
		  AND ($3 = '' OR s.tool = $3)
		  AND ($4::timestamptz IS NULL OR s.updated_at < $4)
		ORDER BY s.created_at, s.id LIMIT $5
		FOR UPDATE OF c SKIP LOCKED`

	// purgeEnded deletes ended sessions past retention, and their history
	// by cascade. It locks each one's conversation as a turn does, first,
	// skipping those a turn or an erasure holds: a turn that read an ended
	// session (to say it ended) and writes it back must not bring back a
	// row this purge deleted.
	purgeEnded = `WITH doomed AS (
			SELECT s.tenant, s.conversation_id, s.id FROM sessions s
			JOIN conversations c ON c.tenant = s.tenant AND c.conversation_id = s.conversation_id
			WHERE s.status <> 'active' AND s.ended_at < $1 AND ($2 OR s.tenant = $3)
			ORDER BY s.ended_at LIMIT $4
			FOR UPDATE OF c, s SKIP LOCKED
		)
		DELETE FROM sessions s USING doomed
		WHERE s.tenant = doomed.tenant AND s.conversation_id = doomed.conversation_id AND s.id = doomed.id
		RETURNING s.id, s.tenant, s.conversation_id`

	// lockEmptied and deleteEmptied remove the conversations a purge left
	// without a session, in two statements of the purge's transaction. The
	// first locks them, skipping those a turn holds (that turn is about to
	// write a session); the second, a statement later and so with a
	// snapshot taken under the locks, deletes those that still have none,
	// which no turn can change while the lock is held. A turn that waited
	// on one of these locks finds the row gone and makes it again (see
	// Turn). Each statement names its conversations by key, so that on a
	// distributed schema they are routed to their shards.
	lockEmptied = `SELECT c.tenant, c.conversation_id FROM conversations c
		JOIN unnest($1::text[], $2::text[]) AS k(tenant, conversation_id)
		  ON c.tenant = k.tenant AND c.conversation_id = k.conversation_id
		FOR UPDATE OF c SKIP LOCKED`
	deleteEmptied = `DELETE FROM conversations c
		USING unnest($1::text[], $2::text[]) AS k(tenant, conversation_id)
		WHERE c.tenant = k.tenant AND c.conversation_id = k.conversation_id
		  AND NOT EXISTS (SELECT FROM sessions s WHERE s.tenant = c.tenant AND s.conversation_id = c.conversation_id)`

	// tenantsOfSession finds a session id through the index sessions_id.
	tenantsOfSession = `SELECT DISTINCT tenant FROM sessions
		WHERE id = $1 AND ($2 = '' OR conversation_id = $2)
		ORDER BY tenant LIMIT $3`
	// tenantsOfConversation scans conversations, the narrowest table that
	// has the id: no index leads with conversation_id, and an operator's
	// lookup without a tenant is too rare to make every first turn write
	// one. Each tenant found is checked for a session through the key.
	tenantsOfConversation = `SELECT c.tenant FROM conversations c
		WHERE c.conversation_id = $1
		  AND EXISTS (SELECT FROM sessions s WHERE s.tenant = c.tenant AND s.conversation_id = c.conversation_id)
		ORDER BY c.tenant LIMIT $2`

	selectPurgeable = `SELECT id FROM sessions
		WHERE status <> 'active' AND ended_at < $1 AND ($2 OR tenant = $3)
		ORDER BY ended_at LIMIT $4`
)

func nullableID(id string) *string {
	if id == "" {
		return nil
	}
	return &id
}

// likePrefix escapes a prefix for LIKE ... ESCAPE '\': the operator's %, _
// and \ are matched as themselves.
var likePrefix = strings.NewReplacer(`\`, `\\`, `%`, `\%`, `_`, `\_`).Replace

// List implements session.Store.
func (st *Store) List(ctx context.Context, f session.Filter) ([]*session.Session, error) {
	rows, err := st.pool.Query(ctx, listSessions, f.AnyTenant, f.Tenant, string(f.Status), f.Tool,
		nullTime(f.IdleBefore), nullTime(f.EndedBefore), nullableID(f.After), f.Limit, likePrefix(f.ConversationPrefix))
	if err != nil {
		return nil, interpret(err)
	}
	defer rows.Close()
	var out []*session.Session
	for rows.Next() {
		s, err := scanSession(rows)
		if err != nil {
			return nil, interpret(err)
		}
		out = append(out, s)
	}
	return out, interpret(rows.Err())
}

// EndSessions implements session.Store. The conversations are locked first
// (skipping busy ones), then each session is read again under the lock and
// checked against the filter once more, so that a turn that landed first
// wins and no session is half reset.
func (st *Store) EndSessions(ctx context.Context, f session.Filter, dryRun bool, fn session.EndFunc) ([]string, error) {
	var ids []string
	errDryRun := errors.New("dry run")
	err := st.inTx(ctx, func(tx pgx.Tx) error {
		rows, err := tx.Query(ctx, lockIdleSessions, f.AnyTenant, f.Tenant, f.Tool, nullTime(f.IdleBefore), f.Bounded())
		if err != nil {
			return err
		}
		type found struct {
			key session.Key
			id  string
		}
		all, err := pgx.CollectRows(rows, func(r pgx.CollectableRow) (found, error) {
			var x found
			return x, r.Scan(&x.key.Tenant, &x.key.ConversationID, &x.id)
		})
		if err != nil {
			return err
		}
		for _, x := range all {
			k := x.key
			s, err := scanSession(tx.QueryRow(ctx, selectByID, x.id, k.Tenant, k.ConversationID))
			if errors.Is(err, session.ErrNotFound) {
				continue
			}
			if err != nil {
				return err
			}
			if s.Status != session.Active || !f.IdleBefore.IsZero() && !s.UpdatedAt.Before(f.IdleBefore) {
				continue // a turn landed before the lock
			}
			commit, err := fn(s)
			if err != nil {
				continue
			}
			if !dryRun {
				if err := write(ctx, tx, k, commit); err != nil {
					return err
				}
			}
			ids = append(ids, s.ID)
		}
		if dryRun {
			return errDryRun // roll back: change nothing
		}
		return nil
	})
	if err != nil && !errors.Is(err, errDryRun) {
		return nil, interpret(err)
	}
	return ids, nil
}

// Purge implements session.Store.
func (st *Store) Purge(ctx context.Context, f session.Filter, dryRun bool) ([]string, error) {
	if dryRun {
		rows, err := st.pool.Query(ctx, selectPurgeable, f.EndedBefore, f.AnyTenant, f.Tenant, f.Bounded())
		if err != nil {
			return nil, interpret(err)
		}
		ids, err := pgx.CollectRows(rows, pgx.RowTo[string])
		return ids, interpret(err)
	}
	var ids []string
	err := st.inTx(ctx, func(tx pgx.Tx) error {
		rows, err := tx.Query(ctx, purgeEnded, f.EndedBefore, f.AnyTenant, f.Tenant, f.Bounded())
		if err != nil {
			return err
		}
		ids = ids[:0]
		var tenants, convs []string
		seen := map[session.Key]bool{}
		var id string
		var k session.Key
		if _, err := pgx.ForEachRow(rows, []any{&id, &k.Tenant, &k.ConversationID}, func() error {
			ids = append(ids, id)
			if !seen[k] {
				seen[k] = true
				tenants, convs = append(tenants, k.Tenant), append(convs, k.ConversationID)
			}
			return nil
		}); err != nil {
			return err
		}
		if len(tenants) == 0 {
			return nil
		}
		rows, err = tx.Query(ctx, lockEmptied, tenants, convs)
		if err != nil {
			return err
		}
		// Only the ones locked: a delete of one a turn holds would wait for
		// that turn, which may wait for a session row this purge deleted.
		tenants, convs = tenants[:0], convs[:0]
		if _, err := pgx.ForEachRow(rows, []any{&k.Tenant, &k.ConversationID}, func() error {
			tenants, convs = append(tenants, k.Tenant), append(convs, k.ConversationID)
			return nil
		}); err != nil || len(tenants) == 0 {
			return err
		}
		_, err = tx.Exec(ctx, deleteEmptied, tenants, convs)
		return err
	})
	if err != nil {
		return nil, interpret(err)
	}
	return ids, nil
}

// The statements of an erasure: every one names the conversation by its
// key, so that on a distributed schema each goes to the conversation's
// shard, and the erasure's record to its tenant's.
const (
	// eraseLock locks the conversation's sessions before any row of their
	// history: a purge locks sessions and then deletes their history by
	// cascade, and the two must take their locks in one order.
	eraseLock     = `SELECT 1 FROM sessions WHERE tenant = $1 AND conversation_id = $2 FOR UPDATE`
	eraseChanges  = `DELETE FROM slot_changes WHERE tenant = $1 AND conversation_id = $2`
	eraseTurns    = `DELETE FROM turns WHERE tenant = $1 AND conversation_id = $2`
	eraseSessions = `DELETE FROM sessions WHERE tenant = $1 AND conversation_id = $2`
	eraseConv     = `DELETE FROM conversations WHERE tenant = $1 AND conversation_id = $2`
	insertErasure = `INSERT INTO erasures (tenant, conversation_hash, erased_at, erased_by, sessions)
		VALUES ($1, $2, $3, $4, $5)
		ON CONFLICT (tenant, conversation_hash, erased_at) DO UPDATE SET sessions = erasures.sessions + EXCLUDED.sessions`
)

// Erase implements session.Store. It locks the conversation's row first,
// so that it waits for a turn in progress and no turn starts on the
// conversation until the erasure is committed; a turn that waited finds
// the row gone and starts the conversation afresh.
func (st *Store) Erase(ctx context.Context, key session.Key, rec session.Erasure) (session.Erased, error) {
	var out session.Erased
	err := st.inTx(ctx, func(tx pgx.Tx) error {
		out = session.Erased{}
		tag, err := tx.Exec(ctx, lockConversation, key.Tenant, key.ConversationID)
		if err != nil {
			return err
		}
		out.Found = tag.RowsAffected() > 0
		b := &pgx.Batch{}
		for _, q := range []string{eraseLock, eraseChanges, eraseTurns, eraseSessions, eraseConv} {
			b.Queue(q, key.Tenant, key.ConversationID)
		}
		br := tx.SendBatch(ctx, b)
		for i := range b.Len() {
			tag, err := br.Exec()
			if err != nil {
				br.Close()
				return err
			}
			if tag.RowsAffected() > 0 && b.QueuedQueries[i].SQL != eraseLock {
				out.Found = true
			}
			if b.QueuedQueries[i].SQL == eraseSessions {
				out.Sessions = int(tag.RowsAffected())
			}
		}
		if err := br.Close(); err != nil {
			return err
		}
		_, err = tx.Exec(ctx, insertErasure, rec.Tenant, rec.ConversationHash, rec.At, rec.By, out.Sessions)
		return err
	})
	if err != nil {
		return session.Erased{}, interpret(err)
	}
	return out, nil
}

// Tenants implements session.Store.
func (st *Store) Tenants(ctx context.Context, l session.Lookup, limit int) ([]string, error) {
	var rows pgx.Rows
	var err error
	if l.SessionID != "" {
		rows, err = st.pool.Query(ctx, tenantsOfSession, l.SessionID, l.ConversationID, limit)
	} else {
		rows, err = st.pool.Query(ctx, tenantsOfConversation, l.ConversationID, limit)
	}
	if err != nil {
		return nil, interpret(err)
	}
	tenants, err := pgx.CollectRows(rows, pgx.RowTo[string])
	return tenants, interpret(err)
}
