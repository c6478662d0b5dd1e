#!/usr/bin/env bash
# The test command: installs what is missing (etcd too, for the high-availability tests),
# checks the generated protocol code against its .proto, then runs every test (the Swift tests, then the Python client's) and prints a
# summary whose last line is the Swift tests' count.
set -euo pipefail
cd "$(dirname "$0")/.."

deploy/setup.sh --etcd
proto/check.sh
# Optional: protoc, pyzmq and protobuf let a test run the Python client of proto/PROTOCOL.md.
# Without them that one test is skipped (and says so); nothing else depends on them.
deploy/setup.sh --protoc >/dev/null 2>&1 || echo "test: protoc not installed; the third-party client test will be skipped"
python3 -c 'import zmq, google.protobuf' 2>/dev/null \
  || python3 -m pip install --quiet --disable-pip-version-check pyzmq protobuf >/dev/null 2>&1 \
  || echo "test: pyzmq/protobuf not installed; the third-party client test will be skipped"
# Optional: Chromium, chromedriver and Selenium let a test drive the inspector's page in a
# real browser. Without them that one test is skipped (and says so).
deploy/setup.sh --browser >/dev/null 2>&1 || echo "test: chromium/chromium-driver not installed; the inspector browser test will be skipped"
python3 -c 'import selenium' 2>/dev/null \
  || python3 -m pip install --quiet --disable-pip-version-check selenium >/dev/null 2>&1 \
  || echo "test: selenium not installed; the inspector browser test will be skipped"

# The Python client (clients/python) in a virtual environment of its own in .build, before
# the Swift tests, whose demo test then plays its Python view (STATEBUS_PYTHON). Its
# installation failing fails the run (pyzmq and protobuf come from PyPI), as its tests
# failing does.
python_status=0
if interpreter=$(deploy/python-client.sh --test); then
  export STATEBUS_PYTHON="$interpreter"
else
  python_status=1
  echo "test: could not install the Python client and its test tools into .build/python-client (see above)"
fi

log=$(mktemp)
trap 'rm -f "$log"' EXIT
# The statebus commands the tests run wait up to 60 s for a host (STATEBUS_TIMEOUT), not
# 10: early in a run the tests start dozens of processes at once on two cores.
export STATEBUS_TIMEOUT="${STATEBUS_TIMEOUT:-60}"
# At most 6 tests at a time. Swift Testing otherwise starts every test of a run at once,
# each with its processes, which on two cores shared with another build starved some for
# more than a minute (every wait then looks like a hang). The slowest tests set the run's
# length, so the bound costs no time. Swift Testing marks the variable experimental; a
# toolchain that ignores it runs every test at once, as before.
export SWT_EXPERIMENTAL_MAXIMUM_PARALLELIZATION_WIDTH="${SWT_EXPERIMENTAL_MAXIMUM_PARALLELIZATION_WIDTH:-6}"
# Three runs of the one test binary: every test but those below; then the high-availability
# and etcd tests, whose leases of a second or two are the time etcd and the group's hosts
# have to answer (at the start of the first run, hundreds of processes start on two
# cores); then the hostile-client stress test alone, whose ten flooding clients would only
# slow the others down (and theirs make its own load uneven).
stress='HostileClientTests'
leases='HighAvailability|StateBusEtcdTests'
set +e
swift test --skip "$stress|$leases" 2>&1 | grep --line-buffered -v 'prohibited flag(s)' | tee "$log"
status=${PIPESTATUS[0]}
swift test --skip-build --filter "$leases" 2>&1 | grep --line-buffered -v 'prohibited flag(s)' | tee -a "$log"
leases_status=${PIPESTATUS[0]}
swift test --skip-build --filter "$stress" 2>&1 | grep --line-buffered -v 'prohibited flag(s)' | tee -a "$log"
stress_status=${PIPESTATUS[0]}
set -e
[ "$status" -eq 0 ] && status=$leases_status
[ "$status" -eq 0 ] && status=$stress_status

# The Python client's tests, against the statebus executable this run built.
python_summary="python client: not run"
if [ "$python_status" -eq 0 ]; then
  set +e
  STATEBUS_EXECUTABLE="$(swift build --show-bin-path)/statebus" "$STATEBUS_PYTHON" -m pytest -q -p no:cacheprovider clients/python/tests 2>&1 \
    | tee "$log.python"
  python_status=${PIPESTATUS[0]}
  python_summary="python client: $(grep -E '[0-9]+ (passed|failed)' "$log.python" | tail -n 1)"
  rm -f "$log.python"
  set -e
fi
[ "$status" -eq 0 ] && status=$python_status

passed=$(grep -E '^(✔|􁁛) Test ' "$log" | grep -vc 'Test run with' || true)
failed=$(grep -cE '^(✘|􀢄) Test .* (failed|recorded)' "$log" || true)
echo "$python_summary"
echo "swift-testing: ${passed} passed, ${failed} failed"
exit "$status"
