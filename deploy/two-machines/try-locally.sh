#!/usr/bin/env bash
# Plays the two-machine example on one machine: two Linux network namespaces joined by a
# veth pair stand in for machine A (10.200.0.1) and machine B (10.200.0.2). Machine A runs
# host.yaml, machine B runs views.yaml, unchanged, with CURVE keys made by `statebus
# keygen` beside copies of them; then B writes the text through the host, and the script
# checks that every view on both "machines" shows it and that a key the host does not list
# is refused.
#
#   sudo deploy/two-machines/try-locally.sh [PATH-TO-statebus]   (default .build/debug/statebus)
#
# Needs root (ip netns, ip link) and iproute2. Traffic stays inside the two namespaces it
# makes; the 10.200.0.0/24 addresses exist only there. On exit (success, failure or
# Ctrl-C) it stops the processes it started and deletes its namespaces and veth pair.
set -euo pipefail

here=$(cd "$(dirname "$0")" && pwd)
statebus=${1:-.build/debug/statebus}
if [ ! -x "$statebus" ]; then
  echo "try-locally: no statebus binary at '$statebus'; build it (swift build --product statebus) or pass its path" >&2
  exit 2
fi
statebus=$(realpath "$statebus")
if [ "$(id -u)" -ne 0 ]; then
  echo "try-locally: needs root for network namespaces: sudo $0 $*" >&2
  exit 2
fi
command -v ip >/dev/null || { echo "try-locally: needs 'ip' (apt-get install iproute2)" >&2; exit 2; }

# Names unique to this run, so two runs (or leftovers of a killed one) never collide.
# Interface names must stay under 16 characters.
tag=$$
ns_a=statebus-a-$tag
ns_b=statebus-b-$tag
veth_a=sba$tag
veth_b=sbb$tag
work=$(mktemp -d)
pids=()

cleanup() {
  local status=$?
  trap - EXIT INT TERM
  # The launchers first (they stop their nodes), then anything left in our namespaces.
  for pid in "${pids[@]}"; do kill -TERM "$pid" 2>/dev/null || true; done
  for pid in "${pids[@]}"; do
    for _ in $(seq 100); do kill -0 "$pid" 2>/dev/null || break; sleep 0.1; done
    kill -KILL "$pid" 2>/dev/null || true
  done
  for ns in "$ns_a" "$ns_b"; do
    if ip netns list | grep -qw "$ns"; then
      for pid in $(ip netns pids "$ns" 2>/dev/null); do kill -KILL "$pid" 2>/dev/null || true; done
      ip netns delete "$ns" 2>/dev/null || true
    fi
  done
  ip link delete "$veth_a" 2>/dev/null || true   # only if it never moved into a namespace
  if [ "$status" -ne 0 ]; then
    echo "--- machine A output (last 20 lines)"; tail -n 20 "$work/a.log" 2>/dev/null || true
    echo "--- machine B output (last 20 lines)"; tail -n 20 "$work/b.log" 2>/dev/null || true
  fi
  rm -rf "$work"
  exit "$status"
}
trap cleanup EXIT
trap 'exit 130' INT
trap 'exit 143' TERM

# Waits until FILE has a line matching the extended regex PATTERN, or fails after SECONDS.
wait_for() {
  local file=$1 pattern=$2 seconds=$3 what=$4
  local deadline=$((SECONDS + seconds))
  until grep -qE "$pattern" "$file" 2>/dev/null; do
    if [ "$SECONDS" -ge "$deadline" ]; then
      echo "try-locally: timed out after ${seconds}s waiting for $what" >&2
      return 1
    fi
    sleep 0.2
  done
  echo "ok: $what"
}

echo "== network: $ns_a (10.200.0.1) <-> $ns_b (10.200.0.2)"
ip netns add "$ns_a"
ip netns add "$ns_b"
ip link add "$veth_a" type veth peer name "$veth_b"
ip link set "$veth_a" netns "$ns_a"
ip link set "$veth_b" netns "$ns_b"
ip -n "$ns_a" addr add 10.200.0.1/24 dev "$veth_a"
ip -n "$ns_b" addr add 10.200.0.2/24 dev "$veth_b"
for ns in "$ns_a" "$ns_b"; do ip -n "$ns" link set lo up; done
ip -n "$ns_a" link set "$veth_a" up
ip -n "$ns_b" link set "$veth_b" up

