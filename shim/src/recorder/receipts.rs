//! Large data the host receives into the same memory as last time, byte for byte, is not
//! copied again: the trace names the blob stored then. simpleStreams receives the same 64 MB at
//! each of its 100 steps; copying it held the program about 4 ms a step, where hashing it in
//! place only reads it. Hashes are compared piece by piece, so only unchanged data is named
//! again, and data seen to change is copied (and hashed while copied) without a read first.

use crate::large_buffers::{self, LARGE};
use std::collections::VecDeque;
use trace_format::BlobId;

/// Host regions remembered; the oldest is forgotten first.
const REMEMBERED: usize = 16;

#[derive(Default)]
pub struct Receipts {
    last: VecDeque<Receipt>,
}

/// What a host region received last.
struct Receipt {
    address: usize,
    len: usize,
    /// `large_buffers::piece_hashes` of the data.
    pieces: Vec<u64>,
    blob: BlobId,
    /// The data was the same as the time before: the next receipt is hashed before it is copied.
    repeated: bool,
}

impl Receipts {
    /// The blob of `bytes`, which the host has just received: the one named last time for the
    /// same memory if they are unchanged, else a copy handed to `store`.
    pub fn blob(&mut self, bytes: &[u8], store: impl FnOnce(Vec<u8>) -> BlobId) -> BlobId {
        if bytes.len() < LARGE {
            return store(bytes.to_vec());
        }
        let (address, len) = (bytes.as_ptr() as usize, bytes.len());
        let last = self.last.iter().position(|receipt| receipt.address == address && receipt.len == len).and_then(|index| self.last.remove(index));
        let unchanged = match &last {
            Some(last) if last.repeated => large_buffers::piece_hashes(bytes) == last.pieces,
            _ => false,
        };
        let receipt = match (last, unchanged) {
            (Some(last), true) => last,
            (last, _) => {
                let (copy, pieces) = large_buffers::hashed_copy_of(bytes);
                let repeated = last.is_some_and(|last| last.pieces == pieces);
                Receipt { address, len, pieces, blob: store(copy), repeated }
            }
        };
        let blob = receipt.blob;
        if self.last.len() == REMEMBERED {
            self.last.pop_front();
        }
        self.last.push_back(receipt);
        blob
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    /// Hands out blob ids in order, keeping what each was stored with.
    #[derive(Default)]
    struct Stored(Vec<Vec<u8>>);

    impl Stored {
        fn blob(&mut self, receipts: &mut Receipts, bytes: &[u8]) -> BlobId {
            receipts.blob(bytes, |copy| {
                self.0.push(copy);
                BlobId(self.0.len() as u128 - 1)
            })
        }
    }

    #[test]
    fn unchanged_data_is_copied_twice_then_named_again_and_any_change_is_copied() {
        let (mut receipts, mut stored) = (Receipts::default(), Stored::default());
        let mut memory = vec![5u8; 3 * LARGE + 7];
        let ids: Vec<BlobId> = (0..4).map(|_| stored.blob(&mut receipts, &memory)).collect();
        // The second copy shows the data repeats; the third and fourth are only hashed.
        assert_eq!(ids, [BlobId(0), BlobId(1), BlobId(1), BlobId(1)]);
        // One byte changed in the last, short piece: copied again, and the next is not hashed
        // first (unchanged since, but copied: it changed the time before).
        *memory.last_mut().unwrap() = 6;
        assert_eq!(stored.blob(&mut receipts, &memory), BlobId(2));
        assert_eq!(stored.blob(&mut receipts, &memory), BlobId(3));
        assert_eq!(stored.blob(&mut receipts, &memory), BlobId(3));
        assert!(stored.0.iter().all(|copy| copy.len() == memory.len()));
        assert_eq!(stored.0[3], memory);
        assert!(stored.0[1].iter().all(|&byte| byte == 5));
    }

    #[test]
    fn the_same_data_in_other_memory_or_of_another_length_is_copied() {
        let (mut receipts, mut stored) = (Receipts::default(), Stored::default());
        let memory = vec![1u8; 2 * LARGE];
        for _ in 0..3 {
            stored.blob(&mut receipts, &memory);
        }
        assert_eq!(stored.0.len(), 2);
        let other = memory.clone();
        stored.blob(&mut receipts, &other);
        stored.blob(&mut receipts, &memory[..LARGE]);
        assert_eq!(stored.0.len(), 4);
        // Small data is always copied.
        stored.blob(&mut receipts, &memory[..100]);
        stored.blob(&mut receipts, &memory[..100]);
        assert_eq!(stored.0.len(), 6);
    }

    #[test]
    fn only_the_latest_regions_are_remembered() {
        let (mut receipts, mut stored) = (Receipts::default(), Stored::default());
        let memory = vec![3u8; (REMEMBERED + 1) * LARGE];
        let regions: Vec<&[u8]> = memory.chunks(LARGE).collect();
        for region in &regions {
            stored.blob(&mut receipts, region);
            stored.blob(&mut receipts, region);
        }
        assert_eq!(receipts.last.len(), REMEMBERED);
        let before = stored.0.len();
        // The first region was forgotten; the last is hashed and named again.
        stored.blob(&mut receipts, regions[0]);
        stored.blob(&mut receipts, regions[REMEMBERED]);
        assert_eq!(stored.0.len(), before + 1);
    }
}
