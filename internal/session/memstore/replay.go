package memstore

import (
	"context"
	"sort"
	"time"

	"github.com/slotd/slotd/internal/session"
)

var _ session.ReplaySource = (*Store)(nil)

// ReplayKeys implements session.ReplaySource.
func (st *Store) ReplayKeys(_ context.Context, f session.ReplayFilter) ([]session.Key, error) {
	st.mu.Lock()
	defer st.mu.Unlock()
	type used struct {
		key session.Key
		at  time.Time
	}
	var picked []used
	for key, conv := range st.byConv {
		var last time.Time
		match := f.Tool == ""
		for _, s := range conv {
			if s.Tool == f.Tool {
				match = true
			}
			if (f.Tool == "" || s.Tool == f.Tool) && s.UpdatedAt.After(last) {
				last = s.UpdatedAt
			}
		}
		if match && !last.Before(f.Since) {
			picked = append(picked, used{key, last})
		}
	}
	sort.Slice(picked, func(i, j int) bool {
		a, b := picked[i], picked[j]
		if !a.at.Equal(b.at) {
			return a.at.After(b.at)
		}
		if a.key.Tenant != b.key.Tenant {
			return a.key.Tenant < b.key.Tenant
		}
		return a.key.ConversationID < b.key.ConversationID
	})
	if f.Limit > 0 && len(picked) > f.Limit {
		picked = picked[:f.Limit]
	}
	keys := make([]session.Key, len(picked))
	for i, p := range picked {
		keys[i] = p.key
	}
	return keys, nil
}

// TurnsOf implements session.ReplaySource.
func (st *Store) TurnsOf(_ context.Context, keys []session.Key) ([]session.StoredConversation, error) {
	st.mu.Lock()
	defer st.mu.Unlock()
	var out []session.StoredConversation
	for _, key := range keys {
		conv := st.byConv[key]
		if len(conv) == 0 {
			continue
		}
		sc := session.StoredConversation{Key: key}
		type ordered struct {
			t       session.StoredTurn
			version int64
		}
		var turns []ordered
		for id, s := range conv {
			ts := st.turns[id]
			if len(ts) == 0 {
				sc.Bare = append(sc.Bare, id)
			}
			for _, t := range ts {
				turns = append(turns, ordered{session.StoredTurn{TurnID: t.ID, SessionID: id, Tool: s.Tool, Action: t.Action,
					Request: append([]byte(nil), t.Request...), At: t.At, ContractVersion: t.ContractVersion}, t.Version})
			}
		}
		// The order pgstore reads them in: by time, then session and its
		// version.
		sort.Slice(turns, func(i, j int) bool {
			a, b := turns[i], turns[j]
			if !a.t.At.Equal(b.t.At) {
				return a.t.At.Before(b.t.At)
			}
			if a.t.SessionID != b.t.SessionID {
				return a.t.SessionID < b.t.SessionID
			}
			return a.version < b.version
		})
		for _, t := range turns {
			sc.Turns = append(sc.Turns, t.t)
		}
		sort.Strings(sc.Bare)
		out = append(out, sc)
	}
	return out, nil
}
