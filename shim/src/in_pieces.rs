//! Large host memory copied, hashed or compressed in pieces, by the calling thread and up to
//! `THREADS - 1` helper threads at once: one core's memory bandwidth held the program
//! (simpleStreams receives 64 MB per step, about 6 ms of one core on the H100's host). The
//! helpers stay: starting and joining 7 took 0.28 ms a copy on the H200's host, against 2.2 ms
//! for the copy. Without them (none could start), the calling thread does it all.

use std::cell::RefCell;
use std::sync::atomic::{AtomicU64, Ordering};
use std::sync::{mpsc, Arc, Condvar, Mutex, OnceLock, PoisonError};
use std::time::{Duration, Instant};
use trace_format::BlobId;

/// Memory of at least this many bytes is worked on by several threads, `PIECE` bytes at a time.
pub const IN_PARALLEL_FROM: usize = 16 << 20;
const PIECE: usize = 2 << 20;
// A compressed piece is whole chunks of the blob's stored form.
const _: () = assert!(PIECE.is_multiple_of(trace_format::CHUNK_LEN));
/// 64 MB copied by 8 threads took 2.2 ms on the H200's host, by 12 1.7 ms, by 16 1.9 ms; but
/// compressing is bound by the cores, not by memory: simpleStreams' 6,480 MB took 106 ms on 12
/// threads and 61 ms on 16 (recording at 1.36x and 1.31x of the program alone).
const THREADS: usize = 16;

/// Copies `from` into `to` (as long).
pub fn copy(to: &mut [u8], from: &[u8]) {
    let pieces = to.chunks_mut(PIECE).zip(from.chunks(PIECE)).map(|(to, from)| Piece { work: Work::Copy(to.as_mut_ptr()), from: from.as_ptr(), len: to.len().min(from.len()) });
    work_through(pieces.collect(), from.len());
}

/// Bytes fingerprinted so far, and the nanoseconds it took (reported at the end).
static FINGERPRINTED_BYTES: AtomicU64 = AtomicU64::new(0);
static FINGERPRINTING_NS: AtomicU64 = AtomicU64::new(0);

/// How many bytes were fingerprinted so far, and how long it took.
pub fn fingerprinted() -> (u64, Duration) {
    (FINGERPRINTED_BYTES.load(Ordering::Relaxed), Duration::from_nanos(FINGERPRINTING_NS.load(Ordering::Relaxed)))
}

/// The contents of `bytes` told apart as a blob's id tells them (xxh3-128), but hashed a piece
/// per thread: the hash of the pieces' hashes, so not their blob id.
pub fn fingerprint(bytes: &[u8]) -> u128 {
    let began = Instant::now();
    let pieces = bytes.chunks(PIECE).map(|from| Piece { work: Work::Hash, from: from.as_ptr(), len: from.len() });
    let done = work_through(pieces.collect(), bytes.len());
    FINGERPRINTED_BYTES.fetch_add(bytes.len() as u64, Ordering::Relaxed);
    FINGERPRINTING_NS.fetch_add(began.elapsed().as_nanos() as u64, Ordering::Relaxed);
    joined(&done)
}

/// The fingerprint of contents whose pieces `done` hashed.
fn joined(done: &[Done]) -> u128 {
    let joined: Vec<u8> = done.iter().flat_map(|piece| piece.hash.to_le_bytes()).collect();
    BlobId::of(&joined).0
}

/// Bytes compressed where they lay so far, and the nanoseconds it took (reported at the end).
static COMPRESSED_BYTES: AtomicU64 = AtomicU64::new(0);
static COMPRESSING_NS: AtomicU64 = AtomicU64::new(0);

/// How many bytes were compressed where they lay so far, and how long it took.
pub fn compressed() -> (u64, Duration) {
    (COMPRESSED_BYTES.load(Ordering::Relaxed), Duration::from_nanos(COMPRESSING_NS.load(Ordering::Relaxed)))
}

