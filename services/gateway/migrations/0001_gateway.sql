-- API keys: the key fixes the caller's account. Only a hash of the secret part
-- is kept; the key itself is shown once, when an operator creates it.
CREATE TABLE api_keys (
    id          text PRIMARY KEY,
    account_id  text NOT NULL,
    name        text NOT NULL,
    secret_hash bytea NOT NULL,
    created_at  timestamptz NOT NULL DEFAULT now(),
    revoked_at  timestamptz
);
CREATE INDEX api_keys_by_account ON api_keys (account_id);

-- Thread records: which account, agent and (optionally) user a thread belongs to.
-- DeleteThread removes the record; PurgeThread also deletes everything derived.
CREATE TABLE threads (
    account_id    text NOT NULL,
    agent_id      text NOT NULL,
    thread_id     text NOT NULL,
    owner_user_id text NOT NULL DEFAULT '',
    environment   text NOT NULL,
    created_at    timestamptz NOT NULL DEFAULT now(),
    PRIMARY KEY (account_id, agent_id, thread_id)
);
