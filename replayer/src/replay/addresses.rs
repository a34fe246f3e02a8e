//! Words that hold addresses. A kernel that stores where something lies (`(ulong)&buffer[0]`, the
//! address of a local or constant variable, as OpenCL-CTS `kernel_memory_alignment_*` does)
//! leaves the recording process's addresses in the recording and this process's in the replay:
//! they differ by where memory lies, not by what ran, and are not failed.

use std::ops::Range;

/// Whether a word could be a user-space address above the first 4 GB, where x86_64 and aarch64
/// processes map their heaps and libraries and the CUDA driver its memory and modules.
pub fn may_be_address(word: u64) -> bool {
    (1 << 32..1 << 47).contains(&word)
}

/// Addresses are 64-bit words.
const WORD: usize = 8;

/// The aligned 8-byte words that `differing` (sorted byte ranges) touches in which the expected
/// value may be an address of the recording and the actual one is an address this process has
/// mapped (`/proc/self/maps`, read only where a word may be one: the replay maps more as it goes).
pub fn address_words(expected: &[u8], actual: &[u8], differing: &[Range<usize>]) -> Vec<Range<usize>> {
    let mut mappings: Option<Vec<Range<u64>>> = None;
    let mut mapped = |address: u64| {
        let ranges = mappings.get_or_insert_with(read_mappings);
        let after = ranges.partition_point(|range| range.start <= address);
        after > 0 && ranges[after - 1].contains(&address)
    };
    let mut words: Vec<Range<usize>> = Vec::new();
    let common = expected.len().min(actual.len()) / WORD * WORD;
    let value = |bytes: &[u8], at: usize| u64::from_ne_bytes(std::array::from_fn(|byte| bytes[at + byte]));
    for range in differing {
        // A word the previous range ended in was looked at already.
        let mut at = (range.start / WORD * WORD).max(words.last().map_or(0, |last| last.end));
        while at < range.end.min(common) {
            if may_be_address(value(expected, at)) && mapped(value(actual, at)) {
                match words.last_mut() {
                    Some(last) if last.end == at => last.end = at + WORD,
                    _ => words.push(at..at + WORD),
                }
            }
            at += WORD;
        }
    }
    words
}

fn read_mappings() -> Vec<Range<u64>> {
    let text = std::fs::read_to_string("/proc/self/maps").unwrap_or_default();
    let mut ranges: Vec<Range<u64>> = text
        .lines()
        .filter_map(|line| {
            let (start, end) = line.split_whitespace().next()?.split_once('-')?;
            Some(u64::from_str_radix(start, 16).ok()?..u64::from_str_radix(end, 16).ok()?)
        })
        .collect();
    ranges.sort_unstable_by_key(|range| range.start);
    ranges
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn a_word_that_was_an_address_and_is_one_here_holds_an_address() {
        let here = Box::new(7u64);
        let recorded: u64 = 0x7f12_3456_7000;
        let expected = [recorded.to_ne_bytes(), 42u64.to_ne_bytes()].concat();
        let actual = [(&*here as *const u64 as u64).to_ne_bytes(), 43u64.to_ne_bytes()].concat();
        assert_eq!(address_words(&expected, &actual, &[1..3, 5..6, 8..9]), [0..8]);
        // A small number is no address, on either side.
        let small = [5u64.to_ne_bytes(), 42u64.to_ne_bytes()].concat();
        assert!(address_words(&small, &actual, &[0..8]).is_empty());
        assert!(address_words(&expected, &small, &[0..8]).is_empty());
    }
}
