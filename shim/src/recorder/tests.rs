//! The recorder driven by scripted call sequences, as an API module would drive it, with the
//! exact edges, segments and memory states it writes asserted. `FakeDevice` is a test double
//! for the API module's device reads.

use super::*;
use crate::config::{Capture, Verify};
use std::cell::RefCell;
use std::sync::{Arc, Mutex};
use trace_format::{Arg, Copy, Extent, Fill, ImageKind, KernelLaunch, Launch, MemId, MemKind, Param, PreparedBlob, ParamKind, Place, QueueId};
use EdgeKind::{Barrier, DefaultStream, Event, InOrder};

#[derive(Default)]
struct Collected {
    records: Vec<Record>,
    blobs: HashMap<BlobId, Vec<u8>>,
    flushes: usize,
}

#[derive(Clone, Default)]
struct SharedSink(Arc<Mutex<Collected>>);

impl Sink for SharedSink {
    fn record(&mut self, record: Record) {
        self.0.lock().unwrap().records.push(record);
    }
    fn records(&mut self, records: Vec<Record>) {
        self.0.lock().unwrap().records.extend(records);
    }
    fn blob(&mut self, bytes: Vec<u8>) -> BlobId {
        let id = BlobId::of(&bytes);
        self.0.lock().unwrap().blobs.insert(id, bytes);
        id
    }
    fn prepared_blob(&mut self, blob: PreparedBlob) -> BlobId {
        self.0.lock().unwrap().blobs.insert(blob.id, blob.to_raw().expect("a blob that decompresses"));
        blob.id
    }
    fn flush(&mut self) {
        self.0.lock().unwrap().flushes += 1;
    }
}

/// Test double for device memory: contents by key, which the test changes as "the device"
/// would; records what it was asked to read and how often to drain.
#[derive(Default)]
struct FakeDevice {
    contents: RefCell<HashMap<Key, Vec<u8>>>,
    reads: RefCell<Vec<Key>>,
    /// Reads that waited for the work submitted before.
    reads_after_submitted: RefCell<Vec<Key>>,
    drains: RefCell<usize>,
}

impl MemoryAccess for FakeDevice {
    fn drain(&self) {
        *self.drains.borrow_mut() += 1;
    }
    fn read(&self, mem: Key, size: u64) -> Option<Vec<u8>> {
        self.reads.borrow_mut().push(mem);
        let contents = self.contents.borrow().get(&mem).cloned()?;
        assert_eq!(contents.len() as u64, size, "read of memory {mem} with the wrong size");
        Some(contents)
    }
    fn read_after_submitted(&self, mem: Key, size: u64) -> Option<Vec<u8>> {
        self.reads_after_submitted.borrow_mut().push(mem);
        self.read(mem, size)
    }
}

const KERNEL: Key = 0xc0;

struct Harness {
    rec: Recorder,
    sink: SharedSink,
    device: FakeDevice,
}

fn header() -> Header {
    Header { api: trace_format::Api::OpenCl, producer: "test".into(), command_line: vec![], process_id: 1, started_unix_s: 0 }
}

impl Harness {
    fn new(capture: Capture) -> Harness {
        Harness::verifying(capture, Verify::EveryWindows(1))
    }

    fn verifying(capture: Capture, verify: Verify) -> Harness {
        let sink = SharedSink::default();
        let mut rec = Recorder::new(header(), capture, verify, Box::new(sink.clone()));
        rec.program_created(0xb0, vec![(ImageKind::OpenClSource, b"kernel void k(global int *a) {}".to_vec())]);
        rec.kernel_created(KERNEL, 0xb0, "k", Vec::new());
        Harness { rec, sink, device: FakeDevice::default() }
    }

    fn queue(&mut self, key: Key, in_order: bool) {
        self.cuda_stream(key, in_order, QueueSync::Independent);
    }

    fn cuda_stream(&mut self, key: Key, in_order: bool, sync: QueueSync) {
        let desc = QueueDesc { in_order, sync, group: 1, device: None, flags: 0, priority: 0, label: format!("q{key}") };
        self.rec.queue_created(key, desc);
    }

    fn buffer(&mut self, key: Key, size: u64, fill: u8) {
        self.buffer_at(key, size, fill, key, false);
    }

    fn buffer_at(&mut self, key: Key, size: u64, fill: u8, address: u64, addressable: bool) {
        let desc = MemDesc { shape: MemShape::Whole(MemKind::Buffer), size, address, flags: 0, device: None, addressable, host_writes: HostWrites::None };
        self.rec.memory_created(key, desc);
        self.device.contents.borrow_mut().insert(key, vec![fill; size as usize]);
    }

    /// Submits a command to `queue` using `mems` (read and written).
    fn command(&mut self, queue: Key, order: Order, waits: &[Key], signals: Option<Key>, mems: &[Key]) {
        let accesses: Vec<Access> = mems.iter().map(|&mem| Access { mem, write: true, overwrites: false }).collect();
        let prepared = self.rec.prepare(accesses, &self.device);
        let submission =
            Submission { call: "enqueue", queue: Some(queue), order, waits, signals, received: None, host_ordered: false };
        let mems = mems.to_vec();
        self.rec.submit(prepared, submission, |rec| match order {
            Order::Command => {
                let args: Vec<Arg> =
                    mems.iter().map(|&mem| Arg::Memory { mem: rec.mem_id(mem).unwrap(), offset: 0 }).collect();
                let params = vec![Param { offset: 0, size: 8, kind: ParamKind::Memory }; args.len()];
                let kernel = rec.kernel_id(KERNEL, params.into_iter()).unwrap();
                let launch = Launch::NdRange { dims: 1, offset: [0; 3], global: [4, 1, 1], local: None };
                Command::Kernel(KernelLaunch { kernel, args, launch })
            }
            Order::Marker | Order::Barrier => Command::Barrier,
        });
    }

    fn kernel(&mut self, queue: Key, waits: &[Key], signals: Option<Key>) {
        self.command(queue, Order::Command, waits, signals, &[]);
    }

    /// A context-wide synchronization.
    fn sync(&mut self) {
        self.sync_on(SyncScope::Everything);
    }

    fn sync_on(&mut self, scope: SyncScope<'_>) {
        self.rec.host_sync("clFinish", scope, &self.device);
    }

    /// The queue of each node written, in the order written.
    fn node_queues(&self) -> Vec<u32> {
        self.nodes().iter().map(|node| node.queue.unwrap().0).collect()
    }

