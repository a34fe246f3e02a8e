//! Each OpenCL test program on each device: its output is the same with and without the shim, and
//! its trace replays as command buffers and eagerly with the final memory equal to the recording.
//! Programs with a known graph also have their DOT edges checked.

use end_to_end::device::Device;
use end_to_end::dot::{edge, edges};
use end_to_end::program::{Build, Program};
use end_to_end::replay::{replay_compared, Mode};
use std::collections::BTreeSet;
use std::path::PathBuf;

/// Records `program` on `device` (asserting identical output and that the shim recorded every
/// call) and replays it in both modes with `--compare`; returns the trace, which lives as long as
/// `program`.
fn record_and_replay(program: &Program, device: &Device) -> PathBuf {
    let trace = program.record(device);
    let partial = trace_format::read_trace(&trace).expect("the trace reads").trace.partial;
    assert!(partial.is_empty(), "{} on {}: {partial:?}", program.name, device.name());
    for mode in Mode::BOTH {
        replay_compared(&trace, device, mode, &[]);
    }
    trace
}

/// One test per device: `pocl` always, `intel` when `$REPRISE_INTEL_OCL` is set.
macro_rules! on_each_device {
    ($name:ident, $check:expr) => {
        mod $name {
            use super::*;
            #[test]
            fn pocl() {
                ($check)(&Device::pocl());
            }
            #[test]
            fn intel() {
                if let Some(device) = Device::intel() {
                    ($check)(&device);
                }
            }
        }
    };
}

fn replays(name: &'static str) -> impl Fn(&Device) {
    move |device| {
        record_and_replay(&Program::opencl_c(name), device);
    }
}

on_each_device!(transfers, replays("transfers"));
on_each_device!(sub_buffers, replays("sub_buffers"));
on_each_device!(local_memory, replays("local_memory"));
on_each_device!(user_event, replays("user_event"));
on_each_device!(user_event_failed, replays("user_event_failed"));
on_each_device!(linked_program, replays("linked_program"));

// Stored addresses differ by where the replay's memory lies: counted, not failed; the sums beside
// them still compare.
on_each_device!(stored_addresses, |device: &Device| {
    let program = Program::opencl_c("stored_addresses");
    let trace = program.record(device);
    for mode in Mode::BOTH {
        let report = replay_compared(&trace, device, mode, &[]);
        let addresses = report["comparison"]["address_bytes"].as_u64().expect("address_bytes");
        // Three words of 64 items, in the buffer and in the data read back.
        assert!(addresses > 0 && addresses <= 2 * 3 * 64 * 8, "{mode:?}: {addresses} address bytes");
    }
});

// Repeated contents are found by their fingerprints, and contents differing in one byte at the
// start or the end of a read are not taken for earlier ones: each read's data compares equal in
// both replays.
on_each_device!(repeated_reads, |device: &Device| {
    let program = Program::opencl_c("repeated_reads");
    let native = program.run_native(device);
    let log = program.scratch().join("shim.log");
    let trace = program.trace_path(device);
    let recorded = program.run_with(|command| {
        device.configure(command);
        command.env("LD_PRELOAD", end_to_end::binaries::shim_library()).env("REPRISE_OUTPUT", &trace).env("REPRISE_LOG", format!("info,file={}", log.display()));
    });
    assert_eq!(native, recorded, "the reads under the shim");
    assert_eq!(native.code, Some(0), "{native:?}");
    let log = std::fs::read_to_string(&log).expect("the shim's log");
    // Nine reads of 20 MB. Four receive new contents: fingerprinted, then compressed where they
    // lie (they compress), which is no copy. Five repeat earlier contents: four are found by their
    // fingerprints; the fifth's place received new contents twice in a row before, so it is
    // compressed without a fingerprint first, and found by the one that comes with it. The write
    // of the last contents is found by its fingerprint too. Device memory read into the shim's
    // buffers is compressed there: the first buffer's initial contents, and both buffers' final
    // contents, which the program received before (100 + 60 MB).
    let kept = "copied 0 MB of host memory in 0 ms, compressed 160 MB where it lay";
    assert!(log.contains(kept) && log.contains("fingerprinted 180 MB"), "{log}");
    let file = trace_format::read_trace(&trace).expect("the trace");
    let large: BTreeSet<_> = file.trace.nodes.iter().filter_map(|node| match &node.command {
        trace_format::Command::Copy(trace_format::Copy { src: trace_format::Place::Host { data }, .. } | trace_format::Copy { dst: trace_format::Place::Host { data }, .. }) => *data,
        _ => None,
    }).collect();
    assert_eq!(large.len(), 4, "the four contents, each once: {large:?}");
    let finals: Vec<_> = file.trace.segments.iter().flat_map(|segment| &segment.expected).map(|state| state.blob).collect();
    assert!(finals.len() == 2 && finals.iter().all(|blob| large.contains(blob)), "final contents named as received: {finals:?}");
    for mode in Mode::BOTH {
        let report = replay_compared(&trace, device, mode, &[]);
        // Each read's data, and the two buffers' final contents.
        assert_eq!(report["comparison"]["compared"].as_u64(), Some(11), "{report:#}");
    }
});

