//! The background thread that owns the trace file: records and blobs reach it over a bounded
//! channel, so hashing, compression and file writes stay off the program's threads. A blob is
//! named by a provisional id until the writer has hashed it; records sent after it name it by
//! that id, which the writer replaces with the content hash.

use crate::entry;
use crate::fast_hash::HashMap;
use crate::recorder::Sink;
use std::path::Path;
use std::sync::atomic::{AtomicU64, Ordering};
use std::sync::{mpsc, Arc, Mutex, PoisonError};
use std::time::Duration;
use trace_format::{BlobId, FormatError, Record, TraceWriter};

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
    Flush,
    Finish(mpsc::Sender<()>),
}

/// The program's side of the writer thread.
#[derive(Clone)]
pub struct WriterSink {
    sender: mpsc::SyncSender<Message>,
    /// Provisional blob ids handed out.
    blobs: Arc<AtomicU64>,
    spare: Spare,
}

impl WriterSink {
    /// Creates the trace file and starts its writer thread.
    pub fn start(path: &Path) -> Result<WriterSink, FormatError> {
        let writer = TraceWriter::create(path)?;
        let (sender, receiver) = mpsc::sync_channel(CHANNEL_DEPTH);
        let shown = path.display().to_string();
        let spare = Spare::default();
        let returned = spare.clone();
        std::thread::Builder::new()
            .name("reprise-writer".to_string())
            .spawn(move || write_all(writer, receiver, &shown, &returned))?;
        Ok(WriterSink { sender, blobs: Arc::new(AtomicU64::new(0)), spare })
    }

    /// Writes the index and trailer, waiting until they are on disk (or the writer is gone).
    pub fn finish(&self) {
        let (done, finished) = mpsc::channel();
        if self.sender.send(Message::Finish(done)).is_ok() && finished.recv_timeout(FINISH_TIMEOUT).is_err() {
            crate::log::error!("the trace writer did not finish in {} s; the trace has no index", FINISH_TIMEOUT.as_secs());
        }
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
        self.send(Message::Blob(id, bytes));
        id
    }

    fn flush(&mut self) {
        WriterSink::flush(self);
    }
}

fn write_all<W: std::io::Write + Send>(mut writer: TraceWriter<W>, receiver: mpsc::Receiver<Message>, path: &str, spare: &Spare) {
    // The content hash of each provisional id handed out so far.
    let mut hashes: HashMap<BlobId, BlobId> = HashMap::default();
    for message in receiver {
        let written = match message {
            Message::Record(mut record) => {
                resolve(&mut record, &hashes);
                writer.record(&record)
            }
            Message::Records(mut records) => {
                let written = records.iter_mut().try_for_each(|record| {
                    resolve(record, &hashes);
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
            Message::Blob(provisional, bytes) => {
                let hash = BlobId::of(&bytes);
                hashes.insert(provisional, hash);
                writer.blob_with_id(hash, &bytes).map(drop)
            }
            Message::Flush => writer.flush(),
            Message::Finish(done) => {
                let finished = writer.finish().map(drop);
                if let Err(error) = finished {
                    entry::stop_recording(format_args!("cannot finish the trace {path}: {error}"));
                }
                let _ = done.send(());
                return;
            }
        };
        if let Err(error) = written {
            entry::stop_recording(format_args!("cannot write the trace {path}: {error}"));
            return;
        }
    }
}

/// Names `record`'s blobs by their content hashes.
fn resolve(record: &mut Record, hashes: &HashMap<BlobId, BlobId>) {
    record.for_each_blob_mut(&mut |blob| {
        if let Some(&hash) = hashes.get(blob) {
            *blob = hash;
        }
    });
}
