//! Maps and unmaps of buffers, images and SVM: a map for reading is a read into the mapped
//! memory, the unmap of a map for writing a write of what the program put there.

use super::images::{extent, image_of, Side, UNKNOWN_IMAGE};
use super::transfers::host_span;
use super::{memory, prepare, record, triple, Enqueued};
use crate::entry::Forward;
use crate::opencl::access::DeviceAccess;
use crate::opencl::state::{with_recorder, with_state, Mapping};
use crate::opencl::{key, succeeded, Recorded};
use crate::recorder::{Access, Prepared};
use libc::size_t;
use opencl_sys::*;
use std::ffi::c_void;
use trace_format::{Command, Copy, Place};

fn maps_for_writing(flags: cl_map_flags) -> bool {
    flags & (CL_MAP_WRITE | CL_MAP_WRITE_INVALIDATE_REGION) != 0
}

/// A map for reading is a read of the region into the mapped memory; a map only for writing
/// orders but moves nothing (its unmap is the write).
unsafe fn map_region(
    prepared: Prepared,
    enqueued: Enqueued,
    mapping: Mapping,
    flags: cl_map_flags,
    mapped: *mut c_void,
) -> Recorded {
    let reads = flags & CL_MAP_READ != 0 || flags == 0;
    let enqueued = match reads {
        true => enqueued.receiving(mapped, mapping.host_bytes as usize),
        false => enqueued,
    };
    let read = reads.then(|| (mapping.mem, mapping.offset, mapping.to_host.clone()));
    with_recorder(|state, _| state.mappings.insert(mapped as usize, mapping))?;
    unsafe {
        record(prepared, enqueued, |recorder, _| match read {
            Some((mem, offset, extent)) => {
                let src = memory(recorder, mem, offset)?;
                Ok(Command::Copy(Copy { src, dst: Place::Host { data: None }, extent }))
            }
            None => Ok(Command::Barrier),
        })
    }
}

/// An unmap of a region mapped for writing writes it back with what the program put there.
unsafe fn unmap_region(forward: &mut Forward<'_, cl_int>, enqueued: Enqueued, mapped: *mut c_void) -> Recorded {
    let taken = with_recorder(|state, recorder| {
        let mapping = state.mappings.remove(&(mapped as usize))?;
        // The mapped memory is gone after the unmap: take what the program received and wrote now.
        recorder.capture_received(mapped as usize, 1);
        let written = (mapping.write && recorder.capturing())
            .then(|| unsafe { recorder.host_blob(mapped as usize, mapping.host_bytes as usize) });
        let accesses = vec![Access { mem: mapping.mem, write: mapping.write, overwrites: false }];
        Some((mapping, written, recorder.prepare(accesses, &DeviceAccess::new(&state.memories))))
    })?;
    let Some((mapping, written, prepared)) = taken else {
        forward.call();
        return Ok(());
    };
    if !succeeded(forward) {
        return Ok(());
    }
    unsafe {
        record(prepared, enqueued, |recorder, _| match written {
            Some(data) => {
                let dst = memory(recorder, mapping.mem, mapping.offset)?;
                Ok(Command::Copy(Copy { src: Place::Host { data: Some(data) }, dst, extent: mapping.from_host }))
            }
            None => Ok(Command::Barrier),
        })
    }
}

pub unsafe fn map_buffer(
    forward: &mut Forward<'_, *mut c_void>,
    queue: cl_command_queue,
    buffer: cl_mem,
    blocking: cl_bool,
    flags: cl_map_flags,
    offset: size_t,
    size: size_t,
    wait_count: cl_uint,
    waits: *const cl_event,
    event: *mut cl_event,
    errcode_ret: *mut cl_int,
) -> Recorded {
    let prepared = prepare(|_, _| vec![Access { mem: key(buffer), write: false, overwrites: false }])?;
    let Some(mapped) = (unsafe { crate::opencl::created(forward, errcode_ret) }) else { return Ok(()) };
    let mapping = Mapping::linear(key(buffer), offset as u64, size as u64, maps_for_writing(flags));
    let enqueued = Enqueued::new("clEnqueueMapBuffer", queue, wait_count, waits, event).blocking(blocking);
    unsafe { map_region(prepared, enqueued, mapping, flags, mapped) }
}

