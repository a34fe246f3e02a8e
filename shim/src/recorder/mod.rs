//! The recorder: turns the commands an API module reports into the trace's dependency graph,
//! segments and memory states. It never names an API: objects are opaque `Key`s (a handle or
//! an address) chosen by the API module, which also does the device reads (`MemoryAccess`).
//!
//! A command goes through two calls around the real call: `prepare` (before: snapshots the
//! initial contents of memory the window has not used yet) and `submit` (after the real call
//! succeeded: adds the node and its edges). The recorder is not kept locked across the real
//! call, which may block until another thread's hook runs (a user event set elsewhere).
//!
//! Windows: the commands between two host synchronizations form a window; each window gets
//! an ordinal (from 0), and those in the capture range are written as segments. A window's
//! nodes and edges are written when it ends, after its final memory contents are read.

mod memory;
mod objects;
mod registry;
mod sink;
mod window;
#[cfg(test)]
mod tests;

pub use memory::{MemDesc, MemShape};
pub use objects::{QueueDesc, QueueSync};
pub use sink::{MemoryAccess, Sink};

use crate::config::Capture;
use crate::log;
use memory::MemoryTable;
use objects::Objects;
use crate::fast_hash::{HashMap, HashSet};
use trace_format::{
    BlobId, Command, Edge, EdgeKind, Header, HostTaskKind, MemState, Node, NodeId, Place, Record, SegmentId,
};
use window::{QueueRef, Window};

/// An API object as the API module names it: a handle value or an address.
pub type Key = u64;

/// How a command orders against earlier commands of an out-of-order queue (in-order queues
/// order everything anyway).
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum Order {
    Command,
    /// With an empty wait list, waits for all earlier commands of its queue.
    Marker,
    /// Like a marker, and every later command of its queue waits for it.
    Barrier,
}

/// A memory object a command uses. Kernels are taken to read and write every memory argument.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub struct Access {
    pub mem: Key,
    pub write: bool,
}

/// Host memory the program receives data in (`address` as an integer, `len` bytes).
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub struct HostRegion {
    pub address: usize,
    pub len: usize,
}

/// How a command was submitted; what it does is built separately (see `Recorder::submit`).
#[derive(Clone, Debug)]
pub struct Submission<'a> {
    /// The API call, for people (`Node::call`).
    pub call: &'a str,
    /// `None` for commands outside any queue.
    pub queue: Option<Key>,
    pub order: Order,
    /// Events the command waits for.
    pub waits: &'a [Key],
    /// The event that stands for this command, if any.
    pub signals: Option<Key>,
    /// For a read or map whose data may arrive later: where the program receives it. The
    /// bytes there become the `Place::Host` data of the command's copy destination when the
    /// window ends (or at `capture_received`).
    pub received: Option<HostRegion>,
}

/// What `prepare` found out before the real call; handed to `submit`.
#[must_use = "a prepared command is recorded by `Recorder::submit`"]
pub struct Prepared {
    capture: bool,
    accesses: Vec<Access>,
    /// Initial contents of memory (root keys) first used by this command.
    snapshots: Vec<(Key, Option<Vec<u8>>)>,
}

/// Ids handed out so far, per kind (records are numbered in write order).
#[derive(Default)]
struct Counts {
    devices: u32,
    memories: u32,
    programs: u32,
    kernels: u32,
    queues: u32,
    nodes: u32,
    segments: u32,
}

pub struct Recorder {
    sink: Box<dyn Sink>,
    capture: Capture,
    /// Whether capture markers (profiler start/stop) currently allow capture.
    markers_allow: bool,
    objects: Objects,
    memory: MemoryTable,
    /// User events created and not yet set, with the call that created them.
    unset_user_events: HashMap<Key, String>,
    window: Option<Window>,
    next_ordinal: u64,
    counts: Counts,
    sent_blobs: HashSet<BlobId>,
    partial_reported: HashSet<(String, String)>,
}

impl Recorder {
    /// A recorder writing to `sink`, which receives `header` first.
    pub fn new(header: Header, capture: Capture, mut sink: Box<dyn Sink>) -> Recorder {
        sink.record(Record::Header(header));
        Recorder {
            sink,
            capture,
            markers_allow: capture != Capture::Markers,
            objects: Objects::default(),
            memory: MemoryTable::default(),
            unset_user_events: HashMap::default(),
            window: None,
            next_ordinal: 0,
            counts: Counts::default(),
            sent_blobs: HashSet::default(),
            partial_reported: HashSet::default(),
        }
    }

