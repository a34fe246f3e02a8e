//! `replayer`: inspect, check, compare and replay Reprise traces.

mod cli;

fn main() -> std::process::ExitCode {
    cli::main()
}
