//! The open window between two host synchronizations: its nodes, and what each queue and
//! event stands for, from which every new command's edges follow.

use super::objects::QueueSync;
use super::{HostRegion, Key, Order};
use std::collections::BTreeMap;
use crate::fast_hash::{HashMap, HashSet};
use trace_format::{Command, Edge, EdgeKind, HostTaskKind, MemId, Node, NodeId, SegmentId};

/// Where a queue stands in the window.
#[derive(Default)]
pub(super) struct QueueTrack {
    /// The last command (in-order queues).
    tail: Option<NodeId>,
    /// Out-of-order queues: commands an empty-list barrier or marker must wait for: those
    /// since the last such barrier (the gate) or marker, which stands for everything before.
    pending: Vec<NodeId>,
    /// Out-of-order queues: the last barrier; every later command waits for it.
    gate: Option<NodeId>,
    /// Event waits (`cuStreamWaitEvent`) the next command takes on.
    waits: Vec<NodeId>,
    /// Blocking queues: the last legacy-default command this queue already waits for.
    default_joined: Option<NodeId>,
    /// Blocking queues: the last command of this queue the legacy default queue already waits for.
    joined_by_default: Option<NodeId>,
}

impl QueueTrack {
    /// Nodes that stand for all work submitted to the queue so far.
    fn frontier(&self, in_order: bool) -> Vec<NodeId> {
        let mut nodes = match (in_order, self.pending.is_empty()) {
            (true, _) => self.tail.into_iter().collect(),
            (false, false) => self.pending.clone(),
            (false, true) => self.gate.into_iter().collect(),
        };
        nodes.extend(&self.waits);
        nodes
    }
}

/// The queue a command goes to, as the edge rules need it.
pub(super) struct QueueRef {
    pub key: Key,
    pub in_order: bool,
    pub sync: QueueSync,
    /// Blocking queues of the same group, for a command on the legacy default queue.
    pub blocking_peers: Vec<Key>,
    /// The group's legacy default queue, for a command on a blocking queue.
    pub legacy_default: Option<Key>,
}

pub(super) struct Window {
    pub ordinal: u64,
    /// The segment the window is recorded as; `None` when outside the capture range.
    pub segment: Option<SegmentId>,
    /// Id of the window's first node; its nodes are written together when it ends.
    pub first_node: u32,
    pub nodes: Vec<Node>,
    pub edges: Vec<Edge>,
    queues: BTreeMap<Key, QueueTrack>,
    /// What waiting on an event means: the nodes it stands for.
    events: HashMap<Key, Vec<NodeId>>,
    /// Host-task nodes of user events waited on in this window.
    pub user_event_nodes: HashMap<Key, NodeId>,
    /// User events not yet set that commands of the window wait on: the window cannot end
    /// before they are.
    pub blocked_by: HashSet<Key>,
    /// Memory (by root key) the window used, so its initial contents are known.
    pub used: HashSet<Key>,
    /// Memory (root objects: id, key and size) the window wrote, whose final contents end
    /// the segment.
    pub written: BTreeMap<MemId, (Key, u64)>,
    /// Host memory whose contents the program receives asynchronously (reads, maps), kept
    /// into the node's copy once it is there.
    pub received: Vec<(NodeId, HostRegion)>,
}

impl Window {
    pub fn new(ordinal: u64, segment: Option<SegmentId>, first_node: u32) -> Window {
        Window {
            ordinal,
            segment,
            first_node,
            nodes: Vec::new(),
            edges: Vec::new(),
            queues: BTreeMap::new(),
            events: HashMap::default(),
            user_event_nodes: HashMap::default(),
            blocked_by: HashSet::default(),
            used: HashSet::default(),
            written: BTreeMap::new(),
            received: Vec::new(),
        }
    }

    pub fn next_node(&self) -> NodeId {
        NodeId(self.first_node + self.nodes.len() as u32)
    }

    pub fn queues_used(&self) -> Vec<Key> {
        self.queues.keys().copied().collect()
    }

    pub fn uses_queue(&self, queue: Key) -> bool {
        self.queues.contains_key(&queue)
    }

    /// The nodes a wait on `event` stands for (none for events outside the window).
    pub fn event_nodes(&self, event: Key) -> Vec<NodeId> {
        if let Some(&node) = self.user_event_nodes.get(&event) {
            return vec![node];
        }
        self.events.get(&event).cloned().unwrap_or_default()
    }

