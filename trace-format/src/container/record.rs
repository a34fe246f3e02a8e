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
            Record::Header(_)
            | Record::Device(_)
            | Record::Memory(_)
            | Record::Kernel(_)
            | Record::Queue(_)
            | Record::SegmentBegin { .. }
            | Record::Edge(_)
            | Record::Partial(_) => {}
        }
    }
}
