//! Which initial states to write before a segment. A segment records the contents of memory
//! it is the first to use, and of memory the host changed since it was last read; where that
//! equals what the recording says the previous segments left there, the replay already holds
//! it (if it matched the recording), so only memory the program changed from the host in
//! between is written. That keeps what-if changes (`--set`, `--input`) flowing from one
//! segment to the next.

use std::collections::{BTreeSet, HashMap};
use trace_format::{BlobId, BlobStore, FormatError, HostWrite, MemId, MemState, Node, Segment};

/// The host's writes of a segment in their order, each run of writes to adjacent bytes of one
/// memory object as one: the shim keeps a write per run of pages it saw written between two
/// looks, and UnifiedMemoryPerf's 1,512 segments came with 43,840 of them, each a copy and two
/// synchronizations at replay.
pub fn joined_host_writes(writes: &[HostWrite], blobs: &BlobStore) -> Result<Vec<(MemId, u64, Vec<u8>)>, FormatError> {
    let mut joined: Vec<(MemId, u64, Vec<u8>)> = Vec::new();
    for write in writes {
        let bytes = blobs.get(write.blob)?;
        match joined.last_mut() {
            Some((mem, offset, run)) if *mem == write.mem && *offset + run.len() as u64 == write.offset => run.extend_from_slice(&bytes),
            _ => joined.push((write.mem, write.offset, bytes.into_owned())),
        }
    }
    Ok(joined)
}

/// The memory a segment's nodes use (and may write), each once.
pub fn memory_used<'n>(nodes: impl IntoIterator<Item = &'n Node>) -> Vec<MemId> {
    let mut used = BTreeSet::new();
    for node in nodes {
        let mut command = node.command.clone();
        command.for_each_memory_use(&mut |mem, _| {
            used.insert(*mem);
        });
    }
    used.into_iter().collect()
}

/// What the recording held; at the start of an iteration nothing is known.
#[derive(Default)]
pub struct RecordedContents {
    /// What each memory object held in the recording at the current point.
    known: HashMap<MemId, BlobId>,
}

impl RecordedContents {
    /// The initial states of `segment` that the device does not hold yet.
    pub fn to_write<'s>(&self, segment: &'s Segment) -> Vec<&'s MemState> {
        segment.initial.iter().filter(|s| self.known.get(&s.mem) != Some(&s.blob)).collect()
    }

    /// Records that `segment` ran: it started from its initial states and left its expected
    /// ones; what else its nodes `used` (and may have written), or the host wrote, is no longer
    /// known.
    pub fn segment_ran(&mut self, segment: &Segment, used: &[MemId]) {
        for state in &segment.initial {
            self.known.insert(state.mem, state.blob);
        }
        for write in &segment.host_writes {
            self.known.remove(&write.mem);
        }
        for mem in used {
            self.known.remove(mem);
        }
        for state in &segment.expected {
            self.known.insert(state.mem, state.blob);
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    fn state(mem: u32, blob: u128) -> MemState {
        MemState { mem: MemId(mem), blob: BlobId(blob) }
    }

    fn segment(initial: Vec<MemState>, expected: Vec<MemState>) -> Segment {
        Segment { ordinal: 0, ended_by: "clFinish".to_string(), initial, expected, failed_with: None, printed: None, racy_reads: Vec::new(), host_writes: Vec::new() }
    }

    #[test]
    fn adjacent_host_writes_to_one_memory_are_joined_in_their_order() {
        let mut blobs = BlobStore::default();
        let mut write = |mem: u32, offset: u64, bytes: Vec<u8>| HostWrite { mem: MemId(mem), offset, blob: blobs.insert(bytes), while_running: false };
        // Pages 0 and 1 of memory 1, then page 0 of memory 2, page 2 of memory 1, page 4 (a gap),
        // and page 2 again (later, so it stays after).
        let writes = [write(1, 0, vec![1; 4]), write(1, 4, vec![2; 4]), write(2, 0, vec![3; 4]), write(1, 8, vec![4; 4]), write(1, 16, vec![5; 4]), write(1, 8, vec![6; 4])];
        let joined = joined_host_writes(&writes, &blobs).expect("blobs present");
        let expected = [(1, 0, [vec![1; 4], vec![2; 4]].concat()), (2, 0, vec![3; 4]), (1, 8, vec![4; 4]), (1, 16, vec![5; 4]), (1, 8, vec![6; 4])];
        assert_eq!(joined, expected.map(|(mem, offset, bytes)| (MemId(mem), offset, bytes)));
    }

    #[test]
    fn only_memory_the_host_changed_between_segments_is_written() {
        let first = segment(vec![state(0, 1), state(1, 2)], vec![state(1, 3)]);
        // Memory 1 holds what the first segment left; memory 0 was rewritten by the host.
        let second = segment(vec![state(0, 9), state(1, 3)], vec![]);
        let mut contents = RecordedContents::default();
        assert_eq!(contents.to_write(&first).len(), 2);
        contents.segment_ran(&first, &[]);
        assert_eq!(contents.to_write(&second), vec![&state(0, 9)]);
    }

    #[test]
    fn memory_a_segment_wrote_without_a_recorded_result_is_written_again_when_the_host_changed_it() {
        let first = segment(vec![state(0, 1)], vec![]);
        // The host put back what memory 0 held at first; the first segment's kernel changed it.
        let second = segment(vec![state(0, 1)], vec![]);
        let kernel = Node {
            queue: None,
            segment: trace_format::SegmentId(0),
            command: trace_format::Command::Fill(trace_format::Fill { mem: MemId(0), offset: 0, bytes: 4, pattern: vec![7], rows: None }),
            call: "".into(),
        };
        let mut contents = RecordedContents::default();
        contents.segment_ran(&first, &memory_used([&kernel]));
        assert_eq!(contents.to_write(&second), vec![&state(0, 1)]);
    }
}
