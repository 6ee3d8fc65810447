-- Curated memory entries. PostgreSQL is the authority; Qdrant is a projection
-- fed through memory_outbox, written in the same transaction as the entry.
--
-- Room for what comes next (seeds 002 and 004): entries have stable UUIDs so
-- supersede links and an audit trail can reference them; `scope` is part of
-- the key so account- and user-scoped memories can live beside agent-scoped
-- ones; `source_*` records where an entry came from.

CREATE EXTENSION IF NOT EXISTS pg_trgm;

CREATE TABLE memory_entries (
    id                  uuid PRIMARY KEY,
    account_id          text NOT NULL,
    environment         text NOT NULL,
    scope               text NOT NULL DEFAULT 'agent' CHECK (scope IN ('agent')),
    agent_id            text NOT NULL,
    -- The user a private entry belongs to; '' for shared entries (so the
    -- unique key treats "no owner" as one value).
    owner_user_id       text NOT NULL DEFAULT '',
    key                 text NOT NULL,
    content             text NOT NULL,
    content_hash        text NOT NULL,
    category            text NOT NULL
                        CHECK (category IN ('user_profile', 'project_fact', 'observation')),
    visibility          text NOT NULL CHECK (visibility IN ('private', 'shared')),
    importance          double precision NOT NULL DEFAULT 0.5
                        CHECK (importance >= 0 AND importance <= 1),
    expires_at          timestamptz,
    recall_count        bigint NOT NULL DEFAULT 0,
    last_recalled_at    timestamptz,
    last_decayed_at     timestamptz,
    source_kind         text NOT NULL CHECK (source_kind IN ('agent_tool', 'pre_compaction_flush')),
    source_thread_id    text,
    source_message_ids  text[] NOT NULL DEFAULT '{}',
    created_at          timestamptz NOT NULL,
    updated_at          timestamptz NOT NULL,
    search              tsvector GENERATED ALWAYS AS
                        (to_tsvector('english', key || ' ' || content)) STORED,
    CHECK ((visibility = 'private') = (owner_user_id <> ''))
);

CREATE UNIQUE INDEX memory_entries_by_key
    ON memory_entries (account_id, environment, scope, agent_id, owner_user_id, key);
CREATE INDEX memory_entries_pinning
    ON memory_entries (account_id, environment, agent_id, category, importance DESC, updated_at DESC);
CREATE INDEX memory_entries_search ON memory_entries USING gin (search);
CREATE INDEX memory_entries_trigram ON memory_entries USING gin (content gin_trgm_ops);
CREATE INDEX memory_entries_expiry ON memory_entries (expires_at) WHERE expires_at IS NOT NULL;

CREATE TABLE memory_outbox (
    id                  bigserial PRIMARY KEY,
    entry_id            uuid NOT NULL,
    account_id          text NOT NULL,
    environment         text NOT NULL,
    attempts            integer NOT NULL DEFAULT 0,
    next_attempt_at     timestamptz NOT NULL,
    last_error          text,
    created_at          timestamptz NOT NULL
);
CREATE INDEX memory_outbox_due ON memory_outbox (next_attempt_at, id);
CREATE INDEX memory_outbox_by_collection ON memory_outbox (account_id, environment);

-- Answers to Store requests that carried a request id, for safe retries.
CREATE TABLE memory_store_requests (
    account_id          text NOT NULL,
    request_id          text NOT NULL,
    response            bytea NOT NULL,
    created_at          timestamptz NOT NULL,
    PRIMARY KEY (account_id, request_id)
);

CREATE TABLE agent_settings (
    account_id          text NOT NULL,
    environment         text NOT NULL,
    agent_id            text NOT NULL,
    memory_bound        boolean NOT NULL DEFAULT false,
    updated_at          timestamptz NOT NULL DEFAULT now(),
    PRIMARY KEY (account_id, environment, agent_id)
);
