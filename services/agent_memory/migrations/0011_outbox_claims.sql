-- The projector claims outbox rows in one short transaction and finishes them in a
-- second, with the embedding and the index calls between them outside any
-- transaction. A claim is a lease: it moves next_attempt_at to the lease's expiry,
-- so the rows of a worker that died come due again by themselves, and claimed_by
-- names the claim, so a worker whose lease ran out finishes nothing another worker
-- has claimed since.
ALTER TABLE memory_outbox ADD COLUMN claimed_by uuid;
