//! The trace's graph in Graphviz DOT, in the style of SYCL's `print_graph`: one box per
//! node with its id, kind and kernel name, edges labelled with their kind, one cluster per
//! segment; `verbose` adds arguments, launch sizes and copy sources and destinations. Written
//! segment by segment as the trace streams by.

use crate::describe;
use std::fmt::Write as _;
use std::io::Write;
use trace_format::{Command, Edge, FormatError, Graph, Node, Trace, TraceReader};

/// Why the graph could not be written: the trace, or the output.
#[derive(Debug)]
pub enum DotError {
    Trace(FormatError),
    Output(std::io::Error),
}

impl From<FormatError> for DotError {
    fn from(error: FormatError) -> DotError {
        DotError::Trace(error)
    }
}

/// Writes the graph of the trace `reader` reads to `out`.
pub fn write_dot(reader: &TraceReader, verbose: bool, out: &mut dyn Write) -> Result<(), DotError> {
    let trace = reader.objects();
    out.write_all(b"digraph reprise {\n  node [shape=box, style=rounded];\n").map_err(DotError::Output)?;
    let mut text = String::new();
    reader.for_each_segment(|segment| {
        text.clear();
        let id = segment.id;
        let label = format!("segment {id} (window {}, ended by {})", segment.segment.ordinal, segment.segment.ended_by);
        let _ = writeln!(text, "  subgraph cluster_segment_{id} {{\n    label=\"{}\";", escape(&label));
        for (node_id, node) in segment.nodes_with_ids() {
            write_node(&mut text, trace, &format!("n{node_id}"), node_id.index(), node, verbose, "    ");
        }
        text += "  }\n";
        write_edges(&mut text, "n", &segment.edges, "  ");
        out.write_all(text.as_bytes()).map_err(DotError::Output)
    })?;
    out.write_all(b"}\n").map_err(DotError::Output)
}

fn write_node(out: &mut String, trace: &Trace, name: &str, id: usize, node: &Node, verbose: bool, indent: &str) {
    let mut label = format!("ID = {id}\\nTYPE = {}\\n", node.command.kind_name());
    if let Command::Kernel(_) = node.command {
        label += &format!("NAME = {}\\n", escape(&describe::node_title(trace, node)));
    }
    if verbose {
        for line in details(&node.command) {
            label += &escape(&line);
            label += "\\n";
        }
    }
    let _ = writeln!(out, "{indent}{name} [label=\"{label}\"];");
    match &node.command {
        Command::Subgraph(graph) => write_inner(out, trace, name, &format!("sub-graph of node {id}"), graph, verbose, indent),
        Command::Conditional(conditional) => {
            for (index, body) in conditional.bodies.iter().enumerate() {
                write_inner(out, trace, &format!("{name}_body{index}"), &format!("body {index} of node {id}"), body, verbose, indent);
            }
        }
        _ => {}
    }
}

/// A graph inside node `name` (a sub-graph, a conditional's body) as a cluster named after it.
fn write_inner(out: &mut String, trace: &Trace, name: &str, label: &str, graph: &Graph, verbose: bool, indent: &str) {
    let _ = writeln!(out, "{indent}subgraph cluster_{name} {{\n{indent}  label=\"{label}\";");
    for (inner_id, inner) in graph.nodes.iter().enumerate() {
        let inner_name = format!("{name}_{inner_id}");
        write_node(out, trace, &inner_name, inner_id, inner, verbose, &format!("{indent}  "));
    }
    write_edges(out, &format!("{name}_"), &graph.edges, &format!("{indent}  "));
    let _ = writeln!(out, "{indent}}}");
    if !graph.nodes.is_empty() {
        let _ = writeln!(out, "{indent}{} -> {name}_0 [style=dotted, label=\"contains\"];", name.split("_body").next().unwrap_or(name));
    }
}

fn write_edges(out: &mut String, prefix: &str, edges: &[Edge], indent: &str) {
    for edge in edges {
        let _ = writeln!(
            out,
            "{indent}{prefix}{} -> {prefix}{} [label=\"{}\"];",
            edge.from,
            edge.to,
            describe::edge_kind(edge.kind)
        );
    }
}

