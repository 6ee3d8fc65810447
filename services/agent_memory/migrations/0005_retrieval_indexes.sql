-- Retrieval at scale (issue 11's benchmark: 100k memories in one account).
--
-- The type leg and routed queries ("recent decisions") read the newest
-- memories of a kind: one ordered range per kind and visible part (owner),
-- instead of sorting every memory of the kind.
CREATE INDEX memory_entries_by_kind
    ON memory_entries (account_id, environment, scope, agent_id, owner_user_id, kind,
                       created_at DESC, id)
    WHERE deleted_at IS NULL;

-- Full text per account: with the words alone in the index, a search in a
-- small account visits every match of its words in every account (with
-- 100k memories elsewhere in the table, 1k in its own: 1.9 ms of PostgreSQL
-- CPU instead of 0.8; 10k in its own: 9.5 instead of 3.0). btree_gin lets
-- the account and environment join the words in one GIN index.
CREATE EXTENSION IF NOT EXISTS btree_gin;
CREATE INDEX memory_entries_search_simple_by_account
    ON memory_entries USING gin (account_id, environment, search_simple);
DROP INDEX memory_entries_search_simple;
CREATE INDEX memory_versions_search_simple_by_account
    ON memory_versions USING gin (account_id, environment, search_simple);
DROP INDEX memory_versions_search_simple;
CREATE INDEX episode_sentences_search_by_account
    ON episode_sentences USING gin (account_id, environment, search);
DROP INDEX episode_sentences_search;
