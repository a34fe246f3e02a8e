//! What the shim keeps about CUDA objects beyond what the recorder holds: the streams it has
//! described to the recorder, kernel parameter layouts, library kernels' names, streams the
//! program is capturing, and the streams of stream-ordered allocations.

use super::graphs::{Condition, CreatedConditional, ExecGraph};
use super::launch_log;
use super::Failure;
use crate::recorder::{Key, Recorder};
use crate::session;
use std::collections::BTreeMap;
use crate::fast_hash::{HashMap, HashSet};
use std::sync::{Mutex, PoisonError};
use trace_format::Api;

/// A kernel's parameters: (offset, size) of each in the packed parameter buffer (shared:
/// each launch takes it).
pub type Layout = std::sync::Arc<[(u32, u32)]>;

#[derive(Default)]
pub struct State {
    /// Streams (by key, see `streams::stream_key`) the recorder has a description of.
    pub queues: HashSet<Key>,
    /// Streams the program destroyed (until a new stream gets the handle): never waited for.
    pub destroyed: HashSet<Key>,
    /// Each launched function's parameters; `None` when the driver could not say.
    pub layouts: HashMap<Key, Option<Layout>>,
    /// Library kernels: their library and name, for the functions `cuKernelGetFunction` gives.
    pub kernels: HashMap<Key, (Key, String)>,
    /// Streams the program is capturing into a graph of its own (begun there, or joined through
    /// an event), each with the driver's id of its capture.
    pub capturing: HashMap<Key, u64>,
    /// Stream-ordered allocations and the stream (key) that allocated each.
    pub ordered_allocations: HashMap<Key, Key>,
    /// Tracked memory (by key) and the context (key) it lives in: destroying the context frees it.
    pub memory_contexts: HashMap<Key, Key>,
    /// Each device's primary context (by device key) and how often the program retained it.
    pub primary_contexts: HashMap<Key, (Key, u32)>,
    /// Ranges mapped with `cuMemMap` (start, size), tracked as allocations until unmapped.
    pub mappings: BTreeMap<Key, u64>,
    /// Module and library variables (by address) and their program, whose image may still be
    /// unread (see `unread_images`).
    pub variables: HashMap<Key, Key>,
    /// The same variables by program: its kernels may use them without being passed a pointer.
    pub program_variables: HashMap<Key, Vec<Key>>,
    /// Devices already described to the recorder.
    pub devices: HashSet<Key>,
    /// Programs whose image lies in a loaded library's or the program's own data (what the CUDA
    /// runtime registers), copied only once one of their kernels is launched: PyTorch registers
    /// hundreds of large fatbins and launches from few.
    pub unread_images: HashMap<Key, UnreadImage>,
    /// The program's executable graphs, as read when instantiated.
    pub graph_execs: HashMap<Key, ExecGraph>,
    /// Conditional nodes the program created, which the driver cannot report.
    pub conditional_nodes: HashMap<Key, CreatedConditional>,
    /// Conditions the program created (by handle).
    pub conditions: HashMap<u64, Condition>,
    /// The trace's number for each event a graph node names.
    pub event_numbers: HashMap<Key, u32>,
    /// Arrays by handle (see `arrays`), and their handles by the address the recorder knows each by.
    pub arrays: super::arrays::Arrays,
    pub array_at: HashMap<Key, usize>,
    /// Arrays created so far, which numbers their addresses.
    pub array_count: u64,
    /// Words of structures passed by value that the driver placed in no allocation the shim
    /// could adopt: not asked about again (see `launches::adopt_embedded_pointers`).
    pub not_allocations: HashSet<u64>,
}

/// A module image still where the program keeps it.
pub struct UnreadImage {
    pub kind: trace_format::ImageKind,
    pub address: usize,
    pub len: usize,
}

static STATE: Mutex<Option<State>> = Mutex::new(None);

/// Runs `work` with the CUDA state and the process's recorder (creating the trace on first
/// use). Lock order: this state, then the session.
pub fn with_recorder<R>(work: impl FnOnce(&mut State, &mut Recorder) -> R) -> Result<R, Failure> {
    let mut state = STATE.lock().unwrap_or_else(PoisonError::into_inner);
    let state = state.get_or_insert_with(State::default);
    Ok(session::with(Api::Cuda, |recorder| {
        let before = (recorder.objects_changed(), recorder.capturing());
        // Launches logged without the lock come first: they returned before this hook took it.
        launch_log::record_logged(state, recorder);
        let result = work(state, recorder);
        if (recorder.objects_changed(), recorder.capturing()) != before {
            launch_log::invalidate();
        }
        result
    })?)
}

/// Runs `work` with the CUDA state only.
pub fn with_state<R>(work: impl FnOnce(&mut State) -> R) -> R {
    let mut state = STATE.lock().unwrap_or_else(PoisonError::into_inner);
    work(state.get_or_insert_with(State::default))
}
