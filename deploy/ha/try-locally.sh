#!/usr/bin/env bash
# High availability across a real network partition, on one machine.
#
# What it shows: three Linux network namespaces stand in for three machines (10.77.0.1-3),
# each running an etcd member and a `statebus host --ha` of one group; a fourth namespace
# (10.77.0.4) runs the views (`statebus watch`, `set`, `get`), which list all three hosts.
# A bridge in a fifth namespace joins them, so nothing touches the machine's own interfaces.
#   1. etcd forms a 3-member cluster; the hosts elect one leader, the others stand by.
#   2. The views follow the leader and converge on a few writes.
#   3. The leader's link is cut (`ip link set eth0 down` in its namespace: packets vanish,
#      as when a cable goes). The two others keep etcd's quorum and elect a new leader;
#      the cut-off leader steps down by itself (`role standby leader=unknown`) within about
#      its lease; the views reach the new leader (new epoch, live) and a write through the
#      host list works.
#   4. The link comes back; the old leader rejoins as a standby of the new one.
#   A summary gives who led when, how long each phase took, and the final values.
#
# Run it from anywhere (it changes to the repository):
#
#   sudo deploy/ha/try-locally.sh
#   sudo STATEBUS=/path/to/statebus LEASE_SECONDS=5 deploy/ha/try-locally.sh
#
# Needs: root (ip netns, ip link), iproute2 (`ip`), etcd 3.4 (`deploy/setup.sh --etcd`
# installs Debian's etcd-server), curl, and a built statebus (`swift build --product
# statebus`; STATEBUS=path overrides .build/debug/statebus). Takes about 10 s with a debug
# build (up to a minute on a busy machine). Exits 0 only if every step converged.
#
# Settings (environment): SUBNET (first three octets, default 10.77.0: addresses .1 to .4
# on a /24 that exists only inside the namespaces), LEASE_SECONDS (the hosts'
# --ha-lease-seconds, default 2), KEEP_LOGS=1 (keep the temporary folder with every log).
#
# Every process it starts writes to a log in a temporary folder, each line prefixed with
# the seconds since the script began. On exit (success, failure or Ctrl-C) it stops those
# processes by pid, deletes its namespaces (their veth pairs and bridge go with them) and
# removes the folder; on a failure it prints the tail of the relevant logs first. Only a
# SIGKILL of the script itself leaves them: `ip netns list | grep sbha` names them (sbhaPID-*;
# `ip netns pids NAME` lists what runs inside), and the folder is /tmp/statebus-ha.*.
set -euo pipefail

cd "$(dirname "$0")/../.."
repo=$(pwd)
me="try-locally"

# --- settings and checks -------------------------------------------------------------------

STATEBUS=${STATEBUS:-.build/debug/statebus}
SUBNET=${SUBNET:-10.77.0}
LEASE_SECONDS=${LEASE_SECONDS:-2}
KEEP_LOGS=${KEEP_LOGS:-0}

die() { echo "$me: $*" >&2; exit 2; }

[ "$(id -u)" -eq 0 ] || die "needs root, for network namespaces and links: sudo $0"
[[ $SUBNET =~ ^([0-9]{1,3})\.([0-9]{1,3})\.([0-9]{1,3})$ ]] \
  || die "SUBNET must be three octets, such as 10.77.0 (got '$SUBNET')"
[[ $LEASE_SECONDS =~ ^[1-9][0-9]*$ ]] || die "LEASE_SECONDS must be a whole number of seconds (got '$LEASE_SECONDS')"
command -v ip >/dev/null || die "needs 'ip': apt-get install iproute2"
command -v curl >/dev/null || die "needs 'curl': apt-get install curl"
command -v etcd >/dev/null || die "needs etcd 3.4: deploy/setup.sh --etcd (or apt-get install etcd-server)"
if [ ! -x "$STATEBUS" ]; then
  die "no statebus binary at '$STATEBUS' (in $repo): build it with 'swift build --product statebus', or set STATEBUS=path"
fi
STATEBUS=$(realpath "$STATEBUS")
etcd_bin=$(command -v etcd)

# --- names, folders, clean-up --------------------------------------------------------------

