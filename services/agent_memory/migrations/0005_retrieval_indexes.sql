-- Retrieval at scale (issue 11's benchmark: 100k memories in one account).
--
-- The type leg and routed queries ("recent decisions") read the newest
-- memories of a kind: one ordered range per kind and visible part (owner),
-- instead of sorting every memory of the kind.
CREATE INDEX memory_entries_by_kind
    ON memory_entries (account_id, environment, scope, agent_id, owner_user_id, kind,
                       created_at DESC, id)
    WHERE deleted_at IS NULL;
