//! The extent of a CUDA module image known only by its address, as `cuModuleLoadData` and
//! `cuLibraryLoadData` receive it: a fatbin or a cubin says its size in its headers, PTX text ends
//! at its NUL. Headers are read first and only then the ranges they claim, so that reading from a
//! raw pointer touches no byte the driver would not read itself.

use std::ffi::{c_char, c_void, CStr};
use std::fmt;
use std::marker::PhantomData;

/// What a module image holds.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum ImageKind {
    Fatbin,
    Cubin,
    Ptx,
}

/// A module image and its bytes. For PTX, the text without its terminating NUL.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub struct ModuleImage<'a> {
    pub kind: ImageKind,
    pub bytes: &'a [u8],
}

/// Why an image's extent could not be read.
#[derive(Debug, Clone, PartialEq, Eq)]
pub enum ImageError {
    NullAddress,
    /// The headers claim more bytes than the slice holds.
    Truncated {
        needed: usize,
        available: usize,
    },
    Malformed(&'static str),
    /// The headers claim more than `MAX_IMAGE_LEN` bytes.
    TooLarge,
    /// A fatbin wrapper holds the fatbin's address, which only `image_at` can follow.
    WrapperInSlice,
}

impl fmt::Display for ImageError {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        match self {
            ImageError::NullAddress => f.write_str("module image address is NULL"),
            ImageError::Truncated { needed, available } => write!(
                f,
                "module image truncated: its headers need {needed} bytes, {available} available"
            ),
            ImageError::Malformed(what) => write!(f, "malformed module image: {what}"),
            ImageError::TooLarge => {
                write!(
                    f,
                    "module image headers claim more than {MAX_IMAGE_LEN} bytes"
                )
            }
            ImageError::WrapperInSlice => {
                f.write_str("a fatbin wrapper points at its fatbin; read it from memory instead")
            }
        }
    }
}

impl std::error::Error for ImageError {}

/// Larger claims are taken for corrupt headers rather than read.
pub const MAX_IMAGE_LEN: usize = 1 << 32;

/// `fatbinary.h`'s header: magic u32, version u16, header size u16, size of what follows u64.
const FATBIN_MAGIC: u32 = 0xBA55_ED50;
const FATBIN_HEADER_LEN: usize = 16;
/// `fatbinary_section.h`'s `__fatBinC_Wrapper_t`: magic i32, version i32, then the fatbin's address.
const FATBIN_WRAPPER_MAGIC: u32 = 0x4662_43B1;
const FATBIN_WRAPPER_DATA_OFFSET: usize = 8;
const ELF_MAGIC: u32 = u32::from_le_bytes(*b"\x7fELF");
const ELF64_HEADER_LEN: usize = 64;
const ELF64_PROGRAM_HEADER_LEN: usize = 56;
const ELF64_SECTION_HEADER_LEN: usize = 64;
const ELFCLASS64: u8 = 2;
const ELFDATA2LSB: u8 = 1;
/// A section of this type (`.bss`-like) occupies no bytes of the file.
const SHT_NOBITS: u32 = 8;

/// The image at the start of `bytes` (fatbin, cubin, or NUL-terminated PTX).
pub fn image_in(bytes: &[u8]) -> Result<ModuleImage<'_>, ImageError> {
    match find_image(&SliceBytes(bytes))? {
        Found::Image(image) => Ok(image),
        Found::Wrapper { .. } => Err(ImageError::WrapperInSlice),
    }
}

/// The image at `address`, following a fatbin wrapper to its fatbin.
///
/// # Safety
/// `address` is NULL or points at an image `cuModuleLoadData` accepts, valid for the lifetime `'a`.
pub unsafe fn image_at<'a>(address: *const c_void) -> Result<ModuleImage<'a>, ImageError> {
    match find_image(&RawBytes::new(address)?)? {
        Found::Image(image) => Ok(image),
        Found::Wrapper { fatbin } => match find_image(&RawBytes::new(fatbin as *const c_void)?)? {
            Found::Image(image) if image.kind == ImageKind::Fatbin => Ok(image),
            _ => Err(ImageError::Malformed("fatbin wrapper points at no fatbin")),
        },
    }
}

