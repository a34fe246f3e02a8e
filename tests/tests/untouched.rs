//! Programs that never use OpenCL run under the shim exactly as without it and leave no trace.

use end_to_end::device::Device;
use end_to_end::program::Program;

fn leaves_no_trace(program: &Program, expected_stdout: &str) {
    let device = Device::pocl();
    let native = program.run_native(&device);
    assert_eq!(native.stdout, expected_stdout);
    let trace = program.scratch().join("never.trace");
    let recorded = program.run_recorded(&device, &trace);
    assert_eq!(recorded, native, "{} behaves differently under the shim", program.name);
    let left: Vec<_> = std::fs::read_dir(program.scratch()).expect("the scratch directory lists").collect();
    assert!(left.is_empty(), "{} left files behind under the shim: {left:?}", program.name);
}

#[test]
fn true_leaves_no_trace() {
    leaves_no_trace(&Program::command("true", &["/bin/true"]), "");
}

#[test]
fn shell_echo_leaves_no_trace() {
    leaves_no_trace(&Program::command("echo", &["sh", "-c", "echo hi"]), "hi\n");
}
