//! Device addresses stored inside memory contents and host data: the pointer arrays of batched
//! cuBLAS calls, cuFFT's plans, cuRAND's generator states, linked structures a program builds.
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

use trace_format::{MemKind, Memory};

/// How many words apart two addresses in data may lie and still vouch for each other.
const NEIGHBOURHOOD: usize = 8;

/// Address ranges, sorted by start: `(start, end, other start)` where `other start` is the same
/// allocation's start in the other placement.
struct Ranges(Vec<(u64, u64, u64)>);

impl Ranges {
    fn new(mut ranges: Vec<(u64, u64, u64)>) -> Ranges {
        ranges.sort_unstable();
        Ranges(ranges)
    }

    /// Where `word` lies in the other placement, if it lies in a range.
    fn translate(&self, word: u64) -> Option<u64> {
        let (first, last) = (self.0.first()?, self.0.last()?);
        if word < first.0 || word > last.1 {
            return None;
        }
        let index = self.0.partition_point(|range| range.0 <= word).checked_sub(1)?;
        let (start, end, other) = self.0[index];
        (word <= end).then(|| other + (word - start))
    }

    fn apply(&self, bytes: &mut [u8]) {
        if self.0.is_empty() {
            return;
        }
        let words: Vec<u64> = bytes.chunks_exact(8).map(|chunk| u64::from_ne_bytes(chunk.try_into().expect("8 bytes"))).collect();
        let found: Vec<(usize, u64)> = words.iter().enumerate().filter_map(|(index, &word)| Some((index, self.translate(word)?))).collect();
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
}

impl Relocation {
    /// For the recorded `memories` placed at `placed` (by `MemId` index). Stream-ordered memory
    /// gets an address per run and is left out, as is memory placed where it was recorded.
    pub fn new(memories: &[Memory], placed: &[u64]) -> Relocation {
        let moved: Vec<(u64, u64, u64)> = memories
            .iter()
            .zip(placed)
            .filter(|(memory, &at)| memory.address != 0 && at != 0 && at != memory.address && memory.kind != MemKind::StreamOrdered)
            .map(|(memory, &at)| (memory.address, at, memory.size))
            .collect();
        Relocation {
            to_replay: Ranges::new(moved.iter().map(|&(recorded, at, size)| (recorded, recorded + size, at)).collect()),
            to_recorded: Ranges::new(moved.iter().map(|&(recorded, at, size)| (at, at + size, recorded)).collect()),
        }
    }

    /// Recorded data, about to reach the device: its addresses as the replay placed memory.
    pub fn to_replay(&self, bytes: &mut [u8]) {
        self.to_replay.apply(bytes);
    }

    /// Data the replay produced: its addresses as the recording had them.
    pub fn to_recorded(&self, bytes: &mut [u8]) {
        self.to_recorded.apply(bytes);
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
        let relocation = Relocation::new(&memories, &[0x3000_0000, 0x9000_0000, 0x5000_0000]);
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
    fn a_lone_word_in_plain_data_stays_as_it_is() {
        let memories = [memory(0x7fd1_0000_0000, 0x1000_0000, MemKind::Buffer)];
        let relocation = Relocation::new(&memories, &[0x7a00_0000_0000]);
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
