use super::frame::*;
use super::write::Index;
use super::blobs::StoredBlob;
use super::{BlobStore, FormatError, Record, FORMAT_VERSION};
use crate::model::*;
use std::path::Path;
use std::sync::Arc;

/// lz4 expands at most 255:1; a raw length beyond that is damage, not a reason to allocate.
const LZ4_MAX_RATIO: u64 = 255;

/// A trace read back: the model, its blobs, and whether the file was whole.
#[derive(Debug)]
pub struct TraceFile {
    pub trace: Trace,
    pub blobs: BlobStore,
    pub completeness: Completeness,
}

#[derive(Clone, Debug, PartialEq, Eq)]
pub enum Completeness {
    Complete,
    /// The writer stopped early (a killed process): everything before `valid_bytes` was read.
    Truncated { valid_bytes: u64, reason: String },
}

pub fn read_trace(path: &Path) -> Result<TraceFile, FormatError> {
    read_shared(read_file_shared(path)?)
}

/// Reads a file straight into shared memory (no second copy of a multi-gigabyte trace).
fn read_file_shared(path: &Path) -> Result<Arc<[u8]>, FormatError> {
    use std::io::Read;
    let mut file = std::fs::File::open(path)?;
    let len = usize::try_from(file.metadata()?.len()).map_err(|_| std::io::Error::other("the trace is larger than memory"))?;
    let mut shared: Arc<[std::mem::MaybeUninit<u8>]> = Arc::new_uninit_slice(len);
    let buffer = Arc::get_mut(&mut shared).expect("a new Arc has no other owner");
    buffer.fill(std::mem::MaybeUninit::new(0));
    // SAFETY: every byte was initialised by the fill above.
    let mut shared = unsafe { shared.assume_init() };
    file.read_exact(Arc::get_mut(&mut shared).expect("a new Arc has no other owner"))?;
    Ok(shared)
}

pub fn read_trace_bytes(bytes: &[u8]) -> Result<TraceFile, FormatError> {
    read_shared(Arc::from(bytes))
}

fn read_shared(file: Arc<[u8]>) -> Result<TraceFile, FormatError> {
    check_header(&file)?;
    let mut reader = Reader { file: file.clone(), trace: Trace::default(), blobs: BlobStore::default() };
    let completeness = match indexed_frames(&file) {
        Some(index) => {
            for &offset in &index.records {
                reader.frame_at(offset, FrameKind::Record)?;
            }
            for &offset in &index.blobs {
                reader.frame_at(offset, FrameKind::Blob)?;
            }
            Completeness::Complete
        }
        None => reader.scan()?,
    };
    Ok(TraceFile { trace: reader.trace, blobs: reader.blobs, completeness })
}

fn check_header(file: &[u8]) -> Result<(), FormatError> {
    let magic_len = file.len().min(MAGIC.len());
    if file[..magic_len] != MAGIC[..magic_len] {
        return Err(FormatError::NotATrace);
    }
    if file.len() < HEADER_LEN {
        return Err(FormatError::NoHeader(file.len() as u64));
    }
    let version = u32::from_le_bytes(file[8..12].try_into().expect("4 bytes"));
    if version > FORMAT_VERSION {
        return Err(FormatError::NewerVersion { found: version, supported: FORMAT_VERSION });
    }
    if version == 0 {
        return Err(FormatError::Malformed { offset: 8, problem: "is a header with format version 0".into() });
    }
    Ok(())
}

/// The index the trailer points at, if the file ends with a whole, checksummed one.
fn indexed_frames(file: &[u8]) -> Option<Index> {
    let trailer = file.len().checked_sub(TRAILER_LEN)?;
    if &file[trailer + 8..] != TRAILER_MAGIC {
        return None;
    }
    let offset = usize::try_from(u64::from_le_bytes(file[trailer..trailer + 8].try_into().ok()?)).ok()?;
    let (kind, payload) = frame(file, offset).ok()??;
    if kind != FrameKind::Index || offset + FRAME_HEADER_LEN + payload.len() != trailer {
        return None;
    }
    let index: Index = postcard::from_bytes(payload).ok()?;
    let in_bounds = |offsets: &[u64]| offsets.iter().all(|&o| o >= HEADER_LEN as u64 && o < offset as u64);
    (in_bounds(&index.records) && in_bounds(&index.blobs)).then_some(index)
}

/// The frame at `offset`: `Ok(None)` when the file ends inside it, an error when it is damaged.
/// Blob payloads are checksummed when first read (`BlobStore::get`), so reading the metadata
/// of a large trace does not touch its blobs.
fn frame(file: &[u8], offset: usize) -> Result<Option<(FrameKind, &[u8])>, FormatError> {
    // Offsets come from the file itself (trailer, index): bound them before any arithmetic.
    if offset > file.len() {
        return Ok(None);
    }
    let Some(header) = file.get(offset..offset + FRAME_HEADER_LEN) else { return Ok(None) };
    let kind = FrameKind::from_byte(header[0]).ok_or_else(|| FormatError::Malformed {
        offset: offset as u64,
        problem: format!("has unknown kind {}", header[0]),
    })?;
    let len = u32::from_le_bytes(header[1..5].try_into().expect("4 bytes")) as usize;
    let crc = u32::from_le_bytes(header[5..9].try_into().expect("4 bytes"));
    let start = offset + FRAME_HEADER_LEN;
    let Some(payload) = file.get(start..start + len) else { return Ok(None) };
    if kind != FrameKind::Blob && crc32fast::hash(payload) != crc {
        return Err(FormatError::Checksum { offset: offset as u64 });
    }
    Ok(Some((kind, payload)))
}

