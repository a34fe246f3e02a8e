//! Enqueued commands: kernels, reads, writes, copies and fills (with their rectangular and image forms),
//! maps, SVM operations, markers and barriers. Each is prepared before the real call (initial
//! memory contents) and recorded after it succeeded.

pub mod images;
pub mod kernels;
pub mod maps;
pub mod ordering;
pub mod svm;
pub mod transfers;

use super::access::DeviceAccess;
use super::state::{with_recorder, State};
use super::{key, sync, Failure, Recorded};
use crate::session;
use crate::recorder::{Access, HostRegion, Key, Order, Prepared, Recorder, Submission, SyncScope};
use libc::size_t;
use opencl_sys::*;
use std::ffi::c_void;
use trace_format::{Command, Place};

/// How a command was enqueued.
pub(super) struct Enqueued {
    call: &'static str,
    queue: cl_command_queue,
    order: Order,
    /// The wait list as the program passed it (read once the call succeeded).
    waits: (cl_uint, *const cl_event),
    /// Where the program gets the command's event, or null.
    event: *mut cl_event,
    /// A blocking read, write or map: a host synchronization.
    blocking: bool,
    received: Option<HostRegion>,
}

impl Enqueued {
    pub(super) fn new(call: &'static str, queue: cl_command_queue, count: cl_uint, waits: *const cl_event, event: *mut cl_event) -> Enqueued {
        Enqueued { call, queue, order: Order::Command, waits: (count, waits), event, blocking: false, received: None }
    }

    fn ordered(self, order: Order) -> Enqueued {
        Enqueued { order, ..self }
    }

    fn blocking(self, blocking: cl_bool) -> Enqueued {
        Enqueued { blocking: blocking != CL_FALSE, ..self }
    }

    fn receiving(self, address: *const c_void, len: usize) -> Enqueued {
        Enqueued { received: Some(HostRegion { address: address as usize, len }), ..self }
    }
}

/// Before the real call: the initial contents of memory the command uses first in its capture.
/// Outside the capture nothing is taken (see `session::commands_captured`).
pub(super) fn prepare(accesses: impl FnOnce(&State, &Recorder) -> Vec<Access>) -> Result<Prepared, Failure> {
    if !session::commands_captured() {
        return Ok(Prepared::uncaptured());
    }
    with_recorder(|state, recorder| {
        // Outside the capture range nothing is snapshotted: the accesses are not needed.
        let accesses = if recorder.capturing() { accesses(state, recorder) } else { Vec::new() };
        recorder.prepare(accesses, &DeviceAccess::new(&state.memories))
    })
}

/// Outside the capture, a command that never blocks is only passed through and counted, before
/// the hook's entry (`#[pass_when_uncaptured]` in `hooks`): a launch-bound loop that is not
/// captured pays two atomic loads and a store per launch. `None`: the hook records the command.
#[inline(always)]
pub(in crate::opencl) fn pass_when_uncaptured(real: impl FnOnce() -> cl_int) -> Option<cl_int> {
    if session::commands_captured() {
        return None;
    }
    let result = real();
    if result == CL_SUCCESS {
        session::uncaptured_command();
    }
    Some(result)
}

/// After the real call succeeded: records the command `build` makes (a barrier, and the trace
/// marked partial with the reason `build` gives, when it cannot be described).
pub(super) unsafe fn record(
    prepared: Prepared,
    enqueued: Enqueued,
    build: impl FnOnce(&mut Recorder, &State) -> Result<Command, &'static str>,
) -> Recorded {
    let call = enqueued.call;
    let last_command = SyncScope::LastCommandOf(key(enqueued.queue));
    let blocked_on = match prepared.captures() {
        true => record_captured(prepared, &enqueued, build)?,
        false => {
            session::uncaptured_command();
            enqueued.blocking.then_some(last_command)
        }
    };
    match blocked_on {
        Some(scope) => sync::closed(call, scope),
        None => Ok(()),
    }
}

/// Records a captured command (see `record`); for a blocking one, what the host waited for.
unsafe fn record_captured(
    prepared: Prepared,
    enqueued: &Enqueued,
    build: impl FnOnce(&mut Recorder, &State) -> Result<Command, &'static str>,
) -> Result<Option<SyncScope<'static>>, Failure> {
    // SAFETY: the call succeeded, so the wait list held its events and a requested event
    // was written.
    let waits: Vec<Key> = match enqueued.waits {
        (_, list) if list.is_null() => Vec::new(),
        (count, list) => unsafe { std::slice::from_raw_parts(list, count as usize) }.iter().map(|&event| key(event)).collect(),
    };
    let signals = (!enqueued.event.is_null()).then(|| key(unsafe { *enqueued.event }));
    let call = enqueued.call;
    with_recorder(|state, recorder| {
        let submission = Submission {
            call,
            queue: Some(key(enqueued.queue)),
            order: enqueued.order,
            waits: &waits,
            signals,
            received: enqueued.received,
            // A call that returns with its command done blocks: a host synchronization closes it.
            host_ordered: false,
        };
        let began = prepared.began();
        recorder.submit(prepared, submission, |recorder| {
            build(recorder, state).unwrap_or_else(|reason| {
                recorder.partial(call, reason);
                Command::Barrier
            })
        });
        enqueued.blocking.then(|| recorder.blocking_command_waited(began, key(enqueued.queue)))
    })
}

pub(super) const UNKNOWN_MEMORY: &str = "it names memory the shim did not see created";

pub(super) fn memory(recorder: &mut Recorder, mem: Key, offset: u64) -> Result<Place, &'static str> {
    recorder.mem_id(mem).map(|mem| Place::Memory { mem, offset }).ok_or(UNKNOWN_MEMORY)
}

/// An SVM pointer's place: inside a known allocation, else host memory.
pub(super) fn svm_place(recorder: &mut Recorder, pointer: *const c_void) -> Option<Place> {
    let (mem, offset) = recorder.locate(pointer as usize as u64)?;
    recorder.mem_id(mem).map(|mem| Place::Memory { mem, offset })
}

/// `count` bytes of host memory the program passed.
pub(in crate::opencl) unsafe fn host_bytes(pointer: *const c_void, count: usize) -> Vec<u8> {
    // SAFETY: the program handed the API this memory for the command.
    unsafe { std::slice::from_raw_parts(pointer.cast::<u8>(), count) }.to_vec()
}

pub(in crate::opencl) unsafe fn triple(values: *const size_t) -> [u64; 3] {
    // SAFETY: rectangle arguments are arrays of three sizes.
    unsafe { [*values, *values.add(1), *values.add(2)] }.map(|value| value as u64)
}

