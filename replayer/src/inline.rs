//! The program's own graphs and command buffers as part of the segment that launched them.
//!
//! A recorded `Command::Subgraph` (a `cuGraphLaunch`, a `clEnqueueCommandBufferKHR`) only groups
//! commands: its nodes run after what the launch waited for and before what waited for the
//! launch. Replay puts them in the segment's own graph instead, so that planning sees one graph,
//! families can patch a kernel inside a program's graph like any other (issue 5), and backends
//! never meet nesting. The launch itself stays, at its id, as a barrier the inner roots follow,
//! so node ids of the recording keep naming the same launches.
//!
//! A conditional's bodies are not inlined: what runs there is decided while the graph runs, so
//! they stay bodies of the conditional node. Each launch's conditions get numbers of their own
//! in its segment (the recording numbers them per graph, and a segment may launch one graph
//! twice), counted from 0 in launch order, so that segments doing the same work number them
//! the same and stay one family.

use std::collections::HashMap;
use trace_format::{Arg, Command, Conditional, Edge, EdgeKind, Graph, Node, NodeId, SegmentId, Trace};

/// `trace` with every sub-graph, nested ones too, inlined into its segment. Inner nodes take
/// ids after the recorded ones, in launch order, and the queue and segment of their launch.
pub fn inline_subgraphs(trace: &Trace) -> Trace {
    let mut inlined = Trace { nodes: Vec::with_capacity(trace.nodes.len()), edges: Vec::new(), ..trace.clone() };
    // The recorded nodes keep their ids: place them all before any inner node is appended.
    inlined.nodes.extend(trace.nodes.iter().map(|node| Node { command: Command::Barrier, ..node.clone() }));
    let mut exits: Vec<Vec<NodeId>> = Vec::with_capacity(trace.nodes.len());
    let mut conditions_used: HashMap<SegmentId, u32> = HashMap::new();
    for (index, node) in trace.nodes.iter().enumerate() {
        let launch = match &node.command {
            Command::Subgraph(graph) if has_conditions(graph) => {
                let mut numbering = Numbering { next: conditions_used.entry(node.segment).or_insert(0), numbered: HashMap::new() };
                Node { command: Command::Subgraph(numbering.graph(graph)), ..node.clone() }
            }
            _ => node.clone(),
        };
        exits.push(place(&mut inlined, NodeId(index as u32), &launch));
    }
    for edge in &trace.edges {
        for &from in exits.get(edge.from.index()).map_or(&[edge.from][..], Vec::as_slice) {
            inlined.edges.push(Edge { from, ..*edge });
        }
    }
    inlined
}

/// Puts `node` at `id` of `inlined`; a sub-graph leaves a barrier there and appends its nodes.
/// Returns the nodes whose completion is the node's completion (a graph's leaves).
fn place(inlined: &mut Trace, id: NodeId, node: &Node) -> Vec<NodeId> {
    let Command::Subgraph(graph) = &node.command else {
        inlined.nodes[id.index()].command = node.command.clone();
        return vec![id];
    };
    let inner = append(inlined, node, graph);
    let mut has_predecessor = vec![false; graph.nodes.len()];
    let mut has_successor = vec![false; graph.nodes.len()];
    for edge in &graph.edges {
        has_predecessor[edge.to.index()] = true;
        has_successor[edge.from.index()] = true;
    }
    for (index, (entry, _)) in inner.iter().enumerate() {
        if !has_predecessor[index] {
            inlined.edges.push(Edge { from: id, to: *entry, kind: EdgeKind::InOrder });
        }
    }
    for edge in &graph.edges {
        let (from, to) = (&inner[edge.from.index()].1, inner[edge.to.index()].0);
        for &from in from {
            inlined.edges.push(Edge { from, to, kind: edge.kind });
        }
    }
    let leaves = inner.iter().enumerate().filter(|(index, _)| !has_successor[*index]).flat_map(|(_, (_, exits))| exits.iter().copied());
    let leaves: Vec<NodeId> = leaves.collect();
    if leaves.is_empty() {
        vec![id]
    } else {
        leaves
    }
}

/// Appends the nodes of `graph`, launched by `launch`, and inlines those that are graphs in
/// turn. Returns each inner node's (entry, exits).
fn append(inlined: &mut Trace, launch: &Node, graph: &Graph) -> Vec<(NodeId, Vec<NodeId>)> {
    let first = inlined.nodes.len();
    let located = |inner: &Node| Node { queue: launch.queue, segment: launch.segment, command: Command::Barrier, call: inner.call.clone() };
    inlined.nodes.extend(graph.nodes.iter().map(located));
    graph
        .nodes
        .iter()
        .enumerate()
        .map(|(index, inner)| {
            let id = NodeId((first + index) as u32);
            (id, place(inlined, id, inner))
        })
        .collect()
}

