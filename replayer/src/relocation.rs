//! Device addresses stored inside memory contents and host data (CUDA's device memory, OpenCL's SVM
//! and unified shared memory): the pointer arrays of batched cuBLAS calls, cuFFT's plans, cuRAND's
//! generator states, the pointer tables of SYCL libraries, linked structures a program builds.
//! Kernel arguments are relocated where they are recorded (`Arg::ValueWithPointers`); addresses in
//! data are found when the data reaches the device: an 8-byte-aligned word that lies inside a
//! recorded allocation (its end included, as end pointers do) is taken for an address into it and
//! moved to where the replay placed that allocation. What the replay reads back is moved the other
//! way, so that it compares with what the program produced.
//!
//! A word of plain data can fall inside a recorded allocation too: NVIDIA's StreamPriorities
//! sample fills 256 MB with consecutive integers, and the pair (32720, 32721) read as one word is
//! 0x00007fd1_00007fd0, an address inside its own buffer; moving it changed two bytes of the
//! program's data. Such a word continues the arithmetic sequence its neighbours form, which an
//! address among other values does not (cuRAND's MTGP32 states each hold one pointer among 4 KB
//! of state; PyTorch's structures hold lone pointers too). So a word that lies in an allocation is
//! taken for an address unless it is alone (no other within `NEIGHBOURHOOD` words) and the middle
//! of three words in arithmetic progression. Pointer arrays, progressions themselves, keep their
//! company.
//!
//! A program that frees memory and allocates again often gets the same address back (batchCUBLAS
//! allocates its matrices anew for each test): a recorded address then lies in several objects,
//! and the one meant is the one in use when the data is (`Relocation::at_segment`), by the
//! segments that name each object (`Lifetimes`).
//!
//! Addresses inside the program's loaded modules move too, with wherever the driver loads them:
//! a device function pointer read from a variable (`cudaMemcpyFromSymbol`, as cuFFT callbacks
//! are set up) and passed back in a kernel argument or data. The replay tells them by a variable's
//! contents as recorded and as its own load left them (`learn_module_words`) and moves exactly
//! those words, in data and in arguments passed by value.

use crate::replay::addresses::may_be_address;
use std::collections::HashMap;
use trace_format::{MemKind, Memory};

/// How many words apart two addresses in data may lie and still vouch for each other.
const NEIGHBOURHOOD: usize = 8;

/// A range of one placement (`start..=end`: end pointers included), the same object's start in
/// the other placement, and the first and last segment naming the object, where known.
#[derive(Clone, Copy, Debug)]
struct Placed {
    start: u64,
    end: u64,
    other: u64,
    span: Option<(u32, u32)>,
}

impl Placed {
    /// How well the object fits `word` in data of segment `now`, best first: in use then, else
    /// the next to be used, else the last used, else of unknown use; among those, one that holds
    /// the word before one that ends there (allocations often follow one another).
    fn rank(&self, word: u64, now: Option<u32>) -> (u8, u32, bool) {
        let (class, order) = match (self.span, now) {
            (Some((first, last)), Some(now)) if first <= now && now <= last => (0, 0),
            (Some((first, _)), Some(now)) if first > now => (1, first),
            (Some((_, last)), Some(_)) => (2, u32::MAX - last),
            _ => (3, 0),
        };
        (class, order, word == self.end)
    }
}

/// Ranges sorted by start, in groups of ranges that overlap (most groups hold one).
struct Ranges {
    placed: Vec<Placed>,
    /// `(start, end, members)`: a group's extent and its members' indices in `placed`.
    groups: Vec<(u64, u64, std::ops::Range<usize>)>,
}

impl Ranges {
    fn new(mut placed: Vec<Placed>) -> Ranges {
        placed.sort_unstable_by_key(|range| (range.start, range.end));
        let mut groups: Vec<(u64, u64, std::ops::Range<usize>)> = Vec::new();
        for (index, range) in placed.iter().enumerate() {
            match groups.last_mut() {
                // Overlapping, not merely touching: an end pointer of one may be the start of the next.
                Some(group) if range.start < group.1 => {
                    group.1 = group.1.max(range.end);
                    group.2.end = index + 1;
                }
                _ => groups.push((range.start, range.end, index..index + 1)),
            }
        }
        Ranges { placed, groups }
    }