    /// Each segment's nodes (by id), in the order the segments were written.
    fn segments(&self) -> Vec<Vec<u32>> {
        let mut segments: Vec<Vec<u32>> = Vec::new();
        let mut next = 0;
        for record in self.records() {
            match record {
                Record::SegmentBegin { .. } => segments.push(Vec::new()),
                Record::Node(_) => {
                    segments.last_mut().expect("a node outside a segment").push(next);
                    next += 1;
                }
                _ => {}
            }
        }
        segments
    }

    /// (segment, memory, contents) of every initial state written.
    fn initial_states(&self) -> Vec<(u32, u32, Vec<u8>)> {
        self.records()
            .into_iter()
            .filter_map(|r| match r {
                Record::InitialState { segment, state } => Some((segment.0, state.mem.0, self.blob(state.blob))),
                _ => None,
            })
            .collect()
    }

    fn records(&self) -> Vec<Record> {
        self.sink.0.lock().unwrap().records.clone()
    }

    fn edges(&self) -> Vec<(u32, u32, EdgeKind)> {
        let mut edges: Vec<_> = self
            .records()
            .into_iter()
            .filter_map(|record| match record {
                Record::Edge(edge) => Some((edge.from.0, edge.to.0, edge.kind)),
                _ => None,
            })
            .collect();
        edges.sort_by_key(|&(from, to, _)| (from, to));
        edges
    }

    fn nodes(&self) -> Vec<Node> {
        self.records().into_iter().filter_map(|r| if let Record::Node(n) = r { Some(n) } else { None }).collect()
    }

    fn blob(&self, id: BlobId) -> Vec<u8> {
        self.sink.0.lock().unwrap().blobs[&id].clone()
    }
}

#[test]
fn an_in_order_queue_chains_its_commands() {
    let mut h = Harness::new(Capture::All);
    h.queue(1, true);
    for _ in 0..3 {
        h.kernel(1, &[], None);
    }
    h.sync();
    assert_eq!(h.edges(), [(0, 1, InOrder), (1, 2, InOrder)]);
    assert!(h.nodes().iter().all(|node| node.queue == Some(QueueId(0)) && node.segment == SegmentId(0)));
}

#[test]
fn an_out_of_order_queue_is_ordered_by_its_events_only() {
    let mut h = Harness::new(Capture::All);
    h.queue(1, false);
    h.kernel(1, &[], Some(0xe1)); // 0
    h.kernel(1, &[], Some(0xe2)); // 1
    h.kernel(1, &[0xe1, 0xe2], None); // 2
    h.kernel(1, &[0xe2], Some(0xe3)); // 3
    h.kernel(1, &[], None); // 4: independent
    h.kernel(1, &[0xe3, 0xe3], None); // 5: a repeated wait is one edge
    h.sync();
    assert_eq!(h.edges(), [(0, 2, Event), (1, 2, Event), (1, 3, Event), (3, 5, Event)]);
}

#[test]
fn events_join_queues() {
    let mut h = Harness::new(Capture::All);
    h.queue(1, true);
    h.queue(2, true);
    h.kernel(1, &[], Some(0xe1)); // 0
    h.kernel(2, &[0xe1], Some(0xe2)); // 1
    h.kernel(1, &[], None); // 2
    h.kernel(1, &[0xe2], None); // 3
    h.sync();
    assert_eq!(h.edges(), [(0, 1, Event), (0, 2, InOrder), (1, 3, Event), (2, 3, InOrder)]);
}

#[test]
fn out_of_order_barriers_and_markers() {
    let mut h = Harness::new(Capture::All);
    h.queue(1, false);
    h.kernel(1, &[], Some(0xe1)); // 0
    h.kernel(1, &[], None); // 1
    h.command(1, Order::Barrier, &[], None, &[]); // 2: waits for 0 and 1
    h.kernel(1, &[], None); // 3: after the barrier
    h.kernel(1, &[], None); // 4: after the barrier
    h.command(1, Order::Marker, &[], None, &[]); // 5: waits for 3 and 4 (the barrier is behind them)
    h.kernel(1, &[], None); // 6: after the barrier, not the marker
    h.command(1, Order::Barrier, &[0xe1], None, &[]); // 7: waits for 0 (listed) and the last barrier
    h.kernel(1, &[], None); // 8: after barrier 7
    h.command(1, Order::Barrier, &[], None, &[]); // 9: everything since marker 5, which stands for the rest
    h.sync();
    assert_eq!(
        h.edges(),
        [
            (0, 2, Barrier),
            (0, 7, Event),
            (1, 2, Barrier),
            (2, 3, Barrier),
            (2, 4, Barrier),
            (2, 6, Barrier),
            (2, 7, Barrier),
            (3, 5, Barrier),
            (4, 5, Barrier),
            (5, 9, Barrier),
            (6, 9, Barrier),
            (7, 8, Barrier),
            (7, 9, Barrier),
            (8, 9, Barrier),
        ]
    );
}

#[test]
fn the_legacy_default_stream_synchronizes_with_blocking_streams_only() {
    let mut h = Harness::new(Capture::All);
    h.cuda_stream(10, true, QueueSync::LegacyDefault);
    h.cuda_stream(11, true, QueueSync::Blocking);
    h.cuda_stream(12, true, QueueSync::Blocking);
    h.cuda_stream(13, true, QueueSync::Independent); // non-blocking
    h.kernel(11, &[], None); // 0
    h.kernel(13, &[], None); // 1
    h.kernel(10, &[], None); // 2: waits for the blocking stream 11 (12 is empty), not 13
    h.kernel(11, &[], None); // 3: waits for 2
    h.kernel(12, &[], None); // 4: waits for 2
    h.kernel(13, &[], None); // 5: in order only
    h.kernel(11, &[], None); // 6: 2 is already behind it
    h.kernel(10, &[], None); // 7: waits for 6 and 4
    h.sync();
    assert_eq!(
        h.edges(),
        [
            (0, 2, DefaultStream),
            (0, 3, InOrder),
            (1, 5, InOrder),
            (2, 3, DefaultStream),
            (2, 4, DefaultStream),
            (2, 7, InOrder),
            (3, 6, InOrder),
            (4, 7, DefaultStream),
            (6, 7, DefaultStream),
        ]
    );
}

