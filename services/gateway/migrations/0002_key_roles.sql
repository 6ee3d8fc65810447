-- API keys get a role: 'agent' (an agent or application) or 'admin' (an
-- account administrator: account memories, rules, imports, settings). Keys
-- created before roles existed could do everything their account could, so
-- they become admin keys; every new key states its role.
ALTER TABLE api_keys
    ADD COLUMN role text NOT NULL DEFAULT 'admin' CHECK (role IN ('admin', 'agent'));
ALTER TABLE api_keys ALTER COLUMN role DROP DEFAULT;
