package pgstore

import (
	"fmt"

	"github.com/jackc/pgx/v5"

	"github.com/slotd/slotd/internal/session"
)

// recordReplay counts a delivery of a turn_id seen before on its turn, and
// keeps its time among the last session.MaxReplayTimes. It runs in the
// replay's transaction, under the conversation's lock.
var recordReplay = fmt.Sprintf(`UPDATE turns SET replays = replays + 1,
		replayed_at = (replayed_at || statement_timestamp())[greatest(1, cardinality(replayed_at) + 2 - %d):]
	WHERE tenant = $1 AND conversation_id = $2 AND turn_id = $3`, session.MaxReplayTimes)

// replayBatch is the second batch of a replayed turn: the replay recorded.
func replayBatch(key session.Key, turnID string) *pgx.Batch {
	b := &pgx.Batch{}
	b.Queue(recordReplay, key.Tenant, key.ConversationID, turnID)
	return b
}
