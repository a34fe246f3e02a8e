#!/usr/bin/env bash
# The whole GPU check in one call, on an NVIDIA machine with nvcc but no Rust:
#   scripts/gpu-check.sh [BIN_DIR]   (BIN_DIR holds libshim.so and replayer built elsewhere; default target/release)
# Builds every CUDA test program in tests/cuda with nvcc -arch=sm_90, runs each natively and under the shim,
# replays its trace as CUDA graphs and eagerly with --compare, and prints one table; then the same loop for
# the OpenCL example on the NVIDIA OpenCL driver, and the shim's per-call cost on the launch-bound program.
# Exits non-zero if any row fails. Logs, traces and the table go to $OUT (or a temporary directory).
# --only PATTERNS (comma-separated shell patterns on program names) checks only the programs named.
# BASELINE_BIN=DIR (another build's libshim.so and replayer) adds that build's recording cost and replay
# times beside this one's (scripts/bench-replayers.sh). REPLAYER_ARGS (say `--host-copies stream`) is
# added to every replay of the table's rows and of the samples.
#
# NVIDIA's cuda-samples instead (scripts/cuda_samples.py has the details and the samples left out, with why):
#   scripts/gpu-check.sh [BIN_DIR] --samples DIR [--only PATTERNS] [--build-only | --run-only]
# builds every sample of DIR that runs on one GPU without a display with nvcc in parallel into $SAMPLES_WORK
# (default /tmp/reprise-cuda-samples, kept between calls), then runs each natively, under the shim and
# replayed (graph, eager, --compare), several at once ($SAMPLE_JOBS, default 6), each step under a timeout of
# $SAMPLE_TIMEOUT seconds (default 60), and prints one table. PATTERNS (comma-separated, shell patterns on
# CATEGORY/NAME or NAME) picks a subset; --build-only and --run-only split the work over two calls. A machine
# that cannot fetch the samples gets a trimmed copy (about 50 MB) made where they are fetched:
#   python3 scripts/cuda_samples.py pack NVIDIA-cuda-samples-checkout DEST
# The run step ends with what recording costs simpleStreams and reduction where they were built (issue 14's
# cases: scripts/bench-program.sh, $COST_ROUNDS alternating rounds, default 3).
set -uo pipefail
cd "$(dirname "$0")/.."
bin_dir=target/release samples="" only="" steps="build run"
while [ $# -gt 0 ]; do
  case $1 in
    --samples) samples=${2:-}; shift 2 ;;
    --only) only=${2:-}; shift 2 ;;
    --build-only) steps=build; shift ;;
    --run-only) steps=run; shift ;;
    -*) echo "gpu-check: unknown option $1" >&2; exit 2 ;;
    *) bin_dir=$1; shift ;;
  esac
done
bin=$(cd "$bin_dir" && pwd) || exit 2
for needed in "$bin/libshim.so" "$bin/replayer"; do
  [ -e "$needed" ] || { echo "gpu-check: $needed is missing: run \`cargo build --release\` where Rust is and bring target/release" >&2; exit 2; }
done
# The CUDA toolkit's nvcc, where the machine's PATH lacks it.
command -v nvcc >/dev/null || export PATH="$PATH:/usr/local/cuda/bin"
if [ -n "$samples" ]; then
  out=${OUT:-$(mktemp -d)}
  samples_work=${SAMPLES_WORK:-/tmp/reprise-cuda-samples}
  status=0
  case $steps in *build*) python3 scripts/cuda_samples.py build "$samples" "$samples_work" --only "$only" || status=$? ;; esac
  case $steps in *run*) python3 scripts/cuda_samples.py run "$samples" "$samples_work" "$bin" "$out" --only "$only" \
    --jobs "${SAMPLE_JOBS:-6}" --timeout "${SAMPLE_TIMEOUT:-60}" || status=$?
    bench=$(pwd)/scripts/bench-program.sh
    for costly in simpleStreams reduction; do
      [ -x "$samples_work/$costly/$costly" ] || continue
      (cd "$samples_work/$costly" && ROUNDS=${COST_ROUNDS:-3} "$bench" "$bin" "./$costly") | tee -a "$out/samples.md"
    done ;;
  esac
  exit $status
