-- +goose Up
-- The contract versions replicas loaded: a version is the hash of the
-- contract's canonical JSON, and its document is kept as those bytes (text, not
-- jsonb, which would rewrite its numbers) so that any replica
-- can serve a session of a version it did not load. Not a conversation's
-- table: small, read by key, a reference table when distributed.
CREATE TABLE contract_versions (
    tool         text        NOT NULL,
    version      text        NOT NULL CHECK (version ~ '^[0-9a-f]{16}$'),
    document     text        NOT NULL,
    first_seen   timestamptz NOT NULL,
    replica      text        NOT NULL,
    last_seen    timestamptz NOT NULL,
    last_replica text        NOT NULL,
    PRIMARY KEY (tool, version)
);

-- The contract version a session runs on, and each turn ran on ('' for
-- those stored before versions were kept); a note on a slot change made
-- outside the user's arguments (a move to a new version names both).
ALTER TABLE sessions ADD COLUMN contract_version text NOT NULL DEFAULT '';
ALTER TABLE turns ADD COLUMN contract_version text NOT NULL DEFAULT '';
ALTER TABLE slot_changes ADD COLUMN note text;

-- +goose Down
ALTER TABLE slot_changes DROP COLUMN note;
ALTER TABLE turns DROP COLUMN contract_version;
ALTER TABLE sessions DROP COLUMN contract_version;
DROP TABLE contract_versions;
