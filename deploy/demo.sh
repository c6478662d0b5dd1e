#!/usr/bin/env bash
# The main job: installs what is missing (etcd too, for the high-availability app, and the
# Python client, for the shared text's Python view), builds, and runs the StateBus demo: the
# shared-text, profile, to-do and high-availability apps, every node a real process.
set -euo pipefail
cd "$(dirname "$0")/.."
deploy/setup.sh --etcd
# The shared-text app's fourth view is the Python client's: installed into .build when
# Python 3 and PyPI are at hand; without them the demo leaves it out and says why.
if interpreter=$(deploy/python-client.sh); then
  export STATEBUS_PYTHON="$interpreter"
else
  echo "demo: the Python client could not be installed (see above); the demo will leave its view out"
fi
swift build --product statebus 2>&1 | grep -v 'prohibited flag(s)'
exec .build/debug/statebus demo "$@"
