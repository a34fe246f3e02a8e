#!/usr/bin/env bash
# Records one program many times at once, to find races that only load reveals, and replays every trace:
#   JOBS=12 ROUNDS=4 scripts/stress-recordings.sh BIN_DIR PROGRAM [ARGS...]
# Each round starts JOBS recordings of PROGRAM together (LD_PRELOAD=BIN_DIR/libshim.so), then replays each
# trace as command buffers and eagerly with --compare. Prints one line per round and a summary; exits
# non-zero if any recording exits non-zero or any replay fails. Traces and logs go to $OUT (or a temporary
# directory); each round's traces are removed once replayed, so disk use stays at one round's worth.
set -uo pipefail
[ $# -ge 2 ] || { echo "usage: scripts/stress-recordings.sh BIN_DIR PROGRAM [ARGS...]" >&2; exit 2; }
bin=$(cd "$1" && pwd) || exit 2
shift
jobs=${JOBS:-12} rounds=${ROUNDS:-4}
out=${OUT:-$(mktemp -d)}
mkdir -p "$out"
recorded_failures=0 replay_failures=0 runs=0
for round in $(seq 1 "$rounds"); do
  dir="$out/round-$round"
  mkdir -p "$dir"
  for job in $(seq 1 "$jobs"); do
    (LD_PRELOAD="$bin/libshim.so" REPRISE_OUTPUT="$dir/job-$job.trace" "$@" > "$dir/job-$job.log" 2>&1
     echo $? > "$dir/job-$job.rc") &
  done
  wait
  round_recorded=0 round_replays=0
  for job in $(seq 1 "$jobs"); do
    runs=$((runs + 1))
    if [ "$(cat "$dir/job-$job.rc")" != 0 ]; then
      round_recorded=$((round_recorded + 1))
      continue
    fi
    for mode in graph eager; do
      "$bin/replayer" replay "$dir/job-$job.trace" --mode "$mode" --iterations 1 --compare \
        > "$dir/job-$job.$mode.log" 2>&1 || round_replays=$((round_replays + 1))
    done
    rm -f "$dir/job-$job.trace"
  done
  echo "round $round: $jobs recordings, $round_recorded exited non-zero, $round_replays replays failed"
  recorded_failures=$((recorded_failures + round_recorded))
  replay_failures=$((replay_failures + round_replays))
done
echo "stress: $runs recordings of $1, $recorded_failures exited non-zero, $replay_failures replays failed (logs in $out)"
[ "$recorded_failures" = 0 ] && [ "$replay_failures" = 0 ]