    /// Where `word` lies in the other placement, if it lies in a range (in the object `now`
    /// uses, where several hold it).
    fn translate(&self, word: u64, now: Option<u32>) -> Option<u64> {
        let (first, last) = (self.groups.first()?, self.groups.last()?);
        if word < first.0 || word > last.1 {
            return None;
        }
        let index = self.groups.partition_point(|group| group.0 <= word).checked_sub(1)?;
        let (_, end, members) = &self.groups[index];
        if word > *end {
            return None;
        }
        let holding = self.placed[members.clone()].iter().filter(|range| range.start <= word && word <= range.end);
        let chosen = holding.min_by_key(|range| range.rank(word, now))?;
        Some(chosen.other + (word - chosen.start))
    }

    fn apply(&self, bytes: &mut [u8], now: Option<u32>) {
        if self.placed.is_empty() {
            return;
        }
        let words: Vec<u64> = bytes.chunks_exact(8).map(|chunk| u64::from_ne_bytes(chunk.try_into().expect("8 bytes"))).collect();
        let found: Vec<(usize, u64)> = words.iter().enumerate().filter_map(|(index, &word)| Some((index, self.translate(word, now)?))).collect();
        for (at, &(index, moved)) in found.iter().enumerate() {
            let near = |other: Option<&(usize, u64)>| other.is_some_and(|&(other, _)| other.abs_diff(index) <= NEIGHBOURHOOD);
            let accompanied = near(at.checked_sub(1).and_then(|previous| found.get(previous))) || near(found.get(at + 1));
            if accompanied || !in_progression(&words, index) {
                bytes[index * 8..index * 8 + 8].copy_from_slice(&moved.to_ne_bytes());
            }
        }
    }
}

/// Whether `words[index]` is the middle of three words in arithmetic progression.
fn in_progression(words: &[u64], index: usize) -> bool {
    match (index.checked_sub(1).and_then(|previous| words.get(previous)), words.get(index), words.get(index + 1)) {
        (Some(&before), Some(&word), Some(&after)) => word.wrapping_sub(before) == after.wrapping_sub(word),
        _ => false,
    }
}

pub struct Relocation {
    to_replay: Ranges,
    to_recorded: Ranges,
    /// The segment whose data is moved now.
    now: Option<u32>,
    /// Words that are addresses into loaded modules: recorded to replay, and back.
    module_to_replay: HashMap<u64, u64>,
    module_to_recorded: HashMap<u64, u64>,
}

/// Replaces each aligned word `moves` names.
fn move_words(bytes: &mut [u8], moves: &HashMap<u64, u64>) {
    if moves.is_empty() {
        return;
    }
    for chunk in bytes.chunks_exact_mut(8) {
        if let Some(moved) = moves.get(&u64::from_ne_bytes((&*chunk).try_into().expect("8 bytes"))) {
            chunk.copy_from_slice(&moved.to_ne_bytes());
        }
    }
}

/// Memory whose addresses data may hold and the replay may move: stream-ordered memory gets an
/// address per run, and is left out.
fn relocatable(memory: &Memory) -> bool {
    memory.address != 0 && memory.kind != MemKind::StreamOrdered
}

/// Whether recorded objects overlap: the program freed memory and got its addresses again.
pub fn addresses_reused(memories: &[Memory]) -> bool {
    let mut ranges: Vec<(u64, u64)> = memories.iter().filter(|memory| relocatable(memory)).map(|memory| (memory.address, memory.address + memory.size)).collect();
    ranges.sort_unstable();
    ranges.windows(2).any(|pair| pair[1].0 < pair[0].1)
}

impl Relocation {
    /// For the recorded `memories` placed at `placed` (by `MemId` index), in use in the segments
    /// `spans` gives (by `MemId` index; empty where unknown). Memory placed where it was
    /// recorded is left out.
    pub fn new(memories: &[Memory], placed: &[u64], spans: &[Option<(u32, u32)>]) -> Relocation {
        let moved: Vec<Placed> = memories
            .iter()
            .zip(placed)
            .enumerate()
            .filter(|(_, (memory, &at))| relocatable(memory) && at != 0 && at != memory.address)
            .map(|(index, (memory, &at))| Placed { start: memory.address, end: memory.address + memory.size, other: at, span: spans.get(index).copied().flatten() })
            .collect();
        let back = moved.iter().map(|range| Placed { start: range.other, end: range.other + (range.end - range.start), other: range.start, span: range.span }).collect();
        Relocation {
            to_replay: Ranges::new(moved),
            to_recorded: Ranges::new(back),
            now: None,
            module_to_replay: HashMap::new(),
            module_to_recorded: HashMap::new(),
        }
    }

