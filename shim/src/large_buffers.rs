//! Large byte buffers kept for reuse between what the program's threads read (device memory,
//! data the program received) and what the writer has stored: a fresh 64 MB buffer costs its
//! page faults on every read (simpleStreams reads 64 MB back per step: 22 ms a step, most of it
//! faulting in new pages), a kept one only the copy.

use std::sync::atomic::{AtomicU64, Ordering};
use std::sync::{Mutex, PoisonError};
use std::time::{Duration, Instant};
use xxhash_rust::xxh3::xxh3_64;

/// Buffers smaller than this come from the allocator as usual.
pub const LARGE: usize = 1 << 20;
/// At most this many buffers, of at most this many bytes in all, are kept.
const KEPT_BUFFERS: usize = 8;
const KEPT_BYTES: usize = 256 << 20;

/// Copies of at least this many bytes are made by several threads, `PIECE` bytes at a time.
const COPIED_IN_PIECES_FROM: usize = 16 << 20;
const PIECE: usize = 2 << 20;
const COPYING_THREADS: usize = 8;

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

/// Bytes of large copies made so far, and the nanoseconds they took; the same for large data
/// found unchanged by hashing it in place (all reported at the end).
static COPIED_BYTES: AtomicU64 = AtomicU64::new(0);
static COPYING_NS: AtomicU64 = AtomicU64::new(0);
static HASHED_BYTES: AtomicU64 = AtomicU64::new(0);
static HASHING_NS: AtomicU64 = AtomicU64::new(0);

/// How many bytes the large copies made so far held, and how long they took.
pub fn copied() -> (u64, Duration) {
    (COPIED_BYTES.load(Ordering::Relaxed), Duration::from_nanos(COPYING_NS.load(Ordering::Relaxed)))
}

/// How many bytes `piece_hashes` hashed in place so far, and how long it took.
pub fn hashed() -> (u64, Duration) {
    (HASHED_BYTES.load(Ordering::Relaxed), Duration::from_nanos(HASHING_NS.load(Ordering::Relaxed)))
}

/// Adds a large operation on `len` bytes since `began` to `bytes` and `ns`.
fn count(bytes: &AtomicU64, ns: &AtomicU64, len: usize, began: Instant) {
    bytes.fetch_add(len as u64, Ordering::Relaxed);
    ns.fetch_add(began.elapsed().as_nanos() as u64, Ordering::Relaxed);
}

/// A copy of `bytes`.
pub fn copy_of(bytes: &[u8]) -> Vec<u8> {
    if bytes.len() < LARGE {
        return bytes.to_vec();
    }
    let began = Instant::now();
    let mut copy = of_len(bytes.len());
    in_pieces(copy.chunks_mut(PIECE).zip(bytes.chunks(PIECE)).collect(), |(to, from)| to.copy_from_slice(from));
    count(&COPIED_BYTES, &COPYING_NS, bytes.len(), began);
    copy
}

/// A copy of `bytes` (at least `LARGE` of them) and the hash of each `PIECE` of it, as
/// `piece_hashes` gives them: hashed as copied, while in cache.
pub fn hashed_copy_of(bytes: &[u8]) -> (Vec<u8>, Vec<u64>) {
    let began = Instant::now();
    let mut copy = of_len(bytes.len());
    let mut hashes = vec![0; bytes.len().div_ceil(PIECE)];
    let pieces = copy.chunks_mut(PIECE).zip(bytes.chunks(PIECE)).zip(&mut hashes);
    in_pieces(pieces.collect(), |((to, from), hash)| {
        to.copy_from_slice(from);
        *hash = xxh3_64(to);
    });
    count(&COPIED_BYTES, &COPYING_NS, bytes.len(), began);
    (copy, hashes)
}

/// The hash of each `PIECE` of `bytes`, read in place: a large read costs about half a copy,
/// which also writes.
pub fn piece_hashes(bytes: &[u8]) -> Vec<u64> {
    let began = Instant::now();
    let mut hashes = vec![0; bytes.len().div_ceil(PIECE)];
    in_pieces(bytes.chunks(PIECE).zip(&mut hashes).collect(), |(piece, hash)| *hash = xxh3_64(piece));
    count(&HASHED_BYTES, &HASHING_NS, bytes.len(), began);
    hashes
}

/// Runs `work` on each piece: on this thread alone for fewer than `COPIED_IN_PIECES_FROM`
/// bytes' worth, else on this thread and up to `COPYING_THREADS - 1` more, as one core's copy
/// bandwidth held the program (simpleStreams receives 64 MB per step, about 6 ms of one core on
/// the H100's host). A thread that cannot start leaves its share here.
fn in_pieces<T: Send>(pieces: Vec<T>, work: impl Fn(T) + Sync) {
    let threads = match pieces.len() * PIECE >= COPIED_IN_PIECES_FROM {
        true => std::thread::available_parallelism().map_or(1, usize::from).min(COPYING_THREADS),
        false => 1,
    };
    let pieces = Mutex::new(pieces);
    let work_through = || loop {
        let Some(piece) = pieces.lock().unwrap_or_else(PoisonError::into_inner).pop() else { return };
        work(piece);
    };
    std::thread::scope(|scope| {
        for _ in 1..threads {
            let _ = std::thread::Builder::new().spawn_scoped(scope, work_through);
        }
        work_through();
    });
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
        let bytes: Vec<u8> = (0..COPIED_IN_PIECES_FROM + PIECE / 2 + 3).map(|index| (index * 7 % 251) as u8).collect();
        assert!(copy_of(&bytes) == bytes);
    }
}
