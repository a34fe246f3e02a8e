//! Host synchronizations (the ends of windows), user events and event callbacks.

use super::access::DeviceAccess;
use super::dispatch::call;
use super::state::{with_recorder, State};
use super::{created, key, succeeded, EventNotify, Failure, Recorded};
use crate::entry::Forward;
use crate::recorder::Recorder;
use opencl_sys::*;
use std::ffi::c_void;

/// Waits, holding no lock, for the queues the open window used (an event callback on another
/// thread may need a hook to return before they finish), then runs `work` under the locks.
pub fn settled<R>(work: impl FnOnce(&mut State, &mut Recorder) -> R) -> Result<R, Failure> {
    let queues = with_recorder(|_, recorder| recorder.queues_to_settle())?;
    for queue in queues {
        call!(clFinish(queue as usize as cl_command_queue));
    }
    with_recorder(work)
}

/// The host waited for device work: the window ends.
pub fn end_window(call: &str) -> Recorded {
    settled(|state, recorder| recorder.host_sync(call, &DeviceAccess::new(&state.memories)))
}

pub unsafe fn finish(forward: &mut Forward<'_, cl_int>, _queue: cl_command_queue) -> Recorded {
    if succeeded(forward) {
        end_window("clFinish")?;
    }
    Ok(())
}

pub unsafe fn wait_for_events(forward: &mut Forward<'_, cl_int>, _count: cl_uint, _events: *const cl_event) -> Recorded {
    if succeeded(forward) {
        end_window("clWaitForEvents")?;
    }
    Ok(())
}

pub unsafe fn create_user_event(forward: &mut Forward<'_, cl_event>, _context: cl_context, errcode_ret: *mut cl_int) -> Recorded {
    let Some(event) = (unsafe { created(forward, errcode_ret) }) else { return Ok(()) };
    with_recorder(|_, recorder| recorder.user_event_created(key(event), "clCreateUserEvent"))
}

pub unsafe fn set_user_event_status(forward: &mut Forward<'_, cl_int>, event: cl_event, _status: cl_int) -> Recorded {
    if succeeded(forward) {
        with_recorder(|_, recorder| recorder.user_event_set(key(event)))?;
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
