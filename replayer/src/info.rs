//! `replayer info`: what a trace holds, for people (`Display`) and scripts (`Serialize`), read in
//! one pass over its segments (blob contents are not read).

use crate::describe;
use crate::families::FamilyFinder;
use crate::inline::Inliner;
use crate::validate::Validator;
use serde::Serialize;
use std::collections::BTreeMap;
use std::fmt;
use trace_format::{BlobId, Command, Completeness, FormatError, Graph, MemKind, SegmentId, TraceReader};

#[derive(Debug, Serialize)]
pub struct TraceInfo {
    pub api: Option<String>,
    pub producer: Option<String>,
    pub command_line: Vec<String>,
    pub devices: Vec<DeviceInfo>,
    pub nodes: usize,
    pub nodes_by_kind: BTreeMap<&'static str, usize>,
    /// Commands inside the program's own graphs (and conditional bodies), by kind.
    pub inner_nodes_by_kind: BTreeMap<&'static str, usize>,
    pub edges: usize,
    pub edges_by_kind: BTreeMap<&'static str, usize>,
    pub segments: usize,
    /// Families if every command is recorded (a backend that runs some eagerly may merge
    /// more); `None` when the trace has problems that make families meaningless.
    pub families: Option<Vec<FamilyInfo>>,
    pub kernels: usize,
    /// Attributes the program set on its kernels (`Record::KernelAttribute`).
    pub kernel_attributes: usize,
    pub memories: usize,
    /// Bytes of all memory objects, sub-buffers not counted twice.
    pub memory_bytes: u64,
    pub blobs: BlobsInfo,
    pub complete: bool,
    pub truncated: Option<Truncation>,
    /// Why the recording stopped early, as the recorder said.
    pub partial: Vec<PartialInfo>,
    /// What `validate` finds wrong, but in blob contents.
    pub problems: Vec<String>,
}

#[derive(Debug, Serialize)]
pub struct DeviceInfo {
    pub name: String,
    pub vendor: String,
    pub driver_version: String,
}

#[derive(Debug, Serialize)]
pub struct FamilyInfo {
    pub base: u32,
    /// The members, as runs of consecutive segments: `[[first, last], ...]`.
    pub segments: SegmentRuns,
    pub members: usize,
    /// Patches applied before each member: the arguments and launches that vary.
    pub patches_per_segment: usize,
}

#[derive(Debug, Serialize)]
pub struct BlobsInfo {
    pub count: usize,
    pub raw_bytes: u64,
    pub stored_bytes: u64,
    pub list: Vec<BlobInfo>,
}

#[derive(Debug, Serialize)]
pub struct BlobInfo {
    #[serde(serialize_with = "hex_id")]
    pub id: BlobId,
    pub raw_bytes: u64,
    pub stored_bytes: u64,
}

#[derive(Debug, Serialize)]
pub struct Truncation {
    pub valid_bytes: u64,
    pub reason: String,
}

#[derive(Debug, Serialize)]
pub struct PartialInfo {
    pub call: String,
    pub reason: String,
}

fn hex_id<S: serde::Serializer>(id: &BlobId, serializer: S) -> Result<S::Ok, S::Error> {
    serializer.collect_str(id)
}

