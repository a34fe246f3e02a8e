//! Images as CUDA arrays, and texture and surface objects over them or over memory. The trace
//! keeps an image's contents packed (`ImageLayout`), so a byte position in an image is a texel
//! position for the driver; descriptions are the recorded driver structures, taken as bytes
//! (cudarc's types hold enums no recorded value may be trusted to fit).

use super::driver::check;
use crate::backend::{BackendError, BackendResult};
use cudarc::driver::sys::{self, CUarray, CUdeviceptr, CUmemorytype, CUDA_MEMCPY3D};
use std::ffi::{c_uint, c_void};
use trace_format::{ImageLayout, Texture, TextureKind};

/// `CUDA_ARRAY3D_DESCRIPTOR` of cuda.h.
#[repr(C)]
struct Array3DDescriptor {
    width: usize,
    height: usize,
    depth: usize,
    format: c_uint,
    channels: c_uint,
    flags: c_uint,
}

/// Sizes of `CUDA_RESOURCE_DESC`, `CUDA_TEXTURE_DESC` and `CUDA_RESOURCE_VIEW_DESC`.
const RESOURCE_BYTES: usize = 144;
const TEXTURE_BYTES: usize = 104;
const VIEW_BYTES: usize = 112;
/// Where the array handle or the memory's address lies in `CUDA_RESOURCE_DESC`.
const HANDLE_AT: usize = 8;
const CU_RESOURCE_TYPE_ARRAY: u32 = 0;

/// An array made for an image.
#[derive(Clone, Copy)]
pub struct Array {
    pub handle: CUarray,
    pub row_bytes: u64,
    pub slice_bytes: u64,
    pub height: u64,
    pub depth: u64,
}

impl Array {
    /// A new array of `layout` (whose format is `[width, height, depth, format, channels, flags]`).
    pub fn create(index: usize, layout: &ImageLayout) -> BackendResult<Array> {
        let &[width, height, depth, format, channels, flags] = layout.format.as_slice() else {
            return Err(BackendError::Unsupported(format!("memory {index} is an image described by {} numbers, not a CUDA array's 6", layout.format.len())));
        };
        let narrow = |value: u64| usize::try_from(value).map_err(|_| BackendError::Unsupported(format!("memory {index}: an array dimension of {value}")));
        let small = |value: u64| c_uint::try_from(value).map_err(|_| BackendError::Unsupported(format!("memory {index}: an array format value of {value}")));
        let descriptor = Array3DDescriptor {
            width: narrow(width)?,
            height: narrow(height)?,
            depth: narrow(depth)?,
            format: small(format)?,
            channels: small(channels)?,
            flags: small(flags)?,
        };
        let mut handle = std::ptr::null_mut();
        // SAFETY: a descriptor laid out as cuda.h's; the driver checks its values.
        check(unsafe { sys::cuArray3DCreate_v2(&mut handle, (&descriptor as *const Array3DDescriptor).cast()) }, "cuArray3DCreate")?;
        Ok(Array { handle, row_bytes: layout.row_bytes(), slice_bytes: layout.slice_bytes(), height: layout.height, depth: layout.depth })
    }

    /// Packed byte position `at` as (x in bytes, row, slice).
    fn position(&self, at: u64) -> [usize; 3] {
        let (row, slice) = (self.row_bytes.max(1), self.slice_bytes.max(1));
        [at % slice % row, at % slice / row, at / slice].map(|value| value as usize)
    }

