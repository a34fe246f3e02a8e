//! Work the program submitted and the host has not waited for yet: a graph of pending nodes,
//! and what each queue and event stands for, from which every new command's edges follow.
//!
//! A host synchronization closes only what it waited for (`SyncScope`): the pending nodes it
//! covers and their ancestors. Work of other queues or threads stays pending and belongs to a
//! later segment, so no segment ends while work of its own is still in flight. Edges to nodes
//! already closed are dropped: an earlier segment replays before a later one.

use super::objects::QueueSync;
use super::{HostRegion, Key, Order};
use crate::fast_hash::{HashMap, HashSet};
use smallvec::SmallVec;
use std::collections::BTreeMap;
use trace_format::{EdgeKind, Node};

/// A pending node's number, in submission order (a node's predecessors have smaller ones).
pub(super) type PendingId = u64;

/// What a host synchronization waited for.
#[derive(Clone, Debug)]
pub enum SyncScope<'a> {
    /// Every command submitted so far (a context-wide wait, a capture marker).
    Everything,
    /// All work submitted to these queues so far, and what it waited for (`clFinish`,
    /// `cuStreamSynchronize`).
    Queues(&'a [Key]),
    /// The last command submitted to this queue (a blocking read, write, map or copy).
    LastCommandOf(Key),
    /// The work these events stand for (`clWaitForEvents`, `cuEventSynchronize`).
    Events(&'a [Key]),
    /// What one of the scopes above covered as a wait began (`Recorder::wait_begins`): work other
    /// threads submit while it waits (to the same queue, or recording the same event again) is
    /// not covered by it, however soon after it returns the window closes.
    Began(Frontier),
}

/// The nodes a wait stands for, taken as it began: every node submitted before then, or these
/// nodes and their ancestors.
#[derive(Clone, Debug, PartialEq, Eq)]
pub struct Frontier(Covered);

#[derive(Clone, Debug, PartialEq, Eq)]
enum Covered {
    /// Every node numbered below this one.
    SubmittedBefore(PendingId),
    Nodes(Vec<PendingId>),
    /// A blocking command, recorded once its call returned, and what it follows among the nodes
    /// submitted before its call began (`began`, the first id not given then): what other threads
    /// submitted to its queue during the call comes before it in the recorded order, but the
    /// driver queued it behind the command, so it has not necessarily finished.
    Blocking { itself: PendingId, began: PendingId },
}

/// A node's predecessors and how each orders it: one or two for most (its queue's last command,
/// an event), kept inline in the node.
pub(super) type Preds = SmallVec<[(PendingId, EdgeKind); 2]>;

/// The memory a node uses, inline for the few most commands use.
pub(super) type Uses = SmallVec<[Use; 2]>;

/// A memory object a pending node uses: its root key and generation (see `MemoryTable`).
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub(super) struct Use {
    pub root: Key,
    pub generation: u64,
    pub write: bool,
    /// It writes memory the host reads directly (`Entry::host_reads_directly`): its window's
    /// contents are read as the window closes.
    pub host_reads: bool,
}

pub(super) struct PendingNode {
    pub node: Node,
    /// The queue it was submitted to.
    pub queue: Option<Key>,
    pub preds: Preds,
    /// Host memory the node delivers data into, taken when it closes.
    pub received: Option<HostRegion>,
    pub uses: Uses,
    /// A host task standing for a user event: what waits on it is blocked until the host sets it.
    pub user_event: Option<Key>,
}

/// Where a queue stands among the pending nodes.
#[derive(Default)]
struct QueueTrack {
    /// The last command (in-order queues).
    tail: Option<PendingId>,
    /// Out-of-order queues: commands an empty-list barrier or marker must wait for: those
    /// since the last such barrier (the gate) or marker, which stands for everything before.
    since_gate: Vec<PendingId>,
    /// Out-of-order queues: the last barrier; every later command waits for it.
    gate: Option<PendingId>,
    /// Event waits (`cuStreamWaitEvent`) the next command takes on.
    waits: Vec<PendingId>,
    /// Blocking queues: the last legacy-default command this queue already waits for.
    default_joined: Option<PendingId>,
    /// Blocking queues: the last command of this queue the legacy default queue already waits for.
    joined_by_default: Option<PendingId>,
    /// How many of its commands are pending.
    pending: u32,
}

impl QueueTrack {
    /// Nodes that stand for all work submitted to the queue so far.
    fn frontier(&self, in_order: bool) -> Vec<PendingId> {
        let mut nodes = match (in_order, self.since_gate.is_empty()) {
            (true, _) => self.tail.into_iter().collect(),
            (false, false) => self.since_gate.clone(),
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

#[derive(Default)]
pub(super) struct Pending {
    /// Boxed: a node (about 330 bytes) is moved several times between its launch and its window's
    /// records, a box's pointer instead.
    nodes: HashMap<PendingId, Box<PendingNode>>,
    next_id: PendingId,
    queues: BTreeMap<Key, QueueTrack>,
    /// What waiting on an event means: the nodes it stands for.
    events: HashMap<Key, Vec<PendingId>>,
    /// Host-task nodes of user events waited on and not closed yet.
    user_event_nodes: HashMap<Key, PendingId>,
    /// Nodes that deliver data into host memory, by the region's address (for unmaps).
    receiving: BTreeMap<usize, Vec<PendingId>>,
    /// Host tasks outside any queue that run when their predecessors complete (callbacks).
    callbacks: Vec<PendingId>,
    /// `closure`'s sets of nodes seen and blocked, empty between calls.
    scratch: (HashSet<PendingId>, HashSet<PendingId>),
    /// How many pending nodes deliver data into host memory.
    receiving_nodes: usize,
}

/// The most nodes `Pending::scratch` keeps room for after a large window.
const SCRATCH_CAPACITY: usize = 16 * 1024;

impl Pending {
    pub fn is_empty(&self) -> bool {
        self.nodes.is_empty()
    }



    /// Whether a pending node delivers data into host memory (read as its window closes).
    pub fn receives(&self) -> bool {
        self.receiving_nodes > 0
    }

    /// Whether `queue` has pending work.
    pub fn queue_busy(&self, queue: Key) -> bool {
        self.queues.get(&queue).is_some_and(|track| track.pending > 0)
    }

    /// The queues with pending commands.
    pub fn busy_queues(&self) -> Vec<Key> {
        self.queues.iter().filter(|(_, track)| track.pending > 0).map(|(&queue, _)| queue).collect()
    }

    /// Forgets an idle queue (its handle may name another one later).
    pub fn forget_queue(&mut self, queue: Key) {
        if !self.queue_busy(queue) {
            self.queues.remove(&queue);
        }
    }

    /// The pending nodes a wait on `event` stands for.
    pub fn event_nodes(&self, event: Key) -> Vec<PendingId> {
        if let Some(&node) = self.user_event_nodes.get(&event) {
            return vec![node];
        }
        self.live(self.events.get(&event).map_or(&[][..], Vec::as_slice))
    }


    pub fn set_event(&mut self, event: Key, nodes: Vec<PendingId>) {
        self.user_event_nodes.remove(&event);
        self.events.insert(event, nodes);
    }

    pub fn forget_event(&mut self, event: Key) {
        self.user_event_nodes.remove(&event);
        self.events.remove(&event);
    }

    /// Adds a node after `preds`; returns its id.
    pub fn add(&mut self, node: Box<PendingNode>) -> PendingId {
        let id = self.next_id;
        self.next_id += 1;
        if let Some(region) = node.received {
            self.receiving.entry(region.address).or_default().push(id);
            self.receiving_nodes += 1;
        }
        if let Some(event) = node.user_event {
            self.user_event_nodes.insert(event, id);
        }
        if let Some(queue) = node.queue {
            self.queues.entry(queue).or_default().pending += 1;
        }
        if node.queue.is_none() && node.user_event.is_none() {
            self.callbacks.push(id);
        }
        self.nodes.insert(id, node);
        id
    }


    /// Pending nodes that deliver data into host memory starting in `range`.
    pub fn take_receiving(&mut self, range: std::ops::Range<usize>) -> Vec<PendingId> {
        let starts: Vec<usize> = self.receiving.range(range).map(|(&start, _)| start).collect();
        starts.into_iter().flat_map(|start| self.receiving.remove(&start).unwrap_or_default()).collect()
    }

    /// Takes the host memory pending node `id` delivers data into, read early (`capture_received`).
    pub fn take_received(&mut self, id: PendingId) -> Option<HostRegion> {
        let region = self.nodes.get_mut(&id)?.received.take()?;
        self.receiving_nodes -= 1;
        Some(region)
    }

    pub fn node_mut(&mut self, id: PendingId) -> Option<&mut PendingNode> {
        self.nodes.get_mut(&id).map(|node| &mut **node)
    }

    /// An event recorded on `queue` now stands for all work submitted to it so far.
    pub fn queue_frontier(&self, queue: &QueueRef) -> Vec<PendingId> {
        let mut nodes = self.queues.get(&queue.key).map(|track| track.frontier(queue.in_order)).unwrap_or_default();
        // A command of the legacy default stream waits for the earlier work of every blocking
        // stream, and one of a blocking stream for the legacy stream's: so does an event
        // recorded there (simpleStreams records its stop event on the legacy stream after
        // copies on its own streams, and waits for that event only).
        let tail = |key: &Key| self.queues.get(key).and_then(|track| track.tail);
        match queue.sync {
            QueueSync::Independent => {}
            QueueSync::Blocking => nodes.extend(queue.legacy_default.as_ref().and_then(tail)),
            QueueSync::LegacyDefault => nodes.extend(queue.blocking_peers.iter().filter_map(tail)),
        }
        self.live(&nodes)
    }

    /// The next command of `queue` also waits for `nodes`.
    pub fn add_queue_waits(&mut self, queue: Key, nodes: Vec<PendingId>) {
        self.queues.entry(queue).or_default().waits.extend(nodes);
    }

    /// The edges into `node` (the id `add` gives next), a command submitted to `queue` with
    /// `order`, waiting for `waited` (event waits already resolved to nodes); updates the
    /// queues' state for later commands.
    pub fn queue_edges(&mut self, queue: &QueueRef, order: Order, waited: &[PendingId]) -> Preds {
        let node = self.next_id;
        let mut edges = Dependencies::default();
        let track = self.queues.entry(queue.key).or_default();
        if queue.in_order {
            edges.add(track.tail, EdgeKind::InOrder);
        } else {
            let joins_all = waited.is_empty() && matches!(order, Order::Barrier | Order::Marker);
            if joins_all && !track.since_gate.is_empty() {
                for &earlier in &track.since_gate {
                    edges.add(Some(earlier), EdgeKind::Barrier);
                }
            } else {
                edges.add(track.gate, EdgeKind::Barrier);
            }
            if joins_all {
                track.since_gate.clear();
            }
            // A barrier that joined everything stands for it as the gate; anything else waits
            // for the next marker or barrier (an empty-list marker standing for all).
            if !(joins_all && order == Order::Barrier) {
                track.since_gate.push(node);
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
        let mut edges = edges.0;
        edges.retain(|(from, _)| self.nodes.contains_key(from));
        edges.sort_by_key(|&(from, _)| from);
        edges
    }

    /// What a blocking command on `queue` (its last node, just added) waited for: itself, and
    /// what it follows among the nodes submitted before its call began (`began`, see `Covered`).
    pub fn blocking_frontier(&self, queue: Key, began: PendingId, in_order: impl Fn(Key) -> bool) -> Frontier {
        match self.queues.get(&queue).and_then(|track| track.tail) {
            // Nothing else submitted during the call: as any wait for the queue's last command.
            Some(itself) if itself == began => self.frontier(SyncScope::LastCommandOf(queue), in_order),
            Some(itself) => Frontier(Covered::Blocking { itself, began }),
            None => Frontier(Covered::Nodes(Vec::new())),
        }
    }

    /// The id the next node will get: nodes submitted from now on have this one or a larger one.
    pub fn next_id(&self) -> PendingId {
        self.next_id
    }

    /// What a wait with `scope` stands for, taken as it begins; `in_order` says whether each
    /// queue is in order.
    pub fn frontier(&self, scope: SyncScope<'_>, in_order: impl Fn(Key) -> bool) -> Frontier {
        // Where one in-order queue holds every pending node, its tail follows them all: the
        // wait covers everything pending, with no walk (a program synchronizing its one stream).
        let holds_all = |queue: &Key| in_order(*queue) && self.queues.get(queue).is_some_and(|track| track.pending as usize == self.nodes.len());
        let everything = Frontier(Covered::SubmittedBefore(self.next_id));
        match scope {
            SyncScope::Everything => everything,
            SyncScope::Began(frontier) => frontier,
            SyncScope::Queues(queues) if queues.iter().any(holds_all) => everything,
            SyncScope::LastCommandOf(queue) if holds_all(&queue) => everything,
            SyncScope::Queues(queues) => Frontier(Covered::Nodes(
                queues.iter().filter_map(|queue| self.queues.get(queue).map(|track| track.frontier(in_order(*queue)))).flatten().collect(),
            )),
            SyncScope::LastCommandOf(queue) => Frontier(Covered::Nodes(self.queues.get(&queue).and_then(|track| track.tail).into_iter().collect())),
            SyncScope::Events(events) => Frontier(Covered::Nodes(events.iter().flat_map(|&event| self.event_nodes(event)).collect())),
        }
    }

    /// The pending nodes a synchronization with `scope` waited for: they and their ancestors,
    /// in submission order; `in_order` says whether each queue is in order. Nodes blocked by a
    /// user event not set yet (`unset` says which) cannot have finished and stay pending, with
    /// what depends on them.
    pub fn closure(&mut self, scope: SyncScope<'_>, in_order: impl Fn(Key) -> bool, unset: &dyn Fn(Key) -> bool) -> Vec<PendingId> {
        let frontier = match self.frontier(scope, in_order).0 {
            // Every node submitted before some point: no walk.
            Covered::SubmittedBefore(first_later) => {
                let mut ids: Vec<PendingId> = self.nodes.keys().copied().filter(|&id| id < first_later).collect();
                match ids.iter().min() {
                    // Every id from the smallest on (one stream's work): the range, unsorted.
                    Some(&first) if first_later - first == ids.len() as PendingId => ids.iter_mut().zip(first..).for_each(|(id, value)| *id = value),
                    _ => ids.sort_unstable(),
                }
                return self.without_blocked(ids, unset);
            }
            Covered::Nodes(nodes) => (nodes, PendingId::MAX),
            Covered::Blocking { itself, began } => (self.before_blocking(itself, began), began),
        };
        let (frontier, first_not_covered) = frontier;
        // Scratch sets kept between windows: growing them afresh each time is most of a window's cost.
        let (mut seen, blocked) = std::mem::take(&mut self.scratch);
        let mut stack: Vec<PendingId> = frontier.into_iter().filter(|id| self.nodes.contains_key(id)).collect();
        while let Some(id) = stack.pop() {
            if !seen.insert(id) {
                continue;
            }
            if let Some(node) = self.nodes.get(&id) {
                let covered = |pred: &PendingId| *pred < first_not_covered && self.nodes.contains_key(pred) && !seen.contains(pred);
                stack.extend(node.preds.iter().map(|&(pred, _)| pred).filter(covered));
            }
        }
        // A callback runs once what it follows completed: it closes with it.
        for id in &self.callbacks {
            let follows_closed = |(pred, _): &(PendingId, EdgeKind)| seen.contains(pred) || !self.nodes.contains_key(pred);
            if self.nodes.get(id).is_some_and(|node| node.preds.iter().all(follows_closed)) {
                seen.insert(*id);
            }
        }
        let mut ids: Vec<PendingId> = seen.drain().collect();
        ids.sort_unstable();
        seen.shrink_to(SCRATCH_CAPACITY);
        self.scratch = (seen, blocked);
        self.without_blocked(ids, unset)
    }

    /// Where a closure from a blocking command starts: the command, and its queue's last node
    /// from before its call, found back through the in-order edges of what other threads
    /// submitted to the queue during the call (those edges stay within the queue).
    fn before_blocking(&self, itself: PendingId, began: PendingId) -> Vec<PendingId> {
        let in_order_pred = |id: PendingId| self.nodes.get(&id)?.preds.iter().find(|(_, kind)| *kind == EdgeKind::InOrder).map(|&(pred, _)| pred);
        let mut at = itself;
        while let Some(pred) = in_order_pred(at) {
            if pred < began {
                return vec![itself, pred];
            }
            at = pred;
        }
        vec![itself]
    }

    /// `ids` (in order) without the nodes blocked by a user event not set yet, and what follows them.
    fn without_blocked(&mut self, mut ids: Vec<PendingId>, unset: &dyn Fn(Key) -> bool) -> Vec<PendingId> {
        let mut blocked = std::mem::take(&mut self.scratch.1);
        ids.retain(|id| {
            let node = &self.nodes[id];
            let is_blocked = node.user_event.is_some_and(unset)
                || (!blocked.is_empty() && node.preds.iter().any(|(pred, _)| blocked.contains(pred)));
            if is_blocked {
                blocked.insert(*id);
            }
            !is_blocked
        });
        blocked.clear();
        blocked.shrink_to(SCRATCH_CAPACITY);
        self.scratch.1 = blocked;
        ids
    }

    /// Takes the nodes `ids` (a closure, in order) out of the pending graph, onto `removed`.
    #[allow(clippy::vec_box, reason = "the pending map's boxes move on, unopened, to the window's records")]
    pub fn remove_into(&mut self, ids: &[PendingId], removed: &mut Vec<Box<PendingNode>>) {
        for node in ids.iter().filter_map(|id| self.nodes.remove(id)) {
            if let Some(event) = node.user_event {
                self.user_event_nodes.remove(&event);
            }
            if let Some(track) = node.queue.and_then(|queue| self.queues.get_mut(&queue)) {
                track.pending -= 1;
            }
            self.receiving_nodes -= usize::from(node.received.is_some());
            removed.push(node);
        }
        self.prune();
    }

    /// The host set user event `event` to an error: its host task and every node after it
    /// through an edge the runtime keeps (an event, the queue's order; not `EdgeKind::Memory`,
    /// the shim's own) never run. They are taken out, onto `removed`.
    #[allow(clippy::vec_box, reason = "as `remove_into`")]
    pub fn terminate_user_event(&mut self, event: Key, removed: &mut Vec<Box<PendingNode>>) {
        let Some(&root) = self.user_event_nodes.get(&event) else { return };
        let mut later: Vec<PendingId> = self.nodes.keys().copied().filter(|&id| id > root).collect();
        later.sort_unstable();
        let mut terminated = vec![root];
        for id in later {
            let after_terminated = |&(pred, kind): &(PendingId, EdgeKind)| kind != EdgeKind::Memory && terminated.binary_search(&pred).is_ok();
            if self.nodes[&id].preds.iter().any(after_terminated) {
                terminated.push(id);
            }
        }
        self.remove_into(&terminated, removed);
    }

    /// Whether a pending node submitted before `before` writes memory `root` (a scan of the
    /// pending nodes, made only where such a writer is known to exist).
    pub fn writes_before(&self, root: Key, before: PendingId) -> bool {
        self.nodes.iter().any(|(&id, node)| id < before && node.uses.iter().any(|use_| use_.root == root && use_.write))
    }

    /// Forgets everything pending (work never waited for, at exit).
    pub fn clear(&mut self) -> usize {
        let count = self.nodes.len();
        *self = Pending { next_id: self.next_id, ..Pending::default() };
        count
    }

    pub fn is_pending(&self, id: PendingId) -> bool {
        self.nodes.contains_key(&id)
    }

    /// Whether pending node `earlier` precedes a node whose predecessors are `preds`. Ancestors
    /// have smaller ids, so only nodes after `earlier` are searched, and at most `budget` of
    /// them: past it the answer is no (an edge added then is only redundant).
    pub fn precedes(&self, earlier: PendingId, preds: &[(PendingId, EdgeKind)], budget: usize) -> bool {
        let mut stack: Vec<PendingId> = preds.iter().map(|&(pred, _)| pred).filter(|&pred| pred >= earlier).collect();
        let mut seen = HashSet::default();
        while let Some(id) = stack.pop() {
            if id == earlier {
                return true;
            }
            if !seen.insert(id) || seen.len() > budget {
                continue;
            }
            if let Some(node) = self.nodes.get(&id) {
                stack.extend(node.preds.iter().map(|&(pred, _)| pred).filter(|&pred| pred >= earlier));
            }
        }
        false
    }

    fn live(&self, ids: &[PendingId]) -> Vec<PendingId> {
        ids.iter().copied().filter(|id| self.nodes.contains_key(id)).collect()
    }

    /// Drops references to closed nodes from the queues, and events that stand only for closed
    /// nodes once they outnumber the pending nodes (amortized: the maps stay proportional to
    /// the pending work, not to the program's history).
    fn prune(&mut self) {
        let nodes = &self.nodes;
        let live = |id: &PendingId| nodes.contains_key(id);
        for track in self.queues.values_mut() {
            track.since_gate.retain(live);
            track.waits.retain(live);
        }
        self.callbacks.retain(live);
        if self.events.len() > 2 * self.nodes.len() + 64 {
            self.events.retain(|_, ids| ids.iter().any(live));
        }
        if self.receiving.len() > 2 * self.nodes.len() + 64 {
            self.receiving.retain(|_, ids| {
                ids.retain(live);
                !ids.is_empty()
            });
        }
    }
}

/// Edges into one node: one per predecessor (the first reason found).
#[derive(Default)]
struct Dependencies(Preds);

impl Dependencies {
    fn add(&mut self, from: Option<PendingId>, kind: EdgeKind) {
        if let Some(from) = from {
            if !self.0.iter().any(|&(known, _)| known == from) {
                self.0.push((from, kind));
            }
        }
    }
}
