//! Host synchronizations (each closes what it waited for as a window), the program's own stream
//! capture, profiler markers (capture ranges), and calls whose work is not recorded.

use super::access::DeviceAccess;
use super::hooks::CUcontext;
use super::state::{with_recorder, with_state, State};
use super::streams::stream_key;
use super::{key, succeeded, CUresult, CUstream, Recorded};
use crate::entry::Forward;
use crate::recorder::SyncScope;
use std::ffi::{c_int, c_void};

/// Whether the program captures a stream now: the shim then makes no device call that could
/// invalidate the capture.
pub fn quiet(state: &State) -> bool {
    !state.capturing.is_empty()
}

/// The host waited for the device work `scope` covers: it closes as a window.
pub fn closed(call: &str, scope: SyncScope<'_>) -> Recorded {
    with_recorder(|state, recorder| recorder.host_sync(call, scope, &DeviceAccess::new(state)))
}

/// `cuCtxSynchronize`: everything submitted so far.
pub unsafe fn synchronize(forward: &mut Forward<'_, CUresult>, call: &str) -> Recorded {
    if succeeded(forward) {
        closed(call, SyncScope::Everything)?;
    }
    Ok(())
}

pub unsafe fn synchronize_context(forward: &mut Forward<'_, CUresult>, call: &str, _context: CUcontext) -> Recorded {
    unsafe { synchronize(forward, call) }
}

/// `cuStreamSynchronize`, and `cuStreamQuery` answering `CUDA_SUCCESS` (the host saw the
/// stream's work complete; `CUDA_ERROR_NOT_READY` is no synchronization).
pub unsafe fn synchronize_stream(forward: &mut Forward<'_, CUresult>, call: &str, stream: CUstream) -> Recorded {
    if succeeded(forward) {
        closed(call, SyncScope::Queues(&[stream_key(stream, call)]))?;
    }
    Ok(())
}

/// `cuEventSynchronize`, and `cuEventQuery` answering `CUDA_SUCCESS`: what the event stands for.
pub unsafe fn synchronize_event(forward: &mut Forward<'_, CUresult>, call: &str, event: *mut c_void) -> Recorded {
    if succeeded(forward) {
        closed(call, SyncScope::Events(&[key(event)]))?;
    }
    Ok(())
}

/// The program captures a stream into a graph of its own: work on capturing streams passes
/// through unrecorded (it becomes the program's graph, recorded when launched), and the shim's
/// calls must not touch the stream until the capture ends.
pub unsafe fn begin_capture(forward: &mut Forward<'_, CUresult>, call: &str, stream: CUstream, _mode: c_int) -> Recorded {
    if succeeded(forward) {
        let queue = stream_key(stream, call);
        with_state(|state| state.capturing.insert(queue));
    }
    Ok(())
}

pub unsafe fn end_capture(forward: &mut Forward<'_, CUresult>, call: &str, stream: CUstream, _graph: *mut *mut c_void) -> Recorded {
    forward.call();
    // Failed or not, the capture is over.
    let queue = stream_key(stream, call);
    with_state(|state| state.capturing.remove(&queue));
    Ok(())
}

/// A call whose work the shim does not record: the trace is marked partial.
pub fn unrecorded(call: &str) -> Recorded {
    with_recorder(|_, recorder| recorder.partial(call, "its work is not recorded"))
}

/// `cuProfilerStart`/`cuProfilerStop`: capture markers (see `REPRISE_CAPTURE=markers`).
fn capture_marker(forward: &mut Forward<'_, CUresult>, call: &str, start: bool) -> Recorded {
    if succeeded(forward) {
        with_recorder(|state, recorder| recorder.capture_marker(start, call, &DeviceAccess::new(state)))?;
    }
    Ok(())
}

pub unsafe fn profiler_start(forward: &mut Forward<'_, CUresult>, call: &str) -> Recorded {
    capture_marker(forward, call, true)
}

pub unsafe fn profiler_stop(forward: &mut Forward<'_, CUresult>, call: &str) -> Recorded {
    capture_marker(forward, call, false)
}

/// The program is exiting: the final contents of what the capture wrote are read while the
/// driver still answers.
pub fn end_of_program() {
    // Failing here only loses the final contents; the trace is completed either way.
    let _ = with_recorder(|state, recorder| recorder.end_of_program(Some(&DeviceAccess::new(state))));
}
