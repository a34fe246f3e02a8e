//! The variables a program's image defines in device memory (`__device__` globals, the symbols of
//! its cubins' `.nv.global` and `.nv.global.init` sections), read from the ELF symbol table: a
//! kernel may change one that the program never names from the host (cdpSimplePrint numbers its
//! blocks from such a counter), which the trace then does not hold. A fatbin's ELF entries are
//! read where stored uncompressed (as nvcc writes them by default) or zstd-compressed (CUDA 13's
//! `-Xfatbin -compress-all`, as PyTorch and NVIDIA's libraries are built); entries of older
//! compression, and PTX, are skipped.

use std::borrow::Cow;
use std::collections::HashSet;
use std::io::Read;
use trace_format::ImageKind;

const FATBIN_MAGIC: u32 = 0xBA55_ED50;
const FATBIN_HEADER_LEN: usize = 16;
const FATBIN_ENTRY_ELF: u16 = 2;
/// An entry's flags (at `ENTRY_FLAGS`): its payload is a zstd frame (`ENTRY_STORED_LEN` bytes of it,
/// `ENTRY_RAW_LEN` decompressed).
const ENTRY_ZSTD: u64 = 0x8000;
const ENTRY_STORED_LEN: usize = 16;
const ENTRY_FLAGS: usize = 40;
const ENTRY_RAW_LEN: usize = 56;
/// A decompressed cubin larger than this is not read (a damaged size would allocate it).
const LARGEST_CUBIN: u64 = 1 << 30;
const ELF_MAGIC: &[u8] = b"\x7fELF";
const SHT_SYMTAB: u32 = 2;
const STT_OBJECT: u8 = 1;
const SECTION_HEADER_LEN: usize = 64;
const SYMBOL_LEN: usize = 24;

/// Names of the device-memory variables `image` defines, each once, in the order found.
pub fn names(kind: ImageKind, image: &[u8]) -> Vec<String> {
    let cubins = match kind {
        ImageKind::Cubin => vec![Cow::Borrowed(image)],
        ImageKind::Fatbin => fatbin_cubins(image),
        _ => Vec::new(),
    };
    // A fatbin's cubins for several GPUs define the same variables.
    let mut seen = HashSet::new();
    cubins.iter().flat_map(|cubin| cubin_names(cubin)).filter(|name| seen.insert(name.clone())).collect()
}

/// The ELF entries of a fatbin, decompressed where stored compressed.
fn fatbin_cubins(image: &[u8]) -> Vec<Cow<'_, [u8]>> {
    let mut cubins = Vec::new();
    let (Some(magic), Some(header_len), Some(entries_len)) = (u32_at(image, 0), u16_at(image, 6), u64_at(image, 8)) else { return cubins };
    let header_len = usize::from(header_len);
    if magic != FATBIN_MAGIC || header_len < FATBIN_HEADER_LEN {
        return cubins;
    }
    let end = usize::try_from(entries_len).ok().and_then(|len| header_len.checked_add(len)).map_or(image.len(), |end| end.min(image.len()));
    let mut at = header_len;
    while let (Some(kind), Some(entry_header_len), Some(payload_len)) = (u16_at(image, at), u32_at(image, at + 4), u64_at(image, at + 8)) {
        let payload_start = at.saturating_add(entry_header_len as usize);
        let Some(payload_end) = usize::try_from(payload_len).ok().and_then(|len| payload_start.checked_add(len)).filter(|&payload_end| payload_end <= end) else { break };
        let payload = &image[payload_start..payload_end];
        let long_header = entry_header_len as usize >= ENTRY_RAW_LEN + 8;
        let compressed = long_header && u64_at(image, at + ENTRY_FLAGS).is_some_and(|flags| flags & ENTRY_ZSTD != 0);
        let cubin = match (kind == FATBIN_ENTRY_ELF, compressed) {
            (false, _) => None,
            (true, true) => decompressed(image, at, payload).map(Cow::Owned),
            (true, false) => Some(Cow::Borrowed(payload)),
        };
        if let Some(cubin) = cubin.filter(|cubin| cubin.starts_with(ELF_MAGIC)) {
            cubins.push(cubin);
        }
        if entry_header_len == 0 || payload_end <= at {
            break;
        }
        at = payload_end;
    }
    cubins
}