    // ---- commands --------------------------------------------------------------------------

    /// Whether a command submitted now would be recorded.
    pub fn capturing(&self) -> bool {
        match &self.window {
            Some(window) => window.segment.is_some(),
            None => self.markers_allow && self.capture.includes(self.next_ordinal),
        }
    }

    /// Whether every window the capture range holds has ended: nothing more will be recorded.
    pub fn capture_over(&self) -> bool {
        match self.capture {
            Capture::Segments { last: Some(last), .. } => self.window.is_none() && self.next_ordinal > last,
            _ => false,
        }
    }

    /// Before the real call of a command using `accesses`: reads the initial contents of the
    /// memory this window has not used yet.
    pub fn prepare(&mut self, accesses: &[Access], access: &dyn MemoryAccess) -> Prepared {
        let capture = self.capturing();
        let mut snapshots: Vec<(Key, Option<Vec<u8>>)> = Vec::new();
        if capture {
            for use_ in accesses {
                let Some(entry) = self.memory.get(use_.mem) else { continue };
                let root = entry.root;
                let seen = self.window.as_ref().is_some_and(|window| window.used.contains(&root));
                if !seen && !snapshots.iter().any(|(known, _)| *known == root) {
                    let size = self.memory.get(root).map_or(entry.desc.size, |root| root.desc.size);
                    snapshots.push((root, access.read(root, size)));
                }
            }
        }
        Prepared { capture, accesses: accesses.to_vec(), snapshots }
    }

    /// After the real call succeeded: records the command. `build` makes what it does, and is
    /// only called when the window is captured.
    pub fn submit(&mut self, prepared: Prepared, submission: Submission<'_>, build: impl FnOnce(&mut Recorder) -> Command) {
        self.open_window();
        let waited = self.resolve_waits(submission.waits);
        if let Some(event) = submission.signals {
            // The handle of a user event released unset may come back as a command's event.
            self.unset_user_events.remove(&event);
        }
        let Some(segment) = self.window.as_ref().and_then(|window| window.segment) else { return };
        if !prepared.capture {
            return;
        }
        for (root, contents) in prepared.snapshots {
            self.initial_state(segment, root, contents);
        }
        let mut written = Vec::new();
        for use_ in prepared.accesses.iter().filter(|use_| use_.write) {
            let Some(root) = self.memory.get(use_.mem).map(|entry| entry.root) else { continue };
            let size = self.memory.get(root).map_or(0, |entry| entry.desc.size);
            if let Some(mem) = self.mem_id(root) {
                written.push((mem, (root, size)));
            }
        }
        let mut command = build(self);
        let queue = submission.queue.and_then(|key| self.queue_ref(key));
        let queue_id = submission.queue.and_then(|key| self.queue_id(key));
        set_segment(&mut command, segment);
        let Some(window) = self.window.as_mut() else { return };
        let node = window.next_node();
        let edges = match &queue {
            Some(queue) => window.queue_edges(node, queue, submission.order, &waited),
            None => waited.iter().map(|&from| (from, EdgeKind::Event)).collect(),
        };
        window.edges.extend(edges.into_iter().map(|(from, kind)| Edge { from, to: node, kind }));
        window.nodes.push(Node { queue: queue_id, segment, command, call: submission.call.to_string() });
        if let Some(event) = submission.signals {
            window.set_event(event, vec![node]);
        }
        window.written.extend(written);
        if let Some(region) = submission.received {
            window.received.push((node, region));
        }
    }

    /// The event `event` now stands for all work submitted to `queue` so far (`cuEventRecord`).
    pub fn record_event(&mut self, event: Key, queue: Key) {
        let queue = self.queue_ref(queue);
        if let (Some(window), Some(queue)) = (self.window.as_mut(), queue) {
            let nodes = window.queue_frontier(&queue);
            window.set_event(event, nodes);
        }
    }

    /// The next command of `queue` waits for `event` as it stands now (`cuStreamWaitEvent`).
    pub fn queue_waits(&mut self, queue: Key, event: Key) {
        let nodes = self.resolve_waits(&[event]);
        if let Some(window) = self.window.as_mut() {
            window.add_queue_waits(queue, nodes);
        }
    }

