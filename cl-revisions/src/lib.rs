//! OpenCL extension layouts of revisions that the current headers (and so `opencl-sys`) no
//! longer describe: the shim follows programs written against them, and the replayer drives
//! devices that only have them.

use opencl_sys::{cl_mutable_dispatch_config_khr, cl_uint};
use std::ffi::c_void;

/// `cl_mutable_base_config_khr` of `cl_khr_command_buffer_mutable_dispatch` before 0.9.2: one
/// base config chaining the dispatch configs.
#[repr(C)]
pub struct ChainedBaseConfig {
    pub kind: cl_uint,
    pub next: *const c_void,
    pub num_mutable_dispatch: cl_uint,
    pub mutable_dispatch_list: *const ChainedDispatchConfig,
}

/// `cl_mutable_dispatch_config_khr` before 0.9.2: the later layout behind a structure type and
/// a `next` pointer.
#[repr(C)]
pub struct ChainedDispatchConfig {
    pub kind: cl_uint,
    pub next: *const c_void,
    pub config: cl_mutable_dispatch_config_khr,
}

/// The structure types of those revisions.
pub const CHAINED_BASE_CONFIG: cl_uint = 0;
pub const CHAINED_DISPATCH_CONFIG: cl_uint = 1;
