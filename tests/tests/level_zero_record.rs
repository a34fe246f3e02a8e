//! Level Zero programs recorded under the shim on the test-double driver: each runs unchanged
//! (same output, exit 0) and its trace replays in graph and eager mode with `--compare` passing;
//! the recorded edges of in-order lists, barriers and events are exactly the program's; a list
//! updated through the mutable command list extension replays with native updates, and with
//! rebuilds where the driver hides the extension; the loader reached through `dlopen` and `dlsym`
//! or through its dispatch tables records alike; work the shim cannot record marks the trace
//! partial with its reason.

use end_to_end::binaries::{replayer, shim_library};
use end_to_end::dot::{edge, edges};
use end_to_end::level_zero::{program, TestDriver, NO_MUTABLE};
use end_to_end::program::{Build, Outcome, Program};
use end_to_end::replay::{parse_report, path_str};
use serde_json::Value;
use std::collections::BTreeSet;
use std::path::{Path, PathBuf};
use std::process::Command;

/// Runs `program` natively and under the shim with `env`; both must print the same and exit 0.
/// Returns the trace.
fn record(driver: &TestDriver, program: &Program, env: &[(&str, &str)]) -> PathBuf {
    let run = |shim: Option<&Path>| -> Outcome {
        program.run_with(|command| {
            driver.configure(command);
            command.envs(env.iter().copied());
            if let Some(trace) = shim {
                command.env("LD_PRELOAD", shim_library()).env("REPRISE_OUTPUT", trace);
            }
        })
    };
    let trace = program.scratch().join(format!("{}.trace", program.name));
    let native = run(None);
    assert_eq!(native.code, Some(0), "{} failed natively: {native:?}", program.name);
    let recorded = run(Some(&trace));
    assert_eq!(native, recorded, "{} behaves differently under the shim", program.name);
    assert!(trace.is_file(), "{} left no trace", program.name);
    trace
}

/// `replayer replay TRACE --mode MODE --compare --json` on the test double, which must pass
/// having compared something.
fn replay(driver: &TestDriver, trace: &Path, mode: &str, env: &[(&str, &str)]) -> Value {
    let args = ["replay", path_str(trace), "--mode", mode, "--compare", "--json", "--iterations", "2"];
    let mut command = Command::new(replayer());
    command.args(args);
    driver.configure(&mut command);
    command.envs(env.iter().copied());
    let output = command.output().expect("the replayer starts");
    let report = parse_report(&output, &args);
    assert!(output.status.success(), "replayer {args:?} failed: {report:#}\n{}", String::from_utf8_lossy(&output.stderr));
    assert_eq!(report["comparison"]["passed"], Value::Bool(true), "{report:#}");
    assert!(report["comparison"]["compared"].as_u64().is_some_and(|compared| compared > 0), "nothing was compared: {report:#}");
    report
}

/// Records `tests/level_zero/<name>.c` and replays it both ways; `None` without Intel's runtime. The
/// program holds the scratch directory of its trace.
fn records_and_replays(name: &str) -> Option<(TestDriver, PathBuf, Program)> {
    let driver = TestDriver::get()?;
    let program = program(name);
    let trace = record(&driver, &program, &[]);
    for mode in ["graph", "eager"] {
        replay(&driver, &trace, mode, &[]);
    }
    Some((driver, trace, program))
}

fn count(report: &Value, field: &str) -> u64 {
    report[field].as_u64().unwrap_or_else(|| panic!("no {field}: {report:#}"))
}

fn partial_reasons(trace: &Path) -> Vec<(String, String)> {
    let file = trace_format::read_trace(trace).expect("the trace reads");
    file.trace.partial.iter().map(|partial| (partial.call.clone(), partial.reason.clone())).collect()
}

#[test]
fn vector_add_on_an_immediate_list_is_ordered_by_its_barriers() {
    let Some((_, trace, _scratch)) = records_and_replays("vector_add") else { return };
    let expected: BTreeSet<_> = [
        edge("copy#0", "barrier#1", "barrier"),
        edge("barrier#1", "vector_add", "barrier"),
        edge("vector_add", "barrier#3", "barrier"),
        edge("barrier#3", "copy#4", "barrier"),
    ]
    .into();
    assert_eq!(edges(&trace), expected);
    assert!(partial_reasons(&trace).is_empty(), "{:?}", partial_reasons(&trace));
}

