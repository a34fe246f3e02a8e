#!/usr/bin/env bash
# The replayer at scale, side by side in one run. Traces of 1,000, 10,000, 100,000 and 1,000,000
# segments are written by trace-format's synthetic_trace example, record for record as the shim
# records tests/opencl/many_segments.c (10 launches and a 16-byte read per segment, one family
# patched with new constants); that program is also recorded for real under the shim on PoCL at
# 10,000 segments, to show the synthetic traces are alike. For each trace: what it holds, then the
# wall time, CPU time and peak memory (maximum resident set size, as `/usr/bin/time -v` reports it)
# of `replayer info`, `validate`, and `replay --iterations 1 --compare` as command buffers and
# eagerly on PoCL (a warm-up iteration, one timed, and an untimed one that compares; "per iteration" is
# the timed one).
# usage: scripts/bench-replayer-scale.sh [SEGMENTS...]   (default: 1000 10000 100000 1000000)
#   REPRISE_BENCH_DIR: where the traces go (default: a temporary directory, removed at the end)
#   REPRISE_BASELINE_REPLAYER: an older replayer binary to measure beside this one, where it can:
#     `info` and `validate` up to 100,000 segments, `replay` up to 10,000 (it held whole traces in
#     memory, and its replay set-up grew with the square of the segments)
#   REPRISE_BENCH_FAMILIES: also a trace of that many segments, each a family of its own
set -euo pipefail
cd "$(dirname "$0")/.."
. scripts/env.sh
sizes=("$@")
[ ${#sizes[@]} -gt 0 ] || sizes=(1000 10000 100000 1000000)
cargo build -q --release -p shim -p replayer -p trace-format --example synthetic_trace
work=${REPRISE_BENCH_DIR:-}
if [ -z "$work" ]; then
  work=$(mktemp -d)
  trap 'rm -rf "$work"' EXIT
fi
mkdir -p "$work"
replayer="$PWD/target/release/replayer"
python=${REPRISE_PYTHON:-python3}

# measure LABEL COMMAND...: runs the command once, prints "wall s (cpu s), peak MB" and keeps its output.
measure() {
  local label=$1; shift
  /usr/bin/time -o "$work/time" -f "%e %U %S %M" "$@" >"$work/$label.out" 2>"$work/$label.err" || {
    echo "failed: $* (see $work/$label.err)" >&2; cat "$work/$label.err" >&2; exit 1; }
  awk '{ printf "%.2f s (%.2f cpu), %.0f MB", $1, $2 + $3, $4 / 1024 }' "$work/time"
}

# per_iteration LABEL: the timed iteration of a `replay --json` run, in seconds.
per_iteration() { "$python" -c 'import json,sys; print("%.2f" % (json.load(open(sys.argv[1]))["time_per_iteration_us"]["median"] / 1e6))' "$work/$1.out"; }

# holds TRACE: segments, nodes, families and size, from `replayer info --json`.
holds() {
  "$replayer" info --json "$1" | "$python" -c 'import json,os,sys; i=json.load(sys.stdin)
print("%d segments, %d nodes, %d families, %.0f MB" % (i["segments"], i["nodes"], len(i["families"] or []), os.path.getsize(sys.argv[1]) / 2**20))' "$1"
}

baseline=${REPRISE_BASELINE_REPLAYER:-}

# bench NAME TRACE SEGMENTS
bench() {
  local name=$1 trace=$2 segments=$3
  echo "== $name: $(holds "$trace")"
  for command in info validate; do
    local line
    line="  $command: $(measure "$name-$command" "$replayer" "$command" "$trace")"
    if [ -n "$baseline" ] && [ "$segments" -le 100000 ]; then
      line+="; baseline $(measure "$name-$command-baseline" "$baseline" "$command" "$trace")"
    fi
    echo "$line"
  done
  for mode in graph eager; do
    local line
    line="  replay $mode: $(measure "$name-$mode" "$replayer" replay "$trace" --iterations 1 --mode "$mode" --compare --json --device portable)"
    line+="; per iteration $(per_iteration "$name-$mode") s"
    if [ -n "$baseline" ] && [ "$segments" -le 10000 ]; then
      line+="; baseline $(measure "$name-$mode-baseline" "$baseline" replay "$trace" --iterations 1 --mode "$mode" --compare --json --device portable)"
      line+=", per iteration $(per_iteration "$name-$mode-baseline") s"
    fi
    echo "$line"
  done
}

echo "machine: $(nproc) cores, $(free -g | awk '/Mem:/ {print $2}') GiB, $(lscpu | sed -n 's/^Model name: *//p'); load $(cut -d' ' -f1-3 /proc/loadavg)"
for segments in "${sizes[@]}"; do
  target/release/examples/synthetic_trace "$work/synthetic-$segments.trace" "$segments"
  bench "synthetic $segments" "$work/synthetic-$segments.trace" "$segments"
  rm -f "$work/synthetic-$segments.trace"
done
if [ -n "${REPRISE_BENCH_FAMILIES:-}" ]; then
  families=$REPRISE_BENCH_FAMILIES
  target/release/examples/synthetic_trace "$work/families-$families.trace" "$families" "$families"
  bench "synthetic $families, each its own family" "$work/families-$families.trace" "$families"
  rm -f "$work/families-$families.trace"
fi
cc -O2 -o "$work/many_segments" tests/opencl/many_segments.c -lOpenCL -lm
echo "== many_segments 10000, natively: $(measure native "$work/many_segments" 10000)"
echo "   recorded under the shim: $(measure recording env REPRISE_OUTPUT="$work/recorded.trace" LD_PRELOAD="$PWD/target/release/libshim.so" "$work/many_segments" 10000)"
bench "recorded 10000" "$work/recorded.trace" 10000
