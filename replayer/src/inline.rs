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

use crate::segments::SegmentGraph;
use std::collections::HashMap;
use trace_format::{Arg, Command, Conditional, Edge, EdgeKind, Graph, Node, NodeId, TraceSegment};

/// Turns the segments of a trace, in order, into their graphs with every sub-graph, nested ones
/// too, inlined. Inner nodes take ids after the trace's recorded ones, in launch order, and the
/// queue and segment of their launch.
pub struct Inliner {
    next_id: u32,
}

impl Inliner {
    /// For a trace of `recorded_nodes` nodes, read from its first segment on.
    pub fn new(recorded_nodes: usize) -> Inliner {
        Inliner { next_id: recorded_nodes as u32 }
    }

    pub fn graph(&mut self, segment: TraceSegment) -> SegmentGraph {
        let TraceSegment { id, segment: recorded, first_node, nodes, edges, .. } = segment;
        if !nodes.iter().any(|node| matches!(node.command, Command::Subgraph(_))) {
            let ids = (0..nodes.len() as u32).map(|index| NodeId(first_node.0 + index)).collect();
            return SegmentGraph::new(id, recorded, ids, nodes, &edges);
        }
        let mut inlined = Inlined { first: first_node.0, recorded: nodes.len(), inner_start: self.next_id, nodes: Vec::with_capacity(nodes.len()), edges: Vec::new() };
        let mut commands = Vec::with_capacity(nodes.len());
        let mut next_condition = 0;
        // The recorded nodes keep their ids: place them all before any inner node is appended.
        for node in nodes {
            let (command, located) = take_command(node);
            inlined.nodes.push(located);
            commands.push(match command {
                Command::Subgraph(graph) if has_conditions(&graph) => {
                    Command::Subgraph(Numbering { next: &mut next_condition, numbered: HashMap::new() }.graph(&graph))
                }
                command => command,
            });
        }
        let exits: Vec<Vec<NodeId>> =
            commands.into_iter().enumerate().map(|(index, command)| place(&mut inlined, NodeId(first_node.0 + index as u32), command)).collect();
        for edge in &edges {
            let recorded_exits = edge.from.0.checked_sub(first_node.0).and_then(|index| exits.get(index as usize));
            for &from in recorded_exits.map_or(&[edge.from][..], Vec::as_slice) {
                inlined.edges.push(Edge { from, ..*edge });
            }
        }
        self.next_id += (inlined.nodes.len() - inlined.recorded) as u32;
        let ids = (0..inlined.nodes.len()).map(|index| inlined.id(index)).collect();
        SegmentGraph::new(id, recorded, ids, inlined.nodes, &inlined.edges)
    }
}

/// A segment's nodes being inlined: its recorded nodes, then the inner ones.
struct Inlined {
    first: u32,
    recorded: usize,
    inner_start: u32,
    nodes: Vec<Node>,
    edges: Vec<Edge>,
}

impl Inlined {
    fn id(&self, index: usize) -> NodeId {
        match index < self.recorded {
            true => NodeId(self.first + index as u32),
            false => NodeId(self.inner_start + (index - self.recorded) as u32),
        }
    }

    fn index(&self, id: NodeId) -> usize {
        match id.0 < self.inner_start {
            true => (id.0 - self.first) as usize,
            false => self.recorded + (id.0 - self.inner_start) as usize,
        }
    }
}

/// A node's command, and the node with a barrier in its place until `place` puts it back.
fn take_command(mut node: Node) -> (Command, Node) {
    (std::mem::replace(&mut node.command, Command::Barrier), node)
}

/// Puts `command` at `id`; a sub-graph leaves a barrier there and appends its nodes. Returns the
/// nodes whose completion is the node's completion (a graph's leaves).
fn place(inlined: &mut Inlined, id: NodeId, command: Command) -> Vec<NodeId> {
    let Command::Subgraph(graph) = command else {
        let index = inlined.index(id);
        inlined.nodes[index].command = command;
        return vec![id];
    };
    let Graph { nodes, edges } = graph;
    let mut has_predecessor = vec![false; nodes.len()];
    let mut has_successor = vec![false; nodes.len()];
    for edge in &edges {
        if let (Some(to), Some(from)) = (has_predecessor.get_mut(edge.to.index()), has_successor.get_mut(edge.from.index())) {
            (*to, *from) = (true, true);
        }
    }
    let inner = append(inlined, id, nodes);
    for (index, (entry, _)) in inner.iter().enumerate() {
        if !has_predecessor[index] {
            inlined.edges.push(Edge { from: id, to: *entry, kind: EdgeKind::InOrder });
        }
    }
    for edge in &edges {
        let (Some((_, from)), Some(&(to, _))) = (inner.get(edge.from.index()), inner.get(edge.to.index())) else { continue };
        for &from in from {
            inlined.edges.push(Edge { from, to, kind: edge.kind });
        }
    }
    let leaves: Vec<NodeId> = inner.iter().enumerate().filter(|(index, _)| !has_successor[*index]).flat_map(|(_, (_, exits))| exits.iter().copied()).collect();
    if leaves.is_empty() {
        vec![id]
    } else {
        leaves
    }
}

