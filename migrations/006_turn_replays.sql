-- +goose Up
-- A turn_id delivered again is answered from its stored response; these
-- record that it was: how many times, and when the last ones came (at most
-- session.MaxReplayTimes of them, the latest last). A constant default
-- adds the columns without rewriting the table.
ALTER TABLE turns
    ADD COLUMN replays     int           NOT NULL DEFAULT 0 CHECK (replays >= 0),
    ADD COLUMN replayed_at timestamptz[] NOT NULL DEFAULT '{}';

-- +goose Down
ALTER TABLE turns DROP COLUMN replays, DROP COLUMN replayed_at;
