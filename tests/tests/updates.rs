//! Repeated segments and argument patches: the Jacobi program, and its variant that updates its own
//! command buffer, replay from one family (native updates on Intel's mutable dispatch, rebuilds on
//! PoCL), and a `--set` patch changes the output exactly as computed by hand.

use end_to_end::device::Device;
use end_to_end::program::Program;
use end_to_end::replay::{path_str, replay_compared, run_replayer, Mode};
use std::path::Path;
use trace_format::{read_trace, Arg, Command, MemId};

/// Iterations of tests/opencl/jacobi.c: one segment each.
const JACOBI_ITERATIONS: u64 = 12;
/// Iterations of tests/opencl/own_mutable_command_buffer.c: one enqueue and clFinish each.
const OWN_MUTABLE_ITERATIONS: u64 = 6;
/// Elements of the output of tests/opencl/in_order_chain.c, which is z[i] = 3 * s * i.
const CHAIN_LEN: usize = 1024;

fn jacobi_replays_from_one_family(device: &Device) {
    let program = Program::opencl_c("jacobi");
    let trace = program.record(device);
    let report = replay_compared(&trace, device, Mode::Graph, &[]);
    assert_eq!(report["segments"], JACOBI_ITERATIONS, "one segment per iteration: {report:#}");
    assert_eq!(report["families"], 1, "every iteration is the same graph, patched: {report:#}");
    assert_eq!(report["command_buffers_built"], 1, "the family's command buffer is built once: {report:#}");
    match device {
        Device::Intel(_) => assert!(report["native_updates"].as_u64() > Some(0), "no native updates: {report:#}"),
        Device::Pocl => assert!(report["rebuilds"].as_u64() > Some(0), "PoCL has no mutable dispatch: {report:#}"),
    }
    // `--updates rebuild` takes the other path on any device, with the same result.
    let rebuilt = replay_compared(&trace, device, Mode::Graph, &["--updates", "rebuild"]);
    assert_eq!(rebuilt["native_updates"], 0, "{rebuilt:#}");
    assert_eq!(rebuilt["rebuilds"], report["native_updates"].as_u64().unwrap_or(0) + report["rebuilds"].as_u64().unwrap_or(0), "{rebuilt:#}");
    replay_compared(&trace, device, Mode::Eager, &[]);
}

/// The program's own updates of its command buffer (clUpdateMutableCommandsKHR where the device has
/// mutable dispatch, a new command buffer per iteration elsewhere) are followed: the trace is whole
/// and its iterations, alike but for the swapped buffers and the weight, are one patched family.
fn own_updates_replay_from_one_family(device: &Device) {
    let program = Program::opencl_c("own_mutable_command_buffer");
    let trace = program.record(device);
    let file = read_trace(&trace).unwrap_or_else(|error| panic!("{} does not read: {error}", trace.display()));
    assert!(file.trace.partial.is_empty(), "the updates are recorded: {:?}", file.trace.partial);
    let report = replay_compared(&trace, device, Mode::Graph, &[]);
    assert_eq!(report["segments"], OWN_MUTABLE_ITERATIONS + 1, "one segment per iteration and the final read: {report:#}");
    assert_eq!(report["families"], 2, "the iterations, patched, and the final read: {report:#}");
    match device {
        Device::Intel(_) => assert!(report["native_updates"].as_u64() > Some(0), "no native updates: {report:#}"),
        Device::Pocl => assert!(report["rebuilds"].as_u64() > Some(0), "PoCL has no mutable dispatch: {report:#}"),
    }
    replay_compared(&trace, device, Mode::Eager, &[]);
}

/// Doubling the chain's scale factor `s` (argument 2 of kernel `scale`) doubles z.
fn doubled_scale_doubles_the_output(device: &Device) {
    let program = Program::opencl_c("in_order_chain");
    let trace = program.record(device);
    let z = last_kernel_destination(&trace);
    let recorded = replay_output(&trace, device, z, &[], &program.scratch().join("z.bin"));
    assert_eq!(recorded, chain_output(1.5), "the unpatched replay's z");
    let patched = replay_output(&trace, device, z, &["--set", "scale:2=f32:3"], &program.scratch().join("z2.bin"));
    assert_eq!(patched, chain_output(3.0), "z after --set scale:2=f32:3");
}

/// z[i] = 3 * s * i as bytes; exact in f32 for these values.
fn chain_output(s: f32) -> Vec<u8> {
    (0..CHAIN_LEN).flat_map(|i| (3.0 * s * i as f32).to_ne_bytes()).collect()
}

/// The memory the trace's last kernel writes (its argument 0, by the chain's convention).
fn last_kernel_destination(trace: &Path) -> MemId {
    let file = read_trace(trace).unwrap_or_else(|error| panic!("{} does not read: {error}", trace.display()));
    let last = file.trace.nodes.iter().rev().find_map(|node| match &node.command {
        Command::Kernel(launch) => launch.args.first(),
        _ => None,
    });
    match last {
        Some(Arg::Memory { mem, .. }) => *mem,
        other => panic!("the last kernel's first argument is not memory: {other:?}"),
    }
}

/// Replays once with `patches`, writing memory `mem` to `file`, and returns its contents.
fn replay_output(trace: &Path, device: &Device, mem: MemId, patches: &[&str], file: &Path) -> Vec<u8> {
    let output_arg = format!("{}={}", mem.0, path_str(file));
    let mut args = vec!["replay", path_str(trace), "--iterations", "1", "--output", &output_arg];
    args.extend_from_slice(patches);
    let output = run_replayer(&args, Some(device));
    assert!(output.status.success(), "replayer {args:?} failed: {}", String::from_utf8_lossy(&output.stderr));
    std::fs::read(file).unwrap_or_else(|error| panic!("{} was not written: {error}", file.display()))
}

#[test]
fn jacobi_on_pocl() {
    jacobi_replays_from_one_family(&Device::pocl());
}

#[test]
fn jacobi_on_intel() {
    if let Some(device) = Device::intel() {
        jacobi_replays_from_one_family(&device);
    }
}

#[test]
fn own_updates_on_pocl() {
    own_updates_replay_from_one_family(&Device::pocl());
}

#[test]
fn own_updates_on_intel() {
    if let Some(device) = Device::intel() {
        own_updates_replay_from_one_family(&device);
    }
}

#[test]
fn scale_patch_on_pocl() {
    doubled_scale_doubles_the_output(&Device::pocl());
}

#[test]
fn scale_patch_on_intel() {
    if let Some(device) = Device::intel() {
        doubled_scale_doubles_the_output(&device);
    }
}
