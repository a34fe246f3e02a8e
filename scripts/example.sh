#!/usr/bin/env bash
# Records the bundled example (tests/examples/vector_add.c) under the shim on PoCL and replays its
# trace as an OpenCL command buffer and eagerly, comparing the final memory with the recording.
set -euo pipefail
cd "$(dirname "$0")/.."
. scripts/env.sh
cargo build -q --release -p shim -p replayer
work=${REPRISE_EXAMPLE_DIR:-$(mktemp -d)}
cc -O2 -o "$work/vector_add" tests/examples/vector_add.c -lOpenCL
echo "== the program, natively"
"$work/vector_add"
echo "== the program under the shim"
REPRISE_OUTPUT="$work/vector_add.trace" LD_PRELOAD="$PWD/target/release/libshim.so" "$work/vector_add"
echo "== the trace"
target/release/replayer info "$work/vector_add.trace"
echo "== replayed as a command buffer, then eagerly, compared byte for byte"
target/release/replayer replay "$work/vector_add.trace" --mode graph --iterations 100 --compare
target/release/replayer replay "$work/vector_add.trace" --mode eager --iterations 100 --compare
echo "trace kept at $work/vector_add.trace"
