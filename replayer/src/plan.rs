//! Planning one segment: a stable topological order, cut into partitions at host tasks and
//! at commands the backend cannot record (seed 004, "Graph Partitioning").
//!
//! A node that cannot be recorded (a boundary) is a partition of its own, run eagerly.
//! Every other node joins the partition of the nodes that follow exactly the same
//! boundaries: the predecessors of a host task share a partition, the host task stands
//! alone, its successors come after it, and nodes that no boundary separates are merged.
//! Grouping by the set of boundaries a node follows never makes a node wait for a
//! boundary it does not depend on, so partitions keep only their real dependencies:
//! the two branches of a graph with two roots and a host task in each stay independent.

use crate::backend::PartitionNodes;
use crate::graph::topological_order;
use crate::segments::SegmentGraph;
use std::collections::HashMap;
use trace_format::{Command, NodeId, SegmentId};

#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum PartitionKind {
    /// Recorded into one native command buffer.
    Recorded,
    /// A host task or a command the backend cannot record, run eagerly on its own.
    Eager,
}

#[derive(Clone, Debug, PartialEq, Eq)]
pub struct Partition {
    pub kind: PartitionKind,
    /// Segment-local node indices in topological order.
    pub nodes: Vec<usize>,
    /// Edges between members, as indices into `nodes`.
    pub edges: Vec<(usize, usize)>,
    /// Each node depends on the one before it, so the backend may build an in-order buffer.
    pub straight_line: bool,
    /// Partitions (indices into `SegmentPlan::partitions`, all earlier) that a node of this
    /// one directly depends on.
    pub depends_on: Vec<usize>,
}

impl Partition {
    /// The partition's nodes as a backend takes them, from `graph`: the planned segment, or
    /// another segment of its family (whose nodes stand at the same local indices).
    pub fn nodes_of<'g>(&self, graph: &'g SegmentGraph) -> PartitionNodes<'g> {
        PartitionNodes {
            nodes: self.nodes.iter().map(|&local| (graph.ids[local], &graph.nodes[local])).collect(),
            edges: self.edges.clone(),
            straight_line: self.straight_line,
        }
    }
}

/// A segment's partitions, in an order that runs each after the partitions it depends on.
#[derive(Clone, Debug, PartialEq, Eq)]
pub struct SegmentPlan {
    pub partitions: Vec<Partition>,
}

#[derive(Debug, thiserror::Error)]
pub enum PlanError {
    #[error("segment {segment}: the edges form a cycle through nodes {nodes:?}; run `replayer validate` for details")]
    Cycle { segment: SegmentId, nodes: Vec<NodeId> },
}

/// Whether a command runs outside command buffers: what the backend cannot record, or would run
/// slower there (host tasks and host memory reads and writes on OpenCL; on CUDA, whose graphs hold
/// host tasks as host nodes, copies with a host end that `--host-copies` leaves out of graphs).
pub fn runs_eagerly(command: &Command, can_record: &dyn Fn(&Command) -> bool) -> bool {
    !can_record(command)
}

/// Plans `graph` (a validated segment); `can_record` is the backend's `Backend::can_record`.
pub fn plan_segment(graph: &SegmentGraph, can_record: &dyn Fn(&Command) -> bool) -> Result<SegmentPlan, PlanError> {
    let order = topological_order(graph.nodes.len(), graph.local_edges()).map_err(|blocked| PlanError::Cycle {
        segment: graph.segment,
        nodes: blocked.iter().map(|&local| graph.ids[local]).collect(),
    })?;
    let is_boundary: Vec<bool> = graph.nodes.iter().map(|node| runs_eagerly(&node.command, can_record)).collect();
    let group_of = group_nodes(graph, &order, &is_boundary);
    Ok(SegmentPlan { partitions: build_partitions(graph, &order, &group_of, &is_boundary) })
}

