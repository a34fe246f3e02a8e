//! Level Zero: every function of the API hooked from its one description (`hooks`, derived from
//! `ze_sys::ze_api!`: exported names, the loader's dispatch tables, extension functions), which
//! of them the shim records (`recording`), and what it keeps about Level Zero objects (`state`).
//! Written against the Level Zero specification (1.4, and the extensions of later ones it
//! names): any driver the loader finds will do.
//!
//! How Level Zero maps onto the recorder: an immediate list is a queue whose commands are
//! submitted as appended; a regular list is a graph built as appended, submitted whole as a
//! sub-graph node of its command queue at each execution; events and fences are the recorder's
//! events; USM allocations are addressable memory, so pointers in kernel arguments are relocated.

mod access;
mod commands;
mod execute;
mod hooks;
mod kernels;
mod lists;
mod memory;
mod modules;
mod mutable;
mod queues;
mod recording;
mod state;
mod submit;
mod sync;

pub use hooks::HOOKS;
pub use sync::end_of_program;

use crate::entry::Forward;
use crate::failure::{Failure, Recorded};
use ze_sys::{ze_result_t, ZE_RESULT_SUCCESS};

/// Runs the real function and tells whether it succeeded.
fn succeeded(forward: &mut Forward<'_, ze_result_t>) -> bool {
    forward.call() == ZE_RESULT_SUCCESS
}

/// A call whose work the shim does not record: it goes through and the trace is marked partial.
fn unsupported(forward: &mut Forward<'_, ze_result_t>, call: &str, reason: &str) -> Recorded {
    if succeeded(forward) {
        state::with_recorder(|_, recorder| recorder.partial(call, reason))?;
    }
    Ok(())
}

/// A Level Zero handle or pointer as the recorder's key.
fn key<T>(handle: *const T) -> crate::recorder::Key {
    handle as usize as u64
}
