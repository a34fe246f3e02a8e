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
//! program's data. Addresses mostly come in company (pointer arrays, structures of pointers, plans
//! with several), so a word is taken for one when another lies within `NEIGHBOURHOOD` words of
//! it, or when the data is that short (a single pointer uploaded); a lone word is taken for one
//! only when it is an allocation's very start (cuRAND's MTGP32 states each hold one pointer, to
//! parameters allocated on their own, 4 KB apart), which plain values almost never are.

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

    /// Where `word` lies in the other placement, if it lies in a range, and whether it is the
    /// range's start.
    fn translate(&self, word: u64) -> Option<(u64, bool)> {
        let (first, last) = (self.0.first()?, self.0.last()?);
        if word < first.0 || word > last.1 {
            return None;
        }
        let index = self.0.partition_point(|range| range.0 <= word).checked_sub(1)?;
        let (start, end, other) = self.0[index];
        (word <= end).then(|| (other + (word - start), word == start))
    }

    fn apply(&self, bytes: &mut [u8]) {
        if self.0.is_empty() {
            return;
        }
        let word = |chunk: &[u8]| u64::from_ne_bytes(chunk.try_into().expect("8 bytes"));
        let found: Vec<(usize, (u64, bool))> =
            bytes.chunks_exact(8).enumerate().filter_map(|(index, chunk)| Some((index, self.translate(word(chunk))?))).collect();
        let short = bytes.len() / 8 <= NEIGHBOURHOOD;
        for (at, &(index, (moved, at_start))) in found.iter().enumerate() {
            let near = |other: Option<&(usize, (u64, bool))>| other.is_some_and(|&(other, _)| other.abs_diff(index) <= NEIGHBOURHOOD);
            if short || at_start || near(at.checked_sub(1).and_then(|previous| found.get(previous))) || near(found.get(at + 1)) {
                bytes[index * 8..index * 8 + 8].copy_from_slice(&moved.to_ne_bytes());
            }
        }
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
        let mut mixed = words(&[0x7fd1_0000_0010, 5, 6, 7, 8, 9, 10, 11, 0x7fd1_0000_0100, 1, 2, 3, 4, 5, 6, 7, 8, 9, 10]);
        relocation.to_replay(&mut mixed);
        assert_eq!(mixed, words(&[0x7a00_0000_0010, 5, 6, 7, 8, 9, 10, 11, 0x7a00_0000_0100, 1, 2, 3, 4, 5, 6, 7, 8, 9, 10]));
        // A lone allocation start, far from any other address, is one too.
        let mut state: Vec<u64> = (0..600).collect();
        state[300] = 0x7fd1_0000_0000;
        let mut data = words(&state);
        relocation.to_replay(&mut data);
        state[300] = 0x7a00_0000_0000;
        assert_eq!(data, words(&state));
    }
}
