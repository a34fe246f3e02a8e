//! What the replay loop asks of a backend, in order, where the backend stages ahead and where it
//! does not: a backend double that logs the calls (no device runs here).

use super::*;
use crate::backend::{BackendResult, PartitionNodes};
use crate::test_traces::{mem, value, TraceBuilder};
use std::cell::RefCell;
use std::rc::Rc;
use trace_format::{BlobStore, SegmentId, Trace};

/// Logs each call by what it concerns: `stage 1`, `write`, `run 1` (eager), `update`,
/// `launch`, `finish`.
struct LoggingBackend {
    ahead: bool,
    log: Rc<RefCell<Vec<String>>>,
}

impl LoggingBackend {
    fn note(&self, what: String) {
        self.log.borrow_mut().push(what);
    }
}

fn segment_of(part: &PartitionNodes<'_>) -> u32 {
    part.nodes.first().map_or(u32::MAX, |(_, node)| node.segment.0)
}

impl Backend for LoggingBackend {
    fn device_name(&self) -> String {
        "logging double".into()
    }
    fn device_note(&self) -> Option<String> {
        None
    }
    fn can_record(&self, _command: &Command) -> bool {
        true
    }
    fn load(&mut self, _trace: &Trace, _blobs: &BlobStore) -> BackendResult<()> {
        Ok(())
    }
    fn stage(&mut self, _ids: &[NodeId], nodes: &[Node], _blobs: &BlobStore) -> BackendResult<()> {
        self.note(format!("stage {}", nodes[0].segment.0));
        Ok(())
    }
    fn stages_ahead(&self) -> bool {
        self.ahead
    }
    fn write_memory(&mut self, _mem: MemId, _offset: u64, _data: &[u8]) -> BackendResult<()> {
        self.note("write".into());
        Ok(())
    }
    fn read_memory(&mut self, _mem: MemId) -> BackendResult<Vec<u8>> {
        self.note("read".into());
        Ok(vec![7; 4])
    }
    fn build(&mut self, part: &PartitionNodes<'_>) -> BackendResult<BufferHandle> {
        self.note(format!("build {}", segment_of(part)));
        Ok(BufferHandle(0))
    }
    fn launch(&mut self, _buffer: BufferHandle) -> BackendResult<()> {
        self.note("launch".into());
        Ok(())
    }
    fn run_eager(&mut self, part: &PartitionNodes<'_>, _blobs: &BlobStore) -> BackendResult<()> {
        self.note(format!("run {}", segment_of(part)));
        Ok(())
    }
    fn update(&mut self, _buffer: BufferHandle, _part: &PartitionNodes<'_>, patches: &[Patch]) -> BackendResult<UpdateKind> {
        let values: Vec<String> = patches
            .iter()
            .filter_map(|patch| match patch {
                Patch::Arg { value: trace_format::Arg::Value(bytes), .. } => Some(bytes[0].to_string()),
                _ => None,
            })
            .collect();
        self.note(format!("update {}", values.join(",")));
        Ok(UpdateKind::Native)
    }
    fn finish(&mut self) -> BackendResult<()> {
        self.note("finish".into());
        Ok(())
    }
}

/// Four segments of one kernel, each with another value in its second argument; the first
/// starts from memory the host wrote, the third from a host write, the last leaves an expected
/// state.
fn four_segments() -> TraceBuilder {
    let mut trace = TraceBuilder::new();
    let kernel = trace.kernel("k", &[None, Some(4)]);
    let buffer = trace.memory(4);
    for value_of in 0..4 {
        let segment = trace.segment();
        trace.launch(segment, kernel, vec![mem(buffer), value(value_of)], 64);
    }
    trace.initial(SegmentId(0), buffer, vec![1; 4]);
    trace.host_write(SegmentId(2), buffer, 0, vec![2; 4], false);
    trace.expected(SegmentId(3), buffer, vec![7; 4]);
    trace
}

/// The calls of the last run, replaying in `mode` on a backend that stages `ahead` or not.
fn calls(trace: &TraceBuilder, ahead: bool, mode: Mode, compare: bool) -> (Vec<String>, RunReport) {
    let reader = trace.reader();
    let log = Rc::new(RefCell::new(Vec::new()));
    let backend = Box::new(LoggingBackend { ahead, log: log.clone() });
    let mut replayer = Replayer::new(backend, &reader, Overrides::default()).expect("the double loads anything");
    let options = RunOptions { mode, iterations: 2, compare, profile: false, inputs: BTreeMap::new(), rules: HashMap::new() };
    let mut runs = Vec::new();
    let report = replayer
        .run(&options, &mut |_, _| {
            runs.push(log.borrow().len());
        })
        .expect("the double runs anything");
    let log = log.borrow();
    let before_last = runs.iter().rev().nth(1).copied().unwrap_or(0);
    (log[before_last..].to_vec(), report)
}

#[test]
fn segments_are_submitted_back_to_back_until_memory_is_written() {
    let trace = four_segments();
    let (calls, report) = calls(&trace, true, Mode::Eager, false);
    assert_eq!(calls, ["stage 0", "write", "stage 1", "run 0", "run 1", "finish", "stage 2", "write", "stage 3", "run 2", "run 3", "finish"]);
    assert_eq!(report.iterations, 2);
}

#[test]
fn a_backend_that_does_not_stage_ahead_finishes_each_segment_first() {
    let trace = four_segments();
    let (calls, _) = calls(&trace, false, Mode::Eager, false);
    let expected = ["stage 0", "write", "run 0", "finish", "stage 1", "run 1", "finish", "stage 2", "write", "run 2", "finish", "stage 3", "run 3", "finish"];
    assert_eq!(calls, expected);
}

#[test]
fn each_member_is_patched_before_its_own_launch_while_earlier_ones_are_pending() {
    let trace = four_segments();
    let (calls, _) = calls(&trace, true, Mode::Graph, false);
    // The argument varies in the family: each member sets it, the base too.
    let expected = ["stage 0", "write", "stage 1", "update 0", "launch", "update 1", "launch", "finish", "stage 2", "write", "stage 3", "update 2", "launch", "update 3", "launch", "finish"];
    assert_eq!(calls, expected);
}

#[test]
fn a_compared_segment_runs_alone_after_the_others_ran_back_to_back_in_an_untimed_last_run() {
    let trace = four_segments();
    let (calls, report) = calls(&trace, true, Mode::Eager, true);
    // Only the last segment leaves something to compare (its expected state).
    let expected = ["stage 0", "write", "stage 1", "run 0", "run 1", "finish", "stage 2", "write", "run 2", "finish", "stage 3", "run 3", "finish", "read"];
    assert_eq!(calls, expected);
    // Two timed runs, between the warm-up and the compared one.
    assert_eq!(report.iterations, 2);
    let comparison = report.comparison.expect("compared");
    assert!(comparison.passed(), "{comparison:?}");
    assert_eq!(comparison.compared, 1);
}
