package session

import (
	"context"
	"crypto/sha256"
	"encoding/hex"
	"fmt"
	"time"

	"github.com/slotd/slotd/problem"
)

// Erasure is the record an erased conversation leaves: under which tenant,
// a hash of its id (never the id), when, and by which operator.
type Erasure struct {
	Tenant string
	// ConversationHash is ConversationHash of the erased conversation's key.
	ConversationHash string
	At               time.Time
	// By names the admin principal that asked for it, never its key.
	By string
}

// Erased is what Store.Erase removed.
type Erased struct {
	// Found: the store held rows of the conversation.
	Found bool
	// Sessions is how many sessions went, with every turn and slot change.
	Sessions int
}

// ConversationHash is the hex SHA-256 of a conversation's tenant and id: what
// the erasure record, logs and metrics keep instead of the id. Whoever
// knows the id can check that it was erased; the record alone does not
// say which conversation it was.
func ConversationHash(key Key) string {
	h := sha256.New()
	h.Write([]byte(key.Tenant))
	h.Write([]byte{0})
	h.Write([]byte(key.ConversationID))
	return hex.EncodeToString(h.Sum(nil))
}

// Erase removes every row of the conversation, its sessions, turns, slot
// changes and the conversation itself, and records the erasure, in one
// unit of work that waits for a turn in progress to finish. Erasing a
// conversation the store holds nothing of is no error: the erasure is
// recorded all the same (a retried request is answered alike) and Found is
// false. A turn after the erasure starts the conversation afresh.
func (e *Engine) Erase(ctx context.Context, key Key, by string, now time.Time) (Erasure, Erased, error) {
	if key.ConversationID == "" {
		return Erasure{}, Erased{}, problem.InvalidRequest("conversation_id", "required")
	}
	if !validID(key.ConversationID) {
		return Erasure{}, Erased{}, problem.InvalidRequest("conversation_id", fmt.Sprintf("at most %d bytes of UTF-8 without control characters", maxIDLength))
	}
	if !validID(key.Tenant) {
		return Erasure{}, Erased{}, problem.InvalidRequest("tenant", fmt.Sprintf("at most %d bytes of UTF-8 without control characters", maxIDLength))
	}
	if now.IsZero() {
		now = e.clock()
	}
	rec := Erasure{Tenant: key.Tenant, ConversationHash: ConversationHash(key), At: now.UTC(), By: by}
	got, err := e.store.Erase(ctx, key, rec)
	if err != nil {
		return Erasure{}, Erased{}, err
	}
	return rec, got, nil
}
