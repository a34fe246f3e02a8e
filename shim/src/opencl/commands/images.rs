//! Reads, writes, copies and fills of images. Each names texels by their packed byte positions
//! (`cl_images`): the image side of a copy is a rectangle at (x in bytes, row, slice) with the
//! image's packed pitches; a buffer side of an image copy is packed from its offset.

use super::transfers::host_span;
use super::{host_bytes, memory, prepare, record, triple, Enqueued, UNKNOWN_MEMORY};
use crate::entry::Forward;
use crate::opencl::state::State;
use crate::opencl::{key, succeeded, Failure, Recorded};
use crate::recorder::{Access, Prepared, Recorder};
use cl_images::{fill_texel, ClImage};
use libc::size_t;
use opencl_sys::*;
use std::ffi::c_void;
use trace_format::{Command, Copy, Extent, Fill, Place};

/// One side of a rectangle: its origin (x in bytes, row, slice) and pitches.
#[derive(Clone, Copy)]
pub(in crate::opencl) struct Side {
    origin: [u64; 3],
    row_pitch: u64,
    slice_pitch: u64,
}

impl Side {
    /// Texels of `image` from `origin` (in texels).
    pub(in crate::opencl) fn image(image: &ClImage, origin: [u64; 3]) -> Side {
        let (origin, _) = image.to_packed(origin, [0; 3]);
        let (row_pitch, slice_pitch) = image.packed_pitches();
        Side { origin, row_pitch, slice_pitch }
    }

    /// Packed rows of `region` (x in bytes) from byte `offset` of a buffer.
    pub(in crate::opencl) fn packed(offset: u64, region: [u64; 3]) -> Side {
        Side { origin: [offset, 0, 0], row_pitch: region[0], slice_pitch: region[0].saturating_mul(region[1]) }
    }

    pub(in crate::opencl) fn host(row_pitch: u64, slice_pitch: u64) -> Side {
        Side { origin: [0; 3], row_pitch, slice_pitch }
    }
}

/// The extent of a copy of `region` (x in bytes) between two sides.
pub(in crate::opencl) fn extent(src: Side, dst: Side, region: [u64; 3]) -> Extent {
    Extent::Rect {
        src_origin: src.origin,
        dst_origin: dst.origin,
        region,
        src_row_pitch: src.row_pitch,
        src_slice_pitch: src.slice_pitch,
        dst_row_pitch: dst.row_pitch,
        dst_slice_pitch: dst.slice_pitch,
    }
}

/// What the shim knows of image `mem`.
pub(in crate::opencl) fn image_of(state: &State, mem: cl_mem) -> Option<ClImage> {
    state.memories.objects.get(&key(mem))?.image
}

pub(in crate::opencl) const UNKNOWN_IMAGE: &str = "it names an image the shim did not see created";

/// A command writing `region` of `image` from `origin` (in texels) replaces all of it.
fn overwrites(state: &State, image: cl_mem, origin: [u64; 3], region: [u64; 3]) -> bool {
    image_of(state, image).is_some_and(|described| origin == [0; 3] && region == described.whole_region())
}

/// Prepares a command that writes `region` of `image` from `origin` (all of it, when it covers it).
///
/// # Safety
/// `origin` and `region` are null or hold three sizes each, as the program passed them.
unsafe fn prepare_write(image: cl_mem, origin: *const size_t, region: *const size_t) -> Result<Prepared, Failure> {
    prepare(|state, _| {
        // SAFETY: three sizes each (checked by the call, which is next).
        let whole = !origin.is_null() && !region.is_null() && overwrites(state, image, unsafe { triple(origin) }, unsafe { triple(region) });
        vec![Access { mem: key(image), write: true, overwrites: whole }]
    })
}

