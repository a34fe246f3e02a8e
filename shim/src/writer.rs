//! The background thread that owns the trace file: records and blobs reach it over a bounded
//! channel, so hashing, compression and file writes stay off the program's threads. Large blobs
//! are hashed and compressed on preparing threads (`blob_preparers`), several at once, and
//! everything is stored in the order it came. A blob is named by a provisional id until the
//! writer has hashed it; records sent after it name it by that id, which the writer replaces
//! with the content hash.

use crate::entry;
use crate::large_buffers;
use crate::fast_hash::HashMap;
use crate::recorder::Sink;
use std::path::Path;
use std::sync::atomic::{AtomicU64, Ordering};
use crate::blob_preparers::{Preparers, Preparing};
use std::collections::VecDeque;
use std::sync::{mpsc, Arc, Condvar, Mutex, PoisonError};
use std::time::{Duration, Instant};
use trace_format::{BlobId, FormatError, PreparedBlob, Record, TraceWriter};

/// Messages in flight before the program's threads wait for the writer (bounds the memory
/// held by blobs not yet written).
const CHANNEL_DEPTH: usize = 64;

/// How long the exit handler waits for the trace to be completed.
const FINISH_TIMEOUT: Duration = Duration::from_secs(120);

/// Provisional blob ids have the top bit set; a content hash has it too half of the time, but
/// never appears in a record before the writer resolved it.
const PROVISIONAL: u128 = 1 << 127;

/// Emptied record vectors the writer keeps for the program's threads to fill again, and the
/// largest capacity kept (records are 224 bytes: a few MB at most stay allocated).
const SPARE_BUFFERS: usize = 2;
const SPARE_CAPACITY: usize = 16 * 1024;

/// Record vectors the writer has emptied (see `Sink::records_buffer`).
type Spare = Arc<Mutex<Vec<Vec<Record>>>>;

enum Message {
    Record(Box<Record>),
    Records(Vec<Record>),
    /// A blob's bytes and its provisional id.
    Blob(BlobId, Vec<u8>),
    /// A blob hashed and compressed already.
    Prepared(PreparedBlob),
    Flush,
    Finish(mpsc::Sender<()>),
}

/// Bytes of blobs sent and not yet stored past which a program's thread waits for the writer
/// (one larger blob still goes, alone): the channel's depth counts messages, not their size.
const BLOB_BYTES_IN_FLIGHT: usize = 1 << 30;

/// Bytes of blobs on their way to the file, and whether the writer still stores them.
#[derive(Default)]
struct InFlight {
    state: Mutex<InFlightState>,
    stored: Condvar,
    /// Nanoseconds the program's threads spent waiting here (reported at the end).
    waited_ns: AtomicU64,
}

#[derive(Default)]
struct InFlightState {
    /// Bytes of blobs sent and not yet stored.
    bytes: usize,
    /// The writer stopped.
    closed: bool,
}

impl InFlight {
    /// Waits until `bytes` more fit (or the writer is gone), then counts them.
    fn enter(&self, bytes: usize) {
        let mut state = self.state.lock().unwrap_or_else(PoisonError::into_inner);
        let full = |state: &InFlightState| state.bytes > 0 && state.bytes + bytes > BLOB_BYTES_IN_FLIGHT && !state.closed;
        if full(&state) {
            let began = Instant::now();
            while full(&state) {
                state = self.stored.wait(state).unwrap_or_else(PoisonError::into_inner);
            }
            self.waited_ns.fetch_add(began.elapsed().as_nanos() as u64, Ordering::Relaxed);
        }
        state.bytes += bytes;
    }

    fn leave(&self, bytes: usize) {
        let mut state = self.state.lock().unwrap_or_else(PoisonError::into_inner);
        state.bytes = state.bytes.saturating_sub(bytes);
        self.stored.notify_all();
    }

    /// The writer stopped: nobody waits for it any more.
    fn close(&self) {
        self.state.lock().unwrap_or_else(PoisonError::into_inner).closed = true;
        self.stored.notify_all();
    }
}

/// The program's side of the writer thread.
#[derive(Clone)]
pub struct WriterSink {
    sender: mpsc::SyncSender<Message>,
    /// Provisional blob ids handed out.
    blobs: Arc<AtomicU64>,
    spare: Spare,
    in_flight: Arc<InFlight>,
}