tag=$$
ns=("" "sbha$tag-1" "sbha$tag-2" "sbha$tag-3" "sbha$tag-4")   # ns[1..3]: machines, ns[4]: views
ns_bridge="sbha$tag-br"
addr=("" "$SUBNET.1" "$SUBNET.2" "$SUBNET.3" "$SUBNET.4")
group=demo
work=$(mktemp -d "${TMPDIR:-/tmp}/statebus-ha.XXXXXX")
pids=()          # the statebus processes started in the background, by pid (children of this shell)
etcd_pids=()     # the etcd members, stopped last
readers=()       # the processes that stamp their output into the logs
declare -A names # pid -> name, for the clean-up's report
made_ns=()       # namespaces created so far
failed_logs=()   # logs worth showing when something fails
t0=${EPOCHREALTIME/./}

# Seconds since the script began, with milliseconds: "12.345".
now() {
  local d=$(( ${EPOCHREALTIME/./} - t0 ))
  printf '%d.%03d' $((d / 1000000)) $((d / 1000 % 1000))
}

# A process that has not exited (a zombie has, though not yet reaped). `read`, not
# $(<file): under set -e a failed $(<file) ends the script even where a test is expected.
alive() {
  local stat
  { IFS= read -r stat <"/proc/$1/stat"; } 2>/dev/null || return 1
  stat=${stat##*) }
  [ "${stat:0:1}" != Z ]
}

cleanup() {
  local status=$?
  trap '' INT TERM
  trap - EXIT ERR
  set +e
  if [ "$status" -ne 0 ]; then
    for log in "${failed_logs[@]}"; do
      [ -s "$log" ] || continue
      echo "--- $(basename "$log") (last 15 lines)" >&2
      tail -n 15 "$log" >&2
    done
  fi
  local started=${EPOCHREALTIME/./}
  echo
  echo "== clean-up: stopping ${#pids[@]} statebus and ${#etcd_pids[@]} etcd processes, deleting ${#made_ns[@]} namespaces"
  # Stop what this script started, by pid: the views and hosts first, then etcd (so the
  # hosts do not see etcd go); each TERM, a grace period, then KILL. A 3.4 etcd leader
  # stopping with its followers spends seconds trying to hand its leadership over; the
  # cluster is thrown away, so it gets 1 s. The log readers end by themselves once their
  # process has gone (so its last words reach the log).
  stop_pids 5 "${pids[@]}"
  stop_pids 1 "${etcd_pids[@]}"
  stop_pids 1 "${readers[@]}"
  # Our namespaces: anything still inside (nothing should be) goes, then the namespace, and
  # with it its end of the veth pairs and the bridge.
  local n p
  for n in "${made_ns[@]}"; do
    for p in $(ip netns pids "$n" 2>/dev/null); do kill -KILL "$p" 2>/dev/null; done
    ip netns delete "$n" 2>/dev/null
  done
  if [ "$KEEP_LOGS" = 1 ]; then
    echo "   logs kept in $work"
  else
    rm -rf "$work"
  fi
  local d=$(( ${EPOCHREALTIME/./} - started ))
  printf '   done in %d.%02d s\n' $((d / 1000000)) $((d / 10000 % 100))
  exit "$status"
}

# stop_pids GRACE PID...: TERM, then up to GRACE seconds for them to exit, then KILL; reaps them.
stop_pids() {
  local grace=$1 pid left
  shift
  local deadline=$(( ${EPOCHREALTIME/./} + grace * 1000000 ))
  for pid in "$@"; do kill -TERM "$pid" 2>/dev/null; done
  while :; do
    left=0
    for pid in "$@"; do alive "$pid" && left=1; done
    { [ "$left" -eq 0 ] || [ "${EPOCHREALTIME/./}" -ge "$deadline" ]; } && break
    sleep 0.05
  done
  for pid in "$@"; do
    if alive "$pid"; then
      [ -n "${names[$pid]:-}" ] && echo "   ${names[$pid]} (pid $pid) still running ${grace} s after SIGTERM: SIGKILL"
      kill -KILL "$pid" 2>/dev/null
    fi
    wait "$pid" 2>/dev/null
  done
}
trap cleanup EXIT
trap 'exit 130' INT
trap 'exit 143' TERM
trap 'echo "$me: failed at line $LINENO: $BASH_COMMAND" >&2' ERR

fail() {
  # fail MESSAGE [LOG...]: the logs are printed (their tails) by the clean-up.
  local message=$1; shift
  failed_logs=("$@" "${failed_logs[@]}")
  echo >&2
  echo "$me: FAILED at +$(now) s: $message" >&2
  exit 1
}

step_number=0
step() {
  step_number=$((step_number + 1))
  printf '\n== %d. %s  [+%s s, %s]\n' "$step_number" "$*" "$(now)" "$(date +%H:%M:%S.%3N)"
}
say() { printf '   %s\n' "$*"; }

# --- logs and waiting ----------------------------------------------------------------------

# Copies standard input to standard output, each line prefixed with the seconds since the
# script began, so that every log tells when each line was printed.
stamp() {
  local line d
  while IFS= read -r line || [ -n "$line" ]; do
    d=$(( ${EPOCHREALTIME/./} - t0 ))
    printf '%d.%03d %s\n' $((d / 1000000)) $((d / 1000 % 1000)) "$line"
  done
}

# between A B: B - A, two stamps in seconds, with hundredths: "2.42".
between() { awk -v a="$1" -v b="$2" 'BEGIN{printf "%.2f", b - a}'; }

# Seconds since a ${EPOCHREALTIME/./} reading, with hundredths: "0.07".
since() {
  local d=$(( ${EPOCHREALTIME/./} - $1 ))
  printf '%d.%02d' $((d / 1000000)) $((d / 10000 % 100))
}

# The number of lines in a log so far: wait_for's "after" mark.
lines() { local n; n=$(wc -l <"$1" 2>/dev/null) || n=0; echo "${n// /}"; }

# wait_for FILE PATTERN TIMEOUT [AFTER]: polls FILE until a line after its first AFTER
# lines matches the extended regex PATTERN; sets $found (the line, stamp included) and
# $found_at (its stamp: seconds since the script began). Returns 1 after TIMEOUT seconds,
# or at once if the process writing FILE ($work/NAME.log, pid_NAME) has exited.
found="" found_at=""
wait_for() {
  local file=$1 pattern=$2 timeout=$3 after=${4:-0}
  local deadline=$(( ${EPOCHREALTIME/./} + timeout * 1000000 ))
  local pid_var
  pid_var="pid_$(basename "$file" .log)"
  local pid=${!pid_var:-} gone=0
  while :; do
    [ -n "$pid" ] && ! alive "$pid" && gone=1
    found=$(tail -n "+$((after + 1))" "$file" 2>/dev/null | grep -m 1 -E -- "$pattern" || true)
    if [ -n "$found" ]; then
      found_at=${found%% *}
      return 0
    fi
    if [ "$gone" = 1 ]; then
      echo "$me: $(basename "$file" .log) (pid $pid) has exited" >&2
      return 1
    fi
    [ "${EPOCHREALTIME/./}" -lt "$deadline" ] || return 1
    sleep 0.05
  done
}

# until_ok TIMEOUT COMMAND...: runs COMMAND until it succeeds; returns 1 after TIMEOUT seconds.
until_ok() {
  local timeout=$1; shift
  local deadline=$((SECONDS + timeout))
  until "$@" >/dev/null 2>&1; do
    [ "$SECONDS" -lt "$deadline" ] || return 1
    sleep 0.1
  done
}

# child_env HOME: sets $clean_env to an `env -i ...` prefix, a clean environment for a
# child, with folders of its own: no ETCD_* (etcd reads them as flags, and one also given
# as a flag is fatal) and no STATEBUS_* (a stray STATEBUS_KEY_FILE would turn keys on).
clean_env=()
child_env() {
  local home=$1
  mkdir -p "$home/run" "$home/state" "$home/tmp"
  chmod 700 "$home/run"
  clean_env=(env -i PATH=/usr/local/sbin:/usr/local/bin:/usr/sbin:/usr/bin:/sbin:/bin HOME="$home"
    XDG_RUNTIME_DIR="$home/run" XDG_STATE_HOME="$home/state" TMPDIR="$home/tmp" LANG=C.UTF-8)
}

# start NAME NAMESPACE COMMAND...: runs COMMAND in the namespace in the background, its
# output (stdout and stderr) stamped into $work/NAME.log; its pid goes into pid_NAME.
# `ip netns exec` execs the command, so the pid is the command's own.
start() {
  local name=$1 namespace=$2; shift 2
  local fifo="$work/$name.fifo"
  mkfifo "$fifo"
  # The reader ignores Ctrl-C and TERM (a terminal sends them to the whole group): it ends
  # when its process has gone, so that the process's last words reach the log.
  ( trap '' INT TERM; stamp <"$fifo" >"$work/$name.log" ) &
  readers+=($!)
  child_env "$work/home-$name"
  ( exec ip netns exec "$namespace" "${clean_env[@]}" "$@" >"$fifo" 2>&1 </dev/null ) &
  if [[ $name == etcd* ]]; then etcd_pids+=($!); else pids+=($!); fi
  names[$!]=$name
  printf -v "pid_$name" '%s' "$!"
}

# in_ns NAMESPACE COMMAND...: runs COMMAND in the namespace in the foreground (at most 40 s;
# --foreground keeps it in the terminal's process group, so that Ctrl-C reaches it).
in_ns() {
  local namespace=$1; shift
  child_env "$work/home-cli"
  timeout --foreground 40 ip netns exec "$namespace" "${clean_env[@]}" "$@"
}

# --- 1. network ----------------------------------------------------------------------------

step "network: namespaces ${ns[1]}..${ns[4]} on a bridge in $ns_bridge ($SUBNET.0/24)"
for n in "$ns_bridge" "${ns[@]:1}"; do
  ip netns add "$n"
  made_ns+=("$n")
  ip -n "$n" link set lo up
done
ip -n "$ns_bridge" link add br0 type bridge
ip -n "$ns_bridge" link set br0 up
for i in 1 2 3 4; do
  # Made inside the bridge's namespace, its peer created straight in namespace i: the
  # machine's own namespace never sees either end.
  ip -n "$ns_bridge" link add "v$i" type veth peer name eth0 netns "${ns[$i]}"
  ip -n "$ns_bridge" link set "v$i" master br0
  ip -n "$ns_bridge" link set "v$i" up
  ip -n "${ns[$i]}" addr add "${addr[$i]}/24" dev eth0
  ip -n "${ns[$i]}" link set eth0 up
done
# No ping needed: the etcd members reach each other over the bridge or never get healthy.
if command -v ping >/dev/null; then
  for i in 1 2 3; do
    until_ok 10 ip netns exec "${ns[4]}" ping -c 1 -W 1 "${addr[$i]}" \
      || fail "${ns[4]} cannot reach ${addr[$i]} over the bridge"
  done
fi
say "machines: ${ns[1]}=${addr[1]}  ${ns[2]}=${addr[2]}  ${ns[3]}=${addr[3]};  views: ${ns[4]}=${addr[4]}"
t_network=$(now)

# --- 2. etcd -------------------------------------------------------------------------------

step "etcd: a 3-member cluster, member i on ${SUBNET}.i (client :2379, peer :2380)"
initial_cluster="m1=http://${addr[1]}:2380,m2=http://${addr[2]}:2380,m3=http://${addr[3]}:2380"
for i in 1 2 3; do
  # 50/500 ms: quick elections on a busy machine without missed heartbeats (see
  # docs/etcd-for-high-availability.md). --pre-vote: a member cut off for a while does not
  # depose the cluster's leader when it comes back. --unsafe-no-fsync: a throwaway cluster.
  start "etcd$i" "${ns[$i]}" "$etcd_bin" --name "m$i" --data-dir "$work/etcd$i.data" \
    --listen-client-urls "http://${addr[$i]}:2379" --advertise-client-urls "http://${addr[$i]}:2379" \
    --listen-peer-urls "http://${addr[$i]}:2380" --initial-advertise-peer-urls "http://${addr[$i]}:2380" \
    --initial-cluster "$initial_cluster" --initial-cluster-state new --initial-cluster-token "statebus-ha-$tag" \
    --heartbeat-interval 50 --election-timeout 500 --pre-vote --unsafe-no-fsync \
    --snapshot-count 10000 --quota-backend-bytes 134217728 \
    --logger zap --log-level warn --log-outputs stderr
done
healthy() { ip netns exec "${ns[$1]}" curl -sf -m 1 "http://${addr[$1]}:2379/health" | grep -q '"health":"true"'; }
deadline=$((SECONDS + 30))
for i in 1 2 3; do
  until healthy "$i"; do
    pid_var="pid_etcd$i"
    alive "${!pid_var}" || fail "etcd member m$i exited" "$work/etcd$i.log"
    [ "$SECONDS" -lt "$deadline" ] || fail "etcd member m$i not healthy within 30 s" "$work/etcd$i.log"
    sleep 0.1
  done
  say "m$i healthy: $(ip netns exec "${ns[$i]}" curl -s -m 1 "http://${addr[$i]}:2379/health")"
done
t_etcd=$(now)

# --- 3. hosts ------------------------------------------------------------------------------

step "hosts: statebus host --ha in ${ns[1]}, ${ns[2]}, ${ns[3]} (group '$group', lease ${LEASE_SECONDS} s)"
control=("" "tcp://${addr[1]}:7000" "tcp://${addr[2]}:7000" "tcp://${addr[3]}:7000")
for i in 1 2 3; do
  # Its own member first, as a host beside its etcd member would list them.
  etcd_urls="http://${addr[$i]}:2379"
  for j in 1 2 3; do [ "$j" = "$i" ] || etcd_urls+=",http://${addr[$j]}:2379"; done
  start "host$i" "${ns[$i]}" "$STATEBUS" host --name "host$i" --ha "$etcd_urls" --ha-group "$group" \
    --control "${control[$i]}" --insecure --ha-advertise-control "${control[$i]}" \
    --ha-lease-seconds "$LEASE_SECONDS" --object Counter --property 'count:int~=0'
done
for i in 1 2 3; do
  wait_for "$work/host$i.log" '^[0-9.]+ role ' 60 || fail "host$i printed no role within 60 s (or exited)" "$work/host$i.log"
done
# Exactly one leader, the two others standbys naming it. A host can print a role and change
# it moments later, so this looks at the last role line of each, until they agree.
last_role() { grep -E '^[0-9.]+ role ' "$work/host$1.log" | tail -n 1 | cut -d' ' -f2-; }
agreed_leader() {
  local i leaders=0 who=""
  for i in 1 2 3; do
    case $(last_role "$i") in
      "role leader "*) leaders=$((leaders + 1)); who=$i ;;
    esac
  done
  [ "$leaders" -eq 1 ] || return 1
  for i in 1 2 3; do
    [ "$i" = "$who" ] || [ "$(last_role "$i")" = "role standby leader=${control[$who]}" ] || return 1
  done
  echo "$who"
}
deadline=$((SECONDS + 30))
until leader=$(agreed_leader); do
  [ "$SECONDS" -lt "$deadline" ] || fail "the hosts did not agree on one leader within 30 s" \
    "$work/host1.log" "$work/host2.log" "$work/host3.log"
  sleep 0.05
