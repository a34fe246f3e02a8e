//! `Codec::Lz4Chunks`: a large blob compressed as independent lz4 blocks of `CHUNK_LEN` raw
//! bytes each, so that preparing it reads it from memory once. Each chunk is hashed and then
//! compressed while it is in the cache; one lz4 block over the whole blob read 64 MB from memory
//! twice (hashing, then compressing), which held the preparing threads of a program receiving
//! 64 MB per step. Stored as: chunk length (u32le), then each chunk's compressed length (u32le)
//! and its lz4 block.

/// Raw bytes per chunk: a few of them fit a core's cache beside the compressor's table.
pub const CHUNK_LEN: usize = 256 * 1024;

const LEN_BYTES: usize = 4;

/// Compresses `bytes` into the start of `scratch` in chunks, feeding each chunk to `hashed`
/// before it is compressed; returns the stored length (`None` only if lz4 found the worst case
/// too small). `scratch` only grows.
pub(super) fn compress(bytes: &[u8], scratch: &mut Vec<u8>, hashed: &mut dyn FnMut(&[u8])) -> Option<usize> {
    if scratch.len() < LEN_BYTES {
        scratch.resize(LEN_BYTES, 0);
    }
    put_len(scratch, 0, CHUNK_LEN);
    compress_piece(bytes, scratch, LEN_BYTES, hashed)
}

/// The stored form's start: the chunk length. A blob compressed in pieces (`compress_piece`)
/// is stored as this, then its pieces' chunks in order.
pub fn stored_start() -> Vec<u8> {
    (CHUNK_LEN as u32).to_le_bytes().to_vec()
}

/// Compresses `piece` into `scratch` from `at` as chunks of a blob's stored form, feeding each
/// chunk to `hashed` before it is compressed; returns where they end (`None` only if lz4 found
/// the worst case too small). A blob may be compressed in pieces on several threads, each piece
/// but the last a whole number of `CHUNK_LEN`. `scratch` only grows: zeroing a 64 MB output
/// buffer for every blob cost as much as compressing.
pub fn compress_piece(piece: &[u8], scratch: &mut Vec<u8>, at: usize, hashed: &mut dyn FnMut(&[u8])) -> Option<usize> {
    let chunks = piece.len().div_ceil(CHUNK_LEN);
    let needed = at + chunks * (LEN_BYTES + lz4_flex::block::get_maximum_output_size(CHUNK_LEN));
    if scratch.len() < needed {
        scratch.resize(needed, 0);
    }
    let mut end = at;
    for chunk in piece.chunks(CHUNK_LEN) {
        hashed(chunk);
        let len = lz4_flex::block::compress_into(chunk, &mut scratch[end + LEN_BYTES..]).ok()?;
        put_len(scratch, end, len);
        end += LEN_BYTES + len;
    }
    Some(end)
}

/// Decompresses chunks `compress` stored into `out`, which holds `out.len()` raw bytes.
pub(super) fn decompress(stored: &[u8], out: &mut [u8]) -> Result<(), String> {
    let chunk_len = take_len(stored, 0).filter(|&len| len > 0).ok_or("has no chunk length")?;
    let mut at = LEN_BYTES;
    for (index, chunk) in out.chunks_mut(chunk_len).enumerate() {
        let len = take_len(stored, at).ok_or_else(|| format!("ends before chunk {index}"))?;
        let block = stored.get(at + LEN_BYTES..at + LEN_BYTES + len).ok_or_else(|| format!("ends within chunk {index}"))?;
        let written = lz4_flex::block::decompress_into(block, chunk).map_err(|e| format!("chunk {index} does not decompress: {e}"))?;
        if written != chunk.len() {
            return Err(format!("chunk {index} decompresses to {written} bytes, not {}", chunk.len()));
        }
        at += LEN_BYTES + len;
    }
    match at == stored.len() {
        true => Ok(()),
        false => Err(format!("has {} bytes after its last chunk", stored.len() - at)),
    }
}

fn put_len(buffer: &mut [u8], at: usize, len: usize) {
    buffer[at..at + LEN_BYTES].copy_from_slice(&(len as u32).to_le_bytes());
}

fn take_len(buffer: &[u8], at: usize) -> Option<usize> {
    let bytes = buffer.get(at..at + LEN_BYTES)?;
    Some(u32::from_le_bytes(bytes.try_into().expect("4 bytes")) as usize)
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn chunks_decompress_to_the_bytes_and_feed_the_hash_in_order() {
        let bytes: Vec<u8> = (0..3 * CHUNK_LEN + 1000).map(|i| (i / 7 % 251) as u8).collect();
        let mut scratch = Vec::new();
        let mut hasher = xxhash_rust::xxh3::Xxh3::new();
        let len = compress(&bytes, &mut scratch, &mut |chunk| hasher.update(chunk)).expect("compressed");
        assert_eq!(hasher.digest128(), xxhash_rust::xxh3::xxh3_128(&bytes));
        let mut out = vec![0; bytes.len()];
        decompress(&scratch[..len], &mut out).expect("decompresses");
        assert_eq!(out, bytes);
    }

    #[test]
    fn damaged_chunks_are_errors_not_panics() {
        let bytes = vec![5u8; 2 * CHUNK_LEN + 3];
        let mut scratch = Vec::new();
        let len = compress(&bytes, &mut scratch, &mut |_| ()).expect("compressed");
        let stored = &scratch[..len];
        let mut out = vec![0; bytes.len()];
        for cut in [0, 3, 4, 9, len - 1] {
            assert!(decompress(&stored[..cut], &mut out).is_err(), "cut at {cut}");
        }
        let mut zero_chunk_len = stored.to_vec();
        zero_chunk_len[..4].fill(0);
        assert!(decompress(&zero_chunk_len, &mut out).is_err());
        let mut longer = stored.to_vec();
        longer.push(0);
        assert!(decompress(&longer, &mut out).is_err());
        let mut shorter_out = vec![0; bytes.len() - 1];
        assert!(decompress(stored, &mut shorter_out).is_err());
    }
}
