//! The trace data model: what a recording holds, independent of the API it came from.
//!
//! Ids are dense indices into the `Trace` vectors that hold the entities, so a reader can
//! check that every reference resolves with a bounds check.

use serde::{Deserialize, Serialize};
use std::borrow::Cow;
use std::collections::BTreeMap;

macro_rules! id_type {
    ($($(#[$doc:meta])* $name:ident),* $(,)?) => {$(
        $(#[$doc])*
        #[derive(Clone, Copy, Debug, PartialEq, Eq, PartialOrd, Ord, Hash, Serialize, Deserialize)]
        pub struct $name(pub u32);
        impl $name {
            pub fn index(self) -> usize { self.0 as usize }
        }
        impl std::fmt::Display for $name {
            fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result { write!(f, "{}", self.0) }
        }
    )*};
}

id_type!(
    /// A device of `Trace::devices`.
    DeviceId,
    /// A memory object of `Trace::memories`.
    MemId,
    /// A program of `Trace::programs`.
    ProgramId,
    /// A kernel of `Trace::kernels`.
    KernelId,
    /// A queue (stream, command list) of `Trace::queues`.
    QueueId,
    /// A node of `Trace::nodes`, or of a sub-graph's `nodes`.
    NodeId,
    /// A segment of `Trace::segments`.
    SegmentId,
    /// A texture, surface or sampler of `Trace::textures`.
    TextureId,
);

/// A blob's name, from its contents: the xxh3-128 of its bytes (`of`), or of its compressed
/// pieces' hashes where a writer compressed it in pieces (`of_compressed_pieces`); blobs are
/// deduplicated by it.
#[derive(Clone, Copy, Debug, PartialEq, Eq, PartialOrd, Ord, Hash, Serialize, Deserialize)]
pub struct BlobId(pub u128);

impl BlobId {
    pub fn of(bytes: &[u8]) -> BlobId {
        BlobId(xxhash_rust::xxh3::xxh3_128(bytes))
    }

    /// The id of `raw_len` bytes compressed in pieces whose stored forms hash (xxh3-128) to
    /// `piece_hashes`, in order: seeded, so that it never equals the id `of` gives raw bytes that
    /// happen to spell the same hashes.
    pub fn of_compressed_pieces(raw_len: usize, piece_hashes: impl Iterator<Item = u128>) -> BlobId {
        const SEED: u64 = 0x5eed_0fc0_ffee;
        let joined: Vec<u8> = (raw_len as u64).to_le_bytes().into_iter().chain(piece_hashes.flat_map(u128::to_le_bytes)).collect();
        BlobId(xxhash_rust::xxh3::xxh3_128_with_seed(&joined, SEED))
    }
}

impl std::fmt::Display for BlobId {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        write!(f, "{:032x}", self.0)
    }
}

#[derive(Clone, Copy, Debug, PartialEq, Eq, Hash, Serialize, Deserialize)]
pub enum Api {
    OpenCl,
    Cuda,
    LevelZero,
}

impl std::fmt::Display for Api {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.write_str(match self {
            Api::OpenCl => "OpenCL",
            Api::Cuda => "CUDA",
            Api::LevelZero => "Level Zero",
        })
    }
}

/// What the recording process was, written first in every trace.
#[derive(Clone, Debug, PartialEq, Serialize, Deserialize)]
pub struct Header {
    pub api: Api,
    /// Name and version of the program that wrote the trace (the shim).
    pub producer: String,
    /// The recorded program's command line.
    pub command_line: Vec<String>,
    pub process_id: u32,
    /// Seconds since the Unix epoch when recording started.
    pub started_unix_s: u64,
}

#[derive(Clone, Debug, PartialEq, Serialize, Deserialize)]
pub struct Device {
    pub name: String,
    pub vendor: String,
    pub driver_version: String,
    /// API-specific facts a backend may need (platform name, extension revisions,
    /// compute capability, ...), as the API reported them.
    pub properties: BTreeMap<String, String>,
}

