//! The command line: argument definitions and dispatch to one module per command.

mod devices;
mod failure;
mod inspect;
mod layout;
mod load;
mod progress;
mod replay;

use clap::{Parser, Subcommand};
use failure::Failure;
use std::path::PathBuf;
use std::process::ExitCode;

#[derive(Parser)]
#[command(name = "replayer", version, about = "Replays Reprise traces as native command buffers")]
struct Cli {
    #[command(subcommand)]
    command: Command,
}

#[derive(Subcommand)]
enum Command {
    /// What a trace holds: API, devices, nodes, edges, segments, families, memory, blobs.
    Info {
        trace: PathBuf,
        /// Machine-readable output.
        #[arg(long)]
        json: bool,
    },
    /// The trace's graph in Graphviz DOT (or SVG).
    Dot(inspect::DotArgs),
    /// Check that every reference resolves, every blob is present and the graph is acyclic.
    Validate { trace: PathBuf },
    /// Replay the trace, time it and compare its final memory with the recording.
    Replay(Box<replay::ReplayArgs>),
    /// Every device each API could replay on, with the indices `replay --device` takes.
    Devices {
        /// Machine-readable output.
        #[arg(long)]
        json: bool,
    },
    /// What differs between two recordings of the same program (exit 1 when anything does).
    Diff {
        a: PathBuf,
        b: PathBuf,
        /// Machine-readable output.
        #[arg(long)]
        json: bool,
    },
}

/// Runs the command line; usage errors exit with 2 (clap's own code for them).
pub fn main() -> ExitCode {
    let cli = Cli::parse();
    let outcome = match cli.command {
        Command::Info { trace, json } => inspect::info(&trace, json),
        Command::Dot(args) => inspect::dot(&args),
        Command::Validate { trace } => inspect::validate(&trace),
        Command::Replay(args) => replay::replay(&args),
        Command::Devices { json } => devices::devices(json),
        Command::Diff { a, b, json } => inspect::diff(&a, &b, json),
    };
    match outcome {
        Ok(code) => code,
        Err(Failure { exit, message }) => {
            eprintln!("replayer: error: {message}");
            exit.into()
        }
    }
}