/// The mapped region of an image lies on the host with the pitches the runtime returned.
pub unsafe fn map_image(
    forward: &mut Forward<'_, *mut c_void>,
    queue: cl_command_queue,
    image: cl_mem,
    blocking: cl_bool,
    flags: cl_map_flags,
    origin: *const size_t,
    region: *const size_t,
    row_pitch: *mut size_t,
    slice_pitch: *mut size_t,
    wait_count: cl_uint,
    waits: *const cl_event,
    event: *mut cl_event,
    errcode_ret: *mut cl_int,
) -> Recorded {
    let prepared = prepare(|_, _| vec![Access { mem: key(image), write: false, overwrites: false }])?;
    let Some(mapped) = (unsafe { crate::opencl::created(forward, errcode_ret) }) else { return Ok(()) };
    let enqueued = Enqueued::new("clEnqueueMapImage", queue, wait_count, waits, event).blocking(blocking);
    let Some(described) = with_state(|state| image_of(state, image)) else {
        return unsafe { record(prepared, enqueued, |_, _| Err(UNKNOWN_IMAGE)) };
    };
    // SAFETY: the call succeeded: origin and region hold three sizes each, and the pitches were
    // returned where the program asked for them (a runtime that took no row pitch counts as packed).
    let pitch = |returned: *mut size_t| unsafe { returned.as_ref().map_or(0, |pitch| *pitch) };
    let (origin, region, row_pitch, slice_pitch) = (unsafe { triple(origin) }, unsafe { triple(region) }, pitch(row_pitch), pitch(slice_pitch));
    let (_, packed_region) = described.to_packed([0; 3], region);
    let (row, slice) = described.packed_host_pitches(region, row_pitch as u64, slice_pitch as u64);
    let (image_side, host_side) = (Side::image(&described, origin), Side::host(row, slice));
    let mapping = Mapping {
        mem: key(image),
        offset: 0,
        host_bytes: host_span([0; 3], packed_region, row, slice) as u64,
        to_host: extent(image_side, host_side, packed_region),
        from_host: extent(host_side, image_side, packed_region),
        write: maps_for_writing(flags),
    };
    unsafe { map_region(prepared, enqueued, mapping, flags, mapped) }
}

pub unsafe fn unmap(
    forward: &mut Forward<'_, cl_int>,
    queue: cl_command_queue,
    _mem: cl_mem,
    mapped: *mut c_void,
    wait_count: cl_uint,
    waits: *const cl_event,
    event: *mut cl_event,
) -> Recorded {
    let enqueued = Enqueued::new("clEnqueueUnmapMemObject", queue, wait_count, waits, event);
    unsafe { unmap_region(forward, enqueued, mapped) }
}

pub unsafe fn svm_map(
    forward: &mut Forward<'_, cl_int>,
    queue: cl_command_queue,
    blocking: cl_bool,
    flags: cl_map_flags,
    svm_ptr: *mut c_void,
    size: size_t,
    wait_count: cl_uint,
    waits: *const cl_event,
    event: *mut cl_event,
) -> Recorded {
    let located = with_recorder(|_, recorder| recorder.locate(svm_ptr as usize as u64))?;
    let Some((mem, offset)) = located else {
        forward.call();
        return Ok(());
    };
    let prepared = prepare(|_, _| vec![Access { mem, write: false, overwrites: false }])?;
    if !succeeded(forward) {
        return Ok(());
    }
    let mapping = Mapping::linear(mem, offset, size as u64, maps_for_writing(flags));
    let enqueued = Enqueued::new("clEnqueueSVMMap", queue, wait_count, waits, event).blocking(blocking);
    unsafe { map_region(prepared, enqueued, mapping, flags, svm_ptr) }
}

pub unsafe fn svm_unmap(
    forward: &mut Forward<'_, cl_int>,
    queue: cl_command_queue,
    svm_ptr: *mut c_void,
    wait_count: cl_uint,
    waits: *const cl_event,
    event: *mut cl_event,
) -> Recorded {
    let enqueued = Enqueued::new("clEnqueueSVMUnmap", queue, wait_count, waits, event);
    unsafe { unmap_region(forward, enqueued, svm_ptr) }
}
