//! Opening traces for the commands, with the messages a user needs when that fails.

use super::failure::Failure;
use replayer::validate::{validate, Problem};
use std::path::Path;
use trace_format::{Completeness, FormatError, TraceReader};

/// Opens a trace to stream it; a truncated one is read up to its last whole record, with a warning.
pub fn open(path: &Path) -> Result<TraceReader, Failure> {
    let reader = TraceReader::open(path).map_err(|error| unreadable(path, error))?;
    if let Completeness::Truncated { valid_bytes, reason } = reader.completeness() {
        eprintln!(
            "replayer: warning: {} is truncated ({reason}); using its first {valid_bytes} bytes",
            path.display()
        );
    }
    Ok(reader)
}

/// Why a trace cannot be read, found when it was opened or later, while it streamed by.
pub fn unreadable(path: &Path, error: FormatError) -> Failure {
    Failure::bad_input(format!(
        "cannot read trace {}: {error}\n  hint: give a trace written by the Reprise shim (LD_PRELOAD=libshim.so)",
        path.display()
    ))
}

/// Opens a trace and refuses it when `validate` finds problems (one more pass over it).
pub fn open_valid(path: &Path) -> Result<TraceReader, Failure> {
    let reader = open(path)?;
    let problems = validate(&reader).map_err(|error| unreadable(path, error))?;
    refuse_problems(path, &problems)?;
    Ok(reader)
}

/// Refuses a trace with problems.
pub fn refuse_problems(path: &Path, problems: &[Problem]) -> Result<(), Failure> {
    if problems.is_empty() {
        return Ok(());
    }
    let listed: Vec<String> = problems.iter().map(|p| format!("  {p}")).collect();
    Err(Failure::bad_input(format!(
        "{} has {} problem(s):\n{}\n  hint: the trace is damaged or was written by a faulty recorder; record it again",
        path.display(),
        problems.len(),
        listed.join("\n")
    )))
}
