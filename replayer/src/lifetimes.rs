//! When each memory object is in use: from the first segment that names it to the last (its
//! nodes, initial, expected and host-written states). Objects whose uses never overlap can share
//! storage. A program that allocates and frees buffer after buffer holds little at once, but a
//! replay that created every object of its trace at once would need what the program allocated
//! over its whole run (35 GB for a few minutes of OpenCL-CTS `test_basic`): a backend that cannot
//! hold that shares storage instead (`Backend::share_storage`).

use std::collections::{BTreeSet, BinaryHeap};
use std::cmp::Reverse;
use crate::replay::memory_used;
use trace_format::{FormatError, MemId, TraceReader, TraceSegment};

/// Per memory object, the first and last segment naming it; `None` if no segment does.
pub struct Lifetimes {
    spans: Vec<Option<(u32, u32)>>,
}

/// Which storage each memory object uses (objects of one slot never are in use at once), and
/// which object a slot holds now.
#[derive(Clone, Debug, Default, PartialEq)]
pub struct SharedStorage {
    /// Per memory object, its slot; `None` for objects that keep storage of their own.
    pub slot_of: Vec<Option<usize>>,
    /// Per slot, its size: the largest of its objects.
    pub slot_sizes: Vec<u64>,
    /// Per slot, the object the replay last used there.
    holder: Vec<Option<MemId>>,
}

impl SharedStorage {
    /// The replay uses `mem` now: its slot holds it.
    pub fn use_memory(&mut self, mem: MemId) {
        if let Some(slot) = self.slot_of.get(mem.index()).copied().flatten() {
            self.holder[slot] = Some(mem);
        }
    }

    /// The object whose contents `mem`'s slot holds instead of `mem`'s, if another's.
    pub fn held_instead(&self, mem: MemId) -> Option<MemId> {
        let slot = self.slot_of.get(mem.index()).copied().flatten()?;
        self.holder[slot].filter(|&holder| holder != mem)
    }
}

impl Lifetimes {
    /// One pass over the trace's segments.
    pub fn scan(reader: &TraceReader) -> Result<Lifetimes, FormatError> {
        let mut lifetimes = Lifetimes { spans: vec![None; reader.objects().memories.len()] };
        reader.for_each_segment(|segment| {
            lifetimes.add(&segment);
            Ok::<(), FormatError>(())
        })?;
        Ok(lifetimes)
    }

    /// Per memory object (by `MemId` index), the first and last segment naming it.
    pub fn spans(&self) -> &[Option<(u32, u32)>] {
        &self.spans
    }

    fn add(&mut self, segment: &TraceSegment) {
        let id = segment.id.0;
        let mut named = |mem: MemId| {
            if let Some(span) = self.spans.get_mut(mem.index()) {
                *span = Some(span.map_or((id, id), |(first, _)| (first, id)));
            }
        };
        memory_used(&segment.nodes).into_iter().for_each(&mut named);
        for node in &segment.nodes {
            for_each_allocation(&node.command, &mut named);
        }
        let states = segment.segment.initial.iter().chain(&segment.segment.expected).map(|state| state.mem);
        states.chain(segment.segment.host_writes.iter().map(|write| write.mem)).for_each(named);
    }

    /// Slots for the objects `shares` picks (given their sizes): each object takes the smallest
    /// free slot that holds it, else grows the largest free one, else a new one. Objects no
    /// segment names share slots after every other use.
    pub fn shared_storage(&self, sizes: &[u64], shares: &dyn Fn(usize) -> bool) -> SharedStorage {
        let after_all = self.spans.iter().flatten().map(|&(_, last)| last + 1).max().unwrap_or(0);
        let mut order: Vec<(u32, u32, usize)> = (0..self.spans.len())
            .filter(|&mem| shares(mem))
            .map(|mem| {
                let (first, last) = self.spans[mem].unwrap_or((after_all, after_all));
                (first, last, mem)
            })
            .collect();
        order.sort_unstable();
        let mut storage = SharedStorage { slot_of: vec![None; self.spans.len()], ..SharedStorage::default() };
        let mut busy: BinaryHeap<Reverse<(u32, usize)>> = BinaryHeap::new();
        // Free slots by (size, slot).
        let mut free: BTreeSet<(u64, usize)> = BTreeSet::new();
        for (first, last, mem) in order {
            while let Some(Reverse((_, slot))) = busy.peek().copied().filter(|Reverse((until, _))| *until < first) {
                busy.pop();
                free.insert((storage.slot_sizes[slot], slot));
            }
            let size = sizes[mem];
            let fitting = free.range((size, 0)..).next().copied();
            let slot = match fitting.or_else(|| free.last().copied()) {
                Some(key) => {
                    free.remove(&key);
                    key.1
                }
                None => {
                    storage.slot_sizes.push(0);
                    storage.holder.push(None);
                    storage.slot_sizes.len() - 1
                }
            };
            storage.slot_sizes[slot] = storage.slot_sizes[slot].max(size);
            storage.slot_of[mem] = Some(slot);
            busy.push(Reverse((last, slot)));
        }
        storage
    }
}

/// Stream-ordered allocations and frees name their memory too.
fn for_each_allocation(command: &trace_format::Command, named: &mut dyn FnMut(MemId)) {
    command.for_each_leaf(&mut |leaf| {
        if let trace_format::Command::MemAlloc { mem } | trace_format::Command::MemFree { mem } = leaf {
            named(*mem);
        }
    });
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::test_traces::{mem, TraceBuilder};

    #[test]
    fn objects_in_use_at_different_times_share_a_slot_as_large_as_the_largest() {
        let mut b = TraceBuilder::new();
        let k = b.kernel("k", &[None]);
        let (small, large, overlapping, _unused) = (b.memory(64), b.memory(256), b.memory(128), b.memory(32));
        let first = b.segment();
        b.launch(first, k, vec![mem(small)], 16);
        b.launch(first, k, vec![mem(overlapping)], 16);
        let second = b.segment();
        b.launch(second, k, vec![mem(large)], 16);
        b.expected(second, overlapping, vec![0; 128]);
        let lifetimes = Lifetimes::scan(&b.reader()).expect("the trace reads");
        assert_eq!(lifetimes.spans, [Some((0, 0)), Some((1, 1)), Some((0, 1)), None]);
        let storage = lifetimes.shared_storage(&[64, 256, 128, 32], &|_| true);
        assert_eq!(storage.slot_of, [Some(0), Some(0), Some(1), Some(1)]);
        assert_eq!(storage.slot_sizes, [256, 128]);
        let mut storage = storage;
        storage.use_memory(small);
        assert_eq!((storage.held_instead(small), storage.held_instead(large)), (None, Some(small)));
        storage.use_memory(large);
        assert_eq!((storage.held_instead(small), storage.held_instead(overlapping)), (Some(large), None));
        let kept_apart = lifetimes.shared_storage(&[64, 256, 128, 32], &|mem| mem != 1);
        assert_eq!(kept_apart.slot_of, [Some(0), None, Some(1), Some(0)]);
    }
}
