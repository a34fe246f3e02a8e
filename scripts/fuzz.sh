#!/usr/bin/env bash
# Fuzzes the trace reader for a bounded time (default 60 s) on stable Rust: cargo-fuzz with
# `--sanitizer none` needs no nightly. Findings land in fuzz/artifacts/read_trace/.
set -euo pipefail
cd "$(dirname "$0")/../fuzz"
seconds=${1:-60}
command -v cargo-fuzz >/dev/null || cargo install cargo-fuzz --locked
corpus=corpus/read_trace
cargo run -q --release --bin seed_corpus -- "$corpus"
cargo fuzz run --sanitizer none read_trace "$corpus" -- -max_total_time="$seconds" -max_len=65536 -rss_limit_mb=2048
