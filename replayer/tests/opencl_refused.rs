//! Traces that once made a driver crash the replayer (a signal instead of an exit code): each
//! is now either refused before the driver sees it, with an exit code and a message naming
//! the node and the reason, or replayed correctly. Run through the `replayer` binary in both
//! modes on PoCL, and on Intel's CPU runtime when `REPRISE_INTEL_OCL` names it.

mod common;

use common::{path_str, replayer_with, scratch, write, Outcome};
use std::path::Path;
use trace_format::{
    Api, Arg, BlobStore, Command, Device, Header, ImageKind, Kernel, KernelId, KernelLaunch, Launch, MemId, MemKind,
    MemState, Memory, Node, Param, ParamKind, Program, ProgramId, ProgramImage, Queue, QueueId, Segment, SegmentId,
    Trace,
};

const SOURCE: &str = "
kernel void fill(global float* out, float value) { out[get_global_id(0)] = value; }
kernel void paint(global float* out, write_only image2d_t image) { write_imagef(image, (int2)(0, 0), (float4)(1.0f)); out[0] = 1.0f; }
__attribute__((reqd_work_group_size(4, 1, 1))) kernel void fixed(global float* out) { out[get_global_id(0)] = 1.0f; }
kernel void tiled(global float* out, local float* tile) { tile[get_local_id(0)] = 1.0f; barrier(CLK_LOCAL_MEM_FENCE); out[get_global_id(0)] = tile[0]; }
kernel void pick(global float* out, global const float* maybe) { size_t i = get_global_id(0); out[i] = maybe ? maybe[i] : 7.0f; }
";

/// Floats of the output buffer.
const ELEMENTS: u64 = 64;

/// An address of the recording process, recorded as a plain value because it named an object
/// the recorder did not track (an image, a sampler).
const STALE_HANDLE: u64 = 0x0055_556e_3965_3c40;

/// One launch of each kernel: its trace parameters (kinds as the shim records them) and arguments.
struct Launched {
    kernel: &'static str,
    params: Vec<ParamKind>,
    args: Vec<Arg>,
    global: [u64; 3],
    local: Option<[u64; 3]>,
    dims: u32,
}

fn one_d(kernel: &'static str, params: Vec<ParamKind>, args: Vec<Arg>, global: u64, local: Option<u64>) -> Launched {
    Launched { kernel, params, args, global: [global, 1, 1], local: local.map(|l| [l, 1, 1]), dims: 1 }
}

fn out() -> Arg {
    Arg::Memory { mem: MemId(0), offset: 0 }
}

fn float(value: f32) -> Arg {
    Arg::Value(value.to_le_bytes().to_vec())
}

fn floats(value: f32, count: u64) -> Vec<u8> {
    (0..count).flat_map(|_| value.to_le_bytes()).collect()
}

/// A trace whose segment `i` runs `launches[i]`, over the output buffer (`ELEMENTS` floats,
/// starting as zeros) and `extra` memories; `expected` is the output after each segment.
fn trace_of(launches: Vec<Launched>, extra: Vec<Memory>, build_options: &str, expected: Option<Vec<u8>>) -> (Trace, BlobStore) {
    let mut blobs = BlobStore::default();
    let source = blobs.insert(SOURCE.as_bytes().to_vec());
    let output = Memory { kind: MemKind::Buffer, size: ELEMENTS * 4, address: 0, flags: 0, device: None };
    let mut trace = Trace {
        header: Some(Header { api: Api::OpenCl, producer: "replayer test".into(), command_line: vec!["refused".into()], process_id: 1, started_unix_s: 0 }),
        devices: vec![Device { name: "recording device".into(), vendor: "test".into(), driver_version: "1".into(), properties: Default::default() }],
        memories: [vec![output], extra].concat(),
        programs: vec![Program { images: vec![ProgramImage { kind: ImageKind::OpenClSource, blob: source }], build_options: build_options.into() }],
        queues: vec![Queue { in_order: true, device: None, flags: 0, priority: 0, label: "queue".into() }],
        ..Trace::default()
    };
    let zeros = blobs.insert(vec![0; (ELEMENTS * 4) as usize]);
    for (index, launched) in launches.into_iter().enumerate() {
        let params = launched.params.iter().zip(&launched.args).map(|(&kind, arg)| {
            let size = match arg {
                Arg::Value(bytes) => bytes.len() as u32,
                Arg::Local(bytes) => *bytes as u32,
                _ => 8,
            };
            Param { offset: 0, size, kind }
        });
        trace.kernels.push(Kernel { program: ProgramId(0), name: launched.kernel.into(), params: params.collect() });
        let launch = Launch::NdRange { dims: launched.dims, offset: [0; 3], global: launched.global, local: launched.local };
        let command = Command::Kernel(KernelLaunch { kernel: KernelId(index as u32), args: launched.args, launch });
        let segment = SegmentId(index as u32);
        trace.nodes.push(Node { queue: Some(QueueId(0)), segment, command, call: "clEnqueueNDRangeKernel".into() });
        let initial = if index == 0 { vec![MemState { mem: MemId(0), blob: zeros }] } else { Vec::new() };
        let expected = expected.iter().map(|bytes| MemState { mem: MemId(0), blob: blobs.insert(bytes.clone()) }).collect();
        trace.segments.push(Segment { ordinal: index as u64, ended_by: "clFinish".into(), initial, expected, failed_with: None, printed: None, racy_reads: Vec::new(), host_writes: Vec::new() });
    }
    (trace, blobs)
}

