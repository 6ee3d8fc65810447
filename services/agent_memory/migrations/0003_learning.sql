-- Learning from runs (seed 004): the runs to learn from, suggestions,
-- procedures and their uses, and the learning audit trail. Scope columns
-- follow memory_entries, so the visibility predicate (sql.visible) filters
-- suggestions, procedures and audit records as it filters memories.

-- Where agent memory is in each journal shard's run boundaries.
CREATE TABLE learning_feed_cursors (
    shard       integer PRIMARY KEY,
    position    bigint NOT NULL
);

-- One row per run: created when the run declares credentials (state 'open')
-- or finishes ('pending'), then learned from once ('done' or 'skipped').
CREATE TABLE learning_runs (
    account_id           text NOT NULL,
    environment          text NOT NULL,
    agent_id             text NOT NULL,
    thread_id            text NOT NULL,
    run_id               text NOT NULL,
    owner_user_id        text NOT NULL DEFAULT '',
    state                text NOT NULL CHECK (state IN ('open', 'pending', 'done', 'skipped')),
    outcome              text CHECK (outcome IN ('succeeded', 'failed', 'cancelled', 'timed_out')),
    after_offset         bigint,
    last_offset          bigint,
    finished_at          timestamptz,
    credentials_declared boolean NOT NULL DEFAULT false,
    attempts             integer NOT NULL DEFAULT 0,
    next_attempt_at      timestamptz,
    last_error           text,
    report               jsonb,
    updated_at           timestamptz NOT NULL,
    PRIMARY KEY (account_id, environment, agent_id, thread_id, run_id)
);
CREATE INDEX learning_runs_due ON learning_runs (next_attempt_at) WHERE state = 'pending';
CREATE INDEX learning_runs_finished ON learning_runs (updated_at) WHERE state IN ('done', 'skipped');

CREATE TABLE learning_suggestions (
    id                   uuid NOT NULL,
    account_id           text NOT NULL,
    environment          text NOT NULL,
    scope                text NOT NULL CHECK (scope IN ('account', 'agent', 'user', 'private')),
    -- The agent whose Learning tab shows it (always set, whatever the scope).
    agent_id             text NOT NULL,
    owner_user_id        text NOT NULL DEFAULT '',
    kind                 text NOT NULL CHECK (kind IN ('memory', 'supersede', 'skill')),
    status               text NOT NULL CHECK (status IN ('pending', 'accepted', 'rejected')),
    key                  text NOT NULL DEFAULT '',
    content              text NOT NULL DEFAULT '',
    content_hash         text NOT NULL DEFAULT '',
    memory_kind          text,
    confidence           double precision NOT NULL DEFAULT 0,
    source_kind          text,
    source_thread_id     text,
    source_message_ids   text[] NOT NULL DEFAULT '{}',
    source_run_id        text,
    source_first_offset  bigint,
    source_last_offset   bigint,
    supersedes_memory_id uuid,
    procedure_id         uuid,
    memory_id            uuid,
    created_at           timestamptz NOT NULL,
    decided_at           timestamptz,
    decided_by           jsonb,
    PRIMARY KEY (account_id, environment, id)
);
-- The same fact is pending at most once per agent and scope owner.
CREATE UNIQUE INDEX learning_suggestions_pending_fact
    ON learning_suggestions (account_id, environment, agent_id, scope, owner_user_id, content_hash)
    WHERE status = 'pending' AND kind IN ('memory', 'supersede');
CREATE UNIQUE INDEX learning_suggestions_skill
    ON learning_suggestions (account_id, environment, procedure_id) WHERE kind = 'skill';
CREATE INDEX learning_suggestions_by_agent
    ON learning_suggestions (account_id, environment, agent_id, status, created_at DESC, id);
CREATE INDEX learning_suggestions_decided ON learning_suggestions (decided_at)
    WHERE status <> 'pending';

