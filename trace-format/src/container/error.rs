use crate::BlobId;

/// Why a trace file cannot be read. Every variant names the problem and, where there is
/// one, the byte offset of the frame at fault.
#[derive(Debug, thiserror::Error)]
pub enum FormatError {
    #[error("cannot access the trace: {0}")]
    Io(#[from] std::io::Error),
    #[error("not a Reprise trace (the file does not start with the trace magic)")]
    NotATrace,
    #[error("the file is too short to hold a trace header ({0} bytes): the writer stopped before it wrote anything")]
    NoHeader(u64),
    #[error("the trace was written by format version {found}; this reader knows up to version {supported}: upgrade the replayer")]
    NewerVersion { found: u32, supported: u32 },
    #[error("damaged trace: the frame at byte {offset} fails its checksum")]
    Checksum { offset: u64 },
    #[error("damaged trace: the frame at byte {offset} {problem}")]
    Malformed { offset: u64, problem: String },
    #[error("cannot write a frame of {0} bytes: the format holds at most 4 GiB - 1 per record or blob")]
    FrameTooLarge(u64),
    #[error("cannot write the trace: {0}")]
    Unordered(String),
    #[error("blob {0} is referenced but not in the trace")]
    MissingBlob(BlobId),
}