#[derive(Clone, Debug, PartialEq, Eq, Serialize, Deserialize)]
pub enum MemKind {
    /// A device buffer (`cl_mem` buffer, `cuMemAlloc`, `zeMemAllocDevice`).
    Buffer,
    /// A window into another memory object (`clCreateSubBuffer`), at `offset` of `parent`.
    SubBuffer { parent: MemId, offset: u64 },
    /// Shared virtual memory / unified shared memory visible to host and device.
    Shared,
    /// Host memory the device can reach (pinned, registered).
    Host,
    /// A managed (migratable) allocation.
    Managed,
    /// A pitched 2D allocation; `size` is `pitch * height`.
    Pitched { pitch: u64, width: u64, height: u64 },
    /// Allocated and freed by the recorded work itself (stream-ordered allocation).
    StreamOrdered,
    /// A variable of a program (`__device__` global): replay finds it by name in `program`.
    Global { program: ProgramId, name: String },
    /// An image (CUDA array, OpenCL image): texels in an opaque layout the device chooses, so
    /// the trace keeps its contents packed (see `ImageLayout`) and copies name texels by their
    /// packed byte positions.
    Image(ImageLayout),
    /// Unified shared memory of an API that has it beside its buffer objects (OpenCL's
    /// `cl_intel_unified_shared_memory`, which SYCL runs on): addressed by pointer, as SVM is.
    Unified(UnifiedKind),
}

/// Where unified shared memory lives and who may touch it.
#[derive(Clone, Copy, Debug, PartialEq, Eq, Serialize, Deserialize)]
pub enum UnifiedKind {
    /// Host memory the device reaches (`clHostMemAllocINTEL`).
    Host,
    /// Device memory the host cannot touch (`clDeviceMemAllocINTEL`).
    Device,
    /// Memory that migrates between host and device (`clSharedMemAllocINTEL`).
    Shared,
}

/// An image's texels packed: rows of `width` texels of `texel_bytes` bytes, `height` rows to a
/// slice, `depth` slices (the layers of an array image count as slices).
#[derive(Clone, Debug, PartialEq, Eq, Serialize, Deserialize)]
pub struct ImageLayout {
    pub width: u64,
    pub height: u64,
    pub depth: u64,
    pub texel_bytes: u32,
    /// The API's description of the image (format, channels, dimensions, flags), as the API
    /// defines it: what replay creates the image from.
    pub format: Vec<u64>,
}

impl ImageLayout {
    pub fn row_bytes(&self) -> u64 {
        self.width.saturating_mul(u64::from(self.texel_bytes))
    }

    pub fn slice_bytes(&self) -> u64 {
        self.row_bytes().saturating_mul(self.height)
    }

    pub fn bytes(&self) -> u64 {
        self.slice_bytes().saturating_mul(self.depth)
    }

    /// Packed byte position `at` as (x in bytes, row, slice).
    pub fn position(&self, at: u64) -> [u64; 3] {
        let (row, slice) = (self.row_bytes().max(1), self.slice_bytes().max(1));
        [at % slice % row, at % slice / row, at / slice]
    }
}

#[derive(Clone, Debug, PartialEq, Serialize, Deserialize)]
pub struct Memory {
    pub kind: MemKind,
    pub size: u64,
    /// The address (or handle) the program saw at record time; kernel arguments and
    /// copies are stored relative to the object, this is kept for `--exact-addresses`.
    pub address: u64,
    /// The API's creation flags, as the API defines them.
    pub flags: u64,
    pub device: Option<DeviceId>,
}

#[derive(Clone, Copy, Debug, PartialEq, Eq, Serialize, Deserialize)]
pub enum ImageKind {
    Ptx,
    Cubin,
    Fatbin,
    OpenClSource,
    /// A device-specific binary (`clCreateProgramWithBinary`, native Level Zero module).
    DeviceBinary,
    SpirV,
}

#[derive(Clone, Debug, PartialEq, Serialize, Deserialize)]
pub struct ProgramImage {
    pub kind: ImageKind,
    pub blob: BlobId,
}

#[derive(Clone, Debug, PartialEq, Serialize, Deserialize)]
pub struct Program {
    /// Every form of the program the recording saw, best first: a backend rebuilds from
    /// the first image it can load (source before a binary for another driver).
    pub images: Vec<ProgramImage>,
    pub build_options: String,
}