done
wait_for "$work/host$leader.log" '^[0-9.]+ role leader ' 1
t_elected=$found_at
first_role=$(last_role "$leader")
first_epoch=$(sed -n 's/.*epoch=\([0-9]*\).*/\1/p' <<<"$first_role")
first_term=$(sed -n 's/.*term=\([0-9]*\).*/\1/p' <<<"$first_role")
for i in 1 2 3; do say "host$i (${addr[$i]}): $(last_role "$i")"; done
say "host$leader leads (epoch $first_epoch, term $first_term) at +$t_elected s"

# --- 4. views ------------------------------------------------------------------------------

step "views in ${ns[4]}: two watches listing the three hosts (in two orders), then writes"
all="${control[1]},${control[2]},${control[3]}"
reversed="${control[3]},${control[2]},${control[1]}"
start watch1 "${ns[4]}" "$STATEBUS" watch --json --name watch1 --control "$all" --object Counter
start watch2 "${ns[4]}" "$STATEBUS" watch --json --name watch2 --control "$reversed" --object Counter
for w in watch1 watch2; do
  wait_for "$work/$w.log" "\"connection\":\"live\",\"epoch\":$first_epoch," 30 \
    || fail "$w not live on host$leader (epoch $first_epoch) within 30 s" "$work/$w.log"
  say "$w live on host$leader: ${found#* }"
