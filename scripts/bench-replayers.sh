#!/usr/bin/env bash
# Two replayer builds side by side on the same traces, graph and eager mode, in one run:
#   scripts/bench-replayers.sh BASELINE_REPLAYER REPLAYER TRACE...   [ITERATIONS=100 ROUNDS=3]
# For each trace, ROUNDS alternating rounds replay it with each build in each mode (ITERATIONS timed
# iterations each); prints one Markdown row per trace with the medians of the rounds' median µs per
# iteration, and each build's graph/eager ratio (below 1: command buffers faster). Traces that fail to
# replay show the exit code instead of a time.
set -uo pipefail
[ $# -ge 3 ] || { echo "usage: scripts/bench-replayers.sh BASELINE_REPLAYER REPLAYER TRACE..." >&2; exit 2; }
baseline=$1 replayer=$2; shift 2
iterations=${ITERATIONS:-100} rounds=${ROUNDS:-3}
here=$(cd "$(dirname "$0")" && pwd)
work=$(mktemp -d)
trap 'rm -rf "$work"' EXIT
echo "| trace | baseline graph µs | baseline eager µs | graph/eager | graph µs | eager µs | graph/eager |"
echo "| --- | ---: | ---: | ---: | ---: | ---: | ---: |"
for trace in "$@"; do
  for ((round = 1; round <= rounds; round++)); do
    for build in baseline replayer; do
      for mode in graph eager; do
        report="$work/$build.$mode.$round.json"
        "${!build}" replay "$trace" --mode $mode --iterations "$iterations" --json >"$report" 2>"$work/err" || echo "exit $?" >"$report.failed"
      done
    done
  done
  HERE="$here" python3 - "$work" "$rounds" "$(basename "$trace" .trace)" <<'PY'
import os, statistics, sys
sys.path.insert(0, os.environ["HERE"])
import replay_report
work, rounds, name = sys.argv[1], int(sys.argv[2]), sys.argv[3]
cells = []
for build in ("baseline", "replayer"):
    medians = {}
    for mode in ("graph", "eager"):
        times, cell = [], None
        for round in range(1, rounds + 1):
            path = os.path.join(work, "%s.%s.%d.json" % (build, mode, round))
            if os.path.exists(path + ".failed"):
                cell = open(path + ".failed").read().strip()
                break
            timed = replay_report.read(path)["time_per_iteration_us"]
            if not timed:  # a replay that ends as recorded before a timed iteration
                cell = "-"
                break
            times.append(timed["median"])
        medians[mode] = statistics.median(times) if cell is None else None
        cells.append(cell or "%.1f" % medians[mode])
    both = medians["graph"] is not None and medians["eager"]
    cells.append("%.2f" % (medians["graph"] / medians["eager"]) if both else "-")
print("| %s | %s |" % (name, " | ".join(cells)))
PY
  rm -f "$work"/*.json "$work"/*.failed
done
