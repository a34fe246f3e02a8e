//! The recorder: turns the commands an API module reports into the trace's dependency graph,
//! segments and memory states. It never names an API: objects are opaque `Key`s (a handle or
//! an address) chosen by the API module, which also does the device reads (`MemoryAccess`).
//!
//! A command goes through two calls around the real call: `prepare` (before: reads the
//! contents of memory the capture has not used yet) and `submit` (after the real call
//! succeeded: adds a pending node and its edges). The recorder is not kept locked across the
//! real call, which may block until another thread's hook runs (a user event set elsewhere).
//!
//! Windows: a host synchronization closes what it waited for (`SyncScope`): the pending nodes
//! it covers and their ancestors become a window, written as a segment with its nodes and
//! edges. Work of other queues and threads stays pending for a later window, so each thread's
//! synchronizations cut its own work. Windows get ordinals from 0 in the order they close;
//! those in the capture range are recorded.
//!
//! Memory: each object is read once, just before its first use in a capture (its initial
//! state, written with the first segment that uses it). Memory only recorded commands changed
//! needs no second read: the replay produces it. Memory the host writes directly is watched
//! where page protection can see the host's writes (`HostWrites::Watchable`: pinned and managed
//! memory of a GPU): the pages the host wrote become host writes of the segment that next closes
//! a use of that memory, or of the one running while the host wrote them (`Record::HostWrote`).
//! Where it cannot (`HostWrites::Unseen`), the memory is read again at its first use after a
//! host synchronization. Expected contents are what the host received (reads, maps, and what a
//! window wrote into watched pinned memory, which the host reads directly) and the final
//! contents of what the capture wrote, read at its end; `REPRISE_VERIFY` adds what chosen
//! windows wrote.

mod memory;
mod objects;
mod overwritten;
mod pending;
mod registry;
mod repeats;
mod sink;
#[cfg(test)]
mod tests;

pub use memory::{HostWrites, MemDesc, MemShape};
pub use objects::{QueueDesc, QueueSync, TextureDesc};
pub use pending::SyncScope;
pub use sink::{MemoryAccess, Sink};

use crate::config::{Capture, Verify};
use crate::host_writes;
use crate::fast_hash::{HashMap, HashSet};
use crate::log;
use memory::MemoryTable;
use objects::Objects;
use pending::{Pending, PendingId, PendingNode, Preds, QueueRef, Use, Uses};
use trace_format::{
    BlobId, Command, Edge, EdgeKind, Header, HostTaskKind, HostWrite, MemState, Node, NodeId, Place, Record, SegmentId,
};

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
    /// The command writes every byte of the object (a whole fill or write): what it held
    /// before does not matter, so its first use needs no read.
    pub overwrites: bool,
}

/// The memory objects a command uses: few, so kept inline (no allocation per command).
pub type Accesses = smallvec::SmallVec<[Access; 4]>;

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
    pub call: &'static str,
    /// `None` for commands outside any queue.
    pub queue: Option<Key>,
    pub order: Order,
    /// Events the command waits for.
    pub waits: &'a [Key],
    /// The event that stands for this command, if any.
    pub signals: Option<Key>,
    /// For a read or map whose data may arrive later: where the program receives it. The
    /// bytes there become the `Place::Host` data of the command's copy destination when its
    /// window closes (or at `capture_received`).
    pub received: Option<HostRegion>,
    /// The program treats the command as done once its call returns (a CUDA copy or memset
    /// without a stream): later work of other queues that uses its memory may rely on it, and
    /// gets an `EdgeKind::Memory` edge from it. Commands of asynchronous calls get none: where
    /// nothing orders them, the program let them run concurrently.
    pub host_ordered: bool,
}

/// What `prepare` found out before the real call; handed to `submit`.
#[must_use = "a prepared command is recorded by `Recorder::submit`"]
pub struct Prepared {
    capture: bool,
    accesses: Accesses,
    /// Where the pending nodes stood before the command's call (see `CallBegan`).
    began: CallBegan,
}

/// Where the pending nodes stood as a command's call began (the first id not given then): for a
/// blocking command, which is recorded once its call returned (`Recorder::blocking_command_waited`).
#[derive(Clone, Copy, Debug)]
pub struct CallBegan(PendingId);

impl Prepared {
    /// A command outside the capture, prepared without the recorder.
    pub fn uncaptured() -> Prepared {
        Prepared { capture: false, accesses: Accesses::new(), began: CallBegan(0) }
    }

    /// Whether the command is recorded.
    pub fn captures(&self) -> bool {
        self.capture
    }

    pub fn began(&self) -> CallBegan {
        self.began
    }
}

/// Recorders made in this process so far (see `Recorder::objects_changed`).
static RECORDERS: std::sync::atomic::AtomicU64 = std::sync::atomic::AtomicU64::new(0);

/// The most nodes and edges whose room `Recorder::closing` keeps after a window (a large
/// window's would stay allocated).
const KEPT_CAPACITY: usize = 16 * 1024;

