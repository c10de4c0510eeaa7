-- +goose Up
-- Every turn rewrites its session's row and moves updated_at. An index on
-- updated_at makes each of those updates write every index of sessions;
-- without one, and with room left on each page, Postgres updates the row
-- in place on its page (a HOT update) and writes no index at all. The
-- batches that look for idle active sessions walk the active sessions by
-- creation instead, oldest first: a column no turn changes.
DROP INDEX sessions_status_idle;
CREATE INDEX sessions_active_created ON sessions (created_at, id) WHERE status = 'active';
-- Room for a row's new versions on its own page. Pages written from now on
-- keep it; those already full fill up as autovacuum frees them.
ALTER TABLE sessions SET (fillfactor = 70);

-- +goose Down
ALTER TABLE sessions RESET (fillfactor);
DROP INDEX sessions_active_created;
CREATE INDEX sessions_status_idle ON sessions (status, updated_at);
