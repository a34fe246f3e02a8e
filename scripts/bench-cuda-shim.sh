#!/usr/bin/env bash
# The shim's cost per CUDA launch without a GPU, side by side in one run: a program making 1000
# cuLaunchKernel calls per window against the test-double libcuda, natively, under the shim idle
# (after its capture range) and under the shim recording; 7 alternating rounds, medians printed.
# With BASELINE_SHIM=path/to/libshim.so (another build), that build recording alternates too.
# On the H100 the same comparison runs on a real program in scripts/gpu-check.sh.
# usage: [BASELINE_SHIM=...] scripts/bench-cuda-shim.sh [LAUNCHES] [WINDOWS]   (release build)
set -euo pipefail
cd "$(dirname "$0")/.."
launches=${1:-1000}
windows=${2:-20}
cargo build -q --release -p shim
work=$(mktemp -d)
trap 'rm -rf "$work"' EXIT
cc -O2 -shared -fPIC -o "$work/libcuda.so.1" shim/src/cuda/test_driver/fake_libcuda.c
cc -O2 -o "$work/launches" scripts/bench/cuda_launches.c -ldl
shim="$PWD/target/release/libshim.so"
timed() { env LD_LIBRARY_PATH="$work" "$@" "$work/launches" "$launches" "$windows" | sed -n 's/^ns_per_launch //p'; }
for _ in 1 2 3 4 5 6 7; do
  echo "native $(timed)"
  echo "idle $(timed REPRISE_CAPTURE=0 REPRISE_OUTPUT="$work/idle.trace" LD_PRELOAD="$shim")"
  echo "recording $(timed REPRISE_OUTPUT="$work/recording.trace" LD_PRELOAD="$shim")"
  if [ -n "${BASELINE_SHIM:-}" ]; then echo "baseline $(timed REPRISE_OUTPUT="$work/baseline.trace" LD_PRELOAD="$BASELINE_SHIM")"; fi
done | python3 -c '
import statistics, sys
runs = {}
for line in sys.stdin:
    words = line.split()
    if len(words) != 2:
        sys.exit("bench-cuda-shim: a %s run printed no time" % words[0])
    runs.setdefault(words[0], []).append(float(words[1]))
median = {name: statistics.median(values) for name, values in runs.items()}
print("ns per launch (median of %d alternating runs): native %.1f, shim idle %.1f (+%.1f), shim recording %.1f (+%.1f)" % (
    len(runs["native"]), median["native"], median["idle"], median["idle"] - median["native"],
    median["recording"], median["recording"] - median["native"]))
if "baseline" in median:
    print("the baseline build recording: %.1f ns per launch (+%.1f)" % (median["baseline"], median["baseline"] - median["native"]))'
