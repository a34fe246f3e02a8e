//! libshim.so: records the GPU work of unmodified programs.
//!
//! The API-agnostic core (`interpose`, `entry`, `config`, `recorder`, `session`, `writer`)
//! and one module per API, which exports the API's functions as hooks.

mod blob_preparers;
mod config;
mod host_writes;
pub mod cuda;
mod device_output;
mod entry;
mod failure;
mod fast_hash;
mod in_pieces;
mod interpose;
mod large_buffers;
mod level_zero;
mod log;
mod opencl;
mod recorder;
mod session;
mod writer;

/// The shim's own allocations (argument bytes, nodes, records: several per launch) go to a
/// thread-caching allocator of its own, apart from the program's `malloc`: glibc's spent a
/// quarter of the recording threads' time (`perf`, BENCHMARKS.md), and the writer thread frees
/// what the program's threads allocated.
#[global_allocator]
static ALLOCATOR: mi_alloc::MiAlloc = mi_alloc::MiAlloc;

/// Every API's hooks, for the exported `dlsym` to hand out.
static HOOK_TABLES: [&[&interpose::Hook]; 3] = [opencl::HOOKS, cuda::HOOKS, level_zero::HOOKS];

fn hook_tables() -> &'static [&'static [&'static interpose::Hook]] {
    &HOOK_TABLES
}
