//! The hooks end to end in a real process: `test_driver/program.c` run natively and under the
//! shim against `test_driver/fake_libcuda.c`, a test double for libcuda (no GPU here). Checks that
//! the program's output is unchanged, that `cuGetProcAddress_v2` handed out the hook of the
//! per-thread-stream variant, and the trace: nodes, relocated kernel arguments, edges.

use std::path::{Path, PathBuf};
use std::process::Command;
use trace_format::{Arg, Command as Work, EdgeKind, MemKind, Param, ParamKind};

/// The module `PTX_FILE` holds.
const FILE_PTX: &str = ".version 9.0\n.target sm_90\n.visible .entry add1() { exit; }\n";

fn sources() -> PathBuf {
    Path::new(env!("CARGO_MANIFEST_DIR")).join("src/cuda/test_driver")
}

/// `target/<profile>/libshim.so`, built with the tests.
fn shim_library() -> PathBuf {
    let exe = std::env::current_exe().unwrap();
    let library = exe.parent().and_then(Path::parent).unwrap().join("libshim.so");
    assert!(library.exists(), "{} is missing: build the shim first", library.display());
    library
}

fn cc(args: &[&str]) {
    let status = Command::new("cc").args(args).status().unwrap();
    assert!(status.success(), "cc {args:?} failed");
}

/// A program of `test_driver`, built with the test-double libcuda in a directory of its own
/// (removed when the test passes).
struct TestProgram {
    dir: PathBuf,
    program: PathBuf,
    trace: PathBuf,
    /// Environment every run gets.
    env: Vec<(&'static str, PathBuf)>,
}

impl TestProgram {
    fn build(name: &str) -> TestProgram {
        let dir = std::env::temp_dir().join(format!("reprise-cuda-{name}-{}", std::process::id()));
        std::fs::create_dir_all(&dir).unwrap();
        let (driver, program) = (dir.join("libcuda.so.1"), dir.join(name));
        cc(&["-shared", "-fPIC", "-o", driver.to_str().unwrap(), sources().join("fake_libcuda.c").to_str().unwrap()]);
        cc(&["-o", program.to_str().unwrap(), sources().join(format!("{name}.c")).to_str().unwrap(), "-ldl"]);
        TestProgram { trace: dir.join(format!("{name}.trace")), dir, program, env: Vec::new() }
    }

    /// Runs it with the libcuda in `library_path`, under the shim or not.
    fn run_with(&self, library_path: &Path, shim: bool) -> std::process::Output {
        let mut command = Command::new(&self.program);
        command.env("LD_LIBRARY_PATH", library_path).env("REPRISE_OUTPUT", &self.trace).envs(self.env.iter().map(|(k, v)| (k, v)));
        if shim {
            command.env("LD_PRELOAD", shim_library());
        }
        command.output().unwrap()
    }

    fn run(&self, shim: bool) -> std::process::Output {
        self.run_with(&self.dir, shim)
    }

