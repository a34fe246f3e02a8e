//! Images and samplers: images made from their recorded description (`cl_images`), checked
//! against the formats the device supports before the driver sees them, and copies and fills
//! whose packed byte positions become texel positions again.

use super::api::{check, Api};
use super::objects::MemObject;
use crate::backend::{BackendError, BackendResult};
use cl_images::{fill_color, ClImage};
use opencl_sys::*;
use std::ffi::c_void;
use std::ptr;
use trace_format::{ImageLayout, MemId, Texture, TextureKind};

/// Flags `clGetSupportedImageFormats` and `clCreateImage` take from the recorded ones.
const IMAGE_FLAGS: cl_mem_flags = CL_MEM_READ_WRITE | CL_MEM_READ_ONLY | CL_MEM_WRITE_ONLY | CL_MEM_KERNEL_READ_AND_WRITE;

/// Creates memory `index`, an image of `layout`.
pub fn create_image(api: &Api, context: cl_context, index: usize, layout: &ImageLayout, flags: cl_mem_flags) -> BackendResult<MemObject> {
    let (image, flags) = describe_image(api, context, index, layout, flags)?;
    let mem = create_described(api, context, index, &image, flags)?;
    Ok(MemObject::Image { mem, size: layout.bytes(), image })
}

/// Memory `index` as the image of `layout` it will be, with the flags to create it with,
/// checked against the formats the device supports.
pub fn describe_image(api: &Api, context: cl_context, index: usize, layout: &ImageLayout, flags: cl_mem_flags) -> BackendResult<(ClImage, cl_mem_flags)> {
    let unsupported = |why: String| BackendError::Unsupported(format!("memory {index}: {why}"));
    let image = ClImage::from_layout(layout).ok_or_else(|| unsupported(format!("an image described as {:?}, which is no OpenCL image's description", layout.format)))?;
    // No access flags means read and write; Intel's runtime lists no formats for flags 0.
    let flags = match flags & IMAGE_FLAGS {
        0 => CL_MEM_READ_WRITE,
        access => access,
    };
    if !supported(api, context, flags, &image)? {
        return Err(unsupported(format!(
            "this device cannot create {} images of channel order {:#x} and channel type {:#x}",
            type_name(image.image_type),
            image.channel_order,
            image.channel_data_type
        )));
    }
    Ok((image, flags))
}

/// Creates memory `index`, the image `describe_image` described.
pub fn create_described(api: &Api, context: cl_context, index: usize, image: &ClImage, flags: cl_mem_flags) -> BackendResult<cl_mem> {
    let unsupported = |why: String| BackendError::Unsupported(format!("memory {index}: {why}"));
    let format = cl_image_format { image_channel_order: image.channel_order, image_channel_data_type: image.channel_data_type };
    let size = |value: u64| usize::try_from(value).map_err(|_| unsupported(format!("an image dimension of {value}")));
    let desc = cl_image_desc {
        image_type: image.image_type,
        image_width: size(image.width)?,
        image_height: size(image.height)?,
        image_depth: size(image.depth)?,
        image_array_size: size(image.array_size)?,
        image_row_pitch: 0,
        image_slice_pitch: 0,
        num_mip_levels: 0,
        num_samples: 0,
        buffer: ptr::null_mut(),
    };
    let mut code = CL_SUCCESS;
    let mem = unsafe { (api.clCreateImage)(context, flags, &format, &desc, ptr::null_mut(), &mut code) };
    check(code, "clCreateImage").map_err(|e| e.about(&format!("memory {index}")))?;
    Ok(mem)
}

/// Whether the device lists the image's format for its type and flags.
fn supported(api: &Api, context: cl_context, flags: cl_mem_flags, image: &ClImage) -> BackendResult<bool> {
    let mut count: cl_uint = 0;
    let code = unsafe { (api.clGetSupportedImageFormats)(context, flags, image.image_type, 0, ptr::null_mut(), &mut count) };
    if code == CL_INVALID_VALUE {
        // An image type the runtime does not know.
        return Ok(false);
    }
    check(code, "clGetSupportedImageFormats")?;
    let blank = cl_image_format { image_channel_order: 0, image_channel_data_type: 0 };
    let mut formats = vec![blank; count as usize];
    let code = unsafe { (api.clGetSupportedImageFormats)(context, flags, image.image_type, count, formats.as_mut_ptr(), ptr::null_mut()) };
    check(code, "clGetSupportedImageFormats")?;
    Ok(formats.iter().any(|f| f.image_channel_order == image.channel_order && f.image_channel_data_type == image.channel_data_type))
}

fn type_name(image_type: cl_mem_object_type) -> String {
    match image_type {
        CL_MEM_OBJECT_IMAGE1D => "1D".into(),
        CL_MEM_OBJECT_IMAGE1D_ARRAY => "1D array".into(),
        CL_MEM_OBJECT_IMAGE1D_BUFFER => "1D buffer".into(),
        CL_MEM_OBJECT_IMAGE2D => "2D".into(),
        CL_MEM_OBJECT_IMAGE2D_ARRAY => "2D array".into(),
        CL_MEM_OBJECT_IMAGE3D => "3D".into(),
        other => format!("type {other:#x}"),
    }
}

