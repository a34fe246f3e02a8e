//! The program's own graphs: scripted graphs of fake node descriptions (test doubles for what the
//! driver reports when a graph is instantiated; no GPU here) turned into the trace's graph at
//! each launch, with the updates the program makes to the executable graph in between.

use super::arrays::Arrays;
use super::graphs::{linear_copy, Condition, ConditionalNode, ExecGraph, KernelNode, NodeRead, ReadGraph};
use super::memory::allocation;
use super::rect::Memcpy3D;
use super::streams::LEGACY;
use super::tests::{launch_arguments, recorder, submit, write, CollectingSink, FakeDeviceMemory, FUNCTION, GRID, SIZE, X, Y};
use crate::recorder::{Access, HostWrites, Key, MemDesc, MemShape, Recorder};
use trace_format::{
    Arg, Command, Conditional, ConditionalKind, Copy, Edge, EdgeKind, Extent, Fill, Graph, HostTaskKind, KernelLaunch, MemId, MemKind, NodeId, Place,
    Record,
};

const FAKE_MEMSET_NODE: Key = 0x9000_0010;
const FAKE_KERNEL_NODE: Key = 0x9000_0020;
const FAKE_EMPTY_NODE: Key = 0x9000_0030;
const FAKE_CHILD_NODE: Key = 0x9000_0040;
const FAKE_CHILD_KERNEL_NODE: Key = 0x9000_0050;
const FAKE_MEMCPY_NODE: Key = 0x9000_0060;
const FAKE_HOST_NODE: Key = 0x9000_0070;
const FAKE_CONDITIONAL_NODE: Key = 0x9000_0080;
const FAKE_ALLOC_NODE: Key = 0x9000_0090;
const FAKE_FREE_NODE: Key = 0x9000_00a0;
/// A condition handle as the driver might give one.
const HANDLE: u64 = 0x0c0d_e000_0001;
/// Where the graph's own allocation lies in every launch.
const GRAPH_MEMORY: u64 = 0x7f00_0010_0000;

/// A fake kernel node of `FUNCTION(int *data, int n)`.
fn fake_kernel_node(pointer: u64, n: i32) -> KernelNode {
    KernelNode { function: FUNCTION, launch: GRID, arguments: Some(launch_arguments(pointer, n)), variables: Vec::new() }
}

/// memset Y -> kernel(X, 1) -> empty -> child graph { kernel(Y, 3) }.
fn fake_graph() -> ReadGraph {
    let child = ReadGraph { nodes: vec![(FAKE_CHILD_KERNEL_NODE, NodeRead::Kernel(fake_kernel_node(Y, 3)))], edges: vec![] };
    ReadGraph {
        nodes: vec![
            (FAKE_MEMSET_NODE, NodeRead::Memset { dst: Y, pitch: 0, pattern: vec![0xab], width: SIZE as usize, height: 1 }),
            (FAKE_KERNEL_NODE, NodeRead::Kernel(fake_kernel_node(X, 1))),
            (FAKE_EMPTY_NODE, NodeRead::Empty),
            (FAKE_CHILD_NODE, NodeRead::Child(child)),
        ],
        edges: vec![(FAKE_MEMSET_NODE, FAKE_KERNEL_NODE), (FAKE_KERNEL_NODE, FAKE_EMPTY_NODE), (FAKE_EMPTY_NODE, FAKE_CHILD_NODE)],
    }
}

fn one_node(handle: Key, node: NodeRead) -> ExecGraph {
    ExecGraph::new(ReadGraph { nodes: vec![(handle, node)], edges: vec![] })
}

fn kernel(mem: u32, n: i32) -> Command {
    let args = vec![Arg::Memory { mem: MemId(mem), offset: 0 }, Arg::Value(n.to_ne_bytes().to_vec())];
    Command::Kernel(KernelLaunch { kernel: trace_format::KernelId(0), args, launch: GRID })
}

fn event_edge(from: u32, to: u32) -> Edge {
    Edge { from: NodeId(from), to: NodeId(to), kind: EdgeKind::Event }
}