#[test]
fn a_stream_handle_reused_as_a_non_blocking_stream_leaves_the_legacy_streams_group() {
    let mut h = Harness::new(Capture::All);
    h.cuda_stream(10, true, QueueSync::LegacyDefault);
    h.cuda_stream(11, true, QueueSync::Blocking);
    h.cuda_stream(12, true, QueueSync::Blocking);
    h.kernel(11, &[], None); // 0
    h.kernel(12, &[], None); // 1
    h.sync();
    h.rec.queue_released(12, "cuStreamDestroy", &h.device);
    h.cuda_stream(11, true, QueueSync::Independent); // the handle of a new, non-blocking stream
    h.cuda_stream(13, true, QueueSync::Blocking);
    h.kernel(11, &[], None); // 2
    h.kernel(13, &[], None); // 3
    h.kernel(10, &[], None); // 4: waits for the live blocking stream 13 only
    h.sync();
    assert_eq!(h.edges(), [(3, 4, DefaultStream)]);
}

#[test]
fn an_event_on_the_legacy_stream_stands_for_the_blocking_streams_earlier_work() {
    // simpleStreams: copies on its own (blocking) streams, then an event recorded on the legacy
    // stream and waited for: the copies are done when the wait returns.
    let mut h = Harness::new(Capture::All);
    h.cuda_stream(10, true, QueueSync::LegacyDefault);
    h.cuda_stream(11, true, QueueSync::Blocking);
    h.cuda_stream(12, true, QueueSync::Blocking);
    h.cuda_stream(13, true, QueueSync::Independent);
    h.kernel(11, &[], None); // 0
    h.kernel(12, &[], None); // 1
    h.kernel(13, &[], None); // 2: a non-blocking stream's, not covered
    h.rec.record_event(0xe1, 10);
    h.kernel(11, &[], None); // 3: after the event
    h.rec.record_event(0xe2, 12); // stream 12's work, and the legacy stream's (none)
    h.sync_on(SyncScope::Events(&[0xe1]));
    assert_eq!(h.segments(), [vec![0, 1]]);
    h.sync_on(SyncScope::Events(&[0xe2]));
    h.sync();
    assert_eq!(h.segments(), [vec![0, 1], vec![2, 3]]);
}

#[test]
fn recorded_events_and_stream_waits() {
    let mut h = Harness::new(Capture::All);
    h.cuda_stream(1, true, QueueSync::Independent);
    h.cuda_stream(2, true, QueueSync::Independent);
    h.kernel(1, &[], None); // 0
    h.rec.record_event(0xe1, 1);
    h.kernel(1, &[], None); // 1: not covered by the event
    h.rec.queue_waits(2, 0xe1);
    h.rec.record_event(0xe2, 2); // stream 2 has no work yet, but waits for 0
    h.kernel(2, &[], None); // 2: waits for 0
    h.rec.queue_waits(1, 0xe2);
    h.kernel(1, &[], None); // 3: waits for 0 through e2 (redundant with the queue order, kept)
    h.sync();
    assert_eq!(h.edges(), [(0, 1, InOrder), (0, 2, Event), (0, 3, Event), (1, 3, InOrder)]);
}

#[test]
fn windows_outside_the_capture_range_are_counted_not_written() {
    let mut h = Harness::new(Capture::parse("1-2").unwrap());
    h.queue(1, true);
    for window in 0..4 {
        assert_eq!(h.rec.capture_over(), window == 3);
        h.kernel(1, &[], None);
        if window == 1 {
            h.kernel(1, &[], None);
        }
        h.sync();
        h.sync(); // a second synchronization with nothing between opens no window
    }
    let segments: Vec<_> = h
        .records()
        .into_iter()
        .filter_map(|r| match r {
            Record::SegmentBegin { ordinal } => Some(format!("begin {ordinal}")),
            Record::SegmentEnd { segment, .. } => Some(format!("end {segment}")),
            _ => None,
        })
        .collect();
    assert_eq!(segments, ["begin 1", "end 0", "begin 2", "end 1"]);
    assert!(h.rec.capture_over());
    assert_eq!(h.edges(), [(0, 1, InOrder)]);
    let segment_of: Vec<_> = h.nodes().iter().map(|node| node.segment.0).collect();
    assert_eq!(segment_of, [0, 0, 1]);
}

#[test]
fn capture_markers_delimit_the_capture() {
    let mut h = Harness::new(Capture::Markers);
    h.queue(1, true);
    h.kernel(1, &[], None); // window 0: before the start marker
    h.rec.capture_marker(true, "cuProfilerStart", &h.device);
    h.kernel(1, &[], None); // window 1
    h.sync();
    h.kernel(1, &[], None); // window 2
    h.rec.capture_marker(false, "cuProfilerStop", &h.device);
    h.kernel(1, &[], None); // window 3: after the stop
    h.sync();
    let ends: Vec<_> = h
        .records()
        .into_iter()
        .filter_map(|r| match r {
            Record::SegmentBegin { ordinal } => Some(format!("begin {ordinal}")),
            Record::SegmentEnd { ended_by, .. } => Some(ended_by),
            _ => None,
        })
        .collect();
    assert_eq!(ends, ["begin 1", "clFinish", "begin 2", "cuProfilerStop"]);
}

#[test]
fn addresses_relocate_to_memory_and_offset() {
    let mut h = Harness::new(Capture::All);
    h.buffer_at(1, 256, 0, 0x1000, true);
    h.buffer_at(2, 16, 0, 0x1100, true);
    h.buffer_at(3, 16, 0, 0x1040, false); // a handle, not an address range
    assert_eq!(h.rec.locate(0x1000), Some((1, 0)));
    assert_eq!(h.rec.locate(0x10ff), Some((1, 0xff)));
    assert_eq!(h.rec.locate(0x1100), Some((2, 0)), "the start of the next allocation wins over an end pointer");
    assert_eq!(h.rec.locate(0x1110), Some((2, 16)), "an end pointer belongs to its allocation");
    assert_eq!(h.rec.locate(0x1111), None);
    assert_eq!(h.rec.locate(0xfff), None);
    h.rec.memory_released(1);
    assert_eq!(h.rec.locate(0x1010), None);
}

