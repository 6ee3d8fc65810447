#!/usr/bin/env bash
# Regenerate clients/ruby/lib (or the directory given) from the public protos:
# the gateway's API and the types it uses (the common ones, and agent memory's
# messages that the library and retrieval services embed). Toolchain from Debian 12
# (tools/ensure_client_toolchains.sh): protoc 3.21.12 and grpc_ruby_plugin
# 1.51.1, matching the ruby-google-protobuf and ruby-grpc runtimes. The output
# is committed; tests/surfaces/test_clients.py fails when it is stale.
set -euo pipefail
HERE="$(cd "$(dirname "$0")" && pwd)"
ROOT="$(cd "$HERE/../.." && pwd)"
OUT="$(realpath -m "${1:-$HERE/lib}")"
PROTOC_VERSION="libprotoc 3.21.12"
PLUGIN_PACKAGE_VERSION="1.51.1"

if [ "$(protoc --version)" != "$PROTOC_VERSION" ]; then
    echo "need $PROTOC_VERSION (Debian protobuf-compiler), found $(protoc --version)" >&2
    exit 1
fi
plugin_version="$(dpkg-query -W -f='${Version}' protobuf-compiler-grpc)"
case "$plugin_version" in
    "$PLUGIN_PACKAGE_VERSION"-*) ;;
    *) echo "need protobuf-compiler-grpc $PLUGIN_PACKAGE_VERSION, found $plugin_version" >&2
       exit 1 ;;
esac
rm -rf "$OUT"
mkdir -p "$OUT"
cd "$ROOT/protos"
protoc -I . -I /usr/include --ruby_out="$OUT" --grpc_out="$OUT" \
    --plugin=protoc-gen-grpc="$(command -v grpc_ruby_plugin)" \
    $(find agentmemory/gateway agentmemory/common agentmemory/agent_memory -name '*.proto' \
        | LC_ALL=C sort)
