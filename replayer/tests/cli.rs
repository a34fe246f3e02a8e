//! The `replayer` binary on traces written with trace-format: outputs and exit codes
//! (0 success, 1 difference, 2 bad input or usage, 3 unavailable here).

mod common;

use common::jacobi::jacobi as jacobi_segments;
use common::{path_str, replayer, replayer_with, scratch, write};
use trace_format::{Api, Arg, BlobStore, Command, Edge, EdgeKind, NodeId, ProgramId, Trace};

/// Two segments of the Jacobi-style trace.
fn jacobi(api: Api) -> (Trace, BlobStore) {
    jacobi_segments(api, 2)
}

#[test]
fn info_describes_the_trace() {
    let dir = scratch("info");
    let path = write(&dir, "jacobi.trace", &jacobi(Api::OpenCl));
    let plain = replayer(&["info", path_str(&path)]);
    assert_eq!(plain.code, 0, "{}", plain.stderr);
    assert!(plain.stdout.contains("API:        OpenCL"), "{}", plain.stdout);
    assert!(plain.stdout.contains("nodes:      4 (2 copy, 2 kernel)"), "{}", plain.stdout);
    // Each segment reads back another buffer, which no patch can express, so if every
    // command is recorded the two segments are two families.
    assert!(plain.stdout.contains("families:   2 (if every command is recorded)"), "{}", plain.stdout);

    let json = replayer(&["info", path_str(&path), "--json"]);
    assert_eq!(json.code, 0, "{}", json.stderr);
    let value: serde_json::Value = serde_json::from_str(&json.stdout).expect("info --json is JSON");
    assert_eq!(value["api"], "OpenCL");
    assert_eq!(value["nodes"], 4);
    assert_eq!(value["edges"], 2);
    assert_eq!(value["segments"], 2);
    assert_eq!(value["families"][1]["segments"], serde_json::json!([[1, 1]]), "runs of segments");
    assert_eq!(value["families"][1]["members"], 1);
    assert_eq!(value["memory_bytes"], 128);
    assert_eq!(value["complete"], true);
    assert!(value["blobs"]["raw_bytes"].as_u64().is_some_and(|raw| raw >= 4 * 64));
}

#[test]
fn validate_accepts_a_good_trace_and_names_the_problems_of_a_bad_one() {
    let dir = scratch("validate");
    let good = write(&dir, "good.trace", &jacobi(Api::OpenCl));
    let outcome = replayer(&["validate", path_str(&good)]);
    assert_eq!((outcome.code, outcome.stdout.trim_end()), (0, format!("{}: valid (4 nodes, 2 edges, 2 segments)", good.display()).as_str()));

    let (mut trace, blobs) = jacobi(Api::OpenCl);
    trace.edges.push(Edge { from: NodeId(1), to: NodeId(2), kind: EdgeKind::Event });
    trace.kernels[0].program = ProgramId(3);
    let bad = write(&dir, "bad.trace", &(trace, blobs));
    let outcome = replayer(&["validate", path_str(&bad)]);
    assert_eq!(outcome.code, 2, "{}", outcome.stderr);
    assert!(outcome.stderr.contains("kernel 0 (scale): program 3 does not exist (the trace has 1)"), "{}", outcome.stderr);
    assert!(outcome.stderr.contains("edge 2 (1 -> 2): it joins segment 0 to segment 1"), "{}", outcome.stderr);
    // Replay refuses it the same way, before looking for a backend.
    let outcome = replayer(&["replay", path_str(&bad)]);
    assert_eq!(outcome.code, 2, "{}", outcome.stderr);
}

#[test]
fn damaged_foreign_and_truncated_files_are_bad_input() {
    let dir = scratch("damaged");
    let good = write(&dir, "good.trace", &jacobi(Api::OpenCl));
    let bytes = std::fs::read(&good).expect("written");

    let foreign = dir.join("foreign.trace");
    std::fs::write(&foreign, b"#!/bin/sh\necho this is not a trace\n").expect("written");
    let mut damaged = bytes.clone();
    let middle = damaged.len() / 2;
    damaged[middle] ^= 0xff;
    let damaged_path = dir.join("damaged.trace");
    std::fs::write(&damaged_path, &damaged).expect("written");
    for path in [&foreign, &damaged_path, &dir.join("missing.trace")] {
        for command in ["info", "validate", "replay", "dot"] {
            let outcome = replayer(&[command, path_str(path)]);
            assert_eq!(outcome.code, 2, "{command} {}: {}", path.display(), outcome.stderr);
            assert!(outcome.stderr.starts_with("replayer: error: cannot read trace"), "{}", outcome.stderr);
        }
    }

    // A cut file reads up to its last whole record, with a warning, or is refused: never a crash.
    let cut = dir.join("cut.trace");
    std::fs::write(&cut, &bytes[..bytes.len() * 2 / 3]).expect("written");
    let outcome = replayer(&["info", path_str(&cut)]);
    assert!(
        (outcome.code == 0 && outcome.stderr.contains("is truncated")) || outcome.code == 2,
        "exit {}: {}",
        outcome.code,
        outcome.stderr
    );
}