    /// A variable's contents as recorded before anything wrote it, and as this replay loaded its
    /// module: words that differ, both addresses, and no address into recorded memory, are
    /// addresses into the loaded modules (a function pointer, a pointer to another variable).
    pub fn learn_module_words(&mut self, recorded: &[u8], loaded: &[u8]) {
        for (recorded, loaded) in recorded.chunks_exact(8).zip(loaded.chunks_exact(8)) {
            let recorded = u64::from_ne_bytes(recorded.try_into().expect("8 bytes"));
            let loaded = u64::from_ne_bytes(loaded.try_into().expect("8 bytes"));
            let addresses = may_be_address(recorded) && may_be_address(loaded);
            if recorded != loaded && addresses && self.to_replay.translate(recorded, None).is_none() {
                self.module_to_replay.insert(recorded, loaded);
                self.module_to_recorded.insert(loaded, recorded);
            }
        }
    }

    /// Arguments passed by value, about to reach the device: their module addresses moved.
    pub fn module_words_to_replay(&self, bytes: &mut [u8]) {
        move_words(bytes, &self.module_to_replay);
    }

    /// Data from now on belongs to segment `segment`.
    pub fn at_segment(&mut self, segment: u32) {
        self.now = Some(segment);
    }

    /// Recorded data, about to reach the device: its addresses as the replay placed memory.
    pub fn to_replay(&self, bytes: &mut [u8]) {
        self.to_replay.apply(bytes, self.now);
        move_words(bytes, &self.module_to_replay);
    }

