//! Streams (the recorder's queues) and events.
//!
//! Stream keys: the legacy default stream is `LEGACY` in every context it is used in (its group
//! is the current context); each thread's per-thread default stream gets a key of its own, odd
//! enough never to be a handle; other streams are their handles.

use super::access::DeviceAccess;
use super::state::{with_recorder, State};
use super::access::wait_for;
use super::sync::quiet;
use super::{device, key, per_thread, succeeded, CUresult, CUstream, Recorded};
use crate::entry::Forward;
use crate::session;
use crate::recorder::{Key, QueueDesc, QueueSync, Recorder};
use std::ffi::{c_int, c_uint, c_void};

/// `CU_STREAM_LEGACY`: the legacy default stream, also what stream 0 means.
pub const LEGACY: Key = 0x1;
/// `CU_STREAM_PER_THREAD`: the calling thread's default stream.
pub const PER_THREAD: Key = 0x2;
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
        state.destroyed.remove(&queue);
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

pub unsafe fn destroy(forward: &mut Forward<'_, CUresult>, call: &str, stream: CUstream) -> Recorded {
    // The stream's pending work closes while the stream can still be waited for.
    let queue = key(stream);
    let (busy, capture_active) = with_recorder(|state, recorder| (recorder.queue_busy(queue), quiet(state)))?;
    if busy {
        wait_for(queue, capture_active);
    }
    with_recorder(|state, recorder| {
        recorder.queue_released(queue, call, &DeviceAccess::new(state));
        state.queues.remove(&queue);
        state.destroyed.insert(queue);
    })?;
    forward.call();
    Ok(())
}

pub unsafe fn record_event(forward: &mut Forward<'_, CUresult>, call: &str, event: *mut c_void, stream: CUstream) -> Recorded {
    if !succeeded(forward) || !session::commands_captured() {
        return Ok(());
    }
    let queue = stream_key(stream, call);
    with_recorder(|state, recorder| {
        if !state.capturing.contains_key(&queue) {
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
    if !succeeded(forward) || !session::commands_captured() {
        return Ok(());
    }
    let queue = stream_key(stream, call);
    // A wait for an event of a capture makes the stream join the capture.
    super::sync::maybe_joined(queue)?;
    with_recorder(|state, recorder| {
        if !state.capturing.contains_key(&queue) {
            ensure_queue(state, recorder, queue);
            recorder.queue_waits(queue, key(event));
        }
    })
}
