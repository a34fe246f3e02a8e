//! Threads that hash and compress large blobs for the writer thread, which stores them in the
//! order they came: a program copying 64 MB back per step outruns one thread's lz4, and the
//! trace writer's backlog then held the program at exit (simpleStreams: 2.4 s). A blob whose
//! contents another large blob had already is not compressed again: the trace stores it once
//! (a program reading back memory nothing changed since). Hashing each chunk as it is compressed
//! reads a blob once, but learns that it was seen only afterwards: a blob whose length and first
//! chunk were seen before is hashed whole first (reduction's 128 MB read back twice took 381 ms
//! of a thread compressed twice, 185 ms hashed twice and compressed once).

use crate::fast_hash::HashSet;
use std::sync::atomic::{AtomicU64, Ordering};
use std::sync::{mpsc, Arc, Mutex, PoisonError};
use std::time::{Duration, Instant};
use trace_format::{BlobId, PreparedBlob};

/// Blobs smaller than this are prepared on the writer thread: handing them over costs more.
const HANDED_OVER_FROM: usize = 1 << 20;
/// At most this many preparing threads, started when the first large blob comes.
const MAX_THREADS: usize = 8;
/// A busy thread keeps its compression buffer between blobs unless it grew beyond this; an idle
/// one lets it go (it is zeroed, so resident: 8 threads would hold it in the program for good).
const KEPT_SCRATCH: usize = 128 << 20;

type Job = (Vec<u8>, mpsc::SyncSender<PreparedBlob>);

/// A blob ready to store, or still being prepared.
pub enum Preparing {
    Ready(PreparedBlob),
    Pending(mpsc::Receiver<PreparedBlob>),
}

impl Preparing {
    /// Whether `wait` would return at once (the blob is prepared, or its thread is gone).
    pub fn poll(&mut self) -> bool {
        let Preparing::Pending(result) = self else { return true };
        match result.try_recv() {
            Ok(blob) => {
                *self = Preparing::Ready(blob);
                true
            }
            Err(mpsc::TryRecvError::Empty) => false,
            Err(mpsc::TryRecvError::Disconnected) => true,
        }
    }

    /// The prepared blob; `None` if the thread preparing it is gone.
    pub fn wait(self) -> Option<PreparedBlob> {
        match self {
            Preparing::Ready(blob) => Some(blob),
            Preparing::Pending(result) => result.recv().ok(),
        }
    }
}

/// What the large blobs prepared so far were.
#[derive(Default)]
struct Seen {
    /// Their content ids (compressed by whichever thread came first; another blob with the same
    /// contents may still be stored first, uncompressed).
    ids: HashSet<BlobId>,
    /// Their lengths and the hashes of their first chunks: a blob matching one is likely seen.
    starts: HashSet<(usize, BlobId)>,
}

impl Seen {
    /// Whether a blob of `bytes`' length and first chunk came before (noting that this one came).
    fn likely(seen: &Mutex<Seen>, bytes: &[u8]) -> bool {
        let start = (bytes.len(), BlobId::of(&bytes[..bytes.len().min(FIRST_CHUNK)]));
        !seen.lock().unwrap_or_else(PoisonError::into_inner).starts.insert(start)
    }

    /// Whether the contents `id` names came before (noting that they came).
    fn already(seen: &Mutex<Seen>, id: BlobId) -> bool {
        !seen.lock().unwrap_or_else(PoisonError::into_inner).ids.insert(id)
    }
}

/// Bytes of a blob's start that tell blobs apart before they are hashed whole.
const FIRST_CHUNK: usize = 256 << 10;

#[derive(Default)]
pub struct Preparers {
    jobs: Option<mpsc::Sender<Job>>,
    seen: Arc<Mutex<Seen>>,
    /// The compression buffer of blobs prepared here.
    scratch: Vec<u8>,
}

impl Preparers {
    /// Starts preparing `bytes`: on a preparing thread when large, here otherwise (not
    /// compressing what `stored` says the trace holds already).
    pub fn prepare(&mut self, bytes: Vec<u8>, stored: impl Fn(BlobId) -> bool) -> Preparing {
        if bytes.len() < HANDED_OVER_FROM {
            return Preparing::Ready(PreparedBlob::unless_stored(bytes, stored, &mut self.scratch));
        }
        let seen = &self.seen;
        let jobs = self.jobs.get_or_insert_with(|| start(seen));
        let (done, result) = mpsc::sync_channel(1);
        match jobs.send((bytes, done)) {
            Ok(()) => Preparing::Pending(result),
            // No thread could be started: prepared here.
            Err(mpsc::SendError((bytes, _))) => Preparing::Ready(prepare_large(bytes, seen, &mut self.scratch)),
        }
    }
}

