//! Streams (the recorder's queues), events, host synchronizations (the ends of windows), host
//! functions and the program's own stream capture.
//!
//! Stream keys: the legacy default stream is `LEGACY` in every context it is used in (its group
//! is the current context); each thread's per-thread default stream gets a key of its own, odd
//! enough never to be a handle; other streams are their handles.

use super::access::{wait_for, DeviceAccess};
use super::commands::{enqueue, Enqueued};
use super::hooks::{CUcontext, HostFn, StreamCallback};
use super::state::{with_recorder, State};
use super::{device, key, per_thread, succeeded, CUresult, CUstream, Recorded};
use crate::entry::Forward;
use crate::recorder::{Key, QueueDesc, QueueSync, Recorder};
use std::ffi::{c_int, c_uint, c_void};
use trace_format::{Command, HostTaskKind};

/// `CU_STREAM_LEGACY`: the legacy default stream, also what stream 0 means.
pub const LEGACY: Key = 0x1;
/// `CU_STREAM_PER_THREAD`: the calling thread's default stream.
const PER_THREAD: Key = 0x2;
/// `CU_STREAM_NON_BLOCKING`: no implicit synchronization with the legacy default stream.
const CU_STREAM_NON_BLOCKING: c_uint = 0x1;

/// The key of the stream a call of hook `call` names: stream 0 is the legacy default stream,
/// or in a per-thread variant the calling thread's default stream.
pub fn stream_key(stream: CUstream, call: &str) -> Key {
    match key(stream) {
        0 if per_thread(call) => per_thread_key(thread_id()),
        0 | LEGACY => LEGACY,
        PER_THREAD => per_thread_key(thread_id()),
        handle => handle,
    }
}

/// A per-thread default stream's key: not 8-byte aligned, so never a handle.
pub fn per_thread_key(thread: u64) -> Key {
    thread << 4 | PER_THREAD
}

fn thread_id() -> u64 {
    // SAFETY: gettid has no preconditions.
    unsafe { libc::gettid() as u64 }
}

/// The stream the shim passes to the driver to reach the stream behind a key.
pub enum DriverStream {
    Handle(CUstream),
    /// Another thread's default stream, which only a context-wide wait reaches.
    OtherThreadsDefault,
}

pub fn driver_stream(queue: Key) -> DriverStream {
    match queue {
        LEGACY => DriverStream::Handle(LEGACY as usize as CUstream),
        queue if queue & 0xf == PER_THREAD && queue == per_thread_key(thread_id()) => {
            DriverStream::Handle(PER_THREAD as usize as CUstream)
        }
        queue if queue & 0xf == PER_THREAD => DriverStream::OtherThreadsDefault,
        handle => DriverStream::Handle(handle as usize as CUstream),
    }
}

/// How the stream with this key orders against others of its context (`group`).
pub fn describe(queue: Key, flags: u64, priority: i32, group: Key, device: Option<Key>) -> QueueDesc {
    let (sync, label) = match queue {
        LEGACY => (QueueSync::LegacyDefault, "legacy default stream".to_string()),
        queue if queue & 0xf == PER_THREAD => (QueueSync::Blocking, format!("per-thread default stream of thread {}", queue >> 4)),
        _ if flags & u64::from(CU_STREAM_NON_BLOCKING) != 0 => (QueueSync::Independent, format!("non-blocking stream {queue:#x}")),
        _ => (QueueSync::Blocking, format!("stream {queue:#x}")),
    };
    QueueDesc { in_order: true, sync, group, device, flags, priority, label }
}

/// Makes sure the recorder knows the stream `queue` (default streams and streams created before
/// the shim saw them are described on first use).
pub fn ensure_queue(state: &mut State, recorder: &mut Recorder, queue: Key) {
    if state.queues.contains(&queue) {
        return;
    }
    let (group, device) = device::current(state, recorder).map_or((0, None), |(context, device)| (context, Some(device)));
    recorder.queue_created(queue, describe(queue, 0, 0, group, device));
    state.queues.insert(queue);
}

fn created(queue: Key, flags: c_uint, priority: c_int) -> Recorded {
    with_recorder(|state, recorder| {
        let (group, device) = device::current(state, recorder).map_or((0, None), |(context, device)| (context, Some(device)));
        recorder.queue_created(queue, describe(queue, u64::from(flags), priority, group, device));
        state.queues.insert(queue);
    })
}

pub unsafe fn create(forward: &mut Forward<'_, CUresult>, _call: &str, stream: *mut CUstream, flags: c_uint) -> Recorded {
    if !succeeded(forward) {
        return Ok(());
    }
    // SAFETY: the call succeeded, so it wrote the stream.
    created(key(unsafe { *stream }), flags, 0)
}

pub unsafe fn create_with_priority(
    forward: &mut Forward<'_, CUresult>,
    _call: &str,
    stream: *mut CUstream,
    flags: c_uint,
    priority: c_int,
) -> Recorded {
    if !succeeded(forward) {
        return Ok(());
    }
    // SAFETY: the call succeeded, so it wrote the stream.
    created(key(unsafe { *stream }), flags, priority)
}

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

