-- +goose Up
-- Every table carries the conversation's key (tenant, conversation_id) or
-- the session id, so the schema can be distributed by it.

-- One row per conversation: the row a turn locks, so that there is one
-- writer per conversation across every slotd process.
CREATE TABLE conversations (
    tenant            text        NOT NULL,
    conversation_id   text        NOT NULL,
    active_session_id uuid,
    created_at        timestamptz NOT NULL DEFAULT now(),
    PRIMARY KEY (tenant, conversation_id)
);

CREATE TABLE sessions (
    id              uuid        PRIMARY KEY,
    tenant          text        NOT NULL,
    conversation_id text        NOT NULL,
    tool            text        NOT NULL,
    status          text        NOT NULL CHECK (status IN ('active', 'completed', 'abandoned', 'expired', 'reset', 'cancelled', 'failed')),
    version         bigint      NOT NULL CHECK (version >= 0),
    state           jsonb       NOT NULL,
    last_action     text        NOT NULL DEFAULT '',
    approved_key    text        NOT NULL DEFAULT '',
    locale          text        NOT NULL DEFAULT '',
    time_zone       text        NOT NULL DEFAULT '',
    created_at      timestamptz NOT NULL,
    updated_at      timestamptz NOT NULL,
    ended_at        timestamptz
);
-- A conversation's sessions, newest first (ids are time-ordered UUIDv7).
CREATE INDEX sessions_conversation ON sessions (tenant, conversation_id, id);
-- The janitor's and reset-stale's batches: idle active sessions, and ended
-- ones by age.
CREATE INDEX sessions_status_idle ON sessions (status, updated_at);
CREATE INDEX sessions_ended ON sessions (ended_at) WHERE status <> 'active';

-- A turn and the response it got; a turn_id seen before is answered from here.
CREATE TABLE turns (
    tenant          text        NOT NULL,
    conversation_id text        NOT NULL,
    turn_id         text        NOT NULL,
    session_id      uuid        NOT NULL REFERENCES sessions (id) ON DELETE CASCADE,
    version         bigint      NOT NULL,
    action          text        NOT NULL,
    request         jsonb       NOT NULL,
    response        jsonb       NOT NULL,
    created_at      timestamptz NOT NULL,
    PRIMARY KEY (tenant, conversation_id, turn_id)
);
CREATE INDEX turns_session ON turns (session_id, version);

-- The audit trail: no slot value changes without a row here.
CREATE TABLE slot_changes (
    session_id uuid        NOT NULL REFERENCES sessions (id) ON DELETE CASCADE,
    version    bigint      NOT NULL,
    ord        int         NOT NULL,
    turn_id    text,
    slot       text        NOT NULL,
    old_value  jsonb,
    new_value  jsonb,
    decision   text        NOT NULL,
    created_at timestamptz NOT NULL,
    PRIMARY KEY (session_id, version, ord)
);

-- +goose Down
DROP TABLE slot_changes;
DROP TABLE turns;
DROP TABLE sessions;
DROP TABLE conversations;
