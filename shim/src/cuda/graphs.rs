//! The program's own CUDA graphs as the shim keeps them: what it read of each node when the graph
//! was instantiated (`ReadGraph`), with the updates the program made to the executable graph since
//! (`ExecGraph`), turned into the trace's `Graph` at each launch: with the memory, the host data
//! and the allocations of then. The driver calls that read a graph are in `graph_read`.

use super::commands::{device_access, untracked};
use super::copies::{copy_command, fill_command};
use super::launches::{kernel_accesses, kernel_command, Decoded};
use super::params::{self, Value};
use super::arrays::Arrays;
use super::rect::{fill_2d_command, Memcpy3D, RectCopy};
use super::state::Layout;
use crate::fast_hash::{HashMap, HashSet};
use super::memory::allocation;
use crate::recorder::{Access, Key, MemDesc, MemShape, Recorder};
use trace_format::{Command, Conditional, ConditionalKind, Edge, EdgeKind, Graph, HostTaskKind, Launch, MemKind, Node, NodeId, SegmentId};

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

/// A condition the program created (`cuGraphConditionalHandleCreate`): the trace's number for
/// it, and the value it is reset to at each launch, if any.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub struct Condition {
    pub number: u32,
    pub default: Option<u32>,
}

/// A conditional node as the program created it (`cuGraphAddNode`), which the driver cannot
/// report: its condition's handle, its kind and its body graphs.
#[derive(Clone, Debug)]
pub struct CreatedConditional {
    pub handle: u64,
    pub kind: ConditionalKind,
    pub bodies: Vec<Key>,
}

/// A conditional node as read at instantiation.
#[derive(Clone, Debug)]
pub struct ConditionalNode {
    pub handle: u64,
    pub kind: ConditionalKind,
    pub condition: Condition,
    pub bodies: Vec<ReadGraph>,
}

/// What the shim read of one node.
#[derive(Clone, Debug)]
pub enum NodeRead {
    Kernel(KernelNode),
    /// `height` rows of `width` elements of `pattern` at `dst`, `pitch` bytes apart.
    Memset { dst: u64, pitch: usize, pattern: Vec<u8>, width: usize, height: usize },
    Copy(Memcpy3D),
    /// The program's host code, which the trace cannot hold.
    Host,
    Empty,
    Child(ReadGraph),
    /// The program's `event`, and the trace's number for it.
    EventRecord { event: Key, number: u32 },
    EventWait { event: Key, number: u32 },
    /// Memory the graph allocates at `address` in every launch.
    Alloc { address: u64, size: u64 },
    Free { address: u64 },
    Conditional(ConditionalNode),
    /// A node the trace cannot describe, and why.
    Unsupported(&'static str),
}

impl NodeRead {
    fn graphs(&self) -> &[ReadGraph] {
        match self {
            NodeRead::Child(graph) => std::slice::from_ref(graph),
            NodeRead::Conditional(conditional) => &conditional.bodies,
            _ => &[],
        }
    }

    fn graphs_mut(&mut self) -> &mut [ReadGraph] {
        match self {
            NodeRead::Child(graph) => std::slice::from_mut(graph),
            NodeRead::Conditional(conditional) => &mut conditional.bodies,
            _ => &mut [],
        }
    }
}

/// A graph as read from the driver: its nodes (by handle) and dependencies.
#[derive(Clone, Debug, Default)]
pub struct ReadGraph {
    pub nodes: Vec<(Key, NodeRead)>,
    pub edges: Vec<(Key, Key)>,
}

impl ReadGraph {
    /// The graph with its nodes in an order that follows its edges, the driver's listed order
    /// wherever that already does (the driver promises no order of its list). A graph may free
    /// an address and allocate it again (graphMemoryNodes): the recorder tracks memory by
    /// address, so it must see the free before the second allocation.
    pub fn new(nodes: Vec<(Key, NodeRead)>, edges: Vec<(Key, Key)>) -> ReadGraph {
        let position: HashMap<Key, usize> = nodes.iter().enumerate().map(|(index, (handle, _))| (*handle, index)).collect();
        let mut predecessors = vec![Vec::new(); nodes.len()];
        for (from, to) in &edges {
            if let (Some(&from), Some(&to)) = (position.get(from), position.get(to)) {
                predecessors[to].push(from);
            }
        }
        // Each node after its predecessors, depth first; a cycle (which the driver cannot
        // have) is cut where it closes.
        #[derive(Clone, Copy, PartialEq)]
        enum Mark {
            Unvisited,
            Visiting,
            Placed,
        }
        let mut marks = vec![Mark::Unvisited; nodes.len()];
        let mut order = Vec::with_capacity(nodes.len());
        let mut stack = Vec::new();
        for first in 0..nodes.len() {
            stack.push((first, false));
            while let Some((index, expanded)) = stack.pop() {
                if expanded {
                    marks[index] = Mark::Placed;
                    order.push(index);
                } else if marks[index] == Mark::Unvisited {
                    marks[index] = Mark::Visiting;
                    stack.push((index, true));
                    stack.extend(predecessors[index].iter().rev().filter(|&&before| marks[before] == Mark::Unvisited).map(|&before| (before, false)));
                }
            }
        }
        let mut slots: Vec<Option<(Key, NodeRead)>> = nodes.into_iter().map(Some).collect();
        let nodes = order.into_iter().filter_map(|index| slots[index].take()).collect();
        ReadGraph { nodes, edges }
    }

