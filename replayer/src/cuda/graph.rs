//! One CUDA graph per partition: built once, instantiated once, launched many times, and
//! patched in place with `cuGraphExecKernelNodeSetParams`.

use super::commands::{copy_params, memset_params, Addresses, KernelCall};
use super::driver::check;
use super::objects::Objects;
use crate::backend::{BackendError, BackendResult, PartitionNodes};
use cudarc::driver::sys::{self, CUcontext, CUdevice, CUdeviceptr, CUgraph, CUgraphExec, CUgraphNode};
use std::collections::{BTreeSet, HashMap};
use trace_format::{Command, KernelLaunch, MemId, Node, NodeId, Patch};

/// Stands for the program's host code, which the trace does not hold: the host node keeps the
/// order and the round trip to the host that the program's own host function had.
pub extern "C" fn recorded_host_code(_: *mut std::ffi::c_void) {}

/// Why a backend refuses a sub-graph: `inline::inline_subgraphs` puts its nodes in the partition.
pub const INLINED: &str = "a sub-graph: the replayer inlines them before a backend sees them";

pub struct BuiltGraph {
    graph: CUgraph,
    pub exec: CUgraphExec,
    /// The graph node of each kernel launch of the partition, for updates.
    kernel_nodes: HashMap<NodeId, CUgraphNode>,
    /// Nodes the last update changed: the next update must set them back if it leaves them out.
    patched: BTreeSet<NodeId>,
    /// The partition's first node, which reports the whole graph's time.
    pub first: Option<(NodeId, usize)>,
    /// Memory the partition allocates and frees itself, at the address its allocation node has
    /// in every launch.
    allocated: HashMap<MemId, CUdeviceptr>,
}

/// Builds a graph from the nodes of a partition and instantiates it.
pub fn build(objects: &Objects, context: CUcontext, part: &PartitionNodes<'_>) -> BackendResult<BuiltGraph> {
    let graph = new_graph()?;
    let mut built = BuiltGraph {
        graph,
        exec: std::ptr::null_mut(),
        kernel_nodes: HashMap::new(),
        patched: BTreeSet::new(),
        first: part.nodes.first().map(|(id, node)| (*id, node.queue.map_or(0, |q| q.index()))),
        allocated: HashMap::new(),
    };
    let nodes: Vec<&Node> = part.nodes.iter().map(|(_, node)| *node).collect();
    let own_memory = objects.memories.allocated_by(part);
    let handles = add_nodes(objects, context, graph, &nodes, &part.edges, &own_memory, &mut built.allocated)?;
    for ((id, node), handle) in part.nodes.iter().zip(&handles) {
        if let Command::Kernel(_) = node.command {
            built.kernel_nodes.insert(*id, *handle);
        }
    }
    built.exec = instantiate(graph)?;
    Ok(built)
}

/// Builds and instantiates the partition anew with `patches` applied to its base nodes: the
/// alternative to a native update, measured by `--updates rebuild`.
pub fn rebuild(objects: &Objects, context: CUcontext, part: &PartitionNodes<'_>, patches: &[Patch]) -> BackendResult<BuiltGraph> {
    let patched = part.patched(patches)?;
    let nodes = PartitionNodes { nodes: patched.iter().map(|(id, node)| (*id, node)).collect(), edges: part.edges.clone(), straight_line: part.straight_line };
    build(objects, context, &nodes)
}

fn new_graph() -> BackendResult<CUgraph> {
    let mut graph = std::ptr::null_mut();
    // SAFETY: valid out-pointer.
    check(unsafe { sys::cuGraphCreate(&mut graph, 0) }, "cuGraphCreate")?;
    Ok(graph)
}

fn instantiate(graph: CUgraph) -> BackendResult<CUgraphExec> {
    let mut exec = std::ptr::null_mut();
    // SAFETY: a complete graph and a valid out-pointer.
    check(unsafe { sys::cuGraphInstantiateWithFlags(&mut exec, graph, 0) }, "cuGraphInstantiate")?;
    Ok(exec)
}

