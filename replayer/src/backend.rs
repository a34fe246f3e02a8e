//! The one trait every API backend implements. The planner and the command line only
//! talk to this trait, never to an API.

use std::collections::BTreeSet;
use crate::lifetimes::Lifetimes;
use trace_format::{BlobStore, Command, MemId, Node, NodeId, Patch, Trace};

/// What a backend can fail with; `Invalid` maps to exit code 2, the others to 3.
#[derive(Debug, thiserror::Error)]
pub enum BackendError {
    /// The trace contradicts what the driver built from it (an argument of another kind than
    /// the kernel's parameter, more arguments than it takes): the trace is damaged.
    #[error("invalid trace: {0}")]
    Invalid(String),
    /// The API, its driver or the device is missing on this machine.
    #[error("{0}")]
    Unavailable(String),
    /// The trace asks for something this backend cannot do.
    #[error("unsupported: {0}")]
    Unsupported(String),
    /// The API returned an error.
    #[error("{call} failed: {detail}")]
    Api { call: String, detail: String },
}

pub type BackendResult<T> = Result<T, BackendError>;

/// Refuses a trace with linked programs (`Record::ProgramLink`) where the backend builds whole
/// programs only.
pub fn whole_programs_only(trace: &trace_format::Trace) -> BackendResult<()> {
    match trace.program_links.first() {
        Some(link) => Err(BackendError::Unsupported(format!("program {} was linked from separate compilations, which this backend does not rebuild", link.program))),
        None => Ok(()),
    }
}

impl BackendError {
    /// The same error with its message prefixed by what it concerns.
    pub fn about(self, what: &str) -> BackendError {
        match self {
            BackendError::Invalid(m) => BackendError::Invalid(format!("{what}: {m}")),
            BackendError::Unavailable(m) => BackendError::Unavailable(format!("{what}: {m}")),
            BackendError::Unsupported(m) => BackendError::Unsupported(format!("{what}: {m}")),
            BackendError::Api { call, detail } => BackendError::Api { call, detail: format!("{what}: {detail}") },
        }
    }
}

/// That `bytes` bytes from `offset` on lie in memory `mem` of `size` bytes.
pub fn check_range(mem: MemId, size: u64, offset: u64, bytes: usize) -> BackendResult<()> {
    match offset.checked_add(bytes as u64) {
        Some(end) if end <= size => Ok(()),
        _ => Err(BackendError::Unsupported(format!("bytes {offset}..{} of memory {mem}, which holds {size} bytes", offset.saturating_add(bytes as u64)))),
    }
}

/// A native command buffer built by a backend, named by the backend.
#[derive(Clone, Copy, Debug, PartialEq, Eq, Hash)]
pub struct BufferHandle(pub usize);

/// How a patch reached a built command buffer.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum UpdateKind {
    /// Through the API's update call (`cuGraphExecKernelNodeSetParams`, `clUpdateMutableCommandsKHR`).
    Native,
    /// The command buffer was rebuilt because the device cannot update in place.
    Rebuilt,
}

/// The nodes of one partition, in topological order, with the edges between them.
pub struct PartitionNodes<'t> {
    pub nodes: Vec<(NodeId, &'t trace_format::Node)>,
    /// Edges between members of `nodes`, as indices into `nodes`.
    pub edges: Vec<(usize, usize)>,
    /// Every node depends on its predecessor: the backend may build an in-order buffer.
    pub straight_line: bool,
}

