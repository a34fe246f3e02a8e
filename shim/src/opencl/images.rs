//! Images: memory objects whose contents the trace keeps packed (`cl_images` says how OpenCL's
//! image types map onto rows and slices). Their initial contents, host pointer included, are
//! read at first use like a buffer's.

use super::dispatch::call;
use super::memory::memory_created;
use super::state::{with_recorder, Addressing, MemObject};
use super::{created, info, key, Recorded};
use crate::entry::Forward;
use crate::recorder::MemShape;
use cl_images::ClImage;
use libc::size_t;
use opencl_sys::*;
use std::ffi::c_void;
use trace_format::MemKind;

pub unsafe fn create_image(
    forward: &mut Forward<'_, cl_mem>,
    context: cl_context,
    flags: cl_mem_flags,
    format: *const cl_image_format,
    desc: *const cl_image_desc,
    _host_ptr: *mut c_void,
    errcode_ret: *mut cl_int,
) -> Recorded {
    let Some(image) = (unsafe { created(forward, errcode_ret) }) else { return Ok(()) };
    // SAFETY: the call succeeded, so both point to valid structures.
    let (format, desc) = unsafe { (&*format, &*desc) };
    if !desc.buffer.is_null() || desc.num_mip_levels > 0 || desc.num_samples > 0 {
        return with_recorder(|_, recorder| recorder.partial("clCreateImage", "an image over a buffer, with mipmaps or samples is not recorded"));
    }
    let dims = [desc.image_width, desc.image_height, desc.image_depth, desc.image_array_size].map(|value| value as u64);
    image_created("clCreateImage", context, image, flags, format, desc.image_type, dims)
}

pub unsafe fn create_image_with_properties(
    forward: &mut Forward<'_, cl_mem>,
    context: cl_context,
    _properties: *const cl_mem_properties,
    flags: cl_mem_flags,
    format: *const cl_image_format,
    desc: *const cl_image_desc,
    host_ptr: *mut c_void,
    errcode_ret: *mut cl_int,
) -> Recorded {
    unsafe { create_image(forward, context, flags, format, desc, host_ptr, errcode_ret) }
}

pub unsafe fn create_image_2d(
    forward: &mut Forward<'_, cl_mem>,
    context: cl_context,
    flags: cl_mem_flags,
    format: *const cl_image_format,
    width: size_t,
    height: size_t,
    _row_pitch: size_t,
    _host_ptr: *mut c_void,
    errcode_ret: *mut cl_int,
) -> Recorded {
    let Some(image) = (unsafe { created(forward, errcode_ret) }) else { return Ok(()) };
    // SAFETY: the call succeeded, so the format is valid.
    let format = unsafe { &*format };
    image_created("clCreateImage2D", context, image, flags, format, CL_MEM_OBJECT_IMAGE2D, [width as u64, height as u64, 0, 0])
}

pub unsafe fn create_image_3d(
    forward: &mut Forward<'_, cl_mem>,
    context: cl_context,
    flags: cl_mem_flags,
    format: *const cl_image_format,
    width: size_t,
    height: size_t,
    depth: size_t,
    _row_pitch: size_t,
    _slice_pitch: size_t,
    _host_ptr: *mut c_void,
    errcode_ret: *mut cl_int,
) -> Recorded {
    let Some(image) = (unsafe { created(forward, errcode_ret) }) else { return Ok(()) };
    // SAFETY: as above.
    let format = unsafe { &*format };
    let dims = [width as u64, height as u64, depth as u64, 0];
    image_created("clCreateImage3D", context, image, flags, format, CL_MEM_OBJECT_IMAGE3D, dims)
}

/// Registers an image of `[width, height, depth, array_size]` texels; its texel size is the
/// driver's (`CL_IMAGE_ELEMENT_SIZE`), so every format it creates is recorded.
fn image_created(
    call: &str,
    context: cl_context,
    image: cl_mem,
    flags: cl_mem_flags,
    format: &cl_image_format,
    image_type: cl_mem_object_type,
    [width, height, depth, array_size]: [u64; 4],
) -> Recorded {
    let texel_bytes: Option<size_t> =
        info::value(|size, value, size_ret| call!(clGetImageInfo(image, CL_IMAGE_ELEMENT_SIZE, size, value, size_ret)));
    let described = texel_bytes.and_then(|bytes| u32::try_from(bytes).ok()).filter(|&bytes| bytes > 0).map(|texel_bytes| ClImage {
        image_type,
        channel_order: format.image_channel_order,
        channel_data_type: format.image_channel_data_type,
        width,
        height,
        depth,
        array_size,
        texel_bytes,
    });
    let Some((described, layout)) = described.and_then(|image| Some((image, image.layout()?))) else {
        return with_recorder(|_, recorder| recorder.partial(call, "an image whose type or texel size the shim cannot tell"));
    };
    let size = layout.bytes();
    let object = MemObject { context, flags, addressing: Addressing::Handle, image: Some(described) };
    memory_created(key(image), object, MemShape::Whole(MemKind::Image(layout)), size)
}
