//! Every OpenCL test program, on every device: its output is the same with and without the shim,
//! and its trace replays as command buffers and eagerly with the final memory equal to the recording.

use end_to_end::device::Device;
use end_to_end::program::Source;
use end_to_end::replayer::{assert_replays, Mode};

/// Records `source` on every device and replays its trace both ways.
fn record_and_replay(source: Source) {
    for device in Device::all() {
        let scratch = tempfile::tempdir().expect("a scratch directory");
        let program = source.build(scratch.path());
        let native = program.run_natively(&device);
        assert!(native.status.success(), "{source:?} fails natively on {device:?}: {native:?}");
        let trace = scratch.path().join("program.trace");
        let recorded = program.run_recorded(&device, &trace);
        assert_eq!(recorded, native, "{source:?} behaves differently under the shim on {device:?}");
        assert!(trace.is_file(), "{source:?} left no trace on {device:?}");
        assert_replays(&trace, Mode::Graph, &device);
        assert_replays(&trace, Mode::Eager, &device);
    }
}

#[test]
fn bundled_example() {
    record_and_replay(Source::LinkedC("examples/vector_add.c"));
}

#[test]
fn in_order_chain() {
    record_and_replay(Source::LinkedC("opencl/in_order_chain.c"));
}

#[test]
fn out_of_order_diamond() {
    record_and_replay(Source::LinkedC("opencl/dag_diamond.c"));
}

#[test]
fn two_queues_with_markers_and_barriers() {
    record_and_replay(Source::LinkedC("opencl/two_queues.c"));
}

#[test]
fn transfers_and_maps() {
    record_and_replay(Source::LinkedC("opencl/transfers.c"));
}

#[test]
fn sub_buffers() {
    record_and_replay(Source::LinkedC("opencl/sub_buffers.c"));
}

#[test]
fn local_memory() {
    record_and_replay(Source::LinkedC("opencl/local_memory.c"));
}

#[test]
fn user_event() {
    record_and_replay(Source::LinkedC("opencl/user_event.c"));
}

#[test]
fn several_finish_segments() {
    record_and_replay(Source::LinkedC("opencl/segments.c"));
}

#[test]
fn loader_opened_with_dlopen() {
    record_and_replay(Source::DlopenC("opencl/dlopen_loader.c"));
}

#[test]
fn jacobi() {
    record_and_replay(Source::LinkedC("opencl/jacobi.c"));
}

#[test]
fn pyopencl_with_its_private_loader() {
    record_and_replay(Source::Python("opencl/pyopencl_saxpy.py"));
}

/// Both devices tested here have coarse-grained SVM, so the program must have used it (it prints
/// a line saying otherwise and exits 0 on a device without).
#[test]
fn coarse_grained_svm() {
    for device in Device::all() {
        let scratch = tempfile::tempdir().expect("a scratch directory");
        let native = Source::LinkedC("opencl/svm.c").build(scratch.path()).run_natively(&device);
        assert!(native.stdout.starts_with("svm: sum of copy"), "no SVM work on {device:?}: {native:?}");
    }
    record_and_replay(Source::LinkedC("opencl/svm.c"));
}
