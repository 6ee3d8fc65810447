-- The permission model of keys (see services/gateway/keys.py):
-- * act_for_users: the key may state or name any user of its account (a service
--   key serving many end users). Keys created before this migration could state
--   any user, so they keep that permission; a new key has it only when created
--   with it.
-- * user_id: the one user the key acts as ('' = none), whatever a request says;
-- * agent_ids: the agents the key may act as (empty = any agent of the account);
-- * a rotation keeps the key's id and gives it a new secret; the previous
--   secret keeps working until previous_valid_until (a grace period, maybe none);
-- * last_used_at: when the key (or a user token it minted) was last verified.
ALTER TABLE api_keys
    ADD COLUMN act_for_users boolean NOT NULL DEFAULT true,
    ADD COLUMN user_id text NOT NULL DEFAULT '',
    ADD COLUMN agent_ids text[] NOT NULL DEFAULT '{}',
    ADD COLUMN rotated_at timestamptz,
    ADD COLUMN previous_secret_hash bytea,
    ADD COLUMN previous_valid_until timestamptz,
    ADD COLUMN last_used_at timestamptz;
ALTER TABLE api_keys ALTER COLUMN act_for_users SET DEFAULT false;
ALTER TABLE api_keys ADD CONSTRAINT api_keys_one_user_or_many
    CHECK (NOT (act_for_users AND user_id <> ''));

-- What was done with an account's credentials, by whom: created, rotated,
-- revoked, a user token minted. The key's own use is api_keys.last_used_at, and
-- every memory change names the key it came with (agent memory's audit trail).
CREATE TABLE key_events (
    id         bigserial PRIMARY KEY,
    account_id text NOT NULL,
    key_id     text NOT NULL,
    action     text NOT NULL CHECK (action IN ('created', 'rotated', 'revoked', 'token_minted')),
    -- the key that did it ('' = the operator's command line)
    by_key_id  text NOT NULL DEFAULT '',
    detail     jsonb NOT NULL DEFAULT '{}'::jsonb,
    at         timestamptz NOT NULL DEFAULT now()
);
CREATE INDEX key_events_by_account ON key_events (account_id, id);
