"""PostgreSQL adapters of memories: ``sql`` (the statement builder, the visibility
predicate every slice's reads use, row mapping) and ``entries`` (the memories, their
versions, audit, outbox and settings)."""