#[test]
fn a_newer_format_version_is_refused() {
    let dir = scratch("newer");
    let good = write(&dir, "good.trace", &jacobi(Api::OpenCl));
    let bytes = std::fs::read(&good).expect("written");
    // The format version is a little-endian u32 right after the 8-byte magic; make it the next one.
    assert!(bytes.starts_with(b"REPRISE\0"));
    let mut newer = bytes.clone();
    newer[8..12].copy_from_slice(&(trace_format::FORMAT_VERSION + 1).to_le_bytes());
    let path = dir.join("newer.trace");
    std::fs::write(&path, &newer).expect("written");
    let outcome = replayer(&["info", path_str(&path)]);
    assert_eq!(outcome.code, 2, "{}", outcome.stderr);
    assert!(outcome.stderr.contains(&format!("version {}", trace_format::FORMAT_VERSION + 1)), "{}", outcome.stderr);
}

#[test]
fn usage_errors_exit_with_2() {
    let dir = scratch("usage");
    let path = write(&dir, "jacobi.trace", &jacobi(Api::OpenCl));
    let trace = path_str(&path);
    for args in [
        vec![],
        vec!["frobnicate"],
        vec!["replay"],
        vec!["replay", trace, "--iterations", "0"],
        vec!["replay", trace, "--mode", "sideways"],
        vec!["replay", trace, "--set", "scale:2=f16:1"],
        vec!["replay", trace, "--global", "scale=0"],
        vec!["replay", trace, "--input", "nonsense"],
        vec!["dot", trace, "--format", "png"],
    ] {
        let outcome = replayer(&args);
        assert_eq!(outcome.code, 2, "{args:?}: {}", outcome.stderr);
        assert!(!outcome.stderr.is_empty(), "{args:?}");
    }
}

#[test]
fn patches_and_inputs_that_do_not_fit_are_rejected_before_anything_runs() {
    let dir = scratch("patches");
    // Level Zero has no backend here: exit 2 rather than 3 shows the check came first.
    let path = write(&dir, "jacobi.trace", &jacobi(Api::LevelZero));
    let trace = path_str(&path);
    let short = dir.join("short.bin");
    std::fs::write(&short, [0u8; 10]).expect("written");
    let input = format!("0={}", short.display());
    for (args, message) in [
        (vec!["--set", "scale:2=f64:1"], "--set kernel scale argument 2: node 0: the argument has 4 bytes, a f64 has 8"),
        (vec!["--set", "scale:5=f32:1"], "--set kernel scale argument 5: node 0 has 3 arguments (indices 0 to 2)"),
        (vec!["--set", "1:0=u32:1"], "--set node 1 argument 0: node 1 is a copy, not a kernel launch"),
        (vec!["--global", "scale=16,16"], "--global kernel scale: node 0 launches a 1-dimensional ND-range; give 1 size(s)"),
        (vec!["--input", input.as_str()], "holds 10 bytes; memory 0 has 64"),
        (vec!["--output", "7=out.bin"], "--output 7: memory 7 does not exist (the trace has 2)"),
    ] {
        let mut all = vec!["replay", trace];
        all.extend(&args);
        let outcome = replayer(&all);
        assert_eq!(outcome.code, 2, "{args:?}: {}", outcome.stderr);
        assert!(outcome.stderr.contains(message), "{args:?}: {}", outcome.stderr);
    }
}

/// Level Zero without its test-double driver (`scripts/env.sh` points the loader at it): no driver
/// here, or (where one is installed) none that takes this trace's OpenCL C.
#[test]
fn an_api_without_a_driver_here_exits_with_3() {
    let dir = scratch("unavailable");
    let path = write(&dir, "jacobi.trace", &jacobi(Api::LevelZero));
    let outcome = replayer_with(&["replay", path_str(&path), "--compare", "--set", "scale:2=f32:4"], |c| {
        c.env_remove("ZE_ENABLE_ALT_DRIVERS");
    });
    assert_eq!(outcome.code, 3, "{}", outcome.stderr);
    assert!(outcome.stderr.contains("Level Zero"), "{}", outcome.stderr);
    assert!(outcome.stderr.contains("hint:"), "{}", outcome.stderr);
}