/// Bytes of large blobs prepared so far and the nanoseconds their threads took (reported at the end).
static PREPARED_BYTES: AtomicU64 = AtomicU64::new(0);
static PREPARING_NS: AtomicU64 = AtomicU64::new(0);

/// How many bytes of large blobs were hashed (and compressed) so far, and the threads' time it took.
pub fn prepared() -> (u64, Duration) {
    (PREPARED_BYTES.load(Ordering::Relaxed), Duration::from_nanos(PREPARING_NS.load(Ordering::Relaxed)))
}

/// Hashes `bytes` and compresses them unless a large blob with the same contents came before.
fn prepare_large(bytes: Vec<u8>, seen: &Mutex<Seen>, scratch: &mut Vec<u8>) -> PreparedBlob {
    let began = Instant::now();
    PREPARED_BYTES.fetch_add(bytes.len() as u64, Ordering::Relaxed);
    let already = |id| Seen::already(seen, id);
    let mut prepared = match Seen::likely(seen, &bytes) {
        true => PreparedBlob::hashed_first(bytes, already, scratch),
        false => PreparedBlob::unless_stored(bytes, already, scratch),
    };
    // Back for the next large read at once: a program receiving 64 MB per step otherwise found
    // none kept while the blobs before waited to be stored, and faulted in fresh pages each time.
    if let Some(raw) = prepared.take_unneeded_bytes() {
        crate::large_buffers::give_back(raw);
    }
    if scratch.len() > KEPT_SCRATCH {
        *scratch = Vec::new();
    }
    PREPARING_NS.fetch_add(began.elapsed().as_nanos() as u64, Ordering::Relaxed);
    prepared
}

/// Starts the preparing threads (one fewer than the machine's cores, at least one).
fn start(seen: &Arc<Mutex<Seen>>) -> mpsc::Sender<Job> {
    let (jobs, queue) = mpsc::channel::<Job>();
    let queue = Arc::new(Mutex::new(queue));
    let cores = std::thread::available_parallelism().map_or(2, usize::from);
    for index in 0..cores.saturating_sub(1).clamp(1, MAX_THREADS) {
        let (queue, seen) = (Arc::clone(&queue), Arc::clone(seen));
        let spawned = std::thread::Builder::new().name(format!("reprise-blobs-{index}")).spawn(move || {
            let mut scratch = Vec::new();
            loop {
                let job = queue.lock().unwrap_or_else(PoisonError::into_inner).try_recv();
                let job = match job {
                    Ok(job) => job,
                    Err(mpsc::TryRecvError::Disconnected) => return,
                    Err(mpsc::TryRecvError::Empty) => {
                        scratch = Vec::new();
                        let Ok(job) = queue.lock().unwrap_or_else(PoisonError::into_inner).recv() else { return };
                        job
                    }
                };
                let (bytes, done) = job;
                let _ = done.send(prepare_large(bytes, &seen, &mut scratch));
            }
        });
        if spawned.is_err() {
            break;
        }
    }
    jobs
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn large_blobs_with_contents_seen_before_are_hashed_not_compressed_again() {
        let mut preparers = Preparers::default();
        let large = vec![3u8; 2 * HANDED_OVER_FROM];
        let contents = [large.clone(), large.clone(), vec![4u8; 2 * HANDED_OVER_FROM], large.clone()];
        let prepared: Vec<PreparedBlob> = contents
            .iter()
            .map(|bytes| preparers.prepare(bytes.clone(), |_| false))
            .map(|preparing| preparing.wait().expect("a preparing thread"))
            .collect();
        assert!(prepared.iter().zip(&contents).all(|(blob, bytes)| blob.id == BlobId::of(bytes) && blob.raw_len() == bytes.len()));
        let compressed: Vec<bool> = prepared.iter().map(PreparedBlob::is_compressed).collect();
        assert_eq!(compressed, [true, false, true, false]);
        // A compressed blob's raw bytes went back for reuse; one stored raw keeps them.
        let kept: Vec<bool> = prepared.iter().map(|blob| !blob.bytes().is_empty()).collect();
        assert_eq!(kept, [false, true, false, true]);
    }

    #[test]
    fn blobs_are_likely_seen_by_their_length_and_first_chunk() {
        let seen = Mutex::new(Seen::default());
        let mut bytes = vec![1u8; 2 * FIRST_CHUNK];
        assert!(!Seen::likely(&seen, &bytes));
        assert!(Seen::likely(&seen, &bytes));
        // Past the first chunk the contents are not looked at: hashing whole tells.
        bytes[FIRST_CHUNK] = 2;
        assert!(Seen::likely(&seen, &bytes));
        bytes[0] = 2;
        assert!(!Seen::likely(&seen, &bytes));
        assert!(!Seen::likely(&seen, &bytes[1..]));
    }
}