/// Assigns each node a group: one per boundary, one per distinct set of boundaries that
/// other nodes follow. Groups are numbered in the order of their first node in `order`.
fn group_nodes(graph: &SegmentGraph, order: &[usize], is_boundary: &[bool]) -> Vec<usize> {
    let mut boundary_bit = vec![usize::MAX; graph.nodes.len()];
    let mut boundary_count = 0;
    for &local in order {
        if is_boundary[local] {
            boundary_bit[local] = boundary_count;
            boundary_count += 1;
        }
    }
    let mut predecessors = vec![Vec::new(); graph.nodes.len()];
    for (from, to) in graph.local_edges() {
        predecessors[to].push(from);
    }
    // The boundaries each node follows, directly or through other nodes, as a bit set.
    let words = boundary_count.div_ceil(64);
    let mut follows = vec![vec![0u64; words]; graph.nodes.len()];
    let mut group_of = vec![0; graph.nodes.len()];
    let mut group_of_set: HashMap<Vec<u64>, usize> = HashMap::new();
    let mut group_count = 0;
    for &local in order {
        let mut set = vec![0u64; words];
        for &pred in &predecessors[local] {
            for (word, pred_word) in set.iter_mut().zip(&follows[pred]) {
                *word |= pred_word;
            }
            if is_boundary[pred] {
                set[boundary_bit[pred] / 64] |= 1 << (boundary_bit[pred] % 64);
            }
        }
        group_of[local] = if is_boundary[local] {
            group_count += 1;
            group_count - 1
        } else {
            *group_of_set.entry(set.clone()).or_insert_with(|| {
                group_count += 1;
                group_count - 1
            })
        };
        follows[local] = set;
    }
    group_of
}

fn build_partitions(graph: &SegmentGraph, order: &[usize], group_of: &[usize], is_boundary: &[bool]) -> Vec<Partition> {
    let group_count = group_of.iter().max().map_or(0, |&g| g + 1);
    let mut members = vec![Vec::new(); group_count];
    let mut position_in_group = vec![0; graph.nodes.len()];
    for &local in order {
        position_in_group[local] = members[group_of[local]].len();
        members[group_of[local]].push(local);
    }
    let mut inner_edges = vec![Vec::new(); group_count];
    let mut group_edges = Vec::new();
    for (from, to) in graph.local_edges() {
        let (from_group, to_group) = (group_of[from], group_of[to]);
        if from_group == to_group {
            inner_edges[to_group].push((position_in_group[from], position_in_group[to]));
        } else {
            group_edges.push((from_group, to_group));
        }
    }
    group_edges.sort_unstable();
    group_edges.dedup();
    // A group can depend on one whose first node comes later, so groups are ordered again.
    let group_order = topological_order(group_count, group_edges.iter().copied())
        .expect("each group follows a strictly larger set of boundaries than those it depends on");
    let mut position = vec![0; group_count];
    for (index, &group) in group_order.iter().enumerate() {
        position[group] = index;
    }
    let mut depends_on = vec![Vec::new(); group_count];
    for &(from, to) in &group_edges {
        depends_on[to].push(position[from]);
    }
    group_order
        .iter()
        .map(|&group| {
            let nodes = std::mem::take(&mut members[group]);
            let edges = std::mem::take(&mut inner_edges[group]);
            let straight_line = is_straight_line(nodes.len(), &edges);
            let mut depends_on = std::mem::take(&mut depends_on[group]);
            depends_on.sort_unstable();
            let kind = if is_boundary[nodes[0]] { PartitionKind::Eager } else { PartitionKind::Recorded };
            Partition { kind, nodes, edges, straight_line, depends_on }
        })
        .collect()
}

