//! Checks that a trace can be planned and replayed: every reference resolves, every blob
//! is present, each segment's graph is acyclic and edges stay inside their segment. The trace
//! is checked as it streams by: its objects, then one segment at a time, then (for `validate`)
//! every blob. Problems are collected, not stopped at, so one run names everything that is
//! wrong; what a problem concerns is only put into words when there is one.

use crate::graph::topological_order;
use trace_format::{
    Arg, BlobId, BlobStore, Command, Copy, Edge, Extent, Fill, FormatError, KernelLaunch, Launch, MemId, MemKind,
    Node, ParamKind, Place, Trace, TraceReader, TraceSegment,
};

/// One thing wrong with a trace: what it concerns (`node 12`) and what is wrong with it.
#[derive(Clone, Debug, PartialEq, Eq)]
pub struct Problem {
    pub subject: String,
    pub message: String,
}

impl std::fmt::Display for Problem {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        write!(f, "{}: {}", self.subject, self.message)
    }
}

/// What a problem concerns, put into words when there is one.
type Subject<'s> = &'s dyn Fn() -> String;

/// Every problem found in the trace `reader` reads, blobs read whole included; empty when it
/// can be replayed.
pub fn validate(reader: &TraceReader) -> Result<Vec<Problem>, FormatError> {
    let mut validator = Validator::new(reader);
    reader.for_each_segment(|segment| {
        validator.segment(&segment);
        Ok::<(), FormatError>(())
    })?;
    validator.blob_contents();
    Ok(validator.finish())
}

/// Checks a trace as it streams by (`validate` drives it; `info` and `replay` check while they
/// read the segments for their own work).
pub struct Validator<'a> {
    reader: &'a TraceReader,
    trace: &'a Trace,
    blobs: &'a BlobStore,
    problems: Vec<Problem>,
}

