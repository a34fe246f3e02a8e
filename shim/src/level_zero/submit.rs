//! Submitting recorded work to the recorder: a command of an immediate list, or an execution of
//! a regular list (a sub-graph, one instance of the list per execution) on a command queue.
//!
//! A submission waiting for an event that nothing has signalled yet is parked, with everything
//! its queue submits after it, until a later submission or the host signals the event: Level
//! Zero lets a list wait on the device for work submitted later (to another queue), and the
//! recorder resolves waits when a command is submitted.

use super::access::DeviceAccess;
use super::state::State;
use crate::recorder::{HostRegion, Key, Order, Prepared, Recorder, Submission, SyncScope};
use trace_format::Command;

/// Recorded work, as `Recorder::submit` takes it.
pub struct Work {
    pub call: &'static str,
    pub command: Command,
    pub order: Order,
    pub waits: Vec<Key>,
    /// The event (or fence) that stands for this work.
    pub signal: Option<Key>,
    /// Host memory the program receives data in.
    pub received: Option<HostRegion>,
    /// What the work does to further events once it ran (a list's signals and resets).
    pub event_effects: Vec<(Key, bool)>,
}

pub struct Parked {
    prepared: Prepared,
    work: Work,
}

/// Submits `work` (prepared before its real call) to `queue`, or parks it; then what waited for
/// events this submission signals.
pub fn submit(
    state: &mut State,
    recorder: &mut Recorder,
    queue: Key,
    prepared: Prepared,
    work: Work,
) {
    let unsignalled = work
        .waits
        .iter()
        .any(|event| state.events.get(event) == Some(&false));
    let queue_parked = state
        .parked
        .get(&queue)
        .is_some_and(|parked| !parked.is_empty());
    if unsignalled || queue_parked {
        state
            .parked
            .entry(queue)
            .or_default()
            .push_back(Parked { prepared, work });
        return;
    }
    submit_now(state, recorder, queue, prepared, work);
    unpark(state, recorder);
}

/// Submits what waited for events that are now signalled, queue by queue in order.
pub fn unpark(state: &mut State, recorder: &mut Recorder) {
    loop {
        let ready = state.parked.iter().find_map(|(&queue, parked)| {
            let head = parked.front()?;
            head.work
                .waits
                .iter()
                .all(|event| state.events.get(event) != Some(&false))
                .then_some(queue)
        });
        let Some(queue) = ready else { return };
        let Some(Parked { prepared, work }) = state
            .parked
            .get_mut(&queue)
            .and_then(|parked| parked.pop_front())
        else {
            return;
        };
        submit_now(state, recorder, queue, prepared, work);
    }
}

fn submit_now(
    state: &mut State,
    recorder: &mut Recorder,
    queue: Key,
    prepared: Prepared,
    work: Work,
) {
    let Work {
        call,
        command,
        order,
        waits,
        signal,
        received,
        event_effects,
    } = work;
    let submission = Submission {
        call,
        queue: Some(queue),
        order,
        waits: &waits,
        signals: signal,
        received,
        host_ordered: false,
    };
    recorder.submit(prepared, submission, |_| command);
    if let Some(event) = signal.filter(|event| state.events.contains_key(event)) {
        state.events.insert(event, true);
    }
    for (event, signalled) in event_effects {
        if signalled {
            // Queues run their submissions in order: the event stands for this one.
            recorder.record_event(event, queue);
        }
        state.events.insert(event, signalled);
    }
    if state
        .queues
        .get(&queue)
        .is_some_and(|queue| queue.synchronous)
    {
        recorder.host_sync(call, SyncScope::Queues(&[queue]), &DeviceAccess::new(state));
    }
}
