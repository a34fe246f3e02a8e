//! Choosing among installed OpenCL runtimes, on a machine with both PoCL and Intel's CPU runtime
//! (the loader listing PoCL first): `replayer devices` lists both, `--device` names a platform
//! before a device (PoCL names its device after the CPU, which may be an Intel one), and a trace
//! replays by default on the device it was recorded on. Skipped without `$REPRISE_INTEL_OCL`.

use end_to_end::binaries::replayer;
use end_to_end::device::Device;
use end_to_end::program::Program;
use end_to_end::replay::{parse_report, path_str};
use serde_json::Value;
use std::process::{Command, Output};

/// `replayer ARGS` seeing PoCL and then Intel's runtime.
fn with_both(intel: &Device, args: &[&str]) -> Output {
    let mut command = Command::new(replayer());
    command.args(args);
    intel.configure_after_pocl(&mut command);
    command.output().expect("the replayer starts")
}

/// The device a replay of `trace` with `extra` arguments ran on, after asserting it passed.
fn replayed_on(intel: &Device, trace: &str, extra: &[&str]) -> (String, String) {
    let mut args = vec!["replay", trace, "--mode", "eager", "--iterations", "1", "--compare", "--json"];
    args.extend_from_slice(extra);
    let output = with_both(intel, &args);
    let report = parse_report(&output, &args);
    assert!(output.status.success(), "replayer {args:?}: {report:#}");
    assert_eq!(report["comparison"]["passed"], Value::Bool(true), "{report:#}");
    (report["device"].as_str().expect("the report names its device").to_string(), String::from_utf8_lossy(&output.stderr).into_owned())
}

#[test]
fn devices_lists_both_runtimes_in_the_loader_s_order() {
    let Some(intel) = Device::intel() else { return };
    let output = with_both(&intel, &["devices", "--json"]);
    assert!(output.status.success(), "{}", String::from_utf8_lossy(&output.stderr));
    let listed: Value = serde_json::from_slice(&output.stdout).expect("devices --json is JSON");
    let opencl = &listed["apis"][0];
    assert_eq!(opencl["api"], "OpenCL");
    let platforms: Vec<&str> = opencl["devices"].as_array().expect("a list").iter().map(|d| d["platform"].as_str().unwrap_or("")).collect();
    assert_eq!(platforms, ["Portable Computing Language", "Intel(R) OpenCL"], "{listed:#}");
    assert_eq!(opencl["devices"][1]["index"], 1);
    let plain = with_both(&intel, &["devices"]);
    let text = String::from_utf8_lossy(&plain.stdout);
    assert!(text.contains("OpenCL 0: Portable Computing Language (The pocl project) / "), "{text}");
    assert!(text.contains("OpenCL 1: Intel(R) OpenCL (Intel(R) Corporation) / "), "{text}");
}

#[test]
fn device_names_a_platform_first_and_a_trace_replays_where_it_was_recorded() {
    let Some(intel) = Device::intel() else { return };
    let program = Program::opencl_c("in_order_chain");
    let trace = program.record(&intel);
    let trace = path_str(&trace);
    let on = |extra: &[&str]| replayed_on(&intel, trace, extra).0;
    assert!(on(&[]).starts_with("Intel(R) OpenCL / "), "recorded on Intel, replayed on {}", on(&[]));
    assert!(on(&["--device", "pocl"]).starts_with("Portable Computing Language / "));
    assert!(on(&["--device", "Intel"]).starts_with("Intel(R) OpenCL / "));
    assert!(on(&["--device", "0"]).starts_with("Portable Computing Language / "));
    let pocl_trace = program.record(&Device::pocl());
    let (device, note) = replayed_on(&intel, path_str(&pocl_trace), &[]);
    assert!(device.starts_with("Portable Computing Language / "), "recorded on PoCL, replayed on {device}");
    assert!(!note.contains("note:"), "{note}");
}

#[test]
fn a_trace_from_a_missing_device_replays_on_the_first_with_a_note() {
    let Some(intel) = Device::intel() else { return };
    let program = Program::opencl_c("in_order_chain");
    let trace = program.record(&intel);
    let mut command = Command::new(replayer());
    command.args(["replay", path_str(&trace), "--mode", "eager", "--iterations", "1", "--compare"]);
    Device::pocl().configure(&mut command);
    let output = command.output().expect("the replayer starts");
    let stderr = String::from_utf8_lossy(&output.stderr);
    assert!(output.status.success(), "{stderr}");
    assert!(stderr.contains("replayer: note: the trace was recorded on Intel(R) OpenCL / "), "{stderr}");
    assert!(stderr.contains("which this machine does not have; replaying on Portable Computing Language / "), "{stderr}");
}