/// Launches the graph on the legacy stream as `graph_hooks::launch` does.
fn launch(recorder: &mut Recorder, device: &FakeDeviceMemory, exec: &ExecGraph) {
    let launched = exec.launched(recorder, &Arrays::default(), "cuGraphLaunch", None);
    submit(recorder, device, LEGACY, &launched.accesses, |_| launched.command);
}

fn commands(graph: &Graph) -> Vec<Command> {
    graph.nodes.iter().map(|node| node.command.clone()).collect()
}

/// The launch's graph.
fn launched_graph(recorder: &mut Recorder, exec: &ExecGraph) -> Graph {
    match exec.launched(recorder, &Arrays::default(), "cuGraphLaunch", None).command {
        Command::Subgraph(graph) => graph,
        other => panic!("not a sub-graph: {other:?}"),
    }
}

fn partial_reasons(sink: &CollectingSink) -> Vec<String> {
    let written = sink.0.lock().unwrap();
    written.0.iter().filter_map(|record| match record { Record::Partial(reason) => Some(reason.reason.clone()), _ => None }).collect()
}

#[test]
fn a_launched_graph_is_one_subgraph_node_and_follows_kernel_node_updates() {
    let sink = CollectingSink::default();
    let mut recorder = recorder(&sink);
    let device = FakeDeviceMemory::default();
    device.contents.borrow_mut().extend([(X, vec![1; SIZE as usize]), (Y, vec![2; SIZE as usize])]);

    let mut exec = ExecGraph::new(fake_graph());
    assert_eq!(exec.launched(&mut recorder, &Arrays::default(), "cuGraphLaunch", None).accesses, vec![write(Y), write(X), write(Y)]);
    launch(&mut recorder, &device, &exec);
    assert!(exec.set(FAKE_KERNEL_NODE, NodeRead::Kernel(fake_kernel_node(X, 2))));
    launch(&mut recorder, &device, &exec);
    recorder.host_sync("cuStreamSynchronize", crate::recorder::SyncScope::Everything, &device);

    let written = sink.0.lock().unwrap();
    let launches: Vec<&Graph> = written.0.iter().filter_map(|record| match record {
        Record::Node(node) => match &node.command { Command::Subgraph(graph) => Some(graph), _ => None },
        _ => None,
    }).collect();
    assert_eq!(launches.len(), 2);
    let fill = Command::Fill(Fill { mem: MemId(0), offset: 0, bytes: SIZE, pattern: vec![0xab], rows: None });
    for (launched, n) in launches.iter().zip([1, 2]) {
        let [memset, kernel_node, empty, Command::Subgraph(child_graph)] = &commands(launched)[..] else { panic!("not 4 nodes ending in a child graph") };
        assert_eq!((memset, kernel_node, empty), (&fill, &kernel(1, n), &Command::Barrier));
        assert_eq!(commands(child_graph), vec![kernel(0, 3)]);
        assert_eq!(launched.edges, vec![event_edge(0, 1), event_edge(1, 2), event_edge(2, 3)]);
    }
    // Trace ids follow first use: Y (the memset's) is memory 0, X memory 1; both initial states kept.
    let initial: Vec<u32> = written.0.iter().filter_map(|record| match record { Record::InitialState { state, .. } => Some(state.mem.0), _ => None }).collect();
    assert_eq!(initial, vec![0, 1]);
    let in_order = Edge { from: NodeId(0), to: NodeId(1), kind: EdgeKind::InOrder };
    assert!(written.0.contains(&Record::Edge(in_order)), "the second launch follows the first on its stream");
}

