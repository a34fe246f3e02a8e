//! Running the replayer on a trace and reading its JSON report.

use crate::binaries::replayer;
use crate::device::Device;
use serde_json::Value;
use std::path::Path;
use std::process::{Command, Output};

#[derive(Clone, Copy, Debug)]
pub enum Mode {
    Graph,
    Eager,
}

impl Mode {
    pub const BOTH: [Mode; 2] = [Mode::Graph, Mode::Eager];

    pub fn name(self) -> &'static str {
        match self {
            Mode::Graph => "graph",
            Mode::Eager => "eager",
        }
    }
}

/// Runs `replayer ARGS` (on `device` when given), failing the test if it does not start.
pub fn run_replayer(args: &[&str], device: Option<&Device>) -> Output {
    let mut command = Command::new(replayer());
    command.args(args);
    if let Some(device) = device {
        device.configure(&mut command);
        command.args(["--device", device.selector()]);
    }
    command.output().expect("the replayer starts")
}

/// `replayer replay TRACE --mode MODE --json --compare --iterations 3 EXTRA...` on `device`: the
/// report, after asserting that the replay succeeded and its comparison passed.
pub fn replay_compared(trace: &Path, device: &Device, mode: Mode, extra: &[&str]) -> Value {
    let mut args = vec!["replay", path_str(trace), "--mode", mode.name(), "--json", "--compare", "--iterations", "3"];
    args.extend_from_slice(extra);
    let output = run_replayer(&args, Some(device));
    let report = parse_report(&output, &args);
    assert!(output.status.success(), "replayer {args:?} on {} failed: {report:#}", device.name());
    assert_eq!(report["comparison"]["passed"], Value::Bool(true), "comparison failed: {report:#}");
    assert_eq!(report["mode"], mode.name());
    report
}

/// The JSON on a replayer's stdout; fails the test (showing stderr) when there is none.
pub fn parse_report(output: &Output, args: &[&str]) -> Value {
    serde_json::from_slice(&output.stdout).unwrap_or_else(|error| {
        panic!(
            "replayer {args:?} printed no JSON ({error}), exit {:?}:\n{}{}",
            output.status.code(),
            String::from_utf8_lossy(&output.stdout),
            String::from_utf8_lossy(&output.stderr)
        )
    })
}

pub fn path_str(path: &Path) -> &str {
    path.to_str().expect("scratch paths are UTF-8")
}
