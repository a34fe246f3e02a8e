//! The OpenCL backend on real drivers: traces built in code replay in graph and eager mode
//! on PoCL, and on Intel's CPU runtime when `REPRISE_INTEL_OCL` names it, ending with the
//! memory contents the test computes by hand.

mod common;

use common::jacobi;
use replayer::opencl::OpenClBackend;
use replayer::replay::{Mode, Replayer, RunOptions, RunReport};
use std::collections::BTreeMap;
use std::path::Path;
use std::process::Command as Process;
use trace_format::{
    Api, Arg, BlobStore, Command, Copy, Device, Edge, EdgeKind, Extent, Fill, Header, HostWrite, ImageKind, Kernel, KernelId,
    KernelLaunch, Launch, MemId, MemKind, MemState, Memory, Node, NodeId, Param, ParamKind, Place, Program, ProgramId,
    ProgramImage, Queue, QueueId, Segment, SegmentId, Trace, TraceReader,
};

/// Set in the child process that runs a test on Intel's runtime: the device to choose.
const DEVICE_VARIABLE: &str = "REPRISE_TEST_OPENCL_DEVICE";

/// Runs `body` with PoCL's device fragment here, and again in a child process (the ICD
/// loader reads its variables at start) on Intel's runtime when `REPRISE_INTEL_OCL` is set.
fn on_each_device(test: &str, body: impl Fn(&str)) {
    if let Ok(device) = std::env::var(DEVICE_VARIABLE) {
        body(&device);
        return;
    }
    body("portable computing language");
    let Ok(intel) = std::env::var("REPRISE_INTEL_OCL") else {
        eprintln!("REPRISE_INTEL_OCL is not set: {test} ran on PoCL only");
        return;
    };
    let directory = Path::new(&intel).parent().expect("REPRISE_INTEL_OCL is a file path");
    let library_path = match std::env::var("LD_LIBRARY_PATH") {
        Ok(existing) if !existing.is_empty() => format!("{}:{existing}", directory.display()),
        _ => directory.display().to_string(),
    };
    let output = Process::new(std::env::current_exe().expect("test binary path"))
        .args([test, "--exact", "--nocapture", "--test-threads=1"])
        .env("OCL_ICD_FILENAMES", &intel)
        .env("LD_LIBRARY_PATH", library_path)
        .env(DEVICE_VARIABLE, "intel(r) opencl")
        .output()
        .expect("the test binary runs again");
    let log = format!("{}{}", String::from_utf8_lossy(&output.stdout), String::from_utf8_lossy(&output.stderr));
    assert!(output.status.success(), "{test} failed on Intel's runtime:\n{log}");
    assert!(log.contains("1 passed"), "{test} did not run on Intel's runtime:\n{log}");
}

fn backend(device: &str) -> OpenClBackend {
    let options = replayer::backend::BackendOptions { device: Some(device.into()), ..Default::default() };
    OpenClBackend::open(&options).unwrap_or_else(|e| panic!("OpenCL device {device:?}: {e}"))
}

/// `trace` as the replayer streams it.
fn reader(trace: &Trace, blobs: &BlobStore) -> TraceReader {
    TraceReader::from_trace(trace, blobs).expect("the test trace is in segment order")
}

/// Replays `trace` as the command line does (the program's command buffers are inlined).
fn run(device: &str, trace: &Trace, blobs: &BlobStore, mode: Mode, iterations: usize) -> (RunReport, Vec<Vec<u8>>) {
    let reader = reader(trace, blobs);
    let mut replayer = Replayer::new(Box::new(backend(device)), &reader, Default::default()).expect("trace loads");
    let options = RunOptions { mode, iterations, compare: true, profile: false, inputs: BTreeMap::new(), rules: Default::default() };
    let report = replayer.run(&options, &mut |_, _| {}).unwrap_or_else(|e| panic!("{mode:?} replay on {device}: {e}"));
    let memories = (0..trace.memories.len()).map(|m| replayer.read_memory(MemId(m as u32)).expect("memory reads back")).collect();
    (report, memories)
}

fn words(values: &[u32]) -> Vec<u8> {
    values.iter().flat_map(|v| v.to_le_bytes()).collect()
}

