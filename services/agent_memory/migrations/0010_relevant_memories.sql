-- Relevant memories in every turn's context (seed 004's dispatcher): off by
-- default, so an agent's context stays as it was until an admin turns it on.
ALTER TABLE agent_settings
    ADD COLUMN relevant_memories_enabled      boolean NOT NULL DEFAULT false,
    ADD COLUMN relevant_memories_token_budget integer NOT NULL DEFAULT 1000
        CHECK (relevant_memories_token_budget BETWEEN 100 AND 8000);
