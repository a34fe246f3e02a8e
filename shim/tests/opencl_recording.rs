//! Real OpenCL programs recorded under the shim on PoCL and on Intel's CPU runtime: the
//! program's output is unchanged, and the trace holds exactly the expected graph and data.

mod support;

use std::collections::BTreeSet;
use support::host_replay::check_data_movement;
use support::{record, Runtime, Scratch};
use trace_format::{Arg, Command, Edge, EdgeKind, HostTaskKind, ImageKind, Launch, MemKind, Place};

/// The trace's edges as (from, to, kind), in order of the nodes they join.
fn edges(recording: &support::Recording) -> Vec<(u32, u32, EdgeKind)> {
    sorted(recording.trace.trace.edges.iter().map(|&Edge { from, to, kind }| (from.0, to.0, kind)).collect())
}

fn sorted(mut edges: Vec<(u32, u32, EdgeKind)>) -> Vec<(u32, u32, EdgeKind)> {
    edges.sort_by_key(|&(from, to, _)| (from, to));
    edges
}

fn kinds(recording: &support::Recording) -> Vec<&'static str> {
    recording.trace.trace.nodes.iter().map(|node| node.command.kind_name()).collect()
}

fn in_order_chain(runtime: Runtime) {
    let scratch = Scratch::new("chain");
    let program = scratch.compile("in_order_chain");
    // Every window keeps what it wrote.
    let recording = record(&scratch, &runtime, &[program.to_str().unwrap(), runtime.platform], &[("REPRISE_VERIFY", "windows")]);
    let trace = &recording.trace.trace;
    assert_eq!(kinds(&recording), ["copy", "kernel", "kernel", "copy", "kernel", "kernel", "copy", "kernel", "kernel", "copy"]);
    let segments: Vec<_> = trace.segments.iter().map(|segment| (segment.ordinal, segment.ended_by.as_str())).collect();
    assert_eq!(segments, [(0, "clEnqueueReadBuffer"), (1, "clEnqueueReadBuffer"), (2, "clEnqueueReadBuffer")]);
    let in_order: Vec<_> = [(0, 1), (1, 2), (2, 3), (4, 5), (5, 6), (7, 8), (8, 9)].map(|(from, to)| (from, to, EdgeKind::InOrder)).into();
    assert_eq!(edges(&recording), in_order);
    // The local-memory argument and the value argument are kept as such.
    let Command::Kernel(twice) = &trace.nodes[2].command else { panic!("node 2 is not a kernel") };
    assert_eq!(twice.args[1], trace_format::Arg::Local(64));
    assert_eq!(trace.kernels[twice.kernel.index()].name, "twice");
    assert_eq!(trace.programs[0].build_options, "-cl-std=CL1.2");
    // Each segment ends with a read of the whole buffer its kernels wrote: the data the
    // program received is the buffer's final contents, and its sum is what the program printed.
    for (segment, read) in trace.segments.iter().zip([3, 6, 9]) {
        let Command::Copy(read) = &trace.nodes[read].command else { panic!("node {read} is not a copy") };
        let (Place::Memory { mem, .. }, Place::Host { data: Some(data) }) = (&read.src, &read.dst) else { panic!("not a read") };
        let written: Vec<_> = segment.expected.iter().map(|state| (state.mem, state.blob)).collect();
        assert!(written.contains(&(*mem, *data)), "{written:?}");
    }
    // Kernels are taken to write every memory argument: `add` writes both buffers each round. The
    // last segment also holds both buffers' final contents, read before the program released them.
    assert_eq!(trace.segments.iter().map(|segment| segment.expected.len()).collect::<Vec<_>>(), [2, 2, 4]);
    let Command::Copy(last_read) = &trace.nodes[9].command else { panic!("node 9 is not a copy") };
    let Place::Host { data: Some(last_data) } = last_read.dst else { panic!("the read kept no data") };
    let final_contents = recording.blob(last_data);
    let sum: i64 = final_contents.chunks_exact(4).map(|v| i64::from(i32::from_ne_bytes(v.try_into().unwrap()))).sum();
    assert!(recording.stdout().contains(&format!("round 2: sum {sum},")), "{}", recording.stdout());
    let device = &trace.devices[0].properties;
    assert_eq!(device["platform"], runtime.platform);
    assert!(device["opencl_version"].starts_with("OpenCL "));
}

#[test]
fn in_order_chain_on_pocl() {
    in_order_chain(Runtime::pocl());
}

#[test]
fn in_order_chain_on_intel() {
    if let Some(runtime) = Runtime::intel() {
        in_order_chain(runtime);
    }
}

