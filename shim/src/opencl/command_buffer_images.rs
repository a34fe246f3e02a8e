//! Image commands of programs' own command buffers (`clCommand*Image*KHR`), recorded as the
//! enqueued ones are (`commands::images`).

use super::command_buffers::{add_command, SyncPoints};
use super::commands::images::{extent, image_fill, image_of, Side, UNKNOWN_IMAGE};
use super::commands::{host_bytes, memory, triple};
use super::state::State;
use super::{key, succeeded, Recorded};
use crate::entry::Forward;
use crate::recorder::{Access, Recorder};
use libc::size_t;
use opencl_sys::*;
use std::ffi::c_void;
use trace_format::{Command, Copy, Extent};

/// Adds a copy from `src` to `dst` whose extent `build_extent` gives, once the call succeeded.
unsafe fn add_copy(
    forward: &mut Forward<'_, cl_int>,
    buffer: cl_command_buffer_khr,
    call: &'static str,
    sync: SyncPoints,
    (src, dst): (cl_mem, cl_mem),
    build_extent: impl FnOnce(&State) -> Result<Extent, &'static str>,
) -> Recorded {
    if !succeeded(forward) {
        return Ok(());
    }
    let accesses = vec![Access { mem: key(src), write: false, overwrites: false }, Access { mem: key(dst), write: true, overwrites: false }];
    unsafe {
        add_command(buffer, call, sync, |_, _| accesses, |recorder: &mut Recorder, state| {
            let extent = build_extent(state)?;
            Ok(Command::Copy(Copy { src: memory(recorder, key(src), 0)?, dst: memory(recorder, key(dst), 0)?, extent }))
        })
    }
}

pub(super) unsafe fn record_copy_image(
    forward: &mut Forward<'_, cl_int>,
    buffer: cl_command_buffer_khr,
    src_image: cl_mem,
    dst_image: cl_mem,
    src_origin: *const size_t,
    dst_origin: *const size_t,
    region: *const size_t,
    sync: SyncPoints,
) -> Recorded {
    // SAFETY (each triple): read only once the call succeeded with them.
    unsafe {
        add_copy(forward, buffer, "clCommandCopyImageKHR", sync, (src_image, dst_image), |state| {
            let (src, dst) = (image_of(state, src_image).ok_or(UNKNOWN_IMAGE)?, image_of(state, dst_image).ok_or(UNKNOWN_IMAGE)?);
            let (_, packed_region) = src.to_packed([0; 3], triple(region));
            Ok(extent(Side::image(&src, triple(src_origin)), Side::image(&dst, triple(dst_origin)), packed_region))
        })
    }
}

pub(super) unsafe fn record_copy_image_to_buffer(
    forward: &mut Forward<'_, cl_int>,
    buffer: cl_command_buffer_khr,
    src_image: cl_mem,
    dst_buffer: cl_mem,
    src_origin: *const size_t,
    region: *const size_t,
    dst_offset: size_t,
    sync: SyncPoints,
) -> Recorded {
    unsafe {
        add_copy(forward, buffer, "clCommandCopyImageToBufferKHR", sync, (src_image, dst_buffer), |state| {
            let src = image_of(state, src_image).ok_or(UNKNOWN_IMAGE)?;
            let (_, packed_region) = src.to_packed([0; 3], triple(region));
            Ok(extent(Side::image(&src, triple(src_origin)), Side::packed(dst_offset as u64, packed_region), packed_region))
        })
    }
}

pub(super) unsafe fn record_copy_buffer_to_image(
    forward: &mut Forward<'_, cl_int>,
    buffer: cl_command_buffer_khr,
    src_buffer: cl_mem,
    dst_image: cl_mem,
    src_offset: size_t,
    dst_origin: *const size_t,
    region: *const size_t,
    sync: SyncPoints,
) -> Recorded {
    unsafe {
        add_copy(forward, buffer, "clCommandCopyBufferToImageKHR", sync, (src_buffer, dst_image), |state| {
            let dst = image_of(state, dst_image).ok_or(UNKNOWN_IMAGE)?;
            let (_, packed_region) = dst.to_packed([0; 3], triple(region));
            Ok(extent(Side::packed(src_offset as u64, packed_region), Side::image(&dst, triple(dst_origin)), packed_region))
        })
    }
}

pub(super) unsafe fn record_fill_image(
    forward: &mut Forward<'_, cl_int>,
    buffer: cl_command_buffer_khr,
    image: cl_mem,
    fill_color: *const c_void,
    origin: *const size_t,
    region: *const size_t,
    sync: SyncPoints,
) -> Recorded {
    if !succeeded(forward) {
        return Ok(());
    }
    // SAFETY: the call succeeded, so the color holds four 4-byte components and origin and
    // region three sizes each.
    let color: [u8; 16] = unsafe { host_bytes(fill_color, 16) }.try_into().unwrap_or([0; 16]);
    let (origin, region) = unsafe { (triple(origin), triple(region)) };
    let accesses = vec![Access { mem: key(image), write: true, overwrites: false }];
    unsafe {
        add_command(buffer, "clCommandFillImageKHR", sync, |_, _| accesses, |recorder, state| {
            image_fill(recorder, state, image, &color, origin, region)
        })
    }
}
