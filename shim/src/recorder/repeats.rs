//! Large host memory the trace keeps (what the program received, pages the host wrote) whose
//! contents it kept before. simpleStreams receives the same 64 MB at every step: copying them
//! held the program 2 ms a step, and the preparing threads hashed each copy only to find the
//! blob stored. Hashing the memory where it lies, a piece per thread (`in_pieces::fingerprint`),
//! reads it once and writes nothing; contents fingerprinted before are named by the blob that
//! held them, with no copy. Where contents keep changing, the fingerprint is wasted work: a
//! place (address and length) whose contents were new `MISSES_BEFORE_SKIPPING` times in a row
//! is kept without one first, its next 254 times. New contents are compressed where they lie
//! when they compress (`in_pieces::compress`, which fingerprints their compressed form on the
//! way), else copied for the preparing threads. Large device memory the shim read into buffers of
//! its own is compressed the same way, so that contents get one name however they came.

use super::Sink;
use crate::fast_hash::HashMap;
use crate::{in_pieces, large_buffers};
use trace_format::{BlobId, PreparedBlob};

/// Contents shorter than this are copied: fingerprinting them gains little.
const FINGERPRINTED_FROM: usize = 1 << 20;
const MISSES_BEFORE_SKIPPING: u8 = 2;
/// At most this many places and fingerprints are kept; then they start again.
const KEPT: usize = 4096;

#[derive(Default)]
pub struct Repeats {
    /// The blob each fingerprint (with its length) was kept in: of the contents, or the id of
    /// their compressed form (`in_pieces::compress`, seeded apart from fingerprints).
    blobs: HashMap<(usize, u128), BlobId>,
    /// How often in a row the contents at each place were new.
    misses: HashMap<(usize, usize), u8>,
}

impl Repeats {
    /// The blob holding `bytes`, found at `address`: one kept before with the same contents, or
    /// a new one sent to `sink`.
    pub fn blob(&mut self, address: usize, bytes: &[u8], sink: &mut dyn Sink) -> BlobId {
        if bytes.len() < FINGERPRINTED_FROM {
            return copied(bytes, sink);
        }
        if self.misses.len() >= KEPT {
            self.misses.clear();
        }
        let misses = self.misses.entry((address, bytes.len())).or_default();
        if *misses >= MISSES_BEFORE_SKIPPING {
            // Counting on to 255 and over to 0: then fingerprinted first again.
            *misses = misses.wrapping_add(1);
            return self.kept_new(bytes, None, sink);
        }
        let fingerprint = in_pieces::fingerprint(bytes);
        if let Some(&blob) = self.blobs.get(&(bytes.len(), fingerprint)) {
            *misses = 0;
            return blob;
        }
        *misses += 1;
        self.kept_new(bytes, Some(fingerprint), sink)
    }

    /// `bytes`, likely new: compressed where they lie if they compress (the fingerprint of their
    /// compressed form names the blob, and may still find them kept), else copied; remembered
    /// by `fingerprint` (of the contents) too, where known.
    fn kept_new(&mut self, bytes: &[u8], fingerprint: Option<u128>, sink: &mut dyn Sink) -> BlobId {
        let blob = match in_pieces::compress(bytes) {
            Some((id, pieces)) => self.compressed(bytes.len(), id, pieces, sink),
            None => copied(bytes, sink),
        };
        if let Some(fingerprint) = fingerprint {
            self.remember((bytes.len(), fingerprint), blob);
        }
        blob
    }

    /// Contents the shim read into a buffer of its own (device memory): large ones that compress
    /// are compressed here as host memory is, and so named alike (reduction's input, uploaded and
    /// read back unchanged at its end, was stored twice, and its exit waited 224 ms for the second
    /// compression on one preparing thread); others go to the preparing threads as they are.
    pub fn owned_blob(&mut self, bytes: Vec<u8>, sink: &mut dyn Sink) -> BlobId {
        match in_pieces::compress(&bytes) {
            Some((id, pieces)) => {
                let blob = self.compressed(bytes.len(), id, pieces, sink);
                large_buffers::give_back(bytes);
                blob
            }
            None => sink.blob(bytes),
        }
    }

    /// The blob of `len` bytes compressed where they lay into `pieces`, named `id` by their
    /// compressed form: one kept before, or a new one.
    fn compressed(&mut self, len: usize, id: BlobId, pieces: Vec<Vec<u8>>, sink: &mut dyn Sink) -> BlobId {
        if let Some(&blob) = self.blobs.get(&(len, id.0)) {
            return blob;
        }
        let blob = sink.prepared_blob(PreparedBlob::in_pieces(id, len, pieces));
        self.remember((len, id.0), blob);
        blob
    }

    fn remember(&mut self, fingerprint: (usize, u128), blob: BlobId) {
        if self.blobs.len() >= KEPT {
            self.blobs.clear();
        }
        self.blobs.insert(fingerprint, blob);
    }
}

fn copied(bytes: &[u8], sink: &mut dyn Sink) -> BlobId {
    sink.blob(large_buffers::copy_of(bytes))
}

#[cfg(test)]
mod tests {
    use super::*;

    /// Keeps each copied blob under a new number, and each prepared one under its id.
    #[derive(Default)]
    struct Kept {
        blobs: Vec<Vec<u8>>,
        /// Whether each blob came compressed.
        prepared: Vec<bool>,
    }

