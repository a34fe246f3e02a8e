//! `replayer replay` on hand-built OpenCL traces, on this machine's default OpenCL device
//! (PoCL in CI): its report, command-line patches, inputs and outputs, both modes and
//! profiles, checked against values computed here. (`opencl_replay.rs` covers the backend
//! itself on each device.)

mod common;

use common::jacobi::{factor, from_bytes, jacobi, start_values, to_bytes, ELEMENTS};
use common::{path_str, replayer, scratch, write, Outcome};
use serde_json::Value;
use std::path::Path;
use trace_format::Api;

fn json(outcome: &Outcome) -> Value {
    assert!(outcome.code == 0 || outcome.code == 1, "exit {}: {}", outcome.code, outcome.stderr);
    serde_json::from_str(&outcome.stdout).expect("replay --json prints JSON")
}

fn floats(path: &Path) -> Vec<f32> {
    from_bytes(&std::fs::read(path).expect("output written"))
}

#[test]
fn jacobi_replays_from_one_family_with_patches_and_matches_the_recording() {
    let dir = scratch("opencl-jacobi");
    let trace = write(&dir, "jacobi.trace", &jacobi(Api::OpenCl, 6));
    for mode in ["graph", "eager"] {
        let report = json(&replayer(&["replay", path_str(&trace), "--mode", mode, "--iterations", "3", "--compare", "--json"]));
        assert_eq!(report["mode"], mode);
        assert_eq!(report["segments"], 6);
        assert_eq!(report["families"], 1, "{report}");
        assert_eq!(report["comparison"]["passed"], true, "{report}");
        // Each segment's expected memory and the data its read delivered.
        assert_eq!(report["comparison"]["compared"], 12);
        let times = &report["time_per_iteration_us"];
        assert!(times["min"].as_f64() <= times["median"].as_f64() && times["median"].as_f64() <= times["max"].as_f64());
        if mode == "graph" {
            // The kernel is recorded once; each segment patches its buffers and factor.
            assert_eq!(report["command_buffers_built"], 1, "{report}");
            let updates = report["native_updates"].as_u64().unwrap_or(0) + report["rebuilds"].as_u64().unwrap_or(0);
            assert!(updates >= 5 * 4, "{report}");
        }
    }
}

#[test]
fn doubled_factors_scale_the_output_exactly() {
    let dir = scratch("opencl-set");
    let trace = write(&dir, "jacobi.trace", &jacobi(Api::OpenCl, 2));
    let out = dir.join("out.bin");
    let output = format!("0={}", out.display());
    for mode in ["graph", "eager"] {
        // Recorded: 2 then 3, so buffer 0 ends at 6x; with 2 x 2 and 3 x 2 it ends at 24x.
        let outcome = replayer(&["replay", path_str(&trace), "--mode", mode, "--set", "scale:2=f32:4", "--set", "2:2=f32:6", "--output", &output]);
        assert_eq!(outcome.code, 0, "{}", outcome.stderr);
        let expected: Vec<f32> = start_values().iter().map(|v| v * 24.0).collect();
        assert_eq!(floats(&out), expected, "{mode}");
    }
    // The changed output no longer matches the recording: exit 1, with the place named.
    let outcome = replayer(&["replay", path_str(&trace), "--set", "scale:2=f32:4", "--compare"]);
    assert_eq!(outcome.code, 1, "{}", outcome.stderr);
    // 1.0 * 2 is 0x40000000, 1.0 * 4 is 0x40800000: the first difference is byte 2.
    assert!(outcome.stdout.contains("segment 0 memory 1: ") && outcome.stdout.contains("bytes differ, first at offset 2"), "{}", outcome.stdout);
}

#[test]
fn inputs_replace_the_recorded_start_and_dump_writes_every_buffer() {
    let dir = scratch("opencl-input");
    let trace = write(&dir, "jacobi.trace", &jacobi(Api::OpenCl, 2));
    let start: Vec<f32> = (0..ELEMENTS).map(|i| 100.0 + i as f32).collect();
    let input = dir.join("start.bin");
    std::fs::write(&input, to_bytes(&start)).expect("written");
    let dump = dir.join("dump");
    let outcome = replayer(&["replay", path_str(&trace), "--input", &format!("0={}", input.display()), "--dump", path_str(&dump)]);
    assert_eq!(outcome.code, 0, "{}", outcome.stderr);
    let scaled = |by: f32| start.iter().map(|v| v * by).collect::<Vec<f32>>();
    assert_eq!(floats(&dump.join("mem1.bin")), scaled(factor(0)));
    assert_eq!(floats(&dump.join("mem0.bin")), scaled(factor(0) * factor(1)));
}