    pub fn set_event(&mut self, event: Key, nodes: Vec<NodeId>) {
        self.user_event_nodes.remove(&event);
        self.events.insert(event, nodes);
    }

    pub fn forget_event(&mut self, event: Key) {
        self.user_event_nodes.remove(&event);
        self.events.remove(&event);
    }

    /// Adds a host-task node (no queue) after `waited`.
    pub fn add_host_task(&mut self, segment: SegmentId, kind: HostTaskKind, call: &str, waited: &[NodeId]) -> NodeId {
        let node = self.next_node();
        self.edges.extend(waited.iter().map(|&from| Edge { from, to: node, kind: EdgeKind::Event }));
        self.nodes.push(Node { queue: None, segment, command: Command::HostTask(kind), call: call.to_string() });
        node
    }

    /// An event recorded on `queue` now stands for all work submitted to it so far.
    pub fn queue_frontier(&self, queue: &QueueRef) -> Vec<NodeId> {
        self.queues.get(&queue.key).map(|track| track.frontier(queue.in_order)).unwrap_or_default()
    }

    /// The next command of `queue` also waits for `nodes`.
    pub fn add_queue_waits(&mut self, queue: Key, nodes: Vec<NodeId>) {
        self.queues.entry(queue).or_default().waits.extend(nodes);
    }

    /// The edges into `node`, a command submitted to `queue` with `order`, waiting for `waited`
    /// (event waits already resolved to nodes); updates the queues' state for later commands.
    pub fn queue_edges(
        &mut self,
        node: NodeId,
        queue: &QueueRef,
        order: Order,
        waited: &[NodeId],
    ) -> Vec<(NodeId, EdgeKind)> {
        let mut edges = Dependencies::default();
        let track = self.queues.entry(queue.key).or_default();
        if queue.in_order {
            edges.add(track.tail, EdgeKind::InOrder);
        } else {
            let joins_all = waited.is_empty() && matches!(order, Order::Barrier | Order::Marker);
            if joins_all && !track.pending.is_empty() {
                for &earlier in &track.pending {
                    edges.add(Some(earlier), EdgeKind::Barrier);
                }
            } else {
                edges.add(track.gate, EdgeKind::Barrier);
            }
            if joins_all {
                track.pending.clear();
            }
            // A barrier that joined everything stands for it as the gate; anything else is
            // pending for the next marker or barrier (an empty-list marker standing for all).
            if !(joins_all && order == Order::Barrier) {
                track.pending.push(node);
            }
            if order == Order::Barrier {
                track.gate = Some(node);
            }
        }
        track.tail = Some(node);
        for waited in std::mem::take(&mut track.waits).into_iter().chain(waited.iter().copied()) {
            edges.add(Some(waited), EdgeKind::Event);
        }
        match queue.sync {
            QueueSync::Independent => {}
            QueueSync::Blocking => {
                let default_tail = queue.legacy_default.and_then(|key| self.queues.get(&key)).and_then(|t| t.tail);
                let track = self.queues.entry(queue.key).or_default();
                if default_tail.is_some() && track.default_joined != default_tail {
                    edges.add(default_tail, EdgeKind::DefaultStream);
                    track.default_joined = default_tail;
                }
            }
            QueueSync::LegacyDefault => {
                for peer in &queue.blocking_peers {
                    let Some(track) = self.queues.get_mut(peer) else { continue };
                    if track.tail.is_some() && track.joined_by_default != track.tail {
                        edges.add(track.tail, EdgeKind::DefaultStream);
                        track.joined_by_default = track.tail;
                    }
                }
            }
        }
        edges.sorted()
    }
}

/// Edges into one node: one per predecessor (the first reason found), never from itself.
#[derive(Default)]
struct Dependencies(Vec<(NodeId, EdgeKind)>);

impl Dependencies {
    fn add(&mut self, from: Option<NodeId>, kind: EdgeKind) {
        if let Some(from) = from {
            if !self.0.iter().any(|&(known, _)| known == from) {
                self.0.push((from, kind));
            }
        }
    }

    fn sorted(mut self) -> Vec<(NodeId, EdgeKind)> {
        self.0.sort_by_key(|&(from, _)| from);
        self.0
    }
}
