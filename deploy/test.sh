#!/usr/bin/env bash
# The test command: installs what is missing, checks the generated protocol code against
# its .proto, then runs every test and prints a one-line summary.
set -euo pipefail
cd "$(dirname "$0")/.."

deploy/setup.sh
proto/check.sh

log=$(mktemp)
trap 'rm -f "$log"' EXIT
set +e
swift test 2>&1 | grep --line-buffered -v 'prohibited flag(s)' | tee "$log"
status=${PIPESTATUS[0]}
set -e

passed=$(grep -E '^(✔|􁁛) Test ' "$log" | grep -vc 'Test run with' || true)
failed=$(grep -cE '^(✘|􀢄) Test .* (failed|recorded)' "$log" || true)
echo "swift-testing: ${passed} passed, ${failed} failed"
exit "$status"
