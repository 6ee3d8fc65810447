#!/usr/bin/env bash
# Regenerate src/gen (or the directory given): the public protos, as clients/node/generate.sh
# does (the gateway's API, the common types, agent memory's messages the gateway embeds),
# plus google/rpc/error_details.proto (ErrorInfo, BadRequest: what every error carries),
# taken from googleapis-common-protos in the repository's .venv. TypeScript (target=ts),
# compiled with the SDK by tsc. Pinned: buf (pyproject.toml, dev extra) and protoc-gen-es
# (package-lock.json; `npm ci` first). The output is committed;
# tests/surfaces/test_clients.py fails when it is stale.
set -euo pipefail
HERE="$(cd "$(dirname "$0")" && pwd)"
ROOT="$(cd "$HERE/../.." && pwd)"
OUT="$(realpath -m "${1:-$HERE/src/gen}")"
BUF="${BUF:-$(command -v "$ROOT/.venv/bin/buf" || command -v buf)}"
PYTHON="${PYTHON:-$ROOT/.venv/bin/python}"
export PATH="$HERE/node_modules/.bin:$PATH"
rm -rf "$OUT"
cd "$ROOT"
"$BUF" generate --template clients/typescript/buf.gen.yaml --output "$OUT" \
    --path protos/agentmemory/gateway --path protos/agentmemory/common \
    --path protos/agentmemory/agent_memory
RPC="$(mktemp -d)"
trap 'rm -rf "$RPC"' EXIT
mkdir -p "$RPC/google/rpc"
cp "$("$PYTHON" -c 'from google.rpc import error_details_pb2 as m; import pathlib; print(pathlib.Path(m.__file__).parent)')/error_details.proto" \
    "$RPC/google/rpc/"
"$BUF" generate "$RPC" --template clients/typescript/buf.gen.yaml --output "$OUT"