/// Adds `nodes` to `graph`, then the edges between them (indices into `nodes`). Memory in
/// `own_memory` gets allocation and free nodes, its addresses written to `allocated`; the
/// allocation nodes come first, as the other nodes' parameters need their addresses.
fn add_nodes(
    objects: &Objects,
    context: CUcontext,
    graph: CUgraph,
    nodes: &[&Node],
    edges: &[(usize, usize)],
    own_memory: &BTreeSet<MemId>,
    allocated: &mut HashMap<MemId, CUdeviceptr>,
) -> BackendResult<Vec<CUgraphNode>> {
    let mut handles = vec![std::ptr::null_mut(); nodes.len()];
    for (node, handle) in nodes.iter().zip(&mut handles) {
        if let Command::MemAlloc { mem } = node.command {
            if own_memory.contains(&mem) {
                let size = objects.memories.sizes.get(mem.index()).copied().unwrap_or(0);
                let address;
                (*handle, address) = add_allocation(graph, objects.device, size)?;
                allocated.insert(mem, address);
            }
        }
    }
    let addresses = Addresses::new(&objects.memories.addresses, allocated);
    for (node, handle) in nodes.iter().zip(&mut handles) {
        if handle.is_null() {
            *handle = add_node(objects, addresses, context, graph, &node.command)?;
        }
    }
    let mut from = Vec::with_capacity(edges.len());
    let mut to = Vec::with_capacity(edges.len());
    for &(a, b) in edges {
        let (Some(&a), Some(&b)) = (handles.get(a), handles.get(b)) else {
            return Err(BackendError::Unsupported(format!("an edge {a} -> {b} leaves the graph's {} nodes", handles.len())));
        };
        from.push(a);
        to.push(b);
    }
    if !from.is_empty() {
        // SAFETY: node handles of this graph, arrays of equal length.
        check(unsafe { sys::cuGraphAddDependencies_v2(graph, from.as_ptr(), to.as_ptr(), std::ptr::null(), from.len()) }, "cuGraphAddDependencies")?;
    }
    Ok(handles)
}

/// An allocation node of `size` bytes on `device`; its address stays the same in every launch.
fn add_allocation(graph: CUgraph, device: CUdevice, size: u64) -> BackendResult<(CUgraphNode, CUdeviceptr)> {
    // SAFETY: plain C structs for which all zeroes is valid (every enum has a zero value).
    let mut params: sys::CUDA_MEM_ALLOC_NODE_PARAMS = unsafe { std::mem::zeroed() };
    params.poolProps.allocType = sys::CUmemAllocationType::CU_MEM_ALLOCATION_TYPE_PINNED;
    params.poolProps.location.type_ = sys::CUmemLocationType::CU_MEM_LOCATION_TYPE_DEVICE;
    params.poolProps.location.id = device;
    params.bytesize = size.max(1) as usize;
    let mut node = std::ptr::null_mut();
    // SAFETY: a graph of this backend, valid out-pointers.
    check(unsafe { sys::cuGraphAddMemAllocNode(&mut node, graph, std::ptr::null(), 0, &mut params) }, "cuGraphAddMemAllocNode")?;
    Ok((node, params.dptr))
}

fn add_node(objects: &Objects, addresses: Addresses<'_>, context: CUcontext, graph: CUgraph, command: &Command) -> BackendResult<CUgraphNode> {
    let mut node = std::ptr::null_mut();
    let none = std::ptr::null();
    // SAFETY: parameter blocks live across each call; the driver copies them.
    unsafe {
        match command {
            Command::Kernel(launch) => {
                let mut call = KernelCall::new(objects, addresses, launch)?;
                let params = call.node_params();
                check(sys::cuGraphAddKernelNode_v2(&mut node, graph, none, 0, &params), "cuGraphAddKernelNode")?;
                for attribute in &call.attributes {
                    check(sys::cuGraphKernelNodeSetAttribute(node, attribute.id, &attribute.value), "cuGraphKernelNodeSetAttribute")?;
                }
            }
            Command::Copy(copy) => {
                let params = copy_params(objects, addresses, copy)?;
                check(sys::cuGraphAddMemcpyNode(&mut node, graph, none, 0, &params, context), "cuGraphAddMemcpyNode")?;
            }
            Command::Fill(fill) => {
                let params = memset_params(objects, addresses, fill)?;
                check(sys::cuGraphAddMemsetNode(&mut node, graph, none, 0, &params, context), "cuGraphAddMemsetNode")?;
            }
            Command::Subgraph(_) => return Err(BackendError::Unsupported(INLINED.into())),
            Command::HostTask(_) => {
                let params = sys::CUDA_HOST_NODE_PARAMS { fn_: Some(recorded_host_code), userData: std::ptr::null_mut() };
                check(sys::cuGraphAddHostNode(&mut node, graph, none, 0, &params), "cuGraphAddHostNode")?;
            }
            // Memory allocated or freed in another partition lives for the whole replay, so
            // the program's allocation and free only order there.
            Command::MemFree { mem } => match addresses.allocated(*mem) {
                Some(address) => check(sys::cuGraphAddMemFreeNode(&mut node, graph, none, 0, address), "cuGraphAddMemFreeNode")?,
                None => check(sys::cuGraphAddEmptyNode(&mut node, graph, none, 0), "cuGraphAddEmptyNode")?,
            },
            Command::Barrier | Command::MemAlloc { .. } => {
                check(sys::cuGraphAddEmptyNode(&mut node, graph, none, 0), "cuGraphAddEmptyNode")?;
            }
        }
    }
    Ok(node)
}

