//! `replayer diff` (issue 6): what differs between two recordings of the same program.
//! Segments are paired by position as both traces stream by; inside a pair, nodes are aligned
//! by kind and kernel name (longest common subsequence), and the aligned nodes are compared.

use crate::describe;
use crate::memory_diff::byte_difference;
use serde::Serialize;
use std::collections::{BTreeMap, HashSet};
use std::fmt;
use trace_format::{BlobStore, Command, FormatError, MemState, Node, Program, Segment, SegmentId, Trace, TraceReader, TraceSegment};

#[derive(Debug, Default, Serialize)]
pub struct TraceDiff {
    pub segments_a: usize,
    pub segments_b: usize,
    pub nodes_removed: Vec<NodeRef>,
    pub nodes_added: Vec<NodeRef>,
    pub edges_removed: Vec<EdgeRef>,
    pub edges_added: Vec<EdgeRef>,
    pub kernels_changed: Vec<KernelChange>,
    pub arguments_changed: Vec<ArgumentChange>,
    pub launches_changed: Vec<LaunchChange>,
    pub memory_differs: Vec<MemoryChange>,
}

#[derive(Debug, Serialize)]
pub struct NodeRef {
    pub segment: usize,
    pub node: u32,
    pub title: String,
}

/// An edge, by the node ids of the trace it is in.
#[derive(Debug, Serialize)]
pub struct EdgeRef {
    pub segment: usize,
    pub from: u32,
    pub to: u32,
    pub kind: &'static str,
}

#[derive(Debug, Serialize)]
pub struct KernelChange {
    pub kernel: String,
    pub change: String,
}

#[derive(Debug, Serialize)]
pub struct ArgumentChange {
    pub segment: usize,
    pub node_a: u32,
    pub node_b: u32,
    pub kernel: String,
    pub index: usize,
    pub before: String,
    pub after: String,
}

#[derive(Debug, Serialize)]
pub struct LaunchChange {
    pub segment: usize,
    pub node_a: u32,
    pub node_b: u32,
    pub kernel: String,
    pub before: String,
    pub after: String,
}

/// Final contents of a memory object that differ at the end of a segment.
#[derive(Debug, Serialize)]
pub struct MemoryChange {
    pub segment: usize,
    pub mem: u32,
    pub first_offset: u64,
    pub differing_bytes: u64,
    pub bytes_a: u64,
    pub bytes_b: u64,
    /// Set when only one recording has final contents for it ("a" or "b").
    pub only_in: Option<&'static str>,
}

impl TraceDiff {
    pub fn is_empty(&self) -> bool {
        self.segments_a == self.segments_b
            && self.nodes_removed.is_empty()
            && self.nodes_added.is_empty()
            && self.edges_removed.is_empty()
            && self.edges_added.is_empty()
            && self.kernels_changed.is_empty()
            && self.arguments_changed.is_empty()
            && self.launches_changed.is_empty()
            && self.memory_differs.is_empty()
    }
}

/// Compares two validated traces; fails only when a trace cannot be read.
pub fn diff_traces(a: &TraceReader, b: &TraceReader) -> Result<TraceDiff, FormatError> {
    let mut diff = TraceDiff {
        segments_a: a.segment_count(),
        segments_b: b.segment_count(),
        kernels_changed: kernel_changes(a.objects(), b.objects()),
        ..TraceDiff::default()
    };
    let (mut segments_a, mut segments_b) = (a.segments(), b.segments());
    for index in 0.. {
        let (sa, sb) = (segments_a.next().transpose()?, segments_b.next().transpose()?);
        if sa.is_none() && sb.is_none() {
            break;
        }
        let empty = || TraceSegment {
            id: SegmentId(index as u32),
            segment: Segment { ordinal: 0, ended_by: String::new(), initial: Vec::new(), expected: Vec::new(), failed_with: None, printed: None, racy_reads: Vec::new(), host_writes: Vec::new() },
            first_node: trace_format::NodeId(0),
            nodes: Vec::new(),
            first_edge: 0,
            edges: Vec::new(),
        };
        let (sa, sb) = (sa.unwrap_or_else(empty), sb.unwrap_or_else(empty));
        compare_segment(&mut diff, index, (a.objects(), &sa), (b.objects(), &sb));
        compare_memory(&mut diff, index, (a.blobs(), &sa.segment.expected), (b.blobs(), &sb.segment.expected))?;
    }
    Ok(diff)
}