pub unsafe fn read_image(
    forward: &mut Forward<'_, cl_int>,
    queue: cl_command_queue,
    image: cl_mem,
    blocking: cl_bool,
    origin: *const size_t,
    region: *const size_t,
    row_pitch: size_t,
    slice_pitch: size_t,
    ptr: *mut c_void,
    wait_count: cl_uint,
    waits: *const cl_event,
    event: *mut cl_event,
) -> Recorded {
    let prepared = prepare(|_, _| vec![Access { mem: key(image), write: false, overwrites: false }])?;
    if !succeeded(forward) {
        return Ok(());
    }
    // SAFETY: the call succeeded, so origin and region hold three sizes each.
    let (origin, region) = unsafe { (triple(origin), triple(region)) };
    let described = crate::opencl::state::with_state(|state| image_of(state, image));
    let enqueued = Enqueued::new("clEnqueueReadImage", queue, wait_count, waits, event).blocking(blocking);
    let Some(described) = described else {
        return unsafe { record(prepared, enqueued, |_, _| Err(UNKNOWN_IMAGE)) };
    };
    let (_, packed_region) = described.to_packed([0; 3], region);
    let (row, slice) = described.packed_host_pitches(region, row_pitch as u64, slice_pitch as u64);
    let enqueued = enqueued.receiving(ptr, host_span([0; 3], packed_region, row, slice));
    unsafe {
        record(prepared, enqueued, |recorder, _| {
            let src = memory(recorder, key(image), 0)?;
            let extent = extent(Side::image(&described, origin), Side::host(row, slice), packed_region);
            Ok(Command::Copy(Copy { src, dst: Place::Host { data: None }, extent }))
        })
    }
}

pub unsafe fn write_image(
    forward: &mut Forward<'_, cl_int>,
    queue: cl_command_queue,
    image: cl_mem,
    blocking: cl_bool,
    origin: *const size_t,
    region: *const size_t,
    row_pitch: size_t,
    slice_pitch: size_t,
    ptr: *const c_void,
    wait_count: cl_uint,
    waits: *const cl_event,
    event: *mut cl_event,
) -> Recorded {
    let prepared = unsafe { prepare_write(image, origin, region) }?;
    if !succeeded(forward) {
        return Ok(());
    }
    let (origin, region) = unsafe { (triple(origin), triple(region)) };
    let enqueued = Enqueued::new("clEnqueueWriteImage", queue, wait_count, waits, event).blocking(blocking);
    unsafe {
        record(prepared, enqueued, |recorder, state| {
            let described = image_of(state, image).ok_or(UNKNOWN_IMAGE)?;
            let dst = memory(recorder, key(image), 0)?;
            let (_, packed_region) = described.to_packed([0; 3], region);
            let (row, slice) = described.packed_host_pitches(region, row_pitch as u64, slice_pitch as u64);
            let data = recorder.blob(host_bytes(ptr, host_span([0; 3], packed_region, row, slice)));
            let extent = extent(Side::host(row, slice), Side::image(&described, origin), packed_region);
            Ok(Command::Copy(Copy { src: Place::Host { data: Some(data) }, dst, extent }))
        })
    }
}

/// A copy from `src` to `dst` of `accesses`' memory, the extent built once the call succeeded.
unsafe fn record_copy(
    forward: &mut Forward<'_, cl_int>,
    enqueued: Enqueued,
    (src, dst): (cl_mem, cl_mem),
    build_extent: impl FnOnce(&State) -> Result<Extent, &'static str>,
) -> Recorded {
    let accesses = vec![Access { mem: key(src), write: false, overwrites: false }, Access { mem: key(dst), write: true, overwrites: false }];
    let prepared = prepare(|_, _| accesses)?;
    if !succeeded(forward) {
        return Ok(());
    }
    unsafe {
        record(prepared, enqueued, |recorder: &mut Recorder, state| {
            let extent = build_extent(state)?;
            Ok(Command::Copy(Copy { src: memory(recorder, key(src), 0)?, dst: memory(recorder, key(dst), 0)?, extent }))
        })
    }
}

pub unsafe fn copy_image(
    forward: &mut Forward<'_, cl_int>,
    queue: cl_command_queue,
    src_image: cl_mem,
    dst_image: cl_mem,
    src_origin: *const size_t,
    dst_origin: *const size_t,
    region: *const size_t,
    wait_count: cl_uint,
    waits: *const cl_event,
    event: *mut cl_event,
) -> Recorded {
    let enqueued = Enqueued::new("clEnqueueCopyImage", queue, wait_count, waits, event);
    // SAFETY (each triple): read only once the call succeeded with them.
    unsafe {
        record_copy(forward, enqueued, (src_image, dst_image), |state| {
            let (src, dst) = (image_of(state, src_image).ok_or(UNKNOWN_IMAGE)?, image_of(state, dst_image).ok_or(UNKNOWN_IMAGE)?);
            let (_, packed_region) = src.to_packed([0; 3], triple(region));
            Ok(extent(Side::image(&src, triple(src_origin)), Side::image(&dst, triple(dst_origin)), packed_region))
        })
    }
}