done
# The one-shot commands' output and standard error (their log lines) go to cli.log, stamped.
cli_log() { stamp >>"$work/cli.log"; }
set_count() {
  # set_count VALUE LIST: writes count through the host list, from the views' namespace.
  local out began=${EPOCHREALTIME/./}
  echo "statebus set --control $2 --object Counter count $1" | cli_log
  if ! out=$(in_ns "${ns[4]}" "$STATEBUS" set --control "$2" --timeout 20 --object Counter count "$1" 2>"$work/cli.err"); then
    cli_log <"$work/cli.err"
    echo "$out" | cli_log
    fail "statebus set count $1 through $2 failed: $out" "$work/cli.log"
  fi
  cli_log <"$work/cli.err"
  echo "$out" | cli_log
  say "statebus set count $1 (list ${2//tcp:\/\/}): $out ($(since "$began") s)"
}
got="" got_in=""
get_count() {
  # get_count LIST: reads count through the host list, from the views' namespace, into $got
  # (and how long it took into $got_in).
  local began=${EPOCHREALTIME/./}
  echo "statebus get --control $1 --object Counter count" | cli_log
  if ! got=$(in_ns "${ns[4]}" "$STATEBUS" get --control "$1" --timeout 20 --object Counter count 2>"$work/cli.err"); then
    cli_log <"$work/cli.err"
    echo "$got" | cli_log
    fail "statebus get count through $1 failed: $got" "$work/cli.log"
  fi
  cli_log <"$work/cli.err"
  echo "$got" | cli_log
  got_in=$(since "$began")
}
for value in 1 2 3; do set_count "$value" "$all"; done
for w in watch1 watch2; do
  wait_for "$work/$w.log" '"connection":"live".*"values":\{"count":3\}' 20 \
    || fail "$w does not show count 3 within 20 s" "$work/$w.log"
  say "$w: ${found#* }"
