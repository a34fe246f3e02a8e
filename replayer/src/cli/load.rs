//! Reading traces for the commands, with the messages a user needs when that fails.

use super::failure::Failure;
use replayer::validate::validate;
use std::path::Path;
use trace_format::{read_trace, Completeness, TraceFile};

/// Reads a trace; a truncated one is read up to its last whole record, with a warning.
pub fn load(path: &Path) -> Result<TraceFile, Failure> {
    let file = read_trace(path).map_err(|error| {
        Failure::bad_input(format!(
            "cannot read trace {}: {error}\n  hint: give a trace written by the Reprise shim (LD_PRELOAD=libshim.so)",
            path.display()
        ))
    })?;
    if let Completeness::Truncated { valid_bytes, reason } = &file.completeness {
        eprintln!(
            "replayer: warning: {} is truncated ({reason}); using its first {valid_bytes} bytes",
            path.display()
        );
    }
    Ok(file)
}

/// Reads a trace and refuses it when `validate` finds problems.
pub fn load_valid(path: &Path) -> Result<TraceFile, Failure> {
    let file = load(path)?;
    let problems = validate(&file.trace, &file.blobs);
    if problems.is_empty() {
        return Ok(file);
    }
    let listed: Vec<String> = problems.iter().map(|p| format!("  {p}")).collect();
    Err(Failure::bad_input(format!(
        "{} has {} problem(s):\n{}\n  hint: the trace is damaged or was written by a faulty recorder; record it again",
        path.display(),
        problems.len(),
        listed.join("\n")
    )))
}
