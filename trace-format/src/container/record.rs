use crate::model::*;
use serde::{Deserialize, Serialize};

/// One metadata record. Ids are implicit: the n-th record of a kind gets id n
/// (the n-th `Memory` is `MemId(n)`, the n-th `SegmentBegin` is `SegmentId(n)`).
#[derive(Clone, Debug, PartialEq, Serialize, Deserialize)]
pub enum Record {
    Header(Header),
    Device(Device),
    Memory(Memory),
    Program(Program),
    Kernel(Kernel),
    Queue(Queue),
    SegmentBegin { ordinal: u64 },
    Node(Node),
    Edge(Edge),
    /// Contents of a memory object just before its first use in a segment.
    InitialState { segment: SegmentId, state: MemState },
    /// The host synchronization that ended a segment, and the contents it left.
    SegmentEnd { segment: SegmentId, ended_by: String, expected: Vec<MemState> },
    Partial(PartialReason),
    /// Contents of a memory object read after `segment` ended (at the end of the capture):
    /// what replaying up to and including that segment must leave there.
    Expected { segment: SegmentId, state: MemState },
    /// The source-level types of a kernel's parameters, where the API says them.
    ParamTypes(ParamTypes),
    /// A texture, surface or sampler object (`TextureId` n is the n-th).
    Texture(Texture),
    /// The synchronization that ended `segment` failed with `error`.
    SegmentFailed { segment: SegmentId, error: String },
    /// What kernels printed to the program's standard output while `segment` ran, up to the
    /// synchronization that ended it (blob `text`).
    DevicePrinted { segment: SegmentId, text: BlobId },
    /// Copy `node` of `segment` read memory that commands the program submitted earlier and left
    /// unordered with it still wrote (they belong to later segments): the data it delivered is
    /// one outcome of that race.
    RacyRead { segment: SegmentId, node: NodeId },
    /// The host wrote `write` directly (a store into pinned or managed memory, no API call) after
    /// the memory's previous state in the trace, before or while `segment` ran: what the
    /// segment's commands may have seen there (a flag that releases a waiting kernel, say).
    HostWrote { segment: SegmentId, write: HostWrite },
    /// Program `link.program` was linked from the compilations `link.units`.
    ProgramLink(ProgramLink),
    /// The program set an attribute of a kernel.
    KernelAttribute(KernelAttribute),
}

impl CompiledUnit {
    fn for_each_blob_mut(&mut self, f: &mut dyn FnMut(&mut BlobId)) {
        self.images.iter_mut().for_each(|image| f(&mut image.blob));
        self.headers.iter_mut().for_each(|header| f(&mut header.blob));
    }
}

impl Record {
    /// Calls `f` with each blob id the record refers to (program images, memory states, the
    /// host data of copies, inside sub-graphs too).
    pub fn for_each_blob_mut(&mut self, f: &mut dyn FnMut(&mut BlobId)) {
        match self {
            Record::Program(program) => program.images.iter_mut().for_each(|image| f(&mut image.blob)),
            Record::InitialState { state, .. } | Record::Expected { state, .. } => f(&mut state.blob),
            Record::SegmentEnd { expected, .. } => expected.iter_mut().for_each(|state| f(&mut state.blob)),
            Record::Node(node) => node.command.for_each_blob_mut(f),
            Record::DevicePrinted { text, .. } => f(text),
            Record::HostWrote { write, .. } => f(&mut write.blob),
            Record::ProgramLink(link) => link.units.iter_mut().for_each(|unit| unit.for_each_blob_mut(f)),
            Record::Header(_)
            | Record::Device(_)
            | Record::Memory(_)
            | Record::Kernel(_)
            | Record::Queue(_)
            | Record::SegmentBegin { .. }
            | Record::SegmentFailed { .. }
            | Record::RacyRead { .. }
            | Record::Edge(_)
            | Record::Partial(_)
            | Record::ParamTypes(_)
            | Record::Texture(_)
            | Record::KernelAttribute(_) => {}
        }
    }
}