enum Found<'a> {
    Image(ModuleImage<'a>),
    Wrapper { fatbin: usize },
}

/// Where image bytes are read from.
trait ImageBytes<'a> {
    /// `len` bytes at `offset`; callers keep `offset + len` within `MAX_IMAGE_LEN`.
    fn read(&self, offset: usize, len: usize) -> Result<&'a [u8], ImageError>;
    /// The text from the start up to, not including, its NUL.
    fn text(&self) -> Result<&'a [u8], ImageError>;
}

struct SliceBytes<'a>(&'a [u8]);

impl<'a> ImageBytes<'a> for SliceBytes<'a> {
    fn read(&self, offset: usize, len: usize) -> Result<&'a [u8], ImageError> {
        let truncated = ImageError::Truncated {
            needed: offset.saturating_add(len),
            available: self.0.len(),
        };
        let end = offset.checked_add(len).ok_or(ImageError::TooLarge)?;
        self.0.get(offset..end).ok_or(truncated)
    }

    fn text(&self) -> Result<&'a [u8], ImageError> {
        let end = self.0.iter().position(|&b| b == 0);
        end.map(|end| &self.0[..end])
            .ok_or(ImageError::Malformed("PTX text without a terminating NUL"))
    }
}

/// Memory the driver is about to read: the parser reads only ranges that headers it has already
/// read claim.
struct RawBytes<'a> {
    start: *const u8,
    lifetime: PhantomData<&'a [u8]>,
}

impl RawBytes<'_> {
    fn new(address: *const c_void) -> Result<Self, ImageError> {
        if address.is_null() {
            return Err(ImageError::NullAddress);
        }
        Ok(RawBytes {
            start: address.cast(),
            lifetime: PhantomData,
        })
    }
}

impl<'a> ImageBytes<'a> for RawBytes<'a> {
    fn read(&self, offset: usize, len: usize) -> Result<&'a [u8], ImageError> {
        // SAFETY: `image_at`'s caller vouches for the image, and the parser asks only for ranges
        // its headers claim, each within MAX_IMAGE_LEN.
        Ok(unsafe { std::slice::from_raw_parts(self.start.add(offset), len) })
    }

    fn text(&self) -> Result<&'a [u8], ImageError> {
        // SAFETY: not a fatbin or cubin, so by `image_at`'s contract NUL-terminated PTX.
        Ok(unsafe { CStr::from_ptr(self.start.cast::<c_char>()) }.to_bytes())
    }
}

fn find_image<'a>(src: &impl ImageBytes<'a>) -> Result<Found<'a>, ImageError> {
    let (kind, len) = match magic(src)? {
        Some(FATBIN_MAGIC) => (ImageKind::Fatbin, fatbin_len(src)?),
        Some(ELF_MAGIC) => (ImageKind::Cubin, cubin_len(src)?),
        Some(FATBIN_WRAPPER_MAGIC) => {
            let data = u64_at(
                src.read(0, FATBIN_WRAPPER_DATA_OFFSET + 8)?,
                FATBIN_WRAPPER_DATA_OFFSET,
            );
            let fatbin =
                usize::try_from(data).map_err(|_| ImageError::Malformed("wrapper address"))?;
            return Ok(Found::Wrapper { fatbin });
        }
        _ => {
            return Ok(Found::Image(ModuleImage {
                kind: ImageKind::Ptx,
                bytes: src.text()?,
            }))
        }
    };
    Ok(Found::Image(ModuleImage {
        kind,
        bytes: src.read(0, len)?,
    }))
}

/// The first four bytes as a little-endian u32, or None when a NUL comes first (short PTX text):
/// read one at a time so as not to pass that NUL. No magic number contains a zero byte.
fn magic<'a>(src: &impl ImageBytes<'a>) -> Result<Option<u32>, ImageError> {
    let mut magic = [0u8; 4];
    for (offset, byte) in magic.iter_mut().enumerate() {
        *byte = src.read(offset, 1)?[0];
        if *byte == 0 {
            return Ok(None);
        }
    }
    Ok(Some(u32::from_le_bytes(magic)))
}

