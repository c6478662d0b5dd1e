#!/usr/bin/env bash
# The main job: installs what is missing (etcd too, for the high-availability app),
# builds, and runs the StateBus demo: the shared-text, profile, to-do and high-availability
# apps, every node a real process.
set -euo pipefail
cd "$(dirname "$0")/.."
deploy/setup.sh --etcd
swift build --product statebus 2>&1 | grep -v 'prohibited flag(s)'
exec .build/debug/statebus demo "$@"