/// What a record is to a reader that streams segments.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub(super) enum RecordKind {
    /// Header, devices, memories, programs, kernels, queues, partial reasons: kept when a trace is opened.
    Object,
    SegmentBegin,
    Node,
    Edge,
    /// Initial states, the end of a segment, expected states.
    OfSegment,
}

/// The kind of the record `payload` holds, from its first byte alone: postcard writes an enum's
/// variant index first, as a varint, which is one byte below 128. `None` for no known variant.
pub(super) fn record_kind(payload: &[u8]) -> Option<RecordKind> {
    Some(match payload.first()? {
        0..=5 | 11 | 13 | 14 | 19 | 20 => RecordKind::Object,
        6 => RecordKind::SegmentBegin,
        7 => RecordKind::Node,
        8 => RecordKind::Edge,
        9 | 10 | 12 | 15 | 16 | 17 | 18 => RecordKind::OfSegment,
        _ => return None,
    })
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn the_kind_of_every_record_is_its_first_byte() {
        let state = MemState { mem: MemId(0), blob: BlobId(1) };
        let node = Node { queue: None, segment: SegmentId(0), command: Command::Barrier, call: "".into() };
        let kernel = Kernel { program: ProgramId(0), name: String::new(), params: Vec::new() };
        let queue = Queue { in_order: true, device: None, flags: 0, priority: 0, label: String::new() };
        let memory = Memory { kind: MemKind::Buffer, size: 1, address: 0, flags: 0, device: None };
        let header = Header { api: Api::OpenCl, producer: String::new(), command_line: Vec::new(), process_id: 0, started_unix_s: 0 };
        let device = Device { name: String::new(), vendor: String::new(), driver_version: String::new(), properties: Default::default() };
        let cases = [
            (Record::Header(header), RecordKind::Object),
            (Record::Device(device), RecordKind::Object),
            (Record::Memory(memory), RecordKind::Object),
            (Record::Program(Program { images: Vec::new(), build_options: String::new() }), RecordKind::Object),
            (Record::Kernel(kernel), RecordKind::Object),
            (Record::Queue(queue), RecordKind::Object),
            (Record::SegmentBegin { ordinal: 300 }, RecordKind::SegmentBegin),
            (Record::Node(node), RecordKind::Node),
            (Record::Edge(Edge { from: NodeId(0), to: NodeId(1), kind: EdgeKind::InOrder }), RecordKind::Edge),
            (Record::InitialState { segment: SegmentId(0), state: state.clone() }, RecordKind::OfSegment),
            (Record::SegmentEnd { segment: SegmentId(0), ended_by: String::new(), expected: Vec::new() }, RecordKind::OfSegment),
            (Record::Partial(PartialReason { call: String::new(), reason: String::new() }), RecordKind::Object),
            (Record::Expected { segment: SegmentId(0), state }, RecordKind::OfSegment),
            (Record::ParamTypes(ParamTypes { kernel: KernelId(0), types: vec!["float*".into()] }), RecordKind::Object),
            (Record::Texture(Texture { kind: TextureKind::Sampler, resource: None, description: vec![1] }), RecordKind::Object),
            (Record::SegmentFailed { segment: SegmentId(0), error: "CUDA_ERROR_ASSERT".into() }, RecordKind::OfSegment),
            (Record::DevicePrinted { segment: SegmentId(0), text: BlobId(2) }, RecordKind::OfSegment),
            (Record::RacyRead { segment: SegmentId(0), node: NodeId(3) }, RecordKind::OfSegment),
            (Record::HostWrote { segment: SegmentId(0), write: HostWrite { mem: MemId(0), offset: 4096, blob: BlobId(1), while_running: true } }, RecordKind::OfSegment),
            (Record::ProgramLink(ProgramLink { program: ProgramId(0), units: Vec::new() }), RecordKind::Object),
            (Record::KernelAttribute(KernelAttribute { kernel: KernelId(0), attribute: 16, value: 1 }), RecordKind::Object),
        ];
        for (record, kind) in cases {
            let payload = postcard::to_allocvec(&record).expect("encodes");
            assert_eq!(record_kind(&payload), Some(kind), "{record:?}");
        }
        assert_eq!(record_kind(&[21]), None);
        assert_eq!(record_kind(&[]), None);
    }
}
