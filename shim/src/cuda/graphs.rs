//! The program's own CUDA graphs as the shim keeps them: what it read of each node when the
//! graph was instantiated (`ReadGraph`), turned into the trace's `Graph` per executable graph
//! (`ExecGraph`), whose kernel nodes follow the program's parameter updates. The driver calls
//! that read a graph are in `graph_hooks`.

use super::commands::device_access;
use super::copies::{copy_command, fill_command, End};
use super::launches::{kernel_accesses, kernel_command, Decoded};
use super::params;
use super::state::Layout;
use crate::recorder::{Access, Key, Recorder};
use crate::fast_hash::HashMap;
use trace_format::{Command, Edge, EdgeKind, Graph, Launch, Node, NodeId, SegmentId};

/// A kernel node's launch as the driver reports it: its parameters' bytes still undecoded.
#[derive(Clone, Debug)]
pub struct KernelNode {
    pub function: Key,
    pub launch: Launch,
    /// The kernel's parameter layout and each parameter's bytes; `None` when unreadable.
    pub arguments: Option<(Layout, Vec<Vec<u8>>)>,
    /// Tracked variables of the kernel's program (see `Decoded::variables`), once it is known.
    pub variables: Vec<Key>,
}

/// What the shim read of one node.
#[derive(Clone, Debug)]
pub enum NodeRead {
    Kernel(KernelNode),
    /// A linear memset: `count` elements of `pattern` at `dst`.
    Memset { dst: u64, pattern: Vec<u8>, count: usize },
    /// A linear copy of `bytes` between device pointers.
    Copy { src: u64, dst: u64, bytes: usize },
    Empty,
    Child(ReadGraph),
    /// A node the trace cannot describe, and why.
    Unsupported(&'static str),
}

/// A graph as read from the driver: its nodes (by handle) and dependencies.
#[derive(Clone, Debug, Default)]
pub struct ReadGraph {
    pub nodes: Vec<(Key, NodeRead)>,
    pub edges: Vec<(Key, Key)>,
}

/// An executable graph: the trace's graph of its work, where each node handle of the graph it
/// was instantiated from lies, and the memory each node uses (for the state snapshots).
#[derive(Clone, Debug)]
pub struct ExecGraph {
    pub graph: Graph,
    pub index: HashMap<Key, usize>,
    accesses: Vec<Vec<Access>>,
}

impl ExecGraph {
    /// Builds the graph; a node the trace cannot describe becomes a barrier and the trace is
    /// marked partial, as for any call.
    pub fn build(recorder: &mut Recorder, call: &str, read: &ReadGraph) -> ExecGraph {
        let mut exec = ExecGraph { graph: Graph { nodes: Vec::new(), edges: Vec::new() }, index: HashMap::default(), accesses: Vec::new() };
        for (handle, node) in &read.nodes {
            let (command, accesses) = translate(recorder, call, node).unwrap_or_else(|reason| {
                recorder.partial(call, reason);
                (Command::Barrier, Vec::new())
            });
            exec.index.insert(*handle, exec.graph.nodes.len());
            exec.graph.nodes.push(Node { queue: None, segment: SegmentId(0), command, call: call.to_string() });
            exec.accesses.push(accesses);
        }
        for (from, to) in &read.edges {
            let (Some(&from), Some(&to)) = (exec.index.get(from), exec.index.get(to)) else {
                recorder.partial(call, "an edge names a node the graph does not list");
                continue;
            };
            exec.graph.edges.push(Edge { from: NodeId(from as u32), to: NodeId(to as u32), kind: EdgeKind::Event });
        }
        exec
    }

    /// Replaces the launch of kernel node `node` (`cuGraphExecKernelNodeSetParams`).
    pub fn set_kernel(&mut self, recorder: &mut Recorder, call: &str, node: Key, kernel: &KernelNode) {
        let Some(&index) = self.index.get(&node) else {
            return recorder.partial(call, "a node the shim did not see in the instantiated graph");
        };
        let (command, accesses) = translate(recorder, call, &NodeRead::Kernel(kernel.clone())).unwrap_or_else(|reason| {
            recorder.partial(call, reason);
            (Command::Barrier, Vec::new())
        });
        self.graph.nodes[index].command = command;
        self.accesses[index] = accesses;
    }

    /// Every node's memory uses.
    pub fn accesses(&self) -> Vec<Access> {
        self.accesses.concat()
    }
}

/// A node's command and the memory it uses.
fn translate(recorder: &mut Recorder, call: &str, node: &NodeRead) -> Result<(Command, Vec<Access>), &'static str> {
    match node {
        NodeRead::Kernel(kernel) => {
            let (layout, arguments) = kernel.arguments.as_ref().ok_or("the driver did not report the kernel node's parameters")?;
            let values = params::decode(arguments, |address| recorder.locate(address));
            let decoded = Decoded { layout: layout.clone(), values, variables: kernel.variables.clone() };
            Ok((kernel_command(recorder, kernel.function, &decoded, kernel.launch.clone())?, kernel_accesses(&decoded)))
        }
        NodeRead::Memset { dst, pattern, count } => {
            let access = device_access(recorder, *dst, true);
            Ok((fill_command(recorder, *dst, pattern, *count)?, access.into_iter().collect()))
        }
        NodeRead::Copy { src, dst, bytes } => {
            let accesses = [device_access(recorder, *src, false), device_access(recorder, *dst, true)];
            Ok((copy_command(recorder, End::Device(*src), End::Device(*dst), *bytes)?, accesses.into_iter().flatten().collect()))
        }
        NodeRead::Empty => Ok((Command::Barrier, Vec::new())),
        NodeRead::Child(child) => {
            let exec = ExecGraph::build(recorder, call, child);
            let accesses = exec.accesses();
            Ok((Command::Subgraph(exec.graph), accesses))
        }
        NodeRead::Unsupported(reason) => Err(reason),
    }
}
