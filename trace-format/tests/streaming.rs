//! Reading a trace segment by segment: what each segment holds, which layouts are refused, and
//! that blobs are read only when asked for.

use trace_format::*;

fn header() -> Record {
    Record::Header(Header { api: Api::OpenCl, producer: "test".into(), command_line: vec![], process_id: 1, started_unix_s: 0 })
}

fn node(segment: u32) -> Record {
    Record::Node(Node { queue: None, segment: SegmentId(segment), command: Command::Barrier, call: "barrier".into() })
}

fn edge(from: u32, to: u32) -> Record {
    Record::Edge(Edge { from: NodeId(from), to: NodeId(to), kind: EdgeKind::InOrder })
}

fn state(mem: u32, blob: BlobId) -> MemState {
    MemState { mem: MemId(mem), blob }
}

/// The records written in order, with `blob` stored first.
fn written(records: &[Record], blob: &[u8]) -> Vec<u8> {
    let mut writer = TraceWriter::new(Vec::new()).unwrap();
    writer.blob(blob).unwrap();
    for record in records {
        writer.record(record).unwrap();
    }
    writer.finish().unwrap()
}

/// Two segments as the shim writes them: an object between them, and the first segment's
/// final contents after its end.
fn two_segments(blob: BlobId) -> Vec<Record> {
    let memory = Memory { kind: MemKind::Buffer, size: 4, address: 0, flags: 0, device: None };
    vec![
        header(),
        Record::Memory(memory.clone()),
        Record::SegmentBegin { ordinal: 3 },
        Record::InitialState { segment: SegmentId(0), state: state(0, blob) },
        node(0),
        node(0),
        edge(0, 1),
        Record::SegmentEnd { segment: SegmentId(0), ended_by: "clFinish".into(), expected: vec![] },
        Record::Expected { segment: SegmentId(0), state: state(0, blob) },
        Record::Memory(memory),
        Record::SegmentBegin { ordinal: 7 },
        node(1),
        Record::SegmentEnd { segment: SegmentId(1), ended_by: "clWaitForEvents".into(), expected: vec![state(1, blob)] },
    ]
}

#[test]
fn segments_come_one_at_a_time_with_their_nodes_edges_and_states() {
    let blob = BlobId::of(b"four");
    let reader = TraceReader::from_bytes(&written(&two_segments(blob), b"four")).unwrap();
    assert_eq!((reader.segment_count(), reader.node_count(), reader.edge_count()), (2, 3, 1));
    assert_eq!(reader.objects().memories.len(), 2, "objects anywhere are read when the trace opens");
    assert!(reader.objects().nodes.is_empty());
    assert_eq!((reader.segment_of(NodeId(1)), reader.segment_of(NodeId(2)), reader.segment_of(NodeId(3))), (Some(SegmentId(0)), Some(SegmentId(1)), None));
    for _pass in 0..2 {
        let segments: Vec<TraceSegment> = reader.segments().collect::<Result<_, _>>().unwrap();
        assert_eq!(segments.len(), 2);
        let (first, second) = (&segments[0], &segments[1]);
        assert_eq!((first.id, first.segment.ordinal, first.first_node, first.nodes.len()), (SegmentId(0), 3, NodeId(0), 2));
        assert_eq!((first.first_edge, first.edges.len()), (0, 1));
        assert_eq!(first.segment.initial, vec![state(0, blob)]);
        assert_eq!(first.segment.expected, vec![state(0, blob)], "expected states after the end belong to the segment");
        assert_eq!((second.first_node, second.node(NodeId(2)).is_some(), second.node(NodeId(1)).is_some()), (NodeId(2), true, false));
        assert_eq!((second.segment.ended_by.as_str(), second.first_edge), ("clWaitForEvents", 1));
    }
    let whole = reader.read_all().unwrap();
    assert_eq!(whole.trace.nodes.len(), 3);
    assert_eq!(whole.trace.segments[0].expected.len(), 1);
}

#[test]
fn records_of_a_segment_written_after_the_next_began_are_refused() {
    let blob = BlobId::of(b"four");
    let late_state = Record::InitialState { segment: SegmentId(0), state: state(0, blob) };
    let foreign_node = node(0);
    for (late, what) in [(late_state, "after the next segment began"), (foreign_node, "of segment 0 inside segment 1")] {
        let mut records = two_segments(blob);
        records.insert(11, late);
        let reader = TraceReader::from_bytes(&written(&records, b"four")).unwrap();
        let error = reader.segments().find_map(Result::err).expect("the late record is refused");
        assert!(matches!(&error, FormatError::Malformed { problem, .. } if problem.contains(what)), "{error}");
    }
    let mut records = two_segments(blob);
    records.insert(1, node(0));
    let error = TraceReader::from_bytes(&written(&records, b"four")).unwrap().segments().find_map(Result::err).expect("refused");
    assert!(error.to_string().contains("before any segment began"), "{error}");
}

#[test]
fn blobs_are_read_when_asked_for_not_when_the_trace_opens() {
    let blob = BlobId::of(b"four");
    let mut bytes = written(&two_segments(blob), b"four");
    // The blob is the first frame: its last stored byte is at 16 + 9 + 25 + 3.
    bytes[53] ^= 0xff;
    let reader = TraceReader::from_bytes(&bytes).unwrap();
    assert_eq!(reader.blobs().raw_len(blob), Some(4));
    assert_eq!(reader.segments().count(), 2);
    assert!(matches!(reader.blobs().get(blob), Err(FormatError::Checksum { offset: 16 })));
}

#[test]
fn a_trace_whose_nodes_are_not_in_segment_order_cannot_be_written() {
    let segment = Segment { ordinal: 0, ended_by: String::new(), initial: vec![], expected: vec![], failed_with: None, printed: None, racy_reads: Vec::new(), host_writes: Vec::new() };
    let node = |segment| Node { queue: None, segment: SegmentId(segment), command: Command::Barrier, call: "".into() };
    let trace = Trace { segments: vec![segment.clone(), segment], nodes: vec![node(1), node(0)], ..Trace::default() };
    let error = write_trace_to(TraceWriter::new(Vec::new()).unwrap(), &trace, &BlobStore::default()).unwrap_err();
    assert!(matches!(error, FormatError::Unordered(ref problem) if problem.contains("node 1")), "{error}");
}
