#!/usr/bin/env bash
# The main job: installs what is missing, builds, and runs the StateBus demo.
# The demo: a host and three views of the shared-text app, each a real process.
set -euo pipefail
cd "$(dirname "$0")/.."
deploy/setup.sh
swift build --product statebus 2>&1 | grep -v 'prohibited flag(s)'
exec .build/debug/statebus demo "$@"