fn event_graph(runtime: Runtime) {
    let scratch = Scratch::new("events");
    let program = scratch.compile("event_graph");
    let recording = record(&scratch, &runtime, &[program.to_str().unwrap(), runtime.platform], &[]);
    assert_eq!(recording.stdout(), "a[0]=6 a[31]=6 out[0]=8 out[31]=8\n");
    assert_eq!(
        kinds(&recording),
        ["fill", "fill", "kernel", "kernel", "kernel", "barrier", "host_task", "kernel", "barrier", "copy", "copy"]
    );
    assert_eq!(recording.trace.trace.nodes[6].command, Command::HostTask(HostTaskKind::UserEvent));
    use EdgeKind::{Barrier, Event};
    let expected = sorted(vec![
        (0, 2, Event),
        (1, 3, Event),
        (2, 4, Event),
        (3, 4, Event),
        // The barrier waits for everything before it on the out-of-order queue.
        (0, 5, Barrier),
        (1, 5, Barrier),
        (2, 5, Barrier),
        (3, 5, Barrier),
        (4, 5, Barrier),
        // The second queue's kernel waits for the user event and the barrier.
        (5, 7, Event),
        (6, 7, Event),
        // The marker waits for that kernel and, like every later command, for the barrier.
        (5, 8, Barrier),
        (7, 8, Event),
        (5, 9, Barrier),
        (8, 9, Event),
        // The read on q2 (10), in order after 7, closes alone at q2's finish: the edge from 7
        // joins two segments, which replay in order.
    ]);
    assert_eq!(edges(&recording), expected);
    let ends: Vec<&str> = recording.trace.trace.segments.iter().map(|segment| segment.ended_by.as_str()).collect();
    assert_eq!(ends, ["clFinish", "clFinish"]);
}

#[test]
fn event_graph_on_pocl() {
    event_graph(Runtime::pocl());
}

#[test]
fn event_graph_on_intel() {
    if let Some(runtime) = Runtime::intel() {
        event_graph(runtime);
    }
}

fn memory_operations(runtime: Runtime) {
    let scratch = Scratch::new("memory");
    let program = scratch.compile("memory_operations");
    let recording = record(&scratch, &runtime, &[program.to_str().unwrap(), runtime.platform], &[]);
    check_data_movement(&recording.trace.trace, &recording.trace.blobs);
    let trace = &recording.trace.trace;
    assert!(trace.partial.is_empty(), "{:?}", trace.partial);
    let rects = trace.nodes.iter().filter(|node| matches!(&node.command, Command::Copy(c) if matches!(c.extent, trace_format::Extent::Rect { .. })));
    assert_eq!(rects.count(), 3);
    let calls: BTreeSet<&str> = trace.nodes.iter().map(|node| node.call.as_ref()).collect();
    for call in ["clEnqueueSVMMemcpy", "clEnqueueSVMMemFill", "clEnqueueSVMUnmap", "clEnqueueMapBuffer", "clEnqueueUnmapMemObject"] {
        assert!(calls.contains(call), "no {call} node in {calls:?}");
    }
}

#[test]
fn memory_operations_on_pocl() {
    memory_operations(Runtime::pocl());
}

#[test]
fn memory_operations_on_intel() {
    if let Some(runtime) = Runtime::intel() {
        memory_operations(runtime);
    }
}

#[test]
fn a_program_that_dlopens_the_loader_is_recorded() {
    let scratch = Scratch::new("dlopen");
    let program = scratch.compile("dlopen_loader");
    let recording = record(&scratch, &Runtime::pocl(), &[program.to_str().unwrap()], &[]);
    assert_eq!(recording.stdout(), "01020304 01020304\n");
    assert_eq!(kinds(&recording), ["fill", "copy"]);
    check_data_movement(&recording.trace.trace, &recording.trace.blobs);
}

#[test]
fn a_pyopencl_program_with_its_private_loader_is_recorded() {
    let scratch = Scratch::new("pyopencl");
    let python = std::env::var("REPRISE_PYTHON").unwrap_or_else(|_| "python3".to_string());
    let script = support::programs_dir().join("pyopencl_twice.py");
    let recording = record(&scratch, &Runtime::pocl(), &[&python, script.to_str().unwrap(), "Portable"], &[]);
    assert_eq!(recording.stdout(), "8064 252\n");
    assert_eq!(kinds(&recording), ["kernel", "kernel", "copy"]);
    let trace = &recording.trace.trace;
    assert_eq!(trace.kernels[0].name, "twice");
    assert_eq!(trace.segments[0].initial.len(), 1, "the buffer's contents before the first kernel");
}