#[derive(Clone, Copy, Debug, PartialEq, Eq, Serialize, Deserialize)]
pub enum ParamKind {
    /// Plain bytes.
    Value,
    /// A memory object or device pointer.
    Memory,
    /// Local (shared) memory sized at launch.
    Local,
    /// An opaque handle such as an OpenCL sampler.
    Handle,
}

#[derive(Clone, Debug, PartialEq, Serialize, Deserialize)]
pub struct Param {
    /// Byte offset in the API's packed parameter buffer (CUDA); 0 where arguments are set one by one.
    pub offset: u32,
    pub size: u32,
    pub kind: ParamKind,
}

/// A program the recording linked from separately compiled ones (OpenCL `clCompileProgram` and
/// `clLinkProgram`): each unit is compiled with its own options and headers, then all are linked
/// with the program's `build_options`.
#[derive(Clone, Debug, PartialEq, Serialize, Deserialize)]
pub struct ProgramLink {
    pub program: ProgramId,
    pub units: Vec<CompiledUnit>,
}

/// One compilation a link takes in.
#[derive(Clone, Debug, PartialEq, Serialize, Deserialize)]
pub struct CompiledUnit {
    /// Its forms, best first, as `Program::images`.
    pub images: Vec<ProgramImage>,
    pub options: String,
    /// The headers it was compiled with, by the name its source includes them by.
    pub headers: Vec<ProgramHeader>,
}

#[derive(Clone, Debug, PartialEq, Serialize, Deserialize)]
pub struct ProgramHeader {
    pub name: String,
    pub blob: BlobId,
}

/// The source-level type of each parameter of `kernel`, as its API spells it ("float*",
/// "const __half*", "int"); empty where it does not know one.
#[derive(Clone, Debug, PartialEq, Serialize, Deserialize)]
pub struct ParamTypes {
    pub kernel: KernelId,
    pub types: Vec<String>,
}

/// An attribute the program set on a kernel's function (CUDA's `CU_FUNC_ATTRIBUTE_*`, by the
/// API's number): a cluster size it allows, the dynamic shared memory it may take. The replay
/// sets each before the kernel's first launch; one set again keeps its last value.
#[derive(Clone, Debug, PartialEq, Serialize, Deserialize)]
pub struct KernelAttribute {
    pub kernel: KernelId,
    pub attribute: u32,
    pub value: i64,
}

#[derive(Clone, Debug, PartialEq, Serialize, Deserialize)]
pub struct Kernel {
    pub program: ProgramId,
    pub name: String,
    pub params: Vec<Param>,
}

#[derive(Clone, Debug, PartialEq, Serialize, Deserialize)]
pub struct Queue {
    pub in_order: bool,
    pub device: Option<DeviceId>,
    /// API flags as given at creation (stream flags, queue properties).
    pub flags: u64,
    pub priority: i32,
    /// The API's own name for it, for people ("stream 0x7f..", "legacy default stream").
    pub label: String,
}

/// One kernel argument as replay must bind it.
#[derive(Clone, Debug, PartialEq, Serialize, Deserialize)]
pub enum Arg {
    /// Bytes passed by value.
    Value(Vec<u8>),
    /// A memory object, or a pointer `offset` bytes into one; replay relocates it.
    Memory { mem: MemId, offset: u64 },
    /// A null memory argument.
    NullMemory,
    /// Local memory of this many bytes.
    Local(u64),
    /// Bytes passed by value that hold device addresses (a structure of pointers): replay
    /// writes each one's relocated address over its eight bytes.
    ValueWithPointers { bytes: Vec<u8>, pointers: Vec<EmbeddedPointer> },
    /// The handle of condition `n` of the graph the launch is in (see `Conditional`), which
    /// the kernel sets: replay passes the handle its own conditional got.
    Condition(u32),
    /// A texture, surface or sampler object: replay passes the handle of the one it made.
    Texture(TextureId),
}

/// What a kernel does through a texture object.
#[derive(Clone, Copy, Debug, PartialEq, Eq, Serialize, Deserialize)]
pub enum TextureKind {
    /// Reads (and filters) its resource.
    Sampled,
    /// Reads and writes its resource (a CUDA surface).
    Surface,
    /// Only says how to address and filter (an OpenCL sampler): no resource.
    Sampler,
}

