#!/usr/bin/env bash
# Regenerate clients/node/gen (or the directory given) from the public protos:
# the gateway's API and the types it uses (the common ones, and agent memory's
# messages that the library and retrieval services embed). Pinned: buf (pyproject.toml,
# dev extra) and protoc-gen-es (package-lock.json; `npm ci` first). The output
# is committed; tests/surfaces/test_clients.py fails when it is stale.
set -euo pipefail
HERE="$(cd "$(dirname "$0")" && pwd)"
ROOT="$(cd "$HERE/../.." && pwd)"
OUT="$(realpath -m "${1:-$HERE/gen}")"
BUF="${BUF:-$(command -v "$ROOT/.venv/bin/buf" || command -v buf)}"
export PATH="$HERE/node_modules/.bin:$PATH"
rm -rf "$OUT"
cd "$ROOT"
"$BUF" generate --template clients/node/buf.gen.yaml --output "$OUT" \
    --path protos/agentmemory/gateway --path protos/agentmemory/common \
    --path protos/agentmemory/agent_memory
