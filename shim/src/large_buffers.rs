//! Large byte buffers kept for reuse between what the program's threads read (device memory,
//! data the program received) and what the writer has stored: a fresh 64 MB buffer costs its
//! page faults on every read (simpleStreams reads 64 MB back per step: 22 ms a step, most of it
//! faulting in new pages), a kept one only the copy.

use std::sync::atomic::{AtomicU64, Ordering};
use std::sync::{mpsc, Arc, Condvar, Mutex, OnceLock, PoisonError};
use std::time::{Duration, Instant};

/// Buffers smaller than this come from the allocator as usual.
const LARGE: usize = 1 << 20;
/// At most this many buffers, of at most this many bytes in all, are kept. A blob's buffer
/// comes back once it is hashed and compressed, 20 ms or more for 64 MB: simpleStreams, reading
/// 64 MB every 6 ms, found none kept for 38 of its 106 reads with four kept at most (256 MB),
/// and a new buffer took 8.2 ms to copy into against 2.2 ms for a kept one (H200 host, 8 threads).
const KEPT_BUFFERS: usize = 16;
const KEPT_BYTES: usize = 1 << 30;

/// Copies of at least this many bytes are made by several threads, `PIECE` bytes at a time.
const COPIED_IN_PIECES_FROM: usize = 16 << 20;
const PIECE: usize = 2 << 20;
/// 64 MB copied by 8 threads took 2.2 ms on the H200's host, by 12 1.7 ms, by 16 1.9 ms.
const COPYING_THREADS: usize = 12;

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
    if bytes.len() < COPIED_IN_PIECES_FROM {
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
    copy_in_pieces(&mut copy, bytes);
    copy
}

/// Copies `from` into `to` (as long) in pieces, on this thread and up to `COPYING_THREADS - 1`
/// copying threads: one core's copy bandwidth held the program (simpleStreams receives 64 MB per
/// step, about 6 ms of one core on the H100's host). The threads stay: starting and joining 7
/// took 0.28 ms a copy on the H200's host, against 2.2 ms for the copy. Without them (none
/// could start), this thread copies it all.
fn copy_in_pieces(to: &mut [u8], from: &[u8]) {
    let copy = Arc::new(CopyJob {
        pieces: Mutex::new(to.chunks_mut(PIECE).zip(from.chunks(PIECE)).map(|(to, from)| Piece { to: to.as_mut_ptr(), from: from.as_ptr(), len: to.len() }).collect()),
        unfinished: Mutex::new(to.len().div_ceil(PIECE)),
        finished: Condvar::new(),
    });
    for helper in helpers() {
        let _ = helper.send(Arc::clone(&copy));
    }
    copy.work_through();
    let mut unfinished = copy.unfinished.lock().unwrap_or_else(PoisonError::into_inner);
    while *unfinished > 0 {
        unfinished = copy.finished.wait(unfinished).unwrap_or_else(PoisonError::into_inner);
    }
}

/// One large copy shared with the copying threads.
struct CopyJob {
    pieces: Mutex<Vec<Piece>>,
    /// Pieces not yet copied: `copy_in_pieces` returns, and its borrows end, at zero.
    unfinished: Mutex<usize>,
    finished: Condvar,
}

/// `len` bytes to copy from `from` to `to`, borrowed by `copy_in_pieces` until it returns.
struct Piece {
    to: *mut u8,
    from: *const u8,
    len: usize,
}

// SAFETY: a piece is copied by one thread, while `copy_in_pieces` holds its borrows.
unsafe impl Send for Piece {}

impl CopyJob {
    fn work_through(&self) {
        loop {
            let Some(piece) = self.pieces.lock().unwrap_or_else(PoisonError::into_inner).pop() else { return };
            // SAFETY: disjoint pieces of `copy_in_pieces`'s slices, which outlive every piece's
            // copy (it waits for `unfinished` to reach zero).
            unsafe { std::ptr::copy_nonoverlapping(piece.from, piece.to, piece.len) };
            let mut unfinished = self.unfinished.lock().unwrap_or_else(PoisonError::into_inner);
            *unfinished -= 1;
            if *unfinished == 0 {
                self.finished.notify_all();
            }
        }
    }
}

/// The copying threads, started at the first large copy: one fewer than the machine's cores, and
/// `COPYING_THREADS - 1` at most.
fn helpers() -> &'static [mpsc::Sender<Arc<CopyJob>>] {
    static HELPERS: OnceLock<Vec<mpsc::Sender<Arc<CopyJob>>>> = OnceLock::new();
    HELPERS.get_or_init(|| {
        let threads = std::thread::available_parallelism().map_or(1, usize::from).min(COPYING_THREADS);
        (1..threads)
            .map_while(|index| {
                let (send, copies) = mpsc::channel::<Arc<CopyJob>>();
                let spawned = std::thread::Builder::new().name(format!("reprise-copy-{index}")).spawn(move || {
                    while let Ok(copy) = copies.recv() {
                        copy.work_through();
                    }
                });
                spawned.ok().map(|_| send)
            })
            .collect()
    })
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
    fn copies_made_in_pieces_at_once_from_several_threads_are_exact() {
        let sources: Vec<Vec<u8>> = (0..4u8).map(|seed| (0..COPIED_IN_PIECES_FROM + 5).map(|index| (index as u8).wrapping_mul(seed)).collect()).collect();
        std::thread::scope(|scope| {
            for source in &sources {
                scope.spawn(|| {
                    for _ in 0..3 {
                        assert!(copy_of(source) == *source);
                    }
                });
            }
        });
    }

    #[test]
    fn a_copy_made_in_pieces_is_exact() {
        // Not a multiple of a piece, so the last piece is short.
        let bytes: Vec<u8> = (0..COPIED_IN_PIECES_FROM + PIECE / 2 + 3).map(|index| (index * 7 % 251) as u8).collect();
        assert!(copy_of(&bytes) == bytes);
    }
}
