//! OpenCL's unified shared memory (`cl_intel_unified_shared_memory`), what Intel's SYCL runtime
//! allocates: a C program of the extension's functions and a dpctl program record complete
//! traces on Intel's CPU runtime and replay equal in both modes. Skipped without
//! `$REPRISE_INTEL_OCL` (`scripts/setup.sh` installs dpctl beside Intel's runtime).

use end_to_end::device::Device;
use end_to_end::program::Program;
use end_to_end::replay::{replay_compared, Mode};
use trace_format::MemKind;

/// Records `program`, which must leave a complete trace holding unified shared memory, and
/// replays it in both modes, comparing at least `results` results.
fn records_and_replays(program: &Program, intel: &Device, results: u64) {
    let trace = program.record(intel);
    let file = trace_format::read_trace(&trace).expect("the trace reads");
    assert!(file.trace.partial.is_empty(), "{:?}", file.trace.partial);
    assert!(file.trace.memories.iter().any(|memory| matches!(memory.kind, MemKind::Unified(_))), "{:?}", file.trace.memories);
    for mode in Mode::BOTH {
        let report = replay_compared(&trace, intel, mode, &[]);
        assert!(report["comparison"]["compared"].as_u64().is_some_and(|compared| compared >= results), "{report:#}");
    }
}

#[test]
fn the_extension_s_functions_record_and_replay() {
    let Some(intel) = Device::intel() else { return };
    records_and_replays(&Program::opencl_c("unified_memory"), &intel, 4);
}

#[test]
fn a_dpctl_program_records_and_replays() {
    let Some(intel) = Device::intel() else { return };
    records_and_replays(&Program::python("dpctl_usm.py"), &intel, 3);
}
