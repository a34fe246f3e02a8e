//! The background thread that owns the trace file: records and blobs (already hashed by the
//! recorder, which needs their ids) reach it over a bounded channel, so compression and file
//! writes stay off the program's threads.

use crate::entry;
use crate::recorder::Sink;
use std::path::Path;
use std::sync::mpsc;
use std::time::Duration;
use trace_format::{BlobId, FormatError, Record, TraceWriter};

/// Messages in flight before the program's threads wait for the writer (bounds the memory
/// held by blobs not yet written).
const CHANNEL_DEPTH: usize = 64;

/// How long the exit handler waits for the trace to be completed.
const FINISH_TIMEOUT: Duration = Duration::from_secs(120);

enum Message {
    Record(Box<Record>),
    Records(Vec<Record>),
    Blob(BlobId, Vec<u8>),
    Flush,
    Finish(mpsc::Sender<()>),
}

/// The program's side of the writer thread.
#[derive(Clone)]
pub struct WriterSink {
    sender: mpsc::SyncSender<Message>,
}

impl WriterSink {
    /// Creates the trace file and starts its writer thread.
    pub fn start(path: &Path) -> Result<WriterSink, FormatError> {
        let writer = TraceWriter::create(path)?;
        let (sender, receiver) = mpsc::sync_channel(CHANNEL_DEPTH);
        let shown = path.display().to_string();
        std::thread::Builder::new()
            .name("reprise-writer".to_string())
            .spawn(move || write_all(writer, receiver, &shown))?;
        Ok(WriterSink { sender })
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

    fn blob(&mut self, id: BlobId, bytes: Vec<u8>) {
        self.send(Message::Blob(id, bytes));
    }

    fn flush(&mut self) {
        WriterSink::flush(self);
    }
}

fn write_all<W: std::io::Write + Send>(mut writer: TraceWriter<W>, receiver: mpsc::Receiver<Message>, path: &str) {
    for message in receiver {
        let written = match message {
            Message::Record(record) => writer.record(&record),
            Message::Records(records) => records.iter().try_for_each(|record| writer.record(record)),
            Message::Blob(id, bytes) => writer.blob_with_id(id, &bytes).map(drop),
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