/// Large contents that lz4 shrinks, compressed where they lie, a piece per thread, without a
/// copy: each piece's chunks of the blob's stored form (`trace_format::compress_piece`), and the
/// blob's id from the hashes of the compressed pieces (`BlobId::of_compressed_pieces`: lz4
/// compresses the same contents alike), which costs a fraction of hashing the contents (half of
/// the work on simpleStreams' results). Memory read once and little written beats a copy that
/// the preparing threads then read twice (simpleStreams receives 64 MB of new contents per
/// step). `None` for contents too short to share out, or that do not compress.
pub fn compress(bytes: &[u8]) -> Option<(BlobId, Vec<Vec<u8>>)> {
    if bytes.len() < IN_PARALLEL_FROM || !trace_format::worth_compressing(bytes) {
        return None;
    }
    let began = Instant::now();
    let pieces = bytes.chunks(PIECE).map(|from| Piece { work: Work::Compress, from: from.as_ptr(), len: from.len() });
    let done = work_through(pieces.collect(), bytes.len());
    COMPRESSED_BYTES.fetch_add(bytes.len() as u64, Ordering::Relaxed);
    COMPRESSING_NS.fetch_add(began.elapsed().as_nanos() as u64, Ordering::Relaxed);
    let id = BlobId::of_compressed_pieces(bytes.len(), done.iter().map(|piece| piece.hash));
    let stored = done.into_iter().map(|piece| piece.compressed).collect::<Option<Vec<Vec<u8>>>>()?;
    // A compressible start (the probe) can hide a body that is not: then a copy, stored raw.
    let stored_len: usize = stored.iter().map(Vec::len).sum();
    (stored_len < bytes.len() - bytes.len() / 8).then_some((id, stored))
}

/// What is done with a piece.
enum Work {
    /// Copied to this address.
    Copy(*mut u8),
    Hash,
    /// Compressed, and the compressed bytes hashed.
    Compress,
    /// Panics: how a test makes work fail.
    #[cfg(test)]
    Panic,
}

/// `len` bytes at `from` to work on; borrowed by `work_through` until it returns.
struct Piece {
    work: Work,
    from: *const u8,
    len: usize,
}

// SAFETY: a piece is worked on by one thread, while `work_through` holds its borrows.
unsafe impl Send for Piece {}

/// What work on a piece gave.
#[derive(Default)]
struct Done {
    /// Its hash (of its compressed form, where it was compressed).
    hash: u128,
    /// Its chunks of a stored blob, where it was compressed (`None` where lz4 failed).
    compressed: Option<Vec<u8>>,
}

thread_local! {
    /// Where this thread compresses pieces, kept: zeroing a fresh buffer for each cost as much
    /// as compressing. Gone on a thread that is exiting (the program's main thread in the
    /// shim's exit handler, whose thread-locals glibc destroyed first): then a fresh one.
    static SCRATCH: RefCell<Vec<u8>> = const { RefCell::new(Vec::new()) };
}

impl Piece {
    /// Copies, hashes or compresses the piece.
    ///
    /// # Safety
    /// `from` (and the address a copy goes to) hold `len` bytes, not overlapping, nobody else writes.
    unsafe fn work(&self) -> Done {
        // SAFETY: as the caller promises.
        let from = unsafe { std::slice::from_raw_parts(self.from, self.len) };
        match self.work {
            Work::Hash => Done { hash: BlobId::of(from).0, compressed: None },
            Work::Copy(to) => {
                // SAFETY: as the caller promises.
                unsafe { std::ptr::copy_nonoverlapping(self.from, to, self.len) };
                Done::default()
            }
            Work::Compress => {
                let compress = |scratch: &mut Vec<u8>| {
                    let compressed = trace_format::compress_piece(from, scratch, 0, &mut |_| ()).map(|end| scratch[..end].to_vec());
                    Done { hash: compressed.as_deref().map_or(0, |compressed| BlobId::of(compressed).0), compressed }
                };
                SCRATCH.try_with(|scratch| compress(&mut scratch.borrow_mut())).unwrap_or_else(|_| compress(&mut Vec::new()))
            }
            #[cfg(test)]
            Work::Panic => {
                tests::PANICKED.fetch_add(1, Ordering::Relaxed);
                panic!("a piece's work failed")
            }
        }
    }
}