const SOURCE: &str = "
kernel void scale(global uint* x, uint factor) { size_t i = get_global_id(0); x[i] *= factor; }
kernel void add(global const uint* a, global const uint* b, global uint* c) { size_t i = get_global_id(0); c[i] = a[i] + b[i]; }
kernel void say(global const uint* x) { printf(\"item %u\\n\", x[get_global_id(0)]); }
";

const N: usize = 64;
const BYTES: u64 = (N * 4) as u64;
const WRITTEN: usize = 16;
const A: MemId = MemId(0);
const B: MemId = MemId(1);
const C: MemId = MemId(2);
const D: MemId = MemId(3);
const R: MemId = MemId(4);

/// What the rectangular copy does: 4 rows of 16 bytes from D (rows 32 bytes apart, from the
/// start) into R at byte 16 of row 1 onwards (rows 32 bytes apart).
fn rect_copy(d: &[u8], r: &mut [u8]) {
    for row in 0..4 {
        let (src, dst) = (row * 32, 16 + (1 + row) * 32);
        r[dst..dst + 16].copy_from_slice(&d[src..src + 16]);
    }
}

/// One segment: an in-order chain on queue 0 (scale A by 3 then 2, copy A to B), a fill of C
/// on an out-of-order queue 1, `add(B, C) -> D` joined by events from both, a host write
/// into A followed by `scale(A, 5)`, a rectangular copy from D to R, a read of D and a
/// rectangular read of D.
fn mixed_trace() -> (Trace, BlobStore, [Vec<u8>; 5]) {
    let mut blobs = BlobStore::default();
    let source = blobs.insert(SOURCE.as_bytes().to_vec());
    let start: Vec<u32> = (0..N as u32).collect();
    let host_data: Vec<u32> = (1000..1000 + WRITTEN as u32).collect();
    let initial = [words(&start), vec![0; BYTES as usize], vec![0; BYTES as usize], vec![0; BYTES as usize], vec![0xff; BYTES as usize]];

    // The expected contents, computed step by step.
    let mut a: Vec<u32> = start.iter().map(|v| v * 6).collect();
    let b = a.clone();
    let c = vec![7u32; N];
    let d: Vec<u32> = b.iter().zip(&c).map(|(x, y)| x + y).collect();
    a[..WRITTEN].copy_from_slice(&host_data);
    a.iter_mut().for_each(|v| *v *= 5);
    let d_bytes = words(&d);
    let mut r = initial[4].clone();
    rect_copy(&d_bytes, &mut r);
    let expected = [words(&a), words(&b), words(&c), d_bytes.clone(), r];

    let buffer = Memory { kind: MemKind::Buffer, size: BYTES, address: 0, flags: opencl_sys::CL_MEM_READ_WRITE, device: None };
    let memory_param = Param { offset: 0, size: 8, kind: ParamKind::Memory };
    let value_param = Param { offset: 0, size: 4, kind: ParamKind::Value };
    let mut trace = Trace {
        header: Some(Header { api: Api::OpenCl, producer: "opencl test".into(), command_line: vec!["mixed".into()], process_id: 1, started_unix_s: 0 }),
        devices: vec![Device { name: "recording device".into(), vendor: "test".into(), driver_version: "1".into(), properties: Default::default() }],
        memories: vec![buffer.clone(); 5],
        programs: vec![Program { images: vec![ProgramImage { kind: ImageKind::OpenClSource, blob: source }], build_options: "-cl-std=CL1.2".into() }],
        kernels: vec![
            Kernel { program: ProgramId(0), name: "scale".into(), params: vec![memory_param.clone(), value_param] },
            Kernel { program: ProgramId(0), name: "add".into(), params: vec![memory_param.clone(), memory_param.clone(), memory_param] },
        ],
        queues: vec![
            Queue { in_order: true, device: None, flags: 0, priority: 0, label: "in-order".into() },
            Queue { in_order: false, device: None, flags: 2, priority: 0, label: "out-of-order".into() },
        ],
        ..Trace::default()
    };
    let range = Launch::NdRange { dims: 1, offset: [0; 3], global: [N as u64, 1, 1], local: None };
    let scale = |factor: u32| {
        Command::Kernel(KernelLaunch {
            kernel: KernelId(0),
            args: vec![Arg::Memory { mem: A, offset: 0 }, Arg::Value(factor.to_le_bytes().to_vec())],
            launch: range.clone(),
        })
    };
    let linear = |from: MemId, to: MemId| Command::Copy(Copy {
        src: Place::Memory { mem: from, offset: 0 },
        dst: Place::Memory { mem: to, offset: 0 },
        extent: Extent::Linear { bytes: BYTES },
    });
    let commands = [
        (0, scale(3)),
        (0, scale(2)),
        (0, linear(A, B)),
        (1, Command::Fill(Fill { mem: C, offset: 0, bytes: BYTES, pattern: 7u32.to_le_bytes().to_vec(), rows: None })),
        (
            1,
            Command::Kernel(KernelLaunch {
                kernel: KernelId(1),
                args: vec![Arg::Memory { mem: B, offset: 0 }, Arg::Memory { mem: C, offset: 0 }, Arg::Memory { mem: D, offset: 0 }],
                launch: range.clone(),
            }),
        ),
        (
            0,
            Command::Copy(Copy {
                src: Place::Host { data: Some(blobs.insert(words(&host_data))) },
                dst: Place::Memory { mem: A, offset: 0 },
                extent: Extent::Linear { bytes: (WRITTEN * 4) as u64 },
            }),
        ),
        (0, scale(5)),
        (
            1,
            Command::Copy(Copy {
                src: Place::Memory { mem: D, offset: 0 },
                dst: Place::Memory { mem: R, offset: 0 },
                extent: Extent::Rect {
                    src_origin: [0, 0, 0],
                    dst_origin: [16, 1, 0],
                    region: [16, 4, 1],
                    src_row_pitch: 32,
                    src_slice_pitch: 128,
                    dst_row_pitch: 32,
                    dst_slice_pitch: 128,
                },
            }),
        ),
        (
            1,
            Command::Copy(Copy {
                src: Place::Memory { mem: D, offset: 0 },
                dst: Place::Host { data: Some(blobs.insert(d_bytes)) },
                extent: Extent::Linear { bytes: BYTES },
            }),
        ),
        (
            1,
            // Rows far apart on the host: what is read back lands packed, so it needs no room; the
            // recorded host data does not reach them, so they are not compared.
            Command::Copy(Copy {
                src: Place::Memory { mem: D, offset: 0 },
                dst: Place::Host { data: Some(blobs.insert(vec![0; 64])) },
                extent: Extent::Rect {
                    src_origin: [4, 1, 0],
                    dst_origin: [0, 2, 0],
                    region: [8, 2, 1],
                    src_row_pitch: 64,
                    src_slice_pitch: 0,
                    dst_row_pitch: 1 << 40,
                    dst_slice_pitch: 0,
                },
            }),
        ),
    ];
    for (queue, command) in commands {
        trace.nodes.push(Node { queue: Some(QueueId(queue)), segment: SegmentId(0), command, call: "test".into() });
    }
    let edges = [(0, 1, EdgeKind::InOrder), (1, 2, EdgeKind::InOrder), (2, 4, EdgeKind::Event), (3, 4, EdgeKind::Event), (2, 5, EdgeKind::InOrder), (5, 6, EdgeKind::InOrder), (4, 7, EdgeKind::Event), (4, 8, EdgeKind::Event), (4, 9, EdgeKind::Event)];
    trace.edges = edges.iter().map(|&(from, to, kind)| Edge { from: NodeId(from), to: NodeId(to), kind }).collect();
    let states = |contents: &[Vec<u8>; 5], blobs: &mut BlobStore| -> Vec<MemState> {
        contents.iter().enumerate().map(|(m, bytes)| MemState { mem: MemId(m as u32), blob: blobs.insert(bytes.clone()) }).collect()
    };
    let segment = Segment { ordinal: 0, ended_by: "clFinish".into(), initial: states(&initial, &mut blobs), expected: states(&expected, &mut blobs), failed_with: None, printed: None, racy_reads: Vec::new(), host_writes: Vec::new() };
    trace.segments.push(segment);
    (trace, blobs, expected)
}

fn check_mixed(device: &str, mode: Mode) {
    let (trace, blobs, expected) = mixed_trace();
    let (report, memories) = run(device, &trace, &blobs, mode, 3);
    let comparison = report.comparison.as_ref().expect("compared");
    assert!(comparison.passed(), "{mode:?} on {device}: {:?}", comparison.mismatches);
    // The five memory states and what the linear read of D delivered.
    assert_eq!(comparison.compared, 6);
    for (m, want) in expected.iter().enumerate() {
        assert_eq!(&memories[m], want, "memory {m} after {mode:?} replay on {device}");
    }
    if mode == Mode::Graph {
        // The host write splits the kernels and copies into command buffers around it.
        assert!(report.command_buffers_built >= 2, "{report:?}");
    }
}

#[test]
fn mixed_graph_replay() {
    on_each_device("mixed_graph_replay", |device| check_mixed(device, Mode::Graph));
}

#[test]
fn mixed_eager_replay() {
    on_each_device("mixed_eager_replay", |device| check_mixed(device, Mode::Eager));
}

/// Jacobi segments form one family whose buffer is patched before each member: natively
/// with mutable dispatch (Intel), by rebuilding without it (PoCL).
#[test]
fn jacobi_updates() {
    on_each_device("jacobi_updates", |device| {
        const SEGMENTS: u32 = 6;
        let (trace, blobs) = jacobi::jacobi(Api::OpenCl, SEGMENTS);
        let opened = backend(device);
        let native = opened.mutable_dispatch_revision().is_some();
        drop(opened);
        let (report, memories) = run(device, &trace, &blobs, Mode::Graph, 2);
        let comparison = report.comparison.as_ref().expect("compared");
        assert!(comparison.passed(), "{device}: {:?}", comparison.mismatches);
        assert_eq!((report.families, report.command_buffers_built), (1, 1), "{report:?}");
        // Every member but the first changes the buffer, in each of the 4 runs (warm-up, 2 timed, compared).
        let updates = 4 * SEGMENTS as usize - 1;
        if native {
            assert_eq!((report.native_updates, report.rebuilds), (updates, 0), "{device}: {report:?}");
        } else {
            assert_eq!((report.native_updates, report.rebuilds), (0, updates), "{device}: {report:?}");
        }
        let mut values = jacobi::start_values();
        for segment in 0..SEGMENTS {
            values = values.iter().map(|v| v * jacobi::factor(segment)).collect();
        }
        let last = if (SEGMENTS - 1).is_multiple_of(2) { 1 } else { 0 };
        assert_eq!(jacobi::from_bytes(&memories[last]), values, "{device}");
    });
}

/// Each device reports the command buffer revision the brief names.
#[test]
fn reports_extension_revisions() {
    on_each_device("reports_extension_revisions", |device| {
        let opened = backend(device);
        if device.contains("intel") {
            assert_eq!(opened.command_buffer_revision(), Some((1, 0, 0)));
            assert_eq!(opened.mutable_dispatch_revision(), Some((0, 9, 3)));
        } else {
            assert_eq!(opened.command_buffer_revision(), Some((0, 9, 0)));
            assert_eq!(opened.mutable_dispatch_revision(), None);
        }
    });
}

#[test]
fn unknown_device_is_unavailable() {
    let options = replayer::backend::BackendOptions { device: Some("no such device".into()), ..Default::default() };
    let error = OpenClBackend::open(&options).err().expect("no device matches");
    assert!(matches!(error, replayer::backend::BackendError::Unavailable(_)), "{error}");
    assert!(error.to_string().contains("no OpenCL device matches"), "{error}");
}

/// A trace of one segment over `memories` (each of `BYTES` unless given) running `nodes`
/// on one in-order queue with `edges`, starting from `initial` and ending at `expected`.
fn single_segment(memories: Vec<Memory>, nodes: Vec<Command>, edges: &[(u32, u32)], initial: Vec<Vec<u8>>, expected: &[Vec<u8>]) -> (Trace, BlobStore) {
    let mut blobs = BlobStore::default();
    let source = blobs.insert(SOURCE.as_bytes().to_vec());
    let memory_param = Param { offset: 0, size: 8, kind: ParamKind::Memory };
    let mut states = |contents: &[Vec<u8>]| -> Vec<MemState> {
        contents.iter().enumerate().map(|(m, bytes)| MemState { mem: MemId(m as u32), blob: blobs.insert(bytes.clone()) }).collect()
    };
    let segment = Segment { ordinal: 0, ended_by: "clFinish".into(), initial: states(&initial), expected: states(expected), failed_with: None, printed: None, racy_reads: Vec::new(), host_writes: Vec::new() };
    let trace = Trace {
        header: Some(Header { api: Api::OpenCl, producer: "opencl test".into(), command_line: vec!["single".into()], process_id: 1, started_unix_s: 0 }),
        memories,
        programs: vec![Program { images: vec![ProgramImage { kind: ImageKind::OpenClSource, blob: source }], build_options: String::new() }],
        kernels: vec![
            Kernel { program: ProgramId(0), name: "scale".into(), params: vec![memory_param.clone(), Param { offset: 0, size: 4, kind: ParamKind::Value }] },
            Kernel { program: ProgramId(0), name: "add".into(), params: vec![memory_param.clone(), memory_param.clone(), memory_param.clone()] },
            Kernel { program: ProgramId(0), name: "say".into(), params: vec![memory_param] },
        ],
        queues: vec![Queue { in_order: true, device: None, flags: 0, priority: 0, label: "queue".into() }],
        nodes: nodes.into_iter().map(|command| Node { queue: Some(QueueId(0)), segment: SegmentId(0), command, call: "test".into() }).collect(),
        edges: edges.iter().map(|&(from, to)| Edge { from: NodeId(from), to: NodeId(to), kind: EdgeKind::InOrder }).collect(),
        segments: vec![segment],
        ..Trace::default()
    };
    (trace, blobs)
}

fn scale_of(mem: MemId, offset: u64, factor: u32, elements: usize) -> Command {
    Command::Kernel(KernelLaunch {
        kernel: KernelId(0),
        args: vec![Arg::Memory { mem, offset }, Arg::Value(factor.to_le_bytes().to_vec())],
        launch: Launch::NdRange { dims: 1, offset: [0; 3], global: [elements as u64, 1, 1], local: None },
    })
}

/// What kernels print is compared with what the recording kept, line by line in any order
/// (work-items print in no fixed order): the same lines pass, others fail. The replayer runs as
/// its own process, whose standard output it redirects while the segment runs.
#[test]
fn what_kernels_print_is_compared_with_the_recording() {
    on_each_device("what_kernels_print_is_compared_with_the_recording", |device| {
        let buffer = Memory { kind: MemKind::Buffer, size: BYTES, address: 0, flags: 0, device: None };
        let say = Command::Kernel(KernelLaunch {
            kernel: KernelId(2),
            args: vec![Arg::Memory { mem: A, offset: 0 }],
            launch: Launch::NdRange { dims: 1, offset: [0; 3], global: [3, 1, 1], local: Some([1, 1, 1]) },
        });
        let values = words(&(7..7 + N as u32).collect::<Vec<u32>>());
        let (mut trace, mut blobs) = single_segment(vec![buffer], vec![say], &[], vec![values.clone()], &[values]);
        let dir = common::scratch(&format!("printed-{}", device.replace(' ', "-")));
        // PoCL's work-items print from its own threads, and a line can come out late under load,
        // so that replay runs differ in it: such a line is unstable, yet a recorded line that no
        // run prints still fails.
        for (printed, passes) in [("item 9\nitem 7\nitem 8\n", true), ("line 7\nline 8\nline 9\n", false)] {
            trace.segments[0].printed = Some(blobs.insert(printed.as_bytes().to_vec()));
            let path = common::write(&dir, "printed.trace", &(trace.clone(), blobs.clone()));
            for mode in ["graph", "eager"] {
                let args = ["replay", common::path_str(&path), "--mode", mode, "--compare", "--json", "--iterations", "2", "--device", device];
                let outcome = common::replayer(&args);
                let report: serde_json::Value = serde_json::from_str(&outcome.stdout).unwrap_or_else(|e| panic!("{e}: {}{}", outcome.stdout, outcome.stderr));
                let comparison = &report["comparison"];
                assert_eq!(comparison["passed"], passes, "{mode} on {device}, recorded {printed:?}: {comparison}");
                if !passes {
                    assert_eq!(comparison["mismatches"][0]["printed"], true, "{comparison}");
                }
            }
        }
    });
}

/// Two fills write one buffer with nothing ordering them, and a read after both takes it to the
/// host: the graph leaves which fill wins open, so where the replay's outcome differs from the
/// recording's, in the buffer and in the data read, the bytes are unstable (the hazard is
/// reported). The same fills ordered are no race, and the difference fails.
#[test]
fn what_unordered_writers_leave_is_unstable() {
    on_each_device("what_unordered_writers_leave_is_unstable", |device| {
        let buffer = Memory { kind: MemKind::Buffer, size: BYTES, address: 0, flags: 0, device: None };
        let fill = |value: u32| Command::Fill(Fill { mem: A, offset: 0, bytes: BYTES, pattern: value.to_le_bytes().to_vec(), rows: None });
        // The recording's outcome stands for an interleaving of the two that no replay repeats.
        let recorded = words(&[1, 2].repeat(N / 2));
        for (edges, passes) in [(&[(0, 2), (1, 2)][..], true), (&[(0, 1), (1, 2)][..], false)] {
            let nodes = vec![fill(1), fill(2), Command::Barrier];
            let (mut trace, mut blobs) = single_segment(vec![buffer.clone()], nodes, edges, vec![vec![0; BYTES as usize]], std::slice::from_ref(&recorded));
            let received = Some(blobs.insert(recorded.clone()));
            trace.nodes[2].command = Command::Copy(Copy { src: Place::Memory { mem: A, offset: 0 }, dst: Place::Host { data: received }, extent: Extent::Linear { bytes: BYTES } });
            for mode in [Mode::Graph, Mode::Eager] {
                let (report, _) = run(device, &trace, &blobs, mode, 2);
                let comparison = report.comparison.as_ref().expect("compared");
                assert_eq!(comparison.passed(), passes, "{mode:?} on {device}, edges {edges:?}: {:?}", comparison.mismatches);
                assert_eq!(comparison.compared, 2, "the buffer and the data read");
                assert_eq!(comparison.hazard_count, usize::from(passes), "{:?}", comparison.hazards);
                assert_eq!(comparison.unstable_bytes > 0, passes);
            }
        }
    });
}

/// Bytes the host stored into memory before a segment (or while it ran) are in place when its
/// commands run; where the host wrote while a command that writes the same memory ran, the
/// recording's bytes there are a race's outcome, and only those.
#[test]
fn what_the_host_wrote_is_in_place_before_the_segment_runs() {
    on_each_device("what_the_host_wrote_is_in_place_before_the_segment_runs", |device| {
        let buffer = Memory { kind: MemKind::Buffer, size: BYTES, address: 0, flags: 0, device: None };
        let mut scaled = vec![0u32; N];
        scaled[8] = 27;
        let (mut trace, mut blobs) = single_segment(vec![buffer.clone()], vec![scale_of(A, 0, 3, N)], &[], vec![vec![0; BYTES as usize]], &[words(&scaled)]);
        let host_write = |blobs: &mut BlobStore, value: u32, while_running| HostWrite { mem: A, offset: 32, blob: blobs.insert(value.to_le_bytes().to_vec()), while_running };
        trace.segments[0].host_writes.push(host_write(&mut blobs, 9, false));
        check_both_modes(device, &trace, &blobs, &[words(&scaled)]);
        // The host stored 9 while the kernel ran: the recording saw 9 there, not 27.
        trace.segments[0].host_writes[0] = host_write(&mut blobs, 9, true);
        let mut raced = scaled.clone();
        raced[8] = 9;
        trace.segments[0].expected[0].blob = blobs.insert(words(&raced));
        for mode in [Mode::Graph, Mode::Eager] {
            let (report, _) = run(device, &trace, &blobs, mode, 2);
            let comparison = report.comparison.as_ref().expect("compared");
            assert!(comparison.passed(), "{mode:?} on {device}: {:?}", comparison.mismatches);
            assert_eq!((comparison.hazard_count, comparison.unstable_bytes), (1, 8), "{mode:?} on {device}: {:?}", comparison.hazards);
        }
        raced[12] = 1;
        trace.segments[0].expected[0].blob = blobs.insert(words(&raced));
        let (report, _) = run(device, &trace, &blobs, Mode::Graph, 2);
        assert!(!report.comparison.as_ref().expect("compared").passed(), "a difference outside what the host wrote fails on {device}");
    });
}

/// Buffers in use at different times share storage when the trace's add up to more than the
/// replay may hold (`--memory-budget`, by default half the device's memory; OpenCL-CTS allocates
/// and frees tens of GB over a run): each segment still compares equal, and the earlier buffer's
/// contents after the run are reported gone rather than read from its successor's storage.
#[test]
fn buffers_in_use_at_different_times_share_storage_past_the_memory_budget() {
    on_each_device("buffers_in_use_at_different_times_share_storage_past_the_memory_budget", |device| {
        let buffer = Memory { kind: MemKind::Buffer, size: BYTES, address: 0, flags: 0, device: None };
        let filled = |value: u32| words(&vec![value; N]);
        let (mut trace, mut blobs) = single_segment(vec![buffer.clone(), buffer], vec![scale_of(A, 0, 3, N)], &[], vec![filled(1)], &[filled(3)]);
        let state = |blobs: &mut BlobStore, value: u32| MemState { mem: B, blob: blobs.insert(filled(value)) };
        let (initial, expected) = (state(&mut blobs, 2), state(&mut blobs, 6));
        trace.segments.push(Segment { ordinal: 1, ended_by: "clFinish".into(), initial: vec![initial], expected: vec![expected], failed_with: None, printed: None, racy_reads: Vec::new(), host_writes: Vec::new() });
        trace.nodes.push(Node { queue: Some(QueueId(0)), segment: SegmentId(1), command: scale_of(B, 0, 3, N), call: "test".into() });
        let reader = reader(&trace, &blobs);
        for mode in [Mode::Graph, Mode::Eager] {
            let options = replayer::backend::BackendOptions { device: Some(device.into()), memory_budget: Some(BYTES), ..Default::default() };
            let backend = OpenClBackend::open(&options).unwrap_or_else(|e| panic!("OpenCL device {device:?}: {e}"));
            let mut replayer = Replayer::new(Box::new(backend), &reader, Default::default()).expect("trace loads");
            let options = RunOptions { mode, iterations: 2, compare: true, profile: false, inputs: BTreeMap::new(), rules: Default::default() };
            let report = replayer.run(&options, &mut |_, _| {}).unwrap_or_else(|e| panic!("{mode:?} replay on {device}: {e}"));
            let comparison = report.comparison.expect("compared");
            assert!(comparison.passed() && comparison.compared == 2, "{mode:?} on {device}: {:?}", comparison.mismatches);
            let gone = replayer.read_memory(A).expect_err("memory 0's storage went to memory 1").to_string();
            assert!(gone.contains("shared its storage with memory 1"), "{gone}");
            assert_eq!(replayer.read_memory(B).expect("the last user reads back"), filled(6));
            // An input for the later buffer lands when its first contents come, not at the start
            // of the run, where the earlier buffer's would overwrite it.
            let options = RunOptions { mode, iterations: 1, compare: false, profile: false, inputs: BTreeMap::from([(B, filled(5))]), rules: Default::default() };
            replayer.run(&options, &mut |_, _| {}).unwrap_or_else(|e| panic!("{mode:?} replay with an input on {device}: {e}"));
            assert_eq!(replayer.read_memory(B).expect("the last user reads back"), filled(15));
        }
    });
}

/// What must be held at once even with storage shared (here one buffer's) past the memory budget
/// is refused with a message before the device is asked for it: the system would otherwise end the
/// replay for memory (OpenCL-CTS's image tests create images of gigabytes one after another).
#[test]
fn a_trace_that_cannot_fit_the_memory_budget_is_refused() {
    on_each_device("a_trace_that_cannot_fit_the_memory_budget_is_refused", |device| {
        let buffer = Memory { kind: MemKind::Buffer, size: BYTES, address: 0, flags: 0, device: None };
        let (trace, blobs) = single_segment(vec![buffer.clone(), buffer], vec![scale_of(A, 0, 3, N)], &[], vec![words(&vec![1; N])], &[words(&vec![3; N])]);
        let reader = reader(&trace, &blobs);
        let options = replayer::backend::BackendOptions { device: Some(device.into()), memory_budget: Some(BYTES / 2), ..Default::default() };
        let backend = OpenClBackend::open(&options).unwrap_or_else(|e| panic!("OpenCL device {device:?}: {e}"));
        let refused = Replayer::new(Box::new(backend), &reader, Default::default()).err().expect("refused").to_string();
        assert!(refused.contains(&format!("needs {BYTES} bytes of memory objects at once")) && refused.contains("--memory-budget"), "{refused}");
    });
}

fn check_both_modes(device: &str, trace: &Trace, blobs: &BlobStore, expected: &[Vec<u8>]) {
    for mode in [Mode::Graph, Mode::Eager] {
        let (report, memories) = run(device, trace, blobs, mode, 2);
        let comparison = report.comparison.as_ref().expect("compared");
        assert!(comparison.passed(), "{mode:?} on {device}: {:?}", comparison.mismatches);
        assert_eq!(memories, expected, "{mode:?} on {device}");
    }
}

/// A command buffer the program built itself (a sub-graph node: fill, scale, copy) followed
/// by a kernel that reads its result.
#[test]
fn program_command_buffer_replays() {
    on_each_device("program_command_buffer_replays", |device| {
        let buffer = Memory { kind: MemKind::Buffer, size: BYTES, address: 0, flags: 0, device: None };
        let inner = |command| Node { queue: None, segment: SegmentId(0), command, call: "clCommand*KHR".into() };
        let graph = trace_format::Graph {
            nodes: vec![
                inner(Command::Fill(Fill { mem: A, offset: 0, bytes: BYTES, pattern: 2u32.to_le_bytes().to_vec(), rows: None })),
                inner(scale_of(A, 0, 3, N)),
                inner(Command::Copy(Copy {
                    src: Place::Memory { mem: A, offset: 0 },
                    dst: Place::Memory { mem: B, offset: 0 },
                    extent: Extent::Linear { bytes: BYTES },
                })),
            ],
            edges: vec![Edge { from: NodeId(0), to: NodeId(1), kind: EdgeKind::Event }, Edge { from: NodeId(1), to: NodeId(2), kind: EdgeKind::Event }],
        };
        let expected = vec![words(&[6; N]), words(&[30; N])];
        let (trace, blobs) = single_segment(
            vec![buffer.clone(), buffer],
            vec![Command::Subgraph(graph), scale_of(B, 0, 5, N)],
            &[(0, 1)],
            vec![vec![0; BYTES as usize]; 2],
            &expected,
        );
        check_both_modes(device, &trace, &blobs, &expected);
    });
}

/// Sub-buffers bind as kernel arguments at their recorded parent offset; SVM pointers bind
/// with their offset, and SVM copies and fills run (recorded where the revision allows).
#[test]
fn sub_buffers_and_svm() {
    on_each_device("sub_buffers_and_svm", |device| {
        let half = BYTES / 2;
        let memories = vec![
            Memory { kind: MemKind::Buffer, size: BYTES, address: 0, flags: 0, device: None },
            Memory { kind: MemKind::SubBuffer { parent: A, offset: half }, size: half, address: 0, flags: 0, device: None },
            Memory { kind: MemKind::Shared, size: BYTES, address: 0, flags: 0, device: None },
            Memory { kind: MemKind::Shared, size: BYTES, address: 0, flags: 0, device: None },
        ];
        let (svm, svm_copy) = (MemId(2), MemId(3));
        let start: Vec<u32> = (0..N as u32).collect();
        let nodes = vec![
            scale_of(B, 0, 10, N / 2),
            Command::Fill(Fill { mem: svm, offset: 0, bytes: BYTES, pattern: 4u32.to_le_bytes().to_vec(), rows: None }),
            scale_of(svm, 16, 7, N - 4),
            Command::Copy(Copy {
                src: Place::Memory { mem: svm, offset: 0 },
                dst: Place::Memory { mem: svm_copy, offset: 0 },
                extent: Extent::Linear { bytes: BYTES },
            }),
        ];
        let parent: Vec<u32> = start.iter().enumerate().map(|(i, v)| if i >= N / 2 { v * 10 } else { *v }).collect();
        let sub = parent[N / 2..].to_vec();
        let shared: Vec<u32> = (0..N).map(|i| if i >= 4 { 28 } else { 4 }).collect();
        let expected = vec![words(&parent), words(&sub), words(&shared), words(&shared)];
        let initial = vec![words(&start), words(&start[N / 2..]), vec![0; BYTES as usize], vec![0; BYTES as usize]];
        let (trace, blobs) = single_segment(memories, nodes, &[(0, 1), (1, 2), (2, 3)], initial, &expected);
        check_both_modes(device, &trace, &blobs, &expected);
    });
}

/// The first command of a segment runs on the recorded queue, the initial state is written on
/// the backend's own: it must wait for that write (a blocking write only means the host data
/// was copied; Intel's runtime ran the fill first under load).
#[test]
fn first_command_waits_for_initial_state() {
    on_each_device("first_command_waits_for_initial_state", |device| {
        let buffer = Memory { kind: MemKind::Buffer, size: BYTES, address: 0, flags: 0, device: None };
        let expected = vec![words(&[6; N]), words(&[30; N])];
        let (trace, blobs) = single_segment(
            vec![buffer.clone(), buffer],
            vec![
                Command::Fill(Fill { mem: A, offset: 0, bytes: BYTES, pattern: 2u32.to_le_bytes().to_vec(), rows: None }),
                scale_of(A, 0, 3, N),
                Command::Copy(Copy {
                    src: Place::Memory { mem: A, offset: 0 },
                    dst: Place::Memory { mem: B, offset: 0 },
                    extent: Extent::Linear { bytes: BYTES },
                }),
                scale_of(B, 0, 5, N),
            ],
            &[(0, 1), (1, 2), (2, 3)],
            vec![vec![0; BYTES as usize]; 2],
            &expected,
        );
        check_both_modes(device, &trace, &blobs, &expected);
    });
}

/// Segments that differ only in the global size form one family patched by launch: natively
/// where mutable dispatch may change ND-ranges, else by rebuilding.
#[test]
fn launch_size_updates() {
    on_each_device("launch_size_updates", |device| {
        const SEGMENTS: u32 = 3;
        let buffer = Memory { kind: MemKind::Buffer, size: BYTES, address: 0, flags: 0, device: None };
        let ones = words(&[1; N]);
        let doubled = |segment: u32| words(&(0..N).map(|i| if i < N >> segment { 2 } else { 1 }).collect::<Vec<u32>>());
        let (mut trace, mut blobs) = single_segment(vec![buffer], vec![scale_of(A, 0, 2, N)], &[], vec![ones.clone()], &[doubled(0)]);
        for segment in 1..SEGMENTS {
            trace.nodes.push(Node { queue: Some(QueueId(0)), segment: SegmentId(segment), command: scale_of(A, 0, 2, N >> segment), call: "test".into() });
            trace.segments.push(Segment {
                ordinal: segment as u64,
                ended_by: "clFinish".into(),
                initial: vec![MemState { mem: A, blob: blobs.insert(ones.clone()) }],
                expected: vec![MemState { mem: A, blob: blobs.insert(doubled(segment)) }],
                failed_with: None,
                printed: None,
                racy_reads: Vec::new(),
            host_writes: Vec::new(),
            });
        }
        let (report, memories) = run(device, &trace, &blobs, Mode::Graph, 2);
        let comparison = report.comparison.as_ref().expect("compared");
        assert!(comparison.passed(), "{device}: {:?}", comparison.mismatches);
        assert_eq!(memories[0], doubled(SEGMENTS - 1), "{device}");
        assert_eq!((report.families, report.command_buffers_built), (1, 1), "{report:?}");
        let updates = 4 * SEGMENTS as usize - 1;
        assert_eq!(report.native_updates + report.rebuilds, updates, "{report:?}");
        if device.contains("intel") {
            assert_eq!(report.native_updates, updates, "Intel's mutable dispatch changes ND-ranges: {report:?}");
        } else {
            assert_eq!(report.rebuilds, updates, "PoCL has no mutable dispatch: {report:?}");
        }
    });
}

/// What PoCL would crash on is refused with a message before it reaches the driver: a copy
/// past the end of a buffer, and a launch that leaves a kernel argument unset.
#[test]
fn invalid_commands_are_refused() {
    on_each_device("invalid_commands_are_refused", |device| {
        let buffer = Memory { kind: MemKind::Buffer, size: BYTES, address: 0, flags: 0, device: None };
        let zeros = vec![0; BYTES as usize];
        let overrun = Command::Copy(Copy {
            src: Place::Memory { mem: A, offset: 8 },
            dst: Place::Memory { mem: B, offset: 0 },
            extent: Extent::Linear { bytes: BYTES },
        });
        let (trace, blobs) = single_segment(vec![buffer.clone(), buffer.clone()], vec![overrun], &[], vec![zeros.clone(), zeros.clone()], std::slice::from_ref(&zeros));
        let refused = |trace: &Trace, blobs: &BlobStore, mode| {
            let reader = reader(trace, blobs);
            let mut replayer = Replayer::new(Box::new(backend(device)), &reader, Default::default()).expect("trace loads");
            let options = RunOptions { mode, iterations: 1, compare: false, profile: false, inputs: BTreeMap::new(), rules: Default::default() };
            replayer.run(&options, &mut |_, _| {}).expect_err("the command is refused").to_string()
        };
        for mode in [Mode::Graph, Mode::Eager] {
            let error = refused(&trace, &blobs, mode);
            assert!(error.contains("256 bytes at offset 8 of memory 0"), "{mode:?}: {error}");
        }

        let mut missing_arg = scale_of(A, 0, 2, N);
        if let Command::Kernel(launch) = &mut missing_arg {
            launch.args.pop();
        }
        let (trace, blobs) = single_segment(vec![buffer], vec![missing_arg], &[], vec![zeros.clone()], &[zeros]);
        for mode in [Mode::Graph, Mode::Eager] {
            let error = refused(&trace, &blobs, mode);
            assert!(error.contains("node 0 (scale): it passes 1 arguments; the kernel takes 2"), "{mode:?}: {error}");
        }
    });
}

/// Segments that bind an SVM pointer at another offset form one family patched through the
/// SVM argument list (natively on Intel).
#[test]
fn svm_pointer_updates() {
    on_each_device("svm_pointer_updates", |device| {
        const SEGMENTS: u32 = 3;
        let shared = Memory { kind: MemKind::Shared, size: BYTES, address: 0, flags: 0, device: None };
        let ones = words(&[1; N]);
        let scaled = |segment: u32| {
            let start = 4 * segment as usize;
            words(&(0..N).map(|i| if (start..start + N / 2).contains(&i) { 2 } else { 1 }).collect::<Vec<u32>>())
        };
        let (mut trace, mut blobs) = single_segment(vec![shared], vec![scale_of(A, 0, 2, N / 2)], &[], vec![ones.clone()], &[scaled(0)]);
        for segment in 1..SEGMENTS {
            let command = scale_of(A, 16 * segment as u64, 2, N / 2);
            trace.nodes.push(Node { queue: Some(QueueId(0)), segment: SegmentId(segment), command, call: "test".into() });
            trace.segments.push(Segment {
                ordinal: segment as u64,
                ended_by: "clFinish".into(),
                initial: vec![MemState { mem: A, blob: blobs.insert(ones.clone()) }],
                expected: vec![MemState { mem: A, blob: blobs.insert(scaled(segment)) }],
                failed_with: None,
                printed: None,
                racy_reads: Vec::new(),
            host_writes: Vec::new(),
            });
        }
        let (report, memories) = run(device, &trace, &blobs, Mode::Graph, 2);
        let comparison = report.comparison.as_ref().expect("compared");
        assert!(comparison.passed(), "{device}: {:?}", comparison.mismatches);
        assert_eq!(memories[0], scaled(SEGMENTS - 1), "{device}");
        let updates = 4 * SEGMENTS as usize - 1;
        let counted = if device.contains("intel") { report.native_updates } else { report.rebuilds };
        assert_eq!((report.families, counted), (1, updates), "{report:?}");
    });
}