/// Memory a texture or surface reads or writes, `offset` bytes into `mem`.
#[derive(Clone, Copy, Debug, PartialEq, Eq, Serialize, Deserialize)]
pub struct TextureResource {
    pub mem: MemId,
    pub offset: u64,
}

/// A texture, surface or sampler object a kernel takes.
#[derive(Clone, Debug, PartialEq, Serialize, Deserialize)]
pub struct Texture {
    pub kind: TextureKind,
    pub resource: Option<TextureResource>,
    /// The API's description of the object (resource shape, addressing, filtering, view), as
    /// the API defines it, with addresses of memory left out: `resource` names that memory.
    pub description: Vec<u8>,
}

/// A device address at byte `at` of a by-value argument: `offset` bytes into `mem`.
#[derive(Clone, Copy, Debug, PartialEq, Eq, Serialize, Deserialize)]
pub struct EmbeddedPointer {
    pub at: u32,
    pub mem: MemId,
    pub offset: u64,
}

#[derive(Clone, Debug, PartialEq, Serialize, Deserialize)]
pub enum Launch {
    /// OpenCL / Level Zero style: work-items.
    NdRange {
        dims: u32,
        offset: [u64; 3],
        global: [u64; 3],
        local: Option<[u64; 3]>,
    },
    /// CUDA style: blocks of threads.
    Grid {
        grid: [u32; 3],
        block: [u32; 3],
        shared_bytes: u32,
        cluster: Option<[u32; 3]>,
        cooperative: bool,
    },
}

#[derive(Clone, Debug, PartialEq, Serialize, Deserialize)]
pub struct KernelLaunch {
    pub kernel: KernelId,
    pub args: Vec<Arg>,
    pub launch: Launch,
}

/// One side of a copy.
#[derive(Clone, Debug, PartialEq, Serialize, Deserialize)]
pub enum Place {
    Memory { mem: MemId, offset: u64 },
    /// Host memory. For a source (write), `data` is what the program passed; for a
    /// destination (read), `data` is what the program received, kept for comparison.
    Host { data: Option<BlobId> },
}

#[derive(Clone, Debug, PartialEq, Serialize, Deserialize)]
pub enum Extent {
    Linear { bytes: u64 },
    /// Rectangular 2D/3D region; `region[0]` is in bytes; origins are in bytes/rows/slices.
    Rect {
        src_origin: [u64; 3],
        dst_origin: [u64; 3],
        region: [u64; 3],
        src_row_pitch: u64,
        src_slice_pitch: u64,
        dst_row_pitch: u64,
        dst_slice_pitch: u64,
    },
}

impl Extent {
    /// The rows the extent moves on one side (`source` or destination): each row's byte offset
    /// from that side's place, and its length.
    pub fn rows(&self, source: bool) -> Vec<(u64, u64)> {
        match *self {
            Extent::Linear { bytes } => vec![(0, bytes)],
            Extent::Rect { src_origin, dst_origin, region, src_row_pitch, src_slice_pitch, dst_row_pitch, dst_slice_pitch } => {
                let (origin, row, slice) = match source {
                    true => (src_origin, src_row_pitch, src_slice_pitch),
                    false => (dst_origin, dst_row_pitch, dst_slice_pitch),
                };
                let mut rows = Vec::new();
                for z in 0..region[2] {
                    for y in 0..region[1] {
                        let start = (origin[2] + z).saturating_mul(slice).saturating_add((origin[1] + y).saturating_mul(row));
                        rows.push((start.saturating_add(origin[0]), region[0]));
                    }
                }
                rows
            }
        }
    }
}

#[derive(Clone, Debug, PartialEq, Serialize, Deserialize)]
pub struct Copy {
    pub src: Place,
    pub dst: Place,
    pub extent: Extent,
}

#[derive(Clone, Debug, PartialEq, Serialize, Deserialize)]
pub struct Fill {
    pub mem: MemId,
    pub offset: u64,
    pub bytes: u64,
    /// Repeated to cover `bytes` (1, 2 or 4 bytes for CUDA memsets; up to 128 for OpenCL).
    pub pattern: Vec<u8>,
    /// For 2D memsets: (pitch, width in elements, height); `None` for linear fills.
    pub rows: Option<[u64; 3]>,
}

