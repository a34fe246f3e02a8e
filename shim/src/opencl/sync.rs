//! Host synchronizations (each closes what it waited for as a window), user events and event
//! callbacks.

use super::access::DeviceAccess;
use super::state::with_recorder;
use super::{created, key, succeeded, EventNotify, Recorded};
use crate::entry::Forward;
use crate::session;
use crate::recorder::{Key, SyncScope};
use trace_format::Api;
use opencl_sys::*;
use std::ffi::c_void;

/// The host waited for the device work `scope` covers: it closes as a window.
pub fn closed(call: &str, scope: SyncScope<'_>) -> Recorded {
    with_recorder(|state, recorder| {
        recorder.host_sync(call, scope, &DeviceAccess::new(&state.memories));
    })
}

/// Runs a wait for `scope`, taken as it begins (work other threads submit while it waits is
/// not covered): a window closes if it succeeded.
fn waiting(forward: &mut Forward<'_, cl_int>, call: &str, scope: SyncScope<'_>) -> Recorded {
    let scope = session::wait_begins(Api::OpenCl, scope)?;
    match succeeded(forward) {
        true => closed(call, scope),
        false => Ok(()),
    }
}

pub unsafe fn finish(forward: &mut Forward<'_, cl_int>, queue: cl_command_queue) -> Recorded {
    waiting(forward, "clFinish", SyncScope::Queues(&[key(queue)]))
}

pub unsafe fn wait_for_events(forward: &mut Forward<'_, cl_int>, count: cl_uint, events: *const cl_event) -> Recorded {
    let events: Vec<Key> = match events.is_null() {
        true => Vec::new(),
        // SAFETY: a non-null list holds `count` events (the call fails otherwise, and closes nothing).
        false => unsafe { std::slice::from_raw_parts(events, count as usize) }.iter().map(|&event| key(event)).collect(),
    };
    waiting(forward, "clWaitForEvents", SyncScope::Events(&events))
}

pub unsafe fn create_user_event(forward: &mut Forward<'_, cl_event>, _context: cl_context, errcode_ret: *mut cl_int) -> Recorded {
    let Some(event) = (unsafe { created(forward, errcode_ret) }) else { return Ok(()) };
    with_recorder(|_, recorder| recorder.user_event_created(key(event), "clCreateUserEvent"))
}

pub unsafe fn set_user_event_status(forward: &mut Forward<'_, cl_int>, event: cl_event, status: cl_int) -> Recorded {
    if succeeded(forward) {
        with_recorder(|_, recorder| recorder.user_event_set(key(event), status < 0))?;
    }
    Ok(())
}

pub unsafe fn set_event_callback(
    forward: &mut Forward<'_, cl_int>,
    event: cl_event,
    _callback_type: cl_int,
    _pfn_notify: EventNotify,
    _user_data: *mut c_void,
) -> Recorded {
    if succeeded(forward) {
        with_recorder(|_, recorder| recorder.host_callback(key(event), "clSetEventCallback"))?;
    }
    Ok(())
}

/// The program is exiting: the final contents of what the capture wrote are read while the
/// driver still answers.
pub fn end_of_program() {
    // Failing here only loses the final contents; the trace is completed either way.
    let _ = with_recorder(|state, recorder| recorder.end_of_program(Some(&DeviceAccess::new(&state.memories))));
}
