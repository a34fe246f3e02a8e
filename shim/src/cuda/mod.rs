//! CUDA driver API: the hooks (`hooks`, reached by name, through `dlsym` or through the wrappers
//! `cuGetProcAddress` hands out: `procaddress`), what the shim tracks about CUDA objects
//! (`state`), how it reads device memory with its own calls (`access`), and one file per kind
//! of call. Module images are read by `image`.

// Recording functions take the arguments of the C functions they record.
#![allow(clippy::too_many_arguments)]

mod access;
mod arrays;
mod commands;
mod contexts;
mod copies;
mod device;
mod graph_hooks;
mod graph_read;
mod graphs;
mod hooks;
pub mod image;
mod launch_log;
mod launch_memo;
mod launches;
mod mangled;
mod memory;
mod modules;
mod params;
mod procaddress;
mod rect;
mod state;
mod streams;
mod sync;
mod textures;

pub use sync::end_of_program;
#[cfg(test)]
mod tests;
#[cfg(test)]
mod graph_tests;
#[cfg(test)]
mod interception_tests;
#[cfg(test)]
mod image_tests;

pub use hooks::HOOKS;

use crate::entry::Forward;

pub type CUresult = u32;
pub type CUstream = *mut std::ffi::c_void;
pub type CUdeviceptr = u64;

pub const CUDA_SUCCESS: CUresult = 0;
/// What a hook returns when the driver has no such function (an installation without it).
pub const CUDA_ERROR_NOT_FOUND: CUresult = 500;

use crate::failure::{Failure, Recorded};

/// Runs the real function and tells whether it succeeded.
fn succeeded(forward: &mut Forward<'_, CUresult>) -> bool {
    forward.call() == CUDA_SUCCESS
}

/// A CUDA handle or pointer as the recorder's key.
fn key<T>(handle: *mut T) -> crate::recorder::Key {
    handle as usize as u64
}

/// Whether a hook is a per-thread-default-stream variant (`*_ptsz`, `*_ptds`), in which stream 0
/// is the calling thread's default stream rather than the legacy one.
fn per_thread(call: &str) -> bool {
    call.ends_with("_ptsz") || call.ends_with("_ptds")
}
