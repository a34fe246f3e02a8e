//! The program's own graphs: a scripted graph of fake node descriptions (test doubles for what
//! the driver reports when a graph is instantiated; no GPU here) turned into the trace's graph,
//! launched as a sub-graph node, and a kernel node's parameter update seen by the next launch.

use super::graphs::{ExecGraph, KernelNode, NodeRead, ReadGraph};
use super::streams::LEGACY;
use super::tests::{launch_arguments, recorder, submit, write, CollectingSink, FakeDeviceMemory, FUNCTION, GRID, SIZE, X, Y};
use crate::recorder::{Access, Key, Recorder};
use trace_format::{Arg, Command, Copy, Edge, EdgeKind, Extent, Fill, Graph, KernelLaunch, MemId, NodeId, Place, Record};

const FAKE_MEMSET_NODE: Key = 0x9000_0010;
const FAKE_KERNEL_NODE: Key = 0x9000_0020;
const FAKE_EMPTY_NODE: Key = 0x9000_0030;
const FAKE_CHILD_NODE: Key = 0x9000_0040;
const FAKE_CHILD_KERNEL_NODE: Key = 0x9000_0050;
const FAKE_MEMCPY_NODE: Key = 0x9000_0060;

/// A fake kernel node of `FUNCTION(int *data, int n)`.
fn fake_kernel_node(pointer: u64, n: i32) -> KernelNode {
    KernelNode { function: FUNCTION, launch: GRID, arguments: Some(launch_arguments(pointer, n)), variables: Vec::new() }
}

/// memset Y -> kernel(X, 1) -> empty -> child graph { kernel(Y, 3) }.
fn fake_graph() -> ReadGraph {
    let child = ReadGraph { nodes: vec![(FAKE_CHILD_KERNEL_NODE, NodeRead::Kernel(fake_kernel_node(Y, 3)))], edges: vec![] };
    ReadGraph {
        nodes: vec![
            (FAKE_MEMSET_NODE, NodeRead::Memset { dst: Y, pattern: vec![0xab], count: SIZE as usize }),
            (FAKE_KERNEL_NODE, NodeRead::Kernel(fake_kernel_node(X, 1))),
            (FAKE_EMPTY_NODE, NodeRead::Empty),
            (FAKE_CHILD_NODE, NodeRead::Child(child)),
        ],
        edges: vec![(FAKE_MEMSET_NODE, FAKE_KERNEL_NODE), (FAKE_KERNEL_NODE, FAKE_EMPTY_NODE), (FAKE_EMPTY_NODE, FAKE_CHILD_NODE)],
    }
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
    submit(recorder, device, LEGACY, &exec.accesses(), |_| Command::Subgraph(exec.graph.clone()));
}

fn recorded_subgraphs(sink: &CollectingSink) -> Vec<Graph> {
    let written = sink.0.lock().unwrap();
    written.0.iter().filter_map(|record| match record {
        Record::Node(node) => match &node.command { Command::Subgraph(graph) => Some(graph.clone()), _ => None },
        _ => None,
    }).collect()
}

fn commands(graph: &Graph) -> Vec<Command> {
    graph.nodes.iter().map(|node| node.command.clone()).collect()
}