impl PartitionNodes<'_> {
    /// The same partition over `nodes`, changed copies of its own (in the same order).
    pub fn over<'n>(&self, nodes: &'n [(NodeId, Node)]) -> PartitionNodes<'n> {
        PartitionNodes { nodes: nodes.iter().map(|(id, node)| (*id, node)).collect(), edges: self.edges.clone(), straight_line: self.straight_line }
    }

    /// Each node's predecessors in the partition (indices into `nodes`), and whether it has
    /// successors there.
    pub fn links(&self) -> (Vec<Vec<usize>>, Vec<bool>) {
        let mut predecessors: Vec<Vec<usize>> = vec![Vec::new(); self.nodes.len()];
        let mut has_successor = vec![false; self.nodes.len()];
        for &(from, to) in &self.edges {
            predecessors[to].push(from);
            has_successor[from] = true;
        }
        (predecessors, has_successor)
    }

    /// The partition's nodes with `patches` applied, for backends that rebuild instead of
    /// updating in place.
    pub fn patched(&self, patches: &[Patch]) -> BackendResult<Vec<(NodeId, Node)>> {
        let mut patched: Vec<(NodeId, Node)> = self.nodes.iter().map(|(id, node)| (*id, (*node).clone())).collect();
        for patch in patches {
            let (Patch::Arg { node, .. } | Patch::Launch { node, .. }) = patch;
            let Some((_, Node { command: Command::Kernel(launch), .. })) = patched.iter_mut().find(|(id, _)| id == node) else {
                return Err(BackendError::Unsupported(format!("node {node} is not a kernel of this graph")));
            };
            match patch {
                Patch::Arg { index, value, .. } => {
                    *launch.args.get_mut(*index as usize).ok_or_else(|| BackendError::Unsupported(format!("node {node} has no argument {index}")))? =
                        value.clone()
                }
                Patch::Launch { launch: shape, .. } => launch.launch = shape.clone(),
            }
        }
        Ok(patched)
    }

    /// Memory the partition allocates and frees itself (stream-ordered allocation): it exists
    /// only between those two nodes, so a backend may give it an address for each run.
    pub fn allocated_and_freed(&self) -> BTreeSet<MemId> {
        let mems = |alloc: bool| -> BTreeSet<MemId> {
            self.nodes
                .iter()
                .filter_map(|(_, node)| match node.command {
                    Command::MemAlloc { mem } if alloc => Some(mem),
                    Command::MemFree { mem } if !alloc => Some(mem),
                    _ => None,
                })
                .collect()
        };
        mems(true).intersection(&mems(false)).copied().collect()
    }
}

/// Options chosen on the command line that a backend honours.
#[derive(Clone, Debug, Default)]
pub struct BackendOptions {
    /// Index or name fragment of the device to use (`devices::choose`); when `None`, the
    /// recorded device if this machine has it, else the first.
    pub device: Option<String>,
    /// The device the trace was recorded on.
    pub recorded: Option<trace_format::Device>,
    /// Place memory at the recorded addresses (CUDA virtual memory).
    pub exact_addresses: bool,
    /// Collect per-node start and end times.
    pub profile: bool,
    /// Apply patches by rebuilding the command buffer even where the device can update it in
    /// place: what native updates save is then measurable on one device.
    pub rebuild_updates: bool,
    /// The most bytes of memory objects to hold at once (by default what the backend knows of
    /// its device): past it, objects in use at different times share storage.
    pub memory_budget: Option<u64>,
    /// How CUDA graphs replay copies to and from host memory.
    pub host_copies: HostCopies,
}

/// How a CUDA command buffer replays a copy with a host end (`--host-copies`).
#[derive(Clone, Copy, Debug, Default, PartialEq, Eq, clap::ValueEnum)]
pub enum HostCopies {
    /// On the stream between graphs, as the program made it.
    Stream,
    /// As memcpy nodes inside the graphs.
    Nodes,
    /// As kernel nodes reading or writing the replay's pinned memory (linear copies of up to 256 KB;
    /// the others as memcpy nodes): the fastest on an H200 (see `cuda/host_copies.rs`).
    #[default]
    Kernels,
}

/// Per-node device times of the last run, in nanoseconds on the device's clock.
#[derive(Clone, Debug)]
pub struct NodeTiming {
    pub node: NodeId,
    pub queue: usize,
    pub start_ns: u64,
    pub end_ns: u64,
}

pub trait Backend {
    /// The device the backend runs on, for reports.
    fn device_name(&self) -> String;

    /// Why the device is not the one the trace was recorded on, when it is not.
    fn device_note(&self) -> Option<String>;

    /// Whether the native command buffer holds this command (it can, and runs it no slower than
    /// the queue would); the planner runs the others eagerly between partitions.
    fn can_record(&self, command: &Command) -> bool;

    /// Bytes of memory objects the device holds at once, where known: a trace whose objects
    /// add up to more has those in use at different times share storage (`share_storage`).
    fn memory_budget(&self) -> Option<u64> {
        None
    }

    /// Before `load`: objects whose uses never overlap (`lifetimes`) may share storage; an error
    /// where what must still be held at once exceeds `memory_budget`.
    fn share_storage(&mut self, _lifetimes: &Lifetimes, _trace: &Trace) -> BackendResult<()> {
        Ok(())
    }

    /// Whether the backend must know when each memory object is in use (`note_lifetimes`) to
    /// tell apart objects the program allocated at the same address one after another.
    fn reuses_addresses(&self, _trace: &Trace) -> bool {
        false
    }

    /// Before `load`, where the budget or `reuses_addresses` asked for them: when each memory
    /// object is in use.
    fn note_lifetimes(&mut self, _lifetimes: &Lifetimes) {}

    /// Create programs, kernels, queues and memory objects for the whole trace. `trace` holds
    /// its objects only (`TraceReader::objects`): nodes come a segment at a time, to `stage`,
    /// `build` and `run_eager`.
    fn load(&mut self, trace: &Trace, blobs: &BlobStore) -> BackendResult<()>;

