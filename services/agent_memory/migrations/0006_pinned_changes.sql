-- Announce every change that can alter a ListPinned answer, whoever makes it
-- (the library, the tools, hygiene, extraction, flush, imports, the admin
-- CLI, a hand-written statement): NOTIFY agent_memory_pinned with the
-- account id, sent when, and only if, the transaction commits. Agent memory
-- relays these to gateways (WatchPinnedChanges), which cache ListPinned.
--
-- ListPinned reads memory_entries (pinned facts and blocks), procedures
-- (procedures_recallable) and account_settings (memory_enabled).
--
-- Statement-level triggers with transition tables: one trigger call and one
-- notification per account per statement, however many rows it touches
-- (PostgreSQL also folds identical notifications of one transaction into one),
-- so a 100k-row import announces its account once, not 100k times.
-- Updates that change nothing ListPinned shows are not announced: a recall's
-- counters (recall_count, last_recalled_at; every memory_recall bumps them,
-- and context builders do not read them) and hygiene's decay bookkeeping
-- (last_decayed_at; the importance it lowers is announced), and on procedures
-- their scoring and bookkeeping (successes, thumbs, skill state, indexed_at,
-- deleted_by: what shows is only whether one is recallable, and by whom).
-- TRUNCATE announces '*': every account.

-- The trigger's arguments name the columns whose changes are not announced.
CREATE FUNCTION announce_pinned_rows() RETURNS trigger LANGUAGE plpgsql AS $$
BEGIN
    IF TG_OP = 'INSERT' THEN
        PERFORM pg_notify('agent_memory_pinned', account_id)
            FROM (SELECT DISTINCT account_id FROM added) AS changed;
    ELSIF TG_OP = 'DELETE' THEN
        PERFORM pg_notify('agent_memory_pinned', account_id)
            FROM (SELECT DISTINCT account_id FROM removed) AS changed;
    ELSE
        PERFORM pg_notify('agent_memory_pinned', account_id) FROM (
            SELECT DISTINCT coalesce(n.account_id, o.account_id) AS account_id
            FROM added AS n FULL JOIN removed AS o
                ON (n.account_id, n.environment, n.id) = (o.account_id, o.environment, o.id)
            WHERE n.id IS NULL OR o.id IS NULL
               OR to_jsonb(n) - TG_ARGV IS DISTINCT FROM to_jsonb(o) - TG_ARGV
        ) AS changed;
    END IF;
    RETURN NULL;
END $$;

CREATE FUNCTION announce_pinned_settings() RETURNS trigger LANGUAGE plpgsql AS $$
BEGIN
    IF TG_OP = 'DELETE' THEN
        PERFORM pg_notify('agent_memory_pinned', account_id)
            FROM (SELECT DISTINCT account_id FROM removed) AS changed;
    ELSE
        PERFORM pg_notify('agent_memory_pinned', account_id)
            FROM (SELECT DISTINCT account_id FROM added) AS changed;
    END IF;
    RETURN NULL;
END $$;

CREATE FUNCTION announce_pinned_truncate() RETURNS trigger LANGUAGE plpgsql AS $$
BEGIN
    PERFORM pg_notify('agent_memory_pinned', '*');
    RETURN NULL;
END $$;

CREATE TRIGGER memory_entries_inserted_pinned AFTER INSERT ON memory_entries
    REFERENCING NEW TABLE AS added
    FOR EACH STATEMENT EXECUTE FUNCTION announce_pinned_rows(
        'recall_count', 'last_recalled_at', 'last_decayed_at');
CREATE TRIGGER memory_entries_updated_pinned AFTER UPDATE ON memory_entries
    REFERENCING OLD TABLE AS removed NEW TABLE AS added
    FOR EACH STATEMENT EXECUTE FUNCTION announce_pinned_rows(
        'recall_count', 'last_recalled_at', 'last_decayed_at');
CREATE TRIGGER memory_entries_deleted_pinned AFTER DELETE ON memory_entries
    REFERENCING OLD TABLE AS removed
    FOR EACH STATEMENT EXECUTE FUNCTION announce_pinned_rows(
        'recall_count', 'last_recalled_at', 'last_decayed_at');
CREATE TRIGGER memory_entries_truncated_pinned AFTER TRUNCATE ON memory_entries
    FOR EACH STATEMENT EXECUTE FUNCTION announce_pinned_truncate();

CREATE TRIGGER procedures_inserted_pinned AFTER INSERT ON procedures
    REFERENCING NEW TABLE AS added
    FOR EACH STATEMENT EXECUTE FUNCTION announce_pinned_rows(
        'successes', 'thumbs_up', 'thumbs_down', 'skill_state', 'indexed_at', 'deleted_by');
CREATE TRIGGER procedures_updated_pinned AFTER UPDATE ON procedures
    REFERENCING OLD TABLE AS removed NEW TABLE AS added
    FOR EACH STATEMENT EXECUTE FUNCTION announce_pinned_rows(
        'successes', 'thumbs_up', 'thumbs_down', 'skill_state', 'indexed_at', 'deleted_by');
CREATE TRIGGER procedures_deleted_pinned AFTER DELETE ON procedures
    REFERENCING OLD TABLE AS removed
    FOR EACH STATEMENT EXECUTE FUNCTION announce_pinned_rows(
        'successes', 'thumbs_up', 'thumbs_down', 'skill_state', 'indexed_at', 'deleted_by');
CREATE TRIGGER procedures_truncated_pinned AFTER TRUNCATE ON procedures
    FOR EACH STATEMENT EXECUTE FUNCTION announce_pinned_truncate();

CREATE TRIGGER account_settings_inserted_pinned AFTER INSERT ON account_settings
    REFERENCING NEW TABLE AS added
    FOR EACH STATEMENT EXECUTE FUNCTION announce_pinned_settings();
CREATE TRIGGER account_settings_updated_pinned AFTER UPDATE ON account_settings
    REFERENCING NEW TABLE AS added
    FOR EACH STATEMENT EXECUTE FUNCTION announce_pinned_settings();
CREATE TRIGGER account_settings_deleted_pinned AFTER DELETE ON account_settings
    REFERENCING OLD TABLE AS removed
    FOR EACH STATEMENT EXECUTE FUNCTION announce_pinned_settings();
CREATE TRIGGER account_settings_truncated_pinned AFTER TRUNCATE ON account_settings
    FOR EACH STATEMENT EXECUTE FUNCTION announce_pinned_truncate();
