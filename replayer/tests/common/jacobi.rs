//! A Jacobi-style trace built in code: each segment runs `scale(from, to, factor)` with the
//! two buffers swapped and the factor changed, then reads `to` back, as a program that
//! iterates between host synchronizations would record it.

use trace_format::{
    Api, Arg, BlobStore, Command, Copy, Device, Edge, EdgeKind, Extent, Header, ImageKind, Kernel, KernelId,
    KernelLaunch, Launch, MemId, MemKind, MemState, Memory, Node, NodeId, Param, ParamKind, Place, Program,
    ProgramId, ProgramImage, Queue, QueueId, Segment, SegmentId, Trace,
};

pub const SCALE_SOURCE: &str =
    "kernel void scale(global const float* a, global float* b, float f) { size_t i = get_global_id(0); b[i] = a[i] * f; }";

/// Elements of each buffer.
pub const ELEMENTS: usize = 16;

/// The factor segment `segment` scales by: 2, 3, 4, ... (exact in binary floating point products).
pub fn factor(segment: u32) -> f32 {
    2.0 + segment as f32
}

/// What buffer 0 holds at the start: 1, 2, ..., 16.
pub fn start_values() -> Vec<f32> {
    (1..=ELEMENTS).map(|v| v as f32).collect()
}

pub fn to_bytes(values: &[f32]) -> Vec<u8> {
    values.iter().flat_map(|v| v.to_le_bytes()).collect()
}

pub fn from_bytes(bytes: &[u8]) -> Vec<f32> {
    bytes.chunks_exact(4).map(|c| f32::from_le_bytes([c[0], c[1], c[2], c[3]])).collect()
}

pub fn jacobi(api: Api, segments: u32) -> (Trace, BlobStore) {
    let mut blobs = BlobStore::default();
    let source = blobs.insert(SCALE_SOURCE.as_bytes().to_vec());
    let bytes = (ELEMENTS * 4) as u64;
    let buffer = Memory { kind: MemKind::Buffer, size: bytes, address: 0, flags: 0, device: None };
    let mut trace = Trace {
        header: Some(Header {
            api,
            producer: "replayer test".into(),
            command_line: vec!["./jacobi".into()],
            process_id: 1,
            started_unix_s: 0,
        }),
        devices: vec![Device { name: "recording device".into(), vendor: "test".into(), driver_version: "1".into(), properties: Default::default() }],
        memories: vec![buffer.clone(), buffer],
        programs: vec![Program { images: vec![ProgramImage { kind: ImageKind::OpenClSource, blob: source }], build_options: String::new() }],
        kernels: vec![Kernel {
            program: ProgramId(0),
            name: "scale".into(),
            params: vec![
                Param { offset: 0, size: 8, kind: ParamKind::Memory },
                Param { offset: 0, size: 8, kind: ParamKind::Memory },
                Param { offset: 0, size: 4, kind: ParamKind::Value },
            ],
        }],
        queues: vec![Queue { in_order: true, device: None, flags: 0, priority: 0, label: "queue 0".into() }],
        ..Trace::default()
    };
    let mut contents = [start_values(), vec![0.0; ELEMENTS]];
    for segment in 0..segments {
        let (from, to) = if segment % 2 == 0 { (0, 1) } else { (1, 0) };
        let initial: Vec<MemState> = [from, to]
            .iter()
            .map(|&m| MemState { mem: MemId(m as u32), blob: blobs.insert(to_bytes(&contents[m])) })
            .collect();
        contents[to] = contents[from].iter().map(|v| v * factor(segment)).collect();
        let result = blobs.insert(to_bytes(&contents[to]));
        let node = |command| Node { queue: Some(QueueId(0)), segment: SegmentId(segment), command, call: "test".into() };
        let first = trace.nodes.len() as u32;
        trace.nodes.push(node(Command::Kernel(KernelLaunch {
            kernel: KernelId(0),
            args: vec![
                Arg::Memory { mem: MemId(from as u32), offset: 0 },
                Arg::Memory { mem: MemId(to as u32), offset: 0 },
                Arg::Value(factor(segment).to_le_bytes().to_vec()),
            ],
            launch: Launch::NdRange { dims: 1, offset: [0; 3], global: [ELEMENTS as u64, 1, 1], local: None },
        })));
        trace.nodes.push(node(Command::Copy(Copy {
            src: Place::Memory { mem: MemId(to as u32), offset: 0 },
            dst: Place::Host { data: Some(result) },
            extent: Extent::Linear { bytes },
        })));
        trace.edges.push(Edge { from: NodeId(first), to: NodeId(first + 1), kind: EdgeKind::InOrder });
        trace.segments.push(Segment {
            ordinal: segment as u64,
            ended_by: "clFinish".into(),
            initial,
            expected: vec![MemState { mem: MemId(to as u32), blob: result }],
            failed_with: None,
            printed: None,
            racy_reads: Vec::new(),
            host_writes: Vec::new(),
        });
    }
    (trace, blobs)
}