/// Creates texture `index`, which OpenCL has only as a sampler (its description is its
/// property list, as `u64`s).
pub fn create_sampler(api: &Api, context: cl_context, index: usize, texture: &Texture) -> BackendResult<cl_sampler> {
    let unsupported = |why: &str| BackendError::Unsupported(format!("texture {index}: {why}"));
    if texture.kind != TextureKind::Sampler || texture.resource.is_some() {
        return Err(unsupported("a texture or surface object, which OpenCL has not (only samplers)"));
    }
    if !texture.description.len().is_multiple_of(16) {
        return Err(unsupported("a sampler description that is no list of property pairs"));
    }
    let mut properties: Vec<cl_sampler_properties> =
        texture.description.chunks_exact(8).map(|bytes| u64::from_le_bytes(bytes.try_into().unwrap_or_default())).collect();
    if properties.chunks_exact(2).any(|pair| pair[0] == 0) {
        return Err(unsupported("a sampler property list with a property named 0"));
    }
    properties.push(0);
    let mut code = CL_SUCCESS;
    let sampler = unsafe { (api.clCreateSamplerWithProperties)(context, properties.as_ptr(), &mut code) };
    check(code, "clCreateSamplerWithProperties").map_err(|e| e.about(&format!("texture {index}")))?;
    Ok(sampler)
}

/// The image side of a copy in texels: `origin` and `region` (x in bytes) with the side's
/// pitches, which must be the image's packed ones.
pub fn texels(mem: MemId, image: &ClImage, origin: [u64; 3], region: [u64; 3], pitches: [u64; 2]) -> BackendResult<([usize; 3], [usize; 3])> {
    let (row, slice) = image.packed_pitches();
    let placed = (pitches == [row, slice]).then(|| image.to_texels(origin, region)).flatten();
    placed.ok_or_else(|| {
        BackendError::Unsupported(format!(
            "a rectangle (origin {origin:?}, region {region:?}, pitches {pitches:?}) that is no whole texels of image {mem} ({row}-byte rows, {slice}-byte slices)"
        ))
    })
}

/// Where a packed buffer side of an image copy starts: rows of exactly `region[0]` bytes.
pub fn packed_offset(mem: MemId, origin: [u64; 3], region: [u64; 3], [row, slice]: [u64; 2]) -> BackendResult<u64> {
    let packed = row == region[0] && slice == row.saturating_mul(region[1]);
    let offset = origin[2].checked_mul(slice).and_then(|z| z.checked_add(origin[1].checked_mul(row)?)).and_then(|yz| yz.checked_add(origin[0]));
    match (packed, offset) {
        (true, Some(offset)) => Ok(offset),
        _ => Err(BackendError::Unsupported(format!("a copy between an image and memory {mem} whose rows are not packed (OpenCL copies them packed)"))),
    }
}

/// A fill of image `mem` with `pattern` (one texel) over `bytes` from `offset`, or over
/// `rows` (pitch, width in texels, height), as the API's color, origin and region.
pub fn fill_region(mem: MemId, image: &ClImage, pattern: &[u8], offset: u64, bytes: u64, rows: Option<[u64; 3]>) -> BackendResult<([u8; 16], [usize; 3], [usize; 3])> {
    let unsupported = |why: &str| BackendError::Unsupported(format!("a fill of image {mem}: {why}"));
    let color = fill_color(image.channel_order, image.channel_data_type, pattern).ok_or_else(|| unsupported("a pattern that is no texel of a format converted to fill colors"))?;
    let (row, slice) = image.packed_pitches();
    let texel = u64::from(image.texel_bytes);
    let (origin, region) = match rows {
        Some([pitch, width, height]) if pitch == row => {
            let at = [offset % slice % row, offset % slice / row, offset / slice];
            (at, [width.saturating_mul(texel), height, 1])
        }
        Some(_) => return Err(unsupported("rows that are not the image's")),
        None if row > 0 && offset.is_multiple_of(row) && bytes.is_multiple_of(row) => {
            let (first, count, rows_per_slice) = (offset / row, bytes / row, slice / row);
            if first % rows_per_slice + count <= rows_per_slice {
                ([0, first % rows_per_slice, first / rows_per_slice], [row, count, 1])
            } else if first % rows_per_slice == 0 && count % rows_per_slice == 0 {
                ([0, 0, first / rows_per_slice], [row, rows_per_slice, count / rows_per_slice])
            } else {
                return Err(unsupported("a range that is no rectangle of texels"));
            }
        }
        None => return Err(unsupported("a range of part rows")),
    };
    let (origin, region) = texels(mem, image, origin, region, [row, slice])?;
    Ok((color, origin, region))
}

/// A blocking transfer of the whole image packed to or from `host`.
#[allow(clippy::too_many_arguments)]
pub fn whole_transfer(api: &Api, queue: cl_command_queue, mem: cl_mem, image: &ClImage, host: *mut c_void, write: bool, waits: (cl_uint, *const cl_event), event: &mut cl_event) -> cl_int {
    let region = image.whole_region().map(|value| value as usize);
    let (row, slice) = image.whole_host_pitches();
    let origin = [0usize; 3];
    let (count, list) = waits;
    unsafe {
        match write {
            true => (api.clEnqueueWriteImage)(queue, mem, CL_TRUE, origin.as_ptr(), region.as_ptr(), row, slice, host, count, list, event),
            false => (api.clEnqueueReadImage)(queue, mem, CL_TRUE, origin.as_ptr(), region.as_ptr(), row, slice, host, count, list, event),
        }
    }
}