    /// A user event (signalled by the host) was created; commands waiting for it wait for a
    /// host task.
    pub fn user_event_created(&mut self, event: Key, call: &str) {
        self.unset_user_events.insert(event, call.to_string());
        if let Some(window) = self.window.as_mut() {
            window.forget_event(event);
        }
    }

    /// The host set a user event: commands waiting for it can run, and the window may end.
    pub fn user_event_set(&mut self, event: Key) {
        self.unset_user_events.remove(&event);
        if let Some(window) = self.window.as_mut() {
            window.blocked_by.remove(&event);
        }
    }

    /// Host code runs when `event` completes (`clSetEventCallback`, a host function): a host
    /// task node after the event's nodes.
    pub fn host_callback(&mut self, event: Key, call: &str) {
        let waited = self.resolve_waits(&[event]);
        let Some(segment) = self.window.as_ref().and_then(|window| window.segment) else { return };
        if let (false, Some(window)) = (waited.is_empty(), self.window.as_mut()) {
            window.add_host_task(segment, HostTaskKind::Callback, call, &waited);
        }
    }

    /// Called by the API module before `region` stops being valid (an unmap): the data a
    /// pending read or map delivered there is taken now.
    pub fn capture_received(&mut self, address: usize) {
        let Some(window) = self.window.as_mut() else { return };
        let (now, later): (Vec<_>, Vec<_>) = window.received.drain(..).partition(|(_, region)| region.address == address);
        window.received = later;
        for (node, region) in now {
            self.keep_received(node, region);
        }
    }

    // ---- windows -----------------------------------------------------------------------------

    /// The host waited for device work (`clFinish`, a blocking read, `cuStreamSynchronize`):
    /// the window ends, unless some of its commands still wait for a user event not set yet.
    pub fn host_sync(&mut self, call: &str, access: &dyn MemoryAccess) {
        let Some(window) = &self.window else { return };
        if !window.blocked_by.is_empty() {
            log::debug!("{call}: the window goes on: some of its commands wait for user events not set yet");
            return;
        }
        self.end_window(call, access);
    }

    /// The queues a `host_sync` now would wait for through `MemoryAccess::wait` (empty when the
    /// window would go on). An API module whose waits could need another thread's hook to
    /// finish (an event callback) waits for them itself first, without holding any lock.
    pub fn queues_to_settle(&self) -> Vec<Key> {
        match &self.window {
            Some(window) if window.blocked_by.is_empty() => window.queues_used(),
            _ => Vec::new(),
        }
    }

    /// A capture marker: `start` true for a start (`cuProfilerStart`), false for a stop. The
    /// window open at the marker ends there; with `REPRISE_CAPTURE=markers` only windows
    /// between a start and a stop are captured, with `all` a stop pauses capture until a start.
    pub fn capture_marker(&mut self, start: bool, call: &str, access: &dyn MemoryAccess) {
        self.host_sync(call, access);
        if matches!(self.capture, Capture::All | Capture::Markers) {
            self.markers_allow = start;
        }
    }

    /// The program is exiting. A window still open was never waited for (its work may still
    /// be running, or waiting for a user event never set), so it is left out, and the trace
    /// marked partial if it was captured; no device calls are made at exit.
    pub fn end_of_program(&mut self) {
        if let Some(window) = self.window.take() {
            if window.segment.is_some() {
                self.partial("end of program", "the commands after the last host synchronization were never waited for; they are left out");
            }
        }
        self.sink.flush();
    }

    fn open_window(&mut self) {
        if self.window.is_some() {
            return;
        }
        let ordinal = self.next_ordinal;
        let segment = (self.markers_allow && self.capture.includes(ordinal)).then(|| {
            self.sink.record(Record::SegmentBegin { ordinal });
            self.counts.segments += 1;
            SegmentId(self.counts.segments - 1)
        });
        self.window = Some(Window::new(ordinal, segment, self.counts.nodes));
    }

