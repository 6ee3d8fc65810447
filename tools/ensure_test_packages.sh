#!/usr/bin/env bash
# Debian packages the test suite needs beyond PyPI: clickhouse-server, for the
# ClickHouse driver path (the only ClickHouse server installable offline here).
set -euo pipefail
if [ -x /usr/sbin/clickhouse-server ]; then
    exit 0
fi
if [ "$(id -u)" != 0 ] || ! command -v apt-get >/dev/null; then
    echo "warning: clickhouse-server is not installed and cannot be installed here" \
         "(needs root and apt-get); the ClickHouse driver-path tests will fail" >&2
    exit 0
fi
export DEBIAN_FRONTEND=noninteractive
apt-get install -y -q --no-install-recommends clickhouse-server >/dev/null \
    || { apt-get update -q >/dev/null && apt-get install -y -q --no-install-recommends \
         clickhouse-server >/dev/null; }
echo "installed clickhouse-server $(dpkg-query -W -f='${Version}' clickhouse-server)"