done
get_count "$all"
[ "$got" = 3 ] || fail "statebus get returned '$got', not 3" "$work/cli.log"
say "statebus get (list ${all//tcp:\/\/}): count = $got ($got_in s)"
t_converged=$(now)

# --- 5. cut the leader's link --------------------------------------------------------------

old=$leader
step "cut: host$old's link goes down (ip link set eth0 down in ${ns[$old]})"
# Which member leads etcd's own raft group: when it is the cut-off one, it goes on
# answering lease renewals until it notices it lost its quorum (about an election timeout).
etcd_leader=""
for i in 1 2 3; do
  status=$(ip netns exec "${ns[$i]}" curl -s -m 2 -X POST "http://${addr[$i]}:2379/v3/maintenance/status" -d '{}' || true)
  member=$(sed -n 's/.*"member_id":"\([0-9]*\)".*/\1/p' <<<"$status")
  raft_leader=$(sed -n 's/.*"leader":"\([0-9]*\)".*/\1/p' <<<"$status")
  [ -n "$member" ] && [ "$member" = "$raft_leader" ] && etcd_leader=$i
done
say "etcd's raft leader: m${etcd_leader:-?}$([ "$etcd_leader" = "$old" ] && echo ", on the machine being cut off")"
marks=()
for i in 1 2 3; do marks[i]=$(lines "$work/host$i.log"); done
declare -A watch_mark t_live
for w in watch1 watch2; do watch_mark[$w]=$(lines "$work/$w.log"); done
t_cut=$(now)
ip -n "${ns[$old]}" link set eth0 down
say "cut at +$t_cut s; host$old and etcd m$old are now alone; the other two keep etcd's quorum"

