//! Where the recorder's output goes: the background writer in a process, a vector in tests.

use trace_format::{BlobId, Record};

/// Receives records and blob contents in the order the trace must hold them. Delivery
/// problems are the sink's to report: the recorder goes on.
pub trait Sink: Send {
    fn record(&mut self, record: Record);
    /// Many records at once, in order (a window's graph).
    fn records(&mut self, records: Vec<Record>);
    /// Contents of a blob that records refer to by its id (`BlobId::of(&bytes)`); each sent once.
    fn blob(&mut self, id: BlobId, bytes: Vec<u8>);
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
}
