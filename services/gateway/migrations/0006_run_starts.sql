-- Runs started per account and UTC day: the account's runs_per_day quota
-- (an account setting in agent memory). Only today's row is kept.
CREATE TABLE run_starts (
    account_id text NOT NULL,
    day        date NOT NULL,
    runs       integer NOT NULL DEFAULT 0,
    PRIMARY KEY (account_id, day)
);
