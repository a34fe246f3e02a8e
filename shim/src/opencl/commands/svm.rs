//! Copies and fills by pointer (SVM, and unified shared memory, whose commands take the same
//! arguments): pointers inside the allocations are memory, others host memory.

use super::{host_bytes, prepare, record, svm_place, Enqueued};
use crate::entry::Forward;
use crate::opencl::state::with_recorder;
use crate::opencl::{succeeded, Recorded};
use crate::recorder::Access;
use libc::size_t;
use opencl_sys::*;
use std::ffi::c_void;
use trace_format::{Command, Copy, Extent, Fill, Place};

pub unsafe fn copy_by_pointer(
    call: &'static str,
    forward: &mut Forward<'_, cl_int>,
    queue: cl_command_queue,
    blocking: cl_bool,
    dst: *mut c_void,
    src: *const c_void,
    size: size_t,
    wait_count: cl_uint,
    waits: *const cl_event,
    event: *mut cl_event,
) -> Recorded {
    let prepared = prepare(|_, recorder| {
        let side = |pointer: *const c_void, write| recorder.locate(pointer as usize as u64).map(|(mem, _)| Access { mem, write, overwrites: false });
        side(src, false).into_iter().chain(side(dst, true)).collect()
    })?;
    if !succeeded(forward) {
        return Ok(());
    }
    let enqueued = Enqueued::new(call, queue, wait_count, waits, event).blocking(blocking);
    let dst_in_svm = with_recorder(|_, recorder| recorder.locate(dst as usize as u64).is_some())?;
    let enqueued = match dst_in_svm {
        true => enqueued,
        false => enqueued.receiving(dst, size),
    };
    unsafe {
        record(prepared, enqueued, |recorder, _| {
            let src = svm_place(recorder, src).unwrap_or_else(|| Place::Host { data: Some(recorder.host_blob(src as usize, size)) });
            let dst = svm_place(recorder, dst).unwrap_or(Place::Host { data: None });
            if matches!((&src, &dst), (Place::Host { .. }, Place::Host { .. })) {
                return Err("a copy between host memory outside the allocations");
            }
            Ok(Command::Copy(Copy { src, dst, extent: Extent::Linear { bytes: size as u64 } }))
        })
    }
}

pub unsafe fn fill_by_pointer(
    call: &'static str,
    forward: &mut Forward<'_, cl_int>,
    queue: cl_command_queue,
    svm_ptr: *mut c_void,
    pattern: *const c_void,
    pattern_size: size_t,
    size: size_t,
    wait_count: cl_uint,
    waits: *const cl_event,
    event: *mut cl_event,
) -> Recorded {
    let prepared = prepare(|_, recorder| {
        recorder.locate(svm_ptr as usize as u64).map(|(mem, _)| Access { mem, write: true, overwrites: false }).into_iter().collect()
    })?;
    if !succeeded(forward) {
        return Ok(());
    }
    let pattern = unsafe { host_bytes(pattern, pattern_size) };
    let enqueued = Enqueued::new(call, queue, wait_count, waits, event);
    unsafe {
        record(prepared, enqueued, |recorder, _| match svm_place(recorder, svm_ptr) {
            Some(Place::Memory { mem, offset }) => {
                Ok(Command::Fill(Fill { mem, offset, bytes: size as u64, pattern, rows: None }))
            }
            _ => Err("a fill outside the allocations"),
        })
    }
}
