//! Running the replayer on a trace: `replay --json` reports and the edges of `dot`.

use crate::artifacts::replayer_binary;
use crate::device::Device;
use std::path::Path;
use std::process::{Command, Output};

#[derive(Clone, Copy, Debug)]
pub enum Mode {
    Graph,
    Eager,
}

impl Mode {
    fn flag(self) -> &'static str {
        match self {
            Mode::Graph => "graph",
            Mode::Eager => "eager",
        }
    }
}

/// `replayer replay TRACE --mode M --compare --json --device D EXTRA...`: the exit status and the
/// parsed report (panics, failing the test, when the output is not JSON).
pub fn replay(trace: &Path, mode: Mode, device: &Device, extra: &[&str]) -> (bool, serde_json::Value) {
    let mut command = Command::new(replayer_binary());
    command
        .arg("replay")
        .arg(trace)
        .args(["--mode", mode.flag(), "--iterations", "2", "--compare", "--json", "--device"])
        .arg(device.platform_fragment())
        .args(extra);
    device.configure(&mut command);
    let output = run(command);
    let report = serde_json::from_slice(&output.stdout).unwrap_or_else(|error| {
        panic!(
            "replay printed no JSON report ({error}); stdout:\n{}\nstderr:\n{}",
            String::from_utf8_lossy(&output.stdout),
            String::from_utf8_lossy(&output.stderr)
        )
    });
    (output.status.success(), report)
}

/// Replays in `mode` and asserts the run succeeded and its final memory equals the recording's.
pub fn assert_replays(trace: &Path, mode: Mode, device: &Device) -> serde_json::Value {
    let (succeeded, report) = replay(trace, mode, device, &[]);
    assert_eq!(report["comparison"]["passed"], true, "{mode:?} replay on {device:?} did not match:\n{report:#}");
    assert!(succeeded, "{mode:?} replay on {device:?} exited with failure:\n{report:#}");
    report
}

/// The edges between kernel launches in `replayer dot`, as (from, to) kernel names, sorted.
pub fn kernel_edges(trace: &Path) -> Vec<(String, String)> {
    let mut command = Command::new(replayer_binary());
    command.arg("dot").arg(trace);
    let output = run(command);
    assert!(output.status.success(), "replayer dot failed: {}", String::from_utf8_lossy(&output.stderr));
    let dot = String::from_utf8_lossy(&output.stdout);
    let names: std::collections::HashMap<&str, &str> = dot.lines().filter_map(kernel_node).collect();
    let mut edges: Vec<(String, String)> = dot
        .lines()
        .filter_map(edge)
        .filter_map(|(from, to)| Some((names.get(from)?.to_string(), names.get(to)?.to_string())))
        .collect();
    edges.sort();
    edges
}

/// `n3 [label="ID = 3\nTYPE = kernel\nNAME = stage_a\n"];` gives ("n3", "stage_a").
fn kernel_node(line: &str) -> Option<(&str, &str)> {
    let (node, label) = line.trim().split_once(" [label=\"")?;
    let name = label.split_once("NAME = ")?.1.split_once("\\n")?.0;
    Some((node, name))
}

/// `n3 -> n4 [label="event"];` gives ("n3", "n4").
fn edge(line: &str) -> Option<(&str, &str)> {
    let (from, rest) = line.trim().split_once(" -> ")?;
    Some((from, rest.split_once(' ')?.0))
}

fn run(mut command: Command) -> Output {
    command.output().unwrap_or_else(|error| panic!("could not start {command:?}: {error}"))
}
