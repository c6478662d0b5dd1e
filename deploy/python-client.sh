#!/usr/bin/env bash
# Installs the Python client (clients/python) into a virtual environment of its own,
# .build/python-client, making Python 3 with venv available first (deploy/setup.sh --python),
# and prints the environment's interpreter. pyzmq and protobuf come from PyPI.
#
#   deploy/python-client.sh           the client, for the demo's Python view and the bench
#   deploy/python-client.sh --test    the client and its test tools (pytest)
set -euo pipefail
cd "$(dirname "$0")/.."

extra=""
case "${1:-}" in
  "") ;;
  --test) extra="[test]" ;;
  -h|--help) sed -n '2,7p' "$0"; exit 0 ;;
  *) echo "python-client.sh: unknown option '$1' (try --help)" >&2; exit 2 ;;
esac

venv=.build/python-client
deploy/setup.sh --python >/dev/null
[ -x "$venv/bin/python" ] || python3 -m venv "$venv"
"$venv/bin/python" -m pip install --quiet --disable-pip-version-check "./clients/python$extra" >&2
echo "$PWD/$venv/bin/python"
