"""Transcript search: a ClickHouse projection of the journal.

- ``terms``: the analyzer (lower-case, stop words out, Snowball stems) and
  snippet marking;
- ``clickhouse``: one interface, two engines: in-process chDB (embedded
  default) and a ClickHouse server through clickhouse-driver, running the same
  SQL;
- ``schema``: the tables;
- ``projector``: follows the journal's change feed into ClickHouse, from a
  persisted cursor, idempotently, with visible lag;
- ``search``: SearchMessages (BM25 computed in ClickHouse SQL) and the
  per-thread match summaries;
- ``conversions``, ``servicer``, ``app``: the gRPC surface and its wiring.
"""
