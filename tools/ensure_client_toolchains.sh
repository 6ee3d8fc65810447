#!/usr/bin/env bash
# What the surface tests need besides Python packages (tests/surfaces run it first):
# - Ruby: the interpreter and its gRPC runtime, protoc and the gRPC Ruby
#   plugin and the well-known .proto files, all from Debian (needs root and apt-get when missing);
# - Chromium from Debian, which Playwright drives for the memory library page's tests
#   (Playwright's own browser downloads are never used);
# - Node: the packages pinned by clients/node/package-lock.json and
#   clients/typescript/package-lock.json (`npm ci`, rerun whenever a lockfile changes).
# Idempotent and quick when everything is in place.
set -euo pipefail
ROOT="$(cd "$(dirname "$0")/.." && pwd)"
PACKAGES=(ruby ruby-grpc protobuf-compiler protobuf-compiler-grpc libprotobuf-dev chromium)

missing=()
for package in "${PACKAGES[@]}"; do
    dpkg-query -W -f='${Status}' "$package" 2>/dev/null | grep -q "install ok installed" \
        || missing+=("$package")
done
if [ ${#missing[@]} -gt 0 ]; then
    if [ "$(id -u)" != 0 ] || ! command -v apt-get >/dev/null; then
        echo "warning: ${missing[*]} not installed and cannot be installed here (needs root" \
             "and apt-get); the Ruby client and browser tests will fail" >&2
    else
        export DEBIAN_FRONTEND=noninteractive
        apt-get install -y -q --no-install-recommends "${missing[@]}" >/dev/null \
            || { apt-get update -q >/dev/null && apt-get install -y -q --no-install-recommends \
                 "${missing[@]}" >/dev/null; }
        echo "installed ${missing[*]}"
    fi
fi

for NODE_DIR in "$ROOT/clients/node" "$ROOT/clients/typescript"; do
    STAMP="$NODE_DIR/node_modules/.lockfile-sha256"
    wanted="$(sha256sum "$NODE_DIR/package-lock.json" | cut -d' ' -f1)"
    if [ "$(cat "$STAMP" 2>/dev/null)" != "$wanted" ]; then
        if ! command -v npm >/dev/null; then
            echo "warning: npm is not installed; the Node client tests will fail" >&2
            exit 0
        fi
        (cd "$NODE_DIR" && npm ci --no-audit --no-fund --loglevel=error >/dev/null)
        echo "$wanted" > "$STAMP"
        echo "installed ${NODE_DIR#"$ROOT/"}/node_modules (npm ci)"
    fi
done
