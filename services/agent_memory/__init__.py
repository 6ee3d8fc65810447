"""Agent memory: every memory of an account, its history and its settings.

PostgreSQL is the authority; a Qdrant collection per (account, environment,
embedder) is an asynchronous projection of the live memories, used for hybrid
recall. The folders are the capabilities, each laid out alike (``model`` and the
domain modules, ``service``, ``store``, ``conversions`` + ``servicer`` for gRPC):

- ``memories``: the memory model and its rules, every change, recall, hygiene, the
  projection into the index, and the SQL over memories (``memories.store.sql``: the
  visibility predicate every read uses);
- ``retrieval``: RetrieveContext (seed 002); ``learning``: learning from runs (seed 004);
- ``index`` (the vector index: one interface, two adapters) and ``safety`` (the
  write-time screen): adapters every capability uses;
- here, the entry points: ``__main__`` and ``app`` (the one bootstrap), ``settings``,
  ``migrations``, and the operator's command lines ``admin`` and ``reindex``.
"""