#[test]
fn a_capture_range_keeps_only_its_segments() {
    let runtime = Runtime::pocl();
    for (range, ordinals, kinds_kept) in [
        ("1-", vec![1, 2], vec!["kernel", "kernel", "copy", "kernel", "kernel", "copy"]),
        // A range that ends before the program does: the shim stops tracking after it.
        ("1", vec![1], vec!["kernel", "kernel", "copy"]),
    ] {
        let scratch = Scratch::new("capture");
        let program = scratch.compile("in_order_chain");
        let recording = record(&scratch, &runtime, &[program.to_str().unwrap(), runtime.platform], &[("REPRISE_CAPTURE", range)]);
        let kept: Vec<u64> = recording.trace.trace.segments.iter().map(|segment| segment.ordinal).collect();
        assert_eq!(kept, ordinals, "REPRISE_CAPTURE={range}");
        assert_eq!(kinds(&recording), kinds_kept, "REPRISE_CAPTURE={range}");
    }
}

#[test]
fn processes_that_do_no_opencl_work_write_no_trace() {
    let scratch = Scratch::new("quiet");
    let program = scratch.compile("platforms_only");
    let shim = support::shim_library();
    for command in [vec![program.to_str().unwrap().to_string()], vec!["/bin/sh".into(), "-c".into(), "echo hello | cat".into()]] {
        let output = std::process::Command::new(&command[0])
            .args(&command[1..])
            .env("LD_PRELOAD", &shim)
            .env("REPRISE_OUTPUT", scratch.0.join("quiet-%p.trace"))
            .output()
            .expect("run the program");
        assert!(output.status.success(), "{command:?}: {}", String::from_utf8_lossy(&output.stderr));
    }
    assert_eq!(scratch.traces(), Vec::<std::path::PathBuf>::new());
}

fn command_buffer(runtime: Runtime) {
    let scratch = Scratch::new("command-buffer");
    let program = scratch.compile("command_buffer");
    let recording = record(&scratch, &runtime, &[program.to_str().unwrap(), runtime.platform], &[]);
    assert_eq!(recording.stdout(), "sum 2528, b[1] = 9\n");
    assert_eq!(kinds(&recording), ["kernel", "subgraph", "subgraph", "subgraph", "copy"]);
    let trace = &recording.trace.trace;
    assert!(trace.partial.is_empty(), "{:?}", trace.partial);
    for node in &trace.nodes[1..4] {
        let Command::Subgraph(graph) = &node.command else { panic!("not a sub-graph") };
        let inner: Vec<_> = graph.nodes.iter().map(|node| node.command.kind_name()).collect();
        assert_eq!(inner, ["fill", "kernel", "barrier", "copy"]);
        let inner_edges = sorted(graph.edges.iter().map(|&Edge { from, to, kind }| (from.0, to.0, kind)).collect());
        // Recorded on an in-order queue, each command follows the previous one; the barrier also
        // waits for the fill's sync point.
        use EdgeKind::{Event, InOrder};
        assert_eq!(inner_edges, [(0, 1, InOrder), (0, 2, Event), (1, 2, InOrder), (2, 3, InOrder)]);
        assert!(graph.nodes.iter().all(|inner| inner.segment == node.segment));
    }
    // Recording only the first window: the command buffer is created after the capture range,
    // when the shim only passes calls through; the program must run as without it.
    let scratch = Scratch::new("command-buffer-after-capture");
    let recording = record(&scratch, &runtime, &[program.to_str().unwrap(), runtime.platform], &[("REPRISE_CAPTURE", "0")]);
    assert_eq!(recording.stdout(), "sum 2528, b[1] = 9\n");
    assert_eq!(kinds(&recording), ["kernel"]);
}

#[test]
fn a_program_s_own_command_buffer_is_a_sub_graph_on_pocl() {
    command_buffer(Runtime::pocl());
}

#[test]
fn a_program_s_own_command_buffer_is_a_sub_graph_on_intel() {
    if let Some(runtime) = Runtime::intel() {
        command_buffer(runtime);
    }
}