/// The devices to replay on, as the `--device` and environment that select them.
fn devices() -> Vec<(&'static str, Vec<(&'static str, String)>)> {
    let mut devices = vec![("pocl", Vec::new())];
    match std::env::var("REPRISE_INTEL_OCL") {
        Ok(library) => {
            let directory = Path::new(&library).parent().expect("REPRISE_INTEL_OCL is a file path").display().to_string();
            let library_path = match std::env::var("LD_LIBRARY_PATH") {
                Ok(existing) if !existing.is_empty() => format!("{directory}:{existing}"),
                _ => directory,
            };
            devices.push(("intel", vec![("OCL_ICD_FILENAMES", library), ("LD_LIBRARY_PATH", library_path)]));
        }
        Err(_) => eprintln!("REPRISE_INTEL_OCL is not set: replayed on PoCL only"),
    }
    devices
}

/// Replays `trace` in both modes on each device; `check` sees each outcome (which exited:
/// `replayer_with` fails the test on a signal).
fn replay_everywhere(name: &str, trace: &(Trace, BlobStore), check: impl Fn(&str, &Outcome)) {
    let dir = scratch(name);
    let path = write(&dir, "trace.trace", trace);
    for (device, environment) in devices() {
        for mode in ["graph", "eager"] {
            let args = ["replay", path_str(&path), "--mode", mode, "--iterations", "2", "--compare", "--json", "--device", device];
            let outcome = replayer_with(&args, |command| {
                command.envs(environment.iter().map(|(k, v)| (k, v)));
            });
            check(&format!("{name} on {device} in {mode} mode"), &outcome);
        }
    }
}

/// `trace` is refused on every device, in both modes, with `code` and a message holding `message`.
fn refused(name: &str, trace: (Trace, BlobStore), code: i32, message: &str) {
    replay_everywhere(name, &trace, |what, outcome| {
        assert_eq!(outcome.code, code, "{what}: {}", outcome.stderr);
        assert!(outcome.stderr.contains(message), "{what}: expected {message:?} in:\n{}", outcome.stderr);
    });
}

use ParamKind::{Local as LocalParam, Memory as MemoryParam, Value as ValueParam};

#[test]
fn an_image_argument_is_refused() {
    // What OpenCL-CTS test_profiling records: the image's handle as a plain value.
    let launch = one_d("paint", vec![MemoryParam, ValueParam], vec![out(), Arg::Value(STALE_HANDLE.to_ne_bytes().to_vec())], 1, None);
    refused("image", trace_of(vec![launch], vec![], "-cl-std=CL1.2", None), 3, "node 0 (paint): argument 1 has type image2d_t");
}

#[test]
fn an_address_of_untracked_memory_is_refused() {
    let launch = one_d("pick", vec![MemoryParam, ValueParam], vec![out(), Arg::Value(STALE_HANDLE.to_ne_bytes().to_vec())], ELEMENTS, None);
    refused("stale-pointer", trace_of(vec![launch], vec![], "", None), 3, "node 0 (pick): argument 1 is a pointer to global memory, but the trace holds the address 0x55556e39653c40");
}

