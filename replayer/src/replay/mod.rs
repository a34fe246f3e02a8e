//! The replay driver. It loads a validated trace into a backend; then, for a warm-up
//! iteration and each timed one, and for each segment in order, it writes the initial
//! state the segment needs (untimed), runs the segment's partitions, waits and times.
//! Graph mode builds each family's command buffers once and patches them before each
//! member; eager mode submits command by command. With a comparison, each segment's expected
//! memory and the data its copies delivered to the host are compared with the recording after
//! the first and the last iteration (see `compare`).

mod compare;
mod contents;
mod stats;

pub use compare::{Comparison, Element, Mismatch, Rule, Tolerance};
pub use stats::{summarize, TimeStats};

use crate::backend::{Backend, BackendError, BufferHandle, NodeTiming, PartitionNodes, UpdateKind};
use crate::families::{find_families, Family};
use crate::plan::{plan_segment, PartitionKind, PlanError, SegmentPlan};
use crate::segments::{segment_graphs, SegmentGraph};
use compare::{Checker, Run, Subject};
use contents::{memory_used, RecordedContents};
use serde::Serialize;
use std::collections::{BTreeMap, BTreeSet, HashMap};
use std::time::{Duration, Instant};
use trace_format::{BlobStore, Command, Copy, FormatError, MemId, NodeId, Patch, Place, Trace};

#[derive(Clone, Copy, Debug, PartialEq, Eq, Serialize)]
#[serde(rename_all = "lowercase")]
pub enum Mode {
    /// Native command buffers, patched between segments of a family.
    Graph,
    /// One command at a time, as the program submitted them.
    Eager,
}

pub struct RunOptions {
    pub mode: Mode,
    /// Timed iterations; one warm-up iteration runs before them.
    pub iterations: usize,
    pub compare: bool,
    /// Collect per-node device times in the last iteration (`Backend::timings`).
    pub profile: bool,
    /// Contents that replace the recorded initial state of memory objects (`--input`).
    pub inputs: BTreeMap<MemId, Vec<u8>>,
    /// How each memory object's contents are compared (byte for byte where it has no rule).
    pub rules: HashMap<MemId, Rule>,
}

#[derive(Debug, Serialize)]
pub struct RunReport {
    pub mode: Mode,
    pub device: String,
    pub iterations: usize,
    pub segments: usize,
    pub families: usize,
    /// Partitions run per iteration.
    pub partitions: usize,
    pub command_buffers_built: usize,
    pub native_updates: usize,
    pub rebuilds: usize,
    pub time_per_iteration_us: Option<TimeStats>,
    /// `None` unless a comparison was asked for.
    pub comparison: Option<Comparison>,
    #[serde(skip)]
    pub timings: Vec<NodeTiming>,
}

#[derive(Debug, thiserror::Error)]
pub enum ReplayError {
    #[error(transparent)]
    Backend(#[from] BackendError),
    #[error(transparent)]
    Plan(#[from] PlanError),
    #[error("cannot read data of the trace: {0}")]
    Blob(#[from] FormatError),
}

/// A native command buffer and what it was built from.
struct CommandBuffer<'t> {
    handle: BufferHandle,
    nodes: PartitionNodes<'t>,
    /// The patches it holds now.
    applied: Vec<Patch>,
}

/// A family as graph mode runs it.
struct BuiltFamily<'t> {
    plan: SegmentPlan,
    /// Per partition of `plan`: its command buffer, `None` for eager partitions.
    buffers: Vec<Option<CommandBuffer<'t>>>,
    /// Per member, per partition: the member's patches for the nodes of that partition.
    patches: Vec<Vec<Vec<Patch>>>,
}

#[derive(Default)]
struct Counters {
    built: usize,
    native_updates: usize,
    rebuilds: usize,
}

pub struct Replayer<'t> {
    backend: Box<dyn Backend>,
    trace: &'t Trace,
    blobs: &'t BlobStore,
    graphs: Vec<SegmentGraph>,
    /// Each segment's memory, which running it may change.
    used: Vec<Vec<MemId>>,
    families: Vec<Family>,
    /// For each segment, its family and its place among the family's members.
    membership: Vec<(usize, usize)>,
    /// Graph mode: each family's plan and command buffers, made on first use.
    built: Vec<Option<BuiltFamily<'t>>>,
    /// Eager mode: each segment's plan, made on first use.
    eager_plans: Vec<Option<SegmentPlan>>,
}

impl<'t> Replayer<'t> {
    /// Loads `trace` (validated, its sub-graphs inlined: `inline::inline_subgraphs`) into `backend`.
    pub fn new(mut backend: Box<dyn Backend>, trace: &'t Trace, blobs: &'t BlobStore) -> Result<Self, BackendError> {
        backend.load(trace, blobs)?;
        let graphs = segment_graphs(trace);
        let families = find_families(trace, &graphs, &|command| backend.can_record(command));
        let mut membership = vec![(0, 0); graphs.len()];
        for (family_index, family) in families.iter().enumerate() {
            for (member, segment) in family.members.iter().enumerate() {
                membership[segment.index()] = (family_index, member);
            }
        }
        let used = graphs.iter().map(|graph| memory_used(graph.nodes.iter().map(|id| &trace.nodes[id.index()]))).collect();
        Ok(Replayer {
            backend,
            trace,
            blobs,
            used,
            built: (0..families.len()).map(|_| None).collect(),
            eager_plans: vec![None; graphs.len()],
            graphs,
            families,
            membership,
        })
    }