/// The zstd-compressed `payload` of the fatbin entry at `at`, decompressed; `None` if damaged.
fn decompressed(image: &[u8], at: usize, payload: &[u8]) -> Option<Vec<u8>> {
    let stored = payload.get(..u32_at(image, at + ENTRY_STORED_LEN)? as usize)?;
    let raw_len = u64_at(image, at + ENTRY_RAW_LEN).filter(|&len| len <= LARGEST_CUBIN)?;
    let mut decoder = ruzstd::decoding::StreamingDecoder::new(stored).ok()?;
    let mut cubin = Vec::with_capacity(raw_len as usize);
    decoder.by_ref().take(raw_len).read_to_end(&mut cubin).ok()?;
    (cubin.len() as u64 == raw_len).then_some(cubin)
}

/// The names of the objects a 64-bit little-endian ELF defines in `.nv.global*` sections.
fn cubin_names(elf: &[u8]) -> Vec<String> {
    let mut names = Vec::new();
    let Some(sections) = Sections::of(elf) else { return names };
    for symtab in (0..sections.count).filter_map(|index| sections.header(index)).filter(|header| u32_at(header, 4) == Some(SHT_SYMTAB)) {
        let (Some(symbols), Some(strings)) = (sections.body(symtab), u32_at(symtab, 40).and_then(|link| sections.header(link as usize)).and_then(|header| sections.body(header))) else { continue };
        for symbol in symbols.chunks_exact(SYMBOL_LEN) {
            let object = symbol[4] & 0xf == STT_OBJECT && u64_at(symbol, 16).is_some_and(|size| size > 0);
            let section = u16_at(symbol, 6).and_then(|index| sections.name(usize::from(index)));
            if !object || !section.is_some_and(|name| name.starts_with(b".nv.global")) {
                continue;
            }
            let name = u32_at(symbol, 0).and_then(|offset| c_string(strings, offset as usize));
            names.extend(name.and_then(|name| String::from_utf8(name.to_vec()).ok()));
        }
    }
    names
}

/// An ELF file's section header table.
struct Sections<'a> {
    elf: &'a [u8],
    offset: usize,
    count: usize,
    entry_len: usize,
    names: &'a [u8],
}

impl<'a> Sections<'a> {
    fn of(elf: &'a [u8]) -> Option<Sections<'a>> {
        // 64-bit, little-endian.
        if !elf.starts_with(ELF_MAGIC) || elf.get(4..6) != Some(&[2, 1]) {
            return None;
        }
        let offset = usize::try_from(u64_at(elf, 0x28)?).ok()?;
        let entry_len = usize::from(u16_at(elf, 0x3A)?);
        if entry_len < SECTION_HEADER_LEN {
            return None;
        }
        let mut sections = Sections { elf, offset, count: usize::from(u16_at(elf, 0x3C)?), entry_len, names: &[] };
        let names = sections.header(usize::from(u16_at(elf, 0x3E)?)).and_then(|header| sections.body(header))?;
        sections.names = names;
        Some(sections)
    }

    fn header(&self, index: usize) -> Option<&'a [u8]> {
        let start = index.checked_mul(self.entry_len)?.checked_add(self.offset)?;
        self.elf.get(start..start.checked_add(self.entry_len)?).filter(|_| index < self.count)
    }

    fn body(&self, header: &[u8]) -> Option<&'a [u8]> {
        let start = usize::try_from(u64_at(header, 24)?).ok()?;
        let len = usize::try_from(u64_at(header, 32)?).ok()?;
        self.elf.get(start..start.checked_add(len)?)
    }

    fn name(&self, index: usize) -> Option<&'a [u8]> {
        c_string(self.names, u32_at(self.header(index)?, 0)? as usize)
    }
}

