-- Environments become an account setting, and per-account quotas bound what any
-- key can make the platform allocate (see AccountSettings in the proto).

-- The environments callers may name. An account that already has data keeps
-- every environment its data is in (and "default"); a new account has "default".
ALTER TABLE account_settings
    ADD COLUMN environments text[] NOT NULL DEFAULT '{default}',
    -- The operator's quotas for the account; NULL: the platform default.
    ADD COLUMN quota_environments integer CHECK (quota_environments > 0),
    ADD COLUMN quota_memories bigint CHECK (quota_memories > 0),
    ADD COLUMN quota_pending_suggestions integer CHECK (quota_pending_suggestions > 0),
    ADD COLUMN quota_receipts_per_day integer CHECK (quota_receipts_per_day > 0),
    ADD COLUMN quota_runs_per_day integer CHECK (quota_runs_per_day > 0);

WITH used AS (
    SELECT account_id, environment FROM memory_entries
    UNION SELECT account_id, environment FROM agent_settings
    UNION SELECT account_id, environment FROM learning_runs
    UNION SELECT account_id, environment FROM learning_suggestions
    UNION SELECT account_id, environment FROM procedures
    UNION SELECT account_id, environment FROM episodes
    UNION SELECT account_id, environment FROM retrieval_receipts
), lists AS (
    SELECT account_id, array_agg(DISTINCT environment ORDER BY environment) AS environments
    FROM (SELECT account_id, environment FROM used
          UNION SELECT account_id, 'default' FROM used) every
    WHERE account_id <> ''
    GROUP BY account_id
)
INSERT INTO account_settings (account_id, updated_at, environments)
SELECT account_id, now(), environments FROM lists
ON CONFLICT (account_id) DO UPDATE SET environments = EXCLUDED.environments;

-- Stored memories per account, kept by the statements that insert and delete them
-- (so the quota check is one primary-key read, whoever writes).
CREATE TABLE account_usage (
    account_id text PRIMARY KEY,
    memories   bigint NOT NULL DEFAULT 0
);
INSERT INTO account_usage (account_id, memories)
SELECT account_id, count(*) FROM memory_entries GROUP BY account_id;

CREATE FUNCTION count_account_memories() RETURNS trigger LANGUAGE plpgsql AS $$
BEGIN
    IF TG_OP = 'INSERT' THEN
        INSERT INTO account_usage (account_id, memories)
        SELECT account_id, count(*) FROM added GROUP BY account_id
        ON CONFLICT (account_id) DO UPDATE
            SET memories = account_usage.memories + EXCLUDED.memories;
    ELSE
        UPDATE account_usage u SET memories = u.memories - d.n
        FROM (SELECT account_id, count(*) AS n FROM removed GROUP BY account_id) d
        WHERE u.account_id = d.account_id;
    END IF;
    RETURN NULL;
END $$;
CREATE TRIGGER memory_entries_counted_in AFTER INSERT ON memory_entries
    REFERENCING NEW TABLE AS added FOR EACH STATEMENT EXECUTE FUNCTION count_account_memories();
CREATE TRIGGER memory_entries_counted_out AFTER DELETE ON memory_entries
    REFERENCING OLD TABLE AS removed FOR EACH STATEMENT EXECUTE FUNCTION count_account_memories();

-- Receipts made per account and UTC day (RetrieveContext's quota), counted by the
-- statement that makes each receipt. Days before yesterday are deleted by hygiene.
CREATE TABLE account_daily_usage (
    account_id text NOT NULL,
    day        date NOT NULL,
    receipts   integer NOT NULL DEFAULT 0,
    PRIMARY KEY (account_id, day)
);

-- Hygiene deletes receipts older than the account's retention window.
CREATE INDEX retrieval_receipts_by_age ON retrieval_receipts (created_at);
