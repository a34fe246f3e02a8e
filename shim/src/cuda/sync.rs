//! Host synchronizations (the ends of windows), the program's own stream capture and graphs,
//! profiler markers (capture ranges), and calls whose work is not recorded.

use super::access::{wait_for, DeviceAccess};
use super::hooks::CUcontext;
use super::state::{with_recorder, with_state, State};
use super::streams::stream_key;
use super::{succeeded, CUresult, CUstream, Recorded};
use crate::entry::Forward;
use crate::recorder::Recorder;
use std::ffi::{c_int, c_void};

/// Waits, holding no lock, for the streams the open window used, then runs `work` under the
/// locks (another thread's hook may be what lets that work finish). While the program captures
/// a stream the shim waits for nothing: a wait, or the legacy stream's implicit one, could
/// invalidate the capture; `work` must then make no device calls either (see `quiet`).
pub fn settled<R>(work: impl FnOnce(&mut State, &mut Recorder) -> R) -> Result<R, super::Failure> {
    let queues = with_recorder(|state, recorder| if quiet(state) { Vec::new() } else { recorder.queues_to_settle() })?;
    queues.into_iter().for_each(wait_for);
    with_recorder(work)
}

/// Whether the program captures a stream now, when the shim makes no device calls: windows go
/// on across host synchronizations until the capture ends.
pub fn quiet(state: &State) -> bool {
    !state.capturing.is_empty()
}

/// The host waited for device work: the window ends.
pub fn end_window(call: &str) -> Recorded {
    settled(|state, recorder| {
        if !quiet(state) {
            recorder.host_sync(call, &DeviceAccess::new(state));
        }
    })
}

/// `cuCtxSynchronize`; the stream, context and event forms below end the window the same way
/// (the recorder waits for every stream the window used), and so do stream and event queries
/// that answer `CUDA_SUCCESS`: the host saw the work complete (`CUDA_ERROR_NOT_READY` is no
/// synchronization).
pub unsafe fn synchronize(forward: &mut Forward<'_, CUresult>, call: &str) -> Recorded {
    if succeeded(forward) {
        end_window(call)?;
    }
    Ok(())
}

pub unsafe fn synchronize_stream(forward: &mut Forward<'_, CUresult>, call: &str, _stream: CUstream) -> Recorded {
    unsafe { synchronize(forward, call) }
}

pub unsafe fn synchronize_context(forward: &mut Forward<'_, CUresult>, call: &str, _context: CUcontext) -> Recorded {
    unsafe { synchronize(forward, call) }
}

pub unsafe fn synchronize_event(forward: &mut Forward<'_, CUresult>, call: &str, _event: *mut c_void) -> Recorded {
    unsafe { synchronize(forward, call) }
}

/// The program captures a stream into a graph of its own: the shim's calls must not touch the
/// stream (nor, in the global capture mode, synchronize anything) until the capture ends, so the
/// open window ends first and work on capturing streams passes through unrecorded.
pub unsafe fn begin_capture(forward: &mut Forward<'_, CUresult>, call: &str, stream: CUstream, _mode: c_int) -> Recorded {
    end_window(call)?;
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
    with_recorder(|state, recorder| {
        if !quiet(state) {
            recorder.partial(call, "its work is not recorded");
        }
    })
}

/// `cuProfilerStart`/`cuProfilerStop`: capture markers (see `REPRISE_CAPTURE=markers`).
fn capture_marker(forward: &mut Forward<'_, CUresult>, call: &str, start: bool) -> Recorded {
    if succeeded(forward) {
        settled(|state, recorder| {
            if !quiet(state) {
                recorder.capture_marker(start, call, &DeviceAccess::new(state));
            }
        })?;
    }
    Ok(())
}

pub unsafe fn profiler_start(forward: &mut Forward<'_, CUresult>, call: &str) -> Recorded {
    capture_marker(forward, call, true)
}

pub unsafe fn profiler_stop(forward: &mut Forward<'_, CUresult>, call: &str) -> Recorded {
    capture_marker(forward, call, false)
}