#[derive(Clone, Copy, Debug, PartialEq, Eq, Serialize, Deserialize)]
pub enum HostTaskKind {
    /// `clCreateUserEvent` + `clSetUserEventStatus`.
    UserEvent,
    /// An event callback (`clSetEventCallback`, `cuStreamAddCallback`).
    Callback,
    /// `cuLaunchHostFunc`.
    HostFunction,
}

#[derive(Clone, Debug, PartialEq, Serialize, Deserialize)]
pub struct Graph {
    pub nodes: Vec<Node>,
    pub edges: Vec<Edge>,
}

/// How a conditional picks what runs.
#[derive(Clone, Copy, Debug, PartialEq, Eq, Serialize, Deserialize)]
pub enum ConditionalKind {
    /// The first body when the condition is non-zero, else the second, if there is one.
    If,
    /// The first body, again and again while the condition is non-zero.
    While,
    /// The body the condition's value numbers; none when the value is past the last.
    Switch,
}

/// Work a graph runs depending on a condition that kernels of the same graph set while it
/// runs (a CUDA conditional node).
#[derive(Clone, Debug, PartialEq, Serialize, Deserialize)]
pub struct Conditional {
    pub kind: ConditionalKind,
    /// Names the condition within the graph: the kernels that set it take it as
    /// `Arg::Condition`.
    pub condition: u32,
    /// The value the condition is given whenever the graph starts to run; `None` when it is
    /// not reset then.
    pub default: Option<u32>,
    pub bodies: Vec<Graph>,
}

#[derive(Clone, Debug, PartialEq, Serialize, Deserialize)]
pub enum Command {
    Kernel(KernelLaunch),
    Copy(Copy),
    Fill(Fill),
    /// Orders without doing work (barrier, marker, empty node, event join).
    Barrier,
    /// Host code ran in the graph: a partition boundary at replay.
    HostTask(HostTaskKind),
    MemAlloc { mem: MemId },
    MemFree { mem: MemId },
    /// A command buffer / graph the program built itself and submitted whole.
    Subgraph(Graph),
    /// Work run depending on a condition set while the graph runs (graph nodes only).
    Conditional(Conditional),
    /// Records the event numbered `event` in the trace: from here on it stands for the work this
    /// command follows (an event record node of a graph).
    EventRecord { event: u32 },
    /// Waits for the work the event numbered `event` stands for when this command runs (an
    /// event wait node of a graph).
    EventWait { event: u32 },
}

impl Command {
    /// Calls `f` with each place in memory the command reads or writes (the memory and the
    /// offset into it), inside sub-graphs and conditional bodies too. Allocations and frees are
    /// no uses.
    pub fn for_each_memory_use(&mut self, f: &mut dyn FnMut(&mut MemId, &mut u64)) {
        match self {
            Command::Kernel(launch) => {
                for arg in &mut launch.args {
                    match arg {
                        Arg::Memory { mem, offset } => f(mem, offset),
                        Arg::ValueWithPointers { pointers, .. } => pointers.iter_mut().for_each(|pointer| f(&mut pointer.mem, &mut pointer.offset)),
                        Arg::Value(_) | Arg::NullMemory | Arg::Local(_) | Arg::Condition(_) | Arg::Texture(_) => {}
                    }
                }
            }
            Command::Copy(copy) => {
                for place in [&mut copy.src, &mut copy.dst] {
                    if let Place::Memory { mem, offset } = place {
                        f(mem, offset);
                    }
                }
            }
            Command::Fill(fill) => f(&mut fill.mem, &mut fill.offset),
            Command::Subgraph(graph) => graph.nodes.iter_mut().for_each(|node| node.command.for_each_memory_use(f)),
            Command::Conditional(conditional) => {
                conditional.bodies.iter_mut().flat_map(|body| &mut body.nodes).for_each(|node| node.command.for_each_memory_use(f))
            }
            Command::Barrier
            | Command::HostTask(_)
            | Command::MemAlloc { .. }
            | Command::MemFree { .. }
            | Command::EventRecord { .. }
            | Command::EventWait { .. } => {}
        }
    }

