//! Commands that order without moving data the program sees: markers, barriers, migrations.

use super::{prepare, record, Enqueued};
use crate::entry::Forward;
use crate::opencl::{succeeded, Recorded};
use crate::recorder::Order;
use libc::size_t;
use opencl_sys::*;
use std::ffi::c_void;
use trace_format::Command;

/// A command that moves no data the program sees (marker, barrier, migration): a barrier node.
unsafe fn ordering(forward: &mut Forward<'_, cl_int>, enqueued: Enqueued) -> Recorded {
    let prepared = prepare(|_, _| Vec::new())?;
    if !succeeded(forward) {
        return Ok(());
    }
    unsafe { record(prepared, enqueued, |_, _| Ok(Command::Barrier)) }
}

pub unsafe fn marker_with_wait_list(
    forward: &mut Forward<'_, cl_int>,
    queue: cl_command_queue,
    wait_count: cl_uint,
    waits: *const cl_event,
    event: *mut cl_event,
) -> Recorded {
    let enqueued = Enqueued::new("clEnqueueMarkerWithWaitList", queue, wait_count, waits, event);
    unsafe { ordering(forward, enqueued.ordered(Order::Marker)) }
}

pub unsafe fn barrier_with_wait_list(
    forward: &mut Forward<'_, cl_int>,
    queue: cl_command_queue,
    wait_count: cl_uint,
    waits: *const cl_event,
    event: *mut cl_event,
) -> Recorded {
    let enqueued = Enqueued::new("clEnqueueBarrierWithWaitList", queue, wait_count, waits, event);
    unsafe { ordering(forward, enqueued.ordered(Order::Barrier)) }
}

pub unsafe fn marker(forward: &mut Forward<'_, cl_int>, queue: cl_command_queue, event: *mut cl_event) -> Recorded {
    let enqueued = Enqueued::new("clEnqueueMarker", queue, 0, std::ptr::null(), event);
    unsafe { ordering(forward, enqueued.ordered(Order::Marker)) }
}

pub unsafe fn barrier(forward: &mut Forward<'_, cl_int>, queue: cl_command_queue) -> Recorded {
    let enqueued = Enqueued::new("clEnqueueBarrier", queue, 0, std::ptr::null(), std::ptr::null_mut());
    unsafe { ordering(forward, enqueued.ordered(Order::Barrier)) }
}

pub unsafe fn wait_for_events(
    forward: &mut Forward<'_, cl_int>,
    queue: cl_command_queue,
    count: cl_uint,
    events: *const cl_event,
) -> Recorded {
    let enqueued = Enqueued::new("clEnqueueWaitForEvents", queue, count, events, std::ptr::null_mut());
    unsafe { ordering(forward, enqueued.ordered(Order::Barrier)) }
}

pub unsafe fn migrate_mem_objects(
    forward: &mut Forward<'_, cl_int>,
    queue: cl_command_queue,
    _count: cl_uint,
    _mem_objects: *const cl_mem,
    _flags: cl_mem_migration_flags,
    wait_count: cl_uint,
    waits: *const cl_event,
    event: *mut cl_event,
) -> Recorded {
    let enqueued = Enqueued::new("clEnqueueMigrateMemObjects", queue, wait_count, waits, event);
    unsafe { ordering(forward, enqueued) }
}

/// A command that moves no data the program sees, recorded under its own name (unified shared
/// memory's migrations and advice, an SVM free).
pub unsafe fn order_only(
    call: &'static str,
    forward: &mut Forward<'_, cl_int>,
    queue: cl_command_queue,
    wait_count: cl_uint,
    waits: *const cl_event,
    event: *mut cl_event,
) -> Recorded {
    unsafe { ordering(forward, Enqueued::new(call, queue, wait_count, waits, event)) }
}

pub unsafe fn svm_migrate_mem(
    forward: &mut Forward<'_, cl_int>,
    queue: cl_command_queue,
    _count: cl_uint,
    _pointers: *mut *const c_void,
    _sizes: *const size_t,
    _flags: cl_mem_migration_flags,
    wait_count: cl_uint,
    waits: *const cl_event,
    event: *mut cl_event,
) -> Recorded {
    let enqueued = Enqueued::new("clEnqueueSVMMigrateMem", queue, wait_count, waits, event);
    unsafe { ordering(forward, enqueued) }
}
