-- Sessions of the memory library page (/a/<account>/memory). The row is found by
-- the SHA-256 of the session id (the cookie holds the id itself), and the API
-- key the session acts with is sealed with a key derived from the session id
-- and GATEWAY_SESSION_SECRET: this table alone yields neither a live cookie
-- nor an API key. Expired rows are deleted at each sign-in.
CREATE TABLE web_sessions (
    id_hash    bytea PRIMARY KEY,
    account_id text NOT NULL,
    sealed_key bytea NOT NULL,
    agent_id   text NOT NULL,
    user_id    text NOT NULL DEFAULT '',
    created_at timestamptz NOT NULL DEFAULT now(),
    expires_at timestamptz NOT NULL
);
CREATE INDEX web_sessions_by_expiry ON web_sessions (expires_at);
