-- The memory model (seeds 002 and 004) on top of seed 000's entries.
--
-- memory_entries keeps one row per memory: its current version plus the
-- counters that are not history (recalls, decay). Every change also writes
-- the new version's full snapshot to memory_versions and one record to
-- memory_audit, in the same transaction. Nothing of an existing entry is
-- lost: each becomes version 1 of a memory of scope 'agent' (seed 000's
-- shared) or 'private', recorded from its last update.

-- Scopes: who sees a memory. Platform rules have no account (account_id and
-- environment are '').
ALTER TABLE memory_entries DROP CONSTRAINT memory_entries_scope_check;
UPDATE memory_entries SET scope = 'private' WHERE visibility = 'private';
ALTER TABLE memory_entries DROP CONSTRAINT memory_entries_check;
ALTER TABLE memory_entries DROP COLUMN visibility;
ALTER TABLE memory_entries
    ADD CONSTRAINT memory_entries_scope_check
        CHECK (scope IN ('platform', 'account', 'agent', 'user', 'private')),
    ADD CONSTRAINT memory_entries_owner_check
        CHECK ((scope IN ('user', 'private')) = (owner_user_id <> '')),
    ADD CONSTRAINT memory_entries_agent_check
        CHECK ((scope IN ('agent', 'private')) = (agent_id <> ''));

-- Kinds: seed 000's categories, seed 002's types, rules and blocks. Their
-- limits live in services/agent_memory/rules.py.
ALTER TABLE memory_entries RENAME COLUMN category TO kind;
ALTER TABLE memory_entries DROP CONSTRAINT memory_entries_category_check;
ALTER TABLE memory_entries ADD CONSTRAINT memory_entries_kind_check CHECK (kind IN (
    'user_profile', 'project_fact', 'observation', 'decision', 'correction', 'preference',
    'instruction', 'artifact_ref', 'platform_rule', 'tenant_rule', 'tenant_floor', 'block'));

-- Sources: agent_tool becomes agent, pre_compaction_flush becomes flush.
ALTER TABLE memory_entries DROP CONSTRAINT memory_entries_source_kind_check;
UPDATE memory_entries SET source_kind = CASE source_kind
    WHEN 'agent_tool' THEN 'agent' WHEN 'pre_compaction_flush' THEN 'flush' ELSE source_kind END;
ALTER TABLE memory_entries ADD CONSTRAINT memory_entries_source_kind_check CHECK (source_kind IN (
    'user', 'agent', 'admin', 'extraction', 'tool_result', 'flush'));

ALTER TABLE memory_entries
    ADD COLUMN tags                jsonb NOT NULL DEFAULT '{}',
    ADD COLUMN confidence          double precision NOT NULL DEFAULT 1.0
                                   CHECK (confidence >= 0 AND confidence <= 1),
    ADD COLUMN source_run_id       text,
    ADD COLUMN source_first_offset bigint,
    ADD COLUMN source_last_offset  bigint,
    ADD COLUMN version             integer NOT NULL DEFAULT 1,
    -- The writer of the current version.
    ADD COLUMN author_key_id       text NOT NULL DEFAULT '',
    ADD COLUMN author_agent_id     text NOT NULL DEFAULT '',
    ADD COLUMN author_user_id      text NOT NULL DEFAULT '',
    ADD COLUMN author_role         text NOT NULL DEFAULT 'service',
    -- A tombstone: restorable until the account's retention window ends.
    ADD COLUMN deleted_at          timestamptz,
    ADD COLUMN superseded_by       uuid,
    ADD COLUMN superseded_at       timestamptz;
-- The seed-000 writers wrote as the agent (and its user, for private entries).
UPDATE memory_entries SET author_agent_id = agent_id, author_user_id = owner_user_id,
    confidence = CASE source_kind WHEN 'flush' THEN 0.6 ELSE 0.8 END;

-- A memory is identified within its account and environment, so an export
-- imports into another account with its ids intact.
ALTER TABLE memory_entries DROP CONSTRAINT memory_entries_pkey;
ALTER TABLE memory_entries ADD PRIMARY KEY (account_id, environment, id);

-- A key names one live memory per scope owner; a tombstoned or superseded
-- memory frees it.
DROP INDEX memory_entries_by_key;
CREATE UNIQUE INDEX memory_entries_live_key
    ON memory_entries (account_id, environment, scope, agent_id, owner_user_id, key)
    WHERE deleted_at IS NULL AND superseded_by IS NULL;
-- Pages of what a caller sees: one range per visible part (services/agent_memory/sql.py).
CREATE INDEX memory_entries_by_owner
    ON memory_entries (account_id, environment, scope, agent_id, owner_user_id, created_at, id);
CREATE INDEX memory_entries_tags ON memory_entries USING gin (tags jsonb_path_ops);
CREATE INDEX memory_entries_tombstones ON memory_entries (deleted_at) WHERE deleted_at IS NOT NULL;
CREATE INDEX memory_entries_superseded
    ON memory_entries (account_id, environment, superseded_by) WHERE superseded_by IS NOT NULL;
CREATE INDEX memory_entries_key_trigram ON memory_entries USING gin (key gin_trgm_ops);

