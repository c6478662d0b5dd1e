#!/usr/bin/env bash
# Regenerates Sources/StateBusWire/Generated/ from proto/statebus.proto and records the
# .proto's checksum beside the generated code (proto/check.sh compares them in CI).
#
# Needs protoc (deploy/setup.sh --protoc) and the swift-protobuf plugin, built once into an
# ignored scratch folder: set PROTOC_GEN_SWIFT to its path, or let this script build it
# from the swift-protobuf checkout SwiftPM already fetched (.build/checkouts/swift-protobuf).
set -euo pipefail
cd "$(dirname "$0")/.."

plugin=${PROTOC_GEN_SWIFT:-}
if [ -z "$plugin" ]; then
  plugin=.build-protoc/release/protoc-gen-swift
  if [ ! -x "$plugin" ]; then
    [ -d .build/checkouts/swift-protobuf ] || swift package resolve
    echo "generate: building protoc-gen-swift once into .build-protoc (about a minute)"
    swift build -c release --package-path .build/checkouts/swift-protobuf \
      --scratch-path .build-protoc --product protoc-gen-swift
  fi
fi
command -v protoc >/dev/null || { echo "generate: protoc missing: run deploy/setup.sh --protoc" >&2; exit 1; }

out=Sources/StateBusWire/Generated
mkdir -p "$out"
protoc --plugin=protoc-gen-swift="$plugin" \
  --swift_opt=Visibility=Package --swift_opt=FileNaming=DropPath \
  --swift_out="$out" -I proto proto/statebus.proto
sha256sum proto/statebus.proto | cut -d' ' -f1 > "$out/statebus.proto.sha256"
echo "generate: wrote $out/statebus.pb.swift"