#[test]
fn an_alias_names_its_memory_from_the_start_until_the_memory_is_released() {
    let mut h = Harness::new(Capture::All);
    h.buffer_at(1, 64, 0, 0x1000, true);
    h.rec.memory_alias(1, 0x9000);
    h.rec.memory_alias(1, 0x1000); // its own address: nothing to add
    assert_eq!(h.rec.locate(0x9010), Some((1, 0x10)));
    assert_eq!(h.rec.locate(0x1010), Some((1, 0x10)));
    assert_eq!(h.rec.locate(0x9041), None);
    h.rec.memory_released(1);
    assert_eq!((h.rec.locate(0x9000), h.rec.locate(0x1000)), (None, None));
}

#[test]
fn a_variable_is_written_as_a_global_of_its_program() {
    let mut h = Harness::new(Capture::All);
    h.rec.program_created(0xa0, vec![(ImageKind::Ptx, b".version 9.0".to_vec())]);
    let shape = MemShape::Variable { program: 0xa0, name: "counter".into() };
    h.rec.memory_created(0x2000, MemDesc { shape, size: 16, address: 0x2000, flags: 0, device: None, addressable: true, host_writes: HostWrites::None });
    assert_eq!(h.rec.mem_id(0x2000), Some(MemId(0)));
    assert_eq!(h.rec.mem_id(0x2000), Some(MemId(0)), "one record per object");
    let memories: Vec<MemKind> = h.records().into_iter().filter_map(|record| match record {
        Record::Memory(memory) => Some(memory.kind),
        _ => None,
    }).collect();
    assert_eq!(memories, [MemKind::Global { program: trace_format::ProgramId(0), name: "counter".into() }]);
}

#[test]
fn memory_states_initial_at_first_use_and_final_when_written() {
    let mut h = Harness::new(Capture::All);
    h.queue(1, true);
    h.buffer(0xa, 8, 1);
    h.buffer(0xb, 4, 2);
    let sub = MemDesc { shape: MemShape::Within { parent: 0xa, offset: 4 }, size: 4, address: 0xa1, flags: 0, device: None, addressable: false, host_writes: HostWrites::None };
    h.rec.memory_created(0xa1, sub);
    // Reads 0xb, writes the sub-buffer (whose contents live in 0xa).
    let accesses = [Access { mem: 0xb, write: false, overwrites: false }, Access { mem: 0xa1, write: true, overwrites: false }];
    assert!(h.rec.capturing());
    let prepared = h.rec.prepare(accesses.to_vec(), &h.device);
    let submission = Submission { call: "clEnqueueCopyBuffer", queue: Some(1), order: Order::Command, waits: &[], signals: None, received: None, host_ordered: false };
    h.rec.submit(prepared, submission, |rec| {
        let (src, dst) = (rec.mem_id(0xb).unwrap(), rec.mem_id(0xa1).unwrap());
        Command::Copy(Copy {
            src: Place::Memory { mem: src, offset: 0 },
            dst: Place::Memory { mem: dst, offset: 0 },
            extent: Extent::Linear { bytes: 4 },
        })
    });
    h.device.contents.borrow_mut().insert(0xa, vec![1, 1, 1, 1, 2, 2, 2, 2]);
    h.command(1, Order::Command, &[], None, &[0xa]); // 0xa again: no second snapshot
    h.sync();
    let records = h.records();
    let memories: Vec<_> = records.iter().filter_map(|r| if let Record::Memory(m) = r { Some(m.kind.clone()) } else { None }).collect();
    assert_eq!(memories, [MemKind::Buffer, MemKind::Buffer, MemKind::SubBuffer { parent: MemId(1), offset: 4 }]);
    let initial: Vec<_> = records
        .iter()
        .filter_map(|r| if let Record::InitialState { state, .. } = r { Some((state.mem.0, h.blob(state.blob))) } else { None })
        .collect();
    assert_eq!(initial, [(0, vec![2; 4]), (1, vec![1; 8])]);
    let Some(Record::SegmentEnd { expected, ended_by, .. }) = records.last() else { panic!("no segment end") };
    assert_eq!(ended_by, "clFinish");
    let expected: Vec<_> = expected.iter().map(|state| (state.mem.0, h.blob(state.blob))).collect();
    assert_eq!(expected, [(1, vec![1, 1, 1, 1, 2, 2, 2, 2])]);
    assert_eq!(*h.device.drains.borrow(), 0, "nothing ran before the capture");
    assert_eq!(h.sink.0.lock().unwrap().flushes, 1);
}

#[test]
fn a_user_event_is_a_host_task_and_keeps_what_waits_for_it_pending() {
    let mut h = Harness::new(Capture::All);
    h.queue(1, true);
    h.queue(2, true);
    h.rec.user_event_created(0x5e, "clCreateUserEvent");
    h.kernel(1, &[], None); // 0
    h.kernel(2, &[0x5e], Some(0xe2)); // host task 1, then 2
    h.kernel(1, &[0x5e], None); // 3: the same host task
    h.sync(); // only the first kernel can have finished
    assert_eq!(h.segments(), [vec![0]]);
    h.rec.host_callback(0xe2, "clSetEventCallback"); // 4
    h.rec.user_event_set(0x5e, false);
    h.sync();
    let kinds: Vec<_> = h.nodes().iter().map(|node| node.command.kind_name()).collect();
    assert_eq!(kinds, ["kernel", "host_task", "kernel", "kernel", "host_task"]);
    assert_eq!(h.segments(), [vec![0], vec![1, 2, 3, 4]]);
    // The in-order edge from kernel 0 joins two segments: the earlier one replays first.
    assert_eq!(h.edges(), [(1, 2, Event), (1, 3, Event), (2, 4, Event)]);
}

#[test]
fn what_waits_for_a_user_event_set_to_an_error_never_ran() {
    let mut h = Harness::verifying(Capture::All, Verify::End);
    h.queue(1, true);
    h.queue(2, true);
    h.buffer(0xa, 4, 1);
    h.buffer(0xb, 4, 2);
    h.rec.user_event_created(0x5e, "clCreateUserEvent");
    // A fill overwriting 0xa waits for the user event (no snapshot: it overwrites all of it).
    let overwrite = vec![Access { mem: 0xa, write: true, overwrites: true }];
    let prepared = h.rec.prepare(overwrite, &h.device);
    let submission = Submission { call: "clEnqueueFillBuffer", queue: Some(1), order: Order::Command, waits: &[0x5e], signals: Some(0xe1), received: None, host_ordered: false };
    h.rec.submit(prepared, submission, |_| Command::Barrier); // host task 0, fill 1
    h.command(1, Order::Command, &[], None, &[0xb]); // 2: after the fill in its queue
    h.command(2, Order::Command, &[], None, &[0xb]); // 3: another queue, runs
    h.rec.host_callback(0xe1, "clSetEventCallback"); // 4: after the fill
    h.rec.user_event_set(0x5e, true);
    h.sync();
    assert_eq!(h.segments(), [vec![0]], "only the other queue's command ran");
    assert_eq!(h.initial_states(), [(0, 1, vec![2; 4])]);
    // 0xa is read at its next use: the fill that skipped its snapshot never ran.
    h.command(1, Order::Command, &[], None, &[0xa]);
    h.sync();
    assert_eq!(h.initial_states(), [(0, 1, vec![2; 4]), (1, 0, vec![1; 4])]);
}