/// Ids handed out so far, per kind (records are numbered in write order).
#[derive(Default)]
struct Counts {
    devices: u32,
    memories: u32,
    programs: u32,
    kernels: u32,
    queues: u32,
    textures: u32,
    nodes: u32,
    segments: u32,
}

pub struct Recorder {
    sink: Box<dyn Sink>,
    capture: Capture,
    verify: Verify,
    /// Whether capture markers (profiler start/stop) currently allow capture.
    markers_allow: bool,
    /// Commands outside the capture were submitted since the device was last drained: a
    /// capture starting waits for them, as they may still write memory it reads.
    undrained_work: bool,
    objects: Objects,
    memory: MemoryTable,
    /// User events created and not yet set, with the call that created them.
    unset_user_events: HashMap<Key, &'static str>,
    pending: Pending,
    /// Commands outside the capture since the last host synchronization (they count a window).
    uncaptured_work: bool,
    next_ordinal: u64,
    /// Host synchronizations so far (see `CaptureUse::read_at_sync`).
    syncs: u64,
    /// The last segment written: expected contents read later follow it.
    last_segment: Option<SegmentId>,
    /// Initial states of memory released while pending work still used it, by root key and
    /// generation, until that work closes.
    orphaned_initials: HashMap<(Key, u64), MemState>,
    counts: Counts,
    partial_reported: HashSet<(String, String)>,
    /// A window's nodes and edges while it is written, kept for their capacity.
    #[allow(clippy::vec_box, reason = "the pending map's boxes, moved by pointer")]
    closing: Vec<Box<PendingNode>>,
    closing_edges: Vec<Edge>,
    /// Whether `HostWrites::Watchable` memory is watched (`REPRISE_HOST_WRITES=watch`), or read
    /// again after host synchronizations like `HostWrites::Unseen`.
    watching: bool,
    /// Pages the host wrote, as last taken from `host_writes`, kept for their capacity.
    written_pages: Vec<u64>,
    /// See `objects_changed`.
    objects_changed: u64,
    /// Pending uses that write memory the host reads directly (`Use::host_reads`).
    host_read_writes: usize,
    /// Large host memory kept before, by contents.
    repeats: repeats::Repeats,
}

impl Recorder {
    /// A recorder writing to `sink`, which receives `header` first.
    pub fn new(header: Header, capture: Capture, verify: Verify, mut sink: Box<dyn Sink>) -> Recorder {
        sink.record(Record::Header(header));
        Recorder {
            sink,
            capture,
            verify,
            markers_allow: capture != Capture::Markers,
            undrained_work: false,
            objects: Objects::default(),
            memory: MemoryTable::default(),
            unset_user_events: HashMap::default(),
            pending: Pending::default(),
            uncaptured_work: false,
            next_ordinal: 0,
            syncs: 0,
            last_segment: None,
            orphaned_initials: HashMap::default(),
            counts: Counts::default(),
            partial_reported: HashSet::default(),
            closing: Vec::new(),
            closing_edges: Vec::new(),
            watching: false,
            written_pages: Vec::new(),
            // Apart for each recorder of the process (a forked child's is another): what was
            // worked out under one never passes for the other's.
            objects_changed: RECORDERS.fetch_add(1, std::sync::atomic::Ordering::Relaxed) << 40,
            host_read_writes: 0,
            repeats: repeats::Repeats::default(),
        }
    }

    /// Watches the pages the host writes in memory where that can be done (see `watching`).
    pub fn watch_host_writes(&mut self, on: bool) {
        self.watching = on;
    }

    // ---- commands --------------------------------------------------------------------------

    /// Whether a command submitted now would be recorded.
    pub fn capturing(&self) -> bool {
        self.markers_allow && self.capture.includes(self.next_ordinal)
    }

    /// Whether the capture range is over and all its work closed: nothing more will be recorded.
    pub fn capture_over(&self) -> bool {
        match self.capture {
            Capture::Segments { last: Some(last), .. } => self.next_ordinal > last && self.pending.is_empty(),
            _ => false,
        }
    }

    /// Before the real call of a command using `accesses`: reads the contents of memory the
    /// capture has not used yet (and of host-writable memory the host may have changed since).
    pub fn prepare(&mut self, accesses: impl Into<Accesses>, access: &dyn MemoryAccess) -> Prepared {
        let accesses = accesses.into();
        let capture = self.capturing();
        if capture && std::mem::take(&mut self.undrained_work) && self.unset_user_events.is_empty() {
            access.drain();
        }
        if capture {
            self.take_host_writes();
            for use_ in &accesses {
                let Some(root) = self.memory.get(use_.mem).map(|entry| entry.root) else { continue };
                let Some(entry) = self.memory.get_mut(root) else { continue };
                let state = &entry.capture;
                let changed_by_host = entry.host_writes_unseen() && state.read_at_sync < self.syncs && state.pending_uses == 0;
                if state.used && !changed_by_host {
                    continue;
                }
                // Watched from before the read on: a write after it is seen.
                if self.watching && entry.desc.host_writes == HostWrites::Watchable && !entry.capture.watched {
                    entry.capture.watched = host_writes::watch(entry.desc.address, entry.desc.size);
                    log::debug!("memory {root:#x}: host writes to {} bytes watched: {}", entry.desc.size, entry.capture.watched);
                }
                let overwritten = use_.overwrites && use_.mem == root;
                let contents = match (overwritten, entry.desc.host_writes) {
                    (true, _) => None,
                    (false, HostWrites::Unseen) => access.read_after_submitted(root, entry.desc.size),
                    (false, _) => access.read(root, entry.desc.size),
                };
                self.initial_contents(root, contents, overwritten);
            }
        }
        Prepared { capture, accesses, began: CallBegan(self.pending.next_id()) }
    }