    /// The region (width in bytes, rows, slices) of `bytes` packed bytes from position `at`:
    /// part of one row, whole rows of one slice, or whole slices.
    pub fn linear_region(&self, at: u64, bytes: u64) -> BackendResult<[usize; 3]> {
        let [x, y, _] = self.position(at);
        let (row, slice) = (self.row_bytes.max(1), self.slice_bytes.max(1));
        let region = if x as u64 + bytes <= row {
            [bytes, 1, 1]
        } else if x == 0 && bytes.is_multiple_of(row) && y as u64 + bytes / row <= self.height {
            [row, bytes / row, 1]
        } else if at.is_multiple_of(slice) && bytes.is_multiple_of(slice) {
            [row, self.height, bytes / slice]
        } else {
            return Err(BackendError::Unsupported(format!("a linear copy of {bytes} bytes at byte {at} of an array is not whole rows or slices")));
        };
        Ok(region.map(|value| value as usize))
    }

    /// Sets one side of `copy` to this array at packed position `at`.
    pub fn set_side(&self, copy: &mut CUDA_MEMCPY3D, source: bool, at: u64) {
        let [x, y, z] = self.position(at);
        if source {
            copy.srcMemoryType = CUmemorytype::CU_MEMORYTYPE_ARRAY;
            copy.srcArray = self.handle;
            (copy.srcXInBytes, copy.srcY, copy.srcZ) = (x, y, z);
        } else {
            copy.dstMemoryType = CUmemorytype::CU_MEMORYTYPE_ARRAY;
            copy.dstArray = self.handle;
            (copy.dstXInBytes, copy.dstY, copy.dstZ) = (x, y, z);
        }
    }

    /// A copy of the whole array from or `to_host` packed memory at `host`.
    pub fn packed_copy(&self, host: *mut c_void, to_host: bool) -> CUDA_MEMCPY3D {
        let host_type = CUmemorytype::CU_MEMORYTYPE_HOST;
        let mut copy = match to_host {
            true => super::commands::empty_memcpy3d(CUmemorytype::CU_MEMORYTYPE_ARRAY, host_type),
            false => super::commands::empty_memcpy3d(host_type, CUmemorytype::CU_MEMORYTYPE_ARRAY),
        };
        self.set_side(&mut copy, to_host, 0);
        let (row, rows) = (self.row_bytes as usize, self.height as usize);
        if to_host {
            (copy.dstHost, copy.dstPitch, copy.dstHeight) = (host, row, rows);
        } else {
            (copy.srcHost, copy.srcPitch, copy.srcHeight) = (host.cast_const(), row, rows);
        }
        (copy.WidthInBytes, copy.Height, copy.Depth) = (row, rows, self.depth as usize);
        copy
    }
}

/// A texture or surface object the replay made.
pub struct TextureObject {
    pub handle: u64,
    surface: bool,
}

impl TextureObject {
    /// Makes the object `texture` describes over its resource: `array` when that is an image,
    /// else memory at `address`.
    pub fn create(index: usize, texture: &Texture, array: Option<&Array>, address: CUdeviceptr) -> BackendResult<TextureObject> {
        let description = &texture.description;
        let unsupported = |what: &str| BackendError::Unsupported(format!("texture {index}: {what}"));
        if description.len() < RESOURCE_BYTES {
            return Err(unsupported("its description is shorter than a CUDA resource description"));
        }
        // In u64 words: the structures hold pointers and size_t.
        let mut resource = [0u64; RESOURCE_BYTES / 8];
        // SAFETY: `resource` holds RESOURCE_BYTES bytes.
        unsafe { std::ptr::copy_nonoverlapping(description.as_ptr(), resource.as_mut_ptr().cast::<u8>(), RESOURCE_BYTES) };
        let is_array = resource[0] as u32 == CU_RESOURCE_TYPE_ARRAY;
        resource[HANDLE_AT / 8] = match (is_array, array) {
            (true, Some(array)) => array.handle as u64,
            (true, None) => return Err(unsupported("it reads an array, and its resource is not an image")),
            (false, _) => address,
        };
        let mut handle = 0u64;
        let status = match texture.kind {
            TextureKind::Surface => unsafe { sys::cuSurfObjectCreate(&mut handle, resource.as_ptr().cast()) },
            TextureKind::Sampled => {
                let rest = &description[RESOURCE_BYTES..];
                if rest.len() != TEXTURE_BYTES && rest.len() != TEXTURE_BYTES + VIEW_BYTES {
                    return Err(unsupported("its texture description is not a CUDA one"));
                }
                let mut words = [0u64; (TEXTURE_BYTES + VIEW_BYTES) / 8];
                // SAFETY: `words` holds at least `rest.len()` bytes.
                unsafe { std::ptr::copy_nonoverlapping(rest.as_ptr(), words.as_mut_ptr().cast::<u8>(), rest.len()) };
                let view = match rest.len() > TEXTURE_BYTES {
                    true => words[TEXTURE_BYTES / 8..].as_ptr().cast(),
                    false => std::ptr::null(),
                };
                // SAFETY: byte images of the structures cuda.h defines, which the driver checks.
                unsafe { sys::cuTexObjectCreate(&mut handle, resource.as_ptr().cast(), words.as_ptr().cast(), view) }
            }
            TextureKind::Sampler => return Err(unsupported("CUDA has no sampler objects")),
        };
        check(status, if texture.kind == TextureKind::Surface { "cuSurfObjectCreate" } else { "cuTexObjectCreate" })?;
        Ok(TextureObject { handle, surface: texture.kind == TextureKind::Surface })
    }
}

