#!/usr/bin/env bash
# What the shim executes per recorded CUDA launch, counted rather than timed: the launch loop of
# scripts/bench/cuda_launches.c (1000 cuLaunchKernel calls per window, a cuStreamSynchronize
# closing each) against the test-double libcuda, under valgrind's callgrind, at two numbers of
# windows; the difference divided by the launches between them is the cost per launch, free of
# start-up and of the machine's load (for VMs without hardware counters, where timings of a
# 2-core machine spread by ±40%). Prints instructions per launch in the launch hook, in the
# synchronization hooks (closing windows), in recording logged launches (`launch_log`: on the
# shim's own thread while it keeps up; callgrind runs one thread at a time, so here mostly inside
# the synchronization hook, which takes what the log still holds) and on the trace writer's
# thread, for this build and, with BASELINE_SHIM=path/to/libshim.so, another one side by side.
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

# counts SHIM WINDOWS: callgrind's per-function totals (inclusive) of one run.
counts() {
  LD_LIBRARY_PATH="$work" REPRISE_OUTPUT="$work/trace" LD_PRELOAD="$1" \
    valgrind --tool=callgrind --callgrind-out-file="$work/out.$2" "$work/launches" 1000 "$2" >/dev/null 2>&1
  callgrind_annotate --inclusive=yes "$work/out.$2" >"$work/annotated.$2"
}

per_launch() {
  python3 - "$work/annotated.$few" "$work/annotated.$many" $(((many - few) * 1000)) "$1" <<'EOF'
import re, sys
# Functions whose inclusive counts make up the recording's cost, by where callgrind names them.
parts = {"launch hook": r"hooks\.rs:cuLaunchKernel \[", "synchronization hook": r"hooks\.rs:cuStreamSynchronize \[",
         "recording logged launches": r"launch_log\.rs:shim::cuda::launch_log::record_logged \[",
         "writer thread": r"writer\.rs:(shim::writer::write_all|std::sys::backtrace::__rust_begin_short_backtrace) \["}
# Builds without a launch log record each launch in its hook.
optional = {"recording logged launches"}
def totals(path):
    found = {}
    for line in open(path):
        for name, pattern in parts.items():
            if name not in found and re.search(pattern, line):
                found[name] = int(line.split()[0].replace(",", ""))
    missing = set(parts) - set(found) - optional
    if missing:
        sys.exit("bench-launch-instructions: no %s in %s" % (", ".join(sorted(missing)), path))
    return found
few, many, launches = totals(sys.argv[1]), totals(sys.argv[2]), int(sys.argv[3])
each = {name: (many.get(name, 0) - few.get(name, 0)) / launches for name in parts}
hooks = each["launch hook"] + each["synchronization hook"]
logged = each["recording logged launches"]
print("%s: %s; program thread %.0f (its hooks less the logged launches they recorded), all %.0f instructions per recorded launch" % (
    sys.argv[4], ", ".join("%s %.0f" % item for item in each.items()), hooks - logged, hooks + each["writer thread"]))
EOF
}

for shim in "$PWD/target/release/libshim.so" ${BASELINE_SHIM:+"$BASELINE_SHIM"}; do
  counts "$shim" $few
  counts "$shim" $many
  per_launch "$shim"
done
