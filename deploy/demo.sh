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
deploy/python-client.sh > "$python_path" &
python_install=$!
# A failed build ends the script here: the install goes with it.
trap 'kill "$python_install" 2>/dev/null; rm -f "$python_path"' EXIT
swift build --product statebus 2>&1 | grep -v 'prohibited flag(s)'
if wait "$python_install"; then
  export STATEBUS_PYTHON="$(cat "$python_path")"
else
  echo "demo: the Python client could not be installed (see above); the demo will leave its view out"
fi
rm -f "$python_path"
exec .build/debug/statebus demo "$@"
