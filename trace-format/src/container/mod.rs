//! The trace file: a header, then a stream of framed records (kind, length, CRC32, payload),
//! then an index and a fixed trailer that points at it.
//!
//! ```text
//! file    = header frame* [index-frame trailer]
//! header  = "REPRISE\0" version:u32le flags:u32le
//! frame   = kind:u8 length:u32le crc32(payload):u32le payload
//! trailer = index-offset:u64le "RPRSIDX\0"
//! ```
//!
//! Metadata frames hold one postcard-encoded `Record`; blob frames hold a blob's id, codec,
//! raw length and (usually lz4-compressed) bytes. A writer killed at any point leaves a file
//! whose whole frames all read back: the index marks a finished file. Readers walk the frames in
//! order (`read`): records in segment order, blobs located and read when asked for.

mod blobs;
mod chunks;
mod error;
mod frame;
mod frames;
mod read;
mod record;
mod source;
mod write;

pub use blobs::BlobStore;
pub use error::FormatError;
pub use read::{read_trace, read_trace_bytes, Completeness, Segments, TraceFile, TraceReader};
pub use record::Record;
pub use chunks::{compress_piece, stored_start, CHUNK_LEN};
pub use write::{worth_compressing, write_trace, write_trace_to, PreparedBlob, TraceWriter};

/// The format version this build writes and the newest it reads. Version 2 added
/// `Arg::ValueWithPointers` and `MemKind::Global` after the existing variants, so version-1
/// traces read unchanged. Version 3 added `Record::Expected` (final contents read after their
/// segment ended). Version 4 added the commands of a program's own graphs that earlier versions
/// could not describe (`Command::Conditional` with `Arg::Condition`, `Command::EventRecord`,
/// `Command::EventWait`), again after the existing variants. Version 5 added `EdgeKind::Memory`,
/// version 6 `Record::ParamTypes` (element types for comparisons within a tolerance), version 7
/// images (`MemKind::Image`) and texture objects (`Record::Texture`, `Arg::Texture`), version 8
/// `Record::SegmentFailed` (a synchronization that failed, as a device-side assert makes it),
/// version 9 `Record::DevicePrinted` (what the device printed, as CUDA's `printf` does), version 10
/// `Record::RacyRead` (data read while commands the program left unordered with the read still
/// wrote its memory), version 11 `Record::HostWrote` (bytes the host stored into pinned or
/// managed memory without an API call), version 12 `Record::ProgramLink` (a program linked from
/// separately compiled ones), version 13 `Codec::Lz4Chunks` (large blobs compressed in chunks), version 14
/// `MemKind::Unified` (OpenCL's unified shared memory) and `Record::KernelAttribute`.
pub const FORMAT_VERSION: u32 = 14;
