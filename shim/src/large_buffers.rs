//! Large byte buffers kept for reuse between what the program's threads read (device memory,
//! data the program received) and what the writer has stored: a fresh 64 MB buffer costs its
//! page faults on every read (simpleStreams reads 64 MB back per step: 22 ms a step, most of it
//! faulting in new pages), a kept one only the copy.

use std::sync::{Mutex, PoisonError};

/// Buffers smaller than this come from the allocator as usual.
const LARGE: usize = 1 << 20;
/// At most this many buffers, of at most this many bytes in all, are kept.
const KEPT_BUFFERS: usize = 8;
const KEPT_BYTES: usize = 256 << 20;

static KEPT: Mutex<Vec<Vec<u8>>> = Mutex::new(Vec::new());

/// The smallest kept buffer that holds `len` bytes, if any.
fn take(len: usize) -> Option<Vec<u8>> {
    if len < LARGE {
        return None;
    }
    let mut kept = KEPT.lock().unwrap_or_else(PoisonError::into_inner);
    let fitting = kept.iter().enumerate().filter(|(_, buffer)| buffer.capacity() >= len).min_by_key(|(_, buffer)| buffer.capacity());
    let index = fitting.map(|(index, _)| index)?;
    Some(kept.swap_remove(index))
}

/// `len` bytes for a caller that overwrites them all (zero in a new buffer, anything in a kept one).
pub fn of_len(len: usize) -> Vec<u8> {
    match take(len) {
        Some(mut buffer) => {
            // Truncating keeps bytes the buffer held (initialized); only a longer length writes.
            buffer.truncate(len);
            buffer.resize(len, 0);
            buffer
        }
        None => vec![0; len],
    }
}

/// A copy of `bytes`.
pub fn copy_of(bytes: &[u8]) -> Vec<u8> {
    match take(bytes.len()) {
        Some(mut buffer) => {
            buffer.clear();
            buffer.extend_from_slice(bytes);
            buffer
        }
        None => bytes.to_vec(),
    }
}

/// A buffer its user is done with, kept for the next large read if there is room.
pub fn give_back(buffer: Vec<u8>) {
    if buffer.capacity() < LARGE {
        return;
    }
    let mut kept = KEPT.lock().unwrap_or_else(PoisonError::into_inner);
    let kept_bytes: usize = kept.iter().map(Vec::capacity).sum();
    if kept.len() < KEPT_BUFFERS && kept_bytes + buffer.capacity() <= KEPT_BYTES {
        kept.push(buffer);
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn a_large_buffer_given_back_serves_the_next_large_read_small_ones_are_not_kept() {
        let first = of_len(3 << 20);
        let address = first.as_ptr();
        give_back(first);
        give_back(vec![1; 100]);
        let copy = copy_of(&vec![7u8; 2 << 20]);
        assert_eq!(copy.as_ptr(), address);
        assert!(copy.len() == 2 << 20 && copy.iter().all(|&byte| byte == 7));
        let longer = {
            give_back(copy);
            of_len(3 << 20)
        };
        assert_eq!(longer.len(), 3 << 20);
        assert!(longer[..2 << 20].iter().all(|&byte| byte == 7) && longer[2 << 20..].iter().all(|&byte| byte == 0));
    }
}