pub fn trace_info(reader: &TraceReader) -> Result<TraceInfo, FormatError> {
    let trace = reader.objects();
    let mut validator = Validator::new(reader);
    // Without a backend, as if every command were recorded: the strictest grouping; with the
    // program's graphs inlined, as replay sees them. Meaningless once a problem is found.
    let mut inliner = Inliner::new(reader.node_count());
    let mut finder = FamilyFinder::new(trace);
    let mut members: Vec<SegmentRuns> = Vec::new();
    let mut nodes_by_kind = BTreeMap::new();
    let mut inner_nodes_by_kind = BTreeMap::new();
    let mut edges_by_kind = BTreeMap::new();
    reader.for_each_segment(|segment| {
        for node in &segment.nodes {
            *nodes_by_kind.entry(node.command.kind_name()).or_insert(0) += 1;
            count_inner(&node.command, &mut inner_nodes_by_kind);
        }
        for edge in &segment.edges {
            *edges_by_kind.entry(describe::edge_kind(edge.kind)).or_insert(0) += 1;
        }
        validator.segment(&segment);
        if validator.problems().is_empty() {
            let graph = inliner.graph(segment);
            let placement = finder.place(&graph, &|_| true);
            if placement.founded && placement.family == members.len() {
                members.push(SegmentRuns::default());
            }
            members[placement.family].push(graph.segment);
        }
        Ok::<(), FormatError>(())
    })?;
    let problems: Vec<String> = validator.finish().iter().map(ToString::to_string).collect();
    let families = problems.is_empty().then(|| {
        finder
            .families()
            .iter()
            .zip(members)
            .map(|(family, segments)| FamilyInfo {
                base: family.base.segment.0,
                members: segments.count(),
                segments,
                patches_per_segment: family.varying_slots(),
            })
            .collect()
    });
    let blobs = reader.blobs();
    let mut list: Vec<BlobInfo> = blobs
        .ids()
        .map(|id| BlobInfo { id, raw_bytes: blobs.raw_len(id).unwrap_or(0), stored_bytes: blobs.stored_len(id).unwrap_or(0) })
        .collect();
    list.sort_by(|a, b| b.raw_bytes.cmp(&a.raw_bytes).then_with(|| a.id.cmp(&b.id)));
    let truncated = match reader.completeness() {
        Completeness::Complete => None,
        Completeness::Truncated { valid_bytes, reason } => Some(Truncation { valid_bytes: *valid_bytes, reason: reason.clone() }),
    };
    Ok(TraceInfo {
        api: trace.header.as_ref().map(|h| h.api.to_string()),
        producer: trace.header.as_ref().map(|h| h.producer.clone()),
        command_line: trace.header.as_ref().map(|h| h.command_line.clone()).unwrap_or_default(),
        devices: trace
            .devices
            .iter()
            .map(|d| DeviceInfo { name: d.name.clone(), vendor: d.vendor.clone(), driver_version: d.driver_version.clone() })
            .collect(),
        nodes: reader.node_count(),
        nodes_by_kind,
        inner_nodes_by_kind,
        edges: reader.edge_count(),
        edges_by_kind,
        segments: reader.segment_count(),
        families,
        kernels: trace.kernels.len(),
        kernel_attributes: trace.kernel_attributes.len(),
        memories: trace.memories.len(),
        memory_bytes: trace
            .memories
            .iter()
            .filter(|m| !matches!(m.kind, MemKind::SubBuffer { .. }))
            .map(|m| m.size)
            .sum(),
        blobs: BlobsInfo {
            count: list.len(),
            raw_bytes: list.iter().map(|b| b.raw_bytes).sum(),
            stored_bytes: list.iter().map(|b| b.stored_bytes).sum(),
            list,
        },
        complete: truncated.is_none() && trace.partial.is_empty(),
        truncated,
        partial: trace.partial.iter().map(|p| PartialInfo { call: p.call.clone(), reason: p.reason.clone() }).collect(),
        problems,
    })
}

/// Segments by id, as runs of consecutive ids: how families list their members.
#[derive(Clone, Debug, Default, PartialEq, Eq)]
pub struct SegmentRuns(Vec<(u32, u32)>);

impl SegmentRuns {
    /// Adds `segment`, which comes after every segment added before.
    pub fn push(&mut self, segment: SegmentId) {
        match self.0.last_mut() {
            Some((_, last)) if *last + 1 == segment.0 => *last = segment.0,
            _ => self.0.push((segment.0, segment.0)),
        }
    }

    pub fn count(&self) -> usize {
        self.0.iter().map(|&(first, last)| (last - first) as usize + 1).sum()
    }

    /// Each run's first and last segment.
    pub fn runs(&self) -> &[(u32, u32)] {
        &self.0
    }
}

impl std::fmt::Display for SegmentRuns {
    /// `0-3, 5, 7-9`.
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        for (index, &(first, last)) in self.0.iter().enumerate() {
            let separator = if index == 0 { "" } else { ", " };
            match first == last {
                true => write!(f, "{separator}{first}")?,
                false => write!(f, "{separator}{first}-{last}")?,
            }
        }
        Ok(())
    }
}

impl serde::Serialize for SegmentRuns {
    /// `[[0, 3], [5, 5], [7, 9]]`.
    fn serialize<S: serde::Serializer>(&self, serializer: S) -> Result<S::Ok, S::Error> {
        self.0.serialize(serializer)
    }
}

/// How many of the largest blobs the plain report lists.
const BLOBS_SHOWN: usize = 10;

/// How many lines of families the plain report prints.
const FAMILY_LINES_SHOWN: usize = 50;

/// One line of the plain report's families: a family, or a run of families of one segment each
/// (their base), consecutive, as a trace whose every segment differs has them.
struct FamilyLine {
    text: String,
    families: usize,
}

impl fmt::Display for FamilyLine {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        f.write_str(&self.text)
    }
}