/// One large piece of work shared with the helper threads.
struct Job {
    /// Pieces not taken yet, with their places.
    pieces: Mutex<Vec<(usize, Piece)>>,
    progress: Mutex<Progress>,
    finished: Condvar,
}

struct Progress {
    /// Pieces not finished yet: `work_through` returns, and its borrows end, at zero.
    unfinished: usize,
    /// What each piece's work gave, by place.
    results: Vec<Done>,
    /// The first piece's work that panicked: raised again on the caller's thread once no thread
    /// reads its memory any more (a helper that died with it would have left the caller waiting).
    panicked: Option<Box<dyn std::any::Any + Send>>,
}

impl Job {
    fn take_pieces(&self) {
        loop {
            let Some((place, piece)) = self.pieces.lock().unwrap_or_else(PoisonError::into_inner).pop() else { return };
            // SAFETY: disjoint pieces of `work_through`'s slices, which outlive every piece's
            // work (it waits for `unfinished` to reach zero).
            let result = std::panic::catch_unwind(std::panic::AssertUnwindSafe(|| unsafe { piece.work() }));
            let mut progress = self.progress.lock().unwrap_or_else(PoisonError::into_inner);
            match result {
                Ok(done) => progress.results[place] = done,
                Err(payload) => {
                    progress.panicked.get_or_insert(payload);
                }
            }
            progress.unfinished -= 1;
            if progress.unfinished == 0 {
                self.finished.notify_all();
            }
        }
    }
}

/// Works through `pieces` of `len` bytes in all, with the helpers where that is large; returns
/// what each piece's work gave.
fn work_through(pieces: Vec<Piece>, len: usize) -> Vec<Done> {
    if len < IN_PARALLEL_FROM {
        // SAFETY: the callers' pieces, as `Piece::work` requires.
        return pieces.iter().map(|piece| unsafe { piece.work() }).collect();
    }
    let count = pieces.len();
    let job = Arc::new(Job {
        pieces: Mutex::new(pieces.into_iter().enumerate().collect()),
        progress: Mutex::new(Progress { unfinished: count, results: std::iter::repeat_with(Done::default).take(count).collect(), panicked: None }),
        finished: Condvar::new(),
    });
    for helper in helpers() {
        let _ = helper.send(Arc::clone(&job));
    }
    job.take_pieces();
    let mut progress = job.progress.lock().unwrap_or_else(PoisonError::into_inner);
    while progress.unfinished > 0 {
        progress = job.finished.wait(progress).unwrap_or_else(PoisonError::into_inner);
    }
    if let Some(payload) = progress.panicked.take() {
        drop(progress);
        std::panic::resume_unwind(payload);
    }
    std::mem::take(&mut progress.results)
}

/// The helper threads, started at the first large piece of work: one fewer than the machine's
/// cores, and `THREADS - 1` at most.
fn helpers() -> &'static [mpsc::Sender<Arc<Job>>] {
    static HELPERS: OnceLock<Vec<mpsc::Sender<Arc<Job>>>> = OnceLock::new();
    HELPERS.get_or_init(|| {
        let threads = std::thread::available_parallelism().map_or(1, usize::from).min(THREADS);
        (1..threads)
            .map_while(|index| {
                let (send, jobs) = mpsc::channel::<Arc<Job>>();
                let spawned = std::thread::Builder::new().name(format!("reprise-pieces-{index}")).spawn(move || {
                    while let Ok(job) = jobs.recv() {
                        job.take_pieces();
                    }
                });
                spawned.ok().map(|_| send)
            })
            .collect()
    })
}

#[cfg(test)]
mod tests {
    use super::*;

    /// Pieces whose work panicked (`Work::Panic`).
    pub static PANICKED: std::sync::atomic::AtomicUsize = std::sync::atomic::AtomicUsize::new(0);