pub unsafe fn destroy(forward: &mut Forward<'_, CUresult>, call: &str, stream: CUstream) -> Recorded {
    // A window using the stream ends while the stream can still be waited for.
    let queue = key(stream);
    settled(|state, recorder| {
        if !quiet(state) {
            recorder.queue_released(queue, call, &DeviceAccess::new(state));
        }
        state.queues.remove(&queue);
    })?;
    forward.call();
    Ok(())
}

pub unsafe fn record_event(forward: &mut Forward<'_, CUresult>, call: &str, event: *mut c_void, stream: CUstream) -> Recorded {
    if !succeeded(forward) {
        return Ok(());
    }
    let queue = stream_key(stream, call);
    with_recorder(|state, recorder| {
        if !state.capturing.contains(&queue) {
            ensure_queue(state, recorder, queue);
            recorder.record_event(key(event), queue);
        }
    })
}

pub unsafe fn record_event_with_flags(
    forward: &mut Forward<'_, CUresult>,
    call: &str,
    event: *mut c_void,
    stream: CUstream,
    _flags: c_uint,
) -> Recorded {
    unsafe { record_event(forward, call, event, stream) }
}

pub unsafe fn wait_event(forward: &mut Forward<'_, CUresult>, call: &str, stream: CUstream, event: *mut c_void, _flags: c_uint) -> Recorded {
    if !succeeded(forward) {
        return Ok(());
    }
    let queue = stream_key(stream, call);
    with_recorder(|state, recorder| {
        if !state.capturing.contains(&queue) {
            ensure_queue(state, recorder, queue);
            recorder.queue_waits(queue, key(event));
        }
    })
}

pub unsafe fn synchronize_stream(forward: &mut Forward<'_, CUresult>, call: &str, stream: CUstream) -> Recorded {
    let capturing = super::state::with_state(|state| state.capturing.contains(&stream_key(stream, call)));
    if succeeded(forward) && !capturing {
        end_window(call)?;
    }
    Ok(())
}

pub unsafe fn synchronize(forward: &mut Forward<'_, CUresult>, call: &str) -> Recorded {
    if succeeded(forward) {
        end_window(call)?;
    }
    Ok(())
}

pub unsafe fn synchronize_context(forward: &mut Forward<'_, CUresult>, call: &str, _context: CUcontext) -> Recorded {
    unsafe { synchronize(forward, call) }
}

pub unsafe fn synchronize_event(forward: &mut Forward<'_, CUresult>, call: &str, _event: *mut c_void) -> Recorded {
    if succeeded(forward) {
        end_window(call)?;
    }
    Ok(())
}

/// The program captures a stream into a graph of its own: the shim's calls must not touch the
/// stream (nor, in the global capture mode, synchronize anything) until the capture ends, so the
/// open window ends first and work on capturing streams passes through unrecorded.
pub unsafe fn begin_capture(forward: &mut Forward<'_, CUresult>, call: &str, stream: CUstream, _mode: c_int) -> Recorded {
    end_window(call)?;
    if succeeded(forward) {
        let queue = stream_key(stream, call);
        super::state::with_state(|state| state.capturing.insert(queue));
    }
    Ok(())
}

pub unsafe fn end_capture(forward: &mut Forward<'_, CUresult>, call: &str, stream: CUstream, _graph: *mut *mut c_void) -> Recorded {
    forward.call();
    // Failed or not, the capture is over.
    let queue = stream_key(stream, call);
    super::state::with_state(|state| state.capturing.remove(&queue));
    Ok(())
}

pub unsafe fn host_function(forward: &mut Forward<'_, CUresult>, call: &'static str, stream: CUstream, _function: HostFn, _data: *mut c_void) -> Recorded {
    let enqueued = Enqueued::new(call, stream);
    enqueue(forward, enqueued, |_| Vec::new(), |_| Ok(Command::HostTask(HostTaskKind::HostFunction)))
}

pub unsafe fn stream_callback(
    forward: &mut Forward<'_, CUresult>,
    call: &'static str,
    stream: CUstream,
    _callback: StreamCallback,
    _data: *mut c_void,
    _flags: c_uint,
) -> Recorded {
    let enqueued = Enqueued::new(call, stream);
    enqueue(forward, enqueued, |_| Vec::new(), |_| Ok(Command::HostTask(HostTaskKind::Callback)))
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

/// The program's own graph: its work is not recorded (reading its nodes is not implemented).
pub unsafe fn graph_launch(forward: &mut Forward<'_, CUresult>, call: &str, _graph: *mut c_void, stream: CUstream) -> Recorded {
    forward.call();
    let queue = stream_key(stream, call);
    with_recorder(|state, recorder| {
        if !state.capturing.contains(&queue) {
            recorder.partial(call, "the work of the program's own graphs is not recorded");
        }
    })
}
