package pgstore

import (
	"context"
	"time"

	"github.com/slotd/slotd/internal/session"
)

var _ session.ReplaySource = (*Store)(nil)

const (
	// selectReplayKeys picks the conversations a replay plays, the most
	// recently used first: an operator's command, not a turn's, so a scan
	// of the sessions is acceptable.
	selectReplayKeys = `SELECT tenant, conversation_id FROM sessions
		WHERE ($1 = '' OR tool = $1) AND updated_at >= $2
		GROUP BY tenant, conversation_id
		ORDER BY max(updated_at) DESC, tenant, conversation_id
		LIMIT $3`
	// selectTurnsOf reads the turns of a batch of conversations, each
	// session of theirs at least once (one without turns as a row of
	// NULLs), in the order of the batch and of the turns.
	selectTurnsOf = `SELECT k.ord, s.id, s.tool, t.turn_id, t.action, t.request, t.created_at, t.contract_version
		FROM unnest($1::text[], $2::text[]) WITH ORDINALITY AS k (tenant, conversation_id, ord)
		JOIN sessions s ON s.tenant = k.tenant AND s.conversation_id = k.conversation_id
		LEFT JOIN turns t ON t.tenant = s.tenant AND t.conversation_id = s.conversation_id AND t.session_id = s.id
		ORDER BY k.ord, t.created_at NULLS FIRST, s.id, t.version`
)

// ReplayKeys implements session.ReplaySource.
func (st *Store) ReplayKeys(ctx context.Context, f session.ReplayFilter) ([]session.Key, error) {
	limit := f.Limit
	if limit <= 0 {
		limit = session.DefaultReplayLimit
	}
	rows, err := st.pool.Query(ctx, selectReplayKeys, f.Tool, f.Since, limit)
	if err != nil {
		return nil, interpret(err)
	}
	defer rows.Close()
	var keys []session.Key
	for rows.Next() {
		var k session.Key
		if err := rows.Scan(&k.Tenant, &k.ConversationID); err != nil {
			return nil, interpret(err)
		}
		keys = append(keys, k)
	}
	return keys, interpret(rows.Err())
}

// TurnsOf implements session.ReplaySource, in one query.
func (st *Store) TurnsOf(ctx context.Context, keys []session.Key) ([]session.StoredConversation, error) {
	if len(keys) == 0 {
		return nil, nil
	}
	tenants, ids := make([]string, len(keys)), make([]string, len(keys))
	for i, k := range keys {
		tenants[i], ids[i] = k.Tenant, k.ConversationID
	}
	rows, err := st.pool.Query(ctx, selectTurnsOf, tenants, ids)
	if err != nil {
		return nil, interpret(err)
	}
	defer rows.Close()
	var out []session.StoredConversation
	last := int64(0)
	for rows.Next() {
		var (
			ord                int64
			sessionID, tool    string
			turnID, action, cv *string
			request            []byte
			at                 *time.Time
		)
		if err := rows.Scan(&ord, &sessionID, &tool, &turnID, &action, &request, &at, &cv); err != nil {
			return nil, interpret(err)
		}
		if ord != last {
			out = append(out, session.StoredConversation{Key: keys[ord-1]})
			last = ord
		}
		sc := &out[len(out)-1]
		if turnID == nil {
			sc.Bare = append(sc.Bare, sessionID)
			continue
		}
		sc.Turns = append(sc.Turns, session.StoredTurn{TurnID: *turnID, SessionID: sessionID, Tool: tool, Action: *action,
			Request: request, At: at.UTC(), ContractVersion: *cv})
	}
	return out, interpret(rows.Err())
}
