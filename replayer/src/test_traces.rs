//! Small traces for unit tests, built in code.

use crate::inline::Inliner;
use crate::segments::SegmentGraph;
use trace_format::{
    Api, Arg, BlobId, BlobStore, Command, Device, Edge, EdgeKind, Header, HostTaskKind, HostWrite, ImageKind, KernelId,
    KernelLaunch, Launch, MemId, MemKind, MemState, Memory, Node, NodeId, Param, ParamKind, Program, ProgramImage,
    Queue, QueueId, Segment, SegmentId, Trace, TraceReader,
};

pub struct TraceBuilder {
    pub trace: Trace,
    pub blobs: BlobStore,
}

impl TraceBuilder {
    /// An OpenCL trace with one device, one in-order queue and one program.
    pub fn new() -> Self {
        let mut blobs = BlobStore::default();
        let source = blobs.insert(b"kernel void k(global float* a) {}".to_vec());
        let trace = Trace {
            header: Some(Header {
                api: Api::OpenCl,
                producer: "unit test".to_string(),
                command_line: vec!["./app".to_string()],
                process_id: 1,
                started_unix_s: 0,
            }),
            devices: vec![Device {
                name: "test device".to_string(),
                vendor: "test".to_string(),
                driver_version: "1".to_string(),
                properties: Default::default(),
            }],
            programs: vec![Program {
                images: vec![ProgramImage { kind: ImageKind::OpenClSource, blob: source }],
                build_options: String::new(),
            }],
            queues: vec![Queue { in_order: true, device: None, flags: 0, priority: 0, label: "queue".to_string() }],
            ..Trace::default()
        };
        TraceBuilder { trace, blobs }
    }

    /// A kernel of program 0 whose parameters are memory (`None`) or values of the given size.
    pub fn kernel(&mut self, name: &str, params: &[Option<u32>]) -> KernelId {
        let params = params
            .iter()
            .map(|size| match size {
                Some(size) => Param { offset: 0, size: *size, kind: ParamKind::Value },
                None => Param { offset: 0, size: 8, kind: ParamKind::Memory },
            })
            .collect();
        self.trace.kernels.push(trace_format::Kernel { program: trace_format::ProgramId(0), name: name.to_string(), params });
        KernelId(self.trace.kernels.len() as u32 - 1)
    }

    pub fn memory(&mut self, size: u64) -> MemId {
        self.trace.memories.push(Memory { kind: MemKind::Buffer, size, address: 0, flags: 0, device: None });
        MemId(self.trace.memories.len() as u32 - 1)
    }

    pub fn segment(&mut self) -> SegmentId {
        let ordinal = self.trace.segments.len() as u64;
        self.trace.segments.push(Segment { ordinal, ended_by: "clFinish".to_string(), initial: vec![], expected: vec![], failed_with: None, printed: None, racy_reads: Vec::new(), host_writes: Vec::new() });
        SegmentId(ordinal as u32)
    }

    pub fn node(&mut self, segment: SegmentId, command: Command) -> NodeId {
        self.trace.nodes.push(Node { queue: Some(QueueId(0)), segment, command, call: "test".into() });
        NodeId(self.trace.nodes.len() as u32 - 1)
    }

    /// A one-dimensional launch of `global` work-items.
    pub fn launch(&mut self, segment: SegmentId, kernel: KernelId, args: Vec<Arg>, global: u64) -> NodeId {
        let launch = Launch::NdRange { dims: 1, offset: [0; 3], global: [global, 1, 1], local: None };
        self.node(segment, Command::Kernel(KernelLaunch { kernel, args, launch }))
    }

    pub fn host_task(&mut self, segment: SegmentId) -> NodeId {
        self.node(segment, Command::HostTask(HostTaskKind::Callback))
    }

    pub fn edge(&mut self, from: NodeId, to: NodeId) {
        self.trace.edges.push(Edge { from, to, kind: EdgeKind::Event });
    }

    pub fn initial(&mut self, segment: SegmentId, mem: MemId, bytes: Vec<u8>) -> BlobId {
        let blob = self.blobs.insert(bytes);
        self.trace.segments[segment.index()].initial.push(MemState { mem, blob });
        blob
    }

    /// Bytes the host wrote into `mem` at `offset` before `segment` ran, or while it ran.
    pub fn host_write(&mut self, segment: SegmentId, mem: MemId, offset: u64, bytes: Vec<u8>, while_running: bool) -> BlobId {
        let blob = self.blobs.insert(bytes);
        self.trace.segments[segment.index()].host_writes.push(HostWrite { mem, offset, blob, while_running });
        blob
    }

    /// The trace as the replayer streams it: written and opened again.
    pub fn reader(&self) -> TraceReader {
        TraceReader::from_trace(&self.trace, &self.blobs).expect("the test trace is in segment order")
    }

    /// Each segment's graph, with the program's graphs inlined, as replay plans them.
    pub fn graphs(&self) -> Vec<SegmentGraph> {
        let reader = self.reader();
        let mut inliner = Inliner::new(reader.node_count());
        reader.segments().map(|segment| inliner.graph(segment.expect("the test trace reads"))).collect()
    }

    pub fn expected(&mut self, segment: SegmentId, mem: MemId, bytes: Vec<u8>) -> BlobId {
        let blob = self.blobs.insert(bytes);
        self.trace.segments[segment.index()].expected.push(MemState { mem, blob });
        blob
    }
}

pub fn value(x: u32) -> Arg {
    Arg::Value(x.to_le_bytes().to_vec())
}

pub fn mem(mem: MemId) -> Arg {
    Arg::Memory { mem, offset: 0 }
}
