//! Work submitted to a stream (and host functions run in stream order): prepared before the real call (initial memory contents), recorded
//! after it succeeded; passed through unrecorded while the program captures streams itself.

use super::access::DeviceAccess;
use super::state::{with_recorder, State};
use super::hooks::{HostFn, StreamCallback};
use super::streams::{ensure_queue, stream_key};
use super::sync::closed;
use super::{succeeded, CUresult, CUstream, Recorded};
use crate::entry::Forward;
use crate::session;
use crate::recorder::{Access, Accesses, HostRegion, Key, Order, Recorder, Submission};
use std::ffi::{c_uint, c_void};
use trace_format::{Command, HostTaskKind, Place};

/// How a command was submitted.
pub struct Enqueued {
    call: &'static str,
    stream: CUstream,
    /// A synchronous copy to the host: a host synchronization.
    blocking: bool,
    /// The command of a call without a stream, which the program treats as done on return.
    synchronous: bool,
    received: Option<HostRegion>,
    /// Events the command waits for (a graph's event wait nodes).
    waits: Vec<Key>,
}

impl Enqueued {
    pub fn new(call: &'static str, stream: CUstream) -> Enqueued {
        Enqueued { call, stream, blocking: false, synchronous: false, received: None, waits: Vec::new() }
    }

    /// A command of a synchronous call: on the default stream its variant names.
    pub fn on_default_stream(call: &'static str) -> Enqueued {
        Enqueued { synchronous: true, ..Enqueued::new(call, std::ptr::null_mut()) }
    }

    pub fn call(&self) -> &'static str {
        self.call
    }

    pub fn blocking(self) -> Enqueued {
        Enqueued { blocking: true, ..self }
    }

    pub fn receiving(self, address: *const std::ffi::c_void, len: usize) -> Enqueued {
        Enqueued { received: Some(HostRegion { address: address as usize, len }), ..self }
    }

    pub fn waiting(self, events: Vec<Key>) -> Enqueued {
        Enqueued { waits: events, ..self }
    }
}

pub const UNTRACKED_MEMORY: &str = "it names device memory the shim did not see allocated";

/// `UNTRACKED_MEMORY`, with the address logged for whoever looks for its allocation.
pub fn untracked(address: u64) -> &'static str {
    crate::log::debug!("{address:#x}: {UNTRACKED_MEMORY}");
    UNTRACKED_MEMORY
}

/// Records a command: `accesses` says which memory it uses, `build` what it does (a barrier,
/// and the trace marked partial with the reason `build` gives, when it cannot be described).
pub fn enqueue(
    forward: &mut Forward<'_, CUresult>,
    enqueued: Enqueued,
    accesses: impl FnOnce(&mut Recorder) -> Vec<Access>,
    build: impl FnOnce(&mut Recorder) -> Result<Command, &'static str>,
) -> Recorded {
    enqueue_described(forward, enqueued, |_, recorder| (accesses(recorder).into(), ()), |recorder, ()| build(recorder))
}

/// `enqueue` for a command whose description is worked out, under the same lock, before the
/// real call: `describe` gives its accesses and what `build` needs later (a launch's decoded
/// parameters); neither runs outside the capture range.
pub fn enqueue_described<D>(
    forward: &mut Forward<'_, CUresult>,
    enqueued: Enqueued,
    describe: impl FnOnce(&mut State, &mut Recorder) -> (Accesses, D),
    build: impl FnOnce(&mut Recorder, D) -> Result<Command, &'static str>,
) -> Recorded {
    if !session::commands_captured() {
        session::uncaptured_command();
        return Ok(());
    }
    let (call, queue) = (enqueued.call, stream_key(enqueued.stream, enqueued.call));
    let prepared = with_recorder(|state, recorder| {
        if state.capturing.contains_key(&queue) {
            return None;
        }
        ensure_queue(state, recorder, queue);
        // Outside the capture range nothing is snapshotted: the accesses are not needed.
        let (accesses, description) = match recorder.capturing() {
            true => {
                let (accesses, description) = describe(state, recorder);
                (accesses, Some(description))
            }
            false => (Accesses::new(), None),
        };
        // A variable's memory names its program, which the trace must then hold.
        super::modules::read_variable_images(state, recorder, &accesses);
        Some((recorder.prepare(accesses, &DeviceAccess::before_submission(state, queue)), description))
    })?;
    let Some((prepared, description)) = prepared else {
        forward.call();
        return Ok(());
    };
    if !succeeded(forward) {
        return Ok(());
    }
    let began = prepared.began();
    let blocked_on = with_recorder(|_, recorder| {
        let submission =
            Submission { call, queue: Some(queue), order: Order::Command, waits: &enqueued.waits, signals: None, received: enqueued.received, host_ordered: enqueued.synchronous };
        recorder.submit(prepared, submission, |recorder| {
            // A command is built only when prepared as captured, which described it.
            let command = description.ok_or("the capture began during the call").and_then(|description| build(recorder, description));
            command.unwrap_or_else(|reason| {
                recorder.partial(call, reason);
                Command::Barrier
            })
        });
        enqueued.blocking.then(|| recorder.blocking_command_waited(began, queue))
    })?;
    match blocked_on {
        Some(scope) => closed(call, scope),
        None => Ok(()),
    }
}

/// The place of a device pointer inside a tracked allocation.
pub fn device_place(recorder: &mut Recorder, pointer: u64) -> Result<Place, &'static str> {
    let (mem, offset) = locate_device(recorder, pointer).ok_or_else(|| untracked(pointer))?;
    let mem = recorder.mem_id(mem).ok_or_else(|| untracked(pointer))?;
    Ok(Place::Memory { mem, offset })
}

/// The tracked allocation holding device pointer `pointer` and the offset in it; device memory
/// allocated where the shim did not see it is adopted if the driver knows it (`memory::adopt`).
pub fn locate_device(recorder: &mut Recorder, pointer: u64) -> Option<(Key, u64)> {
    match recorder.locate(pointer) {
        // One past the end of an allocation may be the start of the next, unseen one (memory
        // pools place allocations back to back): the driver says which.
        Some((mem, offset)) if recorder.memory_size(mem) == Some(offset) => super::memory::adopt(recorder, pointer).or(Some((mem, offset))),
        Some(found) => Some(found),
        None => super::memory::adopt(recorder, pointer),
    }
}

/// The use of the tracked allocation holding `pointer`, if any.
pub fn device_access(recorder: &mut Recorder, pointer: u64, write: bool) -> Option<Access> {
    locate_device(recorder, pointer).map(|(mem, _)| Access { mem, write, overwrites: false })
}

/// A write of `bytes` at `pointer` into a tracked allocation, which it may cover whole.
pub fn device_write(recorder: &mut Recorder, pointer: u64, bytes: u64) -> Option<Access> {
    let (mem, offset) = locate_device(recorder, pointer)?;
    Some(Access { mem, write: true, overwrites: recorder.covers_whole(mem, offset, bytes) })
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
