//! Less common OpenCL paths, recorded and replayed on each device: programs from binaries, kernels
//! from clCreateKernelsInProgram and clCloneKernel, tasks, rectangular transfers, event callbacks
//! and clWaitForEvents (api_breadth.c); and a program's own cl_khr_command_buffer (sub-graphs).

use end_to_end::device::Device;
use end_to_end::dot::edges;
use end_to_end::program::Program;
use end_to_end::replay::{replay_compared, Mode};
use serde_json::Value;
use std::path::Path;

/// PoCL, and Intel when `$REPRISE_INTEL_OCL` is set.
fn devices() -> Vec<Device> {
    std::iter::once(Device::pocl()).chain(Device::intel()).collect()
}

/// The graph-mode report; the eager replay must pass its comparison too.
fn replays_both_ways(trace: &Path, device: &Device) -> Value {
    let report = replay_compared(trace, device, Mode::Graph, &[]);
    replay_compared(trace, device, Mode::Eager, &[]);
    report
}

#[test]
fn api_breadth() {
    for device in devices() {
        let program = Program::opencl_c("api_breadth");
        let trace = program.record(&device);
        let report = replays_both_ways(&trace, &device);
        // clWaitForEvents closes the rectangular read and what came before it; the read after it
        // closes at clFinish.
        assert_eq!(report["segments"], 2, "{report:#}");
    }
}

/// Each of the three submissions is a sub-graph holding add_one then twice; a clFinish follows
/// each, and the final read is a segment of its own.
#[test]
fn own_command_buffer() {
    for device in devices() {
        let program = Program::opencl_c("own_command_buffer");
        let trace = program.record(&device);
        let report = replays_both_ways(&trace, &device);
        assert_eq!(report["segments"], 4, "{report:#}");
        let kernel_order: Vec<(String, String)> = edges(&trace).into_iter().map(|(from, to, _)| (from, to)).collect();
        assert_eq!(kernel_order, [("add_one".to_owned(), "twice".to_owned())], "inside every sub-graph");
    }
}

/// The three submissions are the same sub-graph with the same arguments, so they are one family
/// (issue 5: same topology, node kinds and kernels); the final read is the other.
#[test]
fn identical_submissions_of_an_own_command_buffer_share_a_family() {
    let device = Device::pocl();
    let program = Program::opencl_c("own_command_buffer");
    let trace = program.record(&device);
    let report = replay_compared(&trace, &device, Mode::Graph, &[]);
    assert_eq!(report["families"], 2, "{report:#}");
}