/// Appends the nodes of a graph launched at `launch` and inlines those that are graphs in turn.
/// Returns each inner node's (entry, exits).
fn append(inlined: &mut Inlined, launch: NodeId, nodes: Vec<Node>) -> Vec<(NodeId, Vec<NodeId>)> {
    let first = inlined.nodes.len();
    let (queue, segment) = {
        let launch = &inlined.nodes[inlined.index(launch)];
        (launch.queue, launch.segment)
    };
    let mut commands = Vec::with_capacity(nodes.len());
    for node in nodes {
        let (command, located) = take_command(Node { queue, segment, ..node });
        inlined.nodes.push(located);
        commands.push(command);
    }
    commands
        .into_iter()
        .enumerate()
        .map(|(index, command)| {
            let id = inlined.id(first + index);
            (id, place(inlined, id, command))
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
    use crate::families::FamilyFinder;
    use crate::test_traces::{mem, value, TraceBuilder};
    use trace_format::{Patch, SegmentId};

    fn inner_node(command: Command) -> Node {
        Node { queue: None, segment: SegmentId(0), command, call: "inner".into() }
    }

    fn edges(graph: &SegmentGraph) -> Vec<(u32, u32)> {
        let mut edges: Vec<(u32, u32)> = graph.edges.iter().map(|e| (graph.ids[e.from].0, graph.ids[e.to].0)).collect();
        edges.sort_unstable();
        edges
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
        let inlined = &b.graphs()[0];
        // Recorded ids 0..3 stay; the graph's nodes are 3, 4, 5.
        assert_eq!(inlined.ids, [0, 1, 2, 3, 4, 5].map(NodeId));
        assert_eq!(inlined.nodes[launch.index()].command, Command::Barrier);
        assert!(inlined.nodes[3..].iter().all(|n| matches!(n.command, Command::Kernel(_)) && n.segment == segment && n.call == "inner"));
        assert_eq!(edges(inlined), vec![(0, 1), (1, 3), (3, 4), (3, 5), (4, 2), (5, 2)]);
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
        let inlined = &b.graphs()[0];
        // 0 launches 2 -> 3, and 3 (the empty graph's launch) is what 1 waits for.
        assert_eq!(inlined.nodes.len(), 4);
        assert!(inlined.nodes.iter().all(|n| n.command == Command::Barrier));
        assert_eq!(edges(inlined), vec![(0, 2), (2, 3), (3, 1)]);
    }

    #[test]
    fn inner_nodes_of_later_segments_are_numbered_on_after_earlier_ones() {
        let mut b = TraceBuilder::new();
        for _ in 0..2 {
            let segment = b.segment();
            b.node(segment, Command::Subgraph(Graph { nodes: vec![inner_node(Command::Barrier)], edges: Vec::new() }));
        }
        let graphs = b.graphs();
        assert_eq!((graphs[0].ids.clone(), graphs[1].ids.clone()), (vec![NodeId(0), NodeId(2)], vec![NodeId(1), NodeId(3)]));
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
        let objects = b.trace.clone();
        let mut finder = FamilyFinder::new(&objects);
        let graphs = b.graphs();
        let placed: Vec<_> = graphs.iter().map(|graph| finder.place(graph, &|_| true)).collect();
        assert!(placed.iter().all(|p| p.family == 0), "{placed:?}");
        // The base's inner step node (id 3: after the three recorded launches) takes each n.
        for (member, n) in [(0, 4), (1, 8), (2, 12)] {
            assert_eq!(finder.patches(0, &graphs[member]), vec![Patch::Arg { node: NodeId(3), index: 1, value: value(n) }]);
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
    fn conditions(graph: &SegmentGraph) -> Vec<(u32, u32)> {
        let mut found = Vec::new();
        for node in &graph.nodes {
            let Command::Kernel(launch) = &node.command else { continue };
            let Arg::Condition(set) = launch.args[1] else { continue };
            let conditional = graph.nodes.iter().find_map(|other| match &other.command {
                Command::Conditional(conditional) if found.iter().all(|&(_, had)| had != conditional.condition) => Some(conditional),
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
        let graphs = b.graphs();
        assert_eq!(conditions(&graphs[0]), vec![(0, 0), (1, 1)]);
        assert_eq!(conditions(&graphs[1]), vec![(0, 0)]);
        // Two launches, two nodes each; the bodies stay inside their conditionals.
        assert_eq!(graphs[0].nodes.len() + graphs[1].nodes.len(), 3 + 6);
        let objects = b.trace.clone();
        let mut finder = FamilyFinder::new(&objects);
        for graph in &graphs {
            let placed = finder.place(graph, &|_| true);
            assert!(finder.patches(placed.family, graph).is_empty());
        }
    }
}

