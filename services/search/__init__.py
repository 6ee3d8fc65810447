"""Transcript search: a ClickHouse projection of the journal, searched by BM25 and by
embedding similarity, fused by reciprocal rank.

- ``terms``: the analyzer (lower-case, stop words out, Snowball stems) and
  snippet marking;
- ``clickhouse``: one interface, two engines: in-process chDB (embedded
  default) and a ClickHouse server through clickhouse-driver, running the same
  SQL;
- ``schema``: the tables; ``tenancy``: the caller's scope in every statement;
- ``projector``: follows the journal's change feed into ClickHouse (messages,
  postings, thread totals), from a persisted cursor, idempotently;
- ``lag``: how far each follower of the feed is behind the journal;
- ``keyword``: the BM25 leg and the cached scope sizes it needs;
- ``hot_scopes``: small scopes searched lately, kept in process and ranked
  there without a statement (the same results as the ClickHouse paths);
- ``dense``: the embeddings' own follower of the feed and the similarity leg;
- ``fusion``: reciprocal-rank fusion of the legs, times a length prior;
- ``search``: SearchMessages (ranking, what hits show) and the per-thread
  match summaries;
- ``conversions``, ``servicer``, ``app``: the gRPC surface and its wiring.
"""
