#!/usr/bin/env bash
# The main job: installs what is missing, builds, and runs the StateBus demo.
# Until the demo exists, it runs the smoke check: a message crossing two processes.
set -euo pipefail
cd "$(dirname "$0")/.."
deploy/setup.sh
swift build --product statebus 2>&1 | grep -v 'prohibited flag(s)'
exec .build/debug/statebus smoke "$@"
