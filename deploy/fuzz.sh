#!/usr/bin/env bash
# Fuzzes a host's request handling and a replica's publication handling (issue 12, item 9):
#
#   deploy/fuzz.sh [SECONDS] [extra statebus-fuzz options]     default 600 s
#   deploy/fuzz.sh 300 --target replica                          one target only
#
# The host target gets requests of protocol versions 1 and 2 (version 2's writes in the write
# path's own encoding) and subscriptions; the replica target (a version-2 replica) gets what
# its host would send it: version-2 welcomes with property tables, snapshot parts, runs of
# updates on u2/<object> (valid ones from the host's encoders, damaged and mutated ones),
# heartbeats, join markers and write answers, from a stand-in host that also answers its
# requests and its writes.
#
# Builds the standalone harness `statebus-fuzz` in release into a scratch folder of its own
# (.build-fuzz, so the ordinary build is untouched) and runs it with the corpus in
# deploy/fuzz/corpus. Failing inputs go to .build-fuzz/crashes/ (ignored by git; replay one with
# `.build-fuzz/release/statebus-fuzz --replay FILE --target host|replica`).
# Regenerate the corpus after a protocol change with
# `.build-fuzz/release/statebus-fuzz --write-corpus deploy/fuzz/corpus`. Inputs of bugs found
# and fixed are kept in deploy/fuzz/regressions (see its README.md). Not run in CI.
set -euo pipefail
cd "$(dirname "$0")/.."

seconds="${1:-600}"
shift || true
case "$seconds" in
  ''|*[!0-9]*) echo "fuzz.sh: SECONDS must be a whole number, got '$seconds' (try: deploy/fuzz.sh 1800)" >&2; exit 2 ;;
esac

swift build -c release --scratch-path .build-fuzz --product statebus-fuzz
binary=.build-fuzz/release/statebus-fuzz

# The harness prints progress every 10 s, each finding as it happens, and a summary.
exec "$binary" --duration "$seconds" --corpus deploy/fuzz/corpus --crash-dir .build-fuzz/crashes "$@"