struct Reader {
    file: Arc<[u8]>,
    trace: Trace,
    blobs: BlobStore,
}

impl Reader {
    /// Walks the frames of a file without a usable index (a writer that did not finish).
    fn scan(&mut self) -> Result<Completeness, FormatError> {
        let file = self.file.clone();
        let mut offset = HEADER_LEN;
        loop {
            if offset == file.len() {
                return Ok(truncated(offset, "the file ends without an index: the recording process stopped before finishing the trace"));
            }
            let Some((kind, payload)) = frame(&file, offset)? else {
                return Ok(truncated(offset, "the file ends inside a frame: the recording process stopped while writing"));
            };
            if kind == FrameKind::Index {
                return Ok(truncated(offset, "the file ends inside its trailer"));
            }
            self.apply(kind, payload, offset)?;
            offset += FRAME_HEADER_LEN + payload.len();
        }
    }

    fn frame_at(&mut self, offset: u64, expected: FrameKind) -> Result<(), FormatError> {
        let file = self.file.clone();
        match frame(&file, offset as usize)? {
            Some((kind, payload)) if kind == expected => self.apply(kind, payload, offset as usize),
            _ => Err(FormatError::Malformed { offset, problem: "is not the frame the index says is there".into() }),
        }
    }

    fn apply(&mut self, kind: FrameKind, payload: &[u8], offset: usize) -> Result<(), FormatError> {
        let malformed = |problem: String| FormatError::Malformed { offset: offset as u64, problem };
        match kind {
            FrameKind::Record => {
                let record: Record =
                    postcard::from_bytes(payload).map_err(|e| malformed(format!("holds a record that does not decode: {e}")))?;
                self.record(record).map_err(malformed)
            }
            FrameKind::Blob => {
                let prefix = payload.get(..BLOB_PREFIX_LEN).ok_or_else(|| malformed("is a blob frame too short for its prefix".into()))?;
                let id = BlobId(u128::from_le_bytes(prefix[..16].try_into().expect("16 bytes")));
                let codec = Codec::from_byte(prefix[16]).ok_or_else(|| malformed(format!("holds a blob with unknown codec {}", prefix[16])))?;
                let raw_len = u64::from_le_bytes(prefix[17..25].try_into().expect("8 bytes"));
                let stored_len = (payload.len() - BLOB_PREFIX_LEN) as u64;
                let plausible = match codec {
                    Codec::Raw => raw_len == stored_len,
                    Codec::Lz4 => raw_len <= stored_len.saturating_mul(LZ4_MAX_RATIO).saturating_add(16),
                };
                if !plausible {
                    return Err(malformed(format!("holds blob {id} whose length {raw_len} does not fit its {stored_len} stored bytes")));
                }
                let crc = u32::from_le_bytes(self.file[offset + 5..offset + 9].try_into().expect("4 bytes"));
                let start = offset + FRAME_HEADER_LEN + BLOB_PREFIX_LEN;
                let stored = StoredBlob { range: start..start + stored_len as usize, codec, raw_len, crc, offset: offset as u64 };
                self.blobs.insert_from_file(id, self.file.clone(), stored);
                Ok(())
            }
            FrameKind::Index => Err(malformed("is an index in the middle of the file".into())),
        }
    }

    fn record(&mut self, record: Record) -> Result<(), String> {
        let trace = &mut self.trace;
        match record {
            Record::Header(header) if trace.header.is_none() => trace.header = Some(header),
            Record::Header(_) => return Err("is a second header record".into()),
            Record::Device(device) => trace.devices.push(device),
            Record::Memory(memory) => trace.memories.push(memory),
            Record::Program(program) => trace.programs.push(program),
            Record::Kernel(kernel) => trace.kernels.push(kernel),
            Record::Queue(queue) => trace.queues.push(queue),
            Record::SegmentBegin { ordinal } => {
                trace.segments.push(Segment { ordinal, ended_by: String::new(), initial: Vec::new(), expected: Vec::new() })
            }
            Record::Node(node) => trace.nodes.push(node),
            Record::Edge(edge) => trace.edges.push(edge),
            Record::InitialState { segment, state } => segment_mut(trace, segment)?.initial.push(state),
            Record::SegmentEnd { segment, ended_by, expected } => {
                let segment = segment_mut(trace, segment)?;
                segment.ended_by = ended_by;
                segment.expected = expected;
            }
            Record::Partial(reason) => trace.partial.push(reason),
            Record::Expected { segment, state } => segment_mut(trace, segment)?.expected.push(state),
        }
        Ok(())
    }
}

fn segment_mut(trace: &mut Trace, id: SegmentId) -> Result<&mut Segment, String> {
    trace.segments.get_mut(id.index()).ok_or_else(|| format!("refers to segment {id}, which has not begun"))
}

fn truncated(valid_bytes: usize, reason: &str) -> Completeness {
    Completeness::Truncated { valid_bytes: valid_bytes as u64, reason: reason.to_string() }
}