impl<'a> Validator<'a> {
    /// Checks the trace's objects.
    pub fn new(reader: &'a TraceReader) -> Validator<'a> {
        let mut validator = Validator { reader, trace: reader.objects(), blobs: reader.blobs(), problems: Vec::new() };
        validator.header();
        validator.memories();
        validator.textures();
        validator.programs_kernels_queues();
        validator
    }

    /// Checks one segment: its nodes, its edges, that they form no cycle, its states.
    pub fn segment(&mut self, segment: &TraceSegment) {
        for (id, node) in segment.nodes_with_ids() {
            self.node(&|| format!("node {id}"), node);
        }
        let first = segment.first_node.0;
        let mut local_edges = Vec::with_capacity(segment.edges.len());
        for (index, edge) in segment.edges.iter().enumerate() {
            if self.edge(segment, segment.first_edge + index, edge) {
                local_edges.push(((edge.from.0 - first) as usize, (edge.to.0 - first) as usize));
            }
        }
        if let Err(blocked) = topological_order(segment.nodes.len(), local_edges) {
            let blocked: Vec<u32> = blocked.into_iter().map(|local| first + local as u32).collect();
            self.cycle(&|| format!("segment {}", segment.id), &blocked);
        }
        self.states(segment);
    }

    /// The problems found so far.
    pub fn problems(&self) -> &[Problem] {
        &self.problems
    }

    pub fn finish(self) -> Vec<Problem> {
        self.problems
    }

    fn report(&mut self, subject: Subject<'_>, message: String) {
        self.problems.push(Problem { subject: subject(), message });
    }

    /// Reports `what index` unless it is below `count`; returns whether it resolves.
    fn resolves(&mut self, subject: Subject<'_>, what: &str, index: usize, count: usize) -> bool {
        if index < count {
            return true;
        }
        self.report(subject, format!("{what} {index} does not exist (the trace has {count})"));
        false
    }

    /// Reads every blob once: the reader checks blob checksums lazily, so damage inside a blob
    /// shows up here rather than in the middle of a replay.
    pub fn blob_contents(&mut self) {
        let mut ids: Vec<BlobId> = self.blobs.ids().collect();
        ids.sort();
        for id in ids {
            if let Err(error) = self.blobs.get(id) {
                self.report(&|| format!("blob {id}"), error.to_string());
            }
        }
    }

    fn blob_present(&mut self, subject: Subject<'_>, what: &str, blob: BlobId) -> bool {
        if self.blobs.contains(blob) {
            return true;
        }
        self.report(subject, format!("{what} blob {blob} is missing from the trace"));
        false
    }

    /// Checks that `mem` exists and that `[offset, offset + bytes)` lies inside it.
    fn memory_range(&mut self, subject: Subject<'_>, mem: MemId, offset: u64, bytes: u64) {
        if !self.resolves(subject, "memory", mem.index(), self.trace.memories.len()) {
            return;
        }
        let size = self.trace.memories[mem.index()].size;
        if offset.checked_add(bytes).is_none_or(|end| end > size) {
            let range = if bytes == 0 { format!("offset {offset} lies") } else { format!("bytes {offset}..{} lie", offset.saturating_add(bytes)) };
            self.report(subject, format!("{range} outside memory {mem} of {size} bytes"));
        }
    }

    fn header(&mut self) {
        if self.trace.header.is_none() {
            self.report(&|| "trace".to_string(), "it has no header, so its API is unknown".to_string());
        }
    }

    fn memories(&mut self) {
        let trace = self.trace;
        for (id, memory) in trace.memories.iter().enumerate() {
            let subject = || format!("memory {id}");
            if let Some(device) = memory.device {
                self.resolves(&subject, "device", device.index(), trace.devices.len());
            }
            match memory.kind.clone() {
                MemKind::SubBuffer { parent, offset } => {
                    if parent.index() == id {
                        self.report(&subject, "it is its own parent".to_string());
                    } else if self.resolves(&subject, "parent memory", parent.index(), trace.memories.len()) {
                        self.memory_range(&subject, parent, offset, memory.size);
                    }
                }
                MemKind::Global { program, .. } => {
                    self.resolves(&subject, "program", program.index(), trace.programs.len());
                }
                MemKind::Pitched { pitch, height, .. } if pitch.checked_mul(height) != Some(memory.size) => {
                    self.report(&subject, format!("pitch {pitch} times height {height} is not its size {}", memory.size));
                }
                MemKind::Image(layout) if layout.bytes() != memory.size => {
                    self.report(&subject, format!("its image layout packs {} bytes, not its size {}", layout.bytes(), memory.size));
                }
                _ => {}
            }
        }
    }

    fn textures(&mut self) {
        let trace = self.trace;
        for (id, texture) in trace.textures.iter().enumerate() {
            if let Some(resource) = texture.resource {
                self.memory_range(&|| format!("texture {id}"), resource.mem, resource.offset, 0);
            }
        }
    }

    fn programs_kernels_queues(&mut self) {
        let trace = self.trace;
        let linked: std::collections::HashSet<usize> = trace.program_links.iter().map(|link| link.program.index()).collect();
        for (id, program) in trace.programs.iter().enumerate() {
            let subject = || format!("program {id}");
            if program.images.is_empty() && !linked.contains(&id) {
                self.report(&subject, "it has no image to build from".to_string());
            }
            for image in &program.images {
                self.blob_present(&subject, &format!("{:?} image", image.kind), image.blob);
            }
        }
        for link in &trace.program_links {
            let subject = || format!("the link of program {}", link.program);
            self.resolves(&subject, "program", link.program.index(), trace.programs.len());
            for (index, unit) in link.units.iter().enumerate() {
                if unit.images.is_empty() {
                    self.report(&subject, format!("its unit {index} has no image to compile"));
                }
                for image in &unit.images {
                    self.blob_present(&subject, &format!("unit {index}'s {:?} image", image.kind), image.blob);
                }
                for header in &unit.headers {
                    self.blob_present(&subject, &format!("unit {index}'s header {:?}", header.name), header.blob);
                }
            }
        }
        for (id, kernel) in trace.kernels.iter().enumerate() {
            self.resolves(&|| format!("kernel {id} ({})", kernel.name), "program", kernel.program.index(), trace.programs.len());
        }
        for set in &trace.kernel_attributes {
            self.resolves(&|| format!("attribute {} of a kernel", set.attribute), "kernel", set.kernel.index(), trace.kernels.len());
        }
        for (id, queue) in trace.queues.iter().enumerate() {
            if let Some(device) = queue.device {
                self.resolves(&|| format!("queue {id}"), "device", device.index(), trace.devices.len());
            }
        }
    }

    /// Checks an edge of `segment`; returns whether it joins two of the segment's nodes.
    fn edge(&mut self, segment: &TraceSegment, index: usize, edge: &Edge) -> bool {
        let subject = || format!("edge {index} ({} -> {})", edge.from, edge.to);
        let nodes = self.reader.node_count();
        let from_ok = self.resolves(&subject, "node", edge.from.index(), nodes);
        let to_ok = self.resolves(&subject, "node", edge.to.index(), nodes);
        if !(from_ok && to_ok) {
            return false;
        }
        if segment.holds(edge.from) && segment.holds(edge.to) {
            return true;
        }
        let (from, to) = (self.reader.segment_of(edge.from), self.reader.segment_of(edge.to));
        let name = |s: Option<trace_format::SegmentId>| s.map_or("none".to_string(), |s| s.to_string());
        if from != to {
            self.report(&subject, format!("it joins segment {} to segment {}; edges must stay inside a segment", name(from), name(to)));
        } else {
            self.report(&subject, format!("it joins nodes of segment {} but is written with segment {}", name(from), segment.id));
        }
        false
    }

    fn cycle(&mut self, subject: Subject<'_>, blocked: &[u32]) {
        let shown: Vec<String> = blocked.iter().take(10).map(|n| n.to_string()).collect();
        let more = if blocked.len() > 10 { format!(" and {} more", blocked.len() - 10) } else { String::new() };
        self.report(subject, format!("the edges form a cycle; nodes on or behind it: {}{more}", shown.join(", ")));
    }

    /// Checks the nodes and edges of a sub-graph a node holds, whose subjects start with `prefix`.
    fn subgraph(&mut self, prefix: &str, nodes: &[Node], edges: &[Edge]) {
        for (id, node) in nodes.iter().enumerate() {
            self.node(&|| format!("{prefix}node {id}"), node);
        }
        let mut valid_edges = Vec::with_capacity(edges.len());
        for (index, edge) in edges.iter().enumerate() {
            let subject = || format!("{prefix}edge {index} ({} -> {})", edge.from, edge.to);
            let from_ok = self.resolves(&subject, "node", edge.from.index(), nodes.len());
            let to_ok = self.resolves(&subject, "node", edge.to.index(), nodes.len());
            if from_ok && to_ok {
                valid_edges.push((edge.from.index(), edge.to.index()));
            }
        }
        if let Err(blocked) = topological_order(nodes.len(), valid_edges) {
            let blocked: Vec<u32> = blocked.into_iter().map(|n| n as u32).collect();
            self.cycle(&|| prefix.trim_end_matches(" > ").to_string(), &blocked);
        }
    }

    fn node(&mut self, subject: Subject<'_>, node: &Node) {
        let trace = self.trace;
        if let Some(queue) = node.queue {
            self.resolves(subject, "queue", queue.index(), trace.queues.len());
        }
        match &node.command {
            Command::Kernel(launch) => self.kernel_launch(subject, launch),
            Command::Copy(copy) => self.copy(subject, copy),
            Command::Fill(fill) => self.fill(subject, fill),
            Command::MemAlloc { mem } | Command::MemFree { mem } => {
                self.resolves(subject, "memory", mem.index(), trace.memories.len());
            }
            Command::Subgraph(graph) => {
                let name = subject();
                self.subgraph(&format!("{name} > "), &graph.nodes, &graph.edges);
                if !name.contains(" > ") {
                    self.conditions(subject, &graph.nodes);
                }
            }
            Command::Conditional(conditional) => {
                for (index, body) in conditional.bodies.iter().enumerate() {
                    self.subgraph(&format!("{} body {index} > ", subject()), &body.nodes, &body.edges);
                }
            }
            Command::Barrier | Command::HostTask(_) | Command::EventRecord { .. } | Command::EventWait { .. } => {}
        }
    }

    /// Every condition a kernel of a program's graph sets names one conditional of that graph
    /// (its nested graphs and bodies included), and no two conditionals share one.
    fn conditions(&mut self, subject: Subject<'_>, nodes: &[Node]) {
        let (mut defined, mut used) = (Vec::new(), Vec::new());
        collect_conditions(nodes, &mut defined, &mut used);
        defined.sort_unstable();
        for pair in defined.windows(2).filter(|pair| pair[0] == pair[1]) {
            self.report(subject, format!("two conditionals of its graph share condition {}", pair[0]));
        }
        for condition in used.into_iter().filter(|condition| defined.binary_search(condition).is_err()) {
            self.report(subject, format!("a kernel of its graph sets condition {condition}, which no conditional of the graph has"));
        }
    }

    fn kernel_launch(&mut self, subject: Subject<'_>, launch: &KernelLaunch) {
        let trace = self.trace;
        if self.resolves(subject, "kernel", launch.kernel.index(), trace.kernels.len()) {
            let kernel = &trace.kernels[launch.kernel.index()];
            if launch.args.len() != kernel.params.len() {
                self.report(subject, format!("it passes {} arguments; kernel {} takes {}", launch.args.len(), kernel.name, kernel.params.len()));
            }
            for (index, (arg, param)) in launch.args.iter().zip(&kernel.params).enumerate() {
                if let Arg::Value(bytes) | Arg::ValueWithPointers { bytes, .. } = arg {
                    if bytes.len() != param.size as usize {
                        self.report(subject, format!("argument {index} has {} bytes; the parameter has {}", bytes.len(), param.size));
                    }
                }
                if !arg_fits(arg, param.kind) {
                    self.report(subject, format!("argument {index} is {}; the parameter is {}", arg_kind(arg), param_kind(param.kind)));
                }
                if matches!(arg, Arg::Condition(_)) && param.size != 8 {
                    self.report(subject, format!("argument {index} is a condition's 8-byte handle; the parameter has {} bytes", param.size));
                }
            }
        }
        for (index, arg) in launch.args.iter().enumerate() {
            match arg {
                Arg::Memory { mem, offset } => self.memory_range(&|| format!("{} argument {index}", subject()), *mem, *offset, 0),
                Arg::ValueWithPointers { bytes, pointers } => {
                    for pointer in pointers {
                        let subject = || format!("{} argument {index} pointer at byte {}", subject(), pointer.at);
                        if pointer.at as usize + 8 > bytes.len() {
                            self.report(&subject, format!("it does not fit in the argument's {} bytes", bytes.len()));
                        }
                        self.memory_range(&subject, pointer.mem, pointer.offset, 0);
                    }
                }
                Arg::Local(0) => self.report(subject, format!("argument {index} is local memory of 0 bytes")),
                Arg::Texture(texture) => {
                    self.resolves(subject, "texture", texture.index(), self.trace.textures.len());
                }
                Arg::Value(_) | Arg::NullMemory | Arg::Local(_) | Arg::Condition(_) => {}
            }
        }
        match &launch.launch {
            // A global size of 0 is a launch that runs nothing (OpenCL 2.1): it only orders.
            Launch::NdRange { dims, offset, global, local } => {
                let used = *dims as usize;
                if !(1..=3).contains(dims) {
                    self.report(subject, format!("its ND-range has {dims} dimensions; 1 to 3 are possible"));
                } else if let Some(local) = local.filter(|local| local[..used].contains(&0)) {
                    self.report(subject, format!("its work-group size {:?} has an empty dimension", &local[..used]));
                } else if global[..used].iter().zip(offset).any(|(size, offset)| size.checked_add(*offset).is_none()) {
                    self.report(subject, format!("its global size {:?} at offset {:?} overflows", &global[..used], &offset[..used]));
                }
            }
            Launch::Grid { grid, block, .. } => {
                if grid.contains(&0) || block.contains(&0) {
                    self.report(subject, format!("its grid {grid:?} or block {block:?} has an empty dimension"));
                }
            }
        }
    }

    fn copy(&mut self, subject: Subject<'_>, copy: &Copy) {
        for (side, place) in [("source", &copy.src), ("destination", &copy.dst)] {
            let subject = || format!("{} {side}", subject());
            match place {
                Place::Memory { mem, offset } => {
                    let bytes = match copy.extent {
                        Extent::Linear { bytes } => bytes,
                        // Rectangles are checked by the backend, which knows the pitches' meaning.
                        Extent::Rect { .. } => 0,
                    };
                    self.memory_range(&subject, *mem, *offset, bytes);
                }
                Place::Host { data: Some(blob) } => {
                    self.blob_present(&subject, "host data", *blob);
                }
                Place::Host { data: None } => {}
            }
        }
    }

    fn fill(&mut self, subject: Subject<'_>, fill: &Fill) {
        if fill.pattern.is_empty() {
            self.report(subject, "its fill pattern is empty".to_string());
        }
        let bytes = if fill.rows.is_some() { 0 } else { fill.bytes };
        self.memory_range(subject, fill.mem, fill.offset, bytes);
    }

    /// Memory allocated in a segment has no contents before it, freed memory none after it.
    fn states(&mut self, segment: &TraceSegment) {
        let trace = self.trace;
        let mut allocated = Vec::new();
        let mut freed = Vec::new();
        for node in &segment.nodes {
            match node.command {
                Command::MemAlloc { mem } => allocated.push(mem),
                Command::MemFree { mem } => freed.push(mem),
                _ => {}
            }
        }
        let id = segment.id;
        if let Some(text) = segment.segment.printed {
            self.blob_present(&|| format!("segment {id}"), "printed output", text);
        }
        let nodes = segment.first_node.0..segment.first_node.0 + segment.nodes.len() as u32;
        for node in segment.segment.racy_reads.iter().filter(|node| !nodes.contains(&node.0)) {
            self.report(&|| format!("segment {id}"), format!("its racy read {node} is not one of its nodes"));
        }
        for write in &segment.segment.host_writes {
            let subject = || format!("segment {id} host write into memory {} at {}", write.mem, write.offset);
            if self.blob_present(&subject, "contents", write.blob) {
                let bytes = self.blobs.raw_len(write.blob).unwrap_or(0);
                self.memory_range(&subject, write.mem, write.offset, bytes);
            }
        }
        for (what, states, gone, why) in [
            ("initial", &segment.segment.initial, &allocated, "allocated in this segment: it has no contents before"),
            ("expected", &segment.segment.expected, &freed, "freed in this segment: it has no contents after"),
        ] {
            for state in states {
                let subject = || format!("segment {id} {what} state of memory {}", state.mem);
                if gone.contains(&state.mem) {
                    self.report(&subject, format!("the memory is {why}"));
                }
                let mem_ok = self.resolves(&subject, "memory", state.mem.index(), trace.memories.len());
                if self.blob_present(&subject, "contents", state.blob) && mem_ok {
                    let size = trace.memories[state.mem.index()].size;
                    let held = self.blobs.raw_len(state.blob).unwrap_or(0);
                    if held != size {
                        self.report(&subject, format!("it holds {held} bytes; the memory has {size}"));
                    }
                }
            }
        }
    }
}

/// Whether `arg` is of the kind its parameter takes.
fn arg_fits(arg: &Arg, kind: ParamKind) -> bool {
    match arg {
        Arg::Memory { .. } | Arg::NullMemory => kind == ParamKind::Memory,
        Arg::Local(_) => kind == ParamKind::Local,
        Arg::Value(_) | Arg::ValueWithPointers { .. } | Arg::Condition(_) | Arg::Texture(_) => matches!(kind, ParamKind::Value | ParamKind::Handle),
    }
}

fn arg_kind(arg: &Arg) -> &'static str {
    match arg {
        Arg::Memory { .. } => "memory",
        Arg::NullMemory => "a null memory object",
        Arg::Local(_) => "local memory",
        Arg::Value(_) => "a value",
        Arg::ValueWithPointers { .. } => "a value holding device addresses",
        Arg::Condition(_) => "a conditional's handle",
        Arg::Texture(_) => "a texture object",
    }
}

