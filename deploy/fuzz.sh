#!/usr/bin/env bash
# Fuzzes a host's request handling and a replica's publication handling (issue 12, item 9):
#
#   deploy/fuzz.sh [SECONDS] [extra statebus-fuzz options]     default 600 s, grows the corpus
#   deploy/fuzz.sh 300 --target replica                          one target only
#   deploy/fuzz.sh --no-grow 1800                                leave deploy/fuzz/corpus alone
#   deploy/fuzz.sh --ci                                          CI's smoke run: 60 s per target
#
# The host target gets requests of protocol versions 1 and 2 (version 2's writes in the write
# path's own encoding) and subscriptions; the replica target (a version-2 replica) gets what
# its host would send it: version-2 welcomes with property tables, snapshot parts, runs of
# updates on u2/<object> (valid ones from the host's encoders, damaged and mutated ones),
# heartbeats, join markers and write answers, from a stand-in host that also answers its
# requests and its writes.
#
# Builds the standalone harness `statebus-fuzz` in release into a scratch folder of its own
# (.build-fuzz, so the ordinary build is untouched) and runs it with the corpus in
# deploy/fuzz/corpus. Failing inputs go to .build-fuzz/crashes/ (ignored by git; replay one with
# `.build-fuzz/release/statebus-fuzz --replay FILE --target host|replica`).
#
# The corpus grows: the harness has no coverage feedback, so novelty is what the target says.
# An input that is the first to reach a log message (a refusal path, by its gist) or a reply
# kind that neither the corpus nor an earlier input of the run reached is saved, with the few
# inputs before it, as deploy/fuzz/corpus/grown-<target>-<what it reached>.bin (at most 20
# files a run, each at most 16 KiB; a name already there is not saved again). After a long run,
# look at `git status deploy/fuzz/corpus`: the names say what each new file reached; commit the
# ones that reach a path worth keeping (the next runs start from them and no longer report
# them), delete the others. `--write-corpus` regenerates the seed corpus and keeps grown files;
# after a protocol change that makes them meaningless, delete them by hand.
# Regenerate the corpus after a protocol change with
# `.build-fuzz/release/statebus-fuzz --write-corpus deploy/fuzz/corpus`. Inputs of bugs found
# and fixed are kept in deploy/fuzz/regressions (see its README.md).
#
# --ci: what CI runs after the tests (.ci/run), so that the fuzzers keep building and keep
# finding nothing: the debug build of the harness in the ordinary .build (CI's strict build,
# deploy/check.sh --ci, has already compiled it with everything else; a release build from
# scratch would cost CI several minutes more), a replay of each file in
# deploy/fuzz/regressions (named <target>-….bin), then 60 s of the host target and 60 s of
# the replica target, no corpus growth. Fails on any finding, lists the failing inputs and
# how to replay one, and prints one summary line per target. CI's targets start from a fixed
# seed (CI_SEED below), so every CI run sends the same inputs (as many as 60 s allow): a red
# CI is a change to the code under test, never the luck of the clock. Finding new bugs is
# the long runs' job (random seeds, growing corpus); what they find is fixed and kept in
# deploy/fuzz/regressions.
set -euo pipefail
cd "$(dirname "$0")/.."

usage() { sed -n '2,40p' "$0" | sed 's/^# \{0,1\}//'; }
# SwiftPM warns about pkg-config flags it ignores; nothing to act on.
quiet() { grep -v 'prohibited flag(s)' || true; }

grow=yes
ci=no
seconds=
while [ $# -gt 0 ]; do
  case "$1" in
    -h|--help) usage; exit 0 ;;
    --ci) ci=yes; shift ;;
    --no-grow) grow=no; shift ;;
    *)
      if [ -z "$seconds" ] && [ "$ci" = no ] && [[ "$1" != -* ]]; then seconds="$1"; shift; fi
      break ;;
  esac
done
seconds="${seconds:-600}"
case "$seconds" in
  ''|*[!0-9]*) echo "fuzz.sh: SECONDS must be a whole number, got '$seconds' (try: deploy/fuzz.sh 1800, or --help)" >&2; exit 2 ;;
esac

if [ "$ci" = yes ]; then
  [ $# -eq 0 ] || { echo "fuzz.sh: --ci takes no other options, got '$*' (try --help)" >&2; exit 2; }
  # The flags of the test build (.ci/run sets this too), so that only the harness compiles.
  export STATEBUS_STRICT=1
  if ! swift build --product statebus-fuzz 2>&1 | quiet; then
    echo "fuzz: the harness statebus-fuzz does not build" >&2
    exit 1
  fi
  binary="$(swift build --show-bin-path)/statebus-fuzz"
  # Checked in 150 s runs of each target (more inputs than a 60 s CI run sends).
  CI_SEED=20261127
  crashes=.build/fuzz-crashes
  rm -rf "$crashes"
  log=$(mktemp)
  trap 'rm -f "$log"' EXIT
  status=0
  summaries=()
  # The inputs of bugs found and fixed first: each replays in seconds, and keeps a fix a fix.
  for file in deploy/fuzz/regressions/*.bin; do
    [ -e "$file" ] || continue
    target=${file##*/}
    target=${target%%-*}
    if "$binary" --replay "$file" --target "$target" --crash-dir "$crashes" >"$log" 2>&1; then
      summaries+=("fuzz: regression ${file##*/} replayed, check passed")
    else
      cat "$log"
      summaries+=("fuzz: regression ${file##*/} FAILED (replay: $binary --replay $file --target $target)")
      status=1
    fi
  done
  for target in host replica; do
    printf '\nfuzz: %s target, 60 s\n' "$target"
    set +e
    "$binary" --seed "$CI_SEED" --duration 60 --slice 60 --target "$target" --corpus deploy/fuzz/corpus --crash-dir "$crashes" | tee "$log"
    target_status=${PIPESTATUS[0]}
    set -e
    [ "$target_status" -eq 0 ] || status=1
    # The worker's last line: "done target=host seed=… inputs=N (R/s) … checks=C …" (or "failed").
    last=$(grep -E "^(done|failed) target=$target " "$log" | tail -n 1 || true)
    inputs=$(sed -n 's/.* inputs=\([0-9]*\) .*/\1/p' <<<"$last")
    checks=$(sed -n 's/.* checks=\([0-9]*\) .*/\1/p' <<<"$last")
    result=$([ "$target_status" -eq 0 ] && echo "no findings" || echo "FINDINGS (exit $target_status)")
    summaries+=("fuzz: $target: ${inputs:-?} inputs sent, ${checks:-?} checks passed, $result")
  done
  echo
  printf '%s\n' "${summaries[@]}"
  if [ "$status" -ne 0 ]; then
    echo "fuzz: failing inputs (replay one with: $binary --replay FILE --target host|replica):"
    find "$crashes" -name '*.bin' -print | sed 's/^/  /'
  fi
  exit "$status"
fi

swift build -c release --scratch-path .build-fuzz --product statebus-fuzz
binary=.build-fuzz/release/statebus-fuzz
growing=()
[ "$grow" = yes ] && growing=(--grow-corpus deploy/fuzz/corpus)

# The harness prints progress every 10 s, each finding and each grown file as it happens,
# and a summary.
exec "$binary" --duration "$seconds" --corpus deploy/fuzz/corpus --crash-dir .build-fuzz/crashes "${growing[@]}" "$@"