#[test]
fn dot_writes_the_graph_and_svg_needs_graphviz() {
    let dir = scratch("dot");
    let path = write(&dir, "jacobi.trace", &jacobi(Api::OpenCl));
    let outcome = replayer(&["dot", path_str(&path), "--verbose"]);
    assert_eq!(outcome.code, 0, "{}", outcome.stderr);
    assert!(outcome.stdout.starts_with("digraph reprise {"));
    assert!(outcome.stdout.contains(r"NAME = scale\nARG 0 = mem 0 + 0"), "{}", outcome.stdout);
    assert!(outcome.stdout.contains(r#"n0 -> n1 [label="in_order"];"#), "{}", outcome.stdout);

    let file = dir.join("graph.dot");
    let outcome = replayer(&["dot", path_str(&path), "-o", path_str(&file)]);
    assert_eq!(outcome.code, 0, "{}", outcome.stderr);
    assert!(std::fs::read_to_string(&file).expect("written").contains("subgraph cluster_segment_1"));

    let no_graphviz = replayer_with(&["dot", path_str(&path), "--format", "svg"], |c| {
        c.env("PATH", "");
    });
    assert_eq!(no_graphviz.code, 3, "{}", no_graphviz.stderr);
    assert!(no_graphviz.stderr.contains("install Graphviz"), "{}", no_graphviz.stderr);

    let graphviz_installed = std::env::split_paths(&std::env::var_os("PATH").unwrap_or_default()).any(|d| d.join("dot").is_file());
    if graphviz_installed {
        let svg = replayer(&["dot", path_str(&path), "--format", "svg"]);
        assert_eq!(svg.code, 0, "{}", svg.stderr);
        assert!(svg.stdout.contains("<svg"), "{}", svg.stdout);
    }
}

#[test]
fn diff_locates_what_changed() {
    let dir = scratch("diff");
    let a = write(&dir, "a.trace", &jacobi(Api::OpenCl));
    let same = replayer(&["diff", path_str(&a), path_str(&a)]);
    assert_eq!((same.code, same.stdout.as_str()), (0, "no differences\n"), "{}", same.stderr);

    let (mut trace, mut blobs) = jacobi(Api::OpenCl);
    if let Command::Kernel(launch) = &mut trace.nodes[2].command {
        launch.args[2] = Arg::Value(6.0f32.to_le_bytes().to_vec());
    }
    let expected = &mut trace.segments[1].expected[0];
    let mut result = blobs.get(expected.blob).expect("present").into_owned();
    result[40] ^= 1;
    result[41] ^= 1;
    expected.blob = blobs.insert(result);
    let b = write(&dir, "b.trace", &(trace, blobs));
    let changed = replayer(&["diff", path_str(&a), path_str(&b)]);
    assert_eq!(changed.code, 1, "{}", changed.stderr);
    assert_eq!(
        changed.stdout,
        "segment 1: node 2 / 2 (scale) argument 2: 0x40400000 -> 0x40c00000\n\
         segment 1: memory 0 differs: 2 of 64 bytes, first at offset 40\n"
    );
    let json = replayer(&["diff", path_str(&a), path_str(&b), "--json"]);
    let value: serde_json::Value = serde_json::from_str(&json.stdout).expect("diff --json is JSON");
    assert_eq!(value["memory_differs"][0]["first_offset"], 40);
}

#[test]
fn validate_reads_every_blob_and_names_a_damaged_one() {
    let dir = scratch("damaged-blob");
    let (trace, blobs) = jacobi(Api::OpenCl);
    let path = write(&dir, "jacobi.trace", &(trace, blobs.clone()));
    let mut bytes = std::fs::read(&path).expect("read the trace");
    // The last byte of a blob's contents: in the file, its frame ends there.
    let blob = blobs.ids().max_by_key(|id| blobs.raw_len(*id)).expect("the trace has blobs");
    let contents = blobs.get(blob).expect("an in-memory blob").into_owned();
    let at = bytes.windows(contents.len()).position(|w| w == contents.as_slice()).expect("blobs of 64 bytes are stored raw");
    bytes[at + contents.len() - 1] ^= 0x55;
    std::fs::write(&path, &bytes).expect("write the damaged trace");

    let result = replayer(&["validate", path_str(&path)]);
    assert_eq!(result.code, 2, "{}", result.stderr);
    assert!(result.stderr.contains(&format!("blob {blob}")) && result.stderr.contains("fails its checksum"), "{}", result.stderr);
}

#[test]
fn output_into_a_closed_pipe_ends_quietly() {
    let dir = scratch("closed-pipe");
    let path = write(&dir, "long.trace", &jacobi_segments(Api::OpenCl, 400));
    let mut child = std::process::Command::new(env!("CARGO_BIN_EXE_replayer"))
        .args(["info", path_str(&path)])
        .stdout(std::process::Stdio::piped())
        .stderr(std::process::Stdio::piped())
        .spawn()
        .expect("replayer runs");
    // Close the reading end at once, as `| head -0` would.
    drop(child.stdout.take());
    let output = child.wait_with_output().expect("replayer ends");
    let stderr = String::from_utf8_lossy(&output.stderr);
    assert!(!stderr.contains("panicked"), "{stderr}");
}