fn c_string(strings: &[u8], offset: usize) -> Option<&[u8]> {
    let tail = strings.get(offset..)?;
    Some(&tail[..tail.iter().position(|&byte| byte == 0)?])
}

fn u16_at(bytes: &[u8], at: usize) -> Option<u16> {
    Some(u16::from_le_bytes(bytes.get(at..at.checked_add(2)?)?.try_into().ok()?))
}

fn u32_at(bytes: &[u8], at: usize) -> Option<u32> {
    Some(u32::from_le_bytes(bytes.get(at..at.checked_add(4)?)?.try_into().ok()?))
}

fn u64_at(bytes: &[u8], at: usize) -> Option<u64> {
    Some(u64::from_le_bytes(bytes.get(at..at.checked_add(8)?)?.try_into().ok()?))
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn damaged_images_give_no_names_and_no_panic() {
        let mut fatbin = Vec::new();
        fatbin.extend_from_slice(&FATBIN_MAGIC.to_le_bytes());
        fatbin.extend_from_slice(&[1, 0, 16, 0]);
        fatbin.extend_from_slice(&u64::MAX.to_le_bytes());
        fatbin.extend_from_slice(&[2, 0, 0, 0, 0, 0, 0, 0]);
        for len in 0..fatbin.len() {
            assert!(names(ImageKind::Fatbin, &fatbin[..len]).is_empty());
        }
        let mut elf = ELF_MAGIC.to_vec();
        elf.extend_from_slice(&[2, 1]);
        elf.resize(0x40, 0xff);
        for len in 0..elf.len() {
            assert!(names(ImageKind::Cubin, &elf[..len]).is_empty());
        }
    }

    /// A fatbin of one ELF entry flagged zstd-compressed, whose payload is `payload` (`stored` of
    /// it the frame, `raw_len` decompressed).
    fn compressed_entry(payload: &[u8], stored: u32, raw_len: u64) -> Vec<u8> {
        let mut entry = vec![0u8; 64];
        entry[..2].copy_from_slice(&FATBIN_ENTRY_ELF.to_le_bytes());
        entry[4..8].copy_from_slice(&64u32.to_le_bytes());
        entry[8..16].copy_from_slice(&(payload.len() as u64).to_le_bytes());
        entry[ENTRY_STORED_LEN..ENTRY_STORED_LEN + 4].copy_from_slice(&stored.to_le_bytes());
        entry[ENTRY_FLAGS..ENTRY_FLAGS + 8].copy_from_slice(&(ENTRY_ZSTD | 0x11).to_le_bytes());
        entry[ENTRY_RAW_LEN..ENTRY_RAW_LEN + 8].copy_from_slice(&raw_len.to_le_bytes());
        entry.extend_from_slice(payload);
        let mut fatbin = FATBIN_MAGIC.to_le_bytes().to_vec();
        fatbin.extend_from_slice(&[1, 0, 16, 0]);
        fatbin.extend_from_slice(&(entry.len() as u64).to_le_bytes());
        fatbin.extend(entry);
        fatbin
    }

    #[test]
    fn damaged_compressed_entries_give_no_names_and_no_panic() {
        // Not a zstd frame; a frame's magic and nothing more; sizes past the payload or too large.
        let frame_start = [0x28, 0xb5, 0x2f, 0xfd, 0, 0, 0, 0];
        for (payload, stored, raw_len) in [(&[7u8; 16][..], 16, 64), (&frame_start, 8, 64), (&frame_start, 9, 64), (&frame_start, 8, u64::MAX)] {
            let fatbin = compressed_entry(payload, stored, raw_len);
            for len in 0..=fatbin.len() {
                assert!(names(ImageKind::Fatbin, &fatbin[..len]).is_empty());
            }
        }
    }
}