#[test]
fn an_undescribable_node_is_a_barrier_and_marks_the_trace_partial() {
    let sink = CollectingSink::default();
    let mut recorder = recorder(&sink);
    let read = ReadGraph { nodes: vec![(FAKE_MEMSET_NODE, NodeRead::Unsupported("a fake semaphore node"))], edges: vec![(FAKE_MEMSET_NODE, FAKE_KERNEL_NODE)] };
    let graph = launched_graph(&mut recorder, &ExecGraph::new(read));
    assert_eq!(commands(&graph), vec![Command::Barrier]);
    assert!(graph.edges.is_empty());
    drop(recorder);
    let reasons = partial_reasons(&sink);
    assert!(reasons.iter().any(|reason| reason == "a fake semaphore node"), "{reasons:?}");
    assert!(reasons.iter().any(|reason| reason.contains("does not list")), "{reasons:?}");
}

#[test]
fn a_device_memcpy_node_of_one_row_is_a_linear_copy_reading_its_source() {
    let sink = CollectingSink::default();
    let mut recorder = recorder(&sink);
    let exec = one_node(FAKE_MEMCPY_NODE, NodeRead::Copy(linear_copy(X + 8, Y, 16)));
    let copy = Copy { src: Place::Memory { mem: MemId(0), offset: 8 }, dst: Place::Memory { mem: MemId(1), offset: 0 }, extent: Extent::Linear { bytes: 16 } };
    assert_eq!(commands(&launched_graph(&mut recorder, &exec)), vec![Command::Copy(copy)]);
    assert_eq!(exec.launched(&mut recorder, &Arrays::default(), "cuGraphLaunch", None).accesses, vec![Access { mem: X, write: false, overwrites: false }, write(Y)]);
}

/// `CU_MEMORYTYPE_HOST`.
const HOST_MEMORY: u32 = 1;

#[test]
fn memcpy_nodes_with_host_ends_read_host_data_at_each_launch_and_name_pinned_memory() {
    let sink = CollectingSink::default();
    let mut recorder = recorder(&sink);
    // Pageable host data, copied to X; pinned memory (tracked) copied into, 2 rows of 8 bytes.
    let mut pageable = vec![1u8; 16];
    let pinned = [0u8; 64];
    let pinned_address = pinned.as_ptr() as u64;
    recorder.memory_created(pinned_address, MemDesc { shape: MemShape::Whole(MemKind::Host), host_writes: HostWrites::Unseen, ..allocation(pinned_address, 64, None) });
    let to_device = Memcpy3D { src_memory_type: HOST_MEMORY, src_host: pageable.as_ptr() as usize, src_device: 0, ..linear_copy(0, X, 16) };
    let to_pinned = Memcpy3D { dst_memory_type: HOST_MEMORY, dst_host: pinned_address as usize, dst_device: 0, dst_pitch: 32, src_pitch: 8, height: 2, ..linear_copy(Y, 0, 8) };
    let to_pageable = Memcpy3D { dst_memory_type: HOST_MEMORY, dst_host: pageable.as_mut_ptr() as usize, dst_device: 0, ..linear_copy(Y, 0, 16) };
    let read = ReadGraph { nodes: vec![(1, NodeRead::Copy(to_device)), (2, NodeRead::Copy(to_pinned)), (3, NodeRead::Copy(to_pageable))], edges: vec![] };
    let exec = ExecGraph::new(read);
    let host_data = |recorder: &mut Recorder| match &commands(&launched_graph(recorder, &exec))[0] {
        Command::Copy(Copy { src: Place::Host { data: Some(blob) }, .. }) => *blob,
        other => panic!("not a copy from host data: {other:?}"),
    };
    let first = host_data(&mut recorder);
    pageable.fill(2);
    let second = host_data(&mut recorder);
    assert_ne!(first, second, "each launch copies what the host memory holds then");
    let [_, Command::Copy(into_pinned), Command::Copy(into_pageable)] = &commands(&launched_graph(&mut recorder, &exec))[..] else { panic!("three copies") };
    let pinned_mem = recorder.mem_id(pinned_address).unwrap();
    assert_eq!(into_pinned.dst, Place::Memory { mem: pinned_mem, offset: 0 });
    assert!(matches!(into_pinned.extent, Extent::Rect { region: [8, 2, 1], dst_row_pitch: 32, .. }), "{:?}", into_pinned.extent);
    // What the graph delivers to pageable memory its host code may consume before the host waits:
    // it is not kept for comparison.
    assert_eq!(into_pageable.dst, Place::Host { data: None });
    let accesses = exec.launched(&mut recorder, &Arrays::default(), "cuGraphLaunch", None).accesses;
    assert!(accesses.contains(&write(pinned_address)), "{accesses:?}");
}