    pub fn device_name(&self) -> String {
        self.backend.device_name()
    }

    pub fn families(&self) -> &[Family] {
        &self.families
    }

    /// The contents of a memory object now (after a run: after its last iteration).
    pub fn read_memory(&mut self, mem: MemId) -> Result<Vec<u8>, BackendError> {
        self.backend.read_memory(mem)
    }

    /// Runs the trace in `options.mode`; `progress(done, total)` follows the iterations.
    pub fn run(&mut self, options: &RunOptions, progress: &mut dyn FnMut(usize, usize)) -> Result<RunReport, ReplayError> {
        let mut counters = Counters::default();
        let replaced: BTreeSet<MemId> = options.inputs.keys().copied().collect();
        let total = options.iterations + 1;
        let mut iteration_us = Vec::with_capacity(options.iterations);
        let mut checker = options.compare.then(Checker::default);
        let mut timings = Vec::new();
        for iteration in 0..total {
            let last = iteration + 1 == total;
            // The first and the last run are compared: bytes that differ between them are unstable.
            let compared_run = match (iteration, last) {
                (_, true) => Some(Run::Last),
                (0, false) => Some(Run::First),
                _ => None,
            };
            for (mem, data) in &options.inputs {
                self.backend.write_memory(*mem, data)?;
            }
            let mut contents = RecordedContents::new(self.trace, &replaced);
            let mut elapsed = Duration::ZERO;
            for (segment, recorded) in self.trace.segments.iter().enumerate() {
                for state in contents.to_write(recorded) {
                    self.backend.write_memory(state.mem, &self.blobs.get(state.blob)?)?;
                }
                let started = Instant::now();
                match options.mode {
                    Mode::Graph => self.run_graph(segment, &mut counters)?,
                    Mode::Eager => self.run_eager(segment)?,
                }
                self.backend.finish()?;
                elapsed += started.elapsed();
                contents.segment_ran(recorded, &self.used[segment]);
                if last && options.profile {
                    let segment_timings = self.backend.timings()?;
                    timings.extend(segment_timings.into_iter().map(|timing| self.on_own_node(segment, timing)));
                }
                if let (Some(run), Some(checker)) = (compared_run, checker.as_mut()) {
                    self.compare_segment(segment, run, &options.rules, checker)?;
                }
            }
            if iteration > 0 {
                iteration_us.push(elapsed.as_secs_f64() * 1e6);
            }
            progress(iteration + 1, total);
        }
        Ok(RunReport {
            mode: options.mode,
            device: self.backend.device_name(),
            iterations: options.iterations,
            segments: self.trace.segments.len(),
            families: self.families.len(),
            partitions: self.partitions_per_iteration(options.mode),
            command_buffers_built: counters.built,
            native_updates: counters.native_updates,
            rebuilds: counters.rebuilds,
            time_per_iteration_us: summarize(&iteration_us),
            comparison: checker.map(|checker| checker.comparison),
            timings,
        })
    }

    /// A family's command buffers hold its base's nodes: name the segment's own node instead.
    fn on_own_node(&self, segment: usize, mut timing: NodeTiming) -> NodeTiming {
        timing.node = self.own_node(segment, timing.node);
        timing
    }

    /// The node of `segment` standing where `node` (of the segment or of its family's base) stands.
    fn own_node(&self, segment: usize, node: NodeId) -> NodeId {
        let base = &self.graphs[self.families[self.membership[segment].0].base.index()];
        match base.nodes.binary_search(&node) {
            Ok(local) if self.graphs[segment].nodes.binary_search(&node).is_err() => self.graphs[segment].nodes[local],
            _ => node,
        }
    }

    fn partitions_per_iteration(&self, mode: Mode) -> usize {
        let count = |plan: Option<&SegmentPlan>| plan.map_or(0, |p| p.partitions.len());
        match mode {
            Mode::Graph => self.membership.iter().map(|&(family, _)| count(self.built[family].as_ref().map(|b| &b.plan))).sum(),
            Mode::Eager => self.eager_plans.iter().map(|plan| count(plan.as_ref())).sum(),
        }
    }

