"""PostgreSQL adapters of memories, one per table family: ``entries`` (the memories,
their versions, audit trail, request replay and outbox; hygiene's statements),
``settings`` (account and agent settings, quotas' usage counters), ``entities`` (the
names memories mention); ``sql``: the statement builder, the visibility predicate
every capability's reads use, and row mapping; ``pinned_changes``: the triggers'
notifications of which accounts' pinned memories changed."""