fn has_conditions(graph: &Graph) -> bool {
    graph.nodes.iter().any(|node| match &node.command {
        Command::Conditional(_) => true,
        Command::Subgraph(inner) => has_conditions(inner),
        _ => false,
    })
}

/// New numbers for the conditions of one launch: from the segment's next free one on.
struct Numbering<'a> {
    next: &'a mut u32,
    numbered: HashMap<u32, u32>,
}

impl Numbering<'_> {
    fn number(&mut self, condition: u32) -> u32 {
        let next = &mut *self.next;
        *self.numbered.entry(condition).or_insert_with(|| {
            *next += 1;
            *next - 1
        })
    }

    /// `graph` with its conditions (those of nested graphs and bodies too) renumbered.
    fn graph(&mut self, graph: &Graph) -> Graph {
        let mut nodes = Vec::with_capacity(graph.nodes.len());
        for node in &graph.nodes {
            let command = match &node.command {
                Command::Kernel(launch) => {
                    let mut launch = launch.clone();
                    for arg in &mut launch.args {
                        if let Arg::Condition(condition) = arg {
                            *condition = self.number(*condition);
                        }
                    }
                    Command::Kernel(launch)
                }
                Command::Conditional(conditional) => {
                    let condition = self.number(conditional.condition);
                    let bodies = conditional.bodies.iter().map(|body| self.graph(body)).collect();
                    Command::Conditional(Conditional { condition, bodies, ..conditional.clone() })
                }
                Command::Subgraph(inner) => Command::Subgraph(self.graph(inner)),
                other => other.clone(),
            };
            nodes.push(Node { command, ..node.clone() });
        }
        Graph { nodes, edges: graph.edges.clone() }
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::families::find_families;
    use crate::segments::segment_graphs;
    use crate::test_traces::{mem, value, TraceBuilder};
    use trace_format::{Patch, SegmentId};

    fn edges(trace: &Trace) -> Vec<(u32, u32)> {
        let mut edges: Vec<(u32, u32)> = trace.edges.iter().map(|e| (e.from.0, e.to.0)).collect();
        edges.sort_unstable();
        edges
    }

    fn inner_node(command: Command) -> Node {
        Node { queue: None, segment: SegmentId(0), command, call: "inner".into() }
    }

    #[test]
    fn a_graph_launch_becomes_a_barrier_before_its_nodes_and_its_leaves_precede_its_successors() {
        let mut b = TraceBuilder::new();
        let k = b.kernel("k", &[None]);
        let buffer = b.memory(64);
        let segment = b.segment();
        let before = b.launch(segment, k, vec![mem(buffer)], 16);
        // Inside the graph, a fork: 0 -> 1 and 0 -> 2.
        let kernel = |b: &TraceBuilder| b.trace.nodes[before.index()].command.clone();
        let graph = Graph {
            nodes: vec![inner_node(kernel(&b)), inner_node(kernel(&b)), inner_node(kernel(&b))],
            edges: vec![Edge { from: NodeId(0), to: NodeId(1), kind: EdgeKind::Event }, Edge { from: NodeId(0), to: NodeId(2), kind: EdgeKind::Event }],
        };
        let launch = b.node(segment, Command::Subgraph(graph));
        let after = b.launch(segment, k, vec![mem(buffer)], 16);
        b.edge(before, launch);
        b.edge(launch, after);
        let inlined = inline_subgraphs(&b.trace);
        // Recorded ids 0..3 stay; the graph's nodes are 3, 4, 5.
        assert_eq!(inlined.nodes.len(), 6);
        assert_eq!(inlined.nodes[launch.index()].command, Command::Barrier);
        assert!(inlined.nodes[3..].iter().all(|n| matches!(n.command, Command::Kernel(_)) && n.segment == segment && n.call == "inner"));
        assert_eq!(edges(&inlined), vec![(0, 1), (1, 3), (3, 4), (3, 5), (4, 2), (5, 2)]);
        assert_eq!(inline_subgraphs(&inlined), inlined, "inlining twice changes nothing");
    }

    #[test]
    fn nested_and_empty_graphs_inline_to_barriers_that_keep_the_order() {
        let mut b = TraceBuilder::new();
        let segment = b.segment();
        let empty = Graph { nodes: Vec::new(), edges: Vec::new() };
        let nested = Graph { nodes: vec![inner_node(Command::Barrier), inner_node(Command::Subgraph(empty))], edges: vec![Edge { from: NodeId(0), to: NodeId(1), kind: EdgeKind::InOrder }] };
        let outer = b.node(segment, Command::Subgraph(nested));
        let after = b.node(segment, Command::Barrier);
        b.edge(outer, after);
        let inlined = inline_subgraphs(&b.trace);
        // 0 launches 2 -> 3, and 3 (the empty graph's launch) is what 1 waits for.
        assert_eq!(inlined.nodes.len(), 4);
        assert!(inlined.nodes.iter().all(|n| n.command == Command::Barrier));
        assert_eq!(edges(&inlined), vec![(0, 2), (2, 3), (3, 1)]);
    }

    #[test]
    fn launches_of_a_graph_the_program_updates_between_them_are_one_family_patched_inside() {
        // The program's graph: step(x, n) -> check(x); it sets n before each launch.
        let mut b = TraceBuilder::new();
        let (step, check) = (b.kernel("step", &[None, Some(4)]), b.kernel("check", &[None]));
        let x = b.memory(64);
        for n in [4, 8, 12] {
            let segment = b.segment();
            let first = b.launch(segment, step, vec![mem(x), value(n)], 16);
            let second = b.launch(segment, check, vec![mem(x)], 16);
            let nodes = [first, second].map(|id| inner_node(b.trace.nodes[id.index()].command.clone()));
            let graph = Graph { nodes: nodes.to_vec(), edges: vec![Edge { from: NodeId(0), to: NodeId(1), kind: EdgeKind::InOrder }] };
            // The graph's launch takes the place of the two nodes that described its work.
            b.trace.nodes.truncate(first.index());
            b.node(segment, Command::Subgraph(graph));
        }
        let inlined = inline_subgraphs(&b.trace);
        let families = find_families(&inlined, &segment_graphs(&inlined), &|_| true);
        assert_eq!(families.len(), 1, "{families:?}");
        // The base's inner step node (id 3: after the three recorded launches) takes each n.
        let n_of = |member: usize| families[0].patches[member].clone();
        for (member, n) in [4, 8, 12].into_iter().enumerate() {
            assert_eq!(n_of(member), vec![Patch::Arg { node: NodeId(3), index: 1, value: value(n) }]);
        }
    }

    /// The program's graph: set(x, condition 7) -> while condition 7 { step(x, condition 7) }.
    fn looping_graph(b: &mut TraceBuilder, x: trace_format::MemId) -> Graph {
        let launch = trace_format::Launch::Grid { grid: [1; 3], block: [1; 3], shared_bytes: 0, cluster: None, cooperative: false };
        let mut kernel = |name| {
            let kernel = b.kernel(name, &[None, Some(8)]);
            inner_node(Command::Kernel(trace_format::KernelLaunch { kernel, args: vec![mem(x), Arg::Condition(7)], launch: launch.clone() }))
        };
        let (set, step) = (kernel("set"), kernel("step"));
        let body = Graph { nodes: vec![step], edges: Vec::new() };
        let conditional = Conditional { kind: trace_format::ConditionalKind::While, condition: 7, default: None, bodies: vec![body] };
        Graph { nodes: vec![set, inner_node(Command::Conditional(conditional))], edges: vec![Edge { from: NodeId(0), to: NodeId(1), kind: EdgeKind::Event }] }
    }

    /// The conditions an inlined segment's kernels set and its conditionals have, in node order.
    fn conditions(trace: &Trace, segment: SegmentId) -> Vec<(u32, u32)> {
        let mut found = Vec::new();
        for node in trace.nodes.iter().filter(|node| node.segment == segment) {
            let Command::Kernel(launch) = &node.command else { continue };
            let Arg::Condition(set) = launch.args[1] else { continue };
            let conditional = trace.nodes.iter().find_map(|other| match &other.command {
                Command::Conditional(conditional) if other.segment == segment && found.iter().all(|&(_, had)| had != conditional.condition) => Some(conditional),
                _ => None,
            });
            let conditional = conditional.expect("a conditional for each setting kernel");
            let Command::Kernel(inner) = &conditional.bodies[0].nodes[0].command else { panic!("the body holds a kernel") };
            assert_eq!(inner.args[1], Arg::Condition(conditional.condition), "the body's kernel keeps its conditional's condition");
            found.push((set, conditional.condition));
        }
        found
    }

    #[test]
    fn each_launch_numbers_its_conditions_anew_from_0_in_its_segment_and_keeps_bodies_whole() {
        let mut b = TraceBuilder::new();
        let x = b.memory(64);
        let (first, second) = (b.segment(), b.segment());
        let graph = looping_graph(&mut b, x);
        let launches = [b.node(first, Command::Subgraph(graph.clone())), b.node(first, Command::Subgraph(graph.clone())), b.node(second, Command::Subgraph(graph))];
        b.edge(launches[0], launches[1]);
        let inlined = inline_subgraphs(&b.trace);
        assert_eq!(conditions(&inlined, first), vec![(0, 0), (1, 1)]);
        assert_eq!(conditions(&inlined, second), vec![(0, 0)]);
        // Two launches, two nodes each; the bodies stay inside their conditionals.
        assert_eq!(inlined.nodes.len(), 3 + 6);
        let families = find_families(&inlined, &segment_graphs(&inlined), &|_| true);
        assert!(families.iter().all(|family| family.patches.iter().all(Vec::is_empty)), "{families:?}");
    }
}