CREATE TABLE procedures (
    id                   uuid NOT NULL,
    account_id           text NOT NULL,
    environment          text NOT NULL,
    -- 'private' from a person's own thread, 'agent' from a shared one.
    scope                text NOT NULL CHECK (scope IN ('agent', 'private')),
    agent_id             text NOT NULL,
    owner_user_id        text NOT NULL DEFAULT '',
    thread_id            text NOT NULL,
    run_id               text NOT NULL,
    turn_offset          bigint NOT NULL,
    task                 text NOT NULL,
    steps                jsonb NOT NULL,
    -- Task and steps: the same procedure is kept once per agent and owner.
    signature            text NOT NULL,
    successes            integer NOT NULL DEFAULT 0,
    thumbs_up            integer NOT NULL DEFAULT 0,
    thumbs_down          integer NOT NULL DEFAULT 0,
    -- Two thumbs down, or more downs than successes and ups, stop recall.
    recallable           boolean GENERATED ALWAYS AS
                         (thumbs_down < 2 AND thumbs_down <= successes + thumbs_up) STORED,
    skill_state          text NOT NULL DEFAULT 'none'
                         CHECK (skill_state IN ('none', 'proposed', 'accepted', 'rejected')),
    -- The task's embedding (float32), for exact similarity after the index's candidates.
    task_embedding       bytea NOT NULL,
    embedder             text NOT NULL,
    indexed_at           timestamptz,
    created_at           timestamptz NOT NULL,
    deleted_at           timestamptz,
    deleted_by           jsonb,
    PRIMARY KEY (account_id, environment, id),
    CHECK ((scope = 'private') = (owner_user_id <> ''))
);
CREATE UNIQUE INDEX procedures_once_per_turn
    ON procedures (account_id, environment, agent_id, thread_id, run_id, turn_offset);
CREATE UNIQUE INDEX procedures_live_signature
    ON procedures (account_id, environment, agent_id, owner_user_id, signature)
    WHERE deleted_at IS NULL;
CREATE INDEX procedures_by_agent ON procedures (account_id, environment, agent_id, created_at DESC, id);
CREATE INDEX procedures_unindexed ON procedures (account_id, environment) WHERE indexed_at IS NULL;
CREATE INDEX procedures_tombstones ON procedures (deleted_at) WHERE deleted_at IS NOT NULL;

-- A run that recalled a procedure, and what came of it.
CREATE TABLE procedure_uses (
    account_id           text NOT NULL,
    environment          text NOT NULL,
    agent_id             text NOT NULL,
    thread_id            text NOT NULL,
    run_id               text NOT NULL,
    procedure_id         uuid NOT NULL,
    recalled_at          timestamptz NOT NULL,
    outcome              text CHECK (outcome IN ('succeeded', 'failed', 'cancelled', 'timed_out')),
    rating               text CHECK (rating IN ('up', 'down')),
    PRIMARY KEY (account_id, environment, agent_id, thread_id, run_id, procedure_id),
    FOREIGN KEY (account_id, environment, procedure_id)
        REFERENCES procedures (account_id, environment, id) ON DELETE CASCADE
);
CREATE INDEX procedure_uses_by_procedure ON procedure_uses (account_id, environment, procedure_id);

CREATE TABLE learning_audit (
    id                   bigserial PRIMARY KEY,
    account_id           text NOT NULL,
    environment          text NOT NULL,
    scope                text NOT NULL,
    agent_id             text NOT NULL,
    owner_user_id        text NOT NULL DEFAULT '',
    subject_id           uuid,
    action               text NOT NULL CHECK (action IN ('suggest', 'accept', 'reject',
                             'record_procedure', 'delete_procedure', 'purge_procedure',
                             'extract')),
    actor_key_id         text NOT NULL DEFAULT '',
    actor_agent_id       text NOT NULL DEFAULT '',
    actor_user_id        text NOT NULL DEFAULT '',
    actor_role           text NOT NULL,
    at                   timestamptz NOT NULL,
    before               jsonb,
    after                jsonb
);
CREATE INDEX learning_audit_by_agent ON learning_audit (account_id, environment, agent_id, id);