#[test]
fn mode_both_ends_with_the_what_if_line() {
    let dir = scratch("opencl-both");
    let trace = write(&dir, "jacobi.trace", &jacobi(Api::OpenCl, 4));
    let outcome = replayer(&["replay", path_str(&trace), "--mode", "both", "--iterations", "2"]);
    assert_eq!(outcome.code, 0, "{}", outcome.stderr);
    let last = outcome.stdout.lines().last().unwrap_or_default();
    assert!(last.starts_with("what-if: graph ") && last.contains(" µs vs eager "), "{}", outcome.stdout);
    let report = json(&replayer(&["replay", path_str(&trace), "--mode", "both", "--iterations", "2", "--json"]));
    assert_eq!(report["mode"], "both");
    assert!(report["eager_over_graph"].as_f64().is_some_and(|r| r > 0.0), "{report}");
    assert_eq!(report["graph"]["mode"], "graph");
    assert_eq!(report["eager"]["mode"], "eager");
}

#[test]
fn graph_then_eager_on_one_backend_both_match_the_recording() {
    let dir = scratch("opencl-both-compare");
    let trace = write(&dir, "jacobi.trace", &jacobi(Api::OpenCl, 4));
    let report = json(&replayer(&["replay", path_str(&trace), "--mode", "both", "--iterations", "1", "--compare", "--json"]));
    assert_eq!(report["graph"]["comparison"]["passed"], true, "{report}");
    assert_eq!(
        report["eager"]["comparison"]["passed"], true,
        "the eager run after the patched graph run must replay each node with its own arguments: \
         patches applied to a command buffer must not leak into `run_eager`. {report}"
    );
}

#[test]
fn rounds_alternate_the_modes_and_pool_each_mode_s_times() {
    let dir = scratch("opencl-rounds");
    let trace = write(&dir, "jacobi.trace", &jacobi(Api::OpenCl, 4));
    let report = json(&replayer(&["replay", path_str(&trace), "--mode", "both", "--rounds", "3", "--iterations", "2", "--compare", "--json"]));
    for mode in ["graph", "eager"] {
        assert_eq!(report[mode]["iterations"], 6, "{report}");
        // Compared in the first round only: each of the 4 segments' memory and read.
        assert_eq!(report[mode]["comparison"]["passed"], true, "{report}");
        assert_eq!(report[mode]["comparison"]["compared"], 8, "{report}");
    }
    // The family's command buffer is built once, in the first graph round.
    assert_eq!(report["graph"]["command_buffers_built"], 1, "{report}");
    let outcome = replayer(&["replay", path_str(&trace), "--mode", "graph", "--rounds", "0"]);
    assert_eq!(outcome.code, 2, "{}", outcome.stderr);
}

#[test]
fn the_profile_has_one_event_per_node_in_time_order() {
    let dir = scratch("opencl-profile");
    let trace = write(&dir, "jacobi.trace", &jacobi(Api::OpenCl, 3));
    let profile = dir.join("profile.json");
    let outcome = replayer(&["replay", path_str(&trace), "--iterations", "1", "--profile", path_str(&profile)]);
    assert_eq!(outcome.code, 0, "{}", outcome.stderr);
    let value: Value = serde_json::from_slice(&std::fs::read(&profile).expect("written")).expect("valid JSON");
    let spans: Vec<&Value> = value["traceEvents"].as_array().expect("events").iter().filter(|e| e["ph"] == "X").collect();
    let mut nodes: Vec<u64> = spans.iter().filter_map(|e| e["args"]["node"].as_u64()).collect();
    nodes.sort_unstable();
    assert_eq!(nodes, (0..6).collect::<Vec<u64>>(), "one event per node of the trace");
    let starts: Vec<f64> = spans.iter().filter_map(|e| e["ts"].as_f64()).collect();
    assert!(starts.windows(2).all(|w| w[0] <= w[1]), "{starts:?}");
    assert!(spans.iter().all(|e| e["dur"].as_f64().is_some_and(|d| d >= 0.0)));
}

/// A trace of thousands of segments streams through every command: validated, drawn, and
/// replayed from one family in both modes with every result compared.
#[test]
fn a_long_trace_streams_through_validate_dot_and_replay() {
    const SEGMENTS: u32 = 3000;
    let dir = scratch("opencl-long");
    let trace = write(&dir, "long.trace", &jacobi(Api::OpenCl, SEGMENTS));
    let path = path_str(&trace);
    let valid = replayer(&["validate", path]);
    assert!(valid.stdout.contains(&format!("valid ({} nodes, {SEGMENTS} edges, {SEGMENTS} segments)", 2 * SEGMENTS)), "{}", valid.stderr);
    let dot = replayer(&["dot", path]);
    assert_eq!(dot.stdout.matches("subgraph cluster_segment_").count(), SEGMENTS as usize, "{}", dot.stderr);
    for mode in ["graph", "eager"] {
        let report = json(&replayer(&["replay", path, "--mode", mode, "--iterations", "1", "--compare", "--json"]));
        assert_eq!((report["segments"].as_u64(), report["families"].as_u64()), (Some(u64::from(SEGMENTS)), Some(1)), "{report}");
        assert_eq!(report["comparison"]["compared"], 2 * SEGMENTS, "{report}");
        assert_eq!(report["comparison"]["passed"], true, "{report}");
    }
}