    /// Whether commands using `accesses` need nothing read before they run or as their window
    /// closes, now and until the capture or `objects_changed` changes: each memory object was
    /// used in this capture already, and only commands change it (device memory) or the shim
    /// sees where the host writes it (watched memory, while no page written is waiting:
    /// `host_writes::any_written`), and the host does not read it directly.
    pub fn settled(&self, accesses: &[Access]) -> bool {
        accesses.iter().all(|use_| {
            let root = self.memory.get(use_.mem).and_then(|entry| self.memory.get(entry.root));
            root.is_some_and(|entry| entry.capture.used && !entry.host_writes_unseen() && !entry.host_reads_directly())
        })
    }

    /// `prepare` for a command the caller found `settled` since (it reads nothing).
    pub fn prepared_settled(&self, accesses: Accesses) -> Prepared {
        Prepared { capture: true, accesses, began: CallBegan(self.pending.next_id()) }
    }

    /// After the real call succeeded: records the command. `build` makes what it does, and is
    /// only called when the command is captured.
    pub fn submit(&mut self, prepared: Prepared, submission: Submission<'_>, build: impl FnOnce(&mut Recorder) -> Command) {
        if let Some(event) = submission.signals {
            // The handle of a user event released unset may come back as a command's event.
            self.unset_user_events.remove(&event);
        }
        if !prepared.capture {
            self.uncaptured_command();
            if let Some(event) = submission.signals {
                self.pending.forget_event(event);
            }
            return;
        }
        let waited = self.resolve_waits(submission.waits);
        let uses = self.uses(&prepared.accesses);
        let command = build(self);
        let queue = submission.queue.and_then(|key| self.queue_ref(key));
        let queue_id = submission.queue.and_then(|key| self.queue_id(key));
        let preds = match &queue {
            Some(queue) => self.pending.queue_edges(queue, submission.order, &waited),
            None => waited.iter().map(|&from| (from, EdgeKind::Event)).collect(),
        };
        let mut preds = preds;
        self.memory_order(submission.queue, &uses, &mut preds);
        let node = Node { queue: queue_id, segment: SegmentId(0), command, call: submission.call.into() };
        let users: Vec<(Key, bool)> = match submission.host_ordered {
            true => uses.iter().map(|use_| (use_.root, use_.write)).collect(),
            false => Vec::new(),
        };
        let id = self.pending.add(Box::new(PendingNode { node, queue: submission.queue, preds, received: submission.received, uses, user_event: None }));
        self.note_users(id, submission.queue, &users);
        if let Some(event) = submission.signals {
            self.pending.set_event(event, vec![id]);
        }
    }

    /// A command outside the capture was submitted (it counts for the windows, and a capture
    /// starting later waits for it).
    pub fn uncaptured_command(&mut self) {
        self.uncaptured_work = true;
        self.undrained_work = true;
    }

    /// The event `event` now stands for all work submitted to `queue` so far (`cuEventRecord`).
    pub fn record_event(&mut self, event: Key, queue: Key) {
        match self.queue_ref(queue) {
            Some(queue) if self.capturing() => {
                let nodes = self.pending.queue_frontier(&queue);
                self.pending.set_event(event, nodes);
            }
            _ => self.pending.forget_event(event),
        }
    }

    /// The next command of `queue` waits for `event` as it stands now (`cuStreamWaitEvent`).
    pub fn queue_waits(&mut self, queue: Key, event: Key) {
        let nodes = self.resolve_waits(&[event]);
        self.pending.add_queue_waits(queue, nodes);
    }

    /// A user event (signalled by the host) was created; commands waiting for it wait for a
    /// host task.
    pub fn user_event_created(&mut self, event: Key, call: &'static str) {
        self.unset_user_events.insert(event, call);
        self.pending.forget_event(event);
    }

    /// The host set a user event: commands waiting for it can run, and close when waited for;
    /// with an error status (`failed`) they never run, and are not recorded.
    pub fn user_event_set(&mut self, event: Key, failed: bool) {
        self.unset_user_events.remove(&event);
        if failed {
            let mut terminated = Vec::new();
            self.pending.terminate_user_event(event, &mut terminated);
            for use_ in terminated.iter().flat_map(|node| &node.uses) {
                self.use_terminated(*use_);
            }
        }
    }

