//! Several ICDs registered at once: a program under the shim sees exactly the platforms, devices
//! and infos it sees without it, through the system's loader, the loader of Intel's wheels and
//! pyopencl's own, runs on each, and the trace replays. Skipped without `$REPRISE_INTEL_OCL`.

use end_to_end::binaries::shim_library;
use end_to_end::device::Device;
use end_to_end::program::{Outcome, Program};
use end_to_end::replay::{replay_compared, Mode};

/// Runs `program` natively and under the shim with both ICDs registered; asserts the outputs are
/// equal and list both platforms, and replays the trace in both modes.
fn sees_both(program: &Program, intel: &Device, intel_loader: bool) {
    let native = program.run_with(|command| intel.configure_both_registered(command, intel_loader));
    assert_eq!(native.code, Some(0), "{} failed natively: {native:?}", program.name);
    assert!(native.stdout.starts_with("2 platforms\n"), "{}", native.stdout);
    for platform in ["Portable Computing Language", "Intel(R) OpenCL"] {
        assert_eq!(native.stdout.matches(platform).count(), 1, "{platform} listed once natively:\n{}", native.stdout);
    }
    let trace = program.scratch().join(format!("{}-{intel_loader}.trace", program.name));
    let recorded: Outcome = program.run_with(|command| {
        intel.configure_both_registered(command, intel_loader);
        command.env("LD_PRELOAD", shim_library()).env("REPRISE_OUTPUT", &trace);
    });
    assert_eq!(native, recorded, "{} sees other platforms under the shim", program.name);
    for mode in Mode::BOTH {
        let report = replay_compared(&trace, intel, mode, &[]);
        // What each platform's kernel left, read back by the host.
        assert!(report["comparison"]["compared"].as_u64().is_some_and(|compared| compared >= 2), "{report:#}");
    }
}

#[test]
fn the_system_loader_lists_every_icd_under_the_shim() {
    let Some(intel) = Device::intel() else { return };
    sees_both(&Program::opencl_c("every_platform"), &intel, false);
}

#[test]
fn intel_s_loader_lists_every_icd_under_the_shim() {
    let Some(intel) = Device::intel() else { return };
    sees_both(&Program::opencl_c("every_platform"), &intel, true);
}

#[test]
fn pyopencl_s_loader_lists_every_icd_under_the_shim() {
    let Some(intel) = Device::intel() else { return };
    sees_both(&Program::python("pyopencl_platforms.py"), &intel, false);
}