#[test]
fn host_2d_memset_and_disabled_nodes() {
    let sink = CollectingSink::default();
    let mut recorder = recorder(&sink);
    let read = ReadGraph {
        nodes: vec![
            (FAKE_HOST_NODE, NodeRead::Host),
            (FAKE_MEMSET_NODE, NodeRead::Memset { dst: X, pitch: 64, pattern: vec![1, 0], width: 4, height: 3 }),
            (FAKE_KERNEL_NODE, NodeRead::Kernel(fake_kernel_node(Y, 1))),
        ],
        edges: vec![(FAKE_HOST_NODE, FAKE_MEMSET_NODE)],
    };
    let mut exec = ExecGraph::new(read);
    let graph = launched_graph(&mut recorder, &exec);
    assert_eq!(graph.nodes[0].command, Command::HostTask(HostTaskKind::HostFunction));
    let Command::Fill(fill) = &graph.nodes[1].command else { panic!("not a fill") };
    assert_eq!((fill.rows, fill.bytes), (Some([64, 4, 3]), 2 * 64 + 8));
    assert!(exec.set_enabled(FAKE_KERNEL_NODE, false));
    assert!(!exec.set_enabled(0x1234, false), "a node of another graph");
    let graph = launched_graph(&mut recorder, &exec);
    assert_eq!(graph.nodes[2].command, Command::Barrier);
    assert!(!exec.launched(&mut recorder, &Arrays::default(), "cuGraphLaunch", None).accesses.contains(&write(Y)), "a disabled kernel uses no memory");
    assert!(exec.set_enabled(FAKE_KERNEL_NODE, true));
    assert!(matches!(launched_graph(&mut recorder, &exec).nodes[2].command, Command::Kernel(_)));
}

#[test]
fn a_conditional_keeps_its_bodies_and_the_kernels_setting_it_pass_its_condition() {
    let sink = CollectingSink::default();
    let mut recorder = recorder(&sink);
    // set(X, handle) -> while (condition 4, reset to 1 at each launch) { step(X, handle) }.
    let sets = |handle: u64| {
        let (_, mut arguments) = launch_arguments(X, 0);
        arguments[1] = handle.to_ne_bytes().to_vec();
        KernelNode { arguments: Some((vec![(0, 8), (8, 8)].into(), arguments)), ..fake_kernel_node(X, 0) }
    };
    let body = ReadGraph { nodes: vec![(FAKE_CHILD_KERNEL_NODE, NodeRead::Kernel(sets(HANDLE)))], edges: vec![] };
    let condition = Condition { number: 4, default: Some(1) };
    let conditional = ConditionalNode { handle: HANDLE, kind: ConditionalKind::While, condition, bodies: vec![body] };
    let read = ReadGraph {
        nodes: vec![(FAKE_KERNEL_NODE, NodeRead::Kernel(sets(HANDLE))), (FAKE_CONDITIONAL_NODE, NodeRead::Conditional(conditional))],
        edges: vec![(FAKE_KERNEL_NODE, FAKE_CONDITIONAL_NODE)],
    };
    let mut exec = ExecGraph::new(read);
    let graph = launched_graph(&mut recorder, &exec);
    let Command::Kernel(setting) = &graph.nodes[0].command else { panic!("not a kernel") };
    assert_eq!(setting.args[1], Arg::Condition(4));
    let Command::Conditional(Conditional { kind: ConditionalKind::While, condition: 4, default: Some(1), bodies }) = &graph.nodes[1].command else {
        panic!("not the conditional: {:?}", graph.nodes[1].command)
    };
    let [body] = &bodies[..] else { panic!("one body") };
    let Command::Kernel(in_body) = &body.nodes[0].command else { panic!("not a kernel") };
    assert_eq!(in_body.args[1], Arg::Condition(4));
    // A kernel passing another 8-byte value keeps it; one in a body is reached by its handle.
    assert!(exec.set(FAKE_CHILD_KERNEL_NODE, NodeRead::Kernel(sets(HANDLE + 1))));
    let Command::Conditional(conditional) = &launched_graph(&mut recorder, &exec).nodes[1].command else { panic!("not the conditional") };
    let Command::Kernel(in_body) = &conditional.bodies[0].nodes[0].command else { panic!("not a kernel") };
    assert_eq!(in_body.args[1], Arg::Value((HANDLE + 1).to_ne_bytes().to_vec()));
}