impl BuiltGraph {
    /// Sets each kernel node to its base launch with `patches` applied (patches are relative to
    /// the partition's recorded nodes), including the nodes the previous update changed.
    /// When most kernels change, one whole-graph `cuGraphExecUpdate` replaces the per-node calls.
    pub fn update(&mut self, objects: &Objects, context: CUcontext, part: &PartitionNodes<'_>, patches: &[Patch]) -> BackendResult<()> {
        let mut launches: HashMap<NodeId, KernelLaunch> = HashMap::new();
        for patch in patches {
            let node = match patch {
                Patch::Arg { node, .. } | Patch::Launch { node, .. } => *node,
            };
            let launch = match launches.entry(node) {
                std::collections::hash_map::Entry::Occupied(entry) => entry.into_mut(),
                std::collections::hash_map::Entry::Vacant(entry) => entry.insert(base_launch(part, node)?.clone()),
            };
            match patch {
                Patch::Arg { index, value, .. } => {
                    let slot = launch.args.get_mut(*index as usize).ok_or_else(|| {
                        BackendError::Unsupported(format!("node {node} has no argument {index}"))
                    })?;
                    *slot = value.clone();
                }
                Patch::Launch { launch: shape, .. } => launch.launch = shape.clone(),
            }
        }
        for node in std::mem::take(&mut self.patched) {
            if let std::collections::hash_map::Entry::Vacant(entry) = launches.entry(node) {
                entry.insert(base_launch(part, node)?.clone());
            }
        }
        // A whole-graph update would add allocation nodes of its own, at other addresses.
        if launches.len() > 1 && launches.len() * 2 > self.kernel_nodes.len() && self.allocated.is_empty() {
            self.update_whole(objects, context, part, &launches)?;
        } else {
            self.update_nodes(objects, &launches)?;
        }
        self.patched = patches
            .iter()
            .map(|patch| match patch {
                Patch::Arg { node, .. } | Patch::Launch { node, .. } => *node,
            })
            .collect();
        Ok(())
    }

    fn update_nodes(&mut self, objects: &Objects, launches: &HashMap<NodeId, KernelLaunch>) -> BackendResult<()> {
        for (node, launch) in launches {
            let handle = *self.kernel_nodes.get(node).ok_or_else(|| BackendError::Unsupported(format!("node {node} is not a kernel of this graph")))?;
            let mut call = KernelCall::new(objects, Addresses::new(&objects.memories.addresses, &self.allocated), launch)?;
            let params = call.node_params();
            // SAFETY: a node of this graph's instantiation; params live across the call.
            check(unsafe { sys::cuGraphExecKernelNodeSetParams_v2(self.exec, handle, &params) }, "cuGraphExecKernelNodeSetParams")?;
        }
        Ok(())
    }

    /// Builds the partition again with the new launches and updates the instantiation from it; the
    /// original graph's node handles keep naming the nodes afterwards.
    fn update_whole(&mut self, objects: &Objects, context: CUcontext, part: &PartitionNodes<'_>, launches: &HashMap<NodeId, KernelLaunch>) -> BackendResult<()> {
        let patched: Vec<Node> = part
            .nodes
            .iter()
            .map(|(id, node)| match launches.get(id) {
                Some(launch) => Node { command: Command::Kernel(launch.clone()), ..(*node).clone() },
                None => (*node).clone(),
            })
            .collect();
        let nodes: Vec<&Node> = patched.iter().collect();
        let graph = new_graph()?;
        let updated = add_nodes(objects, context, graph, &nodes, &part.edges, &BTreeSet::new(), &mut HashMap::new()).and_then(|_| {
            // SAFETY: a plain C struct for which all zeroes is valid; graphs of this backend.
            let mut info: sys::CUgraphExecUpdateResultInfo = unsafe { std::mem::zeroed() };
            check(unsafe { sys::cuGraphExecUpdate_v2(self.exec, graph, &mut info) }, "cuGraphExecUpdate").map_err(|error| match error {
                BackendError::Api { call, detail } => BackendError::Api { call, detail: format!("{detail} ({:?})", info.result) },
                other => other,
            })
        });
        // SAFETY: created above; the instantiation does not keep it.
        unsafe { sys::cuGraphDestroy(graph) };
        updated
    }
}

fn base_launch<'p>(part: &'p PartitionNodes<'_>, node: NodeId) -> BackendResult<&'p KernelLaunch> {
    match part.nodes.iter().find(|(id, _)| *id == node).map(|(_, n)| &n.command) {
        Some(Command::Kernel(launch)) => Ok(launch),
        Some(other) => Err(BackendError::Unsupported(format!("node {node} is a {}, only kernels take patches", other.kind_name()))),
        None => Err(BackendError::Unsupported(format!("node {node} is not in this command buffer"))),
    }
}

impl Drop for BuiltGraph {
    fn drop(&mut self) {
        // SAFETY: created by `build`; errors cannot be reported from Drop.
        unsafe {
            if !self.exec.is_null() {
                sys::cuGraphExecDestroy(self.exec);
            }
            sys::cuGraphDestroy(self.graph);
        }
    }
}
