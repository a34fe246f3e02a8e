//! Where a trace's bytes are: a file read by offset (never loaded whole), or bytes in memory.

use std::fs::File;
use std::os::unix::fs::FileExt;
use std::path::Path;
use std::sync::Arc;

#[derive(Debug)]
pub(super) enum Source {
    File { file: File, len: u64 },
    Bytes(Arc<[u8]>),
}

impl Source {
    pub fn open(path: &Path) -> std::io::Result<Source> {
        let file = File::open(path)?;
        let len = file.metadata()?.len();
        Ok(Source::File { file, len })
    }

    pub fn len(&self) -> u64 {
        match self {
            Source::File { len, .. } => *len,
            Source::Bytes(bytes) => bytes.len() as u64,
        }
    }

    /// Fills `buffer` with the bytes at `offset`, which the caller has checked lie in the source.
    pub fn read_at(&self, offset: u64, buffer: &mut [u8]) -> std::io::Result<()> {
        match self {
            Source::File { file, .. } => file.read_exact_at(buffer, offset),
            Source::Bytes(bytes) => {
                let start = usize::try_from(offset).map_err(std::io::Error::other)?;
                let part = start.checked_add(buffer.len()).and_then(|end| bytes.get(start..end));
                buffer.copy_from_slice(part.ok_or_else(|| std::io::Error::from(std::io::ErrorKind::UnexpectedEof))?);
                Ok(())
            }
        }
    }
}