/// Whether every node of a partition depends on the one just before it.
fn is_straight_line(node_count: usize, edges: &[(usize, usize)]) -> bool {
    let mut follows_previous = vec![false; node_count];
    for &(from, to) in edges {
        if from + 1 == to {
            follows_previous[to] = true;
        }
    }
    follows_previous.iter().skip(1).all(|&linked| linked)
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::test_traces::{mem, TraceBuilder};
    use trace_format::{Copy, Extent, MemId, Place};

    /// A backend that records everything but host tasks, as OpenCL command buffers do.
    fn all_but_host_tasks(command: &Command) -> bool {
        !matches!(command, Command::HostTask(_))
    }

    /// Partitions as (kind, node ids, partitions depended on).
    fn summary(builder: &TraceBuilder, can_record: &dyn Fn(&Command) -> bool) -> Vec<(PartitionKind, Vec<u32>, Vec<usize>)> {
        let graph = &builder.graphs()[0];
        let plan = plan_segment(graph, can_record).expect("acyclic");
        plan.partitions
            .iter()
            .map(|p| (p.kind, p.nodes.iter().map(|&l| graph.ids[l].0).collect(), p.depends_on.clone()))
            .collect()
    }

    fn kernels(builder: &mut TraceBuilder, count: usize) -> Vec<NodeId> {
        let segment = if builder.trace.segments.is_empty() { builder.segment() } else { SegmentId(0) };
        let kernel = builder.kernel("k", &[None]);
        let buffer = builder.memory(64);
        (0..count).map(|_| builder.launch(segment, kernel, vec![mem(buffer)], 16)).collect()
    }

    #[test]
    fn a_graph_without_boundaries_is_one_partition() {
        let mut b = TraceBuilder::new();
        let n = kernels(&mut b, 3);
        b.edge(n[0], n[1]);
        b.edge(n[1], n[2]);
        let plan = plan_segment(&b.graphs()[0], &all_but_host_tasks).expect("acyclic");
        assert_eq!(plan.partitions.len(), 1);
        assert_eq!(plan.partitions[0].nodes, vec![0, 1, 2]);
        assert!(plan.partitions[0].straight_line);
    }

    #[test]
    fn independent_nodes_are_not_a_straight_line() {
        let mut b = TraceBuilder::new();
        let n = kernels(&mut b, 3);
        b.edge(n[0], n[2]);
        let plan = plan_segment(&b.graphs()[0], &all_but_host_tasks).expect("acyclic");
        assert!(!plan.partitions[0].straight_line);
    }

    #[test]
    fn order_is_topological_and_stable_by_node_id() {
        let mut b = TraceBuilder::new();
        let n = kernels(&mut b, 4);
        b.edge(n[3], n[0]);
        let plan = plan_segment(&b.graphs()[0], &all_but_host_tasks).expect("acyclic");
        assert_eq!(plan.partitions[0].nodes, vec![1, 2, 3, 0]);
        assert_eq!(plan.partitions[0].edges, vec![(2, 3)]);
    }

    #[test]
    fn a_host_task_splits_predecessors_from_successors() {
        // A -> B -> HT -> C -> D, and X on its own, which joins the first partition.
        let mut b = TraceBuilder::new();
        let n = kernels(&mut b, 3);
        let (a, bb, x) = (n[0], n[1], n[2]);
        let ht = b.host_task(SegmentId(0));
        let later = kernels(&mut b, 2);
        b.edge(a, bb);
        b.edge(bb, ht);
        b.edge(ht, later[0]);
        b.edge(later[0], later[1]);
        assert_eq!(
            summary(&b, &all_but_host_tasks),
            vec![
                (PartitionKind::Recorded, vec![a.0, bb.0, x.0], vec![]),
                (PartitionKind::Eager, vec![ht.0], vec![0]),
                (PartitionKind::Recorded, vec![later[0].0, later[1].0], vec![1]),
            ]
        );
    }

    #[test]
    fn a_backend_that_records_host_tasks_keeps_them_in_the_partition() {
        let mut b = TraceBuilder::new();
        let n = kernels(&mut b, 1);
        let ht = b.host_task(SegmentId(0));
        let later = kernels(&mut b, 1);
        b.edge(n[0], ht);
        b.edge(ht, later[0]);
        assert_eq!(summary(&b, &|_| true), vec![(PartitionKind::Recorded, vec![n[0].0, ht.0, later[0].0], vec![])]);
    }

    #[test]
    fn two_roots_with_a_host_task_each_keep_only_real_dependencies() {
        // Seed 004's multiple-roots example: R1 -> HT1 -> A and R2 -> HT2 -> B.
        let mut b = TraceBuilder::new();
        let r1 = kernels(&mut b, 1)[0];
        let ht1 = b.host_task(SegmentId(0));
        let a = kernels(&mut b, 1)[0];
        let r2 = kernels(&mut b, 1)[0];
        let ht2 = b.host_task(SegmentId(0));
        let bb = kernels(&mut b, 1)[0];
        for (from, to) in [(r1, ht1), (ht1, a), (r2, ht2), (ht2, bb)] {
            b.edge(from, to);
        }
        let plan = summary(&b, &all_but_host_tasks);
        assert_eq!(
            plan,
            vec![
                (PartitionKind::Recorded, vec![r1.0, r2.0], vec![]),
                (PartitionKind::Eager, vec![ht1.0], vec![0]),
                (PartitionKind::Recorded, vec![a.0], vec![1]),
                (PartitionKind::Eager, vec![ht2.0], vec![0]),
                (PartitionKind::Recorded, vec![bb.0], vec![3]),
            ]
        );
    }

    #[test]
    fn a_partition_may_follow_one_whose_first_node_comes_later() {
        // HT -> P1 -> P2, and Q (a root numbered after P1) -> P2: {P1, P2} follow HT, Q does not,
        // so Q's partition comes first although its node comes later.
        let mut b = TraceBuilder::new();
        let segment = b.segment();
        let ht = b.host_task(segment);
        let n = kernels(&mut b, 3);
        let (p1, q, p2) = (n[0], n[1], n[2]);
        b.edge(ht, p1);
        b.edge(p1, p2);
        b.edge(ht, p2);
        b.edge(q, p2);
        let plan = summary(&b, &all_but_host_tasks);
        let position = |node: NodeId| plan.iter().position(|(_, nodes, _)| nodes.contains(&node.0)).expect("planned");
        assert!(position(q) < position(p2));
        assert!(position(ht) < position(p1));
        assert_eq!(position(p1), position(p2));
        assert_eq!(plan.len(), 3);
    }

    #[test]
    fn commands_the_backend_cannot_record_run_alone_between_partitions() {
        let mut b = TraceBuilder::new();
        let n = kernels(&mut b, 2);
        let data = b.blobs.insert(vec![0; 64]);
        let write = b.node(
            SegmentId(0),
            Command::Copy(Copy {
                src: Place::Host { data: Some(data) },
                dst: Place::Memory { mem: MemId(0), offset: 0 },
                extent: Extent::Linear { bytes: 64 },
            }),
        );
        b.edge(n[0], write);
        b.edge(write, n[1]);
        let no_host_copies = |c: &Command| !matches!(c, Command::Copy(Copy { src: Place::Host { .. }, .. }));
        assert_eq!(
            summary(&b, &no_host_copies),
            vec![
                (PartitionKind::Recorded, vec![n[0].0], vec![]),
                (PartitionKind::Eager, vec![write.0], vec![0]),
                (PartitionKind::Recorded, vec![n[1].0], vec![1]),
            ]
        );
    }

    #[test]
    fn a_cycle_is_an_error() {
        let mut b = TraceBuilder::new();
        let n = kernels(&mut b, 2);
        b.edge(n[0], n[1]);
        b.edge(n[1], n[0]);
        assert!(matches!(plan_segment(&b.graphs()[0], &all_but_host_tasks), Err(PlanError::Cycle { .. })));
    }
}