#[test]
fn graph_allocations_are_memory_of_their_own_with_no_contents_read() {
    let sink = CollectingSink::default();
    let mut recorder = recorder(&sink);
    let read = ReadGraph {
        nodes: vec![
            (FAKE_ALLOC_NODE, NodeRead::Alloc { address: GRAPH_MEMORY, size: 64 }),
            (FAKE_KERNEL_NODE, NodeRead::Kernel(fake_kernel_node(GRAPH_MEMORY + 16, 1))),
            (FAKE_MEMCPY_NODE, NodeRead::Copy(linear_copy(GRAPH_MEMORY, X, 64))),
            (FAKE_FREE_NODE, NodeRead::Free { address: GRAPH_MEMORY }),
        ],
        edges: vec![(FAKE_ALLOC_NODE, FAKE_KERNEL_NODE), (FAKE_KERNEL_NODE, FAKE_MEMCPY_NODE), (FAKE_MEMCPY_NODE, FAKE_FREE_NODE)],
    };
    let exec = ExecGraph::new(read);
    assert_eq!(exec.allocations(), (vec![(GRAPH_MEMORY, 64)], vec![GRAPH_MEMORY]));
    let launched = exec.launched(&mut recorder, &Arrays::default(), "cuGraphLaunch", None);
    assert_eq!(launched.accesses, vec![write(X)], "the graph's own memory is never read");
    let graph_memory = recorder.mem_id(GRAPH_MEMORY).unwrap();
    let Command::Subgraph(graph) = launched.command else { panic!("not a sub-graph") };
    assert_eq!(graph.nodes[0].command, Command::MemAlloc { mem: graph_memory });
    let Command::Kernel(kernel) = &graph.nodes[1].command else { panic!("not a kernel") };
    assert_eq!(kernel.args[0], Arg::Memory { mem: graph_memory, offset: 16 });
    assert_eq!(graph.nodes[3].command, Command::MemFree { mem: graph_memory });
    assert!(partial_reasons(&sink).is_empty());
}

#[test]
fn an_address_a_graph_allocates_twice_is_two_memory_objects() {
    let sink = CollectingSink::default();
    let mut recorder = recorder(&sink);
    // alloc A -> kernel(A) -> free A -> alloc A again -> kernel(A) -> free A.
    let nodes = [
        NodeRead::Alloc { address: GRAPH_MEMORY, size: 64 },
        NodeRead::Kernel(fake_kernel_node(GRAPH_MEMORY, 1)),
        NodeRead::Free { address: GRAPH_MEMORY },
        NodeRead::Alloc { address: GRAPH_MEMORY, size: 64 },
        NodeRead::Kernel(fake_kernel_node(GRAPH_MEMORY, 2)),
        NodeRead::Free { address: GRAPH_MEMORY },
    ];
    let handles: Vec<Key> = (0..nodes.len() as Key).collect();
    let edges = handles.windows(2).map(|pair| (pair[0], pair[1])).collect();
    let exec = ExecGraph::new(ReadGraph { nodes: handles.iter().copied().zip(nodes).collect(), edges });
    let graph = launched_graph(&mut recorder, &exec);
    let mem = |index: usize| match &graph.nodes[index].command {
        Command::MemAlloc { mem } | Command::MemFree { mem } => *mem,
        Command::Kernel(launch) => match launch.args[0] { Arg::Memory { mem, .. } => mem, ref other => panic!("not memory: {other:?}") },
        other => panic!("unexpected {other:?}"),
    };
    assert_eq!([mem(0), mem(1), mem(2)], [mem(0); 3]);
    assert_eq!([mem(3), mem(4), mem(5)], [mem(3); 3]);
    assert_ne!(mem(0), mem(3));
}

