//! Ordinary Level Zero programs of our own (`tests/level_zero/`, built against `libze-dev` and
//! linked with `-lze_loader`) run unchanged on the test-double driver and check their own results:
//! each prints `<name>: ok` and exits 0 only if every value it computed on the device is right.

use end_to_end::level_zero::{program, TestDriver, NO_MUTABLE};

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