fi
shim="$bin/libshim.so"
replayer="$bin/replayer"
out=${OUT:-$(mktemp -d)}
work=$(mktemp -d)
images="$work/images"
mkdir -p "$images" "$out/logs"
export IMAGES="$images"
failures=0
table="$out/gpu-check.md"

nvcc -arch=sm_90 -ptx -o "$images/kernels.ptx" tests/cuda/kernels.cu &&
  nvcc -arch=sm_90 -cubin -o "$images/kernels.cubin" tests/cuda/kernels.cu &&
  nvcc -arch=sm_90 -fatbin -o "$images/kernels.fatbin" tests/cuda/kernels.cu || { echo "gpu-check: cannot build kernels.cu"; failures=$((failures + 1)); }

directive() { sed -n "s|^// gpu-check-$1: ||p" "$2" | head -n 1; }
# A replay's JSON report: lines kernels printed can come before it, and after it as the replayer exits.
read_report="import sys; sys.path.insert(0, '$(dirname "$0")'); import replay_report; d=replay_report.read(sys.argv[1])"
median() { python3 -c "$read_report"'; print("%.1f" % d["time_per_iteration_us"]["median"])' "$1" 2>/dev/null || echo "-"; }
# replay_time MODE FILE: a mode's median in a `--mode both` report and, in parentheses, the median time
# the host spent submitting (the rest waited for each segment's end); replay_time ratio FILE: eager over graph.
replay_time() { python3 -c "$read_report"'; m=sys.argv[2]; print("%.2f" % d["eager_over_graph"] if m == "ratio" else "%.1f (%.1f)" % (d[m]["time_per_iteration_us"]["median"], d[m]["submitting_per_iteration_us"]["median"]))' "$2" "$1" 2>/dev/null || echo "-"; }
# Timed iterations for about 0.1 s a run, from a replay report's median.
iterations_for() { python3 -c "$read_report"'; print(max(10, min(500, int(1e5 / max(d["time_per_iteration_us"]["median"], 1)))))' "$1" 2>/dev/null || echo 10; }
# A comparison of nothing (a trace with no expected contents) is not a pass.
passed() { python3 -c "$read_report"'; c=d["comparison"]; sys.exit(0 if c["passed"] and c["compared"] > 0 else 1)' "$1" 2>/dev/null; }
program_time() { sed -n 's/^time: us_per_iteration \([0-9.]*\).*/\1/p' "$1" | head -n 1; }

# Replay times come from a run of their own that alternates graph and eager rounds (4 each).
echo "| program | native == shim | graph --compare | eager --compare | program µs/iter | graph µs/iter (submitting) | eager µs/iter (submitting) | eager / graph |" >"$table"
echo "| --- | --- | --- | --- | --- | --- | --- | --- |" >>"$table"

