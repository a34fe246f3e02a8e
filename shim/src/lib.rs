//! libshim.so: records the GPU work of unmodified programs.
//!
//! The API-agnostic core (`interpose`, `entry`, `config`, `recorder`, `session`, `writer`)
//! and one module per API, which exports the API's functions as hooks.

mod config;
mod host_writes;
pub mod cuda;
mod device_output;
mod entry;
mod failure;
mod fast_hash;
mod interpose;
mod level_zero;
mod log;
mod opencl;
mod recorder;
mod session;
mod writer;

/// Every API's hooks, for the exported `dlsym` to hand out.
static HOOK_TABLES: [&[&interpose::Hook]; 3] = [opencl::HOOKS, cuda::HOOKS, level_zero::HOOKS];

fn hook_tables() -> &'static [&'static [&'static interpose::Hook]] {
    &HOOK_TABLES
}