#[test]
fn an_in_order_list_and_an_event_order_two_immediate_lists() {
    let Some((_, trace, _scratch)) = records_and_replays("event_chain") else { return };
    let expected: BTreeSet<_> = [edge("fill#0", "scale", "in_order"), edge("scale", "add_into", "event")].into();
    assert_eq!(edges(&trace), expected);
}

#[test]
fn regular_lists_execute_as_instances_of_their_graph() {
    let Some((_, trace, _scratch)) = records_and_replays("regular_lists") else { return };
    let file = trace_format::read_trace(&trace).expect("the trace reads");
    let graphs: Vec<&trace_format::Graph> = file
        .trace
        .nodes
        .iter()
        .filter_map(|node| match &node.command {
            trace_format::Command::Subgraph(graph) => Some(graph),
            _ => None,
        })
        .collect();
    // Lists A and B three times each, the in-order list three times, the gated list, the sums.
    assert_eq!(graphs.len(), 11, "{graphs:#?}");
    let shape = |graph: &trace_format::Graph| graph.edges.iter().map(|e| (e.from.0, e.to.0, e.kind)).collect::<Vec<_>>();
    use trace_format::EdgeKind::{Barrier, InOrder};
    // A: fill, barrier, scale, barrier, add_into (out of order: the barriers order it).
    assert_eq!(shape(graphs[0]), [(0, 1, Barrier), (1, 2, Barrier), (1, 3, Barrier), (2, 3, Barrier), (3, 4, Barrier)]);
    assert_eq!(shape(graphs[0]), shape(graphs[2]));
    // The in-order list: three kernels chained without barriers.
    assert_eq!(shape(graphs[6]), [(0, 1, InOrder), (1, 2, InOrder)]);
}

#[test]
fn copies_region_copies_and_fills_record_and_replay() {
    records_and_replays("copies");
}

#[test]
fn native_binaries_and_global_offsets_record_and_replay() {
    records_and_replays("modules");
}

#[test]
fn mutable_updates_replay_natively_and_by_rebuilding() {
    let Some((driver, trace, _scratch)) = records_and_replays("mutable_updates") else { return };
    let native = replay(&driver, &trace, "graph", &[]);
    assert!(count(&native, "native_updates") > 0, "{native:#}");
    let hidden = replay(&driver, &trace, "graph", &[(NO_MUTABLE, "1")]);
    assert_eq!(count(&hidden, "native_updates"), 0, "{hidden:#}");
    assert!(count(&hidden, "rebuilds") > 0, "{hidden:#}");
    assert!(partial_reasons(&trace).is_empty(), "{:?}", partial_reasons(&trace));
}

/// The program rebuilds its list itself when the driver hides the extension: recorded as it ran.
#[test]
fn a_program_rebuilding_its_list_records_and_replays() {
    let Some(driver) = TestDriver::get() else { return };
    let program = program("mutable_updates");
    let trace = record(&driver, &program, &[(NO_MUTABLE, "1")]);
    for mode in ["graph", "eager"] {
        replay(&driver, &trace, mode, &[(NO_MUTABLE, "1")]);
    }
}

/// The loader opened with `dlopen`, its functions found with `dlsym` or taken from its dispatch
/// tables: the list's kernels and barrier are recorded either way.
#[test]
fn dlsym_and_dispatch_table_routes_are_recorded() {
    let Some(driver) = TestDriver::get() else { return };
    let program = Program::build_c("dispatch_routes", &Build { source: "tests/level_zero/dispatch_routes.c", defines: &[], libraries: &[] });
    for route in ["dlsym", "table"] {
        let trace = record(&driver, &program, &[("REPRISE_TEST_ROUTE", route)]);
        for mode in ["graph", "eager"] {
            replay(&driver, &trace, mode, &[]);
        }
        let expected: BTreeSet<_> = [edge("iota", "barrier#0_1", "barrier"), edge("barrier#0_1", "scale", "barrier")].into();
        let recorded: BTreeSet<_> = edges(&trace).into_iter().filter(|(_, _, kind)| kind == "barrier").collect();
        assert_eq!(recorded, expected, "{route}");
    }
}

/// Work the shim cannot record goes through unchanged and marks the trace partial, saying why.
#[test]
fn unrecorded_work_marks_the_trace_partial() {
    let Some(driver) = TestDriver::get() else { return };
    let program = program("copy_from_context");
    let trace = record(&driver, &program, &[]);
    let reasons = partial_reasons(&trace);
    assert!(
        reasons.iter().any(|(call, reason)| call.contains("zeCommandListAppendMemoryCopyFromContext") && reason.contains("another context")),
        "{reasons:?}"
    );
}
