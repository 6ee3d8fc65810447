#!/usr/bin/env bash
# Regenerate the SDK's copy of the generated Python code (src/agentmemory_client/_proto, or
# the directory given) from the public protos: the gateway's API and the types it uses (the
# common ones, and agent memory's messages that the library and retrieval services embed),
# as clients/node/generate.sh does. Pinned: grpcio-tools (pyproject.toml, dev extra). The
# copy lives inside the SDK's package (its imports are rewritten to say so), so installing
# the SDK never installs or shadows the server's `agentmemory` package. The output is
# committed; tests/surfaces/test_sdks.py fails when it is stale.
set -euo pipefail
HERE="$(cd "$(dirname "$0")" && pwd)"
ROOT="$(cd "$HERE/../.." && pwd)"
OUT="$(realpath -m "${1:-$HERE/src/agentmemory_client/_proto}")"
PYTHON="${PYTHON:-$ROOT/.venv/bin/python}"
WELL_KNOWN="$("$PYTHON" -c 'import grpc_tools, pathlib; print(pathlib.Path(grpc_tools.__file__).parent / "_proto")')"
rm -rf "$OUT"
mkdir -p "$OUT"
cd "$ROOT/protos"
"$PYTHON" -m grpc_tools.protoc -I. -I"$WELL_KNOWN" \
    --python_out="$OUT" --pyi_out="$OUT" --grpc_python_out="$OUT" \
    $(find agentmemory/gateway agentmemory/common agentmemory/agent_memory -name '*.proto' | sort)
find "$OUT" -name '*.py' -o -name '*.pyi' | sort | xargs sed -i \
    's/^from agentmemory\.\([a-z0-9_.]*\) import /from agentmemory_client._proto.agentmemory.\1 import /'
find "$OUT" -type d | while read -r dir; do touch "$dir/__init__.py"; done
