//! A partial trace never reads as a passing comparison: a program whose recording left a call
//! out replays with its results equal, yet `--compare` says INCOMPLETE, names the call, and exits 1.

use end_to_end::device::Device;
use end_to_end::program::Program;
use end_to_end::replay::{parse_report, path_str, run_replayer, Mode};
use serde_json::Value;

#[test]
fn a_partial_trace_does_not_pass_its_comparison() {
    let device = Device::pocl();
    let program = Program::opencl_c("unrecorded_native_kernel");
    let trace = program.record(&device);
    let partial = trace_format::read_trace(&trace).expect("the trace reads").trace.partial;
    assert!(partial.iter().any(|reason| reason.call == "clEnqueueNativeKernel"), "{partial:?}");
    for mode in Mode::BOTH {
        let args = ["replay", path_str(&trace), "--mode", mode.name(), "--compare", "--iterations", "2", "--json"];
        let output = run_replayer(&args, Some(&device));
        let report = parse_report(&output, &args);
        assert_eq!(output.status.code(), Some(1), "{report:#}");
        let comparison = &report["comparison"];
        assert_eq!(comparison["passed"], Value::Bool(false), "{report:#}");
        assert!(comparison["mismatches"].as_array().is_some_and(Vec::is_empty), "the results themselves are equal: {report:#}");
        let incomplete = comparison["incomplete"].as_array().expect("the reasons are listed");
        assert!(incomplete.iter().any(|reason| reason.as_str().is_some_and(|text| text.contains("clEnqueueNativeKernel"))), "{report:#}");
        let args = ["replay", path_str(&trace), "--mode", mode.name(), "--compare", "--iterations", "2"];
        let output = run_replayer(&args, Some(&device));
        let text = String::from_utf8_lossy(&output.stdout);
        assert_eq!(output.status.code(), Some(1), "{text}");
        assert!(text.contains("comparison: INCOMPLETE (") && text.contains("but the trace is partial: recording stopped at clEnqueueNativeKernel"), "{text}");
    }
}
