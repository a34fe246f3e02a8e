//! `replayer info`: what a trace holds, for people (`Display`) and scripts (`Serialize`).

use crate::families::find_families;
use crate::inline::inline_subgraphs;
use crate::segments::segment_graphs;
use crate::validate::validate;
use crate::describe;
use serde::Serialize;
use std::collections::BTreeMap;
use std::fmt;
use trace_format::{Completeness, MemKind, TraceFile};

#[derive(Debug, Serialize)]
pub struct TraceInfo {
    pub api: Option<String>,
    pub producer: Option<String>,
    pub command_line: Vec<String>,
    pub devices: Vec<DeviceInfo>,
    pub nodes: usize,
    pub nodes_by_kind: BTreeMap<&'static str, usize>,
    pub edges: usize,
    pub edges_by_kind: BTreeMap<&'static str, usize>,
    pub segments: usize,
    /// Families if every command is recorded (a backend that runs some eagerly may merge
    /// more); `None` when the trace has problems that make families meaningless.
    pub families: Option<Vec<FamilyInfo>>,
    pub memories: usize,
    /// Bytes of all memory objects, sub-buffers not counted twice.
    pub memory_bytes: u64,
    pub blobs: BlobsInfo,
    pub complete: bool,
    pub truncated: Option<Truncation>,
    /// Why the recording stopped early, as the recorder said.
    pub partial: Vec<PartialInfo>,
    /// What `validate` finds wrong.
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
    pub segments: Vec<u32>,
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
    pub id: String,
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

pub fn trace_info(file: &TraceFile) -> TraceInfo {
    let trace = &file.trace;
    let problems: Vec<String> = validate(trace, &file.blobs).iter().map(ToString::to_string).collect();
    let families = problems.is_empty().then(|| {
        // Without a backend, as if every command were recorded: the strictest grouping; with the
        // program's graphs inlined, as replay sees them.
        let inlined = inline_subgraphs(trace);
        find_families(&inlined, &segment_graphs(&inlined), &|_| true)
            .into_iter()
            .map(|family| FamilyInfo {
                base: family.base.0,
                segments: family.members.iter().map(|s| s.0).collect(),
                patches_per_segment: family.patches.first().map_or(0, Vec::len),
            })
            .collect()
    });
    let mut nodes_by_kind = BTreeMap::new();
    for node in &trace.nodes {
        *nodes_by_kind.entry(node.command.kind_name()).or_insert(0) += 1;
    }
    let mut edges_by_kind = BTreeMap::new();
    for edge in &trace.edges {
        *edges_by_kind.entry(describe::edge_kind(edge.kind)).or_insert(0) += 1;
    }
    let mut list: Vec<BlobInfo> = file
        .blobs
        .ids()
        .map(|id| BlobInfo {
            id: id.to_string(),
            raw_bytes: file.blobs.raw_len(id).unwrap_or(0),
            stored_bytes: file.blobs.stored_len(id).unwrap_or(0),
        })
        .collect();
    list.sort_by(|a, b| b.raw_bytes.cmp(&a.raw_bytes).then_with(|| a.id.cmp(&b.id)));
    let truncated = match &file.completeness {
        Completeness::Complete => None,
        Completeness::Truncated { valid_bytes, reason } => Some(Truncation { valid_bytes: *valid_bytes, reason: reason.clone() }),
    };
    TraceInfo {
        api: trace.header.as_ref().map(|h| h.api.to_string()),
        producer: trace.header.as_ref().map(|h| h.producer.clone()),
        command_line: trace.header.as_ref().map(|h| h.command_line.clone()).unwrap_or_default(),
        devices: trace
            .devices
            .iter()
            .map(|d| DeviceInfo { name: d.name.clone(), vendor: d.vendor.clone(), driver_version: d.driver_version.clone() })
            .collect(),
        nodes: trace.nodes.len(),
        nodes_by_kind,
        edges: trace.edges.len(),
        edges_by_kind,
        segments: trace.segments.len(),
        families,
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
    }
}

/// How many of the largest blobs the plain report lists.
const BLOBS_SHOWN: usize = 10;

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
        writeln!(f, "edges:      {}", with_counts(self.edges, &self.edges_by_kind))?;
        writeln!(f, "segments:   {}", self.segments)?;
        match &self.families {
            Some(families) => {
                writeln!(f, "families:   {} (if every command is recorded)", families.len())?;
                for family in families {
                    let segments: Vec<String> = family.segments.iter().map(u32::to_string).collect();
                    writeln!(
                        f,
                        "  base {}: segments {} ({} patches each)",
                        family.base,
                        segments.join(", "),
                        family.patches_per_segment
                    )?;
                }
            }
            None => writeln!(f, "families:   not computed (the trace has problems)")?,
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
        let file = TraceFile { trace: b.trace, blobs: b.blobs, completeness: Completeness::Complete };
        let info = trace_info(&file);
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
        assert!(text.contains("  base 0: segments 0, 1 (0 patches each)"), "{text}");
        assert!(text.contains("partial:    recording stopped at clFoo: not supported"), "{text}");
    }
}