    /// Called with a segment's nodes (`ids[i]` is the id of `nodes[i]`) before it runs, outside
    /// the timed part: a backend checks them against its objects and the device, prepares what
    /// they need from the trace's blobs, and lets go of what earlier segments needed that nothing
    /// built holds, once they ran (see `stages_ahead`).
    fn stage(&mut self, _ids: &[NodeId], _nodes: &[Node], _blobs: &BlobStore) -> BackendResult<()> {
        Ok(())
    }

    /// Whether the replay may stage another segment before the ones staged so far have run. It
    /// then submits them back to back and waits once, at the end, or earlier where the host must
    /// look (a comparison, a profile, a recorded fault) or write memory (initial states the device
    /// does not hold, what the host wrote): the device does not idle between segments the
    /// recording separated only because the program's host looked. A backend that says yes keeps
    /// each segment's staged data until a `finish` after it ran, and lets a command buffer be
    /// updated while an earlier launch of it is pending.
    fn stages_ahead(&self) -> bool {
        false
    }

    /// Replace the contents of a memory object from `offset` on (its initial state and
    /// `--input` from 0, what the host wrote into it).
    fn write_memory(&mut self, mem: MemId, offset: u64, data: &[u8]) -> BackendResult<()>;

    /// Read a memory object back after `finish`.
    fn read_memory(&mut self, mem: MemId) -> BackendResult<Vec<u8>>;

    /// Build one native command buffer (graph) from a partition.
    fn build(&mut self, part: &PartitionNodes<'_>) -> BackendResult<BufferHandle>;

    /// Submit a built command buffer; it runs after everything submitted before it.
    fn launch(&mut self, buffer: BufferHandle) -> BackendResult<()>;

    /// Submit the nodes of a partition one command at a time, with events for its edges; like
    /// `launch`, they run after everything submitted before. Host tasks come here too (the
    /// recorded host code is not in the trace, so they only order).
    fn run_eager(&mut self, part: &PartitionNodes<'_>, blobs: &BlobStore) -> BackendResult<()>;

    /// Whether a built command buffer names objects the backend has created again since (storage
    /// shared past the memory budget): then it is updated (rebuilt) before it runs again.
    fn outdated(&self, _buffer: BufferHandle) -> bool {
        false
    }

    /// Apply patches to a built command buffer, natively where the device can.
    fn update(&mut self, buffer: BufferHandle, part: &PartitionNodes<'_>, patches: &[Patch])
        -> BackendResult<UpdateKind>;

    /// Wait until everything submitted has completed.
    fn finish(&mut self) -> BackendResult<()>;

    /// After `finish`: make the device write out what its kernels printed that it still holds.
    fn flush_printed(&mut self) -> BackendResult<()> {
        Ok(())
    }

    /// Before each run of the trace (the warm-up, every timed one, the untimed last one), outside
    /// the timed part: put back device state the trace does not hold to what the recorded run
    /// began with (CUDA: module variables the program never named).
    fn begin_run(&mut self) -> BackendResult<()> {
        Ok(())
    }

    /// The data copies to the host delivered since the last `finish` before this one, by node
    /// (for a built command buffer, the node it was built from): the rows of the copy's host
    /// side (`Extent::rows`), packed in order.
    fn take_received(&mut self) -> BackendResult<Vec<(NodeId, Vec<u8>)>> {
        Ok(Vec::new())
    }

    /// Device times of each node of the last run, when `BackendOptions::profile` was set.
    fn timings(&mut self) -> BackendResult<Vec<NodeTiming>> {
        Ok(Vec::new())
    }
}

#[cfg(test)]
mod tests {
    use super::PartitionNodes;
    use trace_format::{Command, MemId, Node, NodeId, SegmentId};

    #[test]
    fn a_partition_s_own_memory_is_what_it_both_allocates_and_frees() {
        let node = |command| Node { queue: None, segment: SegmentId(0), command, call: "".into() };
        // Memory 1 was allocated in an earlier partition, memory 2 lives on after this one.
        let nodes = [
            node(Command::MemAlloc { mem: MemId(0) }),
            node(Command::MemFree { mem: MemId(1) }),
            node(Command::MemAlloc { mem: MemId(2) }),
            node(Command::MemFree { mem: MemId(0) }),
        ];
        let part = PartitionNodes { nodes: nodes.iter().enumerate().map(|(i, n)| (NodeId(i as u32), n)).collect(), edges: Vec::new(), straight_line: true };
        assert_eq!(part.allocated_and_freed().into_iter().collect::<Vec<_>>(), [MemId(0)]);
    }
}