    /// Host code runs when `event` completes (`clSetEventCallback`, a host function): a host
    /// task node after the event's nodes.
    pub fn host_callback(&mut self, event: Key, call: &'static str) {
        let waited = self.resolve_waits(&[event]);
        if self.capturing() && !waited.is_empty() {
            let preds = waited.into_iter().map(|from| (from, EdgeKind::Event)).collect();
            self.add_host_task(HostTaskKind::Callback, call, preds, None);
        }
    }

    /// A captured copy delivers data the program receives into tracked memory at `address`
    /// (pinned host memory): the replay delivers it elsewhere, to compare it, so that memory's
    /// contents are not compared until a recorded command writes it again.
    pub fn received_into(&mut self, address: u64) {
        let Some((key, _)) = self.memory.locate(address) else { return };
        let Some(root) = self.memory.get(key).map(|entry| entry.root) else { return };
        if let Some(entry) = self.memory.get_mut(root) {
            entry.capture.received_into = true;
        }
    }

    /// Called by the API module once the data pending reads or maps deliver into host memory
    /// from `address` on (`len` bytes) has arrived and before it may change (an unmap, a free,
    /// a copy to pageable memory, which returns once done): it is taken now.
    pub fn capture_received(&mut self, address: usize, len: usize) {
        for id in self.pending.take_receiving(address..address.saturating_add(len.max(1))) {
            if let Some(region) = self.pending.take_received(id) {
                let data = self.host_bytes(region);
                if let Some(node) = self.pending.node_mut(id) {
                    set_received(&mut node.node, data);
                }
            }
        }
    }

    // ---- windows -----------------------------------------------------------------------------

    /// The host waited for device work (`clFinish`, a blocking read, `cuStreamSynchronize`):
    /// what `scope` covers closes as a window. The API module makes the synchronization
    /// exact, or waits for the scope's queues itself first. Returns the segment it wrote, if any.
    pub fn host_sync(&mut self, call: &str, scope: SyncScope<'_>, access: &dyn MemoryAccess) -> Option<SegmentId> {
        self.take_host_writes();
        self.host_sync_later(call, scope, access)
    }

    /// `host_sync` for a synchronization made earlier, which `closes_unread` allowed to close
    /// later: the host pages written since it are not looked at (they follow it).
    pub fn host_sync_later(&mut self, call: &str, scope: SyncScope<'_>, access: &dyn MemoryAccess) -> Option<SegmentId> {
        self.syncs += 1;
        let unset = &self.unset_user_events;
        let closed = self.pending.closure(scope, self.objects.in_order(), &|event| unset.contains_key(&event));
        let uncaptured = std::mem::take(&mut self.uncaptured_work);
        if closed.is_empty() && !uncaptured {
            return None;
        }
        let ordinal = self.next_ordinal;
        self.next_ordinal += 1;
        let written = (!closed.is_empty()).then(|| self.write_window(&closed, ordinal, call, access));
        if self.capture_over() {
            self.read_final_contents(access);
            self.stop_watching();
        }
        written
    }

    /// Whether a window closing now reads nothing, neither from the host nor from the device,
    /// so that another thread may close it later (`host_sync_later`): no pending node delivers
    /// data into host memory or writes memory the host reads directly, no window's contents
    /// are verified, and no capture range ends with a window. Settled commands
    /// (`Recorder::settled`) keep it so.
    pub fn closes_unread(&self) -> bool {
        let range_ends = matches!(self.capture, Capture::Segments { last: Some(_), .. });
        !range_ends && self.verify == Verify::End && self.host_read_writes == 0 && !self.pending.receives()
    }

    /// A synchronization that failed with `error`, which the work it waited for left the
    /// device in (a device-side assert, say): that work's window closes there, and the replay is
    /// to end the same way.
    pub fn host_sync_failed(&mut self, call: &str, scope: SyncScope<'_>, access: &dyn MemoryAccess, error: &str) -> Option<SegmentId> {
        let segment = self.host_sync(call, scope, access)?;
        self.sink.record(Record::SegmentFailed { segment, error: error.to_string() });
        self.sink.flush();
        Some(segment)
    }

    /// What kernels printed to the program's standard output up to the synchronization that
    /// wrote `segment`, the last segment written.
    pub fn device_printed(&mut self, segment: SegmentId, text: Vec<u8>) {
        let text = self.blob(text);
        self.sink.record(Record::DevicePrinted { segment, text });
        self.sink.flush();
    }

    /// Whether `queue` has work the host has not waited for (the API module waits for it
    /// before the queue goes away, then calls `host_sync` with it).
    pub fn queue_busy(&self, queue: Key) -> bool {
        self.pending.queue_busy(queue)
    }

    /// Whether pending commands write memory `key` (or the object holding it).
    pub fn pending_writes(&self, key: Key) -> bool {
        let root = self.memory.get(key).map(|entry| entry.root);
        root.and_then(|root| self.memory.get(root)).is_some_and(|entry| entry.capture.pending_writes > 0)
    }

    /// Whether commands no host synchronization covered yet are pending.
    pub fn has_pending(&self) -> bool {
        !self.pending.is_empty()
    }