    /// Data the replay produced: its addresses as the recording had them.
    pub fn to_recorded(&self, bytes: &mut [u8]) {
        self.to_recorded.apply(bytes, self.now);
        move_words(bytes, &self.module_to_recorded);
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    fn memory(address: u64, size: u64, kind: MemKind) -> Memory {
        Memory { kind, size, address, flags: 0, device: None }
    }

    fn words(values: &[u64]) -> Vec<u8> {
        values.iter().flat_map(|value| value.to_ne_bytes()).collect()
    }

    #[test]
    fn addresses_in_data_move_with_their_allocation_and_back() {
        let memories = [memory(0x7000_0000, 0x100, MemKind::Buffer), memory(0x9000_0000, 0x40, MemKind::Buffer), memory(0xa000_0000, 0x40, MemKind::StreamOrdered)];
        let relocation = Relocation::new(&memories, &[0x3000_0000, 0x9000_0000, 0x5000_0000], &[]);
        // An address into the first, its end, one past it, one into the second (placed where it
        // was), one into stream-ordered memory, a small integer, and 4 bytes left over.
        let recorded = [0x7000_0010, 0x7000_0100, 0x7000_0101, 0x9000_0008, 0xa000_0000, 42];
        let mut data = words(&recorded);
        data.extend([1, 2, 3, 4]);
        relocation.to_replay(&mut data);
        let mut expected = words(&[0x3000_0010, 0x3000_0100, 0x7000_0101, 0x9000_0008, 0xa000_0000, 42]);
        expected.extend([1, 2, 3, 4]);
        assert_eq!(data, expected);
        relocation.to_recorded(&mut data);
        let mut back = words(&recorded);
        back.extend([1, 2, 3, 4]);
        assert_eq!(data, back);
    }

    #[test]
    fn an_address_used_again_moves_to_the_object_in_use_when_the_data_is() {
        // Two matrices the program allocated at one address one after another (segments 0-2
        // and 5-7), placed apart here, and a pointer array naming the address.
        let memories = [memory(0x7000_0000, 0x1_0000, MemKind::Buffer), memory(0x7000_0000, 0x2_0000, MemKind::Buffer)];
        let spans = [Some((0, 2)), Some((5, 7))];
        let mut relocation = Relocation::new(&memories, &[0x3000_0000, 0x5000_0000], &spans);
        assert!(addresses_reused(&memories));
        let moved = |relocation: &Relocation, segment_word: u64| {
            let mut data = words(&[segment_word, 0x7000_0008]);
            relocation.to_replay(&mut data);
            data
        };
        for (segment, expected) in [(1, 0x3000_0000), (3, 0x5000_0000), (6, 0x5000_0000), (9, 0x5000_0000)] {
            relocation.at_segment(segment);
            assert_eq!(moved(&relocation, 0x7000_0000), words(&[expected, expected + 8]), "segment {segment}");
        }
        // One that follows the first in use, inside the group: its start is the first one's end.
        let memories = [memory(0x7000_0000, 0x1_0000, MemKind::Buffer), memory(0x7001_0000, 0x1_0000, MemKind::Buffer), memory(0x7000_0000, 0x2_0000, MemKind::Buffer)];
        let mut following = Relocation::new(&memories, &[0x3000_0000, 0x4000_0000, 0x5000_0000], &[Some((0, 2)), Some((0, 2)), Some((5, 7))]);
        following.at_segment(1);
        assert_eq!(moved(&following, 0x7001_0000), words(&[0x4000_0000, 0x3000_0008]));
        // Past the first one's end only the second holds the address.
        relocation.at_segment(1);
        assert_eq!(moved(&relocation, 0x7001_8000), words(&[0x5001_8000, 0x3000_0008]));
        // And back: each placement is its own object.
        let mut read = words(&[0x3000_0010, 0x5000_0010]);
        relocation.to_recorded(&mut read);
        assert_eq!(read, words(&[0x7000_0010, 0x7000_0010]));
    }

    #[test]
    fn function_pointers_move_with_their_module_and_nothing_else_does() {
        let memories = [memory(0x7000_0000, 0x100, MemKind::Buffer)];
        let mut relocation = Relocation::new(&memories, &[0x3000_0000], &[]);
        // A function pointer, a pointer into recorded memory, a counter the recording had
        // changed, and a word both agree on.
        let recorded = words(&[0x7fbf_137b_1600, 0x7000_0010, 5, 0x7fbf_0000_0000]);
        let loaded = words(&[0x7f12_0000_1600, 0x3000_0010, 0, 0x7fbf_0000_0000]);
        relocation.learn_module_words(&recorded, &loaded);
        let mut data = words(&[0x7fbf_137b_1600, 5, 0x7fbf_137b_1601]);
        relocation.to_replay(&mut data);
        assert_eq!(data, words(&[0x7f12_0000_1600, 5, 0x7fbf_137b_1601]));
        relocation.to_recorded(&mut data);
        assert_eq!(data, words(&[0x7fbf_137b_1600, 5, 0x7fbf_137b_1601]));
        let mut argument = words(&[1, 0x7fbf_137b_1600]);
        relocation.module_words_to_replay(&mut argument);
        assert_eq!(argument, words(&[1, 0x7f12_0000_1600]));
    }

    #[test]
    fn buffers_that_touch_do_not_count_as_reused() {
        let memories = [memory(0x7000_0000, 0x100, MemKind::Buffer), memory(0x7000_0100, 0x100, MemKind::Buffer)];
        assert!(!addresses_reused(&memories));
    }

    #[test]
    fn a_lone_word_in_plain_data_stays_as_it_is() {
        let memories = [memory(0x7fd1_0000_0000, 0x1000_0000, MemKind::Buffer)];
        let relocation = Relocation::new(&memories, &[0x7a00_0000_0000], &[]);
        // Consecutive 4-byte integers, two of which read as an address into the buffer.
        let integers: Vec<u8> = (32700u32..32800).flat_map(|value| value.to_ne_bytes()).collect();
        let mut data = integers.clone();
        relocation.to_replay(&mut data);
        assert_eq!(data, integers, "plain data is not moved");
        // A pointer uploaded alone, and pointers among other values, are.
        let mut alone = words(&[0x7fd1_0000_0040]);
        relocation.to_replay(&mut alone);
        assert_eq!(alone, words(&[0x7a00_0000_0040]));
        // Pointers in company, and a lone pointer among state that is no progression, are.
        let mut mixed = words(&[0x7fd1_0000_0010, 5, 6, 7, 8, 9, 10, 11, 0x7fd1_0000_0100, 1, 2, 3, 4, 5, 6, 7, 8, 9, 10]);
        relocation.to_replay(&mut mixed);
        assert_eq!(mixed, words(&[0x7a00_0000_0010, 5, 6, 7, 8, 9, 10, 11, 0x7a00_0000_0100, 1, 2, 3, 4, 5, 6, 7, 8, 9, 10]));
        let mut state: Vec<u64> = (0..600).map(|value| value * value).collect();
        state[300] = 0x7fd1_0000_0040;
        let mut data = words(&state);
        relocation.to_replay(&mut data);
        state[300] = 0x7a00_0000_0040;
        assert_eq!(data, words(&state));
    }
}
