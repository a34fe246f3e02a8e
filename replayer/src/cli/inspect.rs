//! The commands that read traces without running them: info, dot, validate, diff.

use super::failure::{Exit, Failure};
use super::load::{load, load_valid};
use clap::{Args, ValueEnum};
use replayer::diff::{diff_traces, Side};
use replayer::dot::to_dot;
use replayer::info::trace_info;
use replayer::validate::validate as find_problems;
use std::io::Write;
use std::path::{Path, PathBuf};
use std::process::{Command, ExitCode, Stdio};

pub fn info(path: &Path, json: bool) -> Result<ExitCode, Failure> {
    let info = trace_info(&load(path)?);
    if json {
        print_json(&info)?;
    } else {
        print!("{info}");
    }
    Ok(ExitCode::SUCCESS)
}

pub fn validate(path: &Path) -> Result<ExitCode, Failure> {
    let file = load(path)?;
    let problems = find_problems(&file.trace, &file.blobs);
    if problems.is_empty() {
        let trace = &file.trace;
        println!(
            "{}: valid ({} nodes, {} edges, {} segments)",
            path.display(),
            trace.nodes.len(),
            trace.edges.len(),
            trace.segments.len()
        );
        return Ok(ExitCode::SUCCESS);
    }
    for problem in &problems {
        eprintln!("{}: {problem}", path.display());
    }
    Err(Failure::bad_input(format!(
        "{} problem(s) found; the trace cannot be replayed. Record it again, or report the recorder's fault",
        problems.len()
    )))
}

pub fn diff(a: &Path, b: &Path, json: bool) -> Result<ExitCode, Failure> {
    let (file_a, file_b) = (load_valid(a)?, load_valid(b)?);
    let diff = diff_traces(
        Side { trace: &file_a.trace, blobs: &file_a.blobs },
        Side { trace: &file_b.trace, blobs: &file_b.blobs },
    )
    .map_err(|error| Failure::bad_input(format!("cannot read data of a trace: {error}")))?;
    if json {
        print_json(&diff)?;
    } else {
        print!("{diff}");
    }
    Ok(if diff.is_empty() { ExitCode::SUCCESS } else { Exit::Mismatch.into() })
}

#[derive(Clone, Copy, ValueEnum)]
pub enum DotFormat {
    Dot,
    Svg,
}

#[derive(Args)]
pub struct DotArgs {
    trace: PathBuf,
    /// Write to this file instead of standard output.
    #[arg(short, long)]
    output: Option<PathBuf>,
    /// Add arguments, launch sizes and copy sources and destinations.
    #[arg(long)]
    verbose: bool,
    /// `svg` runs Graphviz `dot`, which must be installed.
    #[arg(long, value_enum, default_value_t = DotFormat::Dot)]
    format: DotFormat,
}

pub fn dot(args: &DotArgs) -> Result<ExitCode, Failure> {
    let file = load(&args.trace)?;
    let text = to_dot(&file.trace, args.verbose);
    let bytes = match args.format {
        DotFormat::Dot => text.into_bytes(),
        DotFormat::Svg => render_svg(&text)?,
    };
    match &args.output {
        Some(path) => std::fs::write(path, bytes)
            .map_err(|error| Failure::bad_input(format!("cannot write {}: {error}", path.display())))?,
        None => std::io::stdout()
            .write_all(&bytes)
            .map_err(|error| Failure::bad_input(format!("cannot write to standard output: {error}")))?,
    }
    Ok(ExitCode::SUCCESS)
}

/// Runs Graphviz `dot -Tsvg` on `text`.
fn render_svg(text: &str) -> Result<Vec<u8>, Failure> {
    let mut child = Command::new("dot")
        .arg("-Tsvg")
        .stdin(Stdio::piped())
        .stdout(Stdio::piped())
        .stderr(Stdio::piped())
        .spawn()
        .map_err(|error| {
            Failure::unavailable(format!(
                "cannot run Graphviz `dot` ({error}); install Graphviz (`apt-get install graphviz`) or use --format dot"
            ))
        })?;
    if let Some(mut stdin) = child.stdin.take() {
        stdin
            .write_all(text.as_bytes())
            .map_err(|error| Failure::unavailable(format!("cannot send the graph to Graphviz `dot`: {error}")))?;
    }
    let output = child
        .wait_with_output()
        .map_err(|error| Failure::unavailable(format!("Graphviz `dot` failed: {error}")))?;
    if !output.status.success() {
        return Err(Failure::unavailable(format!(
            "Graphviz `dot` failed ({}): {}",
            output.status,
            String::from_utf8_lossy(&output.stderr).trim()
        )));
    }
    Ok(output.stdout)
}

pub fn print_json(value: &impl serde::Serialize) -> Result<(), Failure> {
    let text = serde_json::to_string_pretty(value)
        .map_err(|error| Failure::bad_input(format!("cannot encode the report as JSON: {error}")))?;
    println!("{text}");
    Ok(())
}
