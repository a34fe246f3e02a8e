//! OpenCL: the hooks (`hooks`), what the shim tracks about OpenCL objects (`state`), and how it
//! reads device memory with its own calls (`access`). Every hook forwards to the function the
//! program would have called: the loader's (found as `interpose::Hook` says) or, for programs
//! whose loader is private, through the ICD dispatch table every OpenCL object starts with.

// Recording functions take the arguments of the C functions they record.
#![allow(clippy::too_many_arguments)]

mod access;
mod command_buffer_images;
mod command_buffers;
mod commands;
mod dispatch;
mod extensions;
mod hooks;
mod images;
mod info;
mod memory;
mod mutable_dispatch;
mod programs;
mod queues;
mod references;
mod samplers;
mod signature;
mod state;
mod sync;
mod unified_memory;

pub use sync::end_of_program;

pub use hooks::HOOKS;

use crate::entry::Forward;
use opencl_sys::{cl_int, CL_INVALID_OPERATION, CL_SUCCESS};

use crate::failure::{Failure, Recorded};

type ContextNotify = Option<unsafe extern "C" fn(*const std::ffi::c_char, *const std::ffi::c_void, usize, *mut std::ffi::c_void)>;
type ProgramNotify = Option<unsafe extern "C" fn(opencl_sys::cl_program, *mut std::ffi::c_void)>;
type EventNotify = Option<unsafe extern "C" fn(opencl_sys::cl_event, cl_int, *mut std::ffi::c_void)>;
type SvmFreeNotify = Option<unsafe extern "C" fn(opencl_sys::cl_command_queue, opencl_sys::cl_uint, *mut *mut std::ffi::c_void, *mut std::ffi::c_void)>;

/// What a hook returns when no real function exists anywhere in the process (a program that
/// links OpenCL always has one, so this only guards against a broken installation).
trait NotFound {
    fn not_found() -> Self;
}

impl NotFound for cl_int {
    fn not_found() -> cl_int {
        CL_INVALID_OPERATION
    }
}

impl NotFound for () {
    fn not_found() {}
}

impl<T> NotFound for *mut T {
    fn not_found() -> *mut T {
        std::ptr::null_mut()
    }
}

/// Runs the real function and tells whether it succeeded.
fn succeeded(forward: &mut Forward<'_, cl_int>) -> bool {
    forward.call() == CL_SUCCESS
}

/// For a function returning an object with an `errcode_ret` argument: runs it and returns the
/// object if it succeeded.
unsafe fn created<T>(forward: &mut Forward<'_, *mut T>, errcode_ret: *mut cl_int) -> Option<*mut T> {
    let object = forward.call();
    // SAFETY: errcode_ret is the program's out-argument, written by the real function.
    let ok = errcode_ret.is_null() || unsafe { *errcode_ret } == CL_SUCCESS;
    (ok && !object.is_null()).then_some(object)
}

/// A call whose work the shim does not record: it goes through and the trace is marked partial.
fn unsupported<R: Copy>(forward: &mut Forward<'_, R>, call: &str) -> Recorded {
    forward.call();
    state::with_recorder(|_, recorder| recorder.partial(call, "its work is not recorded"))
}

/// An OpenCL handle or pointer as the recorder's key.
fn key<T>(handle: *mut T) -> crate::recorder::Key {
    handle as usize as u64
}
