//! Large host memory the trace keeps (what the program received, pages the host wrote) whose
//! contents it kept before. simpleStreams receives the same 64 MB at every step: copying them
//! held the program 2 ms a step, and the preparing threads hashed each copy only to find the
//! blob stored. Hashing the memory where it lies, a piece per thread (`in_pieces::fingerprint`),
//! reads it once and writes nothing; contents fingerprinted before are named by the blob that
//! held them, with no copy. Where contents keep changing, the fingerprint is wasted work: a
//! place (address and length) whose contents were new `MISSES_BEFORE_COPYING` times in a row
//! is copied without one, its next 254 times.

use crate::fast_hash::HashMap;
use crate::in_pieces;
use trace_format::BlobId;

/// Contents shorter than this are copied: fingerprinting them gains little.
const FINGERPRINTED_FROM: usize = 1 << 20;
const MISSES_BEFORE_COPYING: u8 = 2;
/// At most this many places and fingerprints are kept; then they start again.
const KEPT: usize = 4096;

#[derive(Default)]
pub struct Repeats {
    /// The blob each fingerprint (with its length) was kept in.
    blobs: HashMap<(usize, u128), BlobId>,
    /// How often in a row the contents at each place were new.
    misses: HashMap<(usize, usize), u8>,
}

impl Repeats {
    /// The blob holding `bytes`, found at `address`: one kept before with the same contents, or
    /// a new one that `keep` makes of them.
    pub fn blob(&mut self, address: usize, bytes: &[u8], keep: impl FnOnce(&[u8]) -> BlobId) -> BlobId {
        if bytes.len() < FINGERPRINTED_FROM {
            return keep(bytes);
        }
        if self.misses.len() >= KEPT {
            self.misses.clear();
        }
        let misses = self.misses.entry((address, bytes.len())).or_default();
        if *misses >= MISSES_BEFORE_COPYING {
            // Counting on to 255 and over to 0: then fingerprinted again.
            *misses = misses.wrapping_add(1);
            return keep(bytes);
        }
        let fingerprint = (bytes.len(), in_pieces::fingerprint(bytes));
        if let Some(&blob) = self.blobs.get(&fingerprint) {
            *misses = 0;
            return blob;
        }
        *misses += 1;
        if self.blobs.len() >= KEPT {
            self.blobs.clear();
        }
        let blob = keep(bytes);
        self.blobs.insert(fingerprint, blob);
        blob
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    /// Keeps each blob under a new number, counting how many bytes were kept.
    #[derive(Default)]
    struct Kept {
        blobs: Vec<Vec<u8>>,
    }

    impl Kept {
        fn keep(&mut self, bytes: &[u8]) -> BlobId {
            self.blobs.push(bytes.to_vec());
            BlobId(self.blobs.len() as u128)
        }
    }

    #[test]
    fn large_contents_kept_before_are_named_by_their_blob_without_a_copy() {
        let (mut repeats, mut kept) = (Repeats::default(), Kept::default());
        let large = vec![5u8; 2 * FINGERPRINTED_FROM];
        let first = repeats.blob(0x1000, &large, |bytes| kept.keep(bytes));
        // The same contents at the same place, and elsewhere.
        assert_eq!(repeats.blob(0x1000, &large, |bytes| kept.keep(bytes)), first);
        assert_eq!(repeats.blob(0x9000, &large.clone(), |bytes| kept.keep(bytes)), first);
        assert_eq!(kept.blobs.len(), 1);
        // One byte differs: a new blob with those contents.
        let mut changed = large.clone();
        changed[FINGERPRINTED_FROM + 1] = 6;
        let second = repeats.blob(0x1000, &changed, |bytes| kept.keep(bytes));
        assert_ne!(second, first);
        assert_eq!(kept.blobs.last(), Some(&changed));
        // Small contents are kept each time.
        let small = vec![5u8; 100];
        assert_ne!(repeats.blob(0x1000, &small, |bytes| kept.keep(bytes)), repeats.blob(0x1000, &small, |bytes| kept.keep(bytes)));
    }

    #[test]
    fn a_place_whose_contents_keep_changing_is_copied_without_a_fingerprint() {
        let (mut repeats, mut kept) = (Repeats::default(), Kept::default());
        let contents: Vec<Vec<u8>> = (0..4u8).map(|seed| vec![seed; 2 * FINGERPRINTED_FROM]).collect();
        for bytes in &contents {
            repeats.blob(0x1000, bytes, |bytes| kept.keep(bytes));
        }
        assert_eq!(kept.blobs, contents);
        // Only the first two were fingerprinted: the third contents come again as a new blob.
        let again = repeats.blob(0x1000, &contents[2], |bytes| kept.keep(bytes));
        assert_eq!(again, BlobId(5));
        // Elsewhere the place's misses do not count: the first contents are found.
        assert_eq!(repeats.blob(0x2000, &contents[0], |bytes| kept.keep(bytes)), BlobId(1));
        // After 254 copies without a fingerprint, the place's contents are fingerprinted again.
        for _ in 0..251 {
            repeats.blob(0x1000, &contents[0], |bytes| kept.keep(bytes));
        }
        assert_eq!(kept.blobs.len(), 256);
        assert_eq!(repeats.blob(0x1000, &contents[0], |bytes| kept.keep(bytes)), BlobId(1));
    }
}