# Wait for both: another host leading, and the old leader stepping down (either may come first).
new=""
stepped_down_at=""
deadline=$((SECONDS + 30 + LEASE_SECONDS))
while [ -z "$new" ] || [ -z "$stepped_down_at" ]; do
  if [ -z "$new" ]; then
    for i in 1 2 3; do
      [ "$i" = "$old" ] && continue
      if wait_for "$work/host$i.log" '^[0-9.]+ role leader ' 0 "${marks[i]}"; then
        new=$i
        t_new=$found_at
        new_role=${found#* }
        say "host$i: $new_role   (+$t_new s, $(between "$t_cut" "$t_new") s after the cut)"
      fi
    done
  fi
  if [ -z "$stepped_down_at" ] && wait_for "$work/host$old.log" '^[0-9.]+ role standby leader=unknown' 0 "${marks[old]}"; then
    stepped_down_at=$found_at
    say "host$old: ${found#* }   (+$stepped_down_at s, $(between "$t_cut" "$stepped_down_at") s after the cut)"
  fi
  if [ "$SECONDS" -ge "$deadline" ]; then
    [ -n "$new" ] || fail "no other host led within $((30 + LEASE_SECONDS)) s of the cut" \
      "$work/host1.log" "$work/host2.log" "$work/host3.log"
    fail "host$old (cut off) did not print 'role standby leader=unknown' within $((30 + LEASE_SECONDS)) s" \
      "$work/host$old.log"
  fi
  sleep 0.05
done
new_epoch=$(sed -n 's/.*epoch=\([0-9]*\).*/\1/p' <<<"$new_role")
new_term=$(sed -n 's/.*term=\([0-9]*\).*/\1/p' <<<"$new_role")
[ "$new_epoch" != "$first_epoch" ] || fail "the new leader kept the old epoch $first_epoch" "$work/host$new.log"
step_down=$(between "$t_cut" "$stepped_down_at")
if awk -v s="$step_down" -v l="$LEASE_SECONDS" 'BEGIN{exit !(s <= l)}'; then
  step_down_verdict="within its ${LEASE_SECONDS} s lease"
elif [ "$etcd_leader" = "$old" ]; then
  step_down_verdict="past its ${LEASE_SECONDS} s lease: its own etcd member, etcd's leader, renewed the lease after the cut, until it noticed it had lost its quorum"
else
  step_down_verdict="LATER than its ${LEASE_SECONDS} s lease"
fi
say "host$old stepped down $step_down s after the cut: $step_down_verdict"
# The third host (neither old nor new) follows the new leader.
third=$((6 - old - new))
wait_for "$work/host$third.log" "^[0-9.]+ role standby leader=${control[$new]}\$" 20 "${marks[third]}" \
  || fail "host$third does not stand by behind host$new within 20 s" "$work/host$third.log"
say "host$third: ${found#* }"

step "views after the cut: live on host$new (epoch $new_epoch), a write through the list, agreement"
for w in watch1 watch2; do
  wait_for "$work/$w.log" "\"event\":\"connection\",\"connection\":\"live\",\"epoch\":$new_epoch," 30 "${watch_mark[$w]}" \
    || fail "$w not live on host$new (epoch $new_epoch) within 30 s" "$work/$w.log"
  t_live[$w]=$found_at
  say "$w live on host$new at +$found_at s ($(between "$t_cut" "$found_at") s after the cut): ${found#* }"
  wait_for "$work/$w.log" "\"connection\":\"live\",\"epoch\":$new_epoch,.*\"values\":\\{\"count\":3\\}" 20 "${watch_mark[$w]}" \
    || fail "$w does not show count 3 on host$new" "$work/$w.log"
  say "$w: ${found#* }"
done
t_views_failed_over=$(now)
set_count 4 "$all"
for w in watch1 watch2; do
  wait_for "$work/$w.log" "\"connection\":\"live\",\"epoch\":$new_epoch,.*\"values\":\\{\"count\":4\\}" 20 \
    || fail "$w does not show count 4 within 20 s" "$work/$w.log"
  say "$w: ${found#* }"
done
# A standby refuses reads with NOT_LEADER and names the leader, so a read through a list
# that starts with any of the hosts ends at the leader: each remaining host is asked first.
for i in "$new" "$third"; do
  list="${control[$i]},${control[$((6 - i - old))]},${control[$old]}"
  get_count "$list"
  [ "$got" = 4 ] || fail "statebus get through $list returned '$got', not 4" "$work/cli.log"
  say "statebus get (list ${list//tcp:\/\/}): count = $got ($got_in s)"
done
# The persisted value in the two etcd members that kept the quorum: the same revision.
etcd_count() {
  # etcd_count MEMBER: the mod_revision of the persisted count, read from that member alone.
  local key
  key=$(printf '/statebus/%s/data/Counter/count' "$group" | base64 -w0)
  ip netns exec "${ns[$1]}" curl -s -m 2 -X POST "http://${addr[$1]}:2379/v3/kv/range" \
    -d "{\"key\":\"$key\",\"serializable\":true}" | sed -n 's/.*"mod_revision":"\([0-9]*\)".*/\1/p'
}
revision_new=$(etcd_count "$new")
revision_third=$(etcd_count "$third")
[ -n "$revision_new" ] && [ "$revision_new" = "$revision_third" ] \
  || fail "etcd members m$new and m$third disagree on the persisted count (revision '$revision_new' vs '$revision_third')" \
    "$work/etcd$new.log" "$work/etcd$third.log"
say "etcd m$new and m$third hold the persisted count at the same revision ($revision_new)"
t_written=$(now)

# --- 6. restore ----------------------------------------------------------------------------

step "restore: host$old's link comes back up (ip link set eth0 up in ${ns[$old]})"
mark_old=$(lines "$work/host$old.log")
t_restore=$(now)
ip -n "${ns[$old]}" link set eth0 up
wait_for "$work/host$old.log" "^[0-9.]+ role standby leader=${control[$new]}\$" 60 "$mark_old" \
  || fail "host$old did not stand by behind host$new within 60 s of the restore" "$work/host$old.log" "$work/etcd$old.log"
t_rejoined=$found_at
say "host$old: ${found#* }   ($(between "$t_restore" "$t_rejoined") s after the restore)"
until_ok 30 healthy "$old" || fail "etcd m$old not healthy again within 30 s" "$work/etcd$old.log"
caught_up() { [ "$(etcd_count "$old")" = "$revision_new" ]; }
until_ok 30 caught_up || fail "etcd m$old did not catch up with revision $revision_new within 30 s" "$work/etcd$old.log"
say "etcd m$old healthy again, holding the persisted count at revision $revision_new"
# Nobody else took over meanwhile: host$new still leads, host$third still follows it.
[ "$(last_role "$new")" = "$new_role" ] || fail "host$new no longer leads: $(last_role "$new")" "$work/host$new.log"
[ "$(last_role "$third")" = "role standby leader=${control[$new]}" ] \
  || fail "host$third changed role: $(last_role "$third")" "$work/host$third.log"
set_count 5 "${control[$old]},${control[$third]},${control[$new]}"
for w in watch1 watch2; do
  wait_for "$work/$w.log" "\"connection\":\"live\",\"epoch\":$new_epoch,.*\"values\":\\{\"count\":5\\}" 20 \
    || fail "$w does not show count 5 within 20 s" "$work/$w.log"
done
get_count "${control[$old]},${control[$third]},${control[$new]}"
final_get=$got
[ "$final_get" = 5 ] || fail "statebus get through the list returned '$final_get', not 5" "$work/cli.log"
say "statebus get (list starting with host$old, now a standby): count = $final_get ($got_in s)"
t_done=$(now)

# --- summary -------------------------------------------------------------------------------

last_value() { grep -E '"values"' "$work/$1.log" | tail -n 1 | sed 's/^[0-9.]* //'; }
span() { printf '%6s' "$(between "$1" "$2")"; }
step "summary"
echo
echo "   who led when (seconds since the script began)"
printf '   %-6s %-21s %-21s %-5s %s\n' host address epoch term "led"
printf '   %-6s %-21s %-21s %-5s %s\n' "host$old" "${control[$old]}" "$first_epoch" "$first_term" \
  "from +$t_elected to +$stepped_down_at (cut off at +$t_cut, stepped down)"
printf '   %-6s %-21s %-21s %-5s %s\n' "host$new" "${control[$new]}" "$new_epoch" "$new_term" "from +$t_new to the end (+$t_done)"
# By the logs' stamps (when this script read each line): the old leader stopped taking
# writes before the new one began.
if awk -v a="$stepped_down_at" -v b="$t_new" 'BEGIN{exit !(a <= b)}'; then
  echo "   no overlap: host$old stepped down $(between "$stepped_down_at" "$t_new") s before host$new led"
else
  echo "   NOTE: host$new printed 'role leader' $(between "$t_new" "$stepped_down_at") s before host$old printed its step-down"
  echo "         (host$old refuses writes by its own clock at its lease's end, whether or not it has printed it yet)"
fi
echo
echo "   phase                                            took (s)"
printf '   %-48s %s\n' "network up" "$(span 0 "$t_network")"
printf '   %-48s %s\n' "etcd cluster healthy" "$(span "$t_network" "$t_etcd")"
printf '   %-48s %s\n' "hosts started -> one leader, two standbys" "$(span "$t_etcd" "$t_elected")"
printf '   %-48s %s\n' "views live, 3 writes converged" "$(span "$t_elected" "$t_converged")"
printf '   %-48s %s\n' "cut -> host$old stepped down (lease ${LEASE_SECONDS} s)" "$(span "$t_cut" "$stepped_down_at")"
printf '   %-48s %s\n' "cut -> host$new leads" "$(span "$t_cut" "$t_new")"
printf '   %-48s %s\n' "cut -> watch1 live on host$new" "$(span "$t_cut" "${t_live[watch1]}")"
printf '   %-48s %s\n' "cut -> watch2 live on host$new" "$(span "$t_cut" "${t_live[watch2]}")"
printf '   %-48s %s\n' "write after the failover, everyone agrees" "$(span "$t_views_failed_over" "$t_written")"
printf '   %-48s %s\n' "restore -> host$old stands by behind host$new" "$(span "$t_restore" "$t_rejoined")"
printf '   %-48s %s\n' "whole run" "$(span 0 "$t_done")"
echo
echo "   final values"
printf '   %-48s %s\n' "watch1 (list ${control[1]#tcp://}, .2, .3)" "$(last_value watch1)"
printf '   %-48s %s\n' "watch2 (list ${control[3]#tcp://}, .2, .1)" "$(last_value watch2)"
printf '   %-48s %s\n' "statebus get (list starting with host$old)" "count = $final_get"
printf '   %-48s %s\n' "etcd m1, m2, m3: persisted count at revision" "$(etcd_count 1), $(etcd_count 2), $(etcd_count 3)"
for i in 1 2 3; do printf '   %-48s %s\n' "host$i role" "$(last_role "$i")"; done
echo
echo "$me: converged: host$new took over from host$old across a cut link, and host$old came back as its standby"
