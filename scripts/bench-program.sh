#!/usr/bin/env bash
# What recording costs one program, side by side in one run: the program alone, under the shim not
# capturing (REPRISE_CAPTURE=markers, no marker reached) and under the shim recording everything,
# alternating for ROUNDS rounds (default 5); prints the medians of whole-process wall time (trace
# writing included) and the ratios to the program alone, plus the last trace's size.
#   [ROUNDS=5] scripts/bench-program.sh SHIM_OR_BIN_DIR COMMAND...
# Runs in the current directory (samples find their data there); the program's output is dropped.
set -uo pipefail
[ $# -ge 2 ] || { echo "usage: scripts/bench-program.sh SHIM_OR_BIN_DIR COMMAND..." >&2; exit 2; }
shim=$1; shift
[ -d "$shim" ] && shim="$shim/libshim.so"
shim=$(cd "$(dirname "$shim")" && pwd)/$(basename "$shim")
[ -f "$shim" ] || { echo "bench-program: no shim at $shim" >&2; exit 2; }
work=$(mktemp -d)
trap 'rm -rf "$work"' EXIT
# Seconds one run takes; a failing run prints "failed".
seconds() {
  local start end
  start=$(date +%s.%N)
  "$@" >/dev/null 2>&1 || { echo failed; return; }
  end=$(date +%s.%N)
  python3 -c "print($end - $start)"
}
for ((round = 1; round <= ${ROUNDS:-5}; round++)); do
  echo "alone $(seconds "$@")"
  echo "idle $(seconds env REPRISE_CAPTURE=markers REPRISE_OUTPUT="$work/idle.trace" LD_PRELOAD="$shim" "$@")"
  rm -f "$work/recording.trace"
  echo "recording $(seconds env REPRISE_OUTPUT="$work/recording.trace" LD_PRELOAD="$shim" "$@")"
done | python3 -c '
import statistics, sys
runs = {}
for line in sys.stdin:
    name, value = line.split()
    if value == "failed":
        sys.exit("bench-program: a run %s failed" % name)
    runs.setdefault(name, []).append(float(value))
median = {name: statistics.median(times) for name, times in runs.items()}
print("%s: median of %d alternating runs: alone %.3f s, shim not capturing %.3f s (%.2fx), recording %.3f s (%.2fx)" % (
    sys.argv[1], len(runs["alone"]), median["alone"], median["idle"], median["idle"] / median["alone"],
    median["recording"], median["recording"] / median["alone"]))' "$(basename "$1")" || exit 1
echo "trace: $(du -h "$work/recording.trace" 2>/dev/null | cut -f1)"