#[test]
fn a_launched_graph_is_one_subgraph_node_and_follows_kernel_node_updates() {
    let sink = CollectingSink::default();
    let mut recorder = recorder(&sink);
    let device = FakeDeviceMemory::default();
    device.contents.borrow_mut().extend([(X, vec![1; SIZE as usize]), (Y, vec![2; SIZE as usize])]);

    let mut exec = ExecGraph::build(&mut recorder, "cuGraphInstantiateWithFlags", &fake_graph());
    assert_eq!(exec.index[&FAKE_CHILD_NODE], 3);
    assert_eq!(exec.accesses(), vec![write(Y), write(X), write(Y)]);
    launch(&mut recorder, &device, &exec);
    exec.set_kernel(&mut recorder, "cuGraphExecKernelNodeSetParams_v2", FAKE_KERNEL_NODE, &fake_kernel_node(X, 2));
    launch(&mut recorder, &device, &exec);
    recorder.host_sync("cuStreamSynchronize", crate::recorder::SyncScope::Everything, &device);

    let launches = recorded_subgraphs(&sink);
    assert_eq!(launches.len(), 2);
    let fill = Command::Fill(Fill { mem: MemId(0), offset: 0, bytes: SIZE, pattern: vec![0xab], rows: None });
    for (launched, n) in launches.iter().zip([1, 2]) {
        let [memset, kernel_node, empty, Command::Subgraph(child_graph)] = &commands(launched)[..] else { panic!("not 4 nodes ending in a child graph") };
        assert_eq!((memset, kernel_node, empty), (&fill, &kernel(1, n), &Command::Barrier));
        assert_eq!(commands(child_graph), vec![kernel(0, 3)]);
        assert!(child_graph.edges.is_empty());
        assert_eq!(launched.edges, vec![event_edge(0, 1), event_edge(1, 2), event_edge(2, 3)]);
    }
    // Trace ids follow first use: Y (the memset's) is memory 0, X memory 1.
    // Both launches' memory is snapshotted: initial contents, and final ones of what they wrote.
    let written = sink.0.lock().unwrap();
    let initial: Vec<u32> = written.0.iter().filter_map(|record| match record { Record::InitialState { state, .. } => Some(state.mem.0), _ => None }).collect();
    assert_eq!(initial, vec![0, 1]);
    let Some(Record::SegmentEnd { expected, .. }) = written.0.last() else { panic!("the segment ends") };
    assert_eq!(expected.iter().map(|state| state.mem.0).collect::<Vec<_>>(), vec![0, 1]);
    let in_order = Edge { from: NodeId(0), to: NodeId(1), kind: EdgeKind::InOrder };
    assert!(written.0.contains(&Record::Edge(in_order)), "the second launch follows the first on its stream");
}

#[test]
fn an_undescribable_node_is_a_barrier_and_marks_the_trace_partial() {
    let sink = CollectingSink::default();
    let mut recorder = recorder(&sink);
    let read = ReadGraph { nodes: vec![(FAKE_MEMSET_NODE, NodeRead::Unsupported("a fake host node"))], edges: vec![(FAKE_MEMSET_NODE, FAKE_KERNEL_NODE)] };
    let exec = ExecGraph::build(&mut recorder, "cuGraphInstantiateWithFlags", &read);
    assert_eq!(commands(&exec.graph), vec![Command::Barrier]);
    assert!(exec.graph.edges.is_empty());
    drop(recorder);
    let written = sink.0.lock().unwrap();
    let reasons: Vec<String> = written.0.iter().filter_map(|record| match record { Record::Partial(reason) => Some(format!("{reason:?}")), _ => None }).collect();
    assert!(reasons.iter().any(|reason| reason.contains("a fake host node")), "{reasons:?}");
    assert!(reasons.iter().any(|reason| reason.contains("does not list")), "{reasons:?}");
}

#[test]
fn a_linear_device_memcpy_node_is_a_copy_reading_its_source() {
    let sink = CollectingSink::default();
    let mut recorder = recorder(&sink);
    let read = ReadGraph { nodes: vec![(FAKE_MEMCPY_NODE, NodeRead::Copy { src: X + 8, dst: Y, bytes: 16 })], edges: vec![] };
    let exec = ExecGraph::build(&mut recorder, "cuGraphInstantiateWithFlags", &read);
    let copy = Copy { src: Place::Memory { mem: MemId(0), offset: 8 }, dst: Place::Memory { mem: MemId(1), offset: 0 }, extent: Extent::Linear { bytes: 16 } };
    assert_eq!(commands(&exec.graph), vec![Command::Copy(copy)]);
    assert_eq!(exec.accesses(), vec![Access { mem: X, write: false }, write(Y)]);
}

#[test]
fn a_kernel_node_uses_the_variables_of_its_program_as_a_launch_does() {
    let sink = CollectingSink::default();
    let mut recorder = recorder(&sink);
    // Y stands for a variable the kernel reaches by name: no parameter points at it.
    let node = KernelNode { variables: vec![Y], ..fake_kernel_node(X, 1) };
    let read = ReadGraph { nodes: vec![(FAKE_KERNEL_NODE, NodeRead::Kernel(node))], edges: vec![] };
    let exec = ExecGraph::build(&mut recorder, "cuGraphInstantiateWithFlags", &read);
    assert_eq!(exec.accesses(), vec![write(X), write(Y)]);
}