    fn end_window(&mut self, call: &str, access: &dyn MemoryAccess) {
        let Some(window) = self.window.as_mut() else { return };
        self.next_ordinal = window.ordinal + 1;
        // Also for windows not captured: work still running would race with the snapshots
        // of a captured window after it.
        access.wait(&window.queues_used());
        if window.segment.is_some() {
            for (node, region) in std::mem::take(&mut window.received) {
                self.keep_received(node, region);
            }
        }
        let Some(window) = self.window.take() else { return };
        let Some(segment) = window.segment else { return };
        self.counts.nodes += window.nodes.len() as u32;
        let graph = window.nodes.into_iter().map(Record::Node).chain(window.edges.into_iter().map(Record::Edge));
        self.sink.records(graph.collect());
        let mut expected = Vec::new();
        for (mem, (key, size)) in window.written {
            match access.read(key, size) {
                Some(contents) => expected.push(MemState { mem, blob: self.blob(contents) }),
                None => self.partial(call, &format!("the final contents of memory {mem} could not be read")),
            }
        }
        self.sink.record(Record::SegmentEnd { segment, ended_by: call.to_string(), expected });
        self.sink.flush();
    }

    // ---- helpers -----------------------------------------------------------------------------

    /// Resolves a wait list to nodes of the window; waits on unset user events make host-task
    /// nodes (once per event and window) and keep the window open.
    fn resolve_waits(&mut self, events: &[Key]) -> Vec<NodeId> {
        let mut nodes = Vec::new();
        for &event in events {
            let Some(window) = self.window.as_mut() else { break };
            let known = window.event_nodes(event);
            if !known.is_empty() {
                nodes.extend(known);
                continue;
            }
            let Some(call) = self.unset_user_events.get(&event) else { continue };
            window.blocked_by.insert(event);
            if let Some(segment) = window.segment {
                let node = window.add_host_task(segment, HostTaskKind::UserEvent, call, &[]);
                window.user_event_nodes.insert(event, node);
                nodes.push(node);
            }
        }
        nodes
    }

    fn queue_ref(&mut self, key: Key) -> Option<QueueRef> {
        self.objects.queues.entry(key).or_insert_with(|| {
            log::debug!("a command went to queue {key:#x}, which the shim did not see created");
            let desc = QueueDesc {
                in_order: true,
                sync: QueueSync::Independent,
                group: 0,
                device: None,
                flags: 0,
                priority: 0,
                label: format!("queue {key:#x}"),
            };
            (desc, None)
        });
        let (desc, _) = self.objects.queues.get(&key)?;
        let (in_order, sync, group) = (desc.in_order, desc.sync, desc.group);
        let blocking_peers = match sync {
            QueueSync::LegacyDefault => self
                .objects
                .queues
                .iter()
                .filter(|(_, (peer, _))| peer.group == group && peer.sync == QueueSync::Blocking)
                .map(|(&peer, _)| peer)
                .collect(),
            _ => Vec::new(),
        };
        let legacy_default = match sync {
            QueueSync::Blocking => self.objects.legacy_default(group),
            _ => None,
        };
        Some(QueueRef { key, in_order, sync, blocking_peers, legacy_default })
    }

    fn initial_state(&mut self, segment: SegmentId, root: Key, contents: Option<Vec<u8>>) {
        let Some(mem) = self.mem_id(root) else { return };
        if let Some(window) = self.window.as_mut() {
            window.used.insert(root);
        }
        match contents {
            Some(contents) => {
                let blob = self.blob(contents);
                self.sink.record(Record::InitialState { segment, state: MemState { mem, blob } });
            }
            None => self.partial("initial state", &format!("the contents of memory {mem} could not be read")),
        }
    }

    fn keep_received(&mut self, node: NodeId, region: HostRegion) {
        let data = self.host_bytes(region);
        if let Some(window) = self.window.as_mut() {
            let index = node.0 - window.first_node;
            set_received(&mut window.nodes, index, data);
        }
    }

    /// The bytes of host memory the program received data in, as a blob.
    fn host_bytes(&mut self, region: HostRegion) -> BlobId {
        // SAFETY: the API module names host memory the program handed to the API for this
        // command, which stays valid until the command's window ends or `capture_received`.
        let bytes = unsafe { std::slice::from_raw_parts(region.address as *const u8, region.len) }.to_vec();
        self.blob(bytes)
    }
}

/// Nodes inside a command buffer belong to the segment of the command that runs them.
fn set_segment(command: &mut Command, segment: SegmentId) {
    if let Command::Subgraph(graph) = command {
        for node in &mut graph.nodes {
            node.segment = segment;
            set_segment(&mut node.command, segment);
        }
    }
}

fn set_received(nodes: &mut [Node], index: u32, data: BlobId) {
    if let Some(Node { command: Command::Copy(copy), .. }) = nodes.get_mut(index as usize) {
        if let Place::Host { data: slot } = &mut copy.dst {
            *slot = Some(data);
        }
    }
}