/// The lines `--verbose` adds to a node's label.
fn details(command: &Command) -> Vec<String> {
    match command {
        Command::Kernel(launch) => {
            let mut lines: Vec<String> =
                launch.args.iter().enumerate().map(|(i, arg)| format!("ARG {i} = {}", describe::arg(arg))).collect();
            lines.push(format!("LAUNCH = {}", describe::launch(&launch.launch)));
            lines
        }
        Command::Copy(copy) => vec![
            format!("SRC = {}", describe::place(&copy.src)),
            format!("DST = {}", describe::place(&copy.dst)),
            format!("SIZE = {}", describe::extent(&copy.extent)),
        ],
        Command::Fill(fill) => vec![
            format!("DST = mem {} + {}", fill.mem, fill.offset),
            format!("SIZE = {} bytes", fill.bytes),
            format!("PATTERN = {}", crate::memory_diff::hex(&fill.pattern)),
        ],
        Command::HostTask(kind) => vec![format!("HOST = {kind:?}")],
        Command::MemAlloc { mem } | Command::MemFree { mem } => vec![format!("MEM = {mem}")],
        Command::Conditional(conditional) => vec![
            format!("KIND = {:?}", conditional.kind),
            format!("CONDITION = {}", conditional.condition),
            format!("DEFAULT = {}", conditional.default.map_or("none".to_string(), |value| value.to_string())),
        ],
        Command::EventRecord { event } | Command::EventWait { event } => vec![format!("EVENT = {event}")],
        Command::Barrier | Command::Subgraph(_) => Vec::new(),
    }
}

/// Makes text safe inside a double-quoted DOT string.
fn escape(text: &str) -> String {
    text.replace('\\', "\\\\").replace('"', "\\\"").replace('\n', "\\n")
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::test_traces::{mem, value, TraceBuilder};

    fn to_dot(b: &TraceBuilder, verbose: bool) -> String {
        let mut out = Vec::new();
        write_dot(&b.reader(), verbose, &mut out).expect("written");
        String::from_utf8(out).expect("DOT is text")
    }
    use trace_format::{Copy, EdgeKind, Extent, Place};

    fn sample() -> TraceBuilder {
        let mut b = TraceBuilder::new();
        let k = b.kernel("scale \"x\"", &[None, Some(4)]);
        let buffer = b.memory(64);
        let segment = b.segment();
        let launch = b.launch(segment, k, vec![mem(buffer), value(2)], 16);
        let read = b.node(
            segment,
            Command::Copy(Copy {
                src: Place::Memory { mem: buffer, offset: 8 },
                dst: Place::Host { data: None },
                extent: Extent::Linear { bytes: 32 },
            }),
        );
        b.edge(launch, read);
        b.trace.edges[0].kind = EdgeKind::InOrder;
        b
    }

    #[test]
    fn nodes_show_id_kind_and_kernel_name_and_edges_their_kind() {
        let dot = to_dot(&sample(), false);
        assert!(dot.starts_with("digraph reprise {"));
        assert!(dot.contains("subgraph cluster_segment_0 {"), "{dot}");
        assert!(dot.contains(r#"n0 [label="ID = 0\nTYPE = kernel\nNAME = scale \"x\"\n"];"#), "{dot}");
        assert!(dot.contains(r#"n1 [label="ID = 1\nTYPE = copy\n"];"#), "{dot}");
        assert!(dot.contains(r#"n0 -> n1 [label="in_order"];"#), "{dot}");
        assert!(!dot.contains("ARG"), "{dot}");
    }

    #[test]
    fn verbose_adds_arguments_and_copy_ends() {
        let dot = to_dot(&sample(), true);
        assert!(dot.contains(r"ARG 0 = mem 0 + 0\nARG 1 = 0x00000002\nLAUNCH = global [16]\n"), "{dot}");
        assert!(dot.contains(r"SRC = mem 0 + 8\nDST = host\nSIZE = 32 bytes\n"), "{dot}");
    }

    #[test]
    fn sub_graphs_are_drawn_inside_their_node() {
        let mut b = sample();
        let inner = trace_format::Graph { nodes: b.trace.nodes.clone(), edges: b.trace.edges.clone() };
        b.node(trace_format::SegmentId(0), Command::Subgraph(inner));
        let dot = to_dot(&b, false);
        assert!(dot.contains("subgraph cluster_n2 {"), "{dot}");
        assert!(dot.contains(r#"n2_0 -> n2_1 [label="in_order"];"#), "{dot}");
        assert!(dot.contains(r#"n2 -> n2_0 [style=dotted, label="contains"];"#), "{dot}");
    }
}