# check NAME COMMAND...: one row of the table.
check() {
  local name=$1; shift
  local log="$out/logs/$name"
  "$@" >"$log.native" 2>"$log.native.err"; local native_rc=$?
  env ${RECORD_ENV:-} REPRISE_OUTPUT="$work/$name.trace" LD_PRELOAD="$shim" "$@" >"$log.shim" 2>"$log.shim.err"; local shim_rc=$?
  local same=no
  if [ $native_rc -eq 0 ] && [ $shim_rc -eq 0 ] && diff <(grep -v '^time:' "$log.native") <(grep -v '^time:' "$log.shim") >/dev/null; then same=yes; fi
  local graph=fail eager=fail
  for mode in graph eager; do
    "$replayer" replay "$work/$name.trace" --mode $mode --iterations 20 --compare --json ${REPLAY_DEVICE:+--device "$REPLAY_DEVICE"} ${REPLAY_OPTIONS:-} ${REPLAYER_ARGS:-} >"$log.$mode.json" 2>"$log.$mode.err"
    local rc=$?
    if [ $rc -eq 0 ] && passed "$log.$mode.json"; then eval "$mode=pass"; else eval "$mode='fail (exit $rc)'"; fi
  done
  # Programs whose threads or streams interleave differently each run are recorded again
  # (// gpu-check-recordings: N), and every recording replays both ways.
  local again
  for ((again = 2; again <= ${RECORDINGS:-1}; again++)); do
    env ${RECORD_ENV:-} REPRISE_OUTPUT="$work/$name.again.trace" LD_PRELOAD="$shim" "$@" >/dev/null 2>>"$log.again.err" || { graph="fail (recording $again)"; break; }
    for mode in graph eager; do
      "$replayer" replay "$work/$name.again.trace" --mode $mode --iterations 2 --compare --json ${REPLAY_DEVICE:+--device "$REPLAY_DEVICE"} ${REPLAY_OPTIONS:-} ${REPLAYER_ARGS:-} >"$log.again.json" 2>>"$log.again.err" &&
        passed "$log.again.json" || { eval "$mode='fail (recording $again)'"; break 2; }
    done
  done
  [ "${RECORDINGS:-1}" -gt 1 ] && [ "$graph" = pass ] && [ "$eager" = pass ] && graph="pass (${RECORDINGS} recordings)" eager="pass (${RECORDINGS} recordings)"
  [ "$same" = yes ] && [ "${graph%% *}" = pass ] && [ "${eager%% *}" = pass ] || failures=$((failures + 1))
  "$replayer" replay "$work/$name.trace" --mode both --rounds 4 --iterations "$(iterations_for "$log.graph.json")" --json \
    ${REPLAY_DEVICE:+--device "$REPLAY_DEVICE"} ${REPLAY_OPTIONS:-} ${REPLAYER_ARGS:-} >"$log.timed.json" 2>"$log.timed.err"
  echo "| $name | $same | $graph | $eager | $(program_time "$log.native") | $(replay_time graph "$log.timed.json") | $(replay_time eager "$log.timed.json") | $(replay_time ratio "$log.timed.json") |" >>"$table"
  # Traces come back with the logs unless large (PyTorch's holds its fatbins).
  if [ -f "$work/$name.trace" ] && [ "$(stat -c %s "$work/$name.trace")" -lt 20000000 ]; then cp "$work/$name.trace" "$out/logs/"; fi
}