on_each_device!(in_order_chain, |device: &Device| {
    let program = Program::opencl_c("in_order_chain");
    let trace = record_and_replay(&program, device);
    let expected = BTreeSet::from([
        edge("copy#0", "scale", "in_order"),
        edge("scale", "twice", "in_order"),
        edge("twice", "add", "in_order"),
        edge("add", "copy#4", "in_order"),
    ]);
    assert_eq!(edges(&trace), expected);
});

on_each_device!(dag_diamond, |device: &Device| {
    let program = Program::opencl_c("dag_diamond");
    let trace = record_and_replay(&program, device);
    let expected = BTreeSet::from([
        edge("stage_a", "stage_b", "event"),
        edge("stage_a", "stage_c", "event"),
        edge("stage_b", "stage_d", "event"),
        edge("stage_c", "stage_d", "event"),
        edge("stage_d", "copy#4", "event"),
    ]);
    assert_eq!(edges(&trace), expected, "the diamond's edges (and no stage_a -> stage_d)");
});

on_each_device!(two_queues, |device: &Device| {
    let program = Program::opencl_c("two_queues");
    let trace = record_and_replay(&program, device);
    // Queue 2's marker waits for queue 1's increment; queue 1's barrier waits for queue 2's barrier.
    let expected = BTreeSet::from([
        edge("copy#0", "increment", "in_order"),
        edge("increment", "barrier#2", "event"),
        edge("barrier#2", "triple", "in_order"),
        edge("triple", "barrier#4", "in_order"),
        edge("increment", "barrier#5", "in_order"),
        edge("barrier#4", "barrier#5", "event"),
        edge("barrier#5", "sum", "in_order"),
        edge("sum", "copy#7", "in_order"),
    ]);
    assert_eq!(edges(&trace), expected, "edges within and across the two queues");
});

on_each_device!(svm, |device: &Device| {
    let program = Program::opencl_c("svm");
    // Both CPU runtimes have coarse-grained SVM: the program's skip line would be a failure here.
    let native = program.run_native(device);
    assert!(native.stdout.starts_with("svm: sum of copy"), "SVM did not run on {}: {native:?}", device.name());
    record_and_replay(&program, device);
});

on_each_device!(buffer_over_svm, |device: &Device| {
    let program = Program::opencl_c("buffer_over_svm");
    let native = program.run_native(device);
    assert!(native.stdout.starts_with("buffer over svm: x[0] = 68"), "SVM did not run on {}: {native:?}", device.name());
    record_and_replay(&program, device);
});

on_each_device!(segments, |device: &Device| {
    let program = Program::opencl_c("segments");
    let trace = program.record(device);
    let report = replay_compared(&trace, device, Mode::Graph, &[]);
    assert_eq!(report["segments"], 3, "one segment per clFinish: {report:#}");
    replay_compared(&trace, device, Mode::Eager, &[]);
});

on_each_device!(dlopen_loader, |device: &Device| {
    let build = Build { source: "tests/opencl/dlopen_loader.c", defines: &[], libraries: &[] };
    record_and_replay(&Program::build_c("dlopen_loader", &build), device);
});

on_each_device!(pyopencl_saxpy, |device: &Device| {
    record_and_replay(&Program::python("pyopencl_saxpy.py"), device);
});

on_each_device!(bundled_example, |device: &Device| {
    let build = Build { source: "tests/examples/vector_add.c", defines: &[], libraries: &["OpenCL"] };
    record_and_replay(&Program::build_c("vector_add", &build), device);
});

on_each_device!(null_buffers, replays("null_buffers"));

on_each_device!(image_arguments, |device: &Device| {
    // An image and a sampler as kernel arguments (what OpenCL-CTS test_profiling's kernels take).
    let program = Program::opencl_c("image_arguments");
    let trace = program.record(device);
    for mode in Mode::BOTH {
        let report = replay_compared(&trace, device, mode, &[]);
        assert!(report["comparison"]["compared"].as_u64() > Some(0), "{} replay compared nothing: {report:#}", mode.name());
    }
});

on_each_device!(image_transfers, replays("image_transfers"));
on_each_device!(image_maps, replays("image_maps"));

// Six images of 256 KB, one at a time, replayed within a budget of about one: they take turns.
on_each_device!(images_one_at_a_time, |device: &Device| {
    let program = Program::opencl_c("images_one_at_a_time");
    let trace = record_and_replay(&program, device);
    for mode in Mode::BOTH {
        replay_compared(&trace, device, mode, &["--memory-budget", "300000"]);
    }
});
