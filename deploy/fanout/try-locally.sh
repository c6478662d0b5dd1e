#!/usr/bin/env bash
# Fan-out across "machines" on one machine: three Linux network namespaces in a row, joined
# by veth pairs, stand in for a host machine (10.210.1.1), a relay machine (10.210.1.2 towards
# the host, 10.210.2.1 towards the views) and a views machine (10.210.2.2). The host runs
# `statebus host`, the relay machine two `statebus relay`s of it, the views machine one
# `statebus load` per relay holding VIEWS views each, all over tcp. The script changes the
# host's state, checks that every view has it, takes the link between host and relays down,
# changes the state again, brings the link back, and checks that every view converges.
#
#   sudo deploy/fanout/try-locally.sh [PATH-TO-statebus] [VIEWS-PER-RELAY]
#        (defaults: .build/debug/statebus, 150: 300 views in all)
#
# Needs root (ip netns, ip link) and iproute2. The 10.210.x addresses exist only inside the
# namespaces it makes. Relays have no keys yet, so the host and relays serve tcp with
# --insecure, inside the namespaces only. On exit (success, failure or Ctrl-C) it stops what
# it started and deletes its namespaces and veth pairs.
set -euo pipefail

statebus=${1:-.build/debug/statebus}
views=${2:-150}
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

# Names unique to this run; interface names stay under 16 characters.
tag=$$
ns_host=statebus-fh-$tag
ns_relay=statebus-fr-$tag
ns_views=statebus-fv-$tag
veth=(sfh$tag sfr$tag sfs$tag sfv$tag)
work=$(mktemp -d)
pids=()

cleanup() {
  local status=$?
  trap - EXIT INT TERM
  exec 7>&- 8>&- 2>/dev/null || true
  for pid in "${pids[@]}"; do kill -TERM "$pid" 2>/dev/null || true; done
  for pid in "${pids[@]}"; do
    for _ in $(seq 50); do kill -0 "$pid" 2>/dev/null || break; sleep 0.1; done
    kill -KILL "$pid" 2>/dev/null || true
  done
  for ns in "$ns_host" "$ns_relay" "$ns_views"; do
    if ip netns list | grep -qw "$ns"; then
      for pid in $(ip netns pids "$ns" 2>/dev/null); do kill -KILL "$pid" 2>/dev/null || true; done
      ip netns delete "$ns" 2>/dev/null || true
    fi
  done
  for name in "${veth[@]}"; do ip link delete "$name" 2>/dev/null || true; done
  if [ "$status" -ne 0 ]; then
    for log in host relay0 relay1 views0 views1; do
      echo "--- $log (last 10 lines)"; tail -n 10 "$work/$log.log" 2>/dev/null || true
    done
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
# In the background, with exec, so that $! is the process's own pid.
start_in() {
  local ns=$1 log=$2; shift 2
  ( exec ip netns exec "$ns" env XDG_RUNTIME_DIR="$work/run-$ns" "$@" >"$log" 2>&1 ) &
  pids+=($!)
}
# The value of key=value in the first line of FILE matching PATTERN.
field() { grep -m1 -E "$2" "$1" | tr ' ' '\n' | sed -n "s/^$3=//p"; }

echo "== network: $ns_host (10.210.1.1) <-> $ns_relay (10.210.1.2 / 10.210.2.1) <-> $ns_views (10.210.2.2)"
for ns in "$ns_host" "$ns_relay" "$ns_views"; do ip netns add "$ns"; mkdir -p "$work/run-$ns"; chmod 700 "$work/run-$ns"; done
ip link add "${veth[0]}" type veth peer name "${veth[1]}"
ip link add "${veth[2]}" type veth peer name "${veth[3]}"
link() { ip link set "$1" netns "$2"; ip -n "$2" addr add "$3/30" dev "$1"; ip -n "$2" link set "$1" up; ip -n "$2" link set lo up; }
link "${veth[0]}" "$ns_host" 10.210.1.1
link "${veth[1]}" "$ns_relay" 10.210.1.2
link "${veth[2]}" "$ns_relay" 10.210.2.1
link "${veth[3]}" "$ns_views" 10.210.2.2

echo "== host"
start_in "$ns_host" "$work/host.log" "$statebus" host --control tcp://10.210.1.1:7000 --updates tcp://10.210.1.1:7001 \
  --object Counter --property count:int=0 --no-persistence --heartbeat-ms 200 --insecure
wait_for "$work/host.log" '^ready ' 30 "the host serves on tcp://10.210.1.1:7000"

echo "== two relays"
for index in 0 1; do
  start_in "$ns_relay" "$work/relay$index.log" "$statebus" relay --upstream tcp://10.210.1.1:7000 \
    --control "tcp://10.210.2.1:710$index" --updates "tcp://10.210.2.1:720$index" --name "relay$index" --insecure
  wait_for "$work/relay$index.log" '^ready ' 30 "relay $index relays the host on tcp://10.210.2.1:710$index"
done

echo "== $views views behind each relay"
for index in 0 1; do
  mkfifo "$work/views$index.in"
  start_in "$ns_views" "$work/views$index.log" sh -c "exec \"\$0\" load --control tcp://10.210.2.1:710$index --object Counter --views $views --report-ms 0 < \"\$1\"" \
    "$statebus" "$work/views$index.in"
done
# Writers that keep the pipes open: the load processes read commands from them.
exec 7>"$work/views0.in" 8>"$work/views1.in"
for index in 0 1; do wait_for "$work/views$index.log" "^ready views=$views " 180 "all $views views behind relay $index live"; done

set_count() {
  ip netns exec "$ns_host" env XDG_RUNTIME_DIR="$work/run-$ns_host" "$statebus" set --control tcp://10.210.1.1:7000 --object Counter count "$1" >/dev/null
}
wait_all() {
  echo "wait $1" >&7
  echo "wait $1" >&8
  for index in 0 1; do wait_for "$work/views$index.log" "^reached sequence=$1 " 90 "every view behind relay $index at sequence $1 (count $2)"; done
}

echo "== the host changes its state"
set_count 1
wait_all 1 1

echo "== the link between host and relays goes down; the host changes its state; the link comes back"
ip -n "$ns_relay" link set "${veth[1]}" down
echo "all stale" >&7
echo "all stale" >&8
for index in 0 1; do wait_for "$work/views$index.log" "^all stale " 60 "every view behind relay $index stale (no heartbeat through its relay)"; done
set_count 2
ip -n "$ns_relay" link set "${veth[1]}" up
wait_all 2 2

echo status >&7
echo status >&8
for index in 0 1; do wait_for "$work/views$index.log" "^status live=$views stale=0 syncing=0 min-sequence=2 max-sequence=2" 30 "relay $index: $views views live at the host's state"; done
echo "fan-out: $((2 * views)) views behind 2 relays on another namespace converged, also after the host link went down and came back"
