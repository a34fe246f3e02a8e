#!/usr/bin/env bash
# What recording costs the program, side by side in one run on each OpenCL device here (PoCL,
# and Intel's CPU runtime when set up), each measured over RUNS alternating runs (medians):
# 1. the shim loaded but not capturing (REPRISE_CAPTURE=markers, no marker reached) on a
#    launch-bound loop (scripts/bench/launches.c), against the program alone;
# 2. recording everything on a memory-bound loop over a 64 MB buffer with a blocking read per
#    round (scripts/bench/big_buffer_loop.c), against the program alone;
# 3. the cost per recorded launch on the launch-bound loop.
# Times are whole-process wall times (what a user waits for, trace writing included).
# usage: scripts/bench-recording.sh [RUNS]   (release build)
set -euo pipefail
cd "$(dirname "$0")/.."
. scripts/env.sh
runs=${1:-10}
cargo build -q --release -p shim
work=$(mktemp -d)
trap 'rm -rf "$work"' EXIT
cc -O2 -o "$work/launches" scripts/bench/launches.c -lOpenCL
cc -O2 -o "$work/big_buffer_loop" scripts/bench/big_buffer_loop.c -lOpenCL
shim="$PWD/target/release/libshim.so"

# Seconds one run of "$@" takes, wall clock.
seconds() {
  local start end
  start=$(date +%s.%N)
  "$@" >/dev/null
  end=$(date +%s.%N)
  echo "$end - $start" | bc -l
}

median() { sort -g | awk '{ v[NR] = $1 } END { print (NR % 2) ? v[(NR + 1) / 2] : (v[NR / 2] + v[NR / 2 + 1]) / 2 }'; }

# Alternates runs of a program alone and with the environment in $1 (words); prints the two medians.
paired() {
  local -a shim_env
  read -r -a shim_env <<< "$1"; shift
  local native_times="" shim_times=""
  for _ in $(seq "$runs"); do
    native_times+="$(seconds "$@")"$'\n'
    shim_times+="$(seconds env "${shim_env[@]}" "$@")"$'\n'
  done
  echo "$(echo -n "$native_times" | median) $(echo -n "$shim_times" | median)"
}

run_device() {
  local name=$1; shift
  local -a device_env=("$@")
  local launches=1000 windows=100
  read -r native idle < <(paired "LD_PRELOAD=$shim REPRISE_CAPTURE=markers REPRISE_OUTPUT=$work/idle.trace" env "${device_env[@]}" "$work/launches" $launches $windows)
  read -r native_rec recording < <(paired "LD_PRELOAD=$shim REPRISE_OUTPUT=$work/launches.trace" env "${device_env[@]}" "$work/launches" $launches $windows)
  read -r native_big recorded_big < <(paired "LD_PRELOAD=$shim REPRISE_OUTPUT=$work/big.trace" env "${device_env[@]}" "$work/big_buffer_loop" 50 64)
  awk -v d="$name" -v n="$native" -v i="$idle" -v nr="$native_rec" -v r="$recording" -v nb="$native_big" -v rb="$recorded_big" \
      -v count=$((launches * windows)) 'BEGIN {
    printf "| %s | %.3f s | %.3f s | %+.1f%% | %.3f s | %.3f s | %.2f us | %.3f s | %.3f s | %.2fx |\n",
      d, n, i, (i / n - 1) * 100, nr, r, (r - nr) / count * 1e6, nb, rb, rb / nb }'
}

echo "median of $runs alternating runs, $(nproc) cores, $(grep -m1 'model name' /proc/cpuinfo | cut -d: -f2 | xargs)"
echo
echo "| device | 100,000 launches alone | shim not capturing | idle cost | alone | recording | per recorded launch | 64 MB loop alone | recording | ratio |"
echo "| --- | ---: | ---: | ---: | ---: | ---: | ---: | ---: | ---: | ---: |"
run_device pocl
if [ -n "${REPRISE_INTEL_OCL:-}" ]; then
  run_device intel OCL_ICD_FILENAMES="$REPRISE_INTEL_OCL" LD_LIBRARY_PATH="$(dirname "$REPRISE_INTEL_OCL")"
fi