    /// Calls `f` with the command, or with each command inside it for a sub-graph or a
    /// conditional (at any depth): what runs, not what holds it.
    pub fn for_each_leaf(&self, f: &mut dyn FnMut(&Command)) {
        match self {
            Command::Subgraph(graph) => graph.nodes.iter().for_each(|node| node.command.for_each_leaf(f)),
            Command::Conditional(conditional) => {
                conditional.bodies.iter().flat_map(|body| &body.nodes).for_each(|node| node.command.for_each_leaf(f))
            }
            leaf => f(leaf),
        }
    }

    /// Calls `f` with each blob id the command refers to (the host data of copies), inside
    /// sub-graphs too.
    pub fn for_each_blob_mut(&mut self, f: &mut dyn FnMut(&mut BlobId)) {
        match self {
            Command::Copy(copy) => {
                for place in [&mut copy.src, &mut copy.dst] {
                    if let Place::Host { data: Some(blob) } = place {
                        f(blob);
                    }
                }
            }
            Command::Subgraph(graph) => graph.nodes.iter_mut().for_each(|node| node.command.for_each_blob_mut(f)),
            Command::Conditional(conditional) => {
                conditional.bodies.iter_mut().flat_map(|body| &mut body.nodes).for_each(|node| node.command.for_each_blob_mut(f))
            }
            Command::Kernel(_)
            | Command::Fill(_)
            | Command::Barrier
            | Command::HostTask(_)
            | Command::MemAlloc { .. }
            | Command::MemFree { .. }
            | Command::EventRecord { .. }
            | Command::EventWait { .. } => {}
        }
    }

    pub fn kind_name(&self) -> &'static str {
        match self {
            Command::Kernel(_) => "kernel",
            Command::Copy(_) => "copy",
            Command::Fill(_) => "fill",
            Command::Barrier => "barrier",
            Command::HostTask(_) => "host_task",
            Command::MemAlloc { .. } => "mem_alloc",
            Command::MemFree { .. } => "mem_free",
            Command::Subgraph(_) => "subgraph",
            Command::Conditional(_) => "conditional",
            Command::EventRecord { .. } => "event_record",
            Command::EventWait { .. } => "event_wait",
        }
    }
}

#[derive(Clone, Debug, PartialEq, Serialize, Deserialize)]
pub struct Node {
    pub queue: Option<QueueId>,
    pub segment: SegmentId,
    pub command: Command,
    /// The API call that made it, for people (`clEnqueueNDRangeKernel`). Borrowed where a
    /// recorder names it (no allocation per command); written as a string either way.
    pub call: Cow<'static, str>,
}

#[derive(Clone, Copy, Debug, PartialEq, Eq, Hash, Serialize, Deserialize)]
pub enum EdgeKind {
    /// The previous command of an in-order queue.
    InOrder,
    /// An event wait (wait lists, `cuStreamWaitEvent`).
    Event,
    /// An out-of-order barrier waiting for earlier commands of its queue.
    Barrier,
    /// The legacy default stream synchronizing with blocking streams.
    DefaultStream,
    /// No synchronization orders the two, but the program's timing did: an earlier command of
    /// another queue wrote memory this one uses, or used memory this one writes, and the program
    /// relied on it having finished (a synchronous copy, say, before work on a stream that does
    /// not wait for the copy's). The replay keeps the order the program observed.
    Memory,
}

#[derive(Clone, Copy, Debug, PartialEq, Eq, Hash, Serialize, Deserialize)]
pub struct Edge {
    pub from: NodeId,
    pub to: NodeId,
    pub kind: EdgeKind,
}

/// Contents of one memory object at a point in time.
#[derive(Clone, Debug, PartialEq, Serialize, Deserialize)]
pub struct MemState {
    pub mem: MemId,
    pub blob: BlobId,
}

/// Bytes the host wrote directly into memory the device uses (pinned or managed memory), seen
/// by the recorder after the memory's previous state and before or while the segment ran.
#[derive(Clone, Debug, PartialEq, Serialize, Deserialize)]
pub struct HostWrite {
    pub mem: MemId,
    pub offset: u64,
    pub blob: BlobId,
    /// Written while commands of the segment that write the same memory ran: what the memory
    /// holds after the segment is a race between the host and the device there.
    pub while_running: bool,
}