#[test]
fn data_the_program_receives_is_kept_when_the_window_ends() {
    let mut h = Harness::new(Capture::All);
    h.queue(1, true);
    h.buffer(0xa, 4, 7);
    let host = vec![0u8; 4];
    let region = HostRegion { address: host.as_ptr() as usize, len: host.len() };
    let prepared = h.rec.prepare(vec![Access { mem: 0xa, write: false, overwrites: false }], &h.device);
    let submission = Submission { call: "clEnqueueReadBuffer", queue: Some(1), order: Order::Command, waits: &[], signals: None, received: Some(region), host_ordered: false };
    h.rec.submit(prepared, submission, |rec| {
        let mem = rec.mem_id(0xa).unwrap();
        Command::Copy(Copy { src: Place::Memory { mem, offset: 0 }, dst: Place::Host { data: None }, extent: Extent::Linear { bytes: 4 } })
    });
    // The read completes later; the fill shows the data is taken at the window's end.
    let mut host = host;
    host.copy_from_slice(&[7; 4]);
    h.sync();
    let Command::Copy(copy) = &h.nodes()[0].command else { panic!("not a copy") };
    let Place::Host { data: Some(blob) } = copy.dst else { panic!("no received data") };
    assert_eq!(h.blob(blob), [7; 4]);
    drop(host);
}

#[test]
fn a_read_while_earlier_unordered_work_still_writes_its_memory_is_racy() {
    let mut h = Harness::new(Capture::All);
    h.queue(1, true);
    h.queue(2, true);
    h.buffer(0xa, 4, 7);
    h.command(2, Order::Command, &[], None, &[0xa]); // 0: writes 0xa, never waited for here
    let host = [0u8; 4];
    let region = HostRegion { address: host.as_ptr() as usize, len: host.len() };
    let read = |h: &mut Harness| {
        let prepared = h.rec.prepare(vec![Access { mem: 0xa, write: false, overwrites: false }], &h.device);
        let submission = Submission { call: "clEnqueueReadBuffer", queue: Some(1), order: Order::Command, waits: &[], signals: None, received: Some(region), host_ordered: false };
        h.rec.submit(prepared, submission, |rec| {
            let mem = rec.mem_id(0xa).unwrap();
            Command::Copy(Copy { src: Place::Memory { mem, offset: 0 }, dst: Place::Host { data: None }, extent: Extent::Linear { bytes: 4 } })
        });
    };
    let racy = |h: &Harness| -> Vec<u32> { h.records().into_iter().filter_map(|r| if let Record::RacyRead { node, .. } = r { Some(node.0) } else { None }).collect() };
    read(&mut h);
    h.sync_on(SyncScope::LastCommandOf(1)); // the read alone closes; queue 2's write stays pending
    assert_eq!(h.segments(), [vec![0]]);
    assert_eq!(racy(&h), [0], "the read raced with the earlier write of another queue");
    h.sync(); // the write closes
    read(&mut h); // read again, nothing pending writes 0xa now
    h.sync_on(SyncScope::LastCommandOf(1));
    assert_eq!(racy(&h), [0]);
}

#[test]
fn data_a_later_copy_of_the_window_overwrote_is_not_kept() {
    let mut h = Harness::new(Capture::All);
    h.queue(1, true);
    h.buffer(0xa, 8, 7);
    let host = vec![0u8; 8];
    let read = |h: &mut Harness, offset: usize, len: usize| {
        let region = HostRegion { address: host.as_ptr() as usize + offset, len };
        let prepared = h.rec.prepare(vec![Access { mem: 0xa, write: false, overwrites: false }], &h.device);
        let submission = Submission { call: "clEnqueueReadBuffer", queue: Some(1), order: Order::Command, waits: &[], signals: None, received: Some(region), host_ordered: false };
        h.rec.submit(prepared, submission, |rec| {
            let mem = rec.mem_id(0xa).unwrap();
            Command::Copy(Copy { src: Place::Memory { mem, offset: 0 }, dst: Place::Host { data: None }, extent: Extent::Linear { bytes: len as u64 } })
        });
    };
    read(&mut h, 0, 8); // overwritten by the next two together: the program never saw it
    read(&mut h, 0, 4);
    read(&mut h, 4, 4);
    read(&mut h, 2, 4); // not overwritten after it
    h.sync();
    let kept: Vec<bool> = h.nodes().iter().map(|node| matches!(&node.command, Command::Copy(Copy { dst: Place::Host { data: Some(_) }, .. }))).collect();
    assert_eq!(kept, [false, true, true, true]);
}

#[test]
fn released_memory_keeps_its_initial_state_for_the_pending_work_that_uses_it() {
    let mut h = Harness::new(Capture::All);
    h.queue(1, true);
    h.buffer(0xa, 4, 3);
    h.command(1, Order::Command, &[], None, &[0xa]);
    h.rec.memory_released(0xa);
    assert!(!h.rec.is_memory(0xa));
    h.buffer(0xa, 4, 9); // the same handle, a new object
    h.command(1, Order::Command, &[], None, &[0xa]);
    h.sync();
    assert_eq!(h.initial_states(), [(0, 0, vec![3; 4]), (0, 1, vec![9; 4])]);
}

