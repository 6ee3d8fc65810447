-- A run the journal closes for idleness ends timed_out, and learning records its
-- episode like any other's (RecordEpisode accepts the outcome); the check, written
-- before that outcome existed, refused the row: an INTERNAL for the call.
ALTER TABLE episodes DROP CONSTRAINT episodes_outcome_check;
ALTER TABLE episodes ADD CONSTRAINT episodes_outcome_check
    CHECK (outcome IN ('succeeded', 'failed', 'cancelled', 'timed_out'));
