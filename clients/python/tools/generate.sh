#!/usr/bin/env bash
# Regenerates the Python client's protocol module from proto/statebus.proto and records the
# .proto's checksum beside it (tools/check_generated.py compares both, and the tests run it).
#
# Needs protoc (deploy/setup.sh --protoc installs Debian's protobuf-compiler). The module is
# committed, so users of the package never need protoc.
set -euo pipefail
cd "$(dirname "$0")/../../.."
command -v protoc >/dev/null || { echo "generate: protoc missing: run deploy/setup.sh --protoc" >&2; exit 1; }
out=clients/python/src/statebus/_wire
protoc --python_out="$out" --pyi_out="$out" -I proto proto/statebus.proto
sha256sum proto/statebus.proto | cut -d' ' -f1 > "$out/statebus.proto.sha256"
echo "generate: wrote $out/statebus_pb2.py and .pyi ($(protoc --version))"