impl WriterSink {
    /// Creates the trace file and starts its writer thread.
    pub fn start(path: &Path) -> Result<WriterSink, FormatError> {
        let writer = TraceWriter::create(path)?;
        let (sender, receiver) = mpsc::sync_channel(CHANNEL_DEPTH);
        let shown = path.display().to_string();
        let spare = Spare::default();
        let returned = spare.clone();
        let in_flight = Arc::new(InFlight::default());
        let stored = Arc::clone(&in_flight);
        std::thread::Builder::new().name("reprise-writer".to_string()).spawn(move || {
            write_all(writer, receiver, &shown, &returned, &stored);
            stored.close();
        })?;
        Ok(WriterSink { sender, blobs: Arc::new(AtomicU64::new(0)), spare, in_flight })
    }

    /// Writes the index and trailer, waiting until they are on disk (or the writer is gone).
    pub fn finish(&self) {
        let began = Instant::now();
        let (done, finished) = mpsc::channel();
        if self.sender.send(Message::Finish(done)).is_ok() && finished.recv_timeout(FINISH_TIMEOUT).is_err() {
            crate::log::error!("the trace writer did not finish in {} s; the trace has no index", FINISH_TIMEOUT.as_secs());
        }
        // Where recording held the program up, for users who measure it.
        crate::log::info!(
            "the program's threads waited {} ms for blobs to be stored, and its exit {} ms for the trace to be completed",
            self.in_flight.waited_ns.load(Ordering::Relaxed) / 1_000_000,
            began.elapsed().as_millis()
        );
    }

    /// Makes everything sent so far durable.
    pub fn flush(&self) {
        self.send(Message::Flush);
    }

    fn send(&self, message: Message) {
        // A closed channel means the writer stopped, and has said why.
        let _ = self.sender.send(message);
    }
}

impl Sink for WriterSink {
    fn record(&mut self, record: Record) {
        self.send(Message::Record(Box::new(record)));
    }

    fn records(&mut self, records: Vec<Record>) {
        self.send(Message::Records(records));
    }

    fn records_buffer(&mut self) -> Vec<Record> {
        self.spare.lock().unwrap_or_else(PoisonError::into_inner).pop().unwrap_or_default()
    }

    fn blob(&mut self, bytes: Vec<u8>) -> BlobId {
        let id = BlobId(PROVISIONAL | u128::from(self.blobs.fetch_add(1, Ordering::Relaxed)));
        self.in_flight.enter(bytes.len());
        self.send(Message::Blob(id, bytes));
        id
    }

    fn prepared_blob(&mut self, blob: PreparedBlob) -> BlobId {
        let id = blob.id;
        self.in_flight.enter(blob.held_len());
        self.send(Message::Prepared(blob));
        id
    }

    fn flush(&mut self) {
        WriterSink::flush(self);
    }
}

/// A message taken off the channel, kept in order while its blob (if any) is prepared.
enum Queued {
    Record(Box<Record>),
    Records(Vec<Record>),
    /// A blob under its provisional id, and the bytes it counted in flight.
    Blob(BlobId, Preparing, usize),
    Flush,
    Finish(mpsc::Sender<()>),
}

/// Blobs being prepared before the writer waits for the oldest: bounds the memory they hold (as
/// `CHANNEL_DEPTH` bounds the messages queued behind one).
const BLOBS_IN_FLIGHT: usize = 16;

