#!/usr/bin/env bash
# ThreadSanitizer: builds the tests with -sanitize=thread in a scratch folder of their own
# (.build-tsan, so the ordinary build is untouched) and runs the in-process unit tests
# (StateBusTests, ZeroMQTests, StateBusWireTests) and the etcd client's (StateBusEtcdTests:
# their etcd members are processes, but the client, its libcurl thread and the election run
# in the test process), at most 4 at a time; any report fails the run and is printed. Every
# lock in our code is a `Locked` (a pthread mutex, which ThreadSanitizer sees), so a report
# is a race to find, not noise. The tests that start StateBus processes are left out:
# ThreadSanitizer sees one process, and they run in deploy/test.sh.
#
#   deploy/tsan.sh      (part of CI and of deploy/check.sh)
set -euo pipefail
cd "$(dirname "$0")/.."
case "${1:-}" in
  "") ;;
  -h|--help) sed -n '2,11p' "$0"; exit 0 ;;
  *) echo "tsan.sh: unknown option '$1' (try --help)" >&2; exit 2 ;;
esac

deploy/setup.sh --etcd >/dev/null
export STATEBUS_STRICT=1
started=$(date +%s)
set +e
swift build --build-tests --sanitize=thread --scratch-path .build-tsan 2>&1 | grep -v 'prohibited flag(s)'
build_status=${PIPESTATUS[0]}
set -e
[ "$build_status" -eq 0 ] || { echo "tsan: the ThreadSanitizer build failed (above)"; exit 1; }
built=$(date +%s)
log=.build-tsan/test.log
if ! SWT_EXPERIMENTAL_MAXIMUM_PARALLELIZATION_WIDTH=4 TSAN_OPTIONS="halt_on_error=1" \
  swift test --skip-build --sanitize=thread --scratch-path .build-tsan \
  --filter 'StateBusTests|ZeroMQTests|StateBusWireTests|StateBusEtcdTests' > "$log" 2>&1; then
  grep -E '✘|ThreadSanitizer|SUMMARY|#[0-9]+ |error' "$log" | head -n 120 || true
  echo "tsan: failed (the whole log: $log)"
  exit 1
fi
grep -E '^(✔|✘) Test run' "$log" || true
echo "tsan: no report; build $((built - started)) s, tests $(($(date +%s) - built)) s"
