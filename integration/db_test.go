package integration

import (
	"context"
	neturl "net/url"
	"testing"

	"github.com/jackc/pgx/v5/pgxpool"

	"github.com/slotd/slotd/internal/testkit/dbtest"
)

func dbtestURL(t *testing.T) string { return dbtest.NewDatabase(t) }

type historyRow struct {
	turnID, slot, decision string
	version                int64
}

// history reads the audit trail straight from the database.
func history(t *testing.T, url, sessionID string) []historyRow {
	t.Helper()
	pool := dbtest.Connect(t, url)
	rows, err := pool.Query(context.Background(),
		`SELECT coalesce(turn_id, ''), slot, decision, version FROM slot_changes WHERE session_id = $1 ORDER BY version, ord`, sessionID)
	if err != nil {
		t.Fatal(err)
	}
	defer rows.Close()
	var out []historyRow
	for rows.Next() {
		var r historyRow
		if err := rows.Scan(&r.turnID, &r.slot, &r.decision, &r.version); err != nil {
			t.Fatal(err)
		}
		out = append(out, r)
	}
	return out
}

func assertTurnsInDB(t *testing.T, url, conversationID string, want int) {
	t.Helper()
	pool := dbtest.Connect(t, url)
	var n int
	if err := pool.QueryRow(context.Background(), `SELECT count(*) FROM turns WHERE conversation_id = $1`, conversationID).Scan(&n); err != nil {
		t.Fatal(err)
	}
	if n != want {
		t.Errorf("turns stored = %d, want %d", n, want)
	}
}

func dbtestPool(t *testing.T, url string) *pgxpool.Pool { return dbtest.Connect(t, url) }

func hostOf(t *testing.T, raw string) string {
	t.Helper()
	u, err := neturl.Parse(raw)
	if err != nil {
		t.Fatal(err)
	}
	return u.Host
}

func replaceHost(t *testing.T, raw, _, host string) string {
	t.Helper()
	u, err := neturl.Parse(raw)
	if err != nil {
		t.Fatal(err)
	}
	u.Host = host
	return u.String()
}

func dbName(t *testing.T, raw string) string {
	t.Helper()
	u, err := neturl.Parse(raw)
	if err != nil {
		t.Fatal(err)
	}
	return u.Path[1:]
}
