//! The image commands of `cl_khr_command_buffer` in the revision the device reports (before
//! 0.9.5, as in PoCL 3.1, they take no `properties`). A platform without them replays image
//! commands eagerly.

use super::api::{check, Api, Raw};
use super::extension::wait_list;
use crate::backend::BackendResult;
use opencl_sys::*;
use std::ffi::c_void;
use std::ptr;

type Point = *mut cl_sync_point_khr;
type Waits = *const cl_sync_point_khr;
type Handle = *mut cl_mutable_command_khr;

/// Texel origins and regions as the API takes them.
pub type Texels = [usize; 3];

pub enum ImageCommands {
    WithoutProperties {
        copy: unsafe extern "C" fn(cl_command_buffer_khr, cl_command_queue, cl_mem, cl_mem, *const usize, *const usize, *const usize, cl_uint, Waits, Point, Handle) -> cl_int,
        to_buffer: unsafe extern "C" fn(cl_command_buffer_khr, cl_command_queue, cl_mem, cl_mem, *const usize, *const usize, usize, cl_uint, Waits, Point, Handle) -> cl_int,
        from_buffer: unsafe extern "C" fn(cl_command_buffer_khr, cl_command_queue, cl_mem, cl_mem, usize, *const usize, *const usize, cl_uint, Waits, Point, Handle) -> cl_int,
        fill: unsafe extern "C" fn(cl_command_buffer_khr, cl_command_queue, cl_mem, *const c_void, *const usize, *const usize, cl_uint, Waits, Point, Handle) -> cl_int,
    },
    WithProperties {
        copy: Raw<clCommandCopyImageKHR_fn>,
        to_buffer: Raw<clCommandCopyImageToBufferKHR_fn>,
        from_buffer: Raw<clCommandCopyBufferToImageKHR_fn>,
        fill: Raw<clCommandFillImageKHR_fn>,
    },
}

impl ImageCommands {
    /// The platform's image commands, with `properties` when `with_properties`; `None` when it
    /// lacks any of them.
    pub fn find(api: &Api, platform: cl_platform_id, with_properties: bool) -> Option<ImageCommands> {
        // SAFETY (all lookups): each type is the signature of the named function in the revision.
        Some(match with_properties {
            true => ImageCommands::WithProperties {
                copy: unsafe { api.extension(platform, "clCommandCopyImageKHR")? },
                to_buffer: unsafe { api.extension(platform, "clCommandCopyImageToBufferKHR")? },
                from_buffer: unsafe { api.extension(platform, "clCommandCopyBufferToImageKHR")? },
                fill: unsafe { api.extension(platform, "clCommandFillImageKHR")? },
            },
            false => ImageCommands::WithoutProperties {
                copy: unsafe { api.extension(platform, "clCommandCopyImageKHR")? },
                to_buffer: unsafe { api.extension(platform, "clCommandCopyImageToBufferKHR")? },
                from_buffer: unsafe { api.extension(platform, "clCommandCopyBufferToImageKHR")? },
                fill: unsafe { api.extension(platform, "clCommandFillImageKHR")? },
            },
        })
    }

    #[allow(clippy::too_many_arguments)]
    pub fn copy(&self, buffer: cl_command_buffer_khr, src: cl_mem, dst: cl_mem, src_origin: Texels, dst_origin: Texels, region: Texels, waits: &[cl_sync_point_khr], point: &mut cl_sync_point_khr) -> BackendResult<()> {
        let (count, list) = wait_list(waits);
        let (so, dso, r) = (src_origin.as_ptr(), dst_origin.as_ptr(), region.as_ptr());
        let code = match self {
            ImageCommands::WithoutProperties { copy, .. } => unsafe { copy(buffer, ptr::null_mut(), src, dst, so, dso, r, count, list, point, ptr::null_mut()) },
            ImageCommands::WithProperties { copy, .. } => unsafe { copy(buffer, ptr::null_mut(), ptr::null(), src, dst, so, dso, r, count, list, point, ptr::null_mut()) },
        };
        check(code, "clCommandCopyImageKHR")
    }

    #[allow(clippy::too_many_arguments)]
    pub fn copy_to_buffer(&self, buffer: cl_command_buffer_khr, src: cl_mem, dst: cl_mem, src_origin: Texels, region: Texels, dst_offset: usize, waits: &[cl_sync_point_khr], point: &mut cl_sync_point_khr) -> BackendResult<()> {
        let (count, list) = wait_list(waits);
        let (so, r) = (src_origin.as_ptr(), region.as_ptr());
        let code = match self {
            ImageCommands::WithoutProperties { to_buffer, .. } => unsafe { to_buffer(buffer, ptr::null_mut(), src, dst, so, r, dst_offset, count, list, point, ptr::null_mut()) },
            ImageCommands::WithProperties { to_buffer, .. } => unsafe {
                to_buffer(buffer, ptr::null_mut(), ptr::null(), src, dst, so, r, dst_offset, count, list, point, ptr::null_mut())
            },
        };
        check(code, "clCommandCopyImageToBufferKHR")
    }

    #[allow(clippy::too_many_arguments)]
    pub fn copy_from_buffer(&self, buffer: cl_command_buffer_khr, src: cl_mem, dst: cl_mem, src_offset: usize, dst_origin: Texels, region: Texels, waits: &[cl_sync_point_khr], point: &mut cl_sync_point_khr) -> BackendResult<()> {
        let (count, list) = wait_list(waits);
        let (dso, r) = (dst_origin.as_ptr(), region.as_ptr());
        let code = match self {
            ImageCommands::WithoutProperties { from_buffer, .. } => unsafe { from_buffer(buffer, ptr::null_mut(), src, dst, src_offset, dso, r, count, list, point, ptr::null_mut()) },
            ImageCommands::WithProperties { from_buffer, .. } => unsafe {
                from_buffer(buffer, ptr::null_mut(), ptr::null(), src, dst, src_offset, dso, r, count, list, point, ptr::null_mut())
            },
        };
        check(code, "clCommandCopyBufferToImageKHR")
    }

    #[allow(clippy::too_many_arguments)]
    pub fn fill(&self, buffer: cl_command_buffer_khr, image: cl_mem, color: &[u8; 16], origin: Texels, region: Texels, waits: &[cl_sync_point_khr], point: &mut cl_sync_point_khr) -> BackendResult<()> {
        let (count, list) = wait_list(waits);
        let (c, o, r) = (color.as_ptr() as *const c_void, origin.as_ptr(), region.as_ptr());
        let code = match self {
            ImageCommands::WithoutProperties { fill, .. } => unsafe { fill(buffer, ptr::null_mut(), image, c, o, r, count, list, point, ptr::null_mut()) },
            ImageCommands::WithProperties { fill, .. } => unsafe { fill(buffer, ptr::null_mut(), ptr::null(), image, c, o, r, count, list, point, ptr::null_mut()) },
        };
        check(code, "clCommandFillImageKHR")
    }
}
