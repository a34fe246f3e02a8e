//! Host synchronizations (each closes what it waited for as a window) and the states of events
//! and fences the host sees or sets.

use super::access::DeviceAccess;
use super::hooks::args;
use super::state::with_recorder;
use super::submit::unpark;
use super::{key, succeeded, Recorded};
use crate::entry::Forward;
use crate::session;
use crate::recorder::{Key, SyncScope};
use trace_format::Api;
use ze_sys::*;

/// The host waits for the work `scope` covers, taken as the wait begins (work other threads
/// submit while it waits is not covered): it closes as a window.
fn closed(forward: &mut Forward<'_, ze_result_t>, call: &str, scope: SyncScope<'_>) -> Recorded {
    let scope = session::wait_begins(Api::LevelZero, scope)?;
    // A timeout (`ZE_RESULT_NOT_READY`) waited for nothing.
    if succeeded(forward) {
        with_recorder(|state, recorder| {
            recorder.host_sync(call, scope, &DeviceAccess::new(state))
        })?;
    }
    Ok(())
}

pub unsafe fn queue_synchronize(
    forward: &mut Forward<'_, ze_result_t>,
    (queue, _timeout): args::zeCommandQueueSynchronize,
) -> Recorded {
    closed(
        forward,
        "zeCommandQueueSynchronize",
        SyncScope::Queues(&[key(queue)]),
    )
}

pub unsafe fn event_synchronize(
    forward: &mut Forward<'_, ze_result_t>,
    (event, _timeout): args::zeEventHostSynchronize,
) -> Recorded {
    closed(
        forward,
        "zeEventHostSynchronize",
        SyncScope::Events(&[key(event)]),
    )
}

/// A query that finds the event signalled tells the host its work is done.
pub unsafe fn event_query(
    forward: &mut Forward<'_, ze_result_t>,
    (event,): args::zeEventQueryStatus,
) -> Recorded {
    closed(
        forward,
        "zeEventQueryStatus",
        SyncScope::Events(&[key(event)]),
    )
}

/// A fence stands for the execution it was passed with.
pub unsafe fn fence_synchronize(
    forward: &mut Forward<'_, ze_result_t>,
    (fence, _timeout): args::zeFenceHostSynchronize,
) -> Recorded {
    closed(
        forward,
        "zeFenceHostSynchronize",
        SyncScope::Events(&[key(fence)]),
    )
}

pub unsafe fn fence_query(
    forward: &mut Forward<'_, ze_result_t>,
    (fence,): args::zeFenceQueryStatus,
) -> Recorded {
    closed(
        forward,
        "zeFenceQueryStatus",
        SyncScope::Events(&[key(fence)]),
    )
}

/// Sets the host's view of `event` once the call succeeded; a signal lets what waited for it go.
fn event_state(forward: &mut Forward<'_, ze_result_t>, event: Key, signalled: bool) -> Recorded {
    if succeeded(forward) {
        with_recorder(|state, recorder| {
            state.events.insert(event, signalled);
            if signalled {
                unpark(state, recorder);
            }
        })?;
    }
    Ok(())
}

pub unsafe fn event_create(
    forward: &mut Forward<'_, ze_result_t>,
    (_pool, _desc, event): args::zeEventCreate,
) -> Recorded {
    match succeeded(forward) && !event.is_null() {
        // SAFETY: the creation succeeded, so it wrote the event.
        true => event_state(forward, key(unsafe { *event }), false),
        false => Ok(()),
    }
}

pub unsafe fn event_destroy(
    forward: &mut Forward<'_, ze_result_t>,
    (event,): args::zeEventDestroy,
) -> Recorded {
    if succeeded(forward) {
        with_recorder(|state, _| state.events.remove(&key(event)))?;
    }
    Ok(())
}

pub unsafe fn event_host_signal(
    forward: &mut Forward<'_, ze_result_t>,
    (event,): args::zeEventHostSignal,
) -> Recorded {
    event_state(forward, key(event), true)
}

pub unsafe fn event_host_reset(
    forward: &mut Forward<'_, ze_result_t>,
    (event,): args::zeEventHostReset,
) -> Recorded {
    event_state(forward, key(event), false)
}

/// The program is exiting: the final contents of what the capture wrote are read while the
/// driver still answers.
pub fn end_of_program() {
    // Failing here only loses the final contents; the trace is completed either way.
    let _ = with_recorder(|state, recorder| {
        let parked: usize = state.parked.values().map(|parked| parked.len()).sum();
        if parked > 0 {
            recorder.partial(
                "end of program",
                &format!(
                    "{parked} submissions waited for events never signalled; they are left out"
                ),
            );
        }
        recorder.end_of_program(Some(&DeviceAccess::new(state)));
    });
}
