-- +goose Up
-- An erased conversation leaves one row here and nothing anywhere else:
-- under which tenant, a hash of its id (hex SHA-256 of tenant, a zero byte
-- and the id; never the id), when, and the name of the admin principal
-- that asked (never its key). Keyed by tenant first, so that it can be
-- distributed by tenant; it holds no conversation id to be co-located by.
CREATE TABLE erasures (
    tenant            text        NOT NULL,
    conversation_hash text        NOT NULL CHECK (conversation_hash ~ '^[0-9a-f]{64}$'),
    erased_at         timestamptz NOT NULL,
    erased_by         text        NOT NULL,
    sessions          int         NOT NULL CHECK (sessions >= 0),
    PRIMARY KEY (tenant, conversation_hash, erased_at)
);

-- +goose Down
DROP TABLE erasures;