fn programs_and_kernels(runtime: Runtime) {
    let scratch = Scratch::new("programs");
    let program = scratch.compile("programs_and_kernels");
    let recording = record(&scratch, &runtime, &[program.to_str().unwrap(), runtime.platform], &[]);
    assert_eq!(recording.stdout(), "buffer 8 7 3, svm 0 5 5\ncallbacks 1\n");
    assert_eq!(kinds(&recording), ["kernel", "kernel", "kernel", "kernel", "fill", "kernel", "host_task", "copy", "copy", "barrier"]);
    let trace = &recording.trace.trace;
    let launch = |node: usize| match &trace.nodes[node].command {
        Command::Kernel(launch) => launch.clone(),
        other => panic!("node {node} is a {}", other.kind_name()),
    };
    let program_of = |node: usize| &trace.programs[trace.kernels[launch(node).kernel.index()].program.index()];
    // `fill` came from a program created from a device binary; `set_k` from one compiled with
    // options and linked.
    let kinds_of = |node: usize| program_of(node).images.iter().map(|image| image.kind).collect::<Vec<_>>();
    assert_eq!(kinds_of(0), [ImageKind::DeviceBinary]);
    // The linked program is its compilation (source, options) and the link's options.
    let linked = trace.kernels[launch(2).kernel.index()].program;
    let link = trace.program_links.iter().find(|link| link.program == linked).expect("the link is recorded");
    let units: Vec<_> = link.units.iter().map(|unit| (unit.images.iter().map(|image| image.kind).collect::<Vec<_>>(), unit.options.as_str())).collect();
    assert_eq!(units, [(vec![ImageKind::OpenClSource], "-DK=3")]);
    assert!(kinds_of(2).is_empty() && program_of(2).build_options.is_empty());
    assert_eq!(launch(1).launch, Launch::NdRange { dims: 1, offset: [0; 3], global: [1; 3], local: Some([1; 3]) });
    // A null buffer for a pointer parameter (the program was built with -cl-kernel-arg-info).
    assert_eq!(launch(3).args[1], Arg::NullMemory);
    // The SVM pointer argument points 16 ints into its allocation.
    let Arg::Memory { mem, offset } = launch(5).args[0] else { panic!("the SVM argument is not memory") };
    assert_eq!((trace.memories[mem.index()].kind.clone(), offset), (MemKind::Shared, 64));
    assert_eq!(trace.nodes[6].command, Command::HostTask(HostTaskKind::Callback));
    assert!(edges(&recording).contains(&(5, 6, EdgeKind::Event)));
    // The SVM map for reading received the allocation's contents: 16 zeros, then 16 fives.
    let Command::Copy(map) = &trace.nodes[8].command else { panic!("node 8 is not a copy") };
    let Place::Host { data: Some(data) } = map.dst else { panic!("the map kept no data") };
    let expected: Vec<u8> = (0..64).flat_map(|i: i32| if (16..32).contains(&i) { 5i32 } else { 0 }.to_ne_bytes()).collect();
    assert_eq!(recording.blob(data), expected);
}

#[test]
fn programs_kernels_svm_arguments_and_callbacks_on_pocl() {
    programs_and_kernels(Runtime::pocl());
}

#[test]
fn programs_kernels_svm_arguments_and_callbacks_on_intel() {
    if let Some(runtime) = Runtime::intel() {
        programs_and_kernels(runtime);
    }
}

#[test]
fn a_forked_child_leaves_the_parent_s_trace_alone() {
    let scratch = Scratch::new("fork");
    let program = scratch.compile("fork_child");
    let runtime = Runtime::pocl();
    let started = std::time::Instant::now();
    let recording = record(&scratch, &runtime, &[program.to_str().unwrap(), runtime.platform], &[]);
    assert!(started.elapsed() < std::time::Duration::from_secs(60), "the child waited for the parent's writer");
    assert_eq!(recording.stdout(), "child\nparent 7, child exited 0\n");
    assert_eq!(kinds(&recording), ["fill", "copy"]);
}

/// A killed process leaves a trace readable up to its last whole record: every segment that
/// ended before the kill is there with its node and final contents.
#[test]
fn a_killed_process_leaves_its_finished_segments() {
    let scratch = Scratch::new("killed");
    let program = scratch.compile("endless_fills");
    let trace_path = scratch.0.join("killed.trace");
    let mut child = std::process::Command::new(&program)
        .env("LD_PRELOAD", support::shim_library())
        .env("REPRISE_OUTPUT", &trace_path)
        .env("REPRISE_VERIFY", "windows")
        .spawn()
        .expect("start the program");
    let ended_segments = || {
        trace_format::read_trace(&trace_path)
            .map(|file| file.trace.segments.iter().filter(|segment| !segment.ended_by.is_empty()).count())
            .unwrap_or(0)
    };
    let deadline = std::time::Instant::now() + std::time::Duration::from_secs(30);
    while ended_segments() < 3 && std::time::Instant::now() < deadline {
        std::thread::sleep(std::time::Duration::from_millis(50));
    }
    child.kill().expect("kill the program");
    child.wait().expect("reap the program");
    let file = trace_format::read_trace(&trace_path).expect("read the killed program's trace");
    assert!(matches!(file.completeness, trace_format::Completeness::Truncated { .. }));
    let ended: Vec<_> = file.trace.segments.iter().filter(|segment| segment.ended_by == "clFinish").collect();
    assert!(ended.len() >= 3, "only {} segments ended before the kill", ended.len());
    for (ordinal, segment) in ended.iter().enumerate() {
        assert_eq!(segment.ordinal, ordinal as u64);
        let contents = file.blobs.get(segment.expected[0].blob).expect("final contents");
        assert!(contents.chunks_exact(4).all(|value| value == (ordinal as i32).to_ne_bytes()), "segment {ordinal}");
    }
}
