//! A segment's own graph, as planning, families and replay work on it: its nodes (the program's
//! graphs inlined, `inline`) in id order with segment-local indices, the edges between them, and
//! the states it was recorded with. One is built per segment as the trace streams by.

use trace_format::{Edge, EdgeKind, Node, NodeId, Segment, SegmentId};

#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub struct LocalEdge {
    pub from: usize,
    pub to: usize,
    pub kind: EdgeKind,
}

#[derive(Clone, Debug, PartialEq)]
pub struct SegmentGraph {
    pub segment: SegmentId,
    /// What the recording says of the segment: its ordinal, what ended it, its states.
    pub recorded: Segment,
    /// The nodes' ids, ascending; a node's local index is its position here and in `nodes`.
    pub ids: Vec<NodeId>,
    pub nodes: Vec<Node>,
    /// Edges between the segment's nodes, in trace order.
    pub edges: Vec<LocalEdge>,
}

impl SegmentGraph {
    /// The graph of nodes `ids` (ascending) and the `edges` between them; edges that name a node
    /// of another segment are left out (`validate` reports them).
    pub fn new(segment: SegmentId, recorded: Segment, ids: Vec<NodeId>, nodes: Vec<Node>, edges: &[Edge]) -> SegmentGraph {
        let mut graph = SegmentGraph { segment, recorded, ids, nodes, edges: Vec::with_capacity(edges.len()) };
        for edge in edges {
            if let (Some(from), Some(to)) = (graph.local(edge.from), graph.local(edge.to)) {
                graph.edges.push(LocalEdge { from, to, kind: edge.kind });
            }
        }
        graph
    }

    pub fn local_edges(&self) -> impl Iterator<Item = (usize, usize)> + '_ {
        self.edges.iter().map(|e| (e.from, e.to))
    }

    /// The local index of node `id`, if it is one of the segment's.
    pub fn local(&self, id: NodeId) -> Option<usize> {
        // The recorded nodes come first, numbered one after another.
        let offset = id.0.checked_sub(self.ids.first()?.0)? as usize;
        match self.ids.get(offset) {
            Some(&at) if at == id => Some(offset),
            _ => self.ids.binary_search(&id).ok(),
        }
    }

    pub fn node(&self, id: NodeId) -> Option<&Node> {
        self.local(id).map(|local| &self.nodes[local])
    }
}
