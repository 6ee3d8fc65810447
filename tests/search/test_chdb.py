"""The embedded ClickHouse (chDB) as the search service opens it."""

from __future__ import annotations

from services.search.clickhouse import ChdbClickHouse


async def test_the_embedded_engine_reads_its_memory_use_once_a_second_not_ten_times(tmp_path):
    """Its memory worker wakes at this period, idle or not."""
    clickhouse = ChdbClickHouse(tmp_path / "chdb")
    try:
        rows = await clickhouse.query(
            "SELECT value FROM system.server_settings WHERE name = 'memory_worker_period_ms'")
        assert rows == [{"value": "1000"}]
        await clickhouse.execute("CREATE TABLE t (n UInt8) ENGINE = MergeTree ORDER BY n")
        await clickhouse.insert("t", ["n"], [(1,), (2,)])
        assert await clickhouse.query("SELECT sum(n) AS s FROM t") == [{"s": 3}]
    finally:
        await clickhouse.close()
