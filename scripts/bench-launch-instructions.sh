#!/usr/bin/env bash
# What the shim executes per recorded CUDA launch, counted rather than timed: the launch loop of
# scripts/bench/cuda_launches.c (1000 cuLaunchKernel calls per window, a cuStreamSynchronize
# closing each) against the test-double libcuda, under valgrind's callgrind, at two numbers of
# windows; the difference divided by the launches between them is the cost per launch, free of
# start-up and of the machine's load (for VMs without hardware counters, where timings of a
# 2-core machine spread by ±40%). Prints instructions per launch in the launch hook, in the
# synchronization hooks (closing windows, and recording what the launch log still holds), in
# recording logged launches and closing windows (`launch_log`, on whichever thread: the shim's own
# while it keeps up; callgrind runs one thread at a time, so here that thread falls behind and the
# launch hook records the log whenever it holds its bound, and the split between the threads varies
# from run to run) and on the trace writer's thread, and in all on the
# program's own thread (callgrind's file of thread 1) and on all threads, for this build and, with
# BASELINE_SHIM=path/to/libshim.so, another one side by side.
# usage: [BASELINE_SHIM=...] scripts/bench-launch-instructions.sh   (release build; needs valgrind)
set -euo pipefail
cd "$(dirname "$0")/.."
command -v valgrind >/dev/null || { echo "bench-launch-instructions: needs valgrind (apt-get install valgrind)" >&2; exit 2; }
cargo build -q --release -p shim
work=$(mktemp -d)
trap 'rm -rf "$work"' EXIT
cc -O2 -shared -fPIC -o "$work/libcuda.so.1" shim/src/cuda/test_driver/fake_libcuda.c
cc -O2 -o "$work/launches" scripts/bench/cuda_launches.c -ldl
few=20 many=60

# counts SHIM WINDOWS: callgrind's per-function totals (inclusive) of one run, one file per thread
# (callgrind numbers them from 1, the program's own thread).
counts() {
  rm -f "$work"/out.$2-* "$work"/annotated.$2-*
  LD_LIBRARY_PATH="$work" REPRISE_OUTPUT="$work/trace" LD_PRELOAD="$1" \
    valgrind --tool=callgrind --separate-threads=yes --callgrind-out-file="$work/out.$2" "$work/launches" 1000 "$2" >/dev/null 2>&1
  for file in "$work"/out.$2-*; do
    callgrind_annotate --inclusive=yes --threshold=100 "$file" >"$work/annotated.$2-${file##*-}"
  done
}

per_launch() {
  python3 - "$work" $few $many $(((many - few) * 1000)) "$1" <<'EOF'
import glob, re, sys
# Functions whose inclusive counts make up the recording's cost, by where callgrind names them,
# summed over the threads that ran them.
parts = {"launch hook": r"hooks\.rs:cuLaunchKernel \[", "synchronization hook": r"hooks\.rs:cuStreamSynchronize \[",
         "recording logged launches": r"launch_log\.rs:shim::cuda::launch_log::record_logged \[",
         "writer thread": r"writer\.rs:(shim::writer::write_all|std::sys::backtrace::__rust_begin_short_backtrace) \["}
# Builds without a launch log record each launch in its hook.
optional = {"recording logged launches"}
def count(line):
    return int(line.split()[0].replace(",", ""))
def totals(work, windows):
    found, threads = {}, {}
    for path in sorted(glob.glob("%s/annotated.%s-*" % (work, windows))):
        seen = set()
        for line in open(path):
            if "PROGRAM TOTALS" in line:
                threads[path.rsplit("-", 1)[1]] = count(line)
            for name, pattern in parts.items():
                if name not in seen and re.search(pattern, line):
                    seen.add(name)
                    found[name] = found.get(name, 0) + count(line)
    missing = set(parts) - set(found) - optional
    if missing or "01" not in threads:
        sys.exit("bench-launch-instructions: no %s for %s windows" % (", ".join(sorted(missing)) or "program thread", windows))
    return found, threads["01"], sum(threads.values())
work, few, many, launches, shim = sys.argv[1], sys.argv[2], sys.argv[3], int(sys.argv[4]), sys.argv[5]
(few_parts, few_program, few_all), (many_parts, many_program, many_all) = totals(work, few), totals(work, many)
each = {name: (many_parts.get(name, 0) - few_parts.get(name, 0)) / launches for name in parts}
print("%s: %s; program thread %.0f (all it ran, the test-double driver included), all threads %.0f instructions per recorded launch" % (
    shim, ", ".join("%s %.0f" % item for item in each.items()), (many_program - few_program) / launches, (many_all - few_all) / launches))
EOF
}

for shim in "$PWD/target/release/libshim.so" ${BASELINE_SHIM:+"$BASELINE_SHIM"}; do
  counts "$shim" $few
  counts "$shim" $many
  per_launch "$shim"
done
