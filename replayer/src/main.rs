//! `replayer`: inspect, check, compare and replay Reprise traces.

mod cli;

/// A trace streams by as millions of small nodes, decoded on one thread and dropped on another:
/// glibc's allocator spends more time on those frees than on the work (see BENCHMARKS.md).
#[global_allocator]
static ALLOCATOR: mi_alloc::MiAlloc = mi_alloc::MiAlloc;

fn main() -> std::process::ExitCode {
    // Rust ignores SIGPIPE, so printing into a closed pipe (`replayer info T | head`) would panic;
    // ending quietly, as other command-line tools do, is what a user expects.
    // SAFETY: restoring the default disposition of a signal before any thread starts.
    unsafe { libc::signal(libc::SIGPIPE, libc::SIG_DFL) };
    cli::main()
}
