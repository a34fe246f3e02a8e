#!/usr/bin/env bash
# The whole test suite: builds the shim and the replayer, then runs every test of the workspace
# (end-to-end tests record real programs on PoCL and Intel's CPU OpenCL runtime).
set -euo pipefail
cd "$(dirname "$0")/.."
. scripts/env.sh
cargo build --workspace --bins --lib
cargo nextest run --workspace --no-fail-fast "$@"
