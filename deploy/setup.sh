#!/usr/bin/env bash
# Installs what StateBus needs to build and test, when it is missing. Idempotent: a second
# run installs nothing. Uses apt-get as root, sudo otherwise, and says what to do when
# neither works.
#
#   deploy/setup.sh              libzmq (libzmq3-dev), SQLite (libsqlite3-dev), libcurl
#                                (libcurl4-openssl-dev, etcd's client), libmicrohttpd
#                                (libmicrohttpd-dev, the metrics endpoint) and pkg-config
#   deploy/setup.sh --protoc     also protoc, needed only to regenerate proto/ code
#   deploy/setup.sh --browser    also Chromium and chromedriver, for the inspector's browser test
#   deploy/setup.sh --python     also Python 3 with venv, for the Python client (clients/python)
#   deploy/setup.sh --etcd       also etcd (Debian's etcd-server), for high-availability groups
set -euo pipefail

want_protoc=no
want_browser=no
want_python=no
want_etcd=no
for arg in "$@"; do
  case "$arg" in
    --protoc) want_protoc=yes ;;
    --browser) want_browser=yes ;;
    --python) want_python=yes ;;
    --etcd) want_etcd=yes ;;
    -h|--help) sed -n '2,13p' "$0"; exit 0 ;;
    *) echo "setup.sh: unknown option '$arg' (try --help)" >&2; exit 2 ;;
  esac
done

missing=()
command -v pkg-config >/dev/null 2>&1 || missing+=(pkg-config)
if ! pkg-config --exists libzmq 2>/dev/null; then missing+=(libzmq3-dev); fi
if ! pkg-config --exists sqlite3 2>/dev/null; then missing+=(libsqlite3-dev); fi
if ! pkg-config --exists libcurl 2>/dev/null; then missing+=(libcurl4-openssl-dev); fi
if ! pkg-config --exists libmicrohttpd 2>/dev/null; then missing+=(libmicrohttpd-dev); fi
if [ "$want_protoc" = yes ] && ! command -v protoc >/dev/null 2>&1; then missing+=(protobuf-compiler); fi
if [ "$want_browser" = yes ] && [ ! -x /usr/bin/chromium ]; then missing+=(chromium); fi
if [ "$want_browser" = yes ] && [ ! -x /usr/bin/chromedriver ]; then missing+=(chromium-driver); fi
# Debian's python3 makes virtual environments only with python3-venv installed.
if [ "$want_python" = yes ] && ! python3 -m venv --help >/dev/null 2>&1; then missing+=(python3 python3-venv); fi
if [ "$want_etcd" = yes ] && [ ! -x /usr/bin/etcd ] && ! command -v etcd >/dev/null 2>&1; then missing+=(etcd-server); fi
if [ "$want_python" = yes ] && command -v python3 >/dev/null 2>&1 && ! python3 -c 'import ensurepip' >/dev/null 2>&1; then missing+=(python3-venv); fi

if [ ${#missing[@]} -gt 0 ]; then
  echo "setup: installing ${missing[*]}"
  if [ "$(id -u)" -eq 0 ]; then
    as_root=()
  elif command -v sudo >/dev/null 2>&1 && sudo -n true 2>/dev/null; then
    as_root=(sudo)
  else
    echo "setup: cannot install ${missing[*]}: not root and no password-less sudo." >&2
    echo "       Run as root:  apt-get install -y ${missing[*]}" >&2
    exit 1
  fi
  if ! command -v apt-get >/dev/null 2>&1; then
    echo "setup: no apt-get here. Install libzmq (4.3 or later), SQLite, libcurl, libmicrohttpd and pkg-config with your" >&2
    echo "       package manager (Homebrew: brew install zeromq sqlite curl libmicrohttpd pkg-config), then run this again." >&2
    exit 1
  fi
  export DEBIAN_FRONTEND=noninteractive
  # Refresh the package lists only when a plain install cannot find the packages.
  if ! "${as_root[@]}" apt-get install -y -qq "${missing[@]}" >/dev/null 2>&1; then
    "${as_root[@]}" apt-get update -qq
    "${as_root[@]}" apt-get install -y -qq "${missing[@]}"
  fi
fi

if ! command -v swift >/dev/null 2>&1; then
  echo "setup: 'swift' is not on PATH. Install Swift 6 (https://www.swift.org/install/linux/) and run this again." >&2
  exit 1
fi
echo "setup: ready (libzmq $(pkg-config --modversion libzmq), $(swift --version 2>/dev/null | head -n 1))"
