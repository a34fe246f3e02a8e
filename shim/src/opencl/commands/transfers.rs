//! Reads, writes, copies and fills of buffers, with their rectangular forms.

use super::{host_bytes, memory, prepare, record, triple, Enqueued, UNKNOWN_MEMORY};
use crate::entry::Forward;
use crate::opencl::{key, succeeded, Recorded};
use crate::recorder::Access;
use libc::size_t;
use opencl_sys::*;
use std::ffi::c_void;
use trace_format::{Command, Copy, Extent, Fill, Place};

pub unsafe fn read_buffer(
    forward: &mut Forward<'_, cl_int>,
    queue: cl_command_queue,
    buffer: cl_mem,
    blocking: cl_bool,
    offset: size_t,
    size: size_t,
    ptr: *mut c_void,
    wait_count: cl_uint,
    waits: *const cl_event,
    event: *mut cl_event,
) -> Recorded {
    let prepared = prepare(|_, _| vec![Access { mem: key(buffer), write: false, overwrites: false }])?;
    if !succeeded(forward) {
        return Ok(());
    }
    let enqueued = Enqueued::new("clEnqueueReadBuffer", queue, wait_count, waits, event);
    let enqueued = enqueued.blocking(blocking).receiving(ptr, size);
    unsafe {
        record(prepared, enqueued, |recorder, _| {
            let src = memory(recorder, key(buffer), offset as u64)?;
            Ok(Command::Copy(Copy { src, dst: Place::Host { data: None }, extent: Extent::Linear { bytes: size as u64 } }))
        })
    }
}

pub unsafe fn write_buffer(
    forward: &mut Forward<'_, cl_int>,
    queue: cl_command_queue,
    buffer: cl_mem,
    blocking: cl_bool,
    offset: size_t,
    size: size_t,
    ptr: *const c_void,
    wait_count: cl_uint,
    waits: *const cl_event,
    event: *mut cl_event,
) -> Recorded {
    let prepared = prepare(|_, recorder| {
        let overwrites = recorder.covers_whole(key(buffer), offset as u64, size as u64);
        vec![Access { mem: key(buffer), write: true, overwrites }]
    })?;
    if !succeeded(forward) {
        return Ok(());
    }
    let enqueued = Enqueued::new("clEnqueueWriteBuffer", queue, wait_count, waits, event).blocking(blocking);
    unsafe {
        record(prepared, enqueued, |recorder, _| {
            let dst = memory(recorder, key(buffer), offset as u64)?;
            let data = recorder.host_blob(ptr as usize, size);
            Ok(Command::Copy(Copy { src: Place::Host { data: Some(data) }, dst, extent: Extent::Linear { bytes: size as u64 } }))
        })
    }
}

/// A rectangle's pitches with the API's defaults for zero (tightly packed rows and slices).
fn pitches(region: [u64; 3], row_pitch: size_t, slice_pitch: size_t) -> (u64, u64) {
    let row = if row_pitch == 0 { region[0] } else { row_pitch as u64 };
    let slice = if slice_pitch == 0 { region[1] * row } else { slice_pitch as u64 };
    (row, slice)
}

/// Bytes of host memory from its pointer through the last byte of the rectangle (the host
/// data of a rectangular read or write covers them, origin included).
pub(super) fn host_span(origin: [u64; 3], region: [u64; 3], row_pitch: u64, slice_pitch: u64) -> usize {
    let last = |axis: usize| origin[axis] + region[axis].saturating_sub(1);
    (last(2) * slice_pitch + last(1) * row_pitch + origin[0] + region[0]) as usize
}

/// The two sides of a rectangular host transfer, as `Extent::Rect` holds them.
struct RectSides {
    buffer_origin: [u64; 3],
    host_origin: [u64; 3],
    region: [u64; 3],
    buffer_pitches: (u64, u64),
    host_pitches: (u64, u64),
}

impl RectSides {
    unsafe fn new(
        buffer_origin: *const size_t,
        host_origin: *const size_t,
        region: *const size_t,
        buffer_pitches: (size_t, size_t),
        host_pitches: (size_t, size_t),
    ) -> RectSides {
        let region = unsafe { triple(region) };
        RectSides {
            buffer_origin: unsafe { triple(buffer_origin) },
            host_origin: unsafe { triple(host_origin) },
            region,
            buffer_pitches: pitches(region, buffer_pitches.0, buffer_pitches.1),
            host_pitches: pitches(region, host_pitches.0, host_pitches.1),
        }
    }