    /// Calls `visit` with every node, those of child graphs and bodies too.
    pub fn for_each_node<'a>(&'a self, visit: &mut impl FnMut(Key, &'a NodeRead)) {
        for (handle, node) in &self.nodes {
            visit(*handle, node);
            node.graphs().iter().for_each(|graph| graph.for_each_node(visit));
        }
    }

    pub fn for_each_node_mut(&mut self, visit: &mut impl FnMut(&mut NodeRead)) {
        for (_, node) in &mut self.nodes {
            visit(node);
            node.graphs_mut().iter_mut().for_each(|graph| graph.for_each_node_mut(visit));
        }
    }
}

/// Where a node lies: its index in the graph, then for each graph inside it (a child graph, a
/// body) that graph's index and the index there.
type Path = Vec<usize>;

/// An executable graph: what it was instantiated from, with the program's updates applied, and
/// where each node handle of it lies.
#[derive(Clone, Debug, Default)]
pub struct ExecGraph {
    read: ReadGraph,
    paths: HashMap<Key, Path>,
    /// Nodes the program disabled (`cuGraphNodeSetEnabled`): they do nothing until enabled.
    disabled: HashSet<Key>,
}

/// A launch of an executable graph as the trace records it.
pub struct Launched {
    pub command: Command,
    /// The memory its nodes use, but what the graph allocates itself (which has no contents
    /// before, and none the program can read after, its launch).
    pub accesses: Vec<Access>,
}

impl ExecGraph {
    pub fn new(read: ReadGraph) -> ExecGraph {
        let mut paths = HashMap::default();
        index(&read, &mut Vec::new(), &mut paths);
        ExecGraph { read, paths, disabled: HashSet::default() }
    }

    /// The executable graph updated whole from `read` (`cuGraphExecUpdate`): the node handles of
    /// the graph it was instantiated from keep naming the nodes in the same places.
    pub fn updated(&self, read: ReadGraph) -> ExecGraph {
        let mut updated = ExecGraph::new(read);
        for (handle, path) in &self.paths {
            if updated.node_mut_at(path).is_some() {
                updated.paths.entry(*handle).or_insert_with(|| path.clone());
            }
        }
        updated.disabled = self.disabled.clone();
        updated
    }

    /// Replaces what node `node` does (an update of its parameters); `false` for a node the
    /// shim does not know in this graph.
    pub fn set(&mut self, node: Key, read: NodeRead) -> bool {
        let Some(mut path) = self.paths.get(&node).cloned() else { return false };
        let Some(slot) = self.node_mut_at(&path) else { return false };
        *slot = read;
        // The nodes of a new child graph are named by its own handles.
        let inner = slot.graphs().to_vec();
        for (position, graph) in inner.iter().enumerate() {
            path.push(position);
            index(graph, &mut path, &mut self.paths);
            path.pop();
        }
        true
    }

    pub fn set_enabled(&mut self, node: Key, enabled: bool) -> bool {
        if !self.paths.contains_key(&node) {
            return false;
        }
        if enabled {
            self.disabled.remove(&node);
        } else {
            self.disabled.insert(node);
        }
        true
    }

    /// Every node, those of child graphs and bodies too (for identifying kernels, say).
    pub fn nodes_mut(&mut self, visit: &mut impl FnMut(&mut NodeRead)) {
        self.read.for_each_node_mut(visit);
    }