# build SOURCE: the program's binary in $work, nvcc's output in the logs.
build() {
  local source=$1 name flags
  name=$(basename "${source%.*}")
  read -r -a flags <<<"$(directive flags "$source")"
  nvcc -arch=sm_90 -O2 -Itests/cuda "${flags[@]}" -o "$work/$name" "$source" >"$out/logs/$name.build" 2>&1
}
# chosen NAME: whether --only names the program (every program without --only).
chosen() {
  [ -z "$only" ] && return 0
  local pattern
  for pattern in ${only//,/ }; do
    # shellcheck disable=SC2254
    case $1 in $pattern) return 0 ;; esac
  done
  return 1
}
sources=()
for source in tests/cuda/*.cu tests/cuda/*.cpp; do
  name=$(basename "${source%.*}")
  [ "$name" != kernels ] && chosen "$name" && sources+=("$source")
done
# One nvcc is mostly one core: build every program at once, before anything is timed.
for source in "${sources[@]}"; do build "$source" & done
wait
for source in "${sources[@]}"; do
  name=$(basename "${source%.*}")
  if [ ! -x "$work/$name" ]; then
    echo "| $name | build failed | | | | | | |" >>"$table"; failures=$((failures + 1)); continue
  fi
  read -r -a args <<<"$(eval echo "$(directive args "$source")")"
  RECORDINGS=$(directive recordings "$source") REPLAY_OPTIONS=$(directive replay "$source") RECORD_ENV=$(directive env "$source") \
    check "$name" "$work/$name" "${args[@]}"
done
# PyTorch's kernels take structures that hold device addresses, which replay relocates.
chosen pytorch_ops && check pytorch_ops python3 tests/cuda/pytorch_ops.py
# Training with SGD and a loss.item() per step, torch.compile (Triton) and torch.cuda.graph.
chosen pytorch_training && check pytorch_training python3 tests/cuda/pytorch_training.py 50
# cuDNN's Hopper kernels: thread-block clusters and the function attributes they need.
chosen cudnn_resnet && check cudnn_resnet python3 tests/cuda/cudnn_resnet.py
# The caching allocator's expandable segments: tensors spanning memory mapped piece by piece.
chosen pytorch_expandable && check pytorch_expandable python3 tests/cuda/pytorch_expandable.py
# Frameworks as their users write them, with their default settings.
for framework in cupy_pool numba_kernels triton_kernels transformers_gpt2; do
  chosen $framework && check $framework python3 tests/cuda/$framework.py
done
# With BASELINE_BIN (a directory with another build's libshim.so and replayer): the checked programs'
# traces replayed by its replayer beside this build's, graph and eager, alternating.
compare_baseline() {
  [ -n "${BASELINE_BIN:-}" ] || return 0
  local traces=() name
  for source in "${sources[@]}"; do
    name=$(basename "${source%.*}")
    [ -f "$work/$name.trace" ] && traces+=("$work/$name.trace")
  done
  echo
  ITERATIONS=50 scripts/bench-replayers.sh "$BASELINE_BIN/replayer" "$replayer" "${traces[@]}" | tee -a "$table"
}
# With --only, the chosen programs' rows (and the baseline's replays of their traces) are the whole check.
if [ -n "$only" ]; then
  compare_baseline >/dev/null
  cat "$table"
  [ $failures -eq 0 ]
  exit
fi

# The OpenCL loop on NVIDIA's OpenCL driver, when it has one.
if gcc -O2 -I/usr/local/cuda/include -o "$work/vector_add_cl" tests/examples/vector_add.c -L/usr/local/cuda/lib64 -lOpenCL 2>"$out/logs/opencl.build" &&
  "$work/vector_add_cl" >/dev/null 2>&1; then
  REPLAY_DEVICE=nvidia check opencl_vector_add "$work/vector_add_cl"
else
  echo "| opencl_vector_add | no NVIDIA OpenCL here | | | | | | |" >>"$table"
fi

# Topology: the multi-stream program's recorded graph against the graph CUDA's own stream capture builds
# from the same work (the program writes the captured nodes and edges when TOPOLOGY_OUT is set; recorded
# under the shim, so the program's own capture must also leave the trace alone).
if [ -x "$work/vector_add_streams" ]; then
  if TOPOLOGY_OUT="$out/logs/topology.captured" REPRISE_OUTPUT="$work/topology.trace" LD_PRELOAD="$shim" \
      "$work/vector_add_streams" >"$out/logs/topology.run" 2>&1 &&
    "$replayer" dot "$work/topology.trace" >"$out/logs/topology.dot" 2>>"$out/logs/topology.run" &&
    python3 scripts/gpu-topology.py "$out/logs/topology.dot" "$out/logs/topology.captured" >>"$table"; then
    :
  else
    echo "topology: FAILED (see logs/topology.*)" >>"$table"; failures=$((failures + 1))
  fi
fi

# --exact-addresses, for information only (not counted as a failure). The driver's address space starts
# where the kernel's address-space randomization puts it, so the recorded ranges are free in the replayer
# only when both processes run without it (setarch -R).
if [ -x "$work/vector_add_streams" ]; then
  for aslr in on off; do
    run=(); [ $aslr = off ] && run=(setarch "$(uname -m)" -R)
    "${run[@]}" env REPRISE_OUTPUT="$work/exact-$aslr.trace" LD_PRELOAD="$shim" "$work/vector_add_streams" >/dev/null 2>&1
    if "${run[@]}" "$replayer" replay "$work/exact-$aslr.trace" --exact-addresses --compare --json >"$out/logs/exact-$aslr.json" 2>"$out/logs/exact-$aslr.err" &&
      passed "$out/logs/exact-$aslr.json"; then
      echo "exact addresses (vector_add_streams, randomization $aslr, information only): pass" >>"$table"
    else
      echo "exact addresses (vector_add_streams, randomization $aslr, information only): fail: $(head -n 1 "$out/logs/exact-$aslr.err")" >>"$table"
    fi
  done
fi

# Updates (issue 5): in the Jacobi program, the program that updates its own graph and the one whose
# rounds allocate scratch memory in stream order, the repeated segments (one per iteration, launch or round;
# Jacobi's first window also holds the upload, so 15 of its 16) share one family, which graph mode
# patches natively (cuGraphExecKernelNodeSetParams / cuGraphExecUpdate) with no rebuilds. The set-up and
# final read-back windows around them are families of their own.
for entry in jacobi:15 own_graph:4 stream_ordered:3; do
  name=${entry%:*}; repeats=${entry#*:}
  report="$out/logs/$name.graph.json"
  "$replayer" info --json "$work/$name.trace" >"$out/logs/$name.info.json" 2>/dev/null
  if summary=$(python3 -c 'import json,sys; d=json.load(open(sys.argv[1])); i=json.load(open(sys.argv[3])); repeats=int(sys.argv[4])
largest=max((f["members"] for f in i["families"]), default=0)
print("%s: %d segments, %d families (largest %d segments), %d command buffers built, %d native updates, %d rebuilds" % (sys.argv[2], d["segments"], d["families"], largest, d["command_buffers_built"], d["native_updates"], d["rebuilds"]))
sys.exit(0 if largest >= repeats and d["native_updates"] > 0 and d["rebuilds"] == 0 and d["comparison"]["passed"] else 1)' "$report" "$name" "$out/logs/$name.info.json" "$repeats" 2>/dev/null); then
    echo "updates: $summary" >>"$table"
  else
    echo "updates: FAILED, want the repeated segments in one family patched natively: ${summary:-no report $report}" >>"$table"; failures=$((failures + 1))
  fi
done

# Stream-ordered allocation (stream_ordered.cu): each round's scratch memory is allocated and freed in stream
# order; the first three rounds share one window (frees do not end it), the next three are a window each, one
# family (see updates above). Graph replay builds them with allocation and free nodes (passing above).
if summary=$("$replayer" info --json "$work/stream_ordered.trace" 2>/dev/null | python3 -c 'import json,sys; d=json.load(sys.stdin); k=d["nodes_by_kind"]
print("%d segment(s), %d allocations and %d frees in stream order" % (d["segments"], k.get("mem_alloc", 0), k.get("mem_free", 0)))
sys.exit(0 if d["segments"] == 5 and k.get("mem_alloc") == 6 and k.get("mem_free") == 6 else 1)'); then
  echo "stream-ordered memory: stream_ordered: $summary" >>"$table"
else
  echo "stream-ordered memory: FAILED, want 5 windows with 6 allocations and 6 frees: ${summary:-no trace}" >>"$table"; failures=$((failures + 1))
fi

# The program's own graphs and captures (issue 11): the traces are complete (no node left out) and hold the
# node types the programs' graphs have, replayed as such (passing above).
for entry in graph_nodes:conditional,event_record,event_wait,mem_alloc,mem_free,host_task capture_alongside:conditional; do
  name=${entry%%:*}; kinds=${entry#*:}
  if summary=$("$replayer" info --json "$work/$name.trace" 2>/dev/null | python3 -c 'import json,sys; d=json.load(sys.stdin); k=d["nodes_by_kind"]; want=sys.argv[1].split(",")
for kind, count in d.get("inner_nodes_by_kind", {}).items(): k[kind] = k.get(kind, 0) + count
print("%s: %s; partial: %s" % (sys.argv[2], ", ".join("%d %s" % (k.get(w, 0), w) for w in want), [p["reason"] for p in d["partial"]] or "none"))
sys.exit(0 if d["complete"] and all(k.get(w, 0) > 0 for w in want) else 1)' "$kinds" "$name"); then
    echo "own graphs: $summary" >>"$table"
  else
    echo "own graphs: FAILED, want a complete trace with $kinds: ${summary:-no trace}" >>"$table"; failures=$((failures + 1))
  fi
done

# What a native update saves over rebuilding the graph, on the Jacobi trace (16 patched windows).
for updates in native rebuild; do
  "$replayer" replay "$work/jacobi.trace" --iterations 50 --compare --json --updates $updates >"$out/logs/jacobi.$updates.json" 2>>"$out/logs/jacobi.updates.err"
done
echo "jacobi, µs per iteration (median of 50) with patches applied natively: $(median "$out/logs/jacobi.native.json"), by rebuilding each graph: $(median "$out/logs/jacobi.rebuild.json")" >>"$table"

# A profile is one timeline of the last run: every segment's nodes, each segment after the one before.
for mode in graph eager; do
  profile="$out/logs/jacobi.$mode.profile.json"
  "$replayer" replay "$work/jacobi.trace" --mode $mode --iterations 3 --profile "$profile" >/dev/null 2>>"$out/logs/jacobi.profile.err"
  summary=$(python3 -c 'import json, sys
events = [e for e in json.load(open(sys.argv[1]))["traceEvents"] if e["ph"] == "X"]
segments = sorted({e["args"]["segment"] for e in events})
spans = [(min(e["ts"] for e in events if e["args"]["segment"] == s), max(e["ts"] + e["dur"] for e in events if e["args"]["segment"] == s)) for s in segments]
in_order = all(later[0] >= earlier[1] for earlier, later in zip(spans, spans[1:]))
print("%d events, %d segments, %s" % (len(events), len(segments), "one after another" if in_order else "OVERLAPPING"))
sys.exit(0 if in_order and len(segments) > 1 else 1)' "$profile" 2>&1) && echo "jacobi profile ($mode): $summary" >>"$table" ||
    { echo "jacobi profile ($mode): FAILED: ${summary:-no profile}" >>"$table"; failures=$((failures + 1)); }
done

cat "$table"

# The regression runner (issue 6) over the same CUDA programs, eager and graph timed side by side in
# 4 alternating rounds: its Markdown and JSON reports in $OUT.
python3 - "$work" "$work/cuda-manifest.json" tests/cuda/*.cu tests/cuda/*.cpp <<'PY'
import json, os, re, sys
work, manifest, sources = sys.argv[1], sys.argv[2], sys.argv[3:]
programs = []
for source in sources:
    name = os.path.splitext(os.path.basename(source))[0]
    binary = os.path.join(work, name)
    if not os.access(binary, os.X_OK):
        continue
    args = re.search(r"^// gpu-check-args: (.*)$", open(source).read(), re.M)
    words = args.group(1).replace("$IMAGES", os.path.join(work, "images")).split() if args else []
    programs.append({"name": name, "command": [binary, *words]})
programs.append({"name": "pytorch_ops", "command": ["python3", os.path.abspath("tests/cuda/pytorch_ops.py")]})
json.dump({"programs": programs}, open(manifest, "w"), indent=1)
PY
python3 scripts/regress.py --manifest "$work/cuda-manifest.json" --target-dir "$bin" --rounds 4 --out "$out/regress-cuda" >"$out/logs/regress.log" 2>&1
echo; cat "$out/regress-cuda/report.md" 2>/dev/null || tail -5 "$out/logs/regress.log"

# The shim's cost on the launch-bound program (1000 launches per iteration): its own best time per iteration
# natively, with the shim idle (capture range over before the timed loop) and recording. The three runs
# alternate for 7 rounds and the medians are compared, so drift of the machine falls on all three alike.
if [ -x "$work/launch_bound" ]; then
  timed() { "$@" "$work/launch_bound" 2>>"$out/logs/overhead.err" | sed -n 's/^time: us_per_iteration //p'; }
  for round in 1 2 3 4 5 6 7; do
    echo "native $(timed env)"
    echo "idle $(timed env REPRISE_CAPTURE=0 REPRISE_OUTPUT="$work/idle.trace" LD_PRELOAD="$shim")"
    echo "recording $(timed env REPRISE_OUTPUT="$work/rec.trace" LD_PRELOAD="$shim")"
    [ -n "${BASELINE_BIN:-}" ] && echo "baseline $(timed env REPRISE_OUTPUT="$work/baseline.trace" LD_PRELOAD="$BASELINE_BIN/libshim.so")"
  done >"$out/logs/overhead.runs"
  echo
  # With 1000 launches per iteration, µs per iteration over native is ns per call.
  python3 - "$out/logs/overhead.runs" <<'PY' | tee -a "$table"
import statistics, sys
runs = {}
for line in open(sys.argv[1]):
    words = line.split()
    if len(words) == 2:
        runs.setdefault(words[0], []).append(float(words[1]))
if not {"idle", "native", "recording"} <= set(runs):
    print("launch_bound overhead: some runs printed no time (see logs/overhead.err)")
    sys.exit()
median = {name: statistics.median(times) for name, times in runs.items()}
best = {name: min(times) for name, times in runs.items()}
worst = {name: max(times) for name, times in runs.items()}
cost = lambda of, mode: "%.0f" % (of[mode] - of["native"])
print("launch_bound, 1000 launches per iteration, µs per iteration over %d alternating runs (median, best-worst): " % len(runs["native"])
      + ", ".join("%s %.1f (%.0f-%.0f)" % (name, median[name], best[name], worst[name]) for name in ("native", "idle", "recording"))
      + "; shim cost per call, ns (by medians / by best runs): idle %s / %s, recording %s / %s"
      % (cost(median, "idle"), cost(best, "idle"), cost(median, "recording"), cost(best, "recording")))
if "baseline" in runs:
    print("the baseline build recording: %.1f (%.0f-%.0f), ns per call by medians / by best runs: %s / %s"
          % (median["baseline"], best["baseline"], worst["baseline"], cost(median, "baseline"), cost(best, "baseline")))
PY
fi
# The same cost apart from the GPU's pace (launch_bound's 1000 launches fill the GPU's queue, so its
# submission waits for the GPU): scripts/bench/cuda_launch_cost.cu times submitting 100 launches and,
# once the GPU is done, the synchronization that closes their window. Each recording run follows a
# native run of its own, and with a baseline the two builds take turns going first: whichever ran
# right after the first native run of a round measured up to 150 ns a launch more (H200).
if nvcc -arch=sm_90 -O2 -o "$work/launch_cost" scripts/bench/cuda_launch_cost.cu 2>>"$out/logs/launch_cost.err"; then
  builds=(recording)
  [ -n "${BASELINE_BIN:-}" ] && builds=(recording baseline)
  for round in $(seq 12); do
    for who in "${builds[@]}"; do
      library=$shim
      [ "$who" = baseline ] && library=$BASELINE_BIN/libshim.so
      "$work/launch_cost" 100 100 | sed "s/^/native:$who /"
      REPRISE_OUTPUT="$work/cost-$who.trace" LD_PRELOAD="$library" "$work/launch_cost" 100 100 | sed "s/^/$who /"
    done
    builds=("${builds[@]:1}" "${builds[0]}")
  done >"$out/logs/launch_cost.runs" 2>>"$out/logs/launch_cost.err"
  python3 - "$out/logs/launch_cost.runs" <<'PY' | tee -a "$table"
import statistics, sys
runs = {}
for line in open(sys.argv[1]):
    words = line.split()
    if len(words) == 5:
        runs.setdefault((words[0], words[1]), []).append((float(words[2]), float(words[4])))
# A native run's median window spreads by about 10% from run to run (3.8-4.6 µs per launch on the
# H200), more than the shim adds: each recording run is set against the native run before it.
def paired(who, part):
    return statistics.median(m - n for (m, _), (n, _) in zip(runs[(who, part)], runs[("native:" + who, part)]))
def best(who, part):
    return min(b for _, b in runs[(who, part)]) - min(b for _, b in runs[("native:" + who, part)])
for who in ("recording", "baseline"):
    if (who, "submit_ns_per_launch") in runs and ("native:" + who, "submit_ns_per_launch") in runs:
        submit, close = (paired(who, part) for part in ("submit_ns_per_launch", "close_ns_per_launch"))
        best_submit, best_close = (best(who, part) for part in ("submit_ns_per_launch", "close_ns_per_launch"))
        print("%s cost per launch, ns (cuda_launch_cost, median over %d rounds of each run's median window less the native run's before it / best windows): submitting %.0f / %.0f, closing its window %.0f / %.0f, in all %.0f / %.0f"
              % (who, len(runs[(who, "submit_ns_per_launch")]), submit, best_submit, close, best_close, submit + close, best_submit + best_close))
PY
fi
# With BASELINE_BIN: besides its recording cost above, its replays of the own programs' traces.
compare_baseline
echo "gpu-check: $failures failing row(s); logs in $out/logs"
[ $failures -eq 0 ]