    fn host_span(&self) -> usize {
        host_span(self.host_origin, self.region, self.host_pitches.0, self.host_pitches.1)
    }

    /// The extent of a copy from the buffer to the host (`to_host`) or back.
    fn extent(&self, to_host: bool) -> Extent {
        let (src, dst) = match to_host {
            true => ((self.buffer_origin, self.buffer_pitches), (self.host_origin, self.host_pitches)),
            false => ((self.host_origin, self.host_pitches), (self.buffer_origin, self.buffer_pitches)),
        };
        Extent::Rect {
            src_origin: src.0,
            dst_origin: dst.0,
            region: self.region,
            src_row_pitch: src.1 .0,
            src_slice_pitch: src.1 .1,
            dst_row_pitch: dst.1 .0,
            dst_slice_pitch: dst.1 .1,
        }
    }
}

pub unsafe fn read_buffer_rect(
    forward: &mut Forward<'_, cl_int>,
    queue: cl_command_queue,
    buffer: cl_mem,
    blocking: cl_bool,
    buffer_origin: *const size_t,
    host_origin: *const size_t,
    region: *const size_t,
    buffer_row_pitch: size_t,
    buffer_slice_pitch: size_t,
    host_row_pitch: size_t,
    host_slice_pitch: size_t,
    ptr: *mut c_void,
    wait_count: cl_uint,
    waits: *const cl_event,
    event: *mut cl_event,
) -> Recorded {
    let prepared = prepare(|_, _| vec![Access { mem: key(buffer), write: false, overwrites: false }])?;
    if !succeeded(forward) {
        return Ok(());
    }
    let sides = unsafe {
        RectSides::new(buffer_origin, host_origin, region, (buffer_row_pitch, buffer_slice_pitch), (host_row_pitch, host_slice_pitch))
    };
    let enqueued = Enqueued::new("clEnqueueReadBufferRect", queue, wait_count, waits, event);
    let enqueued = enqueued.blocking(blocking).receiving(ptr, sides.host_span());
    unsafe {
        record(prepared, enqueued, |recorder, _| {
            let src = memory(recorder, key(buffer), 0)?;
            Ok(Command::Copy(Copy { src, dst: Place::Host { data: None }, extent: sides.extent(true) }))
        })
    }
}

pub unsafe fn write_buffer_rect(
    forward: &mut Forward<'_, cl_int>,
    queue: cl_command_queue,
    buffer: cl_mem,
    blocking: cl_bool,
    buffer_origin: *const size_t,
    host_origin: *const size_t,
    region: *const size_t,
    buffer_row_pitch: size_t,
    buffer_slice_pitch: size_t,
    host_row_pitch: size_t,
    host_slice_pitch: size_t,
    ptr: *const c_void,
    wait_count: cl_uint,
    waits: *const cl_event,
    event: *mut cl_event,
) -> Recorded {
    let prepared = prepare(|_, _| vec![Access { mem: key(buffer), write: true, overwrites: false }])?;
    if !succeeded(forward) {
        return Ok(());
    }
    let sides = unsafe {
        RectSides::new(buffer_origin, host_origin, region, (buffer_row_pitch, buffer_slice_pitch), (host_row_pitch, host_slice_pitch))
    };
    let enqueued = Enqueued::new("clEnqueueWriteBufferRect", queue, wait_count, waits, event).blocking(blocking);
    unsafe {
        record(prepared, enqueued, |recorder, _| {
            let dst = memory(recorder, key(buffer), 0)?;
            let data = recorder.blob(host_bytes(ptr, sides.host_span()));
            Ok(Command::Copy(Copy { src: Place::Host { data: Some(data) }, dst, extent: sides.extent(false) }))
        })
    }
}

