//! Host synchronizations (each closes what it waited for as a window), the program's own stream
//! capture, profiler markers (capture ranges), and calls whose work is not recorded.

use super::access::{mark_streams, wait_for_marks, DeviceAccess};
use super::hooks::CUcontext;
use super::launch_log::{self, Waited};
use super::state::{with_recorder, with_state, State};
use super::hooks::driver;
use super::streams::{driver_stream, stream_key, DriverStream};
use super::{key, succeeded, CUresult, CUstream, Recorded, CUDA_SUCCESS};
use crate::recorder::Key;
use crate::entry::Forward;
use crate::session;
use crate::recorder::{Recorder, SyncScope};
use trace_format::SegmentId;
use std::ffi::{c_int, c_void};

/// Whether the program captures a stream now: the shim then makes no device call that could
/// invalidate the capture.
pub fn quiet(state: &State) -> bool {
    !state.capturing.is_empty()
}

/// The host waited for the device work `scope` covers: it closes as a window.
pub fn closed(call: &str, scope: SyncScope<'_>) -> Recorded {
    with_recorder(|state, recorder| close_window(state, recorder, call, scope))
}

/// `closed`'s work, for a caller that holds the recorder (and took `scope` under it).
pub fn close_window(state: &State, recorder: &mut Recorder, call: &str, scope: SyncScope<'_>) {
    let segment = recorder.host_sync(call, scope, &DeviceAccess::new(state));
    keep_printed(recorder, segment);
}

/// What the device printed so far belongs to the window a synchronization closed (`segment`);
/// with none, it was work outside the capture.
fn keep_printed(recorder: &mut Recorder, segment: Option<SegmentId>) {
    if let (Some(text), Some(segment)) = (crate::device_output::take(), segment) {
        recorder.device_printed(segment, text);
    }
}

/// The name of an error a kernel leaves its context with (every later call fails with it), for
/// the synchronization that reported it: where the program's device work ended.
fn device_fault(status: CUresult) -> Option<&'static str> {
    Some(match status {
        700 => "CUDA_ERROR_ILLEGAL_ADDRESS",
        702 => "CUDA_ERROR_LAUNCH_TIMEOUT",
        710 => "CUDA_ERROR_ASSERT",
        714 => "CUDA_ERROR_HARDWARE_STACK_ERROR",
        715 => "CUDA_ERROR_ILLEGAL_INSTRUCTION",
        716 => "CUDA_ERROR_MISALIGNED_ADDRESS",
        717 => "CUDA_ERROR_INVALID_ADDRESS_SPACE",
        718 => "CUDA_ERROR_INVALID_PC",
        719 => "CUDA_ERROR_LAUNCH_FAILED",
        _ => return None,
    })
}

/// Runs a synchronization waiting for `waited` (taken as it begins: work other threads submit
/// while it waits is not covered): a window closes if it succeeded, or failed with a device
/// fault (which the trace keeps as the window's outcome).
fn synchronizing(forward: &mut Forward<'_, CUresult>, call: &'static str, waited: Waited) -> Recorded {
    // Where the wait begins among the launches logged so far: the wait covers them. Outside the
    // capture the scope only counts the window.
    let start = match session::commands_captured() {
        true => Some(launch_log::wait_begins(waited)?),
        false => None,
    };
    match (forward.call(), start) {
        (CUDA_SUCCESS, Some(start)) => launch_log::closes(call, start),
        (CUDA_SUCCESS, None) => closed(call, waited.scope()),
        // A query answering "not ready", or any other failure, waited for nothing.
        (status, start) => match device_fault(status) {
            Some(error) => with_recorder(|state, recorder| {
                let scope = start.map_or_else(|| waited.scope(), |start| start.scope(recorder));
                let segment = recorder.host_sync_failed(call, scope, &DeviceAccess::new(state), error);
                keep_printed(recorder, segment);
            }),
            None => Ok(()),
        },
    }
}

/// `cuCtxSynchronize`: everything submitted before it began.
pub unsafe fn synchronize(forward: &mut Forward<'_, CUresult>, call: &'static str) -> Recorded {
    synchronizing(forward, call, Waited::Everything)
}

pub unsafe fn synchronize_context(forward: &mut Forward<'_, CUresult>, call: &'static str, _context: CUcontext) -> Recorded {
    unsafe { synchronize(forward, call) }
}

/// `cuStreamSynchronize`, and `cuStreamQuery` answering `CUDA_SUCCESS` (the host saw the
/// stream's work complete; `CUDA_ERROR_NOT_READY` is no synchronization).
pub unsafe fn synchronize_stream(forward: &mut Forward<'_, CUresult>, call: &'static str, stream: CUstream) -> Recorded {
    synchronizing(forward, call, Waited::Queue(stream_key(stream, call)))
}

/// `cuEventSynchronize`, and `cuEventQuery` answering `CUDA_SUCCESS`: what the event stands for.
pub unsafe fn synchronize_event(forward: &mut Forward<'_, CUresult>, call: &'static str, event: *mut c_void) -> Recorded {
    synchronizing(forward, call, Waited::Event(key(event)))
}

