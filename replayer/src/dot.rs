//! The trace's graph in Graphviz DOT, in the style of SYCL's `print_graph`: one box per
//! node with its id, kind and kernel name, edges labelled with their kind, one cluster per
//! segment; `verbose` adds arguments, launch sizes and copy sources and destinations.

use crate::describe;
use crate::segments::segment_graphs;
use std::fmt::Write;
use trace_format::{Command, Edge, Graph, Node, Trace};

pub fn to_dot(trace: &Trace, verbose: bool) -> String {
    let mut out = String::from("digraph reprise {\n  node [shape=box, style=rounded];\n");
    for (segment, graph) in trace.segments.iter().zip(segment_graphs(trace)) {
        let id = graph.segment;
        let label = format!("segment {id} (window {}, ended by {})", segment.ordinal, segment.ended_by);
        let _ = writeln!(out, "  subgraph cluster_segment_{id} {{\n    label=\"{}\";", escape(&label));
        for node_id in graph.nodes {
            write_node(&mut out, trace, &format!("n{node_id}"), node_id.index(), &trace.nodes[node_id.index()], verbose, "    ");
        }
        out += "  }\n";
    }
    // Nodes whose segment does not exist (a damaged trace) are still drawn.
    for (node_id, node) in trace.nodes.iter().enumerate().filter(|(_, n)| n.segment.index() >= trace.segments.len()) {
        write_node(&mut out, trace, &format!("n{node_id}"), node_id, node, verbose, "  ");
    }
    write_edges(&mut out, "n", &trace.edges, "  ");
    out += "}\n";
    out
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
            format!("PATTERN = {}", fill.pattern.iter().map(|b| format!("{b:02x}")).collect::<String>()),
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
        let dot = to_dot(&sample().trace, false);
        assert!(dot.starts_with("digraph reprise {"));
        assert!(dot.contains("subgraph cluster_segment_0 {"), "{dot}");
        assert!(dot.contains(r#"n0 [label="ID = 0\nTYPE = kernel\nNAME = scale \"x\"\n"];"#), "{dot}");
        assert!(dot.contains(r#"n1 [label="ID = 1\nTYPE = copy\n"];"#), "{dot}");
        assert!(dot.contains(r#"n0 -> n1 [label="in_order"];"#), "{dot}");
        assert!(!dot.contains("ARG"), "{dot}");
    }

    #[test]
    fn verbose_adds_arguments_and_copy_ends() {
        let dot = to_dot(&sample().trace, true);
        assert!(dot.contains(r"ARG 0 = mem 0 + 0\nARG 1 = 0x00000002\nLAUNCH = global [16]\n"), "{dot}");
        assert!(dot.contains(r"SRC = mem 0 + 8\nDST = host\nSIZE = 32 bytes\n"), "{dot}");
    }

    #[test]
    fn sub_graphs_are_drawn_inside_their_node() {
        let mut b = sample();
        let inner = trace_format::Graph { nodes: b.trace.nodes.clone(), edges: b.trace.edges.clone() };
        b.node(trace_format::SegmentId(0), Command::Subgraph(inner));
        let dot = to_dot(&b.trace, false);
        assert!(dot.contains("subgraph cluster_n2 {"), "{dot}");
        assert!(dot.contains(r#"n2_0 -> n2_1 [label="in_order"];"#), "{dot}");
        assert!(dot.contains(r#"n2 -> n2_0 [style=dotted, label="contains"];"#), "{dot}");
    }
}