pub unsafe fn copy_buffer(
    forward: &mut Forward<'_, cl_int>,
    queue: cl_command_queue,
    src_buffer: cl_mem,
    dst_buffer: cl_mem,
    src_offset: size_t,
    dst_offset: size_t,
    size: size_t,
    wait_count: cl_uint,
    waits: *const cl_event,
    event: *mut cl_event,
) -> Recorded {
    let accesses = vec![Access { mem: key(src_buffer), write: false, overwrites: false }, Access { mem: key(dst_buffer), write: true, overwrites: false }];
    let prepared = prepare(|_, _| accesses)?;
    if !succeeded(forward) {
        return Ok(());
    }
    let enqueued = Enqueued::new("clEnqueueCopyBuffer", queue, wait_count, waits, event);
    unsafe {
        record(prepared, enqueued, |recorder, _| {
            let src = memory(recorder, key(src_buffer), src_offset as u64)?;
            let dst = memory(recorder, key(dst_buffer), dst_offset as u64)?;
            Ok(Command::Copy(Copy { src, dst, extent: Extent::Linear { bytes: size as u64 } }))
        })
    }
}

/// The extent of a rectangular copy between buffers, with the API's default pitches.
pub(in crate::opencl) unsafe fn rect_extent(
    src_origin: *const size_t,
    dst_origin: *const size_t,
    region: *const size_t,
    src_pitches: (size_t, size_t),
    dst_pitches: (size_t, size_t),
) -> Extent {
    let region = unsafe { triple(region) };
    let (src_row_pitch, src_slice_pitch) = pitches(region, src_pitches.0, src_pitches.1);
    let (dst_row_pitch, dst_slice_pitch) = pitches(region, dst_pitches.0, dst_pitches.1);
    Extent::Rect {
        src_origin: unsafe { triple(src_origin) },
        dst_origin: unsafe { triple(dst_origin) },
        region,
        src_row_pitch,
        src_slice_pitch,
        dst_row_pitch,
        dst_slice_pitch,
    }
}

pub unsafe fn copy_buffer_rect(
    forward: &mut Forward<'_, cl_int>,
    queue: cl_command_queue,
    src_buffer: cl_mem,
    dst_buffer: cl_mem,
    src_origin: *const size_t,
    dst_origin: *const size_t,
    region: *const size_t,
    src_row_pitch: size_t,
    src_slice_pitch: size_t,
    dst_row_pitch: size_t,
    dst_slice_pitch: size_t,
    wait_count: cl_uint,
    waits: *const cl_event,
    event: *mut cl_event,
) -> Recorded {
    let accesses = vec![Access { mem: key(src_buffer), write: false, overwrites: false }, Access { mem: key(dst_buffer), write: true, overwrites: false }];
    let prepared = prepare(|_, _| accesses)?;
    if !succeeded(forward) {
        return Ok(());
    }
    let extent = unsafe { rect_extent(src_origin, dst_origin, region, (src_row_pitch, src_slice_pitch), (dst_row_pitch, dst_slice_pitch)) };
    let enqueued = Enqueued::new("clEnqueueCopyBufferRect", queue, wait_count, waits, event);
    unsafe {
        record(prepared, enqueued, |recorder, _| {
            let src = memory(recorder, key(src_buffer), 0)?;
            let dst = memory(recorder, key(dst_buffer), 0)?;
            Ok(Command::Copy(Copy { src, dst, extent }))
        })
    }
}

pub unsafe fn fill_buffer(
    forward: &mut Forward<'_, cl_int>,
    queue: cl_command_queue,
    buffer: cl_mem,
    pattern: *const c_void,
    pattern_size: size_t,
    offset: size_t,
    size: size_t,
    wait_count: cl_uint,
    waits: *const cl_event,
    event: *mut cl_event,
) -> Recorded {
    let prepared = prepare(|_, recorder| {
        let overwrites = recorder.covers_whole(key(buffer), offset as u64, size as u64);
        vec![Access { mem: key(buffer), write: true, overwrites }]
    })?;
    if !succeeded(forward) {
        return Ok(());
    }
    let pattern = unsafe { host_bytes(pattern, pattern_size) };
    let enqueued = Enqueued::new("clEnqueueFillBuffer", queue, wait_count, waits, event);
    unsafe {
        record(prepared, enqueued, |recorder, _| {
            let mem = recorder.mem_id(key(buffer)).ok_or(UNKNOWN_MEMORY)?;
            Ok(Command::Fill(Fill { mem, offset: offset as u64, bytes: size as u64, pattern, rows: None }))
        })
    }
}