impl Drop for TextureObject {
    fn drop(&mut self) {
        // SAFETY: an object this backend made; errors cannot be reported here.
        unsafe {
            match self.surface {
                true => sys::cuSurfObjectDestroy(self.handle),
                false => sys::cuTexObjectDestroy(self.handle),
            };
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    /// 16 texels of 4 bytes to a row, 8 rows, 3 slices (no driver needed for the arithmetic).
    fn array() -> Array {
        Array { handle: std::ptr::null_mut(), row_bytes: 64, slice_bytes: 512, height: 8, depth: 3 }
    }

    #[test]
    fn linear_copies_become_part_of_a_row_whole_rows_or_whole_slices() {
        let array = array();
        assert_eq!(array.linear_region(64 + 8, 20).unwrap(), [20, 1, 1]);
        assert_eq!(array.linear_region(128, 192).unwrap(), [64, 3, 1]);
        assert_eq!(array.linear_region(0, 1536).unwrap(), [64, 8, 3]);
        assert!(array.linear_region(8, 100).is_err(), "a copy past a row's end from its middle");
        assert!(array.linear_region(64 * 7, 128).is_err(), "rows past a slice's end from its middle");
    }

    #[test]
    fn a_packed_position_is_a_texel_of_a_slice() {
        let array = array();
        let mut copy = crate::cuda::commands::empty_memcpy3d(CUmemorytype::CU_MEMORYTYPE_HOST, CUmemorytype::CU_MEMORYTYPE_HOST);
        array.set_side(&mut copy, false, 2 * 512 + 64 + 8);
        assert_eq!((copy.dstXInBytes, copy.dstY, copy.dstZ), (8, 1, 2));
        assert_eq!(copy.dstMemoryType, CUmemorytype::CU_MEMORYTYPE_ARRAY);
        let whole = array.packed_copy(std::ptr::null_mut(), true);
        assert_eq!((whole.WidthInBytes, whole.Height, whole.Depth, whole.dstPitch, whole.dstHeight), (64, 8, 3, 64, 8));
        assert_eq!((whole.srcMemoryType, whole.dstMemoryType), (CUmemorytype::CU_MEMORYTYPE_ARRAY, CUmemorytype::CU_MEMORYTYPE_HOST));
        let back = array.packed_copy(std::ptr::null_mut(), false);
        assert_eq!((back.srcMemoryType, back.dstMemoryType), (CUmemorytype::CU_MEMORYTYPE_HOST, CUmemorytype::CU_MEMORYTYPE_ARRAY));
        assert_eq!((back.srcPitch, back.srcHeight), (64, 8));
    }
}
