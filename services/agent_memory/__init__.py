"""Agent memory: every memory of an account, its history and its settings.

PostgreSQL is the authority; a Qdrant collection per (account, environment,
embedder) is an asynchronous projection of the live memories, used for hybrid
recall. Modules:

- ``rules``: scopes, kinds and their limits, sources, pinning, recall, decay
  and settings bounds; ``permissions``: which role may change what;
- ``model``: the domain objects; ``validation``: input checks and the screen;
- ``safety``: write-time screening (injection rejected, secrets forced private);
- ``writes``: every change and the rules that decide it (replay, expiry,
  replace, capacity, versions, supersede, tombstones, import, settings);
- ``migrations``, ``sql`` (the visibility predicate every read uses, row
  mapping) and ``repository``: the schema and every SQL statement;
- ``exchange``: the JSON form of memories (audit snapshots, export/import);
- ``sparse``: BM25 sparse vectors; dense vectors come from ``libs.embeddings``;
- ``index``: one vector-index interface, two adapters (in-process Qdrant
  engine; Qdrant server through qdrant-client);
- ``projector``: drains the outbox into the index;
- ``recall``: the two-phase hybrid recall with its keyword fallback;
- ``memory``: the operations behind the RPCs (reads; changes through
  ``writes``); ``hygiene``: expiry, decay, pruning and purging;
- ``retrieval``: RetrieveContext (seed 002): search legs, fusion, scoring,
  the token-budgeted compiler, receipts, trust, episodes;
- ``learning``: learning from finished runs (seed 004): extraction,
  suggestions, procedures;
- ``conversions``, ``servicer``, ``app``: the gRPC surface and its wiring;
  ``admin`` and ``reindex``: the operator's command lines.
"""
