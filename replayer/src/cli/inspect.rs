//! The commands that read traces without running them: info, dot, validate, diff.

use super::failure::{Exit, Failure};
use super::load::{open, open_valid, unreadable};
use clap::{Args, ValueEnum};
use replayer::diff::diff_traces;
use replayer::dot::{write_dot, DotError};
use replayer::hazards::{Hazard, HazardFinder};
use replayer::info::trace_info;
use replayer::validate::validate as find_problems;
use std::io::Write;
use std::path::{Path, PathBuf};
use std::process::{Command, ExitCode, Stdio};
use trace_format::{FormatError, TraceReader};

pub fn info(path: &Path, json: bool) -> Result<ExitCode, Failure> {
    let info = trace_info(&open(path)?).map_err(|error| unreadable(path, error))?;
    if json {
        print_json(&info)?;
    } else {
        print!("{info}");
    }
    Ok(ExitCode::SUCCESS)
}

/// How many hazards `validate` lists (it counts them all).
const HAZARDS_SHOWN: usize = 20;

/// The trace's first `HAZARDS_SHOWN` hazards (`replayer::hazards`) and how many it has, one
/// segment at a time.
fn find_hazards(reader: &TraceReader) -> Result<(Vec<Hazard>, usize), FormatError> {
    let finder = HazardFinder::new(reader.objects());
    let (mut shown, mut count) = (Vec::new(), 0);
    reader.for_each_segment(|segment| {
        for hazard in finder.segment(&segment) {
            count += 1;
            if shown.len() < HAZARDS_SHOWN {
                shown.push(hazard);
            }
        }
        Ok::<(), FormatError>(())
    })?;
    Ok((shown, count))
}

pub fn validate(path: &Path) -> Result<ExitCode, Failure> {
    let reader = open(path)?;
    let problems = find_problems(&reader).map_err(|error| unreadable(path, error))?;
    if problems.is_empty() {
        println!(
            "{}: valid ({} nodes, {} edges, {} segments)",
            path.display(),
            reader.node_count(),
            reader.edge_count(),
            reader.segment_count()
        );
        let (shown, count) = find_hazards(&reader).map_err(|error| unreadable(path, error))?;
        for hazard in &shown {
            println!("hazard: {hazard}");
        }
        if count > 0 {
            println!(
                "{count} hazard(s){}: nothing orders these nodes, and one writes what the other uses; the program's result depended on an order it did not ask for, and a replay may run them in either order or at once",
                if count > shown.len() { format!(", the first {} shown", shown.len()) } else { String::new() }
            );
        }
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
    let (reader_a, reader_b) = (open_valid(a)?, open_valid(b)?);
    let diff = diff_traces(&reader_a, &reader_b).map_err(|error| Failure::bad_input(format!("cannot read data of a trace: {error}")))?;
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
    let reader = open(&args.trace)?;
    let written = match (args.format, &args.output) {
        (DotFormat::Dot, Some(path)) => {
            let file = std::fs::File::create(path).map_err(|error| cannot_write(path, error))?;
            let mut out = std::io::BufWriter::new(file);
            write_dot(&reader, args.verbose, &mut out).and_then(|()| out.flush().map_err(DotError::Output))
        }
        (DotFormat::Dot, None) => {
            let mut out = std::io::BufWriter::new(std::io::stdout().lock());
            write_dot(&reader, args.verbose, &mut out).and_then(|()| out.flush().map_err(DotError::Output))
        }
        (DotFormat::Svg, output) => return render_svg(&reader, args, output.as_deref()),
    };
    match written {
        Ok(()) => Ok(ExitCode::SUCCESS),
        Err(DotError::Trace(error)) => Err(unreadable(&args.trace, error)),
        Err(DotError::Output(error)) => Err(match &args.output {
            Some(path) => cannot_write(path, error),
            None => Failure::bad_input(format!("cannot write to standard output: {error}")),
        }),
    }
}

fn cannot_write(path: &Path, error: std::io::Error) -> Failure {
    Failure::bad_input(format!("cannot write {}: {error}", path.display()))
}

/// Streams the graph into Graphviz `dot -Tsvg` and writes its SVG to `output` (standard
/// output when `None`).
fn render_svg(reader: &TraceReader, args: &DotArgs, output: Option<&Path>) -> Result<ExitCode, Failure> {
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
    let mut stdin = child.stdin.take().expect("piped");
    // Graphviz's output is collected while the graph is written to it.
    let rendering = std::thread::spawn(move || child.wait_with_output());
    let written = write_dot(reader, args.verbose, &mut stdin);
    drop(stdin);
    let output_of_dot = rendering
        .join()
        .map_err(|_| Failure::unavailable("Graphviz `dot` could not be waited for"))?
        .map_err(|error| Failure::unavailable(format!("Graphviz `dot` failed: {error}")))?;
    match written {
        Err(DotError::Trace(error)) => return Err(unreadable(&args.trace, error)),
        Err(DotError::Output(error)) if output_of_dot.status.success() => {
            return Err(Failure::unavailable(format!("cannot send the graph to Graphviz `dot`: {error}")))
        }
        _ => {}
    }
    if !output_of_dot.status.success() {
        return Err(Failure::unavailable(format!(
            "Graphviz `dot` failed ({}): {}",
            output_of_dot.status,
            String::from_utf8_lossy(&output_of_dot.stderr).trim()
        )));
    }
    match output {
        Some(path) => std::fs::write(path, &output_of_dot.stdout).map_err(|error| cannot_write(path, error))?,
        None => std::io::stdout()
            .write_all(&output_of_dot.stdout)
            .map_err(|error| Failure::bad_input(format!("cannot write to standard output: {error}")))?,
    }
    Ok(ExitCode::SUCCESS)
}

pub fn print_json(value: &impl serde::Serialize) -> Result<(), Failure> {
    let text = serde_json::to_string_pretty(value)
        .map_err(|error| Failure::bad_input(format!("cannot encode the report as JSON: {error}")))?;
    println!("{text}");
    Ok(())
}
