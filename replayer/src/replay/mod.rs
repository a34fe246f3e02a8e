//! The replay driver. It loads a validated trace's objects into a backend; then, for a warm-up
//! run, each timed one, and (to compare or profile) a last one, it streams the trace's segments,
//! one at a time:
//!
//! 1. read the segment (`TraceReader::segments`), apply the what-if patches (`Overrides`),
//!    inline the program's own graphs (`Inliner`);
//! 2. place it in its family (`FamilyFinder`: the first segment of a new shape founds a family and
//!    is kept as its base; the others get the patches that turn the base into them), plan the
//!    family once (its base's partitions stand for every member's), and let the backend stage
//!    the segment's host data (`Backend::stage`);
//! 3. write the initial states the device does not hold (`RecordedContents`), untimed, once the
//!    segments staged before have run;
//! 4. run the staged segments, timed, back to back where the backend stages ahead
//!    (`Backend::stages_ahead`): graph mode builds the family's command buffers at its first
//!    member and patches them before each one (the patches made before the clock starts),
//!    running eager partitions from the member's own nodes; eager mode submits the member's
//!    nodes partition by partition; then wait. The recording's segments end where the program's
//!    host looked; the replay's host waits only where it looks itself: a segment it compares,
//!    profiles or expects to fail runs alone, and memory is written between segments;
//! 5. with a comparison, compare what a segment left with the recording in the first run and
//!    the last (in the runs between, only where the first differed; `compare_segment`, see
//!    `compare`), and note the segment's hazards in the first; with a profile, keep the last
//!    run's device times; then drop the segment.
//!
//! What stays in memory is the trace's objects, each family's base, plan, command buffers and
//! varying slots, what the device holds per memory object, and the segments staged ahead (at
//! most `STAGED_SEGMENTS`): never the whole trace.

pub(crate) mod addresses;
mod compare;
mod contents;
mod elements;
mod printed;
mod stats;

pub use compare::{Comparison, Element, Mismatch, Rule, Tolerance};
pub use elements::{memory_elements, points_to_const};
pub use stats::{summarize, TimeStats};

use crate::backend::{Backend, BackendError, BufferHandle, UpdateKind};
use crate::families::FamilyFinder;
use crate::hazards::{Hazard, HazardFinder};
use crate::lifetimes::Lifetimes;
use crate::inline::Inliner;
use crate::overrides::Overrides;
use crate::plan::{plan_segment, PartitionKind, PlanError, SegmentPlan};
use crate::profile::{NodeName, ProfiledNode};
use crate::segments::SegmentGraph;
use compare::{Checker, Run, Subject};
use printed::StdoutCapture;
pub use contents::memory_used;
use contents::RecordedContents;
use serde::Serialize;
use std::collections::{BTreeMap, HashMap, HashSet};
use std::time::{Duration, Instant};
use trace_format::{BlobId, Command, Copy, FormatError, MemId, MemState, Node, NodeId, Patch, Place, TraceReader};

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
    /// Timed iterations; one warm-up iteration runs before them, and one untimed after them to
    /// compare or profile.
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
    /// The part of each iteration the host spent submitting: patching and launching command
    /// buffers or enqueuing commands, and any wait those need (a rebuild waits for the buffer it
    /// replaces); the rest is waiting for the device.
    pub submitting_per_iteration_us: Option<TimeStats>,
    /// The timed iterations' times, in microseconds.
    #[serde(skip)]
    pub iteration_us: Vec<f64>,
    /// Their submitting parts.
    #[serde(skip)]
    pub submitting_us: Vec<f64>,
    /// `None` unless a comparison was asked for.
    pub comparison: Option<Comparison>,
    /// Device times of the last iteration's nodes, with `RunOptions::profile`.
    #[serde(skip)]
    pub timings: Vec<ProfiledNode>,
    /// The device fault the replay ended with, as the recording did (`Segment::failed_with`):
    /// nothing runs on that device after it, so later iterations do not run.
    #[serde(skip_serializing_if = "Option::is_none")]
    pub ended_as_recorded: Option<Fault>,
}

