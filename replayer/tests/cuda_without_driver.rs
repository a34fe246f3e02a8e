//! `replayer replay` of a CUDA trace on a machine without the CUDA driver (this one, in CI):
//! it must exit 3 with a message saying where CUDA traces can be replayed, not panic.

mod common;

use common::{path_str, replayer, scratch, write};
use trace_format::{
    Api, Arg, BlobStore, Command, Copy, Device, Edge, EdgeKind, Extent, Fill, Header, ImageKind, Kernel, KernelId,
    KernelLaunch, Launch, MemId, MemKind, MemState, Memory, Node, NodeId, Param, ParamKind, Place, Program, ProgramId,
    ProgramImage, Queue, QueueId, Segment, SegmentId, Trace,
};

const PTX: &str = ".version 8.0\n.target sm_90\n.address_size 64\n\
.visible .entry _Z5scalePKfPff(.param .u64 a, .param .u64 b, .param .f32 f) { ret; }\n";

/// One segment as the shim records a CUDA program: a memset, a kernel, a read back.
fn cuda_trace() -> (Trace, BlobStore) {
    let mut blobs = BlobStore::default();
    let ptx = blobs.insert(PTX.as_bytes().to_vec());
    let zeros = blobs.insert(vec![0; 64]);
    let buffer = Memory { kind: MemKind::Buffer, size: 64, address: 0x7f00_0000_0000, flags: 0, device: None };
    let node = |command| Node { queue: Some(QueueId(0)), segment: SegmentId(0), command, call: "cuLaunchKernel".into() };
    let trace = Trace {
        header: Some(Header { api: Api::Cuda, producer: "replayer test".into(), command_line: vec!["./scale".into()], process_id: 1, started_unix_s: 0 }),
        devices: vec![Device {
            name: "NVIDIA H100".into(),
            vendor: "NVIDIA".into(),
            driver_version: "580".into(),
            properties: [("compute_capability".to_string(), "9.0".to_string())].into(),
        }],
        memories: vec![buffer.clone(), Memory { address: 0x7f00_0000_1000, ..buffer }],
        programs: vec![Program { images: vec![ProgramImage { kind: ImageKind::Ptx, blob: ptx }], build_options: String::new() }],
        kernels: vec![Kernel {
            program: ProgramId(0),
            name: "_Z5scalePKfPff".into(),
            params: vec![
                Param { offset: 0, size: 8, kind: ParamKind::Memory },
                Param { offset: 8, size: 8, kind: ParamKind::Memory },
                Param { offset: 16, size: 4, kind: ParamKind::Value },
            ],
        }],
        queues: vec![Queue { in_order: true, device: None, flags: 1, priority: 0, label: "stream 0x1".into() }],
        nodes: vec![
            node(Command::Fill(Fill { mem: MemId(1), offset: 0, bytes: 64, pattern: vec![0; 4], rows: None })),
            node(Command::Kernel(KernelLaunch {
                kernel: KernelId(0),
                args: vec![Arg::Memory { mem: MemId(0), offset: 0 }, Arg::Memory { mem: MemId(1), offset: 0 }, Arg::Value(2f32.to_le_bytes().to_vec())],
                launch: Launch::Grid { grid: [1, 1, 1], block: [16, 1, 1], shared_bytes: 0, cluster: None, cooperative: false },
            })),
            node(Command::Copy(Copy {
                src: Place::Memory { mem: MemId(1), offset: 0 },
                dst: Place::Host { data: Some(zeros) },
                extent: Extent::Linear { bytes: 64 },
            })),
        ],
        edges: vec![
            Edge { from: NodeId(0), to: NodeId(1), kind: EdgeKind::InOrder },
            Edge { from: NodeId(1), to: NodeId(2), kind: EdgeKind::InOrder },
        ],
        segments: vec![Segment {
            ordinal: 0,
            ended_by: "cuStreamSynchronize".into(),
            initial: vec![MemState { mem: MemId(0), blob: zeros }],
            expected: vec![MemState { mem: MemId(1), blob: zeros }],
            failed_with: None,
            printed: None,
            racy_reads: Vec::new(),
            host_writes: Vec::new(),
        }],
        ..Trace::default()
    };
    (trace, blobs)
}

/// Whether this machine has the CUDA driver; the test is about machines without it.
fn driver_present() -> bool {
    let handle = unsafe { libc::dlopen(c"libcuda.so.1".as_ptr(), libc::RTLD_NOW | libc::RTLD_LOCAL) };
    if !handle.is_null() {
        unsafe { libc::dlclose(handle) };
    }
    !handle.is_null()
}

#[test]
fn replaying_a_cuda_trace_without_the_driver_exits_3_and_says_where_to_replay_it() {
    if driver_present() {
        eprintln!("libcuda.so.1 loads here: this test checks machines without the CUDA driver");
        return;
    }
    let dir = scratch("cuda-without-driver");
    let trace = write(&dir, "scale.trace", &cuda_trace());
    for mode in ["graph", "eager"] {
        let outcome = replayer(&["replay", path_str(&trace), "--mode", mode, "--compare"]);
        assert_eq!(outcome.code, 3, "mode {mode}: stdout {} stderr {}", outcome.stdout, outcome.stderr);
        assert!(
            outcome.stderr.contains("no CUDA driver (libcuda.so.1) on this machine: replay CUDA traces on a machine with an NVIDIA GPU"),
            "mode {mode}: {}",
            outcome.stderr
        );
        assert!(!outcome.stderr.contains("panicked"), "{}", outcome.stderr);
    }
    // Everything that needs no device still works on the same trace.
    let info = replayer(&["info", path_str(&trace)]);
    assert_eq!(info.code, 0, "{}", info.stderr);
}