fn param_kind(kind: ParamKind) -> &'static str {
    match kind {
        ParamKind::Memory => "memory",
        ParamKind::Local => "local memory",
        ParamKind::Value => "a value",
        ParamKind::Handle => "a handle",
    }
}

/// The conditions conditionals among `nodes` define and those their kernels set, inside
/// sub-graphs and bodies too.
fn collect_conditions(nodes: &[Node], defined: &mut Vec<u32>, used: &mut Vec<u32>) {
    for node in nodes {
        match &node.command {
            Command::Kernel(launch) => used.extend(launch.args.iter().filter_map(|arg| match arg {
                Arg::Condition(condition) => Some(*condition),
                _ => None,
            })),
            Command::Subgraph(graph) => collect_conditions(&graph.nodes, defined, used),
            Command::Conditional(conditional) => {
                defined.push(conditional.condition);
                conditional.bodies.iter().for_each(|body| collect_conditions(&body.nodes, defined, used));
            }
            _ => {}
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::test_traces::{mem, value, TraceBuilder};
    use trace_format::{BlobId, Conditional, ConditionalKind, EdgeKind, Graph, KernelId, NodeId, SegmentId};

    /// A valid trace: one segment, `k(buffer, 4-byte value)` then a read of the buffer.
    fn valid() -> TraceBuilder {
        let mut b = TraceBuilder::new();
        let k = b.kernel("k", &[None, Some(4)]);
        let buffer = b.memory(64);
        let segment = b.segment();
        let launch = b.launch(segment, k, vec![mem(buffer), value(3)], 16);
        let received = b.blobs.insert(vec![0; 64]);
        let read = b.node(
            segment,
            Command::Copy(Copy {
                src: Place::Memory { mem: buffer, offset: 0 },
                dst: Place::Host { data: Some(received) },
                extent: Extent::Linear { bytes: 64 },
            }),
        );
        b.edge(launch, read);
        b.initial(segment, buffer, vec![1; 64]);
        b.expected(segment, buffer, vec![2; 64]);
        b
    }

    fn problems(b: &TraceBuilder) -> Vec<String> {
        validate(&b.reader()).expect("the trace reads").iter().map(ToString::to_string).collect()
    }

    fn launch_mut(b: &mut TraceBuilder, node: usize) -> &mut KernelLaunch {
        match &mut b.trace.nodes[node].command {
            Command::Kernel(launch) => launch,
            _ => panic!("node {node} is not a launch"),
        }
    }

    #[test]
    fn a_valid_trace_has_no_problems() {
        assert_eq!(problems(&valid()), Vec::<String>::new());
    }

    #[test]
    fn a_host_write_lies_inside_its_memory() {
        let mut b = valid();
        b.host_write(SegmentId(0), MemId(0), 60, vec![1; 4], false);
        assert_eq!(problems(&b), Vec::<String>::new());
        b.host_write(SegmentId(0), MemId(0), 62, vec![1; 4], true);
        assert_eq!(problems(&b), vec!["segment 0 host write into memory 0 at 62: bytes 62..66 lie outside memory 0 of 64 bytes"]);
    }

    #[test]
    fn missing_kernel_memory_and_queue_are_named() {
        let mut b = valid();
        launch_mut(&mut b, 0).kernel = KernelId(9);
        b.trace.nodes[1].queue = Some(trace_format::QueueId(4));
        if let Command::Copy(copy) = &mut b.trace.nodes[1].command {
            copy.src = Place::Memory { mem: MemId(7), offset: 0 };
        }
        assert_eq!(
            problems(&b),
            vec![
                "node 0: kernel 9 does not exist (the trace has 1)",
                "node 1: queue 4 does not exist (the trace has 1)",
                "node 1 source: memory 7 does not exist (the trace has 1)",
            ]
        );
    }

    #[test]
    fn a_kernel_attribute_names_a_kernel_of_the_trace() {
        let mut b = valid();
        b.trace.kernel_attributes.push(trace_format::KernelAttribute { kernel: KernelId(0), attribute: 14, value: 1 });
        assert_eq!(problems(&b), Vec::<String>::new());
        b.trace.kernel_attributes.push(trace_format::KernelAttribute { kernel: KernelId(3), attribute: 8, value: 98_304 });
        assert_eq!(problems(&b), vec!["attribute 8 of a kernel: kernel 3 does not exist (the trace has 1)"]);
    }

    #[test]
    fn argument_count_and_size_must_match_the_kernel() {
        let mut b = valid();
        launch_mut(&mut b, 0).args[1] = Arg::Value(vec![0; 8]);
        assert_eq!(problems(&b), vec!["node 0: argument 1 has 8 bytes; the parameter has 4"]);
        launch_mut(&mut b, 0).args.pop();
        assert_eq!(problems(&b), vec!["node 0: it passes 1 arguments; kernel k takes 2"]);
    }

    #[test]
    fn arguments_must_be_of_their_parameter_s_kind() {
        let mut b = valid();
        launch_mut(&mut b, 0).args = vec![Arg::Value(vec![0; 8]), Arg::Local(0)];
        assert_eq!(
            problems(&b),
            vec![
                "node 0: argument 0 is a value; the parameter is memory",
                "node 0: argument 1 is local memory; the parameter is a value",
                "node 0: argument 1 is local memory of 0 bytes",
            ]
        );
    }

    #[test]
    fn work_groups_must_not_be_empty_nor_ranges_overflow_but_a_launch_may_run_nothing() {
        let mut b = valid();
        let range = |global: u64, offset: u64, local: Option<[u64; 3]>| Launch::NdRange { dims: 1, offset: [offset, 0, 0], global: [global, 1, 1], local };
        launch_mut(&mut b, 0).launch = range(0, 0, None);
        assert_eq!(problems(&b), Vec::<String>::new(), "a global size of 0 runs nothing (OpenCL 2.1)");
        launch_mut(&mut b, 0).launch = range(16, 0, Some([0, 1, 1]));
        assert_eq!(problems(&b), vec!["node 0: its work-group size [0] has an empty dimension"]);
        launch_mut(&mut b, 0).launch = range(u64::MAX, 1, None);
        assert_eq!(problems(&b), vec![format!("node 0: its global size [{}] at offset [1] overflows", u64::MAX)]);
    }

    #[test]
    fn ranges_outside_memory_are_problems() {
        let mut b = valid();
        launch_mut(&mut b, 0).args[0] = Arg::Memory { mem: MemId(0), offset: 65 };
        assert_eq!(problems(&b), vec!["node 0 argument 0: offset 65 lies outside memory 0 of 64 bytes"]);
    }

    #[test]
    fn pointers_inside_a_value_must_fit_it_and_name_memory() {
        let mut b = valid();
        let pointers = vec![
            trace_format::EmbeddedPointer { at: 0, mem: MemId(0), offset: 8 },
            trace_format::EmbeddedPointer { at: 6, mem: MemId(0), offset: 0 },
            trace_format::EmbeddedPointer { at: 8, mem: MemId(5), offset: 0 },
        ];
        launch_mut(&mut b, 0).args[1] = Arg::ValueWithPointers { bytes: vec![0; 12], pointers };
        assert_eq!(
            problems(&b),
            vec![
                "node 0: argument 1 has 12 bytes; the parameter has 4",
                "node 0 argument 1 pointer at byte 6: it does not fit in the argument's 12 bytes",
                "node 0 argument 1 pointer at byte 8: it does not fit in the argument's 12 bytes",
                "node 0 argument 1 pointer at byte 8: memory 5 does not exist (the trace has 1)",
            ]
        );
    }

    #[test]
    fn missing_blobs_are_named() {
        let mut b = valid();
        b.trace.segments[0].expected[0].blob = BlobId(42);
        b.trace.programs[0].images[0].blob = BlobId(43);
        let found = problems(&b);
        assert_eq!(found.len(), 2, "{found:?}");
        assert!(found[0].starts_with("program 0: OpenClSource image blob"));
        assert!(found[1].starts_with("segment 0 expected state of memory 0: contents blob"));
    }

    #[test]
    fn states_must_cover_the_whole_memory() {
        let mut b = valid();
        b.expected(SegmentId(0), MemId(0), vec![0; 10]);
        assert_eq!(problems(&b), vec!["segment 0 expected state of memory 0: it holds 10 bytes; the memory has 64"]);
    }

    #[test]
    fn sub_buffers_need_a_parent_that_holds_them() {
        let mut b = valid();
        b.trace.memories.push(trace_format::Memory { kind: MemKind::SubBuffer { parent: MemId(0), offset: 60 }, size: 8, address: 0, flags: 0, device: None });
        b.trace.memories.push(trace_format::Memory { kind: MemKind::SubBuffer { parent: MemId(9), offset: 0 }, size: 8, address: 0, flags: 0, device: None });
        assert_eq!(
            problems(&b),
            vec![
                "memory 1: bytes 60..68 lie outside memory 0 of 64 bytes",
                "memory 2: parent memory 9 does not exist (the trace has 3)",
            ]
        );
    }

    #[test]
    fn edges_must_resolve_stay_in_their_segment_and_not_cycle() {
        let mut b = valid();
        b.trace.edges.push(Edge { from: NodeId(1), to: NodeId(0), kind: EdgeKind::Event });
        b.trace.edges.push(Edge { from: NodeId(1), to: NodeId(5), kind: EdgeKind::InOrder });
        let other = b.segment();
        let k = KernelId(0);
        let late = b.launch(other, k, vec![mem(MemId(0)), value(1)], 4);
        b.edge(NodeId(0), late);
        assert_eq!(
            problems(&b),
            vec![
                "edge 2 (1 -> 5): node 5 does not exist (the trace has 3)",
                "segment 0: the edges form a cycle; nodes on or behind it: 0, 1",
                "edge 3 (0 -> 2): it joins segment 0 to segment 1; edges must stay inside a segment",
            ]
        );
    }

    #[test]
    fn nested_sub_graphs_are_checked_too() {
        let mut b = valid();
        let inner = b.trace.nodes[0].clone();
        let mut broken = inner.clone();
        if let Command::Kernel(launch) = &mut broken.command {
            launch.kernel = KernelId(5);
        }
        let graph = Graph {
            nodes: vec![inner, broken],
            edges: vec![Edge { from: NodeId(0), to: NodeId(3), kind: EdgeKind::InOrder }],
        };
        b.node(SegmentId(0), Command::Subgraph(graph));
        assert_eq!(
            problems(&b),
            vec![
                "node 2 > node 1: kernel 5 does not exist (the trace has 1)",
                "node 2 > edge 0 (0 -> 3): node 3 does not exist (the trace has 2)",
            ]
        );
    }

    #[test]
    fn each_condition_a_kernel_of_a_graph_sets_names_one_conditional_of_it() {
        let mut b = valid();
        let set = b.kernel("set", &[None, Some(8)]);
        let launch = b.trace.nodes[0].clone();
        let sets = |condition| {
            let launch = launch.clone();
            let Command::Kernel(mut kernel_launch) = launch.command.clone() else { panic!("node 0 is a launch") };
            kernel_launch.kernel = set;
            kernel_launch.args[1] = Arg::Condition(condition);
            Node { command: Command::Kernel(kernel_launch), ..launch }
        };
        let conditional = |condition, body: Vec<Node>| {
            let conditional = Conditional { kind: ConditionalKind::While, condition, default: None, bodies: vec![Graph { nodes: body, edges: vec![] }] };
            Node { command: Command::Conditional(conditional), ..sets(condition) }
        };
        // Condition 2 is set in the body of the conditional that has it: fine.
        let graph = Graph { nodes: vec![conditional(2, vec![sets(2)])], edges: vec![] };
        b.node(SegmentId(0), Command::Subgraph(graph));
        assert_eq!(problems(&b), Vec::<String>::new());
        // Two conditionals with one condition, a kernel setting one nobody has, and a handle
        // passed where 4 bytes are taken.
        let mut narrow = sets(2);
        if let Command::Kernel(launch) = &mut narrow.command {
            launch.kernel = KernelId(0);
        }
        let graph = Graph { nodes: vec![conditional(2, vec![narrow]), conditional(2, vec![sets(5)])], edges: vec![] };
        b.node(SegmentId(0), Command::Subgraph(graph));
        assert_eq!(
            problems(&b),
            vec![
                "node 3 > node 0 body 0 > node 0: argument 1 is a condition's 8-byte handle; the parameter has 4 bytes",
                "node 3: two conditionals of its graph share condition 2",
                "node 3: a kernel of its graph sets condition 5, which no conditional of the graph has",
            ]
        );
    }

    #[test]
    fn a_trace_without_header_is_a_problem() {
        let mut b = valid();
        b.trace.header = None;
        assert_eq!(problems(&b), vec!["trace: it has no header, so its API is unknown"]);
    }

    #[test]
    fn memory_has_no_contents_before_its_allocation_or_after_its_free() {
        let mut b = valid();
        let segment = SegmentId(0);
        let scratch = b.memory(64);
        b.node(segment, Command::MemAlloc { mem: scratch });
        b.node(segment, Command::MemFree { mem: scratch });
        assert!(problems(&b).is_empty(), "{:?}", problems(&b));
        b.initial(segment, scratch, vec![0; 64]);
        b.expected(segment, scratch, vec![0; 64]);
        assert_eq!(
            problems(&b),
            vec![
                "segment 0 initial state of memory 1: the memory is allocated in this segment: it has no contents before",
                "segment 0 expected state of memory 1: the memory is freed in this segment: it has no contents after",
            ]
        );
    }
}