#[test]
fn arguments_the_built_kernel_does_not_take_are_bad_input() {
    let wrong_kind = one_d("fill", vec![MemoryParam, MemoryParam], vec![out(), out()], ELEMENTS, None);
    refused("wrong-kind", trace_of(vec![wrong_kind], vec![], "", None), 2, "invalid trace: node 0 (fill): argument 1 is memory 0; the kernel takes a float by value");
    let missing = one_d("fill", vec![MemoryParam], vec![out()], ELEMENTS, None);
    refused("missing-argument", trace_of(vec![missing], vec![], "", None), 2, "invalid trace: node 0 (fill): it passes 1 arguments; the kernel takes 2");
}

#[test]
fn work_groups_the_device_cannot_run_are_refused() {
    // PoCL crashed recording each of these into a command buffer.
    let too_large = Launched { kernel: "fill", params: vec![MemoryParam, ValueParam], args: vec![out(), float(1.0)], global: [128, 128, 1], local: Some([128, 128, 1]), dims: 2 };
    let big_output = Memory { kind: MemKind::Buffer, size: 128 * 128 * 4, address: 0, flags: 0, device: None };
    let mut trace = trace_of(vec![too_large], vec![], "", None);
    trace.0.memories[0] = big_output;
    trace.0.segments[0].initial.clear();
    refused("too-large", trace, 3, "node 0 (fill): work-groups of 16384 work-items; this kernel runs at most");
    let uneven = one_d("fill", vec![MemoryParam, ValueParam], vec![out(), float(1.0)], ELEMENTS - 1, Some(8));
    refused("uneven", trace_of(vec![uneven], vec![], "-cl-std=CL1.2", None), 3, "node 0 (fill): global size [63] is not a multiple of work-group size [8]");
    let other_than_required = one_d("fixed", vec![MemoryParam], vec![out()], ELEMENTS, Some(8));
    refused("required", trace_of(vec![other_than_required], vec![], "", None), 3, "node 0 (fixed): work-group size [8]; the kernel requires [4]");
}

#[test]
fn more_local_memory_than_the_device_has_is_refused() {
    // PoCL aborted (an assertion) when the launch ran, in both modes.
    let launch = one_d("tiled", vec![MemoryParam, LocalParam], vec![out(), Arg::Local(1 << 40)], ELEMENTS, Some(8));
    refused("local-memory", trace_of(vec![launch], vec![], "", None), 3, "node 0 (tiled): 1099511627776 bytes of local memory; this device has");
}

#[test]
fn a_sub_buffer_the_device_cannot_place_is_refused() {
    let misaligned = Memory { kind: MemKind::SubBuffer { parent: MemId(0), offset: 4 }, size: 16, address: 0, flags: 0, device: None };
    let launch = one_d("fill", vec![MemoryParam, ValueParam], vec![Arg::Memory { mem: MemId(1), offset: 0 }, float(1.0)], 4, None);
    refused("sub-buffer", trace_of(vec![launch], vec![misaligned], "", None), 3, "memory 1: a sub-buffer at byte 4 of memory 0; this device starts sub-buffers only at multiples of");
}

#[test]
fn null_buffers_and_launches_of_nothing_replay() {
    // Hashcat passes its unused buffers as pointers to a null cl_mem (recorded as eight zero
    // bytes); PoCL crashed launching the clone of such a kernel that graph mode records.
    // OpenCL-CTS test_profiling launches a global size of 0, which runs nothing.
    let sevens = floats(7.0, ELEMENTS);
    let launches = vec![
        one_d("pick", vec![MemoryParam, ValueParam], vec![out(), Arg::Value(vec![0; 8])], ELEMENTS, None),
        one_d("pick", vec![MemoryParam, MemoryParam], vec![out(), Arg::NullMemory], ELEMENTS, Some(16)),
        one_d("fill", vec![MemoryParam, ValueParam], vec![out(), float(1.0)], 0, None),
    ];
    let trace = trace_of(launches, vec![], "", Some(sevens));
    replay_everywhere("replayable", &trace, |what, outcome| {
        assert_eq!(outcome.code, 0, "{what}: {}", outcome.stderr);
        let report: serde_json::Value = serde_json::from_str(&outcome.stdout).expect("replay --json prints JSON");
        assert_eq!((&report["comparison"]["passed"], &report["comparison"]["compared"]), (&serde_json::json!(true), &serde_json::json!(3)), "{what}: {report:#}");
    });
}
