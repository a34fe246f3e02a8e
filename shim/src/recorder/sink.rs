//! Where the recorder's output goes: the background writer in a process, a vector in tests.

use trace_format::{BlobId, PreparedBlob, Record};

/// Receives records and blob contents in the order the trace must hold them. Delivery
/// problems are the sink's to report: the recorder goes on.
pub trait Sink: Send {
    fn record(&mut self, record: Record);
    /// Many records at once, in order (a window's graph).
    fn records(&mut self, records: Vec<Record>);
    /// An empty vector to fill for `records`: one the sink handed back where it can, whose
    /// capacity spares each window allocating (and faulting in) its records afresh.
    fn records_buffer(&mut self) -> Vec<Record> {
        Vec::new()
    }
    /// Contents of a blob; records sent later refer to it by the id returned, which the sink
    /// may only resolve to the blob's name (`BlobId::of`) on its own thread.
    fn blob(&mut self, bytes: Vec<u8>) -> BlobId;
    /// A blob hashed and compressed already, named by its own id.
    fn prepared_blob(&mut self, blob: PreparedBlob) -> BlobId;
    /// A segment ended: make everything so far durable.
    fn flush(&mut self);
}

/// How the recorder reads device memory and waits for device work, done by the API module
/// with its own calls, which the program cannot observe (they are not recorded and go to
/// queues of the shim's own).
pub trait MemoryAccess {
    /// Blocks until all work the program submitted so far has finished (a capture starts:
    /// work from before it may still write memory the capture reads).
    fn drain(&self);
    /// The whole contents of memory object `mem` (`size` bytes), or `None` if it cannot be read.
    fn read(&self, mem: super::Key, size: u64) -> Option<Vec<u8>>;
    /// The same, once the work submitted before the command being prepared has finished:
    /// for memory that work may write out of the recorder's sight (`HostWrites::Unseen`).
    fn read_after_submitted(&self, mem: super::Key, size: u64) -> Option<Vec<u8>> {
        self.read(mem, size)
    }
}