    /// Runs it natively and under the shim, which must print the same; its output and trace.
    fn recorded(&self) -> (String, trace_format::TraceFile) {
        let (native, recorded) = (self.run(false), self.run(true));
        assert!(native.status.success(), "{}", String::from_utf8_lossy(&native.stdout));
        let output = String::from_utf8_lossy(&native.stdout).into_owned();
        assert_eq!(String::from_utf8_lossy(&recorded.stdout), output);
        (output, trace_format::read_trace(&self.trace).unwrap())
    }
}

impl Drop for TestProgram {
    fn drop(&mut self) {
        if !std::thread::panicking() {
            let _ = std::fs::remove_dir_all(&self.dir);
        }
    }
}

#[test]
fn a_program_reaching_the_driver_through_get_proc_address_is_recorded_unchanged() {
    let mut test = TestProgram::build("program");
    let ptx_file = test.dir.join("module.ptx");
    std::fs::write(&ptx_file, FILE_PTX).unwrap();
    test.env.push(("PTX_FILE", ptx_file));

    // Without libcuda the program runs as it does natively and nothing is recorded.
    let empty = test.dir.join("empty");
    std::fs::create_dir_all(&empty).unwrap();
    let (native, recorded) = (test.run_with(&empty, false), test.run_with(&empty, true));
    assert_eq!((recorded.status.code(), &recorded.stdout), (native.status.code(), &native.stdout));
    if native.stdout == b"no libcuda\n" {
        assert!(!test.trace.exists(), "a process without libcuda writes no trace");
    } else if test.trace.exists() {
        // This machine has a real libcuda, which the program reached.
        std::fs::remove_file(&test.trace).unwrap();
    }

    let native = test.run(false);
    assert!(native.status.success());
    assert!(!test.trace.exists(), "nothing is written without the shim");
    let recorded = test.run(true);
    assert_eq!(recorded.status.code(), native.status.code());
    assert_eq!(String::from_utf8_lossy(&recorded.stdout), String::from_utf8_lossy(&native.stdout));
    assert!(String::from_utf8_lossy(&native.stdout).contains("launch via ptsz"));

    let file = trace_format::read_trace(&test.trace).unwrap();
    let trace = &file.trace;
    assert!(trace.partial.is_empty(), "{:?}", trace.partial);
    assert_eq!(trace.devices[0].properties["compute_capability"], "9.0");
    let calls: Vec<&str> = trace.nodes.iter().map(|node| node.call.as_ref()).collect();
    assert_eq!(
        calls,
        [
            "cuMemcpyHtoD_v2", "cuMemsetD32_v2", "cuLaunchKernel_ptsz", "cuMemcpy2D_v2", "cuMemcpyDtoH_v2",
            "cuMemsetD32Async", "cuMemsetD32Async", "cuLaunchKernel_ptsz", "cuMemcpyDtoH_v2",
        ]
    );
    let Work::Copy(copy) = &trace.nodes[3].command else { panic!("not a copy: {:?}", trace.nodes[3]) };
    assert_eq!(copy.dst, trace_format::Place::Memory { mem: trace_format::MemId(0), offset: 48 });
    let trace_format::Place::Host { data: Some(blob) } = copy.src else { panic!("the 2D copy keeps its host rows") };
    let rows: Vec<u8> = [50i32, 51, 0, 0, 52, 53].iter().flat_map(|value| value.to_ne_bytes()).collect();
    assert_eq!(file.blobs.get(blob).unwrap().as_ref(), rows.as_slice());
    let Work::Kernel(launch) = &trace.nodes[2].command else { panic!("not a kernel: {:?}", trace.nodes[2]) };
    assert_eq!(launch.args, [Arg::Memory { mem: trace_format::MemId(0), offset: 8 }, Arg::Value(8i32.to_ne_bytes().to_vec())]);
    let kernel = &trace.kernels[launch.kernel.0 as usize];
    assert_eq!((kernel.name.as_str(), kernel.params.as_slice()), ("add1", &[Param { offset: 0, size: 8, kind: ParamKind::Memory }, Param { offset: 8, size: 4, kind: ParamKind::Value }][..]));
    // The program's image, read from the program's own data when its kernel was launched.
    let program = &trace.programs[kernel.program.0 as usize];
    assert_eq!(program.images[0].kind, trace_format::ImageKind::Ptx);
    let ptx = file.blobs.get(program.images[0].blob).unwrap();
    assert_eq!(ptx.as_ref(), b".version 9.0\n.target sm_90\n.visible .entry add1() { ret; }\n");
    // The module loaded from a file keeps the file's PTX.
    let Work::Kernel(file_launch) = &trace.nodes[7].command else { panic!("not a kernel: {:?}", trace.nodes[7]) };
    let file_program = &trace.programs[trace.kernels[file_launch.kernel.0 as usize].program.0 as usize];
    assert_eq!(file.blobs.get(file_program.images[0].blob).unwrap().as_ref(), FILE_PTX.as_bytes());
    let edges: Vec<(u32, u32, EdgeKind)> = trace.edges.iter().map(|edge| (edge.from.0, edge.to.0, edge.kind)).collect();
    // The per-thread default stream orders against the legacy stream both ways.
    assert_eq!(
        edges,
        [
            (0, 1, EdgeKind::InOrder),
            (1, 2, EdgeKind::DefaultStream),
            (1, 3, EdgeKind::InOrder),
            (2, 3, EdgeKind::DefaultStream),
            (3, 4, EdgeKind::InOrder),
            // The second window: the event joins the streams; the legacy stream waits for the
            // blocking stream.
            (5, 6, EdgeKind::Event),
            (6, 7, EdgeKind::InOrder),
            (7, 8, EdgeKind::DefaultStream),
        ]
    );
    let ends: Vec<&str> = trace.segments.iter().map(|segment| segment.ended_by.as_str()).collect();
    assert_eq!(ends, ["cuMemcpyDtoH_v2", "cuMemcpyDtoH_v2"]);
}

/// `test_driver/graph_program.c`: a graph of one kernel node, its `n` set on the executable graph
/// before each of 3 launches, each recorded as a sub-graph with that launch's arguments.
#[test]
fn a_program_launching_its_own_graph_records_each_launch_as_a_subgraph() {
    let (_, file) = TestProgram::build("graph_program").recorded();
    assert!(file.trace.partial.is_empty(), "{:?}", file.trace.partial);
    let launched_args: Vec<Vec<Arg>> = file
        .trace
        .nodes
        .iter()
        .filter(|node| node.call == "cuGraphLaunch")
        .map(|node| match &node.command {
            Work::Subgraph(graph) => match &graph.nodes[..] {
                [kernel_node] => match &kernel_node.command {
                    Work::Kernel(launch) => launch.args.clone(),
                    other => panic!("not a kernel: {other:?}"),
                },
                nodes => panic!("not one node: {nodes:?}"),
            },
            other => panic!("not a sub-graph: {other:?}"),
        })
        .collect();
    let memory = Arg::Memory { mem: trace_format::MemId(0), offset: 0 };
    let expected: Vec<Vec<Arg>> = [4i32, 8, 12].iter().map(|n| vec![memory.clone(), Arg::Value(n.to_ne_bytes().to_vec())]).collect();
    assert_eq!(launched_args, expected);
    let ends: Vec<&str> = file.trace.segments.iter().map(|segment| segment.ended_by.as_str()).collect();
    assert_eq!(ends, ["cuStreamSynchronize", "cuStreamSynchronize", "cuStreamSynchronize", "cuMemcpyDtoH_v2"]);
}

/// `test_driver/extras_program.c`: contexts, host memory, module variables, mapped ranges, 3D and
/// peer copies and queries, each recorded with the memory it names.
#[test]
fn contexts_host_memory_variables_mappings_and_queries_are_recorded() {
    let mut test = TestProgram::build("extras_program");
    test.env.push(("REPRISE_VERIFY", "windows".into()));
    let (output, file) = test.recorded();
    assert_eq!(output, "host 10 12 13 14 variable 1 1 same mapped 1 1 1 polls 1 peer 5 6 9 10 17 18 21 22 ordered 8 9\n");
    let trace = &file.trace;
    // A peer copy to another device's context is not recorded; the one within the device is.
    let partial: Vec<(&str, &str)> = trace.partial.iter().map(|reason| (reason.call.as_str(), reason.reason.as_str())).collect();
    assert_eq!(partial, [("cuMemcpyPeer", "its work is not recorded")]);
    // The device heap's size the program set goes with the device, for the replay to set.
    assert_eq!(trace.devices[0].properties.get("cuda_limit.2").map(String::as_str), Some("134217728"));
    // The destroyed context's work closes before it goes; a query that found work still running
    // closes nothing, one that found it done closes that work (the stream queried had none).
    let ends: Vec<&str> = trace.segments.iter().map(|segment| segment.ended_by.as_str()).collect();
    // Stream-ordered frees close nothing: the last window closes at the synchronization.
    assert_eq!(ends, ["cuCtxDestroy_v2", "cuEventQuery", "cuCtxSynchronize"]);
    let kinds: Vec<(&MemKind, u64, u64)> = trace.memories.iter().map(|memory| (&memory.kind, memory.size, memory.flags)).collect();
    let counter = MemKind::Global { program: trace_format::ProgramId(0), name: "counter".into() };
    let buffer = |size| (&MemKind::Buffer, size, 0);
    // Each round's scratch memory is an object of its own (6 and 7), wherever it was allocated.
    assert_eq!(kinds, [buffer(16), (&MemKind::Host, 16, 2), (&counter, 16, 0), buffer(64), buffer(32), buffer(32), buffer(16), buffer(16)]);
    let copies: Vec<&trace_format::Copy> = trace
        .nodes
        .iter()
        .filter_map(|node| match &node.command {
            Work::Copy(copy) => Some(copy),
            _ => None,
        })
        .collect();
    let device = |mem| trace_format::Place::Memory { mem: trace_format::MemId(mem), offset: 0 };
    // The 3D copy keeps the host bytes up to the end of its last row: 1 slice, 2 rows and 3 ints in.
    let trace_format::Place::Host { data: Some(blob) } = copies[1].src else { panic!("the 3D copy keeps its host data: {:?}", copies[1]) };
    let volume: Vec<u8> = (0i32..23).flat_map(|value| value.to_ne_bytes()).collect();
    assert_eq!(file.blobs.get(blob).unwrap().as_ref(), &volume[..48 + 2 * 16 + 12]);
    let extent = trace_format::Extent::Rect {
        src_origin: [4, 1, 0],
        dst_origin: [0, 0, 0],
        region: [8, 2, 2],
        src_row_pitch: 16,
        src_slice_pitch: 48,
        dst_row_pitch: 8,
        dst_slice_pitch: 16,
    };
    assert_eq!((&copies[1].dst, &copies[1].extent), (&device(4), &extent));
    assert_eq!(copies.len(), 5);
    assert_eq!((&copies[2].src, &copies[2].dst, &copies[2].extent), (&device(4), &device(5), &trace_format::Extent::Linear { bytes: 32 }));
    let args: Vec<&Arg> = trace
        .nodes
        .iter()
        .filter_map(|node| match &node.command {
            Work::Kernel(launch) => Some(&launch.args[0]),
            _ => None,
        })
        .collect();
    let memory = |mem, offset| Arg::Memory { mem: trace_format::MemId(mem), offset };
    // The destroyed context's memory is forgotten: its address is a plain value.
    assert!(matches!(args[1], Arg::Value(_)), "{:?}", args[1]);
    assert_eq!(args.len(), 8);
    assert_eq!([args[0], args[2], args[3], args[4], args[5]], [&memory(0, 0), &memory(1, 4), &memory(2, 0), &memory(3, 8), &memory(3, 0)]);
    // What each window left (REPRISE_VERIFY=windows), read before the context was destroyed or
    // the query answered.
    let expected = |segment: usize, mem: u32| {
        let state = trace.segments[segment].expected.iter().find(|state| state.mem.0 == mem).expect("memory state");
        let bytes = file.blobs.get(state.blob).unwrap();
        bytes.chunks(4).map(|word| i32::from_ne_bytes(word.try_into().unwrap())).collect::<Vec<i32>>()
    };
    assert_eq!(expected(0, 0), [1, 1, 1, 1]);
    assert_eq!(expected(1, 1), [10, 12, 13, 14]);
    assert_eq!(expected(1, 2), [1, 1, 0, 0]);
    assert_eq!(expected(1, 5), [5, 6, 9, 10, 17, 18, 21, 22]);
    assert_eq!(expected(1, 3)[..4], [1, 0, 1, 1]);
    // A kernel may use its program's variables by name: the last window's kernels are not
    // passed the variable, and its contents are still kept. It was read once, before its
    // first use.
    let variable_reads: Vec<u32> = trace.segments.iter().enumerate().filter(|(_, segment)| segment.initial.iter().any(|state| state.mem.0 == 2)).map(|(index, _)| index as u32).collect();
    assert_eq!(variable_reads, [1]);
    assert_eq!(expected(2, 2), [1, 1, 0, 0]);
    // The scratch memory comes and goes in stream order inside the last window: no contents
    // before its allocation or after its free; what it left in the box is kept.
    let last: Vec<Work> = trace.nodes.iter().filter(|node| node.segment.0 == 2).map(|node| node.command.clone()).collect();
    let round = |mem| {
        let mem = trace_format::MemId(mem);
        [Work::MemAlloc { mem }, Work::Fill(trace_format::Fill { mem, offset: 0, bytes: 16, pattern: (7 + mem.0 - 6).to_ne_bytes().to_vec(), rows: None })]
    };
    assert_eq!(last[..2], round(6));
    assert!(matches!(last[2], Work::Kernel(_)) && matches!(last[3], Work::Copy(_)), "{last:?}");
    assert_eq!((&last[4], &last[5..7]), (&Work::MemFree { mem: trace_format::MemId(6) }, &round(7)[..]));
    assert_eq!(last[9], Work::MemFree { mem: trace_format::MemId(7) });
    let segment = &trace.segments[2];
    assert!(segment.initial.iter().chain(&segment.expected).all(|state| state.mem.0 < 6), "{segment:?}");
    assert_eq!(expected(2, 4), [8, 8, 8, 8, 9, 9, 9, 9]);
}

/// `test_driver/capture_program.c`: the program's captures end as they do natively (the test
/// double fails and invalidates a capture when legacy-stream work runs during it, as the shim's
/// reads used to be), work on other streams during a capture is recorded, and the captured work
/// (a joined stream's kernel too) is recorded as the graphs' launches only.
#[test]
fn a_program_capturing_streams_keeps_its_captures_and_its_other_work_is_recorded() {
    let (output, file) = TestProgram::build("capture_program").recorded();
    assert!(output.starts_with("captures ended with 0 0\n"), "{output}");
    assert!(output.ends_with("1 1 1 1 1 1 1 1 1 1 1 1 1 1 1 1 \n2 2 2 2 1 1 1 1 0 0 0 0 0 0 0 0 \n2 2 1 1 1 1 1 1 0 0 0 0 0 0 0 0 \n"), "{output}");
    let trace = &file.trace;
    assert!(trace.partial.is_empty(), "{:?}", trace.partial);
    let calls: Vec<&str> = trace.nodes.iter().map(|node| node.call.as_ref()).collect();
    assert_eq!(
        calls,
        // Synchronizing the non-blocking stream closes its two kernels and the copy on the legacy
        // stream that filled memory one of them uses (the program's timing ordered them: see
        // `EdgeKind::Memory`); the other copy on the legacy stream closes later.
        ["cuMemcpyHtoD_v2", "cuLaunchKernel", "cuLaunchKernel", "cuMemcpyHtoD_v2", "cuGraphLaunch", "cuGraphLaunch", "cuMemcpyDtoH_v2", "cuMemcpyDtoH_v2", "cuMemcpyDtoH_v2"]
    );
    let n_of = |command: &Work| match command {
        Work::Kernel(launch) => launch.args[1].clone(),
        other => panic!("not a kernel: {other:?}"),
    };
    let value = |n: i32| Arg::Value(n.to_ne_bytes().to_vec());
    // The kernel the joined stream launched is the first graph's second node, after the first.
    let Work::Subgraph(first) = &trace.nodes[4].command else { panic!("not a graph launch") };
    assert_eq!(first.nodes.iter().map(|node| n_of(&node.command)).collect::<Vec<_>>(), [value(4), value(8)]);
    assert_eq!(first.edges.len(), 1);
    let Work::Subgraph(second) = &trace.nodes[5].command else { panic!("not a graph launch") };
    assert_eq!(second.nodes.iter().map(|node| n_of(&node.command)).collect::<Vec<_>>(), [value(2)]);
    // c, first used by the kernel launched during the capture, was read then: all zeros.
    let Work::Kernel(during) = &trace.nodes[2].command else { panic!("not a kernel") };
    let Arg::Memory { mem: c, .. } = during.args[0] else { panic!("c is not memory: {:?}", during.args[0]) };
    let initial = trace.segments.iter().flat_map(|segment| &segment.initial).find(|state| state.mem == c).expect("c's initial contents");
    assert_eq!(file.blobs.get(initial.blob).unwrap().as_ref(), &[0u8; 64][..]);
}

/// `test_driver/graph_nodes_program.c`: a graph holding a node of every type the trace describes,
/// launched three times with the program's updates in between (node parameters, a disabled node,
/// a whole update), and a stream waiting for the graph's event.
#[test]
fn every_node_type_of_a_program_s_graph_and_every_update_are_recorded() {
    let (output, file) = TestProgram::build("graph_nodes_program").recorded();
    assert_eq!(output, "1 1 0 0 10 2 3 4 0 0 0 0 0 0 0 0 \n5 5 0 0 3 0 0 0 5 5 0 0 3 0 3 0 \nhost calls 2\n");
    let trace = &file.trace;
    assert!(trace.partial.is_empty(), "{:?}", trace.partial);
    let launches: Vec<(usize, &trace_format::Graph)> = trace
        .nodes
        .iter()
        .enumerate()
        .filter_map(|(id, node)| match &node.command {
            Work::Subgraph(graph) => Some((id, graph)),
            _ => None,
        })
        .collect();
    assert_eq!(launches.len(), 3);
    let kinds = |graph: &trace_format::Graph| graph.nodes.iter().map(|node| node.command.kind_name()).collect::<Vec<_>>();
    let all = ["mem_alloc", "kernel", "copy", "mem_free", "copy", "fill", "host_task", "event_record", "subgraph", "conditional", "conditional"];
    assert_eq!(kinds(launches[0].1), all);
    let mut disabled = all;
    disabled[6] = "barrier";
    assert_eq!(kinds(launches[1].1), disabled, "the host node is disabled in the second launch");
    assert_eq!(kinds(launches[2].1), all);
    let n = |graph: &trace_format::Graph| match &graph.nodes[1].command {
        Work::Kernel(launch) => launch.args[1].clone(),
        other => panic!("not a kernel: {other:?}"),
    };
    let value = |n: i32| Arg::Value(n.to_ne_bytes().to_vec());
    assert_eq!([n(launches[0].1), n(launches[1].1), n(launches[2].1)], [value(4), value(8), value(2)]);
    let fill = |graph: &trace_format::Graph| match &graph.nodes[5].command {
        Work::Fill(fill) => (fill.pattern.clone(), fill.rows),
        other => panic!("not a fill: {other:?}"),
    };
    assert_eq!(fill(launches[0].1), (5u32.to_ne_bytes().to_vec(), Some([32, 2, 2])));
    assert_eq!(fill(launches[1].1).0, 6u32.to_ne_bytes().to_vec());
    // The copy from pageable host memory takes what the host held at each launch.
    let host_data = |graph: &trace_format::Graph| match &graph.nodes[4].command {
        Work::Copy(trace_format::Copy { src: trace_format::Place::Host { data: Some(blob) }, .. }) => file.blobs.get(*blob).unwrap().to_vec(),
        other => panic!("not a copy from host data: {other:?}"),
    };
    let ints = |values: [i32; 4]| values.iter().flat_map(|value| value.to_ne_bytes()).collect::<Vec<u8>>();
    assert_eq!((host_data(launches[0].1), host_data(launches[1].1)), (ints([1, 2, 3, 4]), ints([10, 2, 3, 4])));
    // Each launch's allocation is a memory object of its own, which no segment has contents of.
    let allocated = |graph: &trace_format::Graph| match (&graph.nodes[0].command, &graph.nodes[3].command) {
        (Work::MemAlloc { mem }, Work::MemFree { mem: freed }) if mem == freed => *mem,
        other => panic!("not an allocation and its free: {other:?}"),
    };
    let scratch = [allocated(launches[0].1), allocated(launches[1].1), allocated(launches[2].1)];
    assert!(scratch[0] != scratch[1] && scratch[1] != scratch[2], "{scratch:?}");
    assert!(trace.memories.iter().enumerate().filter(|(id, _)| scratch.iter().any(|mem| mem.0 as usize == *id)).all(|(_, memory)| memory.kind == MemKind::StreamOrdered));
    let states = trace.segments.iter().flat_map(|segment| segment.initial.iter().chain(&segment.expected));
    assert!(states.clone().all(|state| !scratch.contains(&state.mem)), "{:?}", states.collect::<Vec<_>>());
    // The conditionals: reset to 1 at each launch; the WHILE body's last kernel sets its condition.
    let Work::Conditional(if_node) = &launches[0].1.nodes[9].command else { panic!("not a conditional") };
    let Work::Conditional(while_node) = &launches[0].1.nodes[10].command else { panic!("not a conditional") };
    assert_eq!((if_node.kind, if_node.default, if_node.bodies.len()), (trace_format::ConditionalKind::If, Some(1), 1));
    assert_eq!((while_node.kind, while_node.default), (trace_format::ConditionalKind::While, Some(1)));
    let Work::Kernel(setting) = &while_node.bodies[0].nodes[1].command else { panic!("not a kernel") };
    assert_eq!(setting.args[1], Arg::Condition(while_node.condition));
    assert_ne!(if_node.condition, while_node.condition);
    // The kernel of the stream that waited for the graph's event follows the first launch.
    let waiting = trace.nodes.iter().position(|node| matches!(node.command, Work::Kernel(_))).expect("the other stream's kernel");
    let first = launches[0].0 as u32;
    assert!(trace.edges.iter().any(|edge| (edge.from.0, edge.to.0, edge.kind) == (first, waiting as u32, EdgeKind::Event)), "{:?}", trace.edges);
}

/// `test_driver/stream_callbacks_program.c`: what the device copied into host memory, which
/// threads a stream callback started read and free, is kept as the data of the copies, taken
/// before the memory goes; every command is recorded although no thread waits for the streams.
#[test]
fn host_memory_a_callback_s_thread_frees_keeps_what_the_host_received() {
    let test = TestProgram::build("stream_callbacks_program");
    let (output, file) = test.recorded();
    assert_eq!(output, "workers passed\n");
    let trace = &file.trace;
    assert!(trace.partial.is_empty(), "{:?}", trace.partial);
    assert_eq!(trace.nodes.len(), 4 * 4, "copy in, kernel, copy out and callback of each worker");
    let mut received: Vec<i32> = trace
        .nodes
        .iter()
        .filter_map(|node| match &node.command {
            Work::Copy(trace_format::Copy { dst: trace_format::Place::Host { data }, .. }) => Some(data.expect("the received data is kept")),
            _ => None,
        })
        .map(|blob| {
            let ints: Vec<i32> = file.blobs.get(blob).unwrap().chunks(4).map(|bytes| i32::from_ne_bytes(bytes.try_into().unwrap())).collect();
            // Worker w's element i holds w + i + 1 after the kernel.
            assert!(ints.iter().enumerate().all(|(i, &value)| value == ints[0] + i as i32), "{:?}", &ints[..8]);
            ints[0] - 1
        })
        .collect();
    received.sort_unstable();
    assert_eq!(received, [0, 1, 2, 3]);
}

/// `test_driver/memory_order_program.c`: the copy and memset on the legacy stream that filled the
/// memory kernels of a non-blocking stream then used close with those kernels, before them, with
/// edges of kind `Memory`, as the program observed them.
#[test]
fn work_of_another_stream_the_host_s_timing_ordered_closes_first() {
    let test = TestProgram::build("memory_order_program");
    let (output, file) = test.recorded();
    assert_eq!(output, "1 16\n");
    let trace = &file.trace;
    let ends: Vec<&str> = trace.segments.iter().map(|segment| segment.ended_by.as_str()).collect();
    assert_eq!(ends, ["cuStreamSynchronize", "cuMemcpyDtoH_v2"]);
    let calls: Vec<(&str, u32)> = trace.nodes.iter().map(|node| (node.call.as_ref(), node.segment.0)).collect();
    assert_eq!(&calls[..4], [("cuMemcpyHtoD_v2", 0), ("cuMemsetD32_v2", 0), ("cuLaunchKernel", 0), ("cuLaunchKernel", 0)]);
    let memory_edges: Vec<(u32, u32)> = trace.edges.iter().filter(|edge| edge.kind == EdgeKind::Memory).map(|edge| (edge.from.0, edge.to.0)).collect();
    assert_eq!(memory_edges, [(0, 2), (1, 3)]);
}

/// `test_driver/private_memory_program.c`: device memory allocated where the shim cannot see it
/// (a library's private way to the driver) is adopted from the driver's pointer attributes, so
/// the fills, the kernel and the read that name it are recorded, not the trace marked partial.
#[test]
fn device_memory_allocated_out_of_sight_is_adopted() {
    let test = TestProgram::build("private_memory_program");
    let (output, file) = test.recorded();
    assert_eq!(output, "private 0 0 8 8 7 next 3 third 1 fourth 1\n");
    let trace = &file.trace;
    assert!(trace.partial.is_empty(), "{:?}", trace.partial);
    let kinds: Vec<(&MemKind, u64)> = trace.memories.iter().map(|memory| (&memory.kind, memory.size)).collect();
    // The third is adopted at the kernel that first names it, the fourth (one past the end of the
    // third) at the kernel that names it inside a structure; the second begins one past the end
    // of the first, and is an object of its own.
    assert_eq!(kinds, [(&MemKind::Buffer, 16), (&MemKind::Buffer, 16), (&MemKind::Buffer, 32), (&MemKind::Buffer, 16)]);
    let kernel_args: Vec<&Arg> = trace.nodes.iter().filter_map(|node| match &node.command { Work::Kernel(launch) => Some(&launch.args[0]), _ => None }).collect();
    let memory = |mem, offset| Arg::Memory { mem: trace_format::MemId(mem), offset };
    let image = [8u8, 0, 0, 0, 0, 0, 0, 0, 0x80, 0x02, 0, 0, 0xaa, 0x01, 0, 0];
    let Arg::ValueWithPointers { bytes, pointers } = kernel_args[1] else { panic!("the structure holds a pointer: {:?}", kernel_args[1]) };
    assert_eq!((&bytes[8..], pointers.as_slice()), (&image[8..], [trace_format::EmbeddedPointer { at: 0, mem: trace_format::MemId(1), offset: 0 }].as_slice()));
    assert_eq!([kernel_args[0], kernel_args[2]], [&memory(0, 0), &memory(2, 16)]);
}

/// `test_driver/reloaded_module_program.c`: a function handle the driver hands out again for a
/// kernel with other parameters is decoded with the new kernel's, not with the layout the shim
/// kept for the handle (nor with the launching thread's copy of it, which recorded its launches
/// without the recorder's lock).
#[test]
fn a_function_handle_handed_out_again_is_decoded_with_its_new_kernel_s_parameters() {
    a_reloaded_module_s_launches_are_decoded_with_its_own_parameters(false);
}

/// The same, where the program finds its kernels through a lookup the shim does not see: the
/// shim asks the driver what a launched handle is, and again once its module was unloaded.
#[test]
fn a_function_handle_the_shim_did_not_see_looked_up_is_identified_again_after_its_module_unloaded() {
    a_reloaded_module_s_launches_are_decoded_with_its_own_parameters(true);
}

fn a_reloaded_module_s_launches_are_decoded_with_its_own_parameters(unseen: bool) {
    let mut program = TestProgram::build("reloaded_module_program");
    if unseen {
        program.env.push(("UNSEEN", PathBuf::from("1")));
    }
    let (output, file) = program.recorded();
    assert_eq!(output, "same handle 1, words 6 6 3 3\n");
    let trace = &file.trace;
    assert!(trace.partial.is_empty(), "{:?}", trace.partial);
    let launches: Vec<&[Arg]> = trace.nodes.iter().filter_map(|node| match &node.command { Work::Kernel(launch) => Some(launch.args.as_slice()), _ => None }).collect();
    let count = |n: i32| Arg::Value(n.to_ne_bytes().to_vec());
    let before = [Arg::Memory { mem: trace_format::MemId(0), offset: 0 }, count(4)];
    assert_eq!(launches[..3], [&before[..], &before[..], &before[..]]);
    assert_eq!(launches.len(), 6);
    for (args, tag) in launches[3..].iter().zip([7i64, 7, 9]) {
        let [Arg::ValueWithPointers { bytes, pointers }, n] = args else { panic!("a structure and a count: {args:?}") };
        assert_eq!((bytes.len(), &bytes[8..], n), (16, &tag.to_ne_bytes()[..], &count(2)));
        assert_eq!(pointers.as_slice(), [trace_format::EmbeddedPointer { at: 0, mem: trace_format::MemId(0), offset: 0 }]);
    }
}

/// The same, where the shim sees neither the lookup nor the second module's loading: the handle
/// the driver hands out again is not taken for the unloaded kernel, and the trace says what it
/// left out.
#[test]
fn a_kernel_handle_reused_by_a_module_the_shim_did_not_see_loaded_is_not_taken_for_the_unloaded_kernel() {
    let mut program = TestProgram::build("reloaded_module_program");
    program.env.push(("UNSEEN", PathBuf::from("1")));
    program.env.push(("RELOAD_UNSEEN", PathBuf::from("1")));
    let (output, file) = program.recorded();
    assert_eq!(output, "same handle 1, words 6 6 3 3\n");
    let trace = &file.trace;
    let launches = trace.nodes.iter().filter(|node| matches!(node.command, Work::Kernel(_))).count();
    assert_eq!(launches, 3, "only the first module's launches: {:?} {:?} {:?}", trace.kernels, trace.programs, trace.partial);
    assert!(trace.partial.iter().any(|partial| partial.reason.contains("did not see loaded")), "{:?}", trace.partial);
}

/// `test_driver/failed_unload_program.c`: a module the driver refused to unload keeps its
/// variable tracked, so a later launch names it as memory, as the one before did.
#[test]
fn a_module_whose_unloading_failed_keeps_its_variables() {
    let mut program = TestProgram::build("failed_unload_program");
    program.env.push(("FAIL_UNLOAD", PathBuf::from("1")));
    let (output, file) = program.recorded();
    assert_eq!(output, "unload refused 1, counter 2 2 0 0\n");
    let trace = &file.trace;
    assert!(trace.partial.is_empty(), "{:?}", trace.partial);
    let first_args: Vec<&Arg> = trace.nodes.iter().filter_map(|node| match &node.command { Work::Kernel(launch) => Some(&launch.args[0]), _ => None }).collect();
    let variable = trace.memories.iter().position(|memory| matches!(&memory.kind, MemKind::Global { name, .. } if name == "counter")).expect("the variable is tracked");
    let named = Arg::Memory { mem: trace_format::MemId(variable as u32), offset: 0 };
    assert_eq!(first_args, [&named, &named]);
}

/// `test_driver/concurrent_reload_program.c`: a module loaded, and its kernel found, on one thread
/// while another thread's unload of the module whose handle it reuses is under way, is recorded:
/// the unload's clean-up comes before the new module's hooks, not after them.
#[test]
fn a_module_loaded_while_another_thread_unloads_its_handle_is_kept() {
    let mut program = TestProgram::build("concurrent_reload_program");
    program.env.push(("SLOW_UNLOAD", PathBuf::from("1")));
    let (output, file) = program.recorded();
    assert_eq!(output, "same handle 1, words 2 2 1 1\n");
    let trace = &file.trace;
    assert!(trace.partial.is_empty(), "{:?}", trace.partial);
    let kernels: Vec<trace_format::KernelId> = trace.nodes.iter().filter_map(|node| match &node.command { Work::Kernel(launch) => Some(launch.kernel), _ => None }).collect();
    assert_eq!(kernels.len(), 2);
    assert_ne!(trace.kernels[kernels[0].index()].program, trace.kernels[kernels[1].index()].program, "the second module's kernel is its own");
}

/// `test_driver/device_printf_program.c`: what kernels print reaches the program's stdout as
/// without the shim, and each window's lines are kept with its segment.
#[test]
fn what_kernels_print_is_kept_with_the_window_that_printed_it() {
    let (output, file) = TestProgram::build("device_printf_program").recorded();
    let device_lines = "device says 6\ndevice says 6\ndevice says 6\n";
    assert_eq!(output, format!("host before the first synchronization\n{device_lines}device says 7\ndevice says 7\nhost at the end\n"));
    let printed: Vec<Option<String>> = file
        .trace
        .segments
        .iter()
        .map(|segment| segment.printed.map(|text| String::from_utf8(file.blobs.get(text).unwrap().to_vec()).unwrap()))
        .collect();
    assert_eq!(printed, [Some(device_lines.to_string()), Some("device says 7\ndevice says 7\n".to_string())]);
}

/// `test_driver/host_writes_program.c` with `REPRISE_HOST_WRITES=watch`: pinned memory is read
/// once; what the host wrote into it later comes as host writes of the window that next uses
/// it, a write from a thread that blocks every signal included. A count registered on the stack
/// is never watched (read again at each window instead), and the program runs to its end.
#[test]
fn what_the_host_writes_into_pinned_memory_is_seen_page_by_page() {
    let mut test = TestProgram::build("host_writes_program");
    test.env.push(("REPRISE_HOST_WRITES", PathBuf::from("watch")));
    let (output, file) = test.recorded();
    assert_eq!(output, "pinned 3 7 40, on the stack 4\n");
    let trace = &file.trace;
    assert_eq!(trace.segments.len(), 5);
    let initial: Vec<usize> = trace.segments.iter().map(|segment| segment.initial.len()).collect();
    assert_eq!(initial, [1, 0, 0, 1, 1], "pinned memory read once, the count on the stack at each window");
    let written = |segment: usize, index: usize| -> Option<i32> {
        let place = index as u64 * 4;
        trace.segments[segment].host_writes.iter().rev().find_map(|write| {
            let bytes = file.blobs.get(write.blob).unwrap();
            let at = usize::try_from(place.checked_sub(write.offset)?).ok().filter(|&at| at + 4 <= bytes.len())?;
            Some(i32::from_ne_bytes(bytes[at..at + 4].try_into().unwrap()))
        })
    };
    assert_eq!((written(1, 1024 + 5), written(1, 2048)), (Some(7), Some(40)));
    assert_eq!(written(2, 2048), None, "nothing wrote that page again");
}

/// `test_driver/device_assert_program.c`: the synchronization after a kernel that asserted on
/// the device fails; its window closes there with that outcome, for the replay to reproduce.
#[test]
fn a_synchronization_failing_with_a_device_fault_ends_its_window_with_that_outcome() {
    let (output, file) = TestProgram::build("device_assert_program").recorded();
    assert_eq!(output, "synchronizations 0 710\n");
    let outcomes: Vec<(&str, Option<&str>)> = file.trace.segments.iter().map(|segment| (segment.ended_by.as_str(), segment.failed_with.as_deref())).collect();
    assert_eq!(outcomes, [("cuCtxSynchronize", None), ("cuCtxSynchronize", Some("CUDA_ERROR_ASSERT"))]);
    assert_eq!(file.trace.nodes.len(), 3, "the fill and two launches");
}

/// `test_driver/repeated_launches_program.c`: launches repeated with the same bytes are
/// recorded alike, and once the memory they name was freed and allocated again at the same
/// address, they name the new allocation; ten thousand launches that the shim records off the
/// program's thread (`launch_log`), and on it while that thread falls behind, are all in the
/// window their synchronization closes, in order.
#[test]
fn a_launch_repeated_after_its_memory_came_back_names_the_new_memory() {
    let (output, file) = TestProgram::build("repeated_launches_program").recorded();
    assert_eq!(output, "first 2 2 second 2 1 same address 1\nafter the loop 10002 5002\n");
    let trace = &file.trace;
    assert!(trace.partial.is_empty(), "{:?}", trace.partial);
    let kernels: Vec<(&[Arg], u32)> =
        trace.nodes.iter().filter_map(|node| match &node.command { Work::Kernel(launch) => Some((launch.args.as_slice(), node.segment.0)), _ => None }).collect();
    let memory = |mem| Arg::Memory { mem: trace_format::MemId(mem), offset: 0 };
    let count = |n: i32| Arg::Value(n.to_ne_bytes().to_vec());
    let args: Vec<&[Arg]> = kernels.iter().map(|(args, _)| *args).collect();
    assert_eq!(args[..4], [[memory(0), count(4)], [memory(0), count(4)], [memory(1), count(4)], [memory(1), count(3)]]);
    assert_eq!(trace.memories.len(), 2);
    let looped = &kernels[4..];
    assert_eq!(looped.len(), 10000);
    let ended = trace.segments.iter().position(|segment| segment.ended_by == "cuStreamSynchronize").expect("the loop's window") as u32;
    for (index, (args, segment)) in looped.iter().enumerate() {
        assert_eq!((*args, *segment), ([memory(1), count(1 + index as i32 % 2)].as_slice(), ended), "launch {index} of the loop");
    }
    let in_segment: Vec<u32> = trace.nodes.iter().enumerate().filter(|(_, node)| node.segment.0 == ended).map(|(index, _)| index as u32).collect();
    let chained = trace.edges.iter().filter(|edge| edge.kind == EdgeKind::InOrder && in_segment.contains(&edge.to.0) && edge.from.0 + 1 == edge.to.0).count();
    assert_eq!(chained, in_segment.len() - 1, "each node of the window follows the one before");
}

/// `test_driver/forked_launches_program.c`: a fork among launches recorded off the program's
/// thread neither hangs the child nor gives it what the parent worked out; the parent's trace
/// holds all of its own launches, each process writing its own trace (`%p`).
#[test]
fn a_fork_among_logged_launches_leaves_each_process_its_own_trace() {
    let mut test = TestProgram::build("forked_launches_program");
    let traces = test.dir.join("trace.%p");
    test.env.push(("REPRISE_OUTPUT", traces.clone()));
    let (native, recorded) = (test.run(false), test.run(true));
    let (native, recorded) = (String::from_utf8_lossy(&native.stdout).into_owned(), String::from_utf8_lossy(&recorded.stdout).into_owned());
    let without_pids = |output: &str| output.lines().filter(|line| !line.starts_with("pids")).collect::<Vec<_>>().join("\n");
    assert_eq!(without_pids(&recorded), without_pids(&native));
    assert_eq!(without_pids(&recorded), "child 150\nparent 200 child exit 0");
    let pids: Vec<&str> = recorded.lines().find_map(|line| line.strip_prefix("pids ")).expect("the pids").split(' ').collect();
    let trace_of = |pid: &str| trace_format::read_trace(&test.dir.join(format!("trace.{pid}"))).expect("a readable trace").trace;
    let (parent, child) = (trace_of(pids[0]), trace_of(pids[1]));
    let kernels = |trace: &trace_format::Trace| trace.nodes.iter().filter(|node| matches!(node.command, Work::Kernel(_))).count();
    assert!(parent.partial.is_empty(), "{:?}", parent.partial);
    assert_eq!(kernels(&parent), 200);
    // The child's recorder met the memory and stream after the fork: whatever it recorded names
    // only what its own trace holds.
    for node in &child.nodes {
        if let Work::Kernel(launch) = &node.command {
            for arg in &launch.args {
                if let Arg::Memory { mem, .. } = arg {
                    assert!((mem.0 as usize) < child.memories.len(), "{arg:?} in the child's trace of {} memories", child.memories.len());
                }
            }
        }
    }
}

/// `test_driver/deferred_windows_program.c`: a window that reads nothing as it closes is closed
/// on the shim's thread, after the host already wrote the pinned memory it used again: that
/// write is the next window's, each window's host writes are those made before its copy. A
/// window delivering data into host memory closes before its synchronization returns, with what
/// the device sent, not what the host wrote there next; so does one whose kernel writes memory the
/// host reads directly, with what the kernel left there.
#[test]
fn what_the_host_writes_after_a_window_closing_later_is_the_next_window_s() {
    let mut test = TestProgram::build("deferred_windows_program");
    test.env.push(("REPRISE_HOST_WRITES", PathBuf::from("watch")));
    test.env.push(("REPRISE_LOG", PathBuf::from("info")));
    let (output, file) = test.recorded();
    assert_eq!(output, "rounds 50\n");
    let log = String::from_utf8_lossy(&test.run(true).stderr).into_owned();
    assert!(log.contains("info: 50 windows were closed later;"), "the first loop's windows, and no other: {log}");
    let trace = &file.trace;
    assert!(trace.partial.is_empty(), "{:?}", trace.partial);
    assert_eq!(trace.segments.len(), 150);
    let word = |blob: trace_format::BlobId, at: usize| i32::from_ne_bytes(file.blobs.get(blob).unwrap()[at..at + 4].try_into().unwrap());
    for round in 1..50 {
        let writes: Vec<i32> = trace.segments[round].host_writes.iter().filter(|write| write.offset == 0).map(|write| word(write.blob, 0)).collect();
        // The test double's pinned memory shares its page with the heap, which the driver's own
        // allocations write too: the page may be taken more than once, each time as it was.
        assert!(!writes.is_empty() && writes.iter().all(|&value| value == round as i32), "the host writes of round {round}'s window: {writes:?}");
    }
    for round in 0..50 {
        let segment = 50 + round as u32;
        let received: Vec<i32> = trace
            .nodes
            .iter()
            .filter(|node| node.segment.0 == segment)
            .filter_map(|node| match &node.command {
                Work::Copy(trace_format::Copy { dst: trace_format::Place::Host { data: Some(blob) }, .. }) => Some(word(*blob, 0)),
                _ => None,
            })
            .collect();
        assert_eq!(received, [52 + round; 2], "what round {round}'s copies into pinned and pageable memory received");
    }
    for round in 0..50 {
        let expected: Vec<i32> = trace.segments[100 + round].expected.iter().filter(|state| file.blobs.get(state.blob).unwrap().len() == 4096).map(|state| word(state.blob, 8)).collect();
        assert_eq!(expected, [if round == 0 { 1 } else { 0 }], "the pinned word round {round}'s kernel wrote, as the device left it");
    }
}

/// `test_driver/uncaptured_queries_program.c` with `REPRISE_CAPTURE=1-`: outside the capture
/// range, a query answering "not ready" ends no window (9c0328e counted one there), so the range
/// starts where the program's windows do.
#[test]
fn a_query_answering_not_ready_outside_the_capture_counts_no_window() {
    let mut test = TestProgram::build("uncaptured_queries_program");
    test.env.push(("REPRISE_CAPTURE", PathBuf::from("1-")));
    let (output, file) = test.recorded();
    assert_eq!(output, "queries 600 0\n");
    let ordinals: Vec<u64> = file.trace.segments.iter().map(|segment| segment.ordinal).collect();
    assert_eq!(ordinals, [1], "the launch after the query that answered done");
    let kernels = file.trace.nodes.iter().filter(|node| matches!(node.command, Work::Kernel(_))).count();
    assert_eq!(kernels, 1);
}