    /// The memory the graph allocates in each launch (address, size), and the addresses it
    /// leaves freed: an address freed and then allocated again by the graph stays allocated
    /// after it (graphMemoryNodes keeps such an allocation for a later graph to free).
    pub fn allocations(&self) -> (Vec<(u64, u64)>, Vec<u64>) {
        let mut allocated = Vec::new();
        // Each allocation and free in dependency order: an address is left freed when its last is a free.
        let mut events: Vec<(u64, bool)> = Vec::new();
        self.enabled_nodes(&mut |_, node| match node {
            NodeRead::Alloc { address, size } => {
                allocated.push((*address, *size));
                events.push((*address, false));
            }
            NodeRead::Free { address } => events.push((*address, true)),
            _ => {}
        });
        let last_is_free: HashMap<u64, bool> = events.iter().copied().collect();
        let mut listed = HashSet::default();
        let freed = events.iter().filter(|&&(address, free)| free && last_is_free.get(&address) == Some(&true) && listed.insert(address)).map(|&(address, _)| address).collect();
        (allocated, freed)
    }

    /// The program's events the graph records and waits for.
    pub fn events(&self) -> (Vec<Key>, Vec<Key>) {
        let (mut recorded, mut waited) = (Vec::new(), Vec::new());
        self.enabled_nodes(&mut |_, node| match node {
            NodeRead::EventRecord { event, .. } => recorded.push(*event),
            NodeRead::EventWait { event, .. } => waited.push(*event),
            _ => {}
        });
        (recorded, waited)
    }

    fn enabled_nodes<'a>(&'a self, visit: &mut impl FnMut(Key, &'a NodeRead)) {
        let disabled = &self.disabled;
        self.read.for_each_node(&mut |handle, node| {
            if !disabled.contains(&handle) {
                visit(handle, node);
            }
        });
    }

    /// The launch as the trace records it, with the memory its nodes name and the host data
    /// its copies read now; a node the trace cannot describe is a barrier, and the trace is
    /// marked partial, as for any call. Each allocation of the graph is new memory (of
    /// `device`), which the nodes after it name: a graph may allocate one address twice, after
    /// freeing it.
    pub fn launched(&self, recorder: &mut Recorder, arrays: &Arrays, call: &str, device: Option<Key>) -> Launched {
        let mut handles: HashMap<u64, u32> = HashMap::default();
        self.read.for_each_node(&mut |_, node| {
            if let NodeRead::Conditional(conditional) = node {
                handles.insert(conditional.handle, conditional.condition.number);
            }
        });
        let own: HashSet<Key> = self.allocations().0.iter().map(|&(address, _)| address).collect();
        let mut translation = Translation { recorder, arrays, call, device, handles: &handles, disabled: &self.disabled, accesses: Vec::new() };
        let graph = translation.graph(&self.read);
        let accesses = translation.accesses.into_iter().filter(|access| !own.contains(&access.mem)).collect();
        Launched { command: Command::Subgraph(graph), accesses }
    }

    fn node_mut_at(&mut self, path: &[usize]) -> Option<&mut NodeRead> {
        let mut graph = &mut self.read;
        let mut steps = path.iter();
        loop {
            let (_, read) = graph.nodes.get_mut(*steps.next()?)?;
            match steps.next() {
                None => return Some(read),
                Some(&inner) => graph = read.graphs_mut().get_mut(inner)?,
            }
        }
    }
}

/// Adds the path of every node of `graph` (under `prefix`) to `paths`.
fn index(graph: &ReadGraph, prefix: &mut Path, paths: &mut HashMap<Key, Path>) {
    for (position, (handle, node)) in graph.nodes.iter().enumerate() {
        prefix.push(position);
        paths.insert(*handle, prefix.clone());
        for (inner, child) in node.graphs().iter().enumerate() {
            prefix.push(inner);
            index(child, prefix, paths);
            prefix.pop();
        }
        prefix.pop();
    }
}

/// Turning read nodes into the trace's commands for one launch.
struct Translation<'a> {
    recorder: &'a mut Recorder,
    arrays: &'a Arrays,
    call: &'a str,
    /// The device the graph's allocations are on.
    device: Option<Key>,
    /// The handles of the graph's conditions, with the trace's numbers.
    handles: &'a HashMap<u64, u32>,
    disabled: &'a HashSet<Key>,
    accesses: Vec<Access>,
}