    fn patterned(len: usize, seed: u8) -> Vec<u8> {
        (0..len).map(|index| (index * 7 % 251) as u8 ^ seed).collect()
    }

    #[test]
    fn copies_made_in_pieces_at_once_from_several_threads_are_exact() {
        // Not a multiple of a piece, so the last piece is short.
        let sources: Vec<Vec<u8>> = (0..4).map(|seed| patterned(IN_PARALLEL_FROM + PIECE / 2 + 3, seed)).collect();
        std::thread::scope(|scope| {
            for source in &sources {
                scope.spawn(|| {
                    for _ in 0..3 {
                        let mut copied = vec![0; source.len()];
                        copy(&mut copied, source);
                        assert!(copied == *source);
                    }
                });
            }
        });
    }

    #[test]
    fn fingerprints_tell_contents_apart_wherever_they_differ() {
        // Hashed here alone, and with the helpers; the last piece short.
        for len in [2 * PIECE + 5, IN_PARALLEL_FROM + PIECE / 2 + 3] {
            let bytes = patterned(len, 0);
            let at_first = fingerprint(&bytes);
            assert_eq!(fingerprint(&bytes.clone()), at_first, "the same contents elsewhere");
            for changed in [0, PIECE - 1, PIECE, len - 1] {
                let mut other = bytes.clone();
                other[changed] ^= 1;
                assert_ne!(fingerprint(&other), at_first, "a byte at {changed} of {len} changed");
            }
            // The first two pieces swapped: each piece's hash is the same, their order is not.
            let swapped = [&bytes[PIECE..2 * PIECE], &bytes[..PIECE], &bytes[2 * PIECE..]].concat();
            assert_ne!(fingerprint(&swapped), at_first);
        }
    }

    #[test]
    fn a_piece_whose_work_panics_is_raised_on_the_caller_once_every_piece_is_done() {
        let bytes = patterned(IN_PARALLEL_FROM + 3, 0);
        // Every piece panics, on the helpers too: a helper that died with its piece would leave the
        // caller waiting for it.
        let pieces: Vec<Piece> = bytes.chunks(PIECE).map(|from| Piece { work: Work::Panic, from: from.as_ptr(), len: from.len() }).collect();
        let count = pieces.len();
        assert!(std::panic::catch_unwind(|| work_through(pieces, bytes.len())).is_err());
        // Not raised before every piece was worked on: until then helpers read the memory.
        assert_eq!(PANICKED.load(Ordering::Relaxed), count);
        // The helpers live on.
        assert_eq!(fingerprint(&bytes), fingerprint(&bytes.clone()));
    }

    #[test]
    fn contents_compressed_where_they_lie_are_told_apart_by_their_compressed_form() {
        let len = IN_PARALLEL_FROM + PIECE / 2 + 3;
        let bytes = patterned(len, 0);
        let (at_first, pieces) = compress(&bytes).expect("patterned bytes compress");
        assert_eq!(trace_format::PreparedBlob::in_pieces(at_first, len, pieces).to_raw().as_deref(), Ok(&bytes[..]));
        assert_eq!(compress(&bytes.clone()).expect("compressed").0, at_first, "the same contents elsewhere");
        for changed in [0, PIECE - 1, PIECE, len - 1] {
            let mut other = bytes.clone();
            other[changed] ^= 1;
            assert_ne!(compress(&other).expect("compressed").0, at_first, "a byte at {changed} changed");
        }
        assert!(compress(&bytes[..IN_PARALLEL_FROM - 1]).is_none(), "too short to share out");
        // A compressible start over a body that is not: copied, not stored bigger.
        let mut noisy = bytes.clone();
        let mut state = 0x2545_f491_4f6c_dd1du64;
        for byte in &mut noisy[1 << 20..] {
            state ^= state << 13;
            state ^= state >> 7;
            state ^= state << 17;
            *byte = (state >> 32) as u8;
        }
        assert!(compress(&noisy).is_none());
    }
}
