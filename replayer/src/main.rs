//! `replayer`: inspect, check, compare and replay Reprise traces.

mod cli;

fn main() -> std::process::ExitCode {
    // Rust ignores SIGPIPE, so printing into a closed pipe (`replayer info T | head`) would panic;
    // ending quietly, as other command-line tools do, is what a user expects.
    // SAFETY: restoring the default disposition of a signal before any thread starts.
    unsafe { libc::signal(libc::SIGPIPE, libc::SIG_DFL) };
    cli::main()
}