    /// What the blocking command just submitted to `queue` waited for, its call having begun at
    /// `began`: itself and what it follows among the work submitted before the call began. Taken
    /// with the command, under the same lock, so that what other threads submit next is not
    /// covered either.
    pub fn blocking_command_waited(&self, began: CallBegan, queue: Key) -> SyncScope<'static> {
        SyncScope::Began(self.pending.blocking_frontier(queue, began.0, self.objects.in_order()))
    }

    /// What a wait about to begin stands for: closing `SyncScope::Began` with it once the wait
    /// returns covers no work submitted in between.
    pub fn wait_begins(&self, scope: SyncScope<'_>) -> SyncScope<'static> {
        SyncScope::Began(self.pending.frontier(scope, self.objects.in_order()))
    }

    /// The queues whose commands no host synchronization has covered yet.
    pub fn busy_queues(&self) -> Vec<Key> {
        self.pending.busy_queues()
    }

    /// A capture marker: `start` true for a start (`cuProfilerStart`), false for a stop. The
    /// work before it closes; with `REPRISE_CAPTURE=markers` only work between a start and a
    /// stop is captured, with `all` a stop pauses capture until a start. A stop ends the
    /// capture: the final contents of what it wrote are read, and memory is read again at its
    /// first use after the next start.
    pub fn capture_marker(&mut self, start: bool, call: &str, access: &dyn MemoryAccess) {
        self.host_sync(call, SyncScope::Everything, access);
        if !matches!(self.capture, Capture::All | Capture::Markers) {
            return;
        }
        if !start && self.markers_allow {
            self.read_final_contents(access);
            self.stop_watching();
            for (_, entry) in self.memory.entries_mut() {
                entry.capture.used = false;
            }
        }
        self.markers_allow = start;
    }

    /// The program is exiting. Work never waited for may still be running, or waiting for a
    /// user event never set: it is left out, and the trace marked partial. With `access`, the
    /// final contents of memory the capture wrote are read first.
    pub fn end_of_program(&mut self, access: Option<&dyn MemoryAccess>) {
        if let Some(access) = access {
            self.read_final_contents(access);
        }
        self.stop_watching();
        let left_out = self.pending.clear();
        self.host_read_writes = 0;
        if left_out > 0 {
            self.partial("end of program", &format!("{left_out} commands were never waited for; they are left out"));
        }
        self.sink.flush();
    }

    /// The final contents of memory `keys` (of a context going away, say), read now.
    pub fn read_final_contents_of(&mut self, keys: &[Key], access: &dyn MemoryAccess) {
        let roots: Vec<Key> = keys.iter().filter_map(|&key| self.memory.get(key).map(|entry| entry.root)).collect();
        self.read_final(roots, access);
    }

    fn read_final_contents(&mut self, access: &dyn MemoryAccess) {
        let roots: Vec<Key> = self.memory.entries_mut().filter(|(key, entry)| entry.root == *key).map(|(key, _)| key).collect();
        self.read_final(roots, access);
    }

    /// Reads roots the capture wrote and no pending work still writes, as expected contents
    /// after the last segment.
    fn read_final(&mut self, mut roots: Vec<Key>, access: &dyn MemoryAccess) {
        let Some(segment) = self.last_segment else { return };
        self.take_host_writes();
        roots.sort_unstable();
        roots.dedup();
        for root in roots {
            let Some(entry) = self.memory.get_mut(root) else { continue };
            if !entry.capture.written || entry.capture.pending_writes > 0 || entry.capture.received_into {
                continue;
            }
            if !entry.capture.host_writes.is_empty() {
                // The host wrote it after the last segment that used it: no replay gets there.
                log::info!("memory {root:#x} was written by the host after its last use; its final contents are not compared");
                continue;
            }
            entry.capture.written = false;
            let (size, mem) = (entry.desc.size, entry.id);
            let Some(mem) = mem else { continue };
            match access.read(root, size) {
                Some(contents) => {
                    let blob = self.blob(contents);
                    self.sink.record(Record::Expected { segment, state: MemState { mem, blob } });
                }
                None => log::info!("the final contents of memory {mem} could not be read; they are not compared"),
            }
        }
        self.sink.flush();
    }

    /// Writes the pending nodes `closed` (in submission order) as the segment of window `ordinal`.
    fn write_window(&mut self, closed: &[PendingId], ordinal: u64, call: &str, access: &dyn MemoryAccess) -> SegmentId {
        let mut nodes = std::mem::take(&mut self.closing);
        self.pending.remove_into(closed, &mut nodes);
        let segment = SegmentId(self.counts.segments);
        self.counts.segments += 1;
        let first = self.counts.nodes;
        // Closed ids are sorted, and most often consecutive: then an id's place is its distance from the first.
        let consecutive = closed.last().zip(closed.first()).is_some_and(|(last, first)| last - first + 1 == closed.len() as PendingId);
        let place = |pending: PendingId| match consecutive {
            true => pending.checked_sub(closed[0]).map(|index| index as usize).filter(|&index| index < closed.len()),
            false => closed.binary_search(&pending).ok(),
        };
        let node_id = |pending: PendingId| place(pending).map(|index| NodeId(first + index as u32));
        let mut written: Vec<Key> = Vec::new();
        let mut later_writes = overwritten::LaterWrites::default();
        for pending in nodes.iter_mut().rev() {
            if pending.received.is_some_and(|region| later_writes.covers_then_add(region)) {
                pending.received = None;
            }
        }
        let mut edges = std::mem::take(&mut self.closing_edges);
        // The whole segment goes to the sink at once (one hand-over to the writer thread): its
        // initial states first, then the nodes, then the edges.
        let mut records = self.sink.records_buffer();
        records.push(Record::SegmentBegin { ordinal });
        for (index, pending) in nodes.iter().enumerate() {
            let to = NodeId(first + index as u32);
            edges.extend(pending.preds.iter().filter_map(|&(from, kind)| node_id(from).map(|from| Edge { from, to, kind })));
            for use_ in &pending.uses {
                records.extend(self.use_closed(*use_).map(|state| Record::InitialState { segment, state }));
                records.extend(self.host_writes_of(*use_).map(|write| Record::HostWrote { segment, write }));
                // Consecutive commands mostly write the same memory: listed once each.
                if use_.write && written.last() != Some(&use_.root) {
                    written.push(use_.root);
                }
            }
        }
        let racy_reads: Vec<Record> = (0..nodes.len())
            .filter(|&index| nodes[index].received.is_some() && self.reads_pending_writes(closed[index], &nodes[index].uses))
            .map(|index| Record::RacyRead { segment, node: NodeId(first + index as u32) })
            .collect();
        records.reserve(nodes.len() + edges.len() + 1);
        self.counts.nodes += nodes.len() as u32;
        for mut pending in nodes.drain(..) {
            if let Some(region) = pending.received.take() {
                let data = self.host_bytes(region);
                set_received(&mut pending.node, data);
            }
            pending.node.segment = segment;
            set_segment(&mut pending.node.command, segment);
            records.push(Record::Node(pending.node));
        }
        records.extend(edges.drain(..).map(Record::Edge));
        nodes.shrink_to(KEPT_CAPACITY);
        edges.shrink_to(KEPT_CAPACITY);
        self.closing = nodes;
        self.closing_edges = edges;
        if !self.verify.reads_window(segment.0) {
            written.retain(|&root| self.memory.get(root).is_some_and(|entry| entry.host_reads_directly()));
        }
        let expected = self.window_contents(written, call, access);
        records.push(Record::SegmentEnd { segment, ended_by: call.to_string(), expected });
        records.extend(racy_reads);
        self.sink.records(records);
        self.last_segment = Some(segment);
        self.sink.flush();
        segment
    }

    /// Whether node `id`, closing, read memory that still-pending commands submitted before it
    /// write: nothing ordered them, so they may have written it before or while it read.
    fn reads_pending_writes(&self, id: PendingId, uses: &[Use]) -> bool {
        uses.iter().filter(|use_| !use_.write).any(|use_| {
            let written_elsewhere = self.memory.get(use_.root).is_some_and(|entry| entry.generation == use_.generation && entry.capture.pending_writes > 0);
            written_elsewhere && self.pending.writes_before(use_.root, id)
        })
    }

    /// A pending use of memory closed: the initial state it still owes, if any.
    fn use_closed(&mut self, use_: Use) -> Option<MemState> {
        self.host_read_writes -= usize::from(use_.host_reads);
        let orphan = self.orphaned_initials.remove(&(use_.root, use_.generation));
        let Some(entry) = self.memory.generation_mut(use_.root, use_.generation) else { return orphan };
        entry.capture.pending_uses -= 1;
        entry.capture.pending_writes -= u32::from(use_.write);
        entry.capture.written |= use_.write;
        let blob = entry.capture.unwritten_initial.take();
        orphan.or_else(|| Some(MemState { mem: entry.id?, blob: blob? }))
    }

    /// What the host wrote into the memory of `use_`, now written with the segment it closes in.
    fn host_writes_of(&mut self, use_: Use) -> impl Iterator<Item = HostWrite> {
        let entry = self.memory.generation_mut(use_.root, use_.generation);
        let writes = entry.and_then(|entry| Some((entry.id?, std::mem::take(&mut entry.capture.host_writes))));
        writes.into_iter().flat_map(|(mem, writes)| {
            writes.into_iter().map(move |(offset, blob, while_running)| HostWrite { mem, offset, blob, while_running })
        })
    }

    /// Keeps the bytes of the pages the host wrote since the last look (`crate::host_writes`)
    /// as host writes of the watched memory they lie in, protecting the pages again first.
    fn take_host_writes(&mut self) {
        if !host_writes::any_written() {
            return;
        }
        let mut pages = std::mem::take(&mut self.written_pages);
        pages.clear();
        let complete = host_writes::take_written(&mut pages);
        let watched: Vec<(Key, u64, u64)> = self
            .memory
            .entries_mut()
            .filter(|(key, entry)| entry.root == *key && entry.capture.watched)
            .map(|(key, entry)| (key, entry.desc.address, entry.desc.size))
            .collect();
        for (key, start, size) in watched {
            let end = start + size;
            let first = pages.partition_point(|&page| page + host_writes::PAGE <= start);
            // Runs of adjacent pages as one write each: fewer blobs here, fewer copies at replay.
            let mut written: Vec<(u64, u64)> = Vec::new();
            match complete {
                true => {
                    for &page in pages[first..].iter().take_while(|&&page| page < end) {
                        let (from, to) = (page.max(start), (page + host_writes::PAGE).min(end));
                        match written.last_mut() {
                            Some(run) if run.1 == from => run.1 = to,
                            _ => written.push((from, to)),
                        }
                    }
                }
                false => written.push((start, end)),
            }
            for (from, to) in written {
                host_writes::rearm(from, to - from);
                // SAFETY: watched memory the program allocated and has not freed (freeing stops the watch).
                let blob = unsafe { self.host_blob(from as usize, (to - from) as usize) };
                if let Some(entry) = self.memory.get_mut(key) {
                    let while_running = entry.capture.pending_writes > 0;
                    entry.capture.host_writes.push((from - start, blob, while_running));
                }
            }
        }
        self.written_pages = pages;
    }

    /// Stops watching host writes (the capture is over or paused): the memory is read again at
    /// its first use in a later capture.
    fn stop_watching(&mut self) {
        self.take_host_writes();
        for (_, entry) in self.memory.entries_mut() {
            if std::mem::take(&mut entry.capture.watched) {
                host_writes::unwatch(entry.desc.address, entry.desc.size);
            }
            entry.capture.host_writes.clear();
        }
    }

    /// A pending use of memory by a command that never ran: once nothing pending uses the memory,
    /// its next use reads it again (this one may have skipped the read, as an overwrite).
    fn use_terminated(&mut self, use_: Use) {
        self.host_read_writes -= usize::from(use_.host_reads);
        let Some(entry) = self.memory.generation_mut(use_.root, use_.generation) else { return };
        entry.capture.pending_uses -= 1;
        entry.capture.pending_writes -= u32::from(use_.write);
        if entry.capture.pending_uses == 0 {
            entry.capture.used = false;
            entry.capture.unwritten_initial = None;
        }
    }

    /// `REPRISE_VERIFY`: what a window wrote, read when it closes (memory other pending work
    /// still writes is left out: its contents are not settled).
    fn window_contents(&mut self, mut written: Vec<Key>, call: &str, access: &dyn MemoryAccess) -> Vec<MemState> {
        written.sort_unstable();
        written.dedup();
        let mut expected = Vec::new();
        for root in written {
            let Some(entry) = self.memory.get(root).filter(|entry| entry.capture.pending_writes == 0 && !entry.capture.received_into) else { continue };
            let (size, mem) = (entry.desc.size, entry.id);
            let Some(mem) = mem else { continue };
            match access.read(root, size) {
                Some(contents) => expected.push(MemState { mem, blob: self.blob(contents) }),
                None => self.partial(call, &format!("the contents of memory {mem} after the window could not be read")),
            }
        }
        expected.sort_by_key(|state| state.mem);
        expected
    }

    // ---- helpers -----------------------------------------------------------------------------

    /// The contents of root memory `root` before its first use in the capture (or the first
    /// after the host may have changed it), to be written with the first segment that uses it;
    /// none where the command `overwrites` all of it.
    fn initial_contents(&mut self, root: Key, contents: Option<Vec<u8>>, overwritten: bool) {
        let Some(mem) = self.mem_id(root) else { return };
        let blob = match contents {
            Some(contents) => Some(self.blob(contents)),
            None if overwritten => None,
            None => {
                self.partial("initial state", &format!("the contents of memory {mem} could not be read"));
                None
            }
        };
        let syncs = self.syncs;
        if let Some(entry) = self.memory.get_mut(root) {
            entry.capture.used = true;
            entry.capture.read_at_sync = syncs;
            entry.capture.unwritten_initial = blob;
        }
    }

    /// The pending uses of memory a captured command makes.
    /// How many pending nodes `memory_order` looks through for a path that already orders two.
    const ORDER_SEARCH_BUDGET: usize = 256;

    /// Edges from pending host-ordered commands (`Submission::host_ordered`) of other queues that
    /// wrote memory `uses` names (and, for what it writes, that read it): the order the program
    /// observed (`EdgeKind::Memory`).
    fn memory_order(&self, queue: Option<Key>, uses: &[Use], preds: &mut Preds) {
        for use_ in uses {
            let Some(entry) = self.memory.get(use_.root) else { continue };
            let state = &entry.capture;
            let writer = state.last_writer.into_iter();
            let readers = state.readers.iter().copied().filter(|_| use_.write);
            for (earlier, earlier_queue) in writer.chain(readers) {
                if earlier_queue != queue && self.pending.is_pending(earlier) && !self.pending.precedes(earlier, preds, Self::ORDER_SEARCH_BUDGET) {
                    preds.push((earlier, EdgeKind::Memory));
                }
            }
        }
    }

    /// Host-ordered command `id` of `queue` uses memory `users` (root, written): the last such
    /// writer and readers.
    fn note_users(&mut self, id: PendingId, queue: Option<Key>, users: &[(Key, bool)]) {
        for &(root, write) in users {
            let Some(entry) = self.memory.get_mut(root) else { continue };
            let state = &mut entry.capture;
            if write {
                state.last_writer = Some((id, queue));
                state.readers.clear();
            } else {
                match state.readers.iter_mut().find(|(_, reader_queue)| *reader_queue == queue) {
                    Some(reader) => reader.0 = id,
                    None => state.readers.push((id, queue)),
                }
            }
        }
    }

    fn uses(&mut self, accesses: &[Access]) -> Uses {
        let mut uses = Uses::with_capacity(accesses.len());
        for access in accesses {
            let Some(root) = self.memory.get(access.mem).map(|entry| entry.root) else { continue };
            let Some(entry) = self.memory.get_mut(root) else { continue };
            let host_reads = access.write && entry.host_reads_directly();
            if let Some(known) = uses.iter_mut().find(|known| known.root == root) {
                if access.write && !known.write {
                    known.write = true;
                    known.host_reads = host_reads;
                    self.host_read_writes += usize::from(host_reads);
                    entry.capture.pending_writes += 1;
                    entry.capture.received_into = false;
                }
                continue;
            }
            entry.capture.used = true;
            entry.capture.pending_uses += 1;
            entry.capture.pending_writes += u32::from(access.write);
            entry.capture.received_into &= !access.write;
            self.host_read_writes += usize::from(host_reads);
            uses.push(Use { root, generation: entry.generation, write: access.write, host_reads });
        }
        uses
    }

    /// Resolves a wait list to pending nodes; waits on unset user events make host-task nodes
    /// (one per event while it is pending), which keep what waits on them pending.
    fn resolve_waits(&mut self, events: &[Key]) -> Vec<PendingId> {
        let mut nodes = Vec::new();
        for &event in events {
            let known = self.pending.event_nodes(event);
            if !known.is_empty() {
                nodes.extend(known);
                continue;
            }
            let Some(&call) = self.unset_user_events.get(&event) else { continue };
            if self.capturing() {
                nodes.push(self.add_host_task(HostTaskKind::UserEvent, call, Preds::new(), Some(event)));
            }
        }
        nodes
    }

    fn add_host_task(&mut self, kind: HostTaskKind, call: &'static str, preds: Preds, user_event: Option<Key>) -> PendingId {
        let node = Node { queue: None, segment: SegmentId(0), command: Command::HostTask(kind), call: call.into() };
        self.pending.add(Box::new(PendingNode { node, queue: None, preds, received: None, uses: Uses::new(), user_event }))
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
            QueueSync::LegacyDefault => self.objects.blocking_queues(group).to_vec(),
            _ => Vec::new(),
        };
        let legacy_default = match sync {
            QueueSync::Blocking => self.objects.legacy_default(group),
            _ => None,
        };
        Some(QueueRef { key, in_order, sync, blocking_peers, legacy_default })
    }

    /// The bytes of host memory the program received data in, as a blob.
    fn host_bytes(&mut self, region: HostRegion) -> BlobId {
        // SAFETY: the API module names host memory the program handed to the API for this
        // command, which stays valid until the command's window closes or `capture_received`.
        unsafe { self.host_blob(region.address, region.len) }
    }

    /// A blob of the `len` bytes of host memory at `address` (data the program received, a
    /// copy's source, pages it wrote), or the one kept before with the same contents: large
    /// contents are found by fingerprint or compressed where they lie (`repeats`), so that the
    /// same contents get one name however they reach the trace.
    ///
    /// # Safety
    /// The memory is the program's, readable, and nothing writes it meanwhile.
    pub unsafe fn host_blob(&mut self, address: usize, len: usize) -> BlobId {
        // SAFETY: as the caller promises.
        let bytes = unsafe { std::slice::from_raw_parts(address as *const u8, len) };
        self.repeats.blob(address, bytes, &mut *self.sink)
    }
}

/// Nodes inside a command buffer (and a conditional's bodies) belong to the segment of the
/// command that runs them.
fn set_segment(command: &mut Command, segment: SegmentId) {
    let graphs = match command {
        Command::Subgraph(graph) => std::slice::from_mut(graph),
        Command::Conditional(conditional) => conditional.bodies.as_mut_slice(),
        _ => return,
    };
    for node in graphs.iter_mut().flat_map(|graph| &mut graph.nodes) {
        node.segment = segment;
        set_segment(&mut node.command, segment);
    }
}

fn set_received(node: &mut Node, data: BlobId) {
    if let Command::Copy(copy) = &mut node.command {
        if let Place::Host { data: slot } = &mut copy.dst {
            *slot = Some(data);
        }
    }
}