fn fatbin_len<'a>(src: &impl ImageBytes<'a>) -> Result<usize, ImageError> {
    let header = src.read(0, FATBIN_HEADER_LEN)?;
    let header_len = usize::from(u16_at(header, 6));
    if header_len < FATBIN_HEADER_LEN {
        return Err(ImageError::Malformed("fatbin header size below 16"));
    }
    checked_end(header_len as u64, u64_at(header, 8))
}

/// The end of the ELF header, of both header tables, and of every part of the file they describe.
fn cubin_len<'a>(src: &impl ImageBytes<'a>) -> Result<usize, ImageError> {
    let header = src.read(0, ELF64_HEADER_LEN)?;
    if header[4] != ELFCLASS64 || header[5] != ELFDATA2LSB {
        return Err(ImageError::Malformed(
            "cubin is not a little-endian 64-bit ELF",
        ));
    }
    let program_headers = Table {
        offset: u64_at(header, 0x20),
        entry_len: u16_at(header, 0x36),
        count: u16_at(header, 0x38),
        min_entry_len: ELF64_PROGRAM_HEADER_LEN,
    };
    let section_headers = Table {
        offset: u64_at(header, 0x28),
        entry_len: u16_at(header, 0x3A),
        count: u16_at(header, 0x3C),
        min_entry_len: ELF64_SECTION_HEADER_LEN,
    };
    if section_headers.count == 0 && section_headers.offset != 0 {
        return Err(ImageError::Malformed(
            "extended ELF section numbering is not supported",
        ));
    }
    let header_len = usize::from(u16_at(header, 0x34)).max(ELF64_HEADER_LEN);
    let mut end = header_len;
    for segment in program_headers.entries(src)? {
        end = end.max(checked_end(u64_at(segment, 8), u64_at(segment, 32))?);
    }
    for section in section_headers.entries(src)? {
        if u32_at(section, 4) != SHT_NOBITS {
            end = end.max(checked_end(u64_at(section, 24), u64_at(section, 32))?);
        }
    }
    Ok(end.max(program_headers.end()?).max(section_headers.end()?))
}

/// An ELF header table: program headers or section headers.
struct Table {
    offset: u64,
    entry_len: u16,
    count: u16,
    min_entry_len: usize,
}

impl Table {
    /// Where the table ends in the file: 0 for an empty one, whatever its offset says.
    fn end(&self) -> Result<usize, ImageError> {
        if self.count == 0 {
            return Ok(0);
        }
        checked_end(
            self.offset,
            u64::from(self.entry_len) * u64::from(self.count),
        )
    }

    fn entries<'a>(
        &self,
        src: &impl ImageBytes<'a>,
    ) -> Result<impl Iterator<Item = &'a [u8]>, ImageError> {
        let entry_len = usize::from(self.entry_len);
        if self.count == 0 {
            return Ok([].chunks_exact(1));
        }
        if entry_len < self.min_entry_len {
            return Err(ImageError::Malformed("ELF header table entries too small"));
        }
        let end = self.end()?;
        // `end` fits MAX_IMAGE_LEN, so the offset before it fits a usize.
        let start = self.offset as usize;
        Ok(src.read(start, end - start)?.chunks_exact(entry_len))
    }
}

/// `offset + len`, if within MAX_IMAGE_LEN.
fn checked_end(offset: u64, len: u64) -> Result<usize, ImageError> {
    let end = offset.checked_add(len).ok_or(ImageError::TooLarge)?;
    usize::try_from(end)
        .ok()
        .filter(|&end| end <= MAX_IMAGE_LEN)
        .ok_or(ImageError::TooLarge)
}

// Callers pass headers already read whole, so these slices are in bounds.
fn u16_at(bytes: &[u8], offset: usize) -> u16 {
    u16::from_le_bytes([bytes[offset], bytes[offset + 1]])
}

fn u32_at(bytes: &[u8], offset: usize) -> u32 {
    u32::from_le_bytes(std::array::from_fn(|i| bytes[offset + i]))
}

fn u64_at(bytes: &[u8], offset: usize) -> u64 {
    u64::from_le_bytes(std::array::from_fn(|i| bytes[offset + i]))
}
