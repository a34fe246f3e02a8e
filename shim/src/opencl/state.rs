//! What the shim keeps about OpenCL objects beyond what the recorder holds: what it needs to
//! read memory back, each kernel's current arguments (OpenCL cannot report them), and the
//! regions the program has mapped.

use super::access::DeviceAccess;
use super::{Failure, Recorded};
use crate::recorder::{Key, Recorder};
use crate::session;
use opencl_sys::{cl_context, cl_device_id, cl_mem_flags};
use std::collections::HashMap;
use std::sync::{Mutex, PoisonError};
use trace_format::Api;

/// A memory object as the shim reads it: a `cl_mem` or an SVM allocation.
pub struct MemObject {
    pub context: cl_context,
    pub flags: cl_mem_flags,
    pub svm: bool,
}

/// What reading memory back needs: each memory object's context, and a device of each context.
#[derive(Default)]
pub struct Memories {
    pub objects: HashMap<Key, MemObject>,
    pub context_devices: HashMap<Key, cl_device_id>,
}

/// A kernel argument as the program last set it.
#[derive(Clone, Debug, PartialEq)]
pub enum ArgValue {
    /// `clSetKernelArg` with a value: the bytes.
    Bytes(Vec<u8>),
    /// `clSetKernelArg` with a null value: local memory of this size.
    Local(u64),
    /// `clSetKernelArgSVMPointer`.
    Svm(u64),
}

/// A region the program mapped, until it unmaps it.
#[derive(Clone, Copy, Debug)]
pub struct Mapping {
    pub mem: Key,
    pub offset: u64,
    pub size: u64,
    /// Mapped for writing: the unmap writes the region back.
    pub write: bool,
}

#[derive(Default)]
pub struct State {
    pub memories: Memories,
    /// Each kernel's arguments, by index.
    pub kernel_args: HashMap<Key, Vec<Option<ArgValue>>>,
    /// Mapped regions by the host address the program got.
    pub mappings: HashMap<usize, Mapping>,
    /// Options of programs compiled (not built), for the programs linked from them.
    pub compile_options: HashMap<Key, String>,
}

// The raw handles are only used on threads that hold the lock.
unsafe impl Send for State {}

static STATE: Mutex<Option<State>> = Mutex::new(None);

/// Runs `work` with the OpenCL state and the process's recorder (creating the trace on first
/// use). Lock order: this state, then the session.
pub fn with_recorder<R>(work: impl FnOnce(&mut State, &mut Recorder) -> R) -> Result<R, Failure> {
    let mut state = STATE.lock().unwrap_or_else(PoisonError::into_inner);
    let state = state.get_or_insert_with(State::default);
    Ok(session::with(Api::OpenCl, at_exit, |recorder| work(state, recorder))?)
}

/// Runs `work` with the OpenCL state only (tracking that needs no recorder).
pub fn with_state<R>(work: impl FnOnce(&mut State) -> R) -> R {
    let mut state = STATE.lock().unwrap_or_else(PoisonError::into_inner);
    work(state.get_or_insert_with(State::default))
}

/// The program is exiting: its open window ends with the memory as it is now.
fn at_exit() {
    let ended: Recorded = with_recorder(|state, recorder| recorder.end_of_program(&DeviceAccess::new(&state.memories)));
    if let Err(error) = ended {
        crate::log::warning!("at exit: {error}");
    }
}