pub unsafe fn copy_image_to_buffer(
    forward: &mut Forward<'_, cl_int>,
    queue: cl_command_queue,
    src_image: cl_mem,
    dst_buffer: cl_mem,
    src_origin: *const size_t,
    region: *const size_t,
    dst_offset: size_t,
    wait_count: cl_uint,
    waits: *const cl_event,
    event: *mut cl_event,
) -> Recorded {
    let enqueued = Enqueued::new("clEnqueueCopyImageToBuffer", queue, wait_count, waits, event);
    unsafe {
        record_copy(forward, enqueued, (src_image, dst_buffer), |state| {
            let src = image_of(state, src_image).ok_or(UNKNOWN_IMAGE)?;
            let (_, packed_region) = src.to_packed([0; 3], triple(region));
            Ok(extent(Side::image(&src, triple(src_origin)), Side::packed(dst_offset as u64, packed_region), packed_region))
        })
    }
}

pub unsafe fn copy_buffer_to_image(
    forward: &mut Forward<'_, cl_int>,
    queue: cl_command_queue,
    src_buffer: cl_mem,
    dst_image: cl_mem,
    src_offset: size_t,
    dst_origin: *const size_t,
    region: *const size_t,
    wait_count: cl_uint,
    waits: *const cl_event,
    event: *mut cl_event,
) -> Recorded {
    let enqueued = Enqueued::new("clEnqueueCopyBufferToImage", queue, wait_count, waits, event);
    unsafe {
        record_copy(forward, enqueued, (src_buffer, dst_image), |state| {
            let dst = image_of(state, dst_image).ok_or(UNKNOWN_IMAGE)?;
            let (_, packed_region) = dst.to_packed([0; 3], triple(region));
            Ok(extent(Side::packed(src_offset as u64, packed_region), Side::image(&dst, triple(dst_origin)), packed_region))
        })
    }
}

/// A fill of `region` of `image` from `origin` (in texels) with `color`, as the trace's fill of
/// the texel bytes: one packed range, or rows of one slice.
pub(in crate::opencl) fn image_fill(
    recorder: &mut Recorder,
    state: &State,
    image: cl_mem,
    color: &[u8; 16],
    origin: [u64; 3],
    region: [u64; 3],
) -> Result<Command, &'static str> {
    let described = image_of(state, image).ok_or(UNKNOWN_IMAGE)?;
    let mem = recorder.mem_id(key(image)).ok_or(UNKNOWN_MEMORY)?;
    let pattern = fill_texel(described.channel_order, described.channel_data_type, color)
        .ok_or("an image fill of a format whose texels the shim cannot compute")?;
    let (row, slice) = described.packed_pitches();
    let ([x, y, z], [width, height, depth]) = described.to_packed(origin, region);
    let offset = z * slice + y * row + x;
    let whole = described.whole_region();
    let full_rows = width == row;
    if full_rows && (depth == 1 || height == whole[1]) {
        return Ok(Command::Fill(Fill { mem, offset, bytes: depth * height * row, pattern, rows: None }));
    }
    if depth == 1 {
        let rows = Some([row, region[0], height]);
        return Ok(Command::Fill(Fill { mem, offset, bytes: (height - 1) * row + width, pattern, rows }));
    }
    Err("an image fill of part of several slices")
}

pub unsafe fn fill_image(
    forward: &mut Forward<'_, cl_int>,
    queue: cl_command_queue,
    image: cl_mem,
    fill_color: *const c_void,
    origin: *const size_t,
    region: *const size_t,
    wait_count: cl_uint,
    waits: *const cl_event,
    event: *mut cl_event,
) -> Recorded {
    let prepared = unsafe { prepare_write(image, origin, region) }?;
    if !succeeded(forward) {
        return Ok(());
    }
    // SAFETY: the call succeeded, so the color holds four 4-byte components.
    let color: [u8; 16] = unsafe { host_bytes(fill_color, 16) }.try_into().unwrap_or([0; 16]);
    let (origin, region) = unsafe { (triple(origin), triple(region)) };
    let enqueued = Enqueued::new("clEnqueueFillImage", queue, wait_count, waits, event);
    unsafe { record(prepared, enqueued, |recorder, state| image_fill(recorder, state, image, &color, origin, region)) }
}