    impl Sink for Kept {
        fn record(&mut self, _: trace_format::Record) {}
        fn records(&mut self, _: Vec<trace_format::Record>) {}
        fn blob(&mut self, bytes: Vec<u8>) -> BlobId {
            self.blobs.push(bytes);
            self.prepared.push(false);
            BlobId(self.blobs.len() as u128)
        }
        fn prepared_blob(&mut self, blob: PreparedBlob) -> BlobId {
            self.blobs.push(blob.to_raw().expect("a blob that decompresses"));
            self.prepared.push(true);
            blob.id
        }
        fn flush(&mut self) {}
    }

    #[test]
    fn large_contents_kept_before_are_named_by_their_blob_without_a_copy() {
        let (mut repeats, mut kept) = (Repeats::default(), Kept::default());
        let large = vec![5u8; 2 * FINGERPRINTED_FROM];
        let first = repeats.blob(0x1000, &large, &mut kept);
        // The same contents at the same place, and elsewhere.
        assert_eq!(repeats.blob(0x1000, &large, &mut kept), first);
        assert_eq!(repeats.blob(0x9000, &large.clone(), &mut kept), first);
        assert_eq!(kept.blobs.len(), 1);
        // One byte differs: a new blob with those contents.
        let mut changed = large.clone();
        changed[FINGERPRINTED_FROM + 1] = 6;
        let second = repeats.blob(0x1000, &changed, &mut kept);
        assert_ne!(second, first);
        assert_eq!(kept.blobs.last(), Some(&changed));
        // Small contents are kept each time.
        let small = vec![5u8; 100];
        assert_ne!(repeats.blob(0x1000, &small, &mut kept), repeats.blob(0x1000, &small, &mut kept));
    }

    #[test]
    fn a_place_whose_contents_keep_changing_is_copied_without_a_fingerprint() {
        let (mut repeats, mut kept) = (Repeats::default(), Kept::default());
        let contents: Vec<Vec<u8>> = (0..4u8).map(|seed| vec![seed; 2 * FINGERPRINTED_FROM]).collect();
        for bytes in &contents {
            repeats.blob(0x1000, bytes, &mut kept);
        }
        assert_eq!(kept.blobs, contents);
        // Only the first two were fingerprinted: the third contents come again as a new blob.
        let again = repeats.blob(0x1000, &contents[2], &mut kept);
        assert_eq!(again, BlobId(5));
        // Elsewhere the place's misses do not count: the first contents are found.
        assert_eq!(repeats.blob(0x2000, &contents[0], &mut kept), BlobId(1));
        // After 254 copies without a fingerprint, the place's contents are fingerprinted again.
        for _ in 0..251 {
            repeats.blob(0x1000, &contents[0], &mut kept);
        }
        assert_eq!(kept.blobs.len(), 256);
        assert_eq!(repeats.blob(0x1000, &contents[0], &mut kept), BlobId(1));
    }

    /// Contents of at least `in_pieces::IN_PARALLEL_FROM`: compressible (a value per 4 bytes,
    /// as a kernel's results) or not (noise).
    fn large(seed: u32, compressible: bool) -> Vec<u8> {
        let words = in_pieces::IN_PARALLEL_FROM / 4 + 1000;
        let word = |index: u32| match compressible {
            true => seed,
            false => index.wrapping_mul(2_654_435_761).rotate_left(seed % 32) ^ seed.wrapping_mul(40_503),
        };
        (0..words as u32).flat_map(|index| word(index).to_le_bytes()).collect()
    }

    #[test]
    fn large_new_contents_that_compress_are_compressed_where_they_lie_and_found_again_by_fingerprint() {
        let (mut repeats, mut kept) = (Repeats::default(), Kept::default());
        // A place whose contents are new each time, as a loop receiving its results.
        let steps: Vec<Vec<u8>> = (0..5).map(|step| large(step, true)).collect();
        let blobs: Vec<BlobId> = steps.iter().map(|bytes| repeats.blob(0x1000, bytes, &mut kept)).collect();
        assert_eq!(kept.blobs, steps, "each step's contents, decompressed, are what the place held");
        assert_eq!(kept.prepared, [true; 5], "none copied");
        // Fingerprinted first (the first two steps) or not, contents come under the fingerprint
        // of their compressed form.
        assert!(blobs.iter().zip(&steps).all(|(blob, bytes)| Some(*blob) == in_pieces::compress(bytes).map(|(id, _)| id)));
        // Contents compressed before, received elsewhere or at the place, are named by their blob:
        // by their fingerprint where they were fingerprinted first (the first two steps), by the
        // id of their compressed form otherwise.
        assert_eq!(repeats.blob(0xa000, &steps[0], &mut kept), blobs[0]);
        assert_eq!(repeats.blob(0x9000, &steps[3], &mut kept), blobs[3]);
        assert_eq!(repeats.blob(0x1000, &steps[1], &mut kept), blobs[1]);
        assert_eq!(kept.blobs.len(), 5);
        // Contents that do not compress are copied for the preparing threads.
        let noise = large(7, false);
        let copied = repeats.blob(0x1000, &noise, &mut kept);
        assert_eq!((kept.blobs.last(), kept.prepared.last()), (Some(&noise), Some(&false)));
        assert_eq!(copied, BlobId(6));
        // Device memory read into a buffer of the shim's: named as the same contents received
        // were; new contents that compress come compressed, others as they are.
        assert_eq!(repeats.owned_blob(steps[2].clone(), &mut kept), blobs[2]);
        assert_eq!(kept.blobs.len(), 6);
        let new = large(9, true);
        repeats.owned_blob(new.clone(), &mut kept);
        assert_eq!((kept.blobs.last(), kept.prepared.last()), (Some(&new), Some(&true)));
        repeats.owned_blob(large(8, false), &mut kept);
        assert_eq!((kept.blobs.last(), kept.prepared.last()), (Some(&large(8, false)), Some(&false)));
    }
}