fn write_all<W: std::io::Write + Send>(mut writer: TraceWriter<W>, receiver: mpsc::Receiver<Message>, path: &str, spare: &Spare, in_flight: &InFlight) {
    // The content hash of each provisional id handed out so far.
    let mut hashes: HashMap<BlobId, BlobId> = HashMap::default();
    let mut preparers = Preparers::default();
    // What came, in order: blobs are hashed and compressed in parallel and stored in this order.
    let mut queue: VecDeque<Queued> = VecDeque::new();
    let mut preparing = 0;
    let mut open = true;
    while open || !queue.is_empty() {
        // Wait for a message only when nothing is queued; else take what has come meanwhile.
        let message = match queue.is_empty() {
            true => receiver.recv().map_err(|_| mpsc::TryRecvError::Disconnected),
            false => receiver.try_recv(),
        };
        let idle = match message {
            Ok(message) => {
                preparing += usize::from(matches!(message, Message::Blob(..) | Message::Prepared(_)));
                queue.push_back(match message {
                    Message::Record(record) => Queued::Record(record),
                    Message::Records(records) => Queued::Records(records),
                    Message::Blob(provisional, bytes) => {
                        let counted = bytes.len();
                        Queued::Blob(provisional, preparers.prepare(bytes, |id| writer.holds(id)), counted)
                    }
                    Message::Prepared(blob) => {
                        let counted = blob.held_len();
                        Queued::Blob(blob.id, Preparing::Ready(blob), counted)
                    }
                    Message::Flush => Queued::Flush,
                    Message::Finish(done) => Queued::Finish(done),
                });
                false
            }
            Err(mpsc::TryRecvError::Empty) => true,
            Err(mpsc::TryRecvError::Disconnected) => {
                open = false;
                true
            }
        };
        // Store what is ready, in order; with nothing else to do, or too much in flight, wait
        // for the oldest blob.
        loop {
            let wait = idle || preparing >= BLOBS_IN_FLIGHT || queue.len() >= CHANNEL_DEPTH;
            let ready = match queue.front_mut() {
                None => break,
                Some(Queued::Blob(_, blob, _)) => wait || blob.poll(),
                Some(_) => true,
            };
            if !ready {
                break;
            }
            let written = match queue.pop_front() {
                Some(Queued::Blob(provisional, blob, counted)) => {
                    preparing -= 1;
                    match blob.wait() {
                        Some(blob) => {
                            hashes.insert(provisional, blob.id);
                            let stored = writer.prepared_blob(&blob).map(drop);
                            in_flight.leave(counted);
                            large_buffers::give_back(blob.into_bytes());
                            stored
                        }
                        None => Err(FormatError::Io(std::io::Error::other("a thread preparing blobs stopped"))),
                    }
                }
                Some(Queued::Record(mut record)) => {
                    resolve(&mut record, &hashes);
                    writer.record(&record)
                }
                Some(Queued::Records(records)) => write_records(&mut writer, records, &hashes, spare),
                Some(Queued::Flush) => writer.flush(),
                Some(Queued::Finish(done)) => {
                    if let Err(error) = writer.finish() {
                        entry::stop_recording(format_args!("cannot finish the trace {path}: {error}"));
                    }
                    let _ = done.send(());
                    return;
                }
                None => break,
            };
            if let Err(error) = written {
                entry::stop_recording(format_args!("cannot write the trace {path}: {error}"));
                return;
            }
        }
    }
}

fn write_records<W: std::io::Write + Send>(writer: &mut TraceWriter<W>, mut records: Vec<Record>, hashes: &HashMap<BlobId, BlobId>, spare: &Spare) -> Result<(), FormatError> {
    let written = records.iter_mut().try_for_each(|record| {
        resolve(record, hashes);
        writer.record(record)
    });
    // Emptied here, so the records' memory is freed off the program's threads.
    records.clear();
    let mut spare = spare.lock().unwrap_or_else(PoisonError::into_inner);
    if spare.len() < SPARE_BUFFERS && records.capacity() <= SPARE_CAPACITY {
        spare.push(records);
    }
    written
}

/// Names `record`'s blobs by their content hashes.
fn resolve(record: &mut Record, hashes: &HashMap<BlobId, BlobId>) {
    record.for_each_blob_mut(&mut |blob| {
        if let Some(&hash) = hashes.get(blob) {
            *blob = hash;
        }
    });
}

#[cfg(test)]
mod tests {
    use super::*;
    use trace_format::{Api, Header, MemId, MemKind, MemState, Memory, SegmentId};

    #[test]
    fn a_blob_past_the_bytes_in_flight_waits_until_the_writer_stored_some_or_stopped() {
        let in_flight = Arc::new(InFlight::default());
        in_flight.enter(BLOB_BYTES_IN_FLIGHT - 10);
        let entered = Arc::new(std::sync::atomic::AtomicBool::new(false));
        let sender = {
            let (in_flight, entered) = (Arc::clone(&in_flight), Arc::clone(&entered));
            std::thread::spawn(move || {
                in_flight.enter(100);
                entered.store(true, Ordering::SeqCst);
            })
        };
        std::thread::sleep(Duration::from_millis(100));
        assert!(!entered.load(Ordering::SeqCst), "sent past the bytes in flight");
        in_flight.leave(BLOB_BYTES_IN_FLIGHT - 10);
        sender.join().expect("the sender");
        assert!(entered.load(Ordering::SeqCst));
        // One blob larger than the limit goes alone; a stopped writer holds nobody back.
        in_flight.leave(100);
        in_flight.enter(2 * BLOB_BYTES_IN_FLIGHT);
        in_flight.close();
        in_flight.enter(1);
    }

