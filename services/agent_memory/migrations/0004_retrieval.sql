-- Retrieval (seed 002): RetrieveContext's search legs, delivery receipts and
-- the credit feedback and outcomes give to what a receipt delivered.
--
-- Full text in the 'simple' configuration (no stemming, as the seed says),
-- on current memories and on every recorded version (as-of reads search the
-- version that was current then).
ALTER TABLE memory_entries ADD COLUMN search_simple tsvector GENERATED ALWAYS AS
    (to_tsvector('simple', replace(key, '_', ' ') || ' ' || content)) STORED;
CREATE INDEX memory_entries_search_simple ON memory_entries USING gin (search_simple);
ALTER TABLE memory_versions ADD COLUMN search_simple tsvector GENERATED ALWAYS AS
    (to_tsvector('simple', replace(key, '_', ' ') || ' ' || content)) STORED;
CREATE INDEX memory_versions_search_simple ON memory_versions USING gin (search_simple);
-- Contradiction risk looks for other memories under the same key.
CREATE INDEX memory_entries_by_key ON memory_entries (account_id, environment, key);
-- A run's own memories (sessionEntries).
CREATE INDEX memory_entries_by_run ON memory_entries (account_id, environment, source_run_id)
    WHERE source_run_id IS NOT NULL;

-- Entities named in a memory (people, @handles, #tags, quoted terms, code
-- identifiers), extracted when the projector handles the memory's outbox
-- row, in the same transaction. Kept for every memory that is not deleted
-- (superseded ones included: include_superseded and the hidden count need
-- them). The entity leg matches them against the query; the graph leg walks
-- memory -> entity -> memory.
CREATE TABLE memory_entities (
    account_id          text NOT NULL,
    environment         text NOT NULL,
    memory_id           uuid NOT NULL,
    -- Lower-case, single-spaced: what queries are matched against.
    norm                text NOT NULL,
    name                text NOT NULL,
    -- model: found by the utility model (when configured), after the projection.
    kind                text NOT NULL CHECK (kind IN ('name', 'handle', 'hashtag', 'quoted',
                                                      'identifier', 'model')),
    PRIMARY KEY (account_id, environment, memory_id, norm),
    FOREIGN KEY (account_id, environment, memory_id)
        REFERENCES memory_entries (account_id, environment, id) ON DELETE CASCADE
);
CREATE INDEX memory_entities_by_norm ON memory_entities (account_id, environment, norm);

-- Every existing memory gets its entities (the projector extracts them).
INSERT INTO memory_outbox (entry_id, account_id, environment, next_attempt_at, created_at)
SELECT id, account_id, environment, now(), now() FROM memory_entries
WHERE deleted_at IS NULL AND scope <> 'platform';

-- Past runs: what was asked, how it ended, and its summary, one row per
-- (agent, thread, run). Scope columns as memories' ('private' when the run
-- had a user, 'agent' otherwise) so the one visibility predicate filters
-- them. The summary's sentences are the episode leg's documents.
CREATE TABLE episodes (
    account_id          text NOT NULL,
    environment         text NOT NULL,
    id                  uuid NOT NULL,
    scope               text NOT NULL CHECK (scope IN ('agent', 'private')),
    agent_id            text NOT NULL,
    owner_user_id       text NOT NULL DEFAULT '',
    thread_id           text NOT NULL,
    run_id              text NOT NULL,
    outcome             text NOT NULL CHECK (outcome IN ('succeeded', 'failed', 'cancelled')),
    task                text NOT NULL,
    summary             text NOT NULL,
    finished_at         timestamptz NOT NULL,
    recorded_at         timestamptz NOT NULL,
    PRIMARY KEY (account_id, environment, id),
    UNIQUE (account_id, environment, agent_id, thread_id, run_id),
    CHECK ((scope = 'private') = (owner_user_id <> ''))
);
CREATE INDEX episodes_by_run ON episodes (account_id, environment, run_id);

