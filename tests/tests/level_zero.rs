//! Ordinary Level Zero programs of our own (`tests/level_zero/`, built against `libze-dev` and
//! linked with `-lze_loader`) run unchanged on the test-double driver and check their own results:
//! each prints `<name>: ok` and exits 0 only if every value it computed on the device is right.

use end_to_end::level_zero::{program, TestDriver, NO_MUTABLE};
use end_to_end::program::source_path;
use std::process::Command;

/// Runs `tests/level_zero/<name>.c` on the test double (skipped without Intel's runtime); returns
/// what it printed.
fn runs(name: &str, extra: &[(&str, &str)]) -> Option<String> {
    let driver = TestDriver::get()?;
    let outcome = program(name).run_with(|command| {
        driver.configure(command);
        command.envs(extra.iter().copied());
    });
    assert_eq!(outcome.code, Some(0), "{name} failed on the test double: {outcome:?}");
    assert!(outcome.stdout.contains(&format!("{name}: ok")), "{name}: {}", outcome.stdout);
    Some(outcome.stdout)
}

#[test]
fn vector_add_on_an_immediate_list() {
    runs("vector_add", &[]);
}

#[test]
fn regular_lists_with_barriers_events_fences_and_in_order_lists() {
    runs("regular_lists", &[]);
}

#[test]
fn copies_region_copies_and_fills() {
    runs("copies", &[]);
}

#[test]
fn native_binaries_kernel_names_and_global_offsets() {
    runs("modules", &[]);
}

#[test]
fn mutable_commands_update_arguments_and_group_counts_natively() {
    if let Some(printed) = runs("mutable_updates", &[]) {
        assert!(printed.contains("updates: native"), "{printed}");
    }
}

#[test]
fn without_the_mutable_extension_the_program_rebuilds_its_list() {
    if let Some(printed) = runs("mutable_updates", &[(NO_MUTABLE, "1")]) {
        assert!(printed.contains("updates: rebuilt"), "{printed}");
    }
}

/// Without a driver the loader fails `zeInit`, as a program on a machine without Level Zero sees.
#[test]
fn without_a_driver_zeinit_fails() {
    let Some(driver) = TestDriver::get() else { return };
    let outcome = program("vector_add").run_with(|command| {
        driver.configure(command);
        command.env("ZE_ENABLE_ALT_DRIVERS", driver.library().with_file_name("no-such-driver.so"));
    });
    assert_eq!(outcome.code, Some(2), "{outcome:?}");
}

/// The double reaches OpenCL without asking an interposed `dlsym` (the shim's, or here a spy's):
/// a program recorded on it shows its Level Zero calls, never the driver's own OpenCL.
#[test]
fn the_driver_s_opencl_is_invisible_to_an_interposed_dlsym() {
    let Some(driver) = TestDriver::get() else { return };
    let scratch = tempfile::Builder::new().prefix("reprise-ze-spy-").tempdir().expect("a scratch directory");
    let spy = scratch.path().join("libspy.so");
    let built = Command::new("cc").args(["-shared", "-fPIC", "-o"]).arg(&spy).arg(source_path("tests/level_zero/dlsym_spy.c")).arg("-ldl").output().expect("cc runs");
    assert!(built.status.success(), "{}", String::from_utf8_lossy(&built.stderr));
    let log = scratch.path().join("dlsym.log");
    let outcome = program("vector_add").run_with(|command| {
        driver.configure(command);
        command.env("LD_PRELOAD", &spy).env("REPRISE_TEST_DLSYM_LOG", &log);
    });
    assert_eq!(outcome.code, Some(0), "{outcome:?}");
    let asked = std::fs::read_to_string(&log).expect("the spy saw the loader look up the driver's tables");
    assert!(asked.lines().any(|name| name == "zeGetDriverProcAddrTable"), "{asked}");
    let opencl: Vec<&str> = asked.lines().filter(|name| name.starts_with("cl")).collect();
    assert!(opencl.is_empty(), "the driver looked up {opencl:?} through the interposed dlsym");
}