/// A segment's edges between its own nodes, as local indices, with their kinds.
fn local_edges(segment: &TraceSegment) -> Vec<(usize, usize, trace_format::EdgeKind)> {
    let local = |id: trace_format::NodeId| segment.holds(id).then(|| (id.0 - segment.first_node.0) as usize);
    segment.edges.iter().filter_map(|e| Some((local(e.from)?, local(e.to)?, e.kind))).collect()
}

fn compare_segment(diff: &mut TraceDiff, segment: usize, (ta, ga): (&Trace, &TraceSegment), (tb, gb): (&Trace, &TraceSegment)) {
    let key = |trace: &Trace, graph: &TraceSegment| -> Vec<(&'static str, String)> {
        graph.nodes.iter().map(|node| (node.command.kind_name(), describe::node_title(trace, node))).collect()
    };
    let (keys_a, keys_b) = (key(ta, ga), key(tb, gb));
    let pairs = align(&keys_a, &keys_b);
    let mut a_to_b = vec![None; ga.nodes.len()];
    let mut b_matched = vec![false; gb.nodes.len()];
    for &(i, j) in &pairs {
        a_to_b[i] = Some(j);
        b_matched[j] = true;
        compare_nodes(diff, segment, (&ga.nodes[i], ga.first_node.0 + i as u32), (&gb.nodes[j], gb.first_node.0 + j as u32), &keys_a[i].1);
    }
    let node_ref = |graph: &TraceSegment, keys: &[(&str, String)], local: usize| NodeRef {
        segment,
        node: graph.first_node.0 + local as u32,
        title: keys[local].1.clone(),
    };
    diff.nodes_removed.extend((0..ga.nodes.len()).filter(|&i| a_to_b[i].is_none()).map(|i| node_ref(ga, &keys_a, i)));
    diff.nodes_added.extend((0..gb.nodes.len()).filter(|&j| !b_matched[j]).map(|j| node_ref(gb, &keys_b, j)));

    let edge_ref = |graph: &TraceSegment, from: usize, to: usize, kind| EdgeRef {
        segment,
        from: graph.first_node.0 + from as u32,
        to: graph.first_node.0 + to as u32,
        kind: describe::edge_kind(kind),
    };
    let (edges_a, edges_b) = (local_edges(ga), local_edges(gb));
    let mut unmatched_b: HashSet<(usize, usize, &'static str)> = edges_b.iter().map(|&(from, to, kind)| (from, to, describe::edge_kind(kind))).collect();
    for &(from, to, kind) in &edges_a {
        let mapped = a_to_b[from].zip(a_to_b[to]);
        let found = mapped.is_some_and(|(from, to)| unmatched_b.remove(&(from, to, describe::edge_kind(kind))));
        if !found {
            diff.edges_removed.push(edge_ref(ga, from, to, kind));
        }
    }
    diff.edges_added.extend(
        edges_b
            .iter()
            .filter(|&&(from, to, kind)| unmatched_b.contains(&(from, to, describe::edge_kind(kind))))
            .map(|&(from, to, kind)| edge_ref(gb, from, to, kind)),
    );
}

fn compare_nodes(diff: &mut TraceDiff, segment: usize, (a, node_a): (&Node, u32), (b, node_b): (&Node, u32), kernel: &str) {
    let (Command::Kernel(la), Command::Kernel(lb)) = (&a.command, &b.command) else {
        return;
    };
    let describe_arg = |args: &[trace_format::Arg], index: usize| args.get(index).map_or("absent".to_string(), describe::arg);
    for index in 0..la.args.len().max(lb.args.len()) {
        if la.args.get(index) != lb.args.get(index) {
            diff.arguments_changed.push(ArgumentChange {
                segment,
                node_a,
                node_b,
                kernel: kernel.to_string(),
                index,
                before: describe_arg(&la.args, index),
                after: describe_arg(&lb.args, index),
            });
        }
    }
    if la.launch != lb.launch {
        diff.launches_changed.push(LaunchChange {
            segment,
            node_a,
            node_b,
            kernel: kernel.to_string(),
            before: describe::launch(&la.launch),
            after: describe::launch(&lb.launch),
        });
    }
}

/// Kernels, by name, whose program images or build options differ between the traces.
fn kernel_changes(a: &Trace, b: &Trace) -> Vec<KernelChange> {
    let programs = |trace: &Trace| -> BTreeMap<String, Program> {
        let mut by_name = BTreeMap::new();
        for kernel in &trace.kernels {
            if let Some(program) = trace.programs.get(kernel.program.index()) {
                by_name.entry(kernel.name.clone()).or_insert_with(|| program.clone());
            }
        }
        by_name
    };
    let (pa, pb) = (programs(a), programs(b));
    let mut changes = Vec::new();
    for (name, program_a) in &pa {
        let Some(program_b) = pb.get(name) else { continue };
        if program_a.images != program_b.images {
            let kinds = |p: &Program| p.images.iter().map(|i| format!("{:?}", i.kind)).collect::<Vec<_>>().join(", ");
            changes.push(KernelChange {
                kernel: name.clone(),
                change: format!("program images changed ({} -> {})", kinds(program_a), kinds(program_b)),
            });
        }
        if program_a.build_options != program_b.build_options {
            changes.push(KernelChange {
                kernel: name.clone(),
                change: format!("build options {:?} -> {:?}", program_a.build_options, program_b.build_options),
            });
        }
    }
    changes
}

fn compare_memory(
    diff: &mut TraceDiff,
    segment: usize,
    (a, states_a): (&BlobStore, &[MemState]),
    (b, states_b): (&BlobStore, &[MemState]),
) -> Result<(), FormatError> {
    let by_mem = |states: &[MemState]| states.iter().map(|s| (s.mem, s.blob)).collect::<BTreeMap<_, _>>();
    let (ma, mb) = (by_mem(states_a), by_mem(states_b));
    let mems: std::collections::BTreeSet<_> = ma.keys().chain(mb.keys()).copied().collect();
    for mem in mems {
        let (blob_a, blob_b) = (ma.get(&mem), mb.get(&mem));
        if blob_a == blob_b {
            continue;
        }
        let bytes_a = blob_a.map(|&id| a.get(id)).transpose()?.unwrap_or_default();
        let bytes_b = blob_b.map(|&id| b.get(id)).transpose()?.unwrap_or_default();
        let Some(difference) = byte_difference(&bytes_a, &bytes_b) else { continue };
        diff.memory_differs.push(MemoryChange {
            segment,
            mem: mem.0,
            first_offset: difference.first_offset,
            differing_bytes: difference.differing_bytes,
            bytes_a: difference.expected_len,
            bytes_b: difference.actual_len,
            only_in: match (blob_a, blob_b) {
                (Some(_), None) => Some("a"),
                (None, Some(_)) => Some("b"),
                _ => None,
            },
        });
    }
    Ok(())
}

/// The largest quadratic table `align` builds; larger middles are paired by position.
const ALIGN_TABLE_LIMIT: usize = 16 << 20;

/// Index pairs of equal keys of `a` and `b`, in order: a longest common subsequence after
/// trimming the common prefix and suffix.
fn align<K: PartialEq>(a: &[K], b: &[K]) -> Vec<(usize, usize)> {
    let prefix = a.iter().zip(b).take_while(|(x, y)| x == y).count();
    let suffix = a[prefix..].iter().rev().zip(b[prefix..].iter().rev()).take_while(|(x, y)| x == y).count();
    let (mid_a, mid_b) = (&a[prefix..a.len() - suffix], &b[prefix..b.len() - suffix]);
    let mut pairs: Vec<(usize, usize)> = (0..prefix).map(|i| (i, i)).collect();
    let (n, m) = (mid_a.len(), mid_b.len());
    if n * m <= ALIGN_TABLE_LIMIT {
        // longest[i][j]: length of the longest common subsequence of mid_a[i..] and mid_b[j..].
        let mut longest = vec![0u32; (n + 1) * (m + 1)];
        let at = |i: usize, j: usize| i * (m + 1) + j;
        for i in (0..n).rev() {
            for j in (0..m).rev() {
                longest[at(i, j)] = if mid_a[i] == mid_b[j] {
                    longest[at(i + 1, j + 1)] + 1
                } else {
                    longest[at(i + 1, j)].max(longest[at(i, j + 1)])
                };
            }
        }
        let (mut i, mut j) = (0, 0);
        while i < n && j < m {
            if mid_a[i] == mid_b[j] {
                pairs.push((prefix + i, prefix + j));
                (i, j) = (i + 1, j + 1);
            } else if longest[at(i + 1, j)] >= longest[at(i, j + 1)] {
                i += 1;
            } else {
                j += 1;
            }
        }
    } else {
        pairs.extend((0..n.min(m)).filter(|&k| mid_a[k] == mid_b[k]).map(|k| (prefix + k, prefix + k)));
    }
    pairs.extend((0..suffix).map(|k| (a.len() - suffix + k, b.len() - suffix + k)));
    pairs
}

impl fmt::Display for TraceDiff {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        if self.is_empty() {
            return writeln!(f, "no differences");
        }
        if self.segments_a != self.segments_b {
            writeln!(f, "segments: {} in A, {} in B", self.segments_a, self.segments_b)?;
        }
        for n in &self.nodes_removed {
            writeln!(f, "segment {}: node {} ({}) removed", n.segment, n.node, n.title)?;
        }
        for n in &self.nodes_added {
            writeln!(f, "segment {}: node {} ({}) added", n.segment, n.node, n.title)?;
        }
        for e in &self.edges_removed {
            writeln!(f, "segment {}: edge {} -> {} ({}) removed", e.segment, e.from, e.to, e.kind)?;
        }
        for e in &self.edges_added {
            writeln!(f, "segment {}: edge {} -> {} ({}) added", e.segment, e.from, e.to, e.kind)?;
        }
        for k in &self.kernels_changed {
            writeln!(f, "kernel {}: {}", k.kernel, k.change)?;
        }
        for c in &self.arguments_changed {
            writeln!(
                f,
                "segment {}: node {} / {} ({}) argument {}: {} -> {}",
                c.segment, c.node_a, c.node_b, c.kernel, c.index, c.before, c.after
            )?;
        }
        for c in &self.launches_changed {
            writeln!(f, "segment {}: node {} / {} ({}) launch: {} -> {}", c.segment, c.node_a, c.node_b, c.kernel, c.before, c.after)?;
        }
        for m in &self.memory_differs {
            match m.only_in {
                Some(side) => writeln!(f, "segment {}: memory {} has final contents only in {}", m.segment, m.mem, side.to_uppercase())?,
                None => writeln!(
                    f,
                    "segment {}: memory {} differs: {} of {} bytes, first at offset {}",
                    m.segment, m.mem, m.differing_bytes, m.bytes_a.max(m.bytes_b), m.first_offset
                )?,
            }
        }
        Ok(())
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::test_traces::{mem, value, TraceBuilder};
    use trace_format::{ImageKind, MemId, NodeId, ProgramImage, SegmentId};

    /// `a(buffer, 2)` then `b(buffer)`, ending with the buffer holding `result`.
    fn recording(result: Vec<u8>) -> TraceBuilder {
        let mut b = TraceBuilder::new();
        let (ka, kb) = (b.kernel("a", &[None, Some(4)]), b.kernel("b", &[None]));
        let buffer = b.memory(8);
        let segment = b.segment();
        let first = b.launch(segment, ka, vec![mem(buffer), value(2)], 16);
        let second = b.launch(segment, kb, vec![mem(buffer)], 16);
        b.edge(first, second);
        b.expected(segment, buffer, result);
        b
    }

    fn diff(a: &TraceBuilder, b: &TraceBuilder) -> TraceDiff {
        diff_traces(&a.reader(), &b.reader()).expect("the traces read")
    }

    #[test]
    fn identical_recordings_do_not_differ() {
        let d = diff(&recording(vec![1; 8]), &recording(vec![1; 8]));
        assert!(d.is_empty());
        assert_eq!(d.to_string(), "no differences\n");
    }

    #[test]
    fn changed_arguments_launches_and_memory_are_located() {
        let a = recording(vec![1; 8]);
        let mut b = recording(vec![1, 1, 9, 1, 9, 1, 1, 1]);
        if let Command::Kernel(launch) = &mut b.trace.nodes[0].command {
            launch.args[1] = value(3);
            launch.launch = trace_format::Launch::NdRange { dims: 1, offset: [0; 3], global: [32, 1, 1], local: None };
        }
        let d = diff(&a, &b);
        assert_eq!(
            d.to_string(),
            "segment 0: node 0 / 0 (a) argument 1: 0x00000002 -> 0x00000003\n\
             segment 0: node 0 / 0 (a) launch: global [16] -> global [32]\n\
             segment 0: memory 0 differs: 2 of 8 bytes, first at offset 2\n"
        );
    }

    #[test]
    fn added_nodes_and_edges_are_listed() {
        let a = recording(vec![1; 8]);
        let mut b = recording(vec![1; 8]);
        // b gets a third launch, of `a`, between the two.
        let extra = b.launch(SegmentId(0), trace_format::KernelId(0), vec![mem(MemId(0)), value(2)], 16);
        b.trace.edges[0].to = extra;
        b.edge(extra, NodeId(1));
        let d = diff(&a, &b);
        assert_eq!(
            d.to_string(),
            "segment 0: node 2 (a) added\n\
             segment 0: edge 0 -> 1 (event) removed\n\
             segment 0: edge 0 -> 2 (event) added\n\
             segment 0: edge 2 -> 1 (event) added\n"
        );
    }

    #[test]
    fn a_rebuilt_kernel_is_reported() {
        let a = recording(vec![1; 8]);
        let mut b = recording(vec![1; 8]);
        let source = b.blobs.insert(b"kernel void a(global int* x, int y) { x[0] = y + 1; }".to_vec());
        b.trace.programs[0].images = vec![ProgramImage { kind: ImageKind::OpenClSource, blob: source }];
        let d = diff(&a, &b);
        assert_eq!(d.kernels_changed.iter().map(|k| k.kernel.as_str()).collect::<Vec<_>>(), vec!["a", "b"]);
        assert!(d.to_string().contains("kernel a: program images changed (OpenClSource -> OpenClSource)"));
    }

    #[test]
    fn alignment_pairs_the_longest_common_subsequence() {
        assert_eq!(align(&[1, 2, 3, 4], &[1, 3, 4]), vec![(0, 0), (2, 1), (3, 2)]);
        assert_eq!(align(&[1, 5, 2], &[1, 6, 2]), vec![(0, 0), (2, 2)]);
        assert_eq!(align::<u8>(&[], &[1]), vec![]);
    }
}