fn family_lines(families: &[FamilyInfo]) -> Vec<FamilyLine> {
    let alone = |family: &FamilyInfo| family.segments.runs() == [(family.base, family.base)];
    let mut lines = Vec::new();
    let mut index = 0;
    while index < families.len() {
        let first = &families[index];
        let run = families[index..].iter().zip(first.base..).take_while(|(family, base)| alone(family) && family.base == *base).count();
        let text = match run {
            0 | 1 => format!("base {}: segments {} ({} patches each)", first.base, first.segments, first.patches_per_segment),
            _ => format!("bases {}-{}: one segment each, the base itself", first.base, first.base + run as u32 - 1),
        };
        lines.push(FamilyLine { text, families: run.max(1) });
        index += run.max(1);
    }
    lines
}

/// `total (n kind, ...)`, or just `total` when there is nothing to break down.
fn with_counts<K: fmt::Display>(total: usize, counts: &BTreeMap<K, usize>) -> String {
    if counts.is_empty() {
        return total.to_string();
    }
    let parts: Vec<String> = counts.iter().map(|(kind, n)| format!("{n} {kind}")).collect();
    format!("{total} ({})", parts.join(", "))
}

impl fmt::Display for TraceInfo {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        writeln!(f, "API:        {}", self.api.as_deref().unwrap_or("unknown (no header)"))?;
        if let Some(producer) = &self.producer {
            writeln!(f, "producer:   {producer}")?;
        }
        if !self.command_line.is_empty() {
            writeln!(f, "program:    {}", self.command_line.join(" "))?;
        }
        for (index, device) in self.devices.iter().enumerate() {
            writeln!(f, "device {index}:   {} ({}, driver {})", device.name, device.vendor, device.driver_version)?;
        }
        writeln!(f, "nodes:      {}", with_counts(self.nodes, &self.nodes_by_kind))?;
        if !self.inner_nodes_by_kind.is_empty() {
            let inner = self.inner_nodes_by_kind.values().sum();
            writeln!(f, "  inside the program's graphs: {}", with_counts(inner, &self.inner_nodes_by_kind))?;
        }
        writeln!(f, "edges:      {}", with_counts(self.edges, &self.edges_by_kind))?;
        writeln!(f, "segments:   {}", self.segments)?;
        match &self.families {
            Some(families) => {
                writeln!(f, "families:   {} (if every command is recorded)", families.len())?;
                let lines = family_lines(families);
                for line in lines.iter().take(FAMILY_LINES_SHOWN) {
                    writeln!(f, "  {line}")?;
                }
                if lines.len() > FAMILY_LINES_SHOWN {
                    let shown: usize = lines[..FAMILY_LINES_SHOWN].iter().map(|line| line.families).sum();
                    writeln!(f, "  ... {} more families (all are listed by --json)", families.len() - shown)?;
                }
            }
            None => writeln!(f, "families:   not computed (the trace has problems)")?,
        }
        match self.kernel_attributes {
            0 => writeln!(f, "kernels:    {}", self.kernels)?,
            set => writeln!(f, "kernels:    {} ({set} attributes the program set on them)", self.kernels)?,
        }
        writeln!(f, "memory:     {} objects, {} bytes", self.memories, self.memory_bytes)?;
        writeln!(
            f,
            "blobs:      {} ({} bytes raw, {} bytes stored)",
            self.blobs.count, self.blobs.raw_bytes, self.blobs.stored_bytes
        )?;
        for blob in self.blobs.list.iter().take(BLOBS_SHOWN) {
            writeln!(f, "  {}: {} bytes raw, {} stored", blob.id, blob.raw_bytes, blob.stored_bytes)?;
        }
        if self.blobs.count > BLOBS_SHOWN {
            writeln!(f, "  ... {} smaller blobs (all are listed by --json)", self.blobs.count - BLOBS_SHOWN)?;
        }
        match &self.truncated {
            Some(t) => writeln!(f, "file:       truncated after {} valid bytes: {}", t.valid_bytes, t.reason)?,
            None => writeln!(f, "file:       complete")?,
        }
        for partial in &self.partial {
            writeln!(f, "partial:    recording stopped at {}: {}", partial.call, partial.reason)?;
        }
        for problem in &self.problems {
            writeln!(f, "problem:    {problem}")?;
        }
        Ok(())
    }
}