    fn run_graph(&mut self, segment: usize, counters: &mut Counters) -> Result<(), ReplayError> {
        let (family, member) = self.membership[segment];
        if self.built[family].is_none() {
            self.built[family] = Some(self.build_family(family, counters)?);
        }
        let Some(built) = self.built[family].as_mut() else { return Ok(()) };
        for (index, partition) in built.plan.partitions.iter().enumerate() {
            match &mut built.buffers[index] {
                Some(buffer) => {
                    let patches = &built.patches[member][index];
                    if *patches != buffer.applied {
                        match self.backend.update(buffer.handle, &buffer.nodes, patches)? {
                            UpdateKind::Native => counters.native_updates += 1,
                            UpdateKind::Rebuilt => counters.rebuilds += 1,
                        }
                        buffer.applied.clone_from(patches);
                    }
                    self.backend.launch(buffer.handle)?;
                }
                // The member's own node: the base's may differ in what no patch carries.
                None => self.backend.run_eager(&partition.nodes_of(self.trace, &self.graphs[segment].nodes), self.blobs)?,
            }
        }
        Ok(())
    }

    /// Plans a family's base segment and builds a command buffer per recorded partition.
    fn build_family(&mut self, family: usize, counters: &mut Counters) -> Result<BuiltFamily<'t>, ReplayError> {
        let trace = self.trace;
        let base = &self.graphs[self.families[family].base.index()];
        let backend = &mut self.backend;
        let plan = plan_segment(trace, base, &|command| backend.can_record(command))?;
        let mut partition_of: HashMap<NodeId, usize> = HashMap::new();
        for (index, partition) in plan.partitions.iter().enumerate() {
            partition_of.extend(partition.nodes.iter().map(|&local| (base.nodes[local], index)));
        }
        let patches: Vec<Vec<Vec<Patch>>> = self.families[family]
            .patches
            .iter()
            .map(|member| {
                let mut by_partition = vec![Vec::new(); plan.partitions.len()];
                for patch in member {
                    let (Patch::Arg { node, .. } | Patch::Launch { node, .. }) = patch;
                    if let Some(&index) = partition_of.get(node) {
                        by_partition[index].push(patch.clone());
                    }
                }
                by_partition
            })
            .collect();
        let mut buffers = Vec::with_capacity(plan.partitions.len());
        for (index, partition) in plan.partitions.iter().enumerate() {
            buffers.push(match partition.kind {
                PartitionKind::Recorded => {
                    let nodes = partition.nodes_of(trace, &base.nodes);
                    let handle = backend.build(&nodes)?;
                    counters.built += 1;
                    // Member 0 is the base, which the buffer was built from.
                    Some(CommandBuffer { handle, nodes, applied: patches[0][index].clone() })
                }
                PartitionKind::Eager => None,
            });
        }
        Ok(BuiltFamily { plan, buffers, patches })
    }

    fn run_eager(&mut self, segment: usize) -> Result<(), ReplayError> {
        if self.eager_plans[segment].is_none() {
            let backend = &self.backend;
            self.eager_plans[segment] =
                Some(plan_segment(self.trace, &self.graphs[segment], &|command| backend.can_record(command))?);
        }
        let Some(plan) = &self.eager_plans[segment] else { return Ok(()) };
        for partition in &plan.partitions {
            self.backend.run_eager(&partition.nodes_of(self.trace, &self.graphs[segment].nodes), self.blobs)?;
        }
        Ok(())
    }

    /// Compares what `segment` left with the recording: its expected memory states, and the data
    /// its copies delivered to the host.
    fn compare_segment(&mut self, segment: usize, run: Run, rules: &HashMap<MemId, Rule>, checker: &mut Checker) -> Result<(), ReplayError> {
        let rule = |mem: MemId| rules.get(&mem).copied().unwrap_or(Rule::Exact);
        for state in &self.trace.segments[segment].expected {
            let actual = self.backend.read_memory(state.mem)?;
            let expected = self.blobs.get(state.blob)?;
            checker.check(run, segment as u32, Subject::Memory(state.mem), &expected, actual, rule(state.mem));
        }
        for (node, data) in self.backend.take_received()? {
            let node = self.own_node(segment, node);
            let Some(Command::Copy(Copy { src, dst: Place::Host { data: Some(blob) }, extent })) = self.trace.nodes.get(node.index()).map(|n| &n.command) else {
                continue;
            };
            // Only the rows the copy wrote: the rest of the program's host memory is not its result.
            let recorded = self.blobs.get(*blob)?;
            let Some(expected) = packed_rows(extent, &recorded) else { continue };
            let source_rule = match src {
                Place::Memory { mem, .. } => rule(*mem),
                Place::Host { .. } => Rule::Exact,
            };
            checker.check(run, segment as u32, Subject::Received(node), &expected, data, source_rule);
        }
        Ok(())
    }
}

/// The rows a copy's extent writes on its host side, packed, out of the host memory the
/// recording kept; `None` where the recording does not cover them.
fn packed_rows(extent: &trace_format::Extent, host: &[u8]) -> Option<Vec<u8>> {
    let mut packed = Vec::new();
    for (start, len) in extent.rows(false) {
        let start = usize::try_from(start).ok()?;
        packed.extend_from_slice(host.get(start..start.checked_add(usize::try_from(len).ok()?)?)?);
    }
    Some(packed)
}
