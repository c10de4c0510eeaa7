-- +goose Up
-- A conversation keeps a set of open sessions, at most one per tool,
-- instead of one active pointer: a session is open while it takes turns,
-- and after it ended outside a turn (an expiry, a reset) until a turn of its
-- tool has said so. Every table is keyed by (tenant, conversation_id) first,
-- so that the schema can be distributed by the conversation.

ALTER TABLE sessions ADD COLUMN open boolean NOT NULL DEFAULT false;
UPDATE sessions s SET open = true
  FROM conversations c
 WHERE c.tenant = s.tenant AND c.conversation_id = s.conversation_id AND c.active_session_id = s.id;
ALTER TABLE conversations DROP COLUMN active_session_id;

-- The history's tables carry the conversation's key, and reference their
-- session by it.
ALTER TABLE turns DROP CONSTRAINT turns_session_id_fkey;
ALTER TABLE slot_changes DROP CONSTRAINT slot_changes_session_id_fkey;
ALTER TABLE sessions DROP CONSTRAINT sessions_pkey;
DROP INDEX sessions_conversation;
ALTER TABLE sessions ADD PRIMARY KEY (tenant, conversation_id, id);
-- CompleteSession and admin lookups find a session by its id alone.
CREATE INDEX sessions_id ON sessions (id);
-- A turn reads its conversation's open sessions.
CREATE INDEX sessions_open ON sessions (tenant, conversation_id) WHERE open;

-- A replayed turn_id must be one of the same tool.
ALTER TABLE turns ADD COLUMN tool text;
UPDATE turns t SET tool = s.tool FROM sessions s WHERE s.id = t.session_id;
UPDATE turns SET tool = '' WHERE tool IS NULL;
ALTER TABLE turns ALTER COLUMN tool SET NOT NULL;
ALTER TABLE turns ADD FOREIGN KEY (tenant, conversation_id, session_id)
  REFERENCES sessions (tenant, conversation_id, id) ON DELETE CASCADE;
DROP INDEX turns_session;
CREATE INDEX turns_session ON turns (tenant, conversation_id, session_id, version);

ALTER TABLE slot_changes ADD COLUMN tenant text, ADD COLUMN conversation_id text;
UPDATE slot_changes c SET tenant = s.tenant, conversation_id = s.conversation_id FROM sessions s WHERE s.id = c.session_id;
DELETE FROM slot_changes WHERE tenant IS NULL;
ALTER TABLE slot_changes ALTER COLUMN tenant SET NOT NULL, ALTER COLUMN conversation_id SET NOT NULL;
ALTER TABLE slot_changes DROP CONSTRAINT slot_changes_pkey;
ALTER TABLE slot_changes ADD PRIMARY KEY (tenant, conversation_id, session_id, version, ord);
ALTER TABLE slot_changes ADD FOREIGN KEY (tenant, conversation_id, session_id)
  REFERENCES sessions (tenant, conversation_id, id) ON DELETE CASCADE;

-- +goose Down
ALTER TABLE slot_changes DROP CONSTRAINT slot_changes_tenant_conversation_id_session_id_fkey;
ALTER TABLE slot_changes DROP CONSTRAINT slot_changes_pkey;
ALTER TABLE slot_changes ADD PRIMARY KEY (session_id, version, ord);
ALTER TABLE slot_changes DROP COLUMN tenant, DROP COLUMN conversation_id;
ALTER TABLE turns DROP CONSTRAINT turns_tenant_conversation_id_session_id_fkey;
DROP INDEX turns_session;
CREATE INDEX turns_session ON turns (session_id, version);
ALTER TABLE turns DROP COLUMN tool;
DROP INDEX sessions_open;
DROP INDEX sessions_id;
ALTER TABLE sessions DROP CONSTRAINT sessions_pkey;
ALTER TABLE sessions ADD PRIMARY KEY (id);
CREATE INDEX sessions_conversation ON sessions (tenant, conversation_id, id);
ALTER TABLE turns ADD FOREIGN KEY (session_id) REFERENCES sessions (id) ON DELETE CASCADE;
ALTER TABLE slot_changes ADD FOREIGN KEY (session_id) REFERENCES sessions (id) ON DELETE CASCADE;
ALTER TABLE conversations ADD COLUMN active_session_id uuid;
UPDATE conversations c SET active_session_id = s.id
  FROM sessions s WHERE s.tenant = c.tenant AND s.conversation_id = c.conversation_id AND s.open;
ALTER TABLE sessions DROP COLUMN open;
