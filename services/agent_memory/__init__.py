"""Agent memory: curated entries that outlive a thread.

PostgreSQL is the authority; a Qdrant collection per (account, environment,
embedder) is an asynchronous projection used for hybrid recall. Modules:

- ``rules``: categories, capacities, size limits, pinning and decay constants;
- ``safety``: write-time screening (injection rejected, secrets forced private);
- ``migrations``/``repository``: the schema and every SQL statement;
- ``embeddings``, ``sparse``: dense vectors (local ONNX model or an
  OpenAI-compatible API) and BM25 sparse vectors;
- ``index``: one vector-index interface, two adapters (in-process Qdrant
  engine; Qdrant server through qdrant-client);
- ``projector``: drains the outbox into the index;
- ``recall``: the two-phase hybrid recall with its keyword fallback;
- ``memory``: the operations behind the RPCs; ``hygiene``: expiry and decay;
- ``retrieval``: RetrieveContext (seed 002): search legs, fusion, scoring,
  the token-budgeted compiler, receipts, trust, episodes;
- ``conversions``, ``servicer``, ``app``: the gRPC surface and its wiring.
"""
