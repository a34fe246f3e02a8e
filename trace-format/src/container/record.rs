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
