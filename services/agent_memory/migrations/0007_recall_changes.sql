-- Gateways now keep RecallProcedures answers beside ListPinned's, dropped by the
-- same announcements (agent_memory_pinned, one per account). A recalled
-- procedure shows more than whether it is recallable: its successes (in the
-- rendered block), its skill state (an accepted skill ranks first among equal
-- similarities), and indexed_at decides whether it is compared directly or
-- offered by the index. So changes to those are announced too. Still not
-- announced: thumbs alone (what they decide, recallable, is a generated column
-- and announced when it changes) and deleted_by (it changes with deleted_at).
-- INSERT and DELETE announce every row whatever their arguments.
DROP TRIGGER procedures_updated_pinned ON procedures;
CREATE TRIGGER procedures_updated_pinned AFTER UPDATE ON procedures
    REFERENCING OLD TABLE AS removed NEW TABLE AS added
    FOR EACH STATEMENT EXECUTE FUNCTION announce_pinned_rows(
        'thumbs_up', 'thumbs_down', 'deleted_by');
