//! What the shim keeps about Level Zero objects beyond what the recorder holds: allocations (to
//! read them back), kernels' arguments and group sizes as last set (Level Zero cannot report
//! them), queues, the regular lists being built, events' states, and submissions parked until
//! the events they wait for are signalled.

use super::kernels::KernelState;
use super::lists::RegularList;
use super::submit::Parked;
use super::Failure;
use crate::fast_hash::HashMap;
use crate::recorder::{Key, Recorder};
use crate::session;
use std::collections::VecDeque;
use std::sync::{Mutex, PoisonError};
use trace_format::{Api, MemKind};
use ze_sys::*;

/// A USM allocation: what reading it back needs.
#[derive(Clone)]
pub struct Allocation {
    pub context: ze_context_handle_t,
    /// Null for host allocations.
    pub device: ze_device_handle_t,
    pub kind: MemKind,
}

/// Where commands run: a command queue (regular lists execute on it) or an immediate list.
#[derive(Clone, Copy)]
pub struct Queue {
    /// `ZE_COMMAND_QUEUE_MODE_SYNCHRONOUS`: each submission is done when its call returns.
    pub synchronous: bool,
    pub immediate: bool,
}

#[derive(Default)]
pub struct State {
    pub allocations: HashMap<Key, Allocation>,
    pub kernels: HashMap<Key, KernelState>,
    pub queues: HashMap<Key, Queue>,
    /// Regular command lists, as appended so far.
    pub lists: HashMap<Key, RegularList>,
    /// Whether each event the program created is signalled, as far as submissions and the host
    /// say.
    pub events: HashMap<Key, bool>,
    /// Submissions waiting for an event nothing has signalled yet, by queue, in order.
    pub parked: HashMap<Key, VecDeque<Parked>>,
}

// The raw handles are only used on threads that hold the lock.
unsafe impl Send for State {}

static STATE: Mutex<Option<State>> = Mutex::new(None);

/// Runs `work` with the Level Zero state and the process's recorder (creating the trace on
/// first use). Lock order: this state, then the session.
pub fn with_recorder<R>(work: impl FnOnce(&mut State, &mut Recorder) -> R) -> Result<R, Failure> {
    let mut state = STATE.lock().unwrap_or_else(PoisonError::into_inner);
    let state = state.get_or_insert_with(State::default);
    Ok(session::with(Api::LevelZero, |recorder| {
        work(state, recorder)
    })?)
}

/// Runs `work` with the Level Zero state only (tracking that needs no recorder).
pub fn with_state<R>(work: impl FnOnce(&mut State) -> R) -> R {
    let mut state = STATE.lock().unwrap_or_else(PoisonError::into_inner);
    work(state.get_or_insert_with(State::default))
}