#[test]
fn a_graph_reusing_a_freed_address_is_read_in_dependency_order() {
    let sink = CollectingSink::default();
    let mut recorder = recorder(&sink);
    // graphMemoryNodes: alloc A -> kernel(A) -> free A -> alloc A again (kept after the graph),
    // listed by the driver with the second allocation before the free.
    let nodes = vec![
        (0, NodeRead::Alloc { address: GRAPH_MEMORY, size: 64 }),
        (3, NodeRead::Alloc { address: GRAPH_MEMORY, size: 64 }),
        (1, NodeRead::Kernel(fake_kernel_node(GRAPH_MEMORY, 1))),
        (2, NodeRead::Free { address: GRAPH_MEMORY }),
    ];
    let read = ReadGraph::new(nodes, vec![(0, 1), (1, 2), (2, 3)]);
    assert_eq!(read.nodes.iter().map(|(handle, _)| *handle).collect::<Vec<_>>(), [0, 1, 2, 3]);
    let exec = ExecGraph::new(read);
    assert_eq!(exec.allocations(), (vec![(GRAPH_MEMORY, 64); 2], vec![]), "the address stays allocated after the graph");
    let graph = launched_graph(&mut recorder, &exec);
    let Command::MemAlloc { mem: kept } = graph.nodes[3].command else { panic!("not an allocation") };
    assert_eq!(recorder.mem_id(GRAPH_MEMORY), Some(kept), "the address names the second allocation after the graph");
    assert!(partial_reasons(&sink).is_empty());
}

#[test]
fn event_nodes_name_the_trace_s_event_numbers_and_updates_keep_the_instantiated_handles() {
    let sink = CollectingSink::default();
    let mut recorder = recorder(&sink);
    let read = |number| ReadGraph {
        nodes: vec![
            (FAKE_KERNEL_NODE, NodeRead::EventRecord { event: 0xe1, number }),
            (FAKE_EMPTY_NODE, NodeRead::EventWait { event: 0xe2, number: number + 1 }),
        ],
        edges: vec![],
    };
    let exec = ExecGraph::new(read(3));
    assert_eq!(exec.events(), (vec![0xe1], vec![0xe2]));
    assert_eq!(commands(&launched_graph(&mut recorder, &exec)), vec![Command::EventRecord { event: 3 }, Command::EventWait { event: 4 }]);
    // A whole update from a graph whose nodes have other handles: the instantiated graph's handles
    // still name its nodes.
    let other = ReadGraph { nodes: read(5).nodes.into_iter().map(|(handle, node)| (handle + 1, node)).collect(), edges: vec![] };
    let mut updated = exec.updated(other);
    assert_eq!(commands(&launched_graph(&mut recorder, &updated)), vec![Command::EventRecord { event: 5 }, Command::EventWait { event: 6 }]);
    assert!(updated.set(FAKE_KERNEL_NODE, NodeRead::Empty));
    assert_eq!(commands(&launched_graph(&mut recorder, &updated))[0], Command::Barrier);
}

#[test]
fn a_kernel_node_uses_the_variables_of_its_program_as_a_launch_does() {
    let sink = CollectingSink::default();
    let mut recorder = recorder(&sink);
    // Y stands for a variable the kernel reaches by name: no parameter points at it.
    let node = KernelNode { variables: vec![Y], ..fake_kernel_node(X, 1) };
    let exec = one_node(FAKE_KERNEL_NODE, NodeRead::Kernel(node));
    assert_eq!(exec.launched(&mut recorder, &Arrays::default(), "cuGraphLaunch", None).accesses, vec![write(X), write(Y)]);
}