    /// A writer of a trace file named for `test`, which holds a header and one memory object.
    fn started(test: &str) -> (std::path::PathBuf, WriterSink) {
        let path = std::env::temp_dir().join(format!("reprise-writer-{test}-{}.trace", std::process::id()));
        let mut sink = WriterSink::start(&path).expect("a trace file");
        let header = Header { api: Api::Cuda, producer: "test".into(), command_line: vec![], process_id: 1, started_unix_s: 0 };
        sink.record(Record::Header(header));
        sink.record(Record::Memory(Memory { kind: MemKind::Buffer, size: 3 << 20, address: 0, flags: 0, device: None }));
        (path, sink)
    }

    /// Large blobs are prepared on other threads, several at once; the trace still holds each
    /// record after the blobs sent before it, naming each blob by its content.
    #[test]
    fn blobs_prepared_in_parallel_are_stored_in_order_under_their_content_ids() {
        let (path, mut sink) = started("parallel");
        // Large (handed to preparing threads) and small blobs, compressible and not, alternating.
        let mut contents: Vec<Vec<u8>> = (0..24u32)
            .map(|index| match index % 3 {
                0 => vec![index as u8; 3 << 20],
                1 => (0..(2u32 << 20)).map(|at| (at.wrapping_mul(2654435761).wrapping_add(index) >> 13) as u8).collect(),
                _ => vec![index as u8; 100],
            })
            .collect();
        // Blobs the trace holds already, small and large, are stored once and named alike.
        // Large ones with the same contents may be prepared at once, any of them first.
        contents.extend([contents[2].clone(), contents[1].clone(), contents[0].clone()]);
        contents.extend(std::iter::repeat_n(vec![200u8; 3 << 20], 4));
        for (segment, bytes) in contents.iter().enumerate() {
            let blob = sink.blob(bytes.clone());
            let segment = SegmentId(segment as u32);
            sink.records(vec![
                Record::SegmentBegin { ordinal: u64::from(segment.0) },
                Record::InitialState { segment, state: MemState { mem: MemId(0), blob } },
                Record::SegmentEnd { segment, ended_by: "test".into(), expected: vec![] },
            ]);
        }
        sink.finish();
        // Every blob stored counts out what it counted in, compressed ones (whose raw bytes went
        // back early) too: the program's threads never wait for bytes already stored.
        assert_eq!(sink.in_flight.state.lock().expect("not poisoned").bytes, 0);
        let read = trace_format::read_trace(&path).expect("a readable trace");
        std::fs::remove_file(&path).expect("removed");
        assert_eq!(read.completeness, trace_format::Completeness::Complete);
        assert_eq!(read.trace.segments.len(), contents.len());
        for (segment, bytes) in read.trace.segments.iter().zip(&contents) {
            let blob = segment.initial[0].blob;
            assert_eq!(blob, BlobId::of(bytes));
            assert_eq!(&*read.blobs.get(blob).expect("stored"), &bytes[..]);
        }
    }

    /// A blob compressed where it lay comes prepared: stored under its own id, its bytes in
    /// flight counted out again, read back exactly.
    #[test]
    fn a_blob_compressed_in_pieces_is_stored_under_its_id_and_counted_out() {
        let (path, mut sink) = started("pieces");
        let bytes: Vec<u8> = (0..(crate::in_pieces::IN_PARALLEL_FROM as u32 + 1000)).map(|at| (at / 4096) as u8).collect();
        let (id, pieces) = crate::in_pieces::compress(&bytes).expect("compressible");
        assert_eq!(sink.prepared_blob(PreparedBlob::in_pieces(id, bytes.len(), pieces)), id);
        let segment = SegmentId(0);
        sink.records(vec![
            Record::SegmentBegin { ordinal: 0 },
            Record::InitialState { segment, state: MemState { mem: MemId(0), blob: id } },
            Record::SegmentEnd { segment, ended_by: "test".into(), expected: vec![] },
        ]);
        sink.finish();
        assert_eq!(sink.in_flight.state.lock().expect("not poisoned").bytes, 0);
        let read = trace_format::read_trace(&path).expect("a readable trace");
        std::fs::remove_file(&path).expect("removed");
        assert_eq!(read.trace.segments[0].initial[0].blob, id);
        assert!(*read.blobs.get(id).expect("stored") == bytes[..]);
    }
}
