//! Framing shared by the writer and the reader.

pub const MAGIC: &[u8; 8] = b"REPRISE\0";
pub const HEADER_LEN: usize = 16;
pub const FRAME_HEADER_LEN: usize = 9;
pub const TRAILER_MAGIC: &[u8; 8] = b"RPRSIDX\0";
pub const TRAILER_LEN: usize = 16;

#[derive(Clone, Copy, Debug, PartialEq, Eq)]
#[repr(u8)]
pub enum FrameKind {
    Record = 1,
    Blob = 2,
    Index = 3,
}

impl FrameKind {
    pub fn from_byte(byte: u8) -> Option<FrameKind> {
        match byte {
            1 => Some(FrameKind::Record),
            2 => Some(FrameKind::Blob),
            3 => Some(FrameKind::Index),
            _ => None,
        }
    }
}

/// Blob payload: id (16 bytes), codec (1), raw length (8), then the stored bytes.
pub const BLOB_PREFIX_LEN: usize = 25;

#[derive(Clone, Copy, Debug, PartialEq, Eq)]
#[repr(u8)]
pub enum Codec {
    Raw = 0,
    /// One lz4 block.
    Lz4 = 1,
    /// lz4 blocks of a fixed number of raw bytes each (`chunks`).
    Lz4Chunks = 2,
}

impl Codec {
    pub fn from_byte(byte: u8) -> Option<Codec> {
        match byte {
            0 => Some(Codec::Raw),
            1 => Some(Codec::Lz4),
            2 => Some(Codec::Lz4Chunks),
            _ => None,
        }
    }
}

pub fn frame_header(kind: FrameKind, payload_parts: &[&[u8]]) -> [u8; FRAME_HEADER_LEN] {
    let mut crc = crc32fast::Hasher::new();
    let mut len = 0usize;
    for part in payload_parts {
        crc.update(part);
        len += part.len();
    }
    let mut header = [0u8; FRAME_HEADER_LEN];
    header[0] = kind as u8;
    header[1..5].copy_from_slice(&(len as u32).to_le_bytes());
    header[5..9].copy_from_slice(&crc.finalize().to_le_bytes());
    header
}
