use super::chunks;
use super::frame::{Codec, BLOB_PREFIX_LEN, FRAME_HEADER_LEN};
use super::source::Source;
use super::FormatError;
use crate::BlobId;
use rustc_hash::FxHashMap;
use std::borrow::Cow;
use std::sync::Arc;

/// Blob contents by id. Blobs of a trace file are not read when the file is opened: the store
/// knows where each one is, and reads, checksums and decompresses it when `get` asks for it,
/// so sizes can be reported without reading anything. Cloning a store is cheap (shared).
#[derive(Clone, Debug, Default)]
pub struct BlobStore {
    /// FxHash: blob ids are hashes already, and a trace may hold a million blobs.
    blobs: Arc<FxHashMap<BlobId, Stored>>,
    /// The file the `InFile` blobs are in.
    file: Option<Arc<Source>>,
}

#[derive(Clone, Debug)]
enum Stored {
    Owned(Arc<[u8]>),
    InFile(StoredBlob),
}

/// Where a blob frame is in its file; checksummed and decompressed on `get`.
#[derive(Clone, Copy, Debug)]
pub(super) struct StoredBlob {
    /// The frame's offset.
    pub offset: u64,
    /// The frame's payload: prefix and stored bytes.
    pub payload_len: u32,
    pub codec: Codec,
    pub raw_len: u64,
    /// Checksum of the frame's payload.
    pub crc: u32,
}

impl StoredBlob {
    fn stored_len(&self) -> u64 {
        u64::from(self.payload_len) - BLOB_PREFIX_LEN as u64
    }
}

impl BlobStore {
    pub(super) fn of_file(file: Arc<Source>) -> BlobStore {
        BlobStore { blobs: Arc::default(), file: Some(file) }
    }

    pub fn insert(&mut self, bytes: Vec<u8>) -> BlobId {
        let id = BlobId::of(&bytes);
        Arc::make_mut(&mut self.blobs).entry(id).or_insert_with(|| Stored::Owned(bytes.into()));
        id
    }

    pub(super) fn insert_from_file(&mut self, id: BlobId, blob: StoredBlob) {
        Arc::make_mut(&mut self.blobs).entry(id).or_insert(Stored::InFile(blob));
    }

    pub fn contains(&self, id: BlobId) -> bool {
        self.blobs.contains_key(&id)
    }

    pub fn len(&self) -> usize {
        self.blobs.len()
    }

    pub fn is_empty(&self) -> bool {
        self.blobs.is_empty()
    }

    pub fn ids(&self) -> impl Iterator<Item = BlobId> + '_ {
        self.blobs.keys().copied()
    }

    pub fn raw_len(&self, id: BlobId) -> Option<u64> {
        self.blobs.get(&id).map(|stored| match stored {
            Stored::Owned(bytes) => bytes.len() as u64,
            Stored::InFile(blob) => blob.raw_len,
        })
    }

    /// Bytes the blob takes in the file (its uncompressed size for blobs not read from one).
    pub fn stored_len(&self, id: BlobId) -> Option<u64> {
        self.blobs.get(&id).map(|stored| match stored {
            Stored::Owned(bytes) => bytes.len() as u64,
            Stored::InFile(blob) => blob.stored_len(),
        })
    }

    pub fn get(&self, id: BlobId) -> Result<Cow<'_, [u8]>, FormatError> {
        match self.blobs.get(&id).ok_or(FormatError::MissingBlob(id))? {
            Stored::Owned(bytes) => Ok(Cow::Borrowed(bytes)),
            Stored::InFile(blob) => {
                let file = self.file.as_ref().ok_or(FormatError::MissingBlob(id))?;
                let mut bytes = Vec::new();
                read_blob(file, id, blob, &mut bytes)?;
                Ok(Cow::Owned(bytes))
            }
        }
    }

    /// `get` into `buffer` (its contents replaced): a caller reading one large blob after another
    /// reuses one buffer instead of having fresh pages faulted in and zeroed for each.
    pub fn get_into(&self, id: BlobId, buffer: &mut Vec<u8>) -> Result<(), FormatError> {
        match self.blobs.get(&id).ok_or(FormatError::MissingBlob(id))? {
            Stored::Owned(bytes) => {
                buffer.clear();
                buffer.extend_from_slice(bytes);
                Ok(())
            }
            Stored::InFile(blob) => read_blob(self.file.as_ref().ok_or(FormatError::MissingBlob(id))?, id, blob, buffer),
        }
    }

    /// Reads every blob once: finds damage that `get` would only find later.
    pub fn verify(&self) -> Result<(), FormatError> {
        self.ids().try_for_each(|id| self.get(id).map(drop))
    }
}

fn read_blob(file: &Source, id: BlobId, blob: &StoredBlob, out: &mut Vec<u8>) -> Result<(), FormatError> {
    let StoredBlob { offset, payload_len, codec, raw_len, crc } = *blob;
    let malformed = |problem: String| FormatError::Malformed { offset, problem };
    // The prefix is read apart from the stored bytes, which then need no move to the front (a
    // 1 GB blob's took a fifth of a comparison's time); the checksum covers both.
    let start = offset + FRAME_HEADER_LEN as u64;
    let mut prefix = [0u8; BLOB_PREFIX_LEN];
    let stored_len = (payload_len as usize).checked_sub(BLOB_PREFIX_LEN).ok_or_else(|| malformed(format!("holds blob {id} shorter than its prefix")))?;
    let raw_len = usize::try_from(raw_len).map_err(|_| malformed(format!("holds blob {id} of {raw_len} bytes, more than this machine addresses")))?;
    file.read_at(start, &mut prefix)?;
    let mut checksum = crc32fast::Hasher::new();
    checksum.update(&prefix);
    let mut compressed = Vec::new();
    // Raw bytes go straight into `out`; compressed ones through a buffer of their own.
    let stored = match codec {
        Codec::Raw => &mut *out,
        Codec::Lz4 | Codec::Lz4Chunks => &mut compressed,
    };
    stored.clear();
    stored.resize(stored_len, 0);
    file.read_at(start + BLOB_PREFIX_LEN as u64, stored)?;
    checksum.update(stored);
    if checksum.finalize() != crc {
        return Err(FormatError::Checksum { offset });
    }
    if codec != Codec::Raw {
        out.clear();
        out.resize(raw_len, 0);
    }
    match codec {
        Codec::Raw => {}
        Codec::Lz4 => {
            let decompressed = lz4_flex::block::decompress_into(&compressed, out).map_err(|e| malformed(format!("holds blob {id} that does not decompress: {e}")))?;
            out.truncate(decompressed);
        }
        Codec::Lz4Chunks => {
            chunks::decompress(&compressed, out).map_err(|problem| malformed(format!("holds blob {id} whose compressed form {problem}")))?;
        }
    }
    // The checksum guards the stored bytes; the length guards the codec.
    if out.len() != raw_len {
        return Err(malformed(format!("holds blob {id} that decompresses to {} bytes, not {raw_len}", out.len())));
    }
    Ok(())
}
