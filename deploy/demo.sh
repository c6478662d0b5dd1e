#!/usr/bin/env bash
# The main job: installs what is missing (etcd too, for the high-availability app, and the
# Python client, for the shared text's Python view), builds, and runs the StateBus demo: the
# shared-text, profile, to-do and high-availability apps, every node a real process.
set -euo pipefail
cd "$(dirname "$0")/.."
deploy/setup.sh --etcd
# The shared-text app's fourth view is the Python client's: installed into .build when
# Python 3 and PyPI are at hand; without them the demo leaves it out and says why. It
# installs while Swift builds, since neither needs the other.
python_path=$(mktemp)
python_log=$(mktemp)
# In a process group of its own, so that a failed or interrupted build ends it with pip.
setsid -w deploy/python-client.sh > "$python_path" 2> "$python_log" &
python_install=$!
trap 'kill -- -"$python_install" 2>/dev/null || kill "$python_install" 2>/dev/null || true; rm -f "$python_path" "$python_log"' EXIT
swift build --product statebus 2>&1 | grep -v 'prohibited flag(s)'
if wait "$python_install"; then
  export STATEBUS_PYTHON="$(cat "$python_path")"
else
  cat "$python_log" >&2
  echo "demo: the Python client could not be installed (above); the demo will leave its view out"
fi
trap - EXIT
rm -f "$python_path" "$python_log"
exec .build/debug/statebus demo "$@"
