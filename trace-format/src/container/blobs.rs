use super::frame::Codec;
use super::FormatError;
use crate::BlobId;
use std::borrow::Cow;
use std::collections::HashMap;
use std::sync::Arc;

/// Blob contents by id. Blobs read from a file stay compressed, sharing the file's bytes,
/// until `get` asks for one, so sizes can be reported without decompressing anything.
#[derive(Clone, Debug, Default)]
pub struct BlobStore {
    blobs: HashMap<BlobId, Stored>,
}

#[derive(Clone, Debug)]
enum Stored {
    Owned(Arc<[u8]>),
    InFile { file: Arc<[u8]>, blob: StoredBlob },
}

/// Where a blob frame keeps its bytes in a file; checksummed and decompressed on `get`.
#[derive(Clone, Debug)]
pub(super) struct StoredBlob {
    pub range: std::ops::Range<usize>,
    pub codec: Codec,
    pub raw_len: u64,
    /// Checksum of the frame's payload (prefix and stored bytes).
    pub crc: u32,
    /// The frame's offset, for error messages.
    pub offset: u64,
}

impl BlobStore {
    pub fn insert(&mut self, bytes: Vec<u8>) -> BlobId {
        let id = BlobId::of(&bytes);
        self.blobs.entry(id).or_insert_with(|| Stored::Owned(bytes.into()));
        id
    }

    pub(super) fn insert_from_file(&mut self, id: BlobId, file: Arc<[u8]>, blob: StoredBlob) {
        self.blobs.entry(id).or_insert(Stored::InFile { file, blob });
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
            Stored::InFile { blob, .. } => blob.raw_len,
        })
    }

    /// Bytes the blob takes in the file (its uncompressed size for blobs not read from one).
    pub fn stored_len(&self, id: BlobId) -> Option<u64> {
        self.blobs.get(&id).map(|stored| match stored {
            Stored::Owned(bytes) => bytes.len() as u64,
            Stored::InFile { blob, .. } => blob.range.len() as u64,
        })
    }

    pub fn get(&self, id: BlobId) -> Result<Cow<'_, [u8]>, FormatError> {
        match self.blobs.get(&id).ok_or(FormatError::MissingBlob(id))? {
            Stored::Owned(bytes) => Ok(Cow::Borrowed(bytes)),
            Stored::InFile { file, blob: StoredBlob { range, codec, raw_len, crc, offset } } => {
                if crc32fast::hash(&file[range.start - super::frame::BLOB_PREFIX_LEN..range.end]) != *crc {
                    return Err(FormatError::Checksum { offset: *offset });
                }
                let stored = &file[range.clone()];
                let malformed = |problem: String| FormatError::Malformed { offset: *offset, problem };
                let bytes = match codec {
                    Codec::Raw => Cow::Borrowed(stored),
                    Codec::Lz4 => Cow::Owned(
                        lz4_flex::block::decompress(stored, *raw_len as usize)
                            .map_err(|e| malformed(format!("holds blob {id} that does not decompress: {e}")))?,
                    ),
                };
                // The checksum guards the stored bytes; the length guards the codec.
                if bytes.len() as u64 != *raw_len {
                    return Err(malformed(format!("holds blob {id} that decompresses to {} bytes, not {raw_len}", bytes.len())));
                }
                Ok(bytes)
            }
        }
    }

    /// Reads every blob once: finds damage that `get` would only find later.
    pub fn verify(&self) -> Result<(), FormatError> {
        self.ids().try_for_each(|id| self.get(id).map(drop))
    }
}
