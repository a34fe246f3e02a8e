#!/usr/bin/env bash
# Side-by-side OpenCL measurements on every OpenCL device here (PoCL, and Intel's CPU runtime when set up):
# 1. the shim's cost per clSetKernelArg+clEnqueueNDRangeKernel pair: native, shim loaded but idle (after
#    its capture range), shim recording;
# 2. graph (command buffer) versus eager replay time per iteration of the recorded launch-bound trace;
# 3. the cost of patching between segments natively versus rebuilding, on the Jacobi program's trace
#    (tests/opencl/jacobi.c: 12 segments of one family, buffers swapped and a weight changed each time).
# usage: scripts/bench-opencl.sh [LAUNCHES] [ITERATIONS]   (release build)
set -euo pipefail
cd "$(dirname "$0")/.."
. scripts/env.sh
launches=${1:-1000}
iterations=${2:-20}
cargo build -q --release -p shim -p replayer
work=$(mktemp -d)
trap 'rm -rf "$work"' EXIT
cc -O2 -o "$work/launches" scripts/bench/launches.c -lOpenCL
cc -O2 -o "$work/jacobi" tests/opencl/jacobi.c -lOpenCL -lm
shim="$PWD/target/release/libshim.so"
replayer="$PWD/target/release/replayer"

per_launch() { "$@" | sed -n 's/.*us_per_launch \([0-9.]*\).*/\1/p'; }
best_of_3() { local best=""; for _ in 1 2 3; do v=$(per_launch "$@"); best=$(echo "$best $v" | tr ' ' '\n' | grep . | sort -g | head -n 1); done; echo "$best"; }

run_device() {
  local name=$1; shift
  local -a env_args=("$@")
  echo "== $name: $launches launches x $iterations iterations"
  native=$(best_of_3 env "${env_args[@]}" "$work/launches" "$launches" "$iterations")
  idle=$(best_of_3 env "${env_args[@]}" LD_PRELOAD="$shim" REPRISE_CAPTURE=0 REPRISE_OUTPUT="$work/idle.trace" "$work/launches" "$launches" "$iterations")
  recording=$(best_of_3 env "${env_args[@]}" LD_PRELOAD="$shim" REPRISE_OUTPUT="$work/$name.trace" "$work/launches" "$launches" "$iterations")
  awk -v n="$native" -v i="$idle" -v r="$recording" 'BEGIN {
    printf "per set-arg+launch pair: native %.3f us, shim idle %.3f us (%.2fx), shim recording %.3f us (%.2fx)\n", n, i, i / n, r, r / n }'
  env "${env_args[@]}" "$replayer" replay "$work/$name.trace" --mode both --iterations 20 --compare --device "$device_filter"
  env "${env_args[@]}" LD_PRELOAD="$shim" REPRISE_OUTPUT="$work/$name-jacobi.trace" "$work/jacobi" >/dev/null
  for updates in native rebuild; do
    echo "jacobi, patches applied by $updates:"
    env "${env_args[@]}" "$replayer" replay "$work/$name-jacobi.trace" --iterations 200 --compare --updates $updates --device "$device_filter" | sed -n 's/^/  /; 1p; 2p'
  done
}

device_filter=portable run_device pocl
if [ -n "${REPRISE_INTEL_OCL:-}" ]; then
  device_filter=intel run_device intel OCL_ICD_FILENAMES="$REPRISE_INTEL_OCL" LD_LIBRARY_PATH="$(dirname "$REPRISE_INTEL_OCL")" REPRISE_TEST_PLATFORM=Intel
fi