-- Every version of every memory, a full snapshot each, on the recorded-time
-- axis: a version was current from recorded_at until recorded_until.
CREATE TABLE memory_versions (
    account_id          text NOT NULL,
    environment         text NOT NULL,
    memory_id           uuid NOT NULL,
    version             integer NOT NULL,
    scope               text NOT NULL,
    agent_id            text NOT NULL,
    owner_user_id       text NOT NULL,
    key                 text NOT NULL,
    content             text NOT NULL,
    content_hash        text NOT NULL,
    kind                text NOT NULL,
    importance          double precision NOT NULL,
    confidence          double precision NOT NULL,
    tags                jsonb NOT NULL,
    source_kind         text NOT NULL,
    source_thread_id    text,
    source_message_ids  text[] NOT NULL,
    source_run_id       text,
    source_first_offset bigint,
    source_last_offset  bigint,
    expires_at          timestamptz,
    deleted_at          timestamptz,
    superseded_by       uuid,
    superseded_at       timestamptz,
    author_key_id       text NOT NULL,
    author_agent_id     text NOT NULL,
    author_user_id      text NOT NULL,
    author_role         text NOT NULL,
    created_at          timestamptz NOT NULL,
    updated_at          timestamptz NOT NULL,
    action              text NOT NULL,
    recorded_at         timestamptz NOT NULL,
    recorded_until      timestamptz,
    PRIMARY KEY (account_id, environment, memory_id, version),
    FOREIGN KEY (account_id, environment, memory_id)
        REFERENCES memory_entries (account_id, environment, id) ON DELETE CASCADE
);
CREATE INDEX memory_versions_as_of ON memory_versions (account_id, environment, recorded_at);
CREATE INDEX memory_versions_replaced ON memory_versions (recorded_until)
    WHERE recorded_until IS NOT NULL;

INSERT INTO memory_versions
SELECT account_id, environment, id, version, scope, agent_id, owner_user_id, key, content,
       content_hash, kind, importance, confidence, tags, source_kind, source_thread_id,
       source_message_ids, source_run_id, source_first_offset, source_last_offset, expires_at,
       deleted_at, superseded_by, superseded_at, author_key_id, author_agent_id, author_user_id,
       author_role, created_at, updated_at, 'create', updated_at, NULL
FROM memory_entries;

-- One record per change, written with the change. The scope columns copy the
-- memory's (or the settings'), so the visibility predicate filters the trail
-- exactly as it filters memories.
CREATE TABLE memory_audit (
    id                  bigserial PRIMARY KEY,
    account_id          text NOT NULL,
    environment         text NOT NULL,
    scope               text NOT NULL,
    agent_id            text NOT NULL DEFAULT '',
    owner_user_id       text NOT NULL DEFAULT '',
    memory_id           uuid,
    version             integer,
    action              text NOT NULL CHECK (action IN (
                            'create', 'update', 'supersede', 'delete', 'restore', 'rollback',
                            'purge', 'import', 'expire', 'account_settings', 'agent_settings')),
    actor_key_id        text NOT NULL DEFAULT '',
    actor_agent_id      text NOT NULL DEFAULT '',
    actor_user_id       text NOT NULL DEFAULT '',
    actor_role          text NOT NULL,
    at                  timestamptz NOT NULL,
    before              jsonb,
    after               jsonb
);
CREATE INDEX memory_audit_by_memory ON memory_audit (account_id, environment, memory_id, id);
CREATE INDEX memory_audit_by_account ON memory_audit (account_id, environment, id);

-- Settings: one row per account (defaults apply until a row exists).
CREATE TABLE account_settings (
    account_id           text PRIMARY KEY,
    memory_enabled       boolean NOT NULL DEFAULT true,
    retention_days       integer NOT NULL DEFAULT 30
                         CHECK (retention_days BETWEEN 1 AND 3650),
    default_token_budget integer NOT NULL DEFAULT 4000
                         CHECK (default_token_budget BETWEEN 256 AND 32000),
    updated_at           timestamptz NOT NULL
);
ALTER TABLE agent_settings
    ADD COLUMN extraction_mode    text NOT NULL DEFAULT 'suggestions'
                                  CHECK (extraction_mode IN ('immediate', 'suggestions', 'off')),
    ADD COLUMN procedures_enabled boolean NOT NULL DEFAULT true;

-- A request id belongs to its caller (account, environment, agent, user) and
-- to the request's content (request_hash). Rows of the previous release take
-- the agent and owner of the entry they answered; those whose entry is gone
-- are dropped (the previous release treated them as new stores too).
ALTER TABLE memory_store_requests
    ADD COLUMN environment  text NOT NULL DEFAULT '',
    ADD COLUMN agent_id     text NOT NULL DEFAULT '',
    ADD COLUMN user_id      text NOT NULL DEFAULT '',
    ADD COLUMN request_hash text;
UPDATE memory_store_requests r
SET environment = e.environment, agent_id = e.agent_id, user_id = e.owner_user_id
FROM memory_entries e
WHERE e.account_id = r.account_id
  AND e.id::text = convert_from(r.response, 'UTF8')::jsonb ->> 'entry';
DELETE FROM memory_store_requests WHERE agent_id = '';
ALTER TABLE memory_store_requests DROP CONSTRAINT memory_store_requests_pkey;
ALTER TABLE memory_store_requests
    ADD PRIMARY KEY (account_id, environment, agent_id, user_id, request_id);
CREATE INDEX memory_store_requests_age ON memory_store_requests (created_at);

-- Re-project every entry: index points now carry scope and kind. (Due since the
-- entry's last update: the service's clock, not the database's, decides.)
INSERT INTO memory_outbox (entry_id, account_id, environment, next_attempt_at, created_at)
SELECT id, account_id, environment, updated_at, updated_at FROM memory_entries;