/// A recorded window between host synchronizations.
#[derive(Clone, Debug, PartialEq, Serialize, Deserialize)]
pub struct Segment {
    /// Ordinal of the window in the program's run (segments not captured are skipped).
    pub ordinal: u64,
    /// What ended it (`clFinish`, `cuStreamSynchronize`, end of program); empty while the
    /// window was still open when the recording stopped.
    pub ended_by: String,
    /// Contents of each memory object just before its first use in this window.
    pub initial: Vec<MemState>,
    /// Contents of each memory object the window wrote, after it ended.
    pub expected: Vec<MemState>,
    /// The error the synchronization that ended it returned (a device-side assert, say): the
    /// program's outcome, which a replay reproduces.
    pub failed_with: Option<String>,
    /// What kernels printed to the program's standard output in it (CUDA's device `printf`):
    /// output the program received, compared at replay.
    pub printed: Option<BlobId>,
    /// Copies of it whose data is one outcome of a race (see `Record::RacyRead`).
    pub racy_reads: Vec<NodeId>,
    /// What the host wrote into memory it uses, in the order written: a replay writes it after
    /// the initial states, before the segment's commands (see `Record::HostWrote`).
    pub host_writes: Vec<HostWrite>,
}

/// One segment with its graph, as a reader streams it (`TraceReader::segments`): its nodes,
/// numbered on from `first_node`, the edges written with it, and its states.
#[derive(Clone, Debug, PartialEq)]
pub struct TraceSegment {
    pub id: SegmentId,
    pub segment: Segment,
    pub first_node: NodeId,
    pub nodes: Vec<Node>,
    /// The index of `edges[0]` among all the trace's edges.
    pub first_edge: usize,
    pub edges: Vec<Edge>,
}

impl TraceSegment {
    /// The segment's node `id`, if it is one of the segment's.
    pub fn node(&self, id: NodeId) -> Option<&Node> {
        self.nodes.get(id.0.checked_sub(self.first_node.0)? as usize)
    }

    /// Whether `id` is one of the segment's nodes.
    pub fn holds(&self, id: NodeId) -> bool {
        self.node(id).is_some()
    }

    /// The segment's nodes with their ids.
    pub fn nodes_with_ids(&self) -> impl Iterator<Item = (NodeId, &Node)> {
        self.nodes.iter().enumerate().map(|(index, node)| (NodeId(self.first_node.0 + index as u32), node))
    }
}

/// A change that turns a family's base graph into one of its segments, or a user override.
#[derive(Clone, Debug, PartialEq, Serialize, Deserialize)]
pub enum Patch {
    Arg { node: NodeId, index: u32, value: Arg },
    Launch { node: NodeId, launch: Launch },
}

/// Why a recording is incomplete; the trace is still usable up to what it holds.
#[derive(Clone, Debug, PartialEq, Serialize, Deserialize)]
pub struct PartialReason {
    pub call: String,
    pub reason: String,
}

/// A whole trace in memory. Blob contents live in `BlobStore` (see the container).
#[derive(Clone, Debug, Default, PartialEq)]
pub struct Trace {
    pub header: Option<Header>,
    pub devices: Vec<Device>,
    pub memories: Vec<Memory>,
    pub programs: Vec<Program>,
    pub kernels: Vec<Kernel>,
    pub queues: Vec<Queue>,
    pub nodes: Vec<Node>,
    pub edges: Vec<Edge>,
    pub segments: Vec<Segment>,
    pub partial: Vec<PartialReason>,
    /// Parameter types of the kernels whose API says them (`Record::ParamTypes`).
    pub param_types: Vec<ParamTypes>,
    pub textures: Vec<Texture>,
    /// How linked programs were put together (`Record::ProgramLink`).
    pub program_links: Vec<ProgramLink>,
    /// Attributes the program set on kernels (`Record::KernelAttribute`), in the order it set them.
    pub kernel_attributes: Vec<KernelAttribute>,
}