impl RunReport {
    /// Adds a later run of the same mode (without comparison): its times join these, its command
    /// buffer work adds up; the profile stays the first run's.
    pub fn pool(&mut self, later: RunReport) {
        self.iterations += later.iterations;
        self.iteration_us.extend(later.iteration_us);
        self.time_per_iteration_us = summarize(&self.iteration_us);
        self.submitting_us.extend(later.submitting_us);
        self.submitting_per_iteration_us = summarize(&self.submitting_us);
        self.command_buffers_built += later.command_buffers_built;
        self.native_updates += later.native_updates;
        self.rebuilds += later.rebuilds;
        self.ended_as_recorded = self.ended_as_recorded.take().or(later.ended_as_recorded);
    }
}

/// A synchronization that failed with a device fault, in a segment.
#[derive(Clone, Debug, PartialEq, Serialize)]
pub struct Fault {
    pub segment: u32,
    pub error: String,
}

#[derive(Debug, thiserror::Error)]
pub enum ReplayError {
    #[error(transparent)]
    Backend(#[from] BackendError),
    #[error(transparent)]
    Plan(#[from] PlanError),
    #[error("cannot read data of the trace: {0}")]
    Blob(#[from] FormatError),
    #[error("cannot capture what the device prints: {0}")]
    Printed(#[from] std::io::Error),
}

/// The most segments, and nodes, the replay stages ahead before it submits them (see
/// `Backend::stages_ahead`): what it holds of them stays bounded.
const STAGED_SEGMENTS: usize = 64;
const STAGED_NODES: usize = 1 << 14;

/// A segment staged, waiting to be submitted with those staged before it.
struct Staged {
    graph: SegmentGraph,
    family: usize,
    /// Graph mode: the patches that turn its family's command buffers into it, by partition.
    patches: Vec<Vec<Patch>>,
}

/// The timed parts of a run: submitting and waiting, and the submitting alone.
#[derive(Default)]
struct Clock {
    elapsed: Duration,
    submitting: Duration,
}

/// A native command buffer and the patches it holds now.
struct CommandBuffer {
    handle: BufferHandle,
    applied: Vec<Patch>,
}

/// How a family runs: its base's plan, which every member runs by.
struct FamilyPlan {
    plan: SegmentPlan,
    /// The partition each of the base's nodes is in.
    partition_of: HashMap<NodeId, usize>,
}

/// A family's command buffers, built from its base: per partition of its plan, `None` for
/// eager partitions.
struct BuiltFamily {
    buffers: Vec<Option<CommandBuffer>>,
}

#[derive(Default)]
struct Counters {
    built: usize,
    native_updates: usize,
    rebuilds: usize,
}

pub struct Replayer<'r> {
    backend: Box<dyn Backend>,
    reader: &'r TraceReader,
    overrides: Overrides,
    families: FamilyFinder<'r>,
    /// Per family: how it runs, made on first use.
    plans: Vec<Option<FamilyPlan>>,
    /// Graph mode, per family: its command buffers, made on first use.
    built: Vec<Option<BuiltFamily>>,
    /// The expected contents being compared, one memory object's after another's: one buffer
    /// kept, not fresh pages faulted in and zeroed for each (gigabytes in OpenCL-CTS's traces).
    expected: Vec<u8>,
}

impl<'r> Replayer<'r> {
    /// Loads the objects of the trace `reader` reads (validated; `overrides` checked against it)
    /// into `backend`.
    pub fn new(mut backend: Box<dyn Backend>, reader: &'r TraceReader, overrides: Overrides) -> Result<Self, BackendError> {
        let total: u64 = reader.objects().memories.iter().map(|memory| memory.size).sum();
        let over_budget = backend.memory_budget().is_some_and(|budget| total > budget);
        if over_budget || backend.reuses_addresses(reader.objects()) {
            let lifetimes = Lifetimes::scan(reader).map_err(|error| BackendError::Invalid(format!("the trace's segments do not read: {error}")))?;
            if over_budget {
                backend.share_storage(&lifetimes, reader.objects())?;
            }
            backend.note_lifetimes(&lifetimes);
        }
        backend.load(reader.objects(), reader.blobs())?;
        Ok(Replayer { backend, reader, overrides, families: FamilyFinder::new(reader.objects()), plans: Vec::new(), built: Vec::new(), expected: Vec::new() })
    }

    pub fn device_name(&self) -> String {
        self.backend.device_name()
    }

    /// The contents of a memory object now (after a run: after its last iteration).
    pub fn read_memory(&mut self, mem: MemId) -> Result<Vec<u8>, BackendError> {
        self.backend.read_memory(mem)
    }

    /// Runs the trace in `options.mode`; `progress(done, total)` follows the iterations.
    pub fn run(&mut self, options: &RunOptions, progress: &mut dyn FnMut(usize, usize)) -> Result<RunReport, ReplayError> {
        let mut counters = Counters::default();
        let replaced = self.first_initial_states(options.inputs.keys().copied().collect())?;
        // Comparisons and profiles end with a run of their own, untimed: it waits after each
        // segment to read what the segment left, where the timed runs wait as little as they can.
        let looks_last = options.compare || options.profile;
        let total = options.iterations + 1 + usize::from(looks_last);
        let mut iteration_us = Vec::with_capacity(options.iterations);
        let mut submitting_us = Vec::with_capacity(options.iterations);
        let mut checker = options.compare.then(Checker::default);
        let hazards = HazardFinder::new(self.reader.objects());
        let mut timings = Vec::new();
        let mut partitions = 0;
        let mut ended_as_recorded = None;
        'iterations: for iteration in 0..total {
            let last = iteration + 1 == total;
            // Every run is compared (middle ones only where the first differed): bytes that differ between runs are unstable.
            let compared_run = match (iteration, last) {
                (_, true) => Run::Last,
                (0, false) => Run::First,
                _ => Run::Middle,
            };
            self.backend.begin_run()?;
            // An input stands for its memory's first recorded contents and is written where those
            // come (the memory may share storage with objects used before it), or now where the
            // trace has none.
            for (mem, data) in options.inputs.iter().filter(|(mem, _)| !replaced.contains_key(mem)) {
                self.backend.write_memory(*mem, 0, data)?;
            }
            let mut inputs_written = HashSet::new();
            let mut contents = RecordedContents::default();
            let mut inliner = Inliner::new(self.reader.node_count());
            let mut clock = Clock::default();
            let mut staged: Vec<Staged> = Vec::new();
            partitions = 0;
            for segment in self.reader.segments() {
                let mut segment = segment?;
                self.overrides.apply(self.reader.objects(), &mut segment);
                let recorded_fault = segment.segment.failed_with.clone().map(|error| Fault { segment: segment.id.0, error });
                if let (0, Some(checker)) = (iteration, checker.as_mut()) {
                    for hazard in hazards.segment(&segment) {
                        note_hazard(checker, &hazard, &segment, self.reader.blobs());
                    }
                }
                let graph = inliner.graph(segment);
                let backend = &*self.backend;
                let placement = self.families.place(&graph, &|command| backend.can_record(command));
                partitions += self.plan(placement.family)?.plan.partitions.len();
                // Where the host looks after the segment, it runs alone; the others run back to
                // back in the compared runs too, whose comparisons then check that. What a segment
                // prints is taken in every run that compares (else it would reach the replay's own
                // output).
                let looks = recorded_fault.is_some()
                    || (last && options.profile)
                    || match (&checker, compared_run) {
                        (None, _) => false,
                        (Some(_), Run::First | Run::Last) => leaves_results(&graph),
                        (Some(checker), Run::Middle) => checker.watches_segment(graph.segment.0) || graph.recorded.printed.is_some(),
                    };
                let to_write: Vec<MemState> = contents.to_write(&graph.recorded).into_iter().cloned().collect();
                let staged_nodes: usize = staged.iter().map(|staged| staged.graph.nodes.len()).sum();
                let full = staged.len() >= STAGED_SEGMENTS || staged_nodes + graph.nodes.len() > STAGED_NODES;
                // Memory is written once the segments staged before it ran.
                if looks || full || !to_write.is_empty() || !graph.recorded.host_writes.is_empty() {
                    self.run_staged(&mut staged, options.mode, &mut counters, &mut clock)?;
                }
                self.backend.stage(&graph.ids, &graph.nodes, self.reader.blobs())?;
                for state in to_write {
                    let input = options.inputs.get(&state.mem).filter(|_| replaced.get(&state.mem) == Some(&state.blob) && inputs_written.insert(state.mem));
                    match input {
                        Some(data) => self.backend.write_memory(state.mem, 0, data)?,
                        None => self.backend.write_memory(state.mem, 0, &self.reader.blobs().get(state.blob)?)?,
                    }
                }
                // What the host stored into memory while or before the segment ran, as it did.
                for (mem, offset, bytes) in contents::joined_host_writes(&graph.recorded.host_writes, self.reader.blobs())? {
                    self.backend.write_memory(mem, offset, &bytes)?;
                }
                contents.segment_ran(&graph.recorded, &memory_used(&graph.nodes));
                let patches = match options.mode {
                    Mode::Graph => self.patches_by_partition(&graph, placement.family),
                    Mode::Eager => Vec::new(),
                };
                let printed_recorded = graph.recorded.printed;
                staged.push(Staged { graph, family: placement.family, patches });
                if !looks {
                    // Run before the next segment is read, where no more is staged: a CPU device
                    // then finds the segment's data still in its caches.
                    if !self.backend.stages_ahead() {
                        self.run_staged(&mut staged, options.mode, &mut counters, &mut clock)?;
                    }
                    continue;
                }
                // What the device prints is compared where the recording kept what it printed.
                let capture = match (&checker, printed_recorded) {
                    (Some(_), Some(_)) => Some(StdoutCapture::begin()?),
                    _ => None,
                };
                let (ran, looked) = match self.run_staged(&mut staged, options.mode, &mut counters, &mut clock) {
                    Ok(looked) => (Ok(()), looked),
                    Err(error) => (Err(error), None),
                };
                let judged = judge(ran, recorded_fault, last);
                let printed = match capture {
                    Some(capture) => {
                        if let (Judged::AsRecorded, Some(recorded)) = (&judged, printed_recorded) {
                            let expected = self.reader.blobs().get(recorded)?.len() as u64;
                            printed::flush_until(&capture, expected, &mut || Ok::<(), ReplayError>(self.backend.flush_printed()?))?;
                        }
                        Some(capture.finish()?)
                    }
                    None => None,
                };
                match judged {
                    Judged::AsRecorded => {}
                    Judged::EndedAsRecorded(fault) => {
                        if let Some(checker) = checker.as_mut() {
                            checker.comparison.compared += 1;
                        }
                        ended_as_recorded = Some(fault);
                        break 'iterations;
                    }
                    Judged::Differs(outcome) => {
                        if let Some(checker) = checker.as_mut() {
                            checker.comparison.compared += 1;
                            checker.comparison.outcomes_differ.push(outcome);
                        }
                    }
                    Judged::Failed(error) => return Err(error),
                }
                let Some(Staged { graph, family, .. }) = looked else { continue };
                if last && options.profile {
                    self.keep_timings(&graph, family, &mut timings)?;
                }
                if let Some(checker) = checker.as_mut() {
                    self.compare_segment(&graph, family, compared_run, &options.rules, checker)?;
                    if let (Some(recorded), Some(printed)) = (printed_recorded, printed) {
                        let expected = self.reader.blobs().get(recorded)?;
                        checker.check(compared_run, graph.segment.0, Subject::Printed, &expected, printed, Rule::Exact);
                    }
                }
            }
            self.run_staged(&mut staged, options.mode, &mut counters, &mut clock)?;
            if iteration > 0 && !(last && looks_last) {
                iteration_us.push(clock.elapsed.as_secs_f64() * 1e6);
                submitting_us.push(clock.submitting.as_secs_f64() * 1e6);
            }
            progress(iteration + 1, total);
        }
        Ok(RunReport {
            mode: options.mode,
            device: self.backend.device_name(),
            // Fewer than asked where the replay ended with the recorded fault.
            iterations: iteration_us.len(),
            segments: self.reader.segment_count(),
            families: self.families.families().len(),
            partitions,
            command_buffers_built: counters.built,
            native_updates: counters.native_updates,
            rebuilds: counters.rebuilds,
            time_per_iteration_us: summarize(&iteration_us),
            submitting_per_iteration_us: summarize(&submitting_us),
            iteration_us,
            submitting_us,
            comparison: checker.map(|checker| checker.comparison),
            timings,
            ended_as_recorded,
        })
    }

    /// Submits the `staged` segments back to back and waits for them, timed on `clock`; returns
    /// the last of them (the one the host looks at, where it ran alone).
    fn run_staged(&mut self, staged: &mut Vec<Staged>, mode: Mode, counters: &mut Counters, clock: &mut Clock) -> Result<Option<Staged>, ReplayError> {
        if staged.is_empty() {
            return Ok(None);
        }
        let started = Instant::now();
        let mut ran = Ok(());
        for segment in staged.iter_mut() {
            ran = match mode {
                Mode::Graph => self.run_graph(&segment.graph, segment.family, std::mem::take(&mut segment.patches), counters),
                Mode::Eager => self.run_eager(&segment.graph, segment.family),
            };
            if ran.is_err() {
                break;
            }
        }
        let submitted = started.elapsed();
        let ran = ran.and_then(|()| Ok(self.backend.finish()?));
        clock.elapsed += started.elapsed();
        clock.submitting += submitted;
        let last = staged.pop();
        staged.clear();
        ran.map(|()| last)
    }

    /// What the recording first starts each of `replaced` (`--input`) memory with, which the
    /// input stands for: one pass over the trace, when there are inputs.
    fn first_initial_states(&self, mut replaced: Vec<MemId>) -> Result<HashMap<MemId, BlobId>, ReplayError> {
        let mut first = HashMap::new();
        for segment in self.reader.segments() {
            if replaced.is_empty() {
                break;
            }
            for state in &segment?.segment.initial {
                if let Some(position) = replaced.iter().position(|&mem| mem == state.mem) {
                    replaced.swap_remove(position);
                    first.insert(state.mem, state.blob);
                }
            }
        }
        Ok(first)
    }

    /// How `family` runs, planned from its base on first use.
    fn plan(&mut self, family: usize) -> Result<&FamilyPlan, PlanError> {
        if self.plans.len() <= family {
            self.plans.resize_with(family + 1, || None);
            self.built.resize_with(family + 1, || None);
        }
        if self.plans[family].is_none() {
            let backend = &*self.backend;
            let base = &self.families.family(family).base;
            let plan = plan_segment(base, &|command| backend.can_record(command))?;
            let mut partition_of = HashMap::new();
            for (index, partition) in plan.partitions.iter().enumerate() {
                partition_of.extend(partition.nodes.iter().map(|&local| (base.ids[local], index)));
            }
            self.plans[family] = Some(FamilyPlan { plan, partition_of });
        }
        Ok(self.plans[family].as_ref().expect("planned above"))
    }

    /// The patches that turn `family`'s command buffers into `graph`, by partition.
    fn patches_by_partition(&self, graph: &SegmentGraph, family: usize) -> Vec<Vec<Patch>> {
        let planned = self.plans[family].as_ref().expect("a family is planned before it runs");
        let mut by_partition = vec![Vec::new(); planned.plan.partitions.len()];
        for patch in self.families.patches(family, graph) {
            let (Patch::Arg { node, .. } | Patch::Launch { node, .. }) = &patch;
            if let Some(&index) = planned.partition_of.get(node) {
                by_partition[index].push(patch);
            }
        }
        by_partition
    }

    /// The last iteration's device times of `graph`'s nodes.
    fn keep_timings(&mut self, graph: &SegmentGraph, family: usize, timings: &mut Vec<ProfiledNode>) -> Result<(), ReplayError> {
        let base = &self.families.family(family).base;
        for mut timing in self.backend.timings()? {
            timing.node = own_node(base, graph, timing.node);
            let described = graph.node(timing.node).map(|node| NodeName::of(self.reader.objects(), node));
            timings.push(ProfiledNode { timing, described });
        }
        Ok(())
    }

    /// Runs `graph` from its family's command buffers, patched by `patches` (by partition).
    fn run_graph(&mut self, graph: &SegmentGraph, family: usize, patches: Vec<Vec<Patch>>, counters: &mut Counters) -> Result<(), ReplayError> {
        if self.built[family].is_none() {
            self.built[family] = Some(self.build_family(family, counters)?);
        }
        let (Some(planned), Some(built)) = (&self.plans[family], &mut self.built[family]) else { return Ok(()) };
        let base = &self.families.family(family).base;
        let stand_ins = self.families.stand_ins(family, graph);
        for ((partition, buffer), patches) in planned.plan.partitions.iter().zip(&mut built.buffers).zip(patches) {
            match buffer {
                Some(buffer) => {
                    if patches != buffer.applied || self.backend.outdated(buffer.handle) {
                        match self.backend.update(buffer.handle, &partition.nodes_of(base), &patches)? {
                            UpdateKind::Native => counters.native_updates += 1,
                            UpdateKind::Rebuilt => counters.rebuilds += 1,
                        }
                        buffer.applied = patches;
                    }
                    self.backend.launch(buffer.handle)?;
                }
                // The member's own nodes (the base's may differ in what no patch carries), on the
                // memory the command buffers use.
                None if stand_ins.is_empty() => self.backend.run_eager(&partition.nodes_of(graph), self.reader.blobs())?,
                None => {
                    let own = partition.nodes_of(graph);
                    let nodes: Vec<(NodeId, Node)> = own.nodes.iter().map(|(id, node)| (*id, stand_ins.apply_to_node(node))).collect();
                    self.backend.run_eager(&own.over(&nodes), self.reader.blobs())?
                }
            }
        }
        Ok(())
    }

    /// Builds a command buffer per recorded partition of `family`'s plan, from its base.
    fn build_family(&mut self, family: usize, counters: &mut Counters) -> Result<BuiltFamily, ReplayError> {
        let base = &self.families.family(family).base;
        let planned = self.plans[family].as_ref().expect("a family is planned before it runs");
        let mut buffers = Vec::with_capacity(planned.plan.partitions.len());
        for partition in &planned.plan.partitions {
            buffers.push(match partition.kind {
                PartitionKind::Recorded => {
                    let handle = self.backend.build(&partition.nodes_of(base))?;
                    counters.built += 1;
                    // The buffer holds the base's own values: no patch.
                    Some(CommandBuffer { handle, applied: Vec::new() })
                }
                PartitionKind::Eager => None,
            });
        }
        Ok(BuiltFamily { buffers })
    }

    /// Runs `graph`'s own nodes partition by partition, as its family's plan cuts them.
    fn run_eager(&mut self, graph: &SegmentGraph, family: usize) -> Result<(), ReplayError> {
        let planned = self.plans[family].as_ref().expect("a family is planned before it runs");
        for partition in &planned.plan.partitions {
            self.backend.run_eager(&partition.nodes_of(graph), self.reader.blobs())?;
        }
        Ok(())
    }

    /// Compares what `graph` (of `family`) left with the recording: its expected memory states,
    /// and the data its copies delivered to the host.
    fn compare_segment(&mut self, graph: &SegmentGraph, family: usize, run: Run, rules: &HashMap<MemId, Rule>, checker: &mut Checker) -> Result<(), ReplayError> {
        let rule = |mem: MemId| rules.get(&mem).copied().unwrap_or(Rule::Exact);
        let segment = graph.segment.0;
        let blobs = self.reader.blobs();
        // A middle run reads only what differed in the first: the rest equalled the recording.
        let read = |subject: Subject, checker: &Checker| run != Run::Middle || checker.watches(segment, subject);
        for state in &graph.recorded.expected {
            if !read(Subject::Memory(state.mem), checker) {
                continue;
            }
            let actual = self.backend.read_memory(state.mem)?;
            blobs.get_into(state.blob, &mut self.expected)?;
            checker.check(run, segment, Subject::Memory(state.mem), &self.expected, actual, rule(state.mem));
        }
        for (node, data) in self.backend.take_received()? {
            let node = own_node(&self.families.family(family).base, graph, node);
            if !read(Subject::Received(node), checker) {
                continue;
            }
            let Some(Command::Copy(Copy { src, dst: Place::Host { data: Some(blob) }, extent })) = graph.node(node).map(|n| &n.command) else {
                continue;
            };
            // Only the rows the copy wrote: the rest of the program's host memory is not its result.
            let recorded = blobs.get(*blob)?;
            let Some(expected) = packed_rows(extent, &recorded) else { continue };
            let source_rule = match src {
                Place::Memory { mem, .. } => rule(*mem),
                Place::Host { .. } => Rule::Exact,
            };
            let races = matches!(src, Place::Memory { mem, .. } if checker.is_racy(segment, Subject::Memory(*mem)));
            if races || graph.recorded.racy_reads.contains(&node) {
                checker.note_racy(segment, Subject::Received(node));
            }
            checker.check(run, segment, Subject::Received(node), &expected, data, source_rule);
        }
        Ok(())
    }
}

/// Whether `graph` leaves anything to compare: expected memory states, data its copies deliver
/// to the host, what it printed.
fn leaves_results(graph: &SegmentGraph) -> bool {
    let delivers = |node: &Node| matches!(node.command, Command::Copy(Copy { dst: Place::Host { data: Some(_) }, .. }));
    !graph.recorded.expected.is_empty() || graph.recorded.printed.is_some() || graph.nodes.iter().any(delivers)
}

/// Reports `hazard` of `segment`, and what its race leaves as a race's outcome: memory two
/// unordered nodes both write, or the bytes the host wrote while a node wrote the same memory.
fn note_hazard(checker: &mut Checker, hazard: &Hazard, segment: &trace_format::TraceSegment, blobs: &trace_format::BlobStore) {
    checker.comparison.hazard(hazard);
    let id = segment.id.0;
    match *hazard {
        Hazard::Nodes { mem, first_writes: true, second_writes: true, .. } => checker.note_racy(id, Subject::Memory(mem)),
        Hazard::Host { mem, .. } => {
            for write in segment.segment.host_writes.iter().filter(|write| write.while_running && write.mem == mem) {
                let start = write.offset as usize;
                let bytes = blobs.raw_len(write.blob).unwrap_or(0) as usize;
                checker.note_racy_bytes(id, Subject::Memory(mem), start..start + bytes);
            }
        }
        Hazard::Nodes { .. } => {}
    }
}

/// The node of `graph` standing where `node` (of the graph or of its family's `base`) stands: a
/// family's command buffers hold its base's nodes.
/// How a segment's run compares with the outcome the recording kept for it.
#[derive(Debug)]
enum Judged {
    /// It ran, as in the recording (or its recorded failure is judged in another run).
    AsRecorded,
    /// It failed with the device fault the recording ended with there.
    EndedAsRecorded(Fault),
    /// The recording failed there and the replay did not: in words, for the comparison.
    Differs(String),
    /// The replay failed on its own.
    Failed(ReplayError),
}

/// Judges `ran` against `recorded`; a recorded failure the replay did not reproduce counts once,
/// in the `last` run (the one that compares).
fn judge(ran: Result<(), ReplayError>, recorded: Option<Fault>, last: bool) -> Judged {
    match (ran, recorded) {
        (Ok(()), None) => Judged::AsRecorded,
        (Err(error), Some(fault)) if error.to_string().contains(&fault.error) => Judged::EndedAsRecorded(fault),
        (Err(error), _) => Judged::Failed(error),
        (Ok(()), Some(_)) if !last => Judged::AsRecorded,
        (Ok(()), Some(fault)) => Judged::Differs(format!("segment {}: the recording ended with {}, the replay did not", fault.segment, fault.error)),
    }
}

fn own_node(base: &SegmentGraph, graph: &SegmentGraph, node: NodeId) -> NodeId {
    match base.local(node) {
        Some(local) if graph.local(node).is_none() => graph.ids[local],
        _ => node,
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

#[cfg(test)]
mod ahead_tests;

#[cfg(test)]
mod fault_tests {
    use super::*;

    fn fault() -> Option<Fault> {
        Some(Fault { segment: 3, error: "CUDA_ERROR_ASSERT".into() })
    }

    fn failed(detail: &str) -> Result<(), ReplayError> {
        Err(BackendError::Api { call: "cuCtxSynchronize".into(), detail: detail.into() }.into())
    }

    #[test]
    fn a_recorded_device_fault_is_reproduced_not_an_error() {
        assert!(matches!(judge(failed("CUDA_ERROR_ASSERT: device-side assert triggered"), fault(), false), Judged::EndedAsRecorded(Fault { segment: 3, .. })));
        assert!(matches!(judge(failed("CUDA_ERROR_ILLEGAL_ADDRESS: an illegal memory access"), fault(), true), Judged::Failed(_)), "another fault");
        assert!(matches!(judge(failed("CUDA_ERROR_ASSERT"), None, true), Judged::Failed(_)), "a fault the recording did not have");
        assert!(matches!(judge(Ok(()), fault(), false), Judged::AsRecorded), "judged in the run that compares");
        let Judged::Differs(outcome) = judge(Ok(()), fault(), true) else { panic!("a fault the replay did not reproduce passed") };
        assert_eq!(outcome, "segment 3: the recording ended with CUDA_ERROR_ASSERT, the replay did not");
        assert!(matches!(judge(Ok(()), None, true), Judged::AsRecorded));
    }
}
