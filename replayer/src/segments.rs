//! Each segment's own graph: its nodes in id order and the edges between them, with
//! segment-local indices, which is what planning and family matching work on.

use trace_format::{EdgeKind, NodeId, SegmentId, Trace};

#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub struct LocalEdge {
    pub from: usize,
    pub to: usize,
    pub kind: EdgeKind,
}

#[derive(Clone, Debug, PartialEq, Eq)]
pub struct SegmentGraph {
    pub segment: SegmentId,
    /// The segment's nodes in id order; a node's local index is its position here.
    pub nodes: Vec<NodeId>,
    /// Edges between the segment's nodes, in trace order.
    pub edges: Vec<LocalEdge>,
}

impl SegmentGraph {
    pub fn local_edges(&self) -> impl Iterator<Item = (usize, usize)> + '_ {
        self.edges.iter().map(|e| (e.from, e.to))
    }
}

/// One graph per segment of the trace. Edges that name a missing node or join two segments
/// are left out: `validate` reports them.
pub fn segment_graphs(trace: &Trace) -> Vec<SegmentGraph> {
    let mut graphs: Vec<SegmentGraph> = (0..trace.segments.len())
        .map(|s| SegmentGraph { segment: SegmentId(s as u32), nodes: Vec::new(), edges: Vec::new() })
        .collect();
    // (segment, local index) of every node whose segment exists.
    let mut place = Vec::with_capacity(trace.nodes.len());
    for (id, node) in trace.nodes.iter().enumerate() {
        place.push(graphs.get_mut(node.segment.index()).map(|graph| {
            graph.nodes.push(NodeId(id as u32));
            (node.segment.index(), graph.nodes.len() - 1)
        }));
    }
    for edge in &trace.edges {
        let from = place.get(edge.from.index()).copied().flatten();
        let to = place.get(edge.to.index()).copied().flatten();
        if let (Some((segment, from)), Some((to_segment, to))) = (from, to) {
            if segment == to_segment {
                graphs[segment].edges.push(LocalEdge { from, to, kind: edge.kind });
            }
        }
    }
    graphs
}
