"""Journal: the sole durable authority for every thread's messages and tool calls.

Each shard is one SlateDB database (local filesystem or S3-compatible object
store) with exactly one fenced writer. Modules:

- ``settings``: configuration from ``JOURNAL_*`` variables;
- ``object_store``: the SlateDB object store for the configured backend;
- ``keys``: the key layout inside a shard;
- ``shard``: one shard: append (group commit, idempotency), reads, change feed,
  fencing;
- ``journal``: the set of shards and the placement of threads on them;
- ``validation``: request limits and field checks;
- ``tool_calls``: the tool-call record and its byte-range paging;
- ``conversions``: proto <-> domain;
- ``servicer``: the gRPC JournalService;
- ``app``: wiring and the process entry point.
"""