/// Counts the commands inside `command` (a program's graph, a conditional's bodies) by kind.
fn count_inner(command: &Command, counts: &mut BTreeMap<&'static str, usize>) {
    let graphs: &[Graph] = match command {
        Command::Subgraph(graph) => std::slice::from_ref(graph),
        Command::Conditional(conditional) => &conditional.bodies,
        _ => return,
    };
    for node in graphs.iter().flat_map(|graph| &graph.nodes) {
        *counts.entry(node.command.kind_name()).or_insert(0) += 1;
        count_inner(&node.command, counts);
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::test_traces::{mem, TraceBuilder};

    #[test]
    fn counts_nodes_edges_memory_blobs_and_families() {
        let mut b = TraceBuilder::new();
        let k = b.kernel("k", &[None]);
        let buffer = b.memory(64);
        for _ in 0..2 {
            let segment = b.segment();
            let first = b.launch(segment, k, vec![mem(buffer)], 16);
            let host = b.host_task(segment);
            b.edge(first, host);
            b.initial(segment, buffer, vec![7; 64]);
        }
        b.trace.partial.push(trace_format::PartialReason { call: "clFoo".to_string(), reason: "not supported".to_string() });
        b.trace.kernel_attributes.push(trace_format::KernelAttribute { kernel: k, attribute: 14, value: 1 });
        let info = trace_info(&b.reader()).expect("the trace reads");
        assert_eq!(info.api.as_deref(), Some("OpenCL"));
        assert_eq!(info.nodes_by_kind, BTreeMap::from([("host_task", 2), ("kernel", 2)]));
        assert_eq!(info.edges_by_kind, BTreeMap::from([("event", 2)]));
        assert_eq!(info.memory_bytes, 64);
        // The program source and the one (deduplicated) initial state.
        assert_eq!(info.blobs.count, 2);
        assert_eq!(info.families.as_ref().map(Vec::len), Some(1));
        assert!(!info.complete);
        let text = info.to_string();
        assert!(text.contains("nodes:      4 (2 host_task, 2 kernel)"), "{text}");
        assert!(text.contains("kernels:    1 (1 attributes the program set on them)"), "{text}");
        assert!(text.contains("  base 0: segments 0-1 (0 patches each)"), "{text}");
        assert!(text.contains("partial:    recording stopped at clFoo: not supported"), "{text}");
    }

    #[test]
    fn families_of_one_segment_each_print_as_runs_and_the_lines_are_capped() {
        let family = |base: u32, segments: &[u32]| {
            let mut runs = SegmentRuns::default();
            segments.iter().for_each(|&segment| runs.push(SegmentId(segment)));
            FamilyInfo { base, members: segments.len(), segments: runs, patches_per_segment: usize::from(segments.len() > 1) }
        };
        let families = [family(0, &[0]), family(1, &[1]), family(2, &[2, 5, 6]), family(3, &[3]), family(4, &[4]), family(7, &[7])];
        let lines: Vec<String> = family_lines(&families).iter().map(ToString::to_string).collect();
        assert_eq!(lines, ["bases 0-1: one segment each, the base itself", "base 2: segments 2, 5-6 (1 patches each)", "bases 3-4: one segment each, the base itself", "base 7: segments 7 (0 patches each)"]);
        let many: Vec<FamilyInfo> = (0..200).map(|base| family(base * 2, &[base * 2, base * 2 + 1])).collect();
        assert_eq!(family_lines(&many).len(), 200);
        let mut b = TraceBuilder::new();
        let segment = b.segment();
        b.node(segment, Command::Barrier);
        let mut info = trace_info(&b.reader()).expect("the trace reads");
        info.families = Some(many);
        let text = info.to_string();
        assert!(text.contains("  base 98: segments 98-99 (1 patches each)\n  ... 150 more families (all are listed by --json)"), "{text}");
    }

    #[test]
    fn commands_inside_the_program_s_graphs_are_counted_apart() {
        let mut b = TraceBuilder::new();
        let segment = b.segment();
        let inner = |command| trace_format::Node { queue: None, segment, command, call: "inner".into() };
        let body = trace_format::Graph { nodes: vec![inner(Command::Barrier)], edges: Vec::new() };
        let conditional = trace_format::Conditional { kind: trace_format::ConditionalKind::While, condition: 0, default: None, bodies: vec![body] };
        let graph = Graph { nodes: vec![inner(Command::Conditional(conditional)), inner(Command::EventRecord { event: 1 })], edges: Vec::new() };
        b.node(segment, Command::Subgraph(graph));
        let info = trace_info(&b.reader()).expect("the trace reads");
        assert_eq!(info.nodes_by_kind, BTreeMap::from([("subgraph", 1)]));
        assert_eq!(info.inner_nodes_by_kind, BTreeMap::from([("barrier", 1), ("conditional", 1), ("event_record", 1)]));
        assert!(info.to_string().contains("  inside the program's graphs: 3 (1 barrier, 1 conditional, 1 event_record)"), "{info}");
    }

    #[test]
    fn segment_runs_print_as_ranges() {
        let mut runs = SegmentRuns::default();
        for segment in [0, 1, 2, 3, 5, 7, 8, 9] {
            runs.push(SegmentId(segment));
        }
        assert_eq!((runs.to_string(), runs.count()), ("0-3, 5, 7-9".to_string(), 8));
        assert_eq!(serde_json::to_string(&runs).expect("serializes"), "[[0,3],[5,5],[7,9]]");
    }
}
