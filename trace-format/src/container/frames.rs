//! Walks the frames of a trace one after another through a buffer of bounded size: record
//! payloads are read and checksummed, blob frames only have their prefix read (their bytes are
//! skipped, and checksummed when the blob is read).

use super::blobs::StoredBlob;
use super::frame::*;
use super::source::Source;
use super::FormatError;
use crate::BlobId;

/// Bytes read from the source at a time; a larger record payload is read on its own.
const BUFFER_LEN: usize = 1 << 20;
/// lz4 expands at most 255:1; a raw length beyond that is damage, not a reason to allocate.
const LZ4_MAX_RATIO: u64 = 255;

pub(super) enum Frame<'b> {
    Record(&'b [u8]),
    Blob { id: BlobId, stored: StoredBlob },
    /// An index: the end of the frames.
    Index,
}

pub(super) enum Step<'b> {
    /// A whole frame at `offset`.
    Frame { offset: u64, frame: Frame<'b> },
    /// The walk reached its end.
    End,
    /// The source ends inside the frame at this offset.
    Cut(u64),
}

pub(super) struct Frames<'s> {
    source: &'s Source,
    /// Where the next frame starts.
    position: u64,
    /// Where the walk stops: the end of the source, or where its index starts.
    end: u64,
    buffer: Vec<u8>,
    /// The source offset of `buffer[0]`.
    buffer_start: u64,
    large: Vec<u8>,
}

impl<'s> Frames<'s> {
    pub fn new(source: &'s Source, start: u64, end: u64) -> Frames<'s> {
        Frames { source, position: start, end, buffer: Vec::new(), buffer_start: 0, large: Vec::new() }
    }

    pub fn position(&self) -> u64 {
        self.position
    }

    /// The frame at the current position, then moves past it.
    pub fn next_frame(&mut self) -> Result<Step<'_>, FormatError> {
        let offset = self.position;
        if offset >= self.end {
            return Ok(Step::End);
        }
        let available = self.end - offset;
        if available < FRAME_HEADER_LEN as u64 {
            return Ok(Step::Cut(offset));
        }
        let header: [u8; FRAME_HEADER_LEN] = self.bytes(offset, FRAME_HEADER_LEN)?.try_into().expect("a frame header");
        let kind = FrameKind::from_byte(header[0])
            .ok_or_else(|| FormatError::Malformed { offset, problem: format!("has unknown kind {}", header[0]) })?;
        let len = u64::from(u32::from_le_bytes(header[1..5].try_into().expect("4 bytes")));
        let crc = u32::from_le_bytes(header[5..9].try_into().expect("4 bytes"));
        if len > available - FRAME_HEADER_LEN as u64 {
            return Ok(Step::Cut(offset));
        }
        self.position = offset + FRAME_HEADER_LEN as u64 + len;
        let payload_at = offset + FRAME_HEADER_LEN as u64;
        let frame = match kind {
            FrameKind::Blob => {
                let (id, stored) = blob_prefix(self.bytes(payload_at, len.min(BLOB_PREFIX_LEN as u64) as usize)?, len, crc, offset)?;
                Frame::Blob { id, stored }
            }
            FrameKind::Record | FrameKind::Index => {
                let payload = self.bytes(payload_at, len as usize)?;
                if crc32fast::hash(payload) != crc {
                    return Err(FormatError::Checksum { offset });
                }
                match kind {
                    FrameKind::Record => Frame::Record(payload),
                    _ => Frame::Index,
                }
            }
        };
        Ok(Step::Frame { offset, frame })
    }

    /// `len` bytes at `offset` (inside the walk's range), from the buffer where they fit.
    fn bytes(&mut self, offset: u64, len: usize) -> Result<&[u8], FormatError> {
        if len > BUFFER_LEN {
            self.large.resize(len, 0);
            self.source.read_at(offset, &mut self.large)?;
            return Ok(&self.large);
        }
        let buffered = offset >= self.buffer_start && offset + len as u64 <= self.buffer_start + self.buffer.len() as u64;
        if !buffered {
            let fill = (self.end - offset).min(BUFFER_LEN as u64) as usize;
            self.buffer.resize(fill, 0);
            self.source.read_at(offset, &mut self.buffer)?;
            self.buffer_start = offset;
        }
        let start = (offset - self.buffer_start) as usize;
        Ok(&self.buffer[start..start + len])
    }
}

/// A blob frame's id and where its bytes are, from the start of its payload (`len` bytes).
fn blob_prefix(prefix: &[u8], len: u64, crc: u32, offset: u64) -> Result<(BlobId, StoredBlob), FormatError> {
    let malformed = |problem: String| FormatError::Malformed { offset, problem };
    if prefix.len() < BLOB_PREFIX_LEN {
        return Err(malformed("is a blob frame too short for its prefix".into()));
    }
    let id = BlobId(u128::from_le_bytes(prefix[..16].try_into().expect("16 bytes")));
    let codec = Codec::from_byte(prefix[16]).ok_or_else(|| malformed(format!("holds a blob with unknown codec {}", prefix[16])))?;
    let raw_len = u64::from_le_bytes(prefix[17..25].try_into().expect("8 bytes"));
    let stored_len = len - BLOB_PREFIX_LEN as u64;
    let plausible = match codec {
        Codec::Raw => raw_len == stored_len,
        Codec::Lz4 | Codec::Lz4Chunks => raw_len <= stored_len.saturating_mul(LZ4_MAX_RATIO).saturating_add(16),
    };
    if !plausible {
        return Err(malformed(format!("holds blob {id} whose length {raw_len} does not fit its {stored_len} stored bytes")));
    }
    Ok((id, StoredBlob { offset, payload_len: len as u32, codec, raw_len, crc }))
}
