//! Byte-for-byte comparison of two memory contents, shared by `replay --compare` and `diff`.

use serde::Serialize;

/// `bytes` as hexadecimal pairs in memory order.
pub fn hex(bytes: &[u8]) -> String {
    bytes.iter().map(|byte| format!("{byte:02x}")).collect()
}

#[derive(Clone, Copy, Debug, PartialEq, Eq, Serialize)]
pub struct ByteDifference {
    pub first_offset: u64,
    /// Bytes that differ, counting those only one side has.
    pub differing_bytes: u64,
    pub expected_len: u64,
    pub actual_len: u64,
}

/// `None` when both hold the same bytes.
pub fn byte_difference(expected: &[u8], actual: &[u8]) -> Option<ByteDifference> {
    let common = expected.len().min(actual.len());
    let unequal = |i: &usize| expected[*i] != actual[*i];
    let first = (0..common).find(unequal).or((expected.len() != actual.len()).then_some(common))?;
    let differing = (first..common).filter(unequal).count() + expected.len().abs_diff(actual.len());
    Some(ByteDifference {
        first_offset: first as u64,
        differing_bytes: differing as u64,
        expected_len: expected.len() as u64,
        actual_len: actual.len() as u64,
    })
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn equal_bytes_have_no_difference() {
        assert_eq!(byte_difference(b"abcd", b"abcd"), None);
    }

    #[test]
    fn names_the_first_offset_and_counts_every_differing_byte() {
        let found = byte_difference(b"abcdef", b"abXdYf").map(|d| (d.first_offset, d.differing_bytes));
        assert_eq!(found, Some((2, 2)));
    }

    #[test]
    fn bytes_only_one_side_has_differ() {
        let found = byte_difference(b"abc", b"abcde").map(|d| (d.first_offset, d.differing_bytes));
        assert_eq!(found, Some((3, 2)));
    }
}
