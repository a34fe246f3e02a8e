//! The regression runner (`scripts/regress.py`): over the OpenCL manifest everything passes; a
//! kernel rebuilt with another constant is reported against its baseline with the differing
//! memory located; saved traces are re-checked without running the programs.

use end_to_end::binaries::{target_dir, workspace_root};
use serde_json::Value;
use std::path::Path;
use std::process::{Command, Output};
use trace_format::read_trace;

/// `python3 scripts/regress.py ARGS --device pocl`: its exit code and its JSON report.
fn regress(out: &Path, args: &[&str]) -> (Option<i32>, Value) {
    let output: Output = Command::new("python3")
        .arg(workspace_root().join("scripts/regress.py"))
        .args(args)
        .arg("--out")
        .arg(out)
        .args(["--device", "pocl", "--iterations", "2", "--target-dir"])
        .arg(target_dir())
        .output()
        .expect("python3 starts");
    let text = std::fs::read_to_string(out.join("report.json")).unwrap_or_else(|error| {
        panic!(
            "regress.py wrote no report ({error}), exit {:?}:\n{}{}",
            output.status.code(),
            String::from_utf8_lossy(&output.stdout),
            String::from_utf8_lossy(&output.stderr)
        )
    });
    (output.status.code(), serde_json::from_str(&text).expect("report.json is JSON"))
}

/// A manifest of one program, `tests/opencl/scaled.c` built with `-DSCALE=scale`.
fn scaled_manifest(dir: &Path, scale: u32) -> String {
    let source = workspace_root().join("tests/opencl/scaled.c");
    let manifest = serde_json::json!({
        "programs": [{ "name": "scaled", "c": source, "defines": [format!("SCALE={scale}")] }]
    });
    let path = dir.join(format!("scale{scale}.json"));
    std::fs::write(&path, manifest.to_string()).expect("the manifest is written");
    path.to_str().expect("scratch paths are UTF-8").to_owned()
}

fn scratch() -> tempfile::TempDir {
    tempfile::Builder::new().prefix("reprise-regress-").tempdir().expect("a scratch directory")
}

#[test]
fn every_manifest_program_passes_on_pocl() {
    let dir = scratch();
    let (code, report) = regress(dir.path(), &[]);
    let results = report["results"].as_array().expect("results");
    let manifest: Value = serde_json::from_str(
        &std::fs::read_to_string(workspace_root().join("tests/opencl/manifest.json")).expect("the manifest"),
    )
    .expect("the manifest is JSON");
    assert_eq!(results.len(), manifest["programs"].as_array().map_or(0, Vec::len));
    for result in results {
        assert_eq!(result["regressions"], serde_json::json!([]), "{result:#}");
        for mode in ["graph", "eager"] {
            assert_eq!(result[mode]["passed"], true, "{mode}: {result:#}");
            assert!(result[mode]["median_us"].as_f64().is_some_and(|us| us > 0.0), "{mode} timed: {result:#}");
        }
    }
    assert_eq!(code, Some(0));
    let markdown = std::fs::read_to_string(dir.path().join("report.md")).expect("report.md");
    assert_eq!(markdown.lines().filter(|line| line.ends_with("| ok |")).count(), results.len(), "{markdown}");
}

#[test]
fn a_changed_kernel_constant_is_a_regression_located_in_memory() {
    let dir = scratch();
    let (base, new) = (dir.path().join("base"), dir.path().join("new"));
    let (code, _) = regress(&base, &["--manifest", &scaled_manifest(dir.path(), 2)]);
    assert_eq!(code, Some(0), "the baseline run passes");

    let baseline = base.to_str().expect("UTF-8");
    let (code, report) = regress(&new, &["--manifest", &scaled_manifest(dir.path(), 3), "--baseline", baseline]);
    assert_eq!(code, Some(1), "a changed result exits 1: {report:#}");
    let result = &report["results"][0];
    // The program checks itself against its own constant, so it passes alone and replays alike.
    assert_eq!(result["same_under_shim"], true);
    assert_eq!(result["graph"]["passed"], true);
    let differs = result["baseline_diff"]["memory_differs"].as_array().expect("memory_differs");
    assert_eq!(differs.len(), 1, "only y differs: {result:#}");
    // y[1] = SCALE*1 + 1 is the first to change: 3.0f (0x40400000) -> 4.0f (0x40800000) differ in byte 2.
    assert_eq!(differs[0]["first_offset"], 4 + 2);
    let mem = differs[0]["mem"].as_u64().expect("a memory id") as usize;
    let trace = read_trace(&new.join("traces/scaled.trace")).expect("the new trace reads");
    const CL_MEM_WRITE_ONLY: u64 = 1 << 1;
    assert_eq!(trace.trace.memories[mem].flags & CL_MEM_WRITE_ONLY, CL_MEM_WRITE_ONLY, "the located memory is y");
    let regressions = result["regressions"].as_array().expect("regressions");
    assert!(regressions.iter().any(|r| r == "output differs from the baseline"), "{regressions:?}");
    let located = format!("final memory differs from the baseline: segment 0 memory {mem}");
    assert!(regressions.iter().any(|r| r.as_str().is_some_and(|r| r.starts_with(&located))), "{regressions:?}");
    let markdown = std::fs::read_to_string(new.join("report.md")).expect("report.md");
    assert!(markdown.contains("| REGRESSED |") && markdown.contains(&located), "{markdown}");
}

#[test]
fn saved_traces_are_rechecked_without_the_programs() {
    let dir = scratch();
    let first = dir.path().join("first");
    let (code, _) = regress(&first, &["--manifest", &scaled_manifest(dir.path(), 2)]);
    assert_eq!(code, Some(0));
    let traces = first.join("traces");
    let (code, report) = regress(&dir.path().join("again"), &["--traces", traces.to_str().expect("UTF-8")]);
    assert_eq!(code, Some(0), "{report:#}");
    assert_eq!(report["mode"], "traces");
    let result = &report["results"][0];
    assert_eq!(result["name"], "scaled");
    assert!(result.get("stdout").is_none(), "the program was not run: {result:#}");
    assert_eq!((result["graph"]["passed"].clone(), result["eager"]["passed"].clone()), (true.into(), true.into()));
}