#[test]
fn fills_partial_marks_and_a_window_never_waited_for() {
    let mut h = Harness::new(Capture::All);
    h.queue(1, true);
    h.buffer(0xa, 8, 0);
    let prepared = h.rec.prepare(vec![Access { mem: 0xa, write: true, overwrites: false }], &h.device);
    let submission = Submission { call: "clEnqueueFillBuffer", queue: Some(1), order: Order::Command, waits: &[], signals: None, received: None, host_ordered: false };
    h.rec.submit(prepared, submission, |rec| {
        let mem = rec.mem_id(0xa).unwrap();
        Command::Fill(Fill { mem, offset: 0, bytes: 8, pattern: vec![1, 2], rows: None })
    });
    h.sync();
    let Command::Fill(fill) = &h.nodes()[0].command else { panic!("not a fill") };
    assert_eq!(fill.pattern, [1, 2]);
    h.rec.partial("clEnqueueNativeKernel", "native kernels are not recorded");
    h.rec.partial("clEnqueueNativeKernel", "native kernels are not recorded");
    // A command the program never waits for before exiting is left out.
    h.kernel(1, &[], None);
    h.rec.end_of_program(None);
    let records = h.records();
    let partial: Vec<_> = records.iter().filter_map(|r| if let Record::Partial(p) = r { Some(p.call.as_str()) } else { None }).collect();
    assert_eq!(partial, ["clEnqueueNativeKernel", "end of program"]);
    assert_eq!(h.nodes().len(), 1);
    assert!(matches!(records.first(), Some(Record::Header(_))));
}

#[test]
fn a_user_event_handle_reused_by_a_command_is_no_longer_a_user_event() {
    let mut h = Harness::new(Capture::parse("1-").unwrap());
    h.queue(1, true);
    h.rec.user_event_created(0x5e, "clCreateUserEvent");
    // Window 0 (not captured): the user event was released unset; its handle comes back as a
    // command's event.
    h.kernel(1, &[], Some(0x5e));
    h.sync();
    // Window 1: waiting for that (completed) event neither blocks the window nor adds a host task.
    h.kernel(1, &[0x5e], None);
    h.sync();
    let kinds: Vec<_> = h.nodes().iter().map(|node| node.command.kind_name()).collect();
    assert_eq!(kinds, ["kernel"]);
    assert!(matches!(h.records().last(), Some(Record::SegmentEnd { .. })));
}

#[test]
fn a_synchronization_closes_only_what_it_waited_for() {
    let mut h = Harness::new(Capture::All);
    h.queue(1, true);
    h.queue(2, true);
    h.queue(3, true);
    h.kernel(1, &[], Some(0xe1)); // 0
    h.kernel(2, &[], None); // 1: another thread's queue
    h.kernel(3, &[0xe1], Some(0xe3)); // 2: waits for 0
    h.kernel(2, &[], None); // 3
    h.sync_on(SyncScope::Events(&[0xe3])); // 2 and what it waited for
    assert_eq!(h.segments(), [vec![0, 1]]);
    h.kernel(1, &[], None); // 4: after 0, which is closed
    h.sync_on(SyncScope::Queues(&[2]));
    h.sync_on(SyncScope::Queues(&[2])); // nothing left there: no window
    h.sync_on(SyncScope::Queues(&[1]));
    assert_eq!(h.segments(), [vec![0, 1], vec![2, 3], vec![4]]);
    assert_eq!(h.node_queues(), [0, 2, 1, 1, 0], "queues in the order each segment's nodes were submitted");
    assert_eq!(h.edges(), [(0, 1, Event), (2, 3, InOrder)]);
}

#[test]
fn a_context_wide_wait_closes_what_was_submitted_before_it_began() {
    let mut h = Harness::new(Capture::All);
    h.queue(1, true);
    h.queue(2, true);
    h.kernel(1, &[], None); // 0
    h.kernel(2, &[], None); // 1
    let began = h.rec.wait_begins(SyncScope::Everything);
    // Another thread submits while this one waits: the wait does not cover it.
    h.kernel(2, &[], None); // 2
    h.kernel(1, &[], None); // 3
    h.sync_on(began);
    assert_eq!(h.segments(), [vec![0, 1]]);
    h.sync_on(SyncScope::Everything);
    assert_eq!(h.segments(), [vec![0, 1], vec![2, 3]]);
}

#[test]
fn a_queue_wait_closes_only_what_the_queue_held_when_it_began() {
    let mut h = Harness::new(Capture::All);
    h.queue(1, true);
    h.queue(2, true);
    h.kernel(1, &[], Some(0xe1)); // 0
    h.kernel(2, &[], None); // 1: another queue
    h.kernel(1, &[], None); // 2
    let began = h.rec.wait_begins(SyncScope::Queues(&[1]));
    // While this thread waits for queue 1, another submits to it, after queue 2's work.
    h.kernel(2, &[0xe1], Some(0xe2)); // 3
    h.kernel(1, &[0xe2], None); // 4: follows 2 in order, and 1 through 3
    h.sync_on(began);
    assert_eq!(h.segments(), [vec![0, 1]], "neither what was submitted during the wait nor what it follows");
    // The same for an event recorded again while a wait for it runs.
    let began = h.rec.wait_begins(SyncScope::Events(&[0xe2]));
    h.kernel(2, &[], Some(0xe2)); // 5
    h.sync_on(began);
    assert_eq!(h.segments(), [vec![0, 1], vec![2, 3]]);
    h.sync_on(SyncScope::Everything);
    assert_eq!(h.segments(), [vec![0, 1], vec![2, 3], vec![4, 5]]);
    assert_eq!(h.node_queues(), [0, 0, 1, 1, 0, 1], "pending nodes 0 and 2, then 1 and 3, then 4 and 5");
}

#[test]
fn a_blocking_command_covers_what_its_queue_held_before_its_call_not_what_others_submitted_during_it() {
    let mut h = Harness::new(Capture::All);
    h.queue(1, true);
    h.queue(2, true);
    h.kernel(2, &[], Some(0xe2)); // 0: another queue's work
    h.kernel(1, &[], None); // 1
    // This thread's blocking command on queue 1 is prepared and its call begins...
    let prepared = h.rec.prepare(Vec::new(), &h.device);
    let began = prepared.began();
    // ...another thread enqueues to the same queue while the call blocks (the driver queues it
    // behind the blocking command) and records it first, after queue 2's work...
    h.kernel(1, &[0xe2], None); // 2
    // ...then the blocking command is recorded, after it in the recorded order.
    let submission = Submission { call: "clEnqueueWriteBuffer", queue: Some(1), order: Order::Command, waits: &[], signals: None, received: None, host_ordered: false };
    h.rec.submit(prepared, submission, |_| Command::Barrier); // 3
    let waited = h.rec.blocking_command_waited(began, 1);
    h.sync_on(waited);
    // Two nodes of queue 1: 1 and 3 (2 would have brought 0, which it waited for, of queue 2).
    assert_eq!((h.segments(), h.node_queues()), (vec![vec![0, 1]], vec![1, 1]), "pending nodes 1 and 3 only");
    h.sync_on(SyncScope::Everything);
    assert_eq!(h.segments(), [vec![0, 1], vec![2, 3]]);
}