impl Translation<'_> {
    fn graph(&mut self, read: &ReadGraph) -> Graph {
        let mut positions: HashMap<Key, usize> = HashMap::default();
        let mut nodes = Vec::with_capacity(read.nodes.len());
        for (handle, node) in &read.nodes {
            let command = match self.disabled.contains(handle) {
                true => Command::Barrier,
                false => self.command(node).unwrap_or_else(|reason| {
                    self.recorder.partial(self.call, reason);
                    Command::Barrier
                }),
            };
            positions.insert(*handle, nodes.len());
            nodes.push(Node { queue: None, segment: SegmentId(0), command, call: self.call.to_string().into() });
        }
        let mut edges = Vec::with_capacity(read.edges.len());
        for (from, to) in &read.edges {
            let (Some(&from), Some(&to)) = (positions.get(from), positions.get(to)) else {
                self.recorder.partial(self.call, "an edge names a node the graph does not list");
                continue;
            };
            edges.push(Edge { from: NodeId(from as u32), to: NodeId(to as u32), kind: EdgeKind::Event });
        }
        Graph { nodes, edges }
    }

    fn command(&mut self, node: &NodeRead) -> Result<Command, &'static str> {
        let recorder = &mut *self.recorder;
        match node {
            NodeRead::Kernel(kernel) => {
                let (layout, arguments) = kernel.arguments.as_ref().ok_or("the driver did not report the kernel node's parameters")?;
                let values = params::decode(arguments, |address| recorder.locate(address), |index, word| super::textures::parameter(recorder, kernel.function, index, word));
                let values = values.into_iter().map(|value| self.condition_handle(value)).collect();
                let decoded = Decoded { layout: layout.clone(), values, variables: kernel.variables.clone() };
                self.accesses.extend(kernel_accesses(&decoded));
                kernel_command(self.recorder, kernel.function, decoded, kernel.launch.clone())
            }
            NodeRead::Memset { dst, pitch, pattern, width, height } => {
                self.accesses.extend(device_access(recorder, *dst, true));
                match height {
                    0 | 1 => fill_command(recorder, *dst, pattern, *width),
                    _ => fill_2d_command(recorder, *dst, *pitch, pattern, *width, *height),
                }
            }
            NodeRead::Copy(copy) => {
                // Host ends inside pinned or registered memory name that memory: the copy reads
                // and writes it when the graph runs. Other host sources are read now.
                let rect = copy.rect(self.arrays, recorder).ok_or(super::rect::UNTRACKED_ENDS)?;
                let rect = rect.naming_tracked_host_memory(recorder);
                self.accesses.extend(rect.accesses(recorder));
                match rect.as_linear() {
                    Some((src, dst, bytes)) => copy_command(recorder, src, dst, bytes),
                    None => rect.command(recorder),
                }
            }
            NodeRead::Host => Ok(Command::HostTask(HostTaskKind::HostFunction)),
            NodeRead::Empty => Ok(Command::Barrier),
            NodeRead::Child(child) => Ok(Command::Subgraph(self.graph(child))),
            NodeRead::EventRecord { number, .. } => Ok(Command::EventRecord { event: *number }),
            NodeRead::EventWait { number, .. } => Ok(Command::EventWait { event: *number }),
            NodeRead::Alloc { address, size } => {
                let desc = MemDesc { shape: MemShape::Whole(MemKind::StreamOrdered), ..allocation(*address, *size, self.device) };
                recorder.memory_created(*address, desc);
                Ok(Command::MemAlloc { mem: recorder.mem_id(*address).ok_or_else(|| untracked(*address))? })
            }
            NodeRead::Free { address } => {
                let (mem, _) = recorder.locate(*address).ok_or_else(|| untracked(*address))?;
                Ok(Command::MemFree { mem: recorder.mem_id(mem).ok_or_else(|| untracked(*address))? })
            }
            NodeRead::Conditional(conditional) => {
                let bodies = conditional.bodies.iter().map(|body| self.graph(body)).collect();
                let condition = conditional.condition;
                Ok(Command::Conditional(Conditional { kind: conditional.kind, condition: condition.number, default: condition.default, bodies }))
            }
            NodeRead::Unsupported(reason) => Err(reason),
        }
    }

    /// A by-value parameter holding the handle of one of the graph's conditions is that condition.
    fn condition_handle(&self, value: Value) -> Value {
        match &value {
            Value::Bytes(bytes) => match <[u8; 8]>::try_from(bytes.as_slice()).ok().and_then(|word| self.handles.get(&u64::from_ne_bytes(word))) {
                Some(&number) => Value::Condition(number),
                None => value,
            },
            _ => value,
        }
    }
}

/// A memcpy node's copy of `bytes` bytes between device pointers, as the driver reports it (for tests).
#[cfg(test)]
pub fn linear_copy(src: u64, dst: u64, bytes: usize) -> Memcpy3D {
    // SAFETY: plain data for which all zeroes is valid.
    let mut copy: Memcpy3D = unsafe { std::mem::zeroed() };
    (copy.src_memory_type, copy.src_device, copy.dst_memory_type, copy.dst_device) = (2, src, 2, dst);
    (copy.width_bytes, copy.height, copy.depth) = (bytes, 1, 1);
    copy
}
