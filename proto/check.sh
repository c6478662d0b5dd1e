#!/usr/bin/env bash
# Fails when proto/statebus.proto changed without regenerating the Swift code.
set -euo pipefail
cd "$(dirname "$0")/.."
recorded=$(cat Sources/StateBusWire/Generated/statebus.proto.sha256)
actual=$(sha256sum proto/statebus.proto | cut -d' ' -f1)
if [ "$recorded" != "$actual" ]; then
  echo "proto/statebus.proto changed (sha256 $actual) but Sources/StateBusWire/Generated was made from $recorded:" >&2
  echo "run proto/generate.sh and commit the result." >&2
  exit 1
fi
echo "proto: generated code matches proto/statebus.proto"