#[test]
fn a_blocking_command_on_an_out_of_order_queue_closes_itself_and_what_it_waited_for() {
    let mut h = Harness::new(Capture::All);
    h.queue(1, false);
    h.kernel(1, &[], Some(0xe1)); // 0
    h.kernel(1, &[], None); // 1
    h.kernel(1, &[0xe1], None); // 2: the blocking command
    h.sync_on(SyncScope::LastCommandOf(1));
    assert_eq!(h.segments(), [vec![0, 1]]);
    h.sync_on(SyncScope::Queues(&[1]));
    assert_eq!(h.segments(), [vec![0, 1], vec![2]]);
}

#[test]
fn memory_is_read_once_per_capture_unless_the_host_can_write_it() {
    let mut h = Harness::verifying(Capture::All, Verify::End);
    h.queue(1, true);
    h.buffer(0xa, 4, 1);
    let pinned = MemDesc { shape: MemShape::Whole(MemKind::Host), size: 4, address: 0xb, flags: 0, device: None, addressable: false, host_writes: HostWrites::Unseen };
    h.rec.memory_created(0xb, pinned);
    h.device.contents.borrow_mut().insert(0xb, vec![5; 4]);
    for round in 0..3u8 {
        h.command(1, Order::Command, &[], None, &[0xa, 0xb]);
        h.command(1, Order::Command, &[], None, &[0xa, 0xb]); // no second read in the same window
        h.device.contents.borrow_mut().insert(0xa, vec![10 + round; 4]); // the replay produces this
        h.device.contents.borrow_mut().insert(0xb, vec![20 + round; 4]); // the host wrote this
        h.sync();
    }
    assert_eq!(*h.device.reads.borrow(), [0xa, 0xb, 0xb, 0xb]);
    // What may be written out of sight is read after the work submitted before.
    assert_eq!(*h.device.reads_after_submitted.borrow(), [0xb, 0xb, 0xb]);
    assert_eq!(h.initial_states(), [(0, 0, vec![1; 4]), (0, 1, vec![5; 4]), (1, 1, vec![20; 4]), (2, 1, vec![21; 4])]);
    let ends: Vec<_> = h.records().into_iter().filter_map(|r| if let Record::SegmentEnd { expected, .. } = r { Some(expected.len()) } else { None }).collect();
    assert_eq!(ends, [0, 0, 0], "with REPRISE_VERIFY=end windows keep no contents");
}

#[test]
fn watched_memory_is_read_once_and_the_pages_the_host_writes_go_with_the_window_that_uses_them() {
    let _alone = crate::host_writes::tests::alone();
    let pinned = crate::host_writes::tests::Pages::new(3);
    let key = pinned.start;
    let mut h = Harness::verifying(Capture::All, Verify::End);
    h.rec.watch_host_writes(true);
    h.queue(1, true);
    let desc = MemDesc { shape: MemShape::Whole(MemKind::Host), size: 3 * 4096, address: key, flags: 0, device: None, addressable: true, host_writes: HostWrites::Watchable };
    h.rec.memory_created(key, desc);
    h.device.contents.borrow_mut().insert(key, vec![0; 3 * 4096]);
    h.command(1, Order::Command, &[], None, &[key]);
    h.sync();
    // Between windows the host writes page 1; during the next window, page 2 (a flag that
    // releases a waiting kernel, say).
    // SAFETY: inside the mapping.
    unsafe { pinned.byte(4096 + 5).write_volatile(7) };
    h.command(1, Order::Command, &[], None, &[key]);
    // SAFETY: as above.
    unsafe { pinned.byte(2 * 4096).write_volatile(1) };
    h.sync();
    // Then pages 0 and 1 between the same two looks: one write of both.
    // SAFETY: as above.
    unsafe { pinned.byte(9).write_volatile(2) };
    // SAFETY: as above.
    unsafe { pinned.byte(4096 + 6).write_volatile(4) };
    h.command(1, Order::Command, &[], None, &[key]);
    h.sync();
    // Its initial state once; then what each window wrote, at its close: the host reads pinned
    // memory directly, so that is output the program received.
    assert_eq!(*h.device.reads.borrow(), [key; 4]);
    assert_eq!(h.initial_states().len(), 1);
    let ends: Vec<_> = h.records().into_iter().filter_map(|r| if let Record::SegmentEnd { expected, .. } = r { Some(expected.len()) } else { None }).collect();
    assert_eq!(ends, [1, 1, 1]);
    let writes: Vec<(u32, u64, Vec<u8>)> = h
        .records()
        .into_iter()
        .filter_map(|r| if let Record::HostWrote { segment, write } = r { Some((segment.0, write.offset, h.blob(write.blob))) } else { None })
        .collect();
    let page = |offset: usize, value: u8| {
        let mut bytes = vec![0u8; 4096];
        bytes[offset] = value;
        bytes
    };
    let mut both = [page(9, 2), page(5, 7)].concat();
    both[4096 + 6] = 4;
    let summary = |writes: &[(u32, u64, Vec<u8>)]| writes.iter().map(|(segment, offset, bytes)| (*segment, *offset, bytes.len())).collect::<Vec<_>>();
    assert_eq!(summary(&writes), [(1, 4096, 4096), (1, 2 * 4096, 4096), (2, 0, 2 * 4096)], "adjacent pages written between two looks come as one write");
    assert!(writes[0].2 == page(5, 7) && writes[1].2 == page(0, 1) && writes[2].2 == both, "the bytes written");
    h.rec.memory_released(key);
    // SAFETY: as above: no longer watched, so no fault.
    unsafe { pinned.byte(0).write_volatile(3) };
    let mut pages = Vec::new();
    crate::host_writes::take_written(&mut pages);
    assert!(!pages.contains(&key), "a freed object is not watched");
}

