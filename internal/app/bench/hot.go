package bench

import (
	"context"
	"net/url"
	"time"

	"github.com/jackc/pgx/v5/pgxpool"
)

// Updates are updates of session rows, as Postgres counts them
// (pg_stat_user_tables). A HOT update writes the new row version on the
// same page and no index entry: a turn's update should be one.
type Updates struct {
	All, HOT int64
	// Known is false when the counts could not be read.
	Known bool
}

// Share is the HOT share of the updates, 0 when there were none.
func (u Updates) Share() float64 {
	if u.All <= 0 {
		return 0
	}
	return float64(u.HOT) / float64(u.All)
}

// since is the updates between an earlier reading and this one.
func (u Updates) since(before Updates) Updates {
	if !u.Known || !before.Known {
		return Updates{}
	}
	return Updates{All: u.All - before.All, HOT: u.HOT - before.HOT, Known: true}
}

// sessionUpdates reads Postgres's counts of the updates of sessions so far.
func sessionUpdates(ctx context.Context, pool *pgxpool.Pool) Updates {
	var u Updates
	err := pool.QueryRow(ctx, `SELECT coalesce(sum(n_tup_upd), 0), coalesce(sum(n_tup_hot_upd), 0)
		FROM pg_stat_user_tables WHERE relname = 'sessions'`).Scan(&u.All, &u.HOT)
	u.Known = err == nil
	return u
}

// The application names of the two sides' connections, by which the bench
// waits for them to end.
const (
	slotdAppName  = "slotd-bench-slotd"
	directAppName = "slotd-bench-direct"
)

// withAppName sets a connection URL's application_name.
func withAppName(dbURL, name string) string {
	u, err := url.Parse(dbURL)
	if err != nil {
		return dbURL
	}
	q := u.Query()
	q.Set("application_name", name)
	u.RawQuery = q.Encode()
	return u.String()
}

// waitGone waits, for at most ten seconds, until no connection named name
// is left, and a little more: a backend leaves pg_stat_activity just before
// it hands in its last counts.
func waitGone(ctx context.Context, pool *pgxpool.Pool, name string) {
	deadline := time.Now().Add(10 * time.Second)
	for time.Now().Before(deadline) && ctx.Err() == nil {
		var n int
		err := pool.QueryRow(ctx, `SELECT count(*) FROM pg_stat_activity WHERE datname = current_database() AND application_name = $1`, name).Scan(&n)
		if err != nil || n == 0 {
			break
		}
		time.Sleep(20 * time.Millisecond)
	}
	time.Sleep(100 * time.Millisecond)
}