/// The program captures a stream into a graph of its own (`cuStreamBeginCapture_v2`): work on
/// capturing streams passes through unrecorded (it becomes the program's graph, recorded when
/// launched); work on other streams is recorded as usual.
pub unsafe fn begin_capture(forward: &mut Forward<'_, CUresult>, call: &str, stream: CUstream, _mode: c_int) -> Recorded {
    if succeeded(forward) {
        captures(stream_key(stream, call));
    }
    Ok(())
}

/// `cuStreamBeginCaptureToGraph`: a capture into a graph the program made (a conditional
/// node's body, say).
pub unsafe fn begin_capture_to_graph(
    forward: &mut Forward<'_, CUresult>,
    call: &str,
    stream: CUstream,
    _graph: *mut c_void,
    _dependencies: *const *mut c_void,
    _dependency_data: *const c_void,
    _count: usize,
    _mode: c_int,
) -> Recorded {
    unsafe { begin_capture(forward, call, stream, _mode) }
}

/// `queue` takes part in a capture now (it began one, or joined one through an event): until
/// the capture ends its work is the program's graph's.
fn captures(queue: Key) {
    let id = capture_id(queue).unwrap_or(0);
    with_state(|state| state.capturing.insert(queue, id));
    launch_log::invalidate();
}

/// The driver's id of the capture the stream behind `queue` takes part in, if it does.
fn capture_id(queue: Key) -> Option<u64> {
    let DriverStream::Handle(stream) = driver_stream(queue) else { return None };
    let (mut status, mut id): (c_int, u64) = (0, 0);
    let (mut graph, mut dependencies, mut edge_data, mut count) = (std::ptr::null_mut(), std::ptr::null(), std::ptr::null(), 0usize);
    // SAFETY: out-parameters of the right types; a stream the program just used.
    let found = unsafe { driver::cuStreamGetCaptureInfo_v3(stream, &mut status, &mut id, &mut graph, &mut dependencies, &mut edge_data, &mut count) };
    (found == CUDA_SUCCESS && status == CAPTURE_STATUS_ACTIVE).then_some(id)
}

/// `CU_STREAM_CAPTURE_STATUS_ACTIVE`.
const CAPTURE_STATUS_ACTIVE: c_int = 1;

/// After `queue` waited for an event: a stream that waits for an event recorded in a capturing
/// stream joins that capture. Asked of the driver only while some capture is active.
pub fn maybe_joined(queue: Key) -> Recorded {
    let joining = with_state(|state| !state.capturing.is_empty() && !state.capturing.contains_key(&queue));
    if joining {
        if let Some(id) = capture_id(queue) {
            with_state(|state| state.capturing.insert(queue, id));
            launch_log::invalidate();
        }
    }
    Ok(())
}

/// `cuStreamEndCapture`: the capture is over for every stream that took part in it.
pub unsafe fn end_capture(forward: &mut Forward<'_, CUresult>, call: &str, stream: CUstream, _graph: *mut *mut c_void) -> Recorded {
    forward.call();
    // Failed or not, the capture is over.
    let queue = stream_key(stream, call);
    with_state(|state| {
        if let Some(id) = state.capturing.remove(&queue) {
            state.capturing.retain(|_, other| *other != id);
        }
    });
    launch_log::invalidate();
    Ok(())
}

/// A call whose work the shim does not record: the trace is marked partial.
pub fn unrecorded(call: &str) -> Recorded {
    with_recorder(|_, recorder| recorder.partial(call, "its work is not recorded"))
}

/// `cuProfilerStart`/`cuProfilerStop`: capture markers (see `REPRISE_CAPTURE=markers`). The
/// work before a marker closes with it, so the shim waits for it first (a program may stop the
/// profiler with copies still running into the host memory that the window's close reads).
fn capture_marker(forward: &mut Forward<'_, CUresult>, call: &str, start: bool) -> Recorded {
    if succeeded(forward) {
        settle(call)?;
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

/// Waits for every live stream with work no host synchronization covered yet and closes all of
/// it, where the program relies on work being done without waiting for it through CUDA (a
/// stream callback saw it done, a free, a capture marker, the exit). Not while a stream
/// captures, whose capture the waits would invalidate. A command recorded after its stream was
/// destroyed (a callback's thread destroyed it before the call that added the callback
/// returned) closes with the rest.
pub fn settle(call: &str) -> Recorded {
    let busy = with_recorder(|state, recorder| {
        let live = |queue: &Key| !state.destroyed.contains(queue);
        (!quiet(state) && recorder.has_pending()).then(|| {
            let busy: Vec<Key> = recorder.busy_queues().into_iter().filter(live).collect();
            (mark_streams(&busy), recorder.wait_begins(SyncScope::Everything))
        })
    })?;
    if let Some((marks, scope)) = busy {
        wait_for_marks(marks);
        closed(call, scope)?;
    }
    Ok(())
}

/// The program is exiting: the final contents of what the capture wrote are read while the
/// driver still answers.
pub fn end_of_program() {
    // At exit nothing of the program runs any more but the device work it left, which cannot
    // wait for the host (CUDA has no user events).
    let _ = settle("end of program");
    // Failing here only loses the final contents; the trace is completed either way.
    let _ = with_recorder(|state, recorder| recorder.end_of_program(Some(&DeviceAccess::new(state))));
    let (windows, launches) = launch_log::recorded_later();
    crate::log::info!("{windows} windows were closed later; {launches} launches were recorded from the launch log, {} described in their hooks", super::launches::described());
}