#[test]
fn the_final_contents_of_what_the_capture_wrote_follow_the_last_segment() {
    let mut h = Harness::verifying(Capture::All, Verify::End);
    h.queue(1, true);
    h.queue(2, true);
    h.buffer(0xa, 4, 1);
    h.buffer(0xb, 4, 2);
    h.buffer(0xc, 4, 3);
    h.command(1, Order::Command, &[], None, &[0xa]);
    h.sync();
    h.rec.memory_released(0xc); // never used: nothing to read
    h.command(2, Order::Command, &[], None, &[0xb]); // never waited for
    h.device.contents.borrow_mut().insert(0xa, vec![7; 4]);
    h.rec.end_of_program(Some(&h.device));
    let records = h.records();
    let expected: Vec<_> = records
        .iter()
        .filter_map(|r| match r {
            Record::Expected { segment, state } => Some((segment.0, state.mem.0, h.blob(state.blob))),
            _ => None,
        })
        .collect();
    assert_eq!(expected, [(0, 0, vec![7; 4])], "memory still written by pending work is not read");
    assert_eq!(*h.device.reads.borrow(), [0xa, 0xb, 0xa]);
}

#[test]
fn memory_a_received_copy_wrote_last_is_compared_through_the_copy_only() {
    let expected_of = |h: &Harness| -> Vec<u32> {
        h.records().into_iter().filter_map(|r| if let Record::Expected { state, .. } = r { Some(state.mem.0) } else { None }).collect()
    };
    // A kernel seems to write pinned memory (a stale word in its arguments), then a copy delivers
    // data the program receives into it: the replay lands that data elsewhere.
    let mut h = Harness::verifying(Capture::All, Verify::End);
    h.queue(1, true);
    h.buffer_at(0xb, 4, 5, 0xb000, true);
    h.command(1, Order::Command, &[], None, &[0xb]);
    h.rec.received_into(0xb000);
    h.sync();
    h.rec.end_of_program(Some(&h.device));
    assert!(expected_of(&h).is_empty());
    // Written by a command after the copy, it is compared again.
    let mut h = Harness::verifying(Capture::All, Verify::End);
    h.queue(1, true);
    h.buffer_at(0xb, 4, 5, 0xb000, true);
    h.rec.received_into(0xb000);
    h.command(1, Order::Command, &[], None, &[0xb]);
    h.sync();
    h.rec.end_of_program(Some(&h.device));
    assert_eq!(expected_of(&h), [0]);
}

#[test]
fn a_capture_starting_after_other_work_waits_for_it_first() {
    let mut h = Harness::new(Capture::parse("1-").unwrap());
    h.queue(1, true);
    h.kernel(1, &[], None);
    h.sync();
    assert_eq!(*h.device.drains.borrow(), 0);
    h.kernel(1, &[], None);
    h.kernel(1, &[], None);
    assert_eq!(*h.device.drains.borrow(), 1, "once, before the first captured command");
}

/// A queue that holds every pending command closes them all when waited for, without a walk of
/// the graph; once another queue has work pending, the same wait closes only its own.
#[test]
fn a_wait_on_the_queue_holding_everything_closes_everything_and_only_that() {
    let mut h = Harness::new(Capture::All);
    h.queue(1, true);
    h.queue(2, false);
    h.kernel(1, &[], None); // 0
    h.kernel(1, &[], None); // 1
    h.sync_on(SyncScope::LastCommandOf(1));
    h.kernel(2, &[], Some(0xe2)); // 2, on the out-of-order queue
    h.kernel(1, &[], None); // 3
    h.kernel(1, &[0xe2], None); // 4: waits for the other queue
    h.sync_on(SyncScope::Queues(&[2]));
    h.sync_on(SyncScope::LastCommandOf(1));
    assert_eq!(h.segments(), [vec![0, 1], vec![2], vec![3, 4]]);
    // An out-of-order queue's last command stands for no other: the walk decides.
    h.kernel(2, &[], None); // 5
    h.kernel(2, &[], None); // 6
    h.sync_on(SyncScope::LastCommandOf(2));
    h.sync();
    // Nodes are numbered as written: the last command closed first, alone, the other after.
    assert_eq!(h.segments(), [vec![0, 1], vec![2], vec![3, 4], vec![5], vec![6]]);
}

#[test]
fn a_window_may_close_later_only_where_closing_it_reads_nothing() {
    let _alone = crate::host_writes::tests::alone();
    let pinned = crate::host_writes::tests::Pages::new(1);
    let mut h = Harness::verifying(Capture::All, Verify::End);
    h.rec.watch_host_writes(true);
    h.queue(1, true);
    h.buffer(0xa, 4, 1);
    let desc = MemDesc { shape: MemShape::Whole(MemKind::Host), size: 4096, address: pinned.start, flags: 0, device: None, addressable: true, host_writes: HostWrites::Watchable };
    h.rec.memory_created(pinned.start, desc);
    h.device.contents.borrow_mut().insert(pinned.start, vec![0; 4096]);
    h.command(1, Order::Command, &[], None, &[0xa]);
    assert!(h.rec.closes_unread(), "device memory only");
    h.command(1, Order::Command, &[], None, &[pinned.start]);
    assert!(!h.rec.closes_unread(), "a command writes memory the host reads directly");
    h.sync();
    assert!(h.rec.closes_unread(), "once its window closed");
    let received = [0u8; 16];
    let prepared = h.rec.prepare(vec![Access { mem: 0xa, write: false, overwrites: false }], &h.device);
    let region = HostRegion { address: received.as_ptr() as usize, len: received.len() };
    let submission = Submission { call: "read", queue: Some(1), order: Order::Command, waits: &[], signals: None, received: Some(region), host_ordered: false };
    h.rec.submit(prepared, submission, |rec| {
        let src = Place::Memory { mem: rec.mem_id(0xa).unwrap(), offset: 0 };
        Command::Copy(Copy { src, dst: Place::Host { data: None }, extent: Extent::Linear { bytes: 16 } })
    });
    assert!(!h.rec.closes_unread(), "a command delivers data into host memory");
    h.rec.capture_received(region.address, region.len);
    assert!(h.rec.closes_unread(), "once the data was taken");
    assert!(!Harness::verifying(Capture::All, Verify::EveryWindows(2)).rec.closes_unread(), "windows verified");
    assert!(!Harness::verifying(Capture::Segments { first: 0, last: Some(3) }, Verify::End).rec.closes_unread(), "a capture range that ends");
}
