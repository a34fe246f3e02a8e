//! Large byte buffers kept for reuse between what the program's threads read (device memory,
//! data the program received) and what the writer has stored: a fresh 64 MB buffer costs its
//! page faults on every read (simpleStreams reads 64 MB back per step: 22 ms a step, most of it
//! faulting in new pages), a kept one only the copy.

use std::sync::atomic::{AtomicU64, Ordering};
use std::sync::{Mutex, PoisonError};
use std::time::{Duration, Instant};

/// Buffers smaller than this come from the allocator as usual.
const LARGE: usize = 1 << 20;
/// At most this many buffers, of at most this many bytes in all, are kept. A blob's buffer
/// comes back once it is hashed and compressed, 20 ms or more for 64 MB: simpleStreams, reading
/// 64 MB every 6 ms, found none kept for 38 of its 106 reads with four kept at most (256 MB),
/// and a new buffer took 8.2 ms to copy into against 2.2 ms for a kept one (H200 host, 8 threads).
const KEPT_BUFFERS: usize = 16;
const KEPT_BYTES: usize = 1 << 30;

static KEPT: Mutex<Vec<Vec<u8>>> = Mutex::new(Vec::new());

/// Large buffers asked for, and how many of them none kept could serve (reported at the end).
static TAKEN: AtomicU64 = AtomicU64::new(0);
static FRESH: AtomicU64 = AtomicU64::new(0);

/// How many large buffers were asked for so far, and how many of them were new.
pub fn taken() -> (u64, u64) {
    (TAKEN.load(Ordering::Relaxed), FRESH.load(Ordering::Relaxed))
}

/// The smallest kept buffer that holds `len` bytes, if any.
fn take(len: usize) -> Option<Vec<u8>> {
    if len < LARGE {
        return None;
    }
    TAKEN.fetch_add(1, Ordering::Relaxed);
    let mut kept = KEPT.lock().unwrap_or_else(PoisonError::into_inner);
    let fitting = kept.iter().enumerate().filter(|(_, buffer)| buffer.capacity() >= len).min_by_key(|(_, buffer)| buffer.capacity());
    let Some((index, _)) = fitting else {
        FRESH.fetch_add(1, Ordering::Relaxed);
        return None;
    };
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

/// Bytes of large copies made so far, and the nanoseconds they took (reported at the end).
static COPIED_BYTES: AtomicU64 = AtomicU64::new(0);
static COPYING_NS: AtomicU64 = AtomicU64::new(0);

/// How many bytes the large copies made so far held, and how long they took.
pub fn copied() -> (u64, Duration) {
    (COPIED_BYTES.load(Ordering::Relaxed), Duration::from_nanos(COPYING_NS.load(Ordering::Relaxed)))
}

/// A copy of `bytes`.
pub fn copy_of(bytes: &[u8]) -> Vec<u8> {
    if bytes.len() < LARGE {
        return bytes.to_vec();
    }
    let began = Instant::now();
    let copy = large_copy_of(bytes);
    COPIED_BYTES.fetch_add(bytes.len() as u64, Ordering::Relaxed);
    COPYING_NS.fetch_add(began.elapsed().as_nanos() as u64, Ordering::Relaxed);
    copy
}

fn large_copy_of(bytes: &[u8]) -> Vec<u8> {
    if bytes.len() < crate::in_pieces::IN_PARALLEL_FROM {
        return match take(bytes.len()) {
            Some(mut buffer) => {
                buffer.clear();
                buffer.extend_from_slice(bytes);
                buffer
            }
            None => bytes.to_vec(),
        };
    }
    let mut copy = of_len(bytes.len());
    crate::in_pieces::copy(&mut copy, bytes);
    copy
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

    #[test]
    fn a_copy_made_in_pieces_is_exact() {
        // Not a multiple of a piece, so the last piece is short.
        let bytes: Vec<u8> = (0..crate::in_pieces::IN_PARALLEL_FROM + (1 << 20) + 3).map(|index| (index * 7 % 251) as u8).collect();
        assert!(copy_of(&bytes) == bytes);
    }
}