# Each "machine" gets folders of its own, as two machines would.
mkdir -p "$work/a/run" "$work/a/state" "$work/b/run" "$work/b/state"
run_in() {
  local ns=$1 machine=$2; shift 2
  ip netns exec "$ns" env XDG_RUNTIME_DIR="$work/$machine/run" XDG_STATE_HOME="$work/$machine/state" "$@"
}
# In the background, with exec, so that $! is the launcher's own pid.
start_in() {
  local ns=$1 machine=$2 log=$3; shift 3
  ( exec ip netns exec "$ns" env XDG_RUNTIME_DIR="$work/$machine/run" XDG_STATE_HOME="$work/$machine/state" "$@" >"$log" 2>&1 ) &
  pids+=($!)
}

echo "== keys: statebus keygen, and the authorized keys file of machine A"
# The launch files name keys/… beside themselves: copies of them go beside fresh keys.
cp "$here/host.yaml" "$here/views.yaml" "$work/"
keys="$work/keys"
"$statebus" keygen host --out "$keys" >/dev/null
for client in a-view b-watch b-first b-second b-writer stranger; do
  "$statebus" keygen "$client" --out "$keys" >/dev/null
done
{
  echo "# role     public key                                  name"
  for client in a-view b-first b-second b-writer; do echo "write $(tail -n 1 "$keys/$client.pub") $client"; done
  echo "read $(tail -n 1 "$keys/b-watch.pub") b-watch"
} >"$keys/authorized.keys"

echo "== machine A: statebus launch host.yaml"
start_in "$ns_a" a "$work/a.log" "$statebus" launch "$work/host.yaml"
wait_for "$work/a.log" 'launch: host answers on tcp://0\.0\.0\.0:7000' 30 "machine A's host answers"
wait_for "$work/a.log" 'a-view \| .*Hello from machine A' 30 "machine A's view shows the host's text"

echo "== machine B: statebus launch views.yaml"
start_in "$ns_b" b "$work/b.log" "$statebus" launch "$work/views.yaml"
wait_for "$work/b.log" 'b-first \| .*Hello from machine A' 30 "view b-first on machine B shows the host's text"
wait_for "$work/b.log" 'b-second \| .*Hello from machine A' 30 "view b-second on machine B shows the host's text"

echo "== machine B writes through the host"
text="typed on machine B at $(date +%H:%M:%S)"
run_in "$ns_b" b "$statebus" set --control tcp://10.200.0.1:7000 --object SharedData sharedText "$text" --string \
  --key "$keys/b-writer.key" --host-key "$keys/host.pub"
wait_for "$work/a.log" "a-view \| .*$text" 20 "machine A's view shows B's write"
wait_for "$work/b.log" "b-first \| .*$text" 20 "view b-first shows it"
wait_for "$work/b.log" "b-second \| .*$text" 20 "view b-second shows it"

echo "== a key machine A does not list is refused"
if run_in "$ns_b" b "$statebus" get --control tcp://10.200.0.1:7000 --object SharedData sharedText \
  --key "$keys/stranger.key" --host-key "$keys/host.pub" --timeout 10 >"$work/stranger.log" 2>&1; then
  echo "try-locally: an unlisted key read the host's state" >&2
  exit 1
fi
grep -q forbidden "$work/stranger.log" && echo "ok: $(grep -m1 forbidden "$work/stranger.log")"
if run_in "$ns_b" b "$statebus" get --control tcp://10.200.0.1:7000 --object SharedData sharedText --timeout 10 >"$work/keyless.log" 2>&1; then
  echo "try-locally: a client without keys read the host's state" >&2
  exit 1
fi
echo "ok: without keys: $(grep -m1 -o 'requires CURVE keys[^;]*' "$work/keyless.log" || tail -n 1 "$work/keyless.log")"

echo "== what machine B's views saw"
grep -E 'b-(first|second) \|' "$work/b.log" | tail -n 3
echo "two-machine example: every view converged on the host's value"
