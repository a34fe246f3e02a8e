//! The edges of `replayer dot`, with nodes named as a reader would: a kernel by its name, any
//! other node by its type and id (`copy#4`).

use crate::replay::{path_str, run_replayer};
use std::collections::{BTreeSet, HashMap};
use std::path::Path;

/// `(from, to, kind)`.
pub type DotEdge = (String, String, String);

pub fn edges(trace: &Path) -> BTreeSet<DotEdge> {
    let output = run_replayer(&["dot", path_str(trace)], None);
    let text = String::from_utf8_lossy(&output.stdout);
    assert!(output.status.success(), "replayer dot failed: {}", String::from_utf8_lossy(&output.stderr));
    parse_edges(&text)
}

fn parse_edges(text: &str) -> BTreeSet<DotEdge> {
    let mut names = HashMap::new();
    let mut edges = Vec::new();
    for line in text.lines().map(str::trim) {
        let Some((head, attributes)) = line.split_once(" [label=\"") else { continue };
        let label = attributes.trim_end_matches("\"];");
        match head.split_once(" -> ") {
            Some((from, to)) => edges.push((from.to_owned(), to.to_owned(), label.to_owned())),
            None => {
                names.insert(head.to_owned(), node_name(head, label));
            }
        }
    }
    let name = |node: &str| names.get(node).cloned().unwrap_or_else(|| panic!("edge to undeclared node {node}:\n{text}"));
    edges.into_iter().map(|(from, to, kind)| (name(&from), name(&to), kind)).collect()
}

/// From a label `ID = 4\nTYPE = copy\n` (escaped newlines) or one with `NAME = stage_a`.
fn node_name(node: &str, label: &str) -> String {
    let field = |key: &str| label.split("\\n").find_map(|line| line.strip_prefix(key)).map(str::to_owned);
    field("NAME = ").unwrap_or_else(|| format!("{}#{}", field("TYPE = ").unwrap_or_default(), node.trim_start_matches('n')))
}

/// Shorthand for expected edges in tests.
pub fn edge(from: &str, to: &str, kind: &str) -> DotEdge {
    (from.to_owned(), to.to_owned(), kind.to_owned())
}
