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
    /// Checksummed when the file was read; decompressed and checked against its id on `get`.
    InFile { file: Arc<[u8]>, start: usize, end: usize, codec: Codec, raw_len: u64, offset: u64 },
}

impl BlobStore {
    pub fn insert(&mut self, bytes: Vec<u8>) -> BlobId {
        let id = BlobId::of(&bytes);
        self.blobs.entry(id).or_insert_with(|| Stored::Owned(bytes.into()));
        id
    }

    /// A blob as the frame at `offset` of `file` holds it, in `range`.
    pub(super) fn insert_from_file(&mut self, id: BlobId, file: Arc<[u8]>, range: std::ops::Range<usize>, codec: Codec, raw_len: u64, offset: u64) {
        self.blobs.entry(id).or_insert(Stored::InFile { file, start: range.start, end: range.end, codec, raw_len, offset });
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
            Stored::InFile { raw_len, .. } => *raw_len,
        })
    }

    /// Bytes the blob takes in the file (its uncompressed size for blobs not read from one).
    pub fn stored_len(&self, id: BlobId) -> Option<u64> {
        self.blobs.get(&id).map(|stored| match stored {
            Stored::Owned(bytes) => bytes.len() as u64,
            Stored::InFile { start, end, .. } => (end - start) as u64,
        })
    }

    pub fn get(&self, id: BlobId) -> Result<Cow<'_, [u8]>, FormatError> {
        match self.blobs.get(&id).ok_or(FormatError::MissingBlob(id))? {
            Stored::Owned(bytes) => Ok(Cow::Borrowed(bytes)),
            Stored::InFile { file, start, end, codec, raw_len, offset } => {
                let stored = &file[*start..*end];
                let malformed = |problem: String| FormatError::Malformed { offset: *offset, problem };
                let bytes = match codec {
                    Codec::Raw => Cow::Borrowed(stored),
                    Codec::Lz4 => {
                        let mut out = vec![0u8; *raw_len as usize];
                        let n = lz4_flex::block::decompress_into(stored, &mut out)
                            .map_err(|e| malformed(format!("holds blob {id} that does not decompress: {e}")))?;
                        out.truncate(n);
                        Cow::Owned(out)
                    }
                };
                if bytes.len() as u64 != *raw_len || BlobId::of(&bytes) != id {
                    return Err(malformed(format!("holds blob {id} whose contents do not match its id")));
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