CREATE TABLE episode_sentences (
    account_id          text NOT NULL,
    environment         text NOT NULL,
    episode_id          uuid NOT NULL,
    position            integer NOT NULL,
    sentence            text NOT NULL,
    search              tsvector GENERATED ALWAYS AS (to_tsvector('simple', sentence)) STORED,
    PRIMARY KEY (account_id, environment, episode_id, position),
    FOREIGN KEY (account_id, environment, episode_id)
        REFERENCES episodes (account_id, environment, id) ON DELETE CASCADE
);
CREATE INDEX episode_sentences_search ON episode_sentences USING gin (search);

-- One row per RetrieveContext: exactly what was delivered, to whom, for
-- which run. Scope columns as episodes'.
CREATE TABLE retrieval_receipts (
    account_id          text NOT NULL,
    environment         text NOT NULL,
    id                  uuid NOT NULL,
    scope               text NOT NULL CHECK (scope IN ('agent', 'private')),
    agent_id            text NOT NULL,
    owner_user_id       text NOT NULL DEFAULT '',
    run_id              text NOT NULL,
    thread_id           text,
    query               text NOT NULL,
    mode                text NOT NULL,
    token_budget        integer NOT NULL,
    tokens_used         integer NOT NULL,
    -- Per section: included, dropped, tokens.
    sections            jsonb NOT NULL,
    created_at          timestamptz NOT NULL,
    PRIMARY KEY (account_id, environment, id)
);
CREATE INDEX retrieval_receipts_by_run ON retrieval_receipts (account_id, environment, run_id);

-- The memories a receipt delivered, at the version delivered. No foreign key
-- to memory_entries: a receipt outlives a purged memory.
CREATE TABLE retrieval_receipt_items (
    account_id          text NOT NULL,
    environment         text NOT NULL,
    receipt_id          uuid NOT NULL,
    memory_id           uuid NOT NULL,
    version             integer NOT NULL,
    section             text NOT NULL,
    position            integer NOT NULL,
    tokens              integer NOT NULL,
    PRIMARY KEY (account_id, environment, receipt_id, memory_id),
    FOREIGN KEY (account_id, environment, receipt_id)
        REFERENCES retrieval_receipts (account_id, environment, id) ON DELETE CASCADE
);

-- One row per RecordFeedback / RecordOutcome request id on a receipt: a
-- retry finds it and credits nothing again.
CREATE TABLE retrieval_credits (
    account_id          text NOT NULL,
    environment         text NOT NULL,
    receipt_id          uuid NOT NULL,
    request_id          text NOT NULL,
    request_hash        text NOT NULL,
    kind                text NOT NULL CHECK (kind IN ('feedback', 'outcome')),
    value               text NOT NULL,
    memory_ids          uuid[] NOT NULL,
    created_at          timestamptz NOT NULL,
    PRIMARY KEY (account_id, environment, receipt_id, request_id),
    FOREIGN KEY (account_id, environment, receipt_id)
        REFERENCES retrieval_receipts (account_id, environment, id) ON DELETE CASCADE
);

-- What deliveries of a memory were worth: the utility and evidence of its
-- trust breakdown (read time only: never ranking, unless a call asks for
-- value-aware scoring).
CREATE TABLE memory_utility (
    account_id          text NOT NULL,
    environment         text NOT NULL,
    memory_id           uuid NOT NULL,
    helpful             integer NOT NULL DEFAULT 0,
    unhelpful           integer NOT NULL DEFAULT 0,
    successes           integer NOT NULL DEFAULT 0,
    failures            integer NOT NULL DEFAULT 0,
    updated_at          timestamptz NOT NULL,
    PRIMARY KEY (account_id, environment, memory_id),
    FOREIGN KEY (account_id, environment, memory_id)
        REFERENCES memory_entries (account_id, environment, id) ON DELETE CASCADE
);
