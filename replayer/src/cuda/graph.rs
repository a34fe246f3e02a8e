//! One CUDA graph per partition: built once, instantiated once, launched many times, and
//! patched in place with `cuGraphExecKernelNodeSetParams`. Each command becomes the node type it
//! was recorded as: a conditional gets a handle of the graph it is in (created before any node,
//! as the kernels that set it come first) and its bodies are built the same way; a sub-graph
//! left inside a body becomes a child graph node.

use super::commands::{copy_params, memset_params, Addresses, KernelCall};
use super::host_copies;
use super::driver::check;
use super::memory::HostBuffer;
use super::objects::{visit_command, Objects};
use crate::backend::{BackendError, BackendResult, HostCopies, PartitionNodes};
use cudarc::driver::sys::{self, CUcontext, CUdevice, CUdeviceptr, CUgraph, CUgraphConditionalHandle, CUgraphExec, CUgraphNode};
use std::collections::{BTreeSet, HashMap};
use std::rc::Rc;
use trace_format::{Arg, Command, Conditional, ConditionalKind, Copy, Extent, Graph, KernelLaunch, MemId, Node, NodeId, Patch, Place};

/// Stands for the program's host code, which the trace does not hold: the host node keeps the
/// order and the round trip to the host that the program's own host function had.
pub extern "C" fn recorded_host_code(_: *mut std::ffi::c_void) {}


/// Whether `command` only runs inside a CUDA graph: a conditional, a kernel that sets one's
/// condition (its handle belongs to a graph), a sub-graph holding either. Eager replay runs a
/// partition holding one as a graph, as the program itself launched its graph.
pub fn needs_graph(command: &Command) -> bool {
    match command {
        Command::Conditional(_) => true,
        Command::Kernel(launch) => launch.args.iter().any(|arg| matches!(arg, Arg::Condition(_))),
        Command::Subgraph(graph) => graph.nodes.iter().any(|node| needs_graph(&node.command)),
        _ => false,
    }
}

/// Whether a graph holds `command`: everything but copies with a host end with `--host-copies
/// stream`, which run on the stream between graphs. By default a graph holds them as kernels
/// where one can make the copy (`host_copies::by_kernel`) and as memcpy nodes where not: a
/// memcpy node waits about 5 µs longer than the same copy on a stream, but a copy on the stream
/// splits the graph, and the partitions run one after another (`host_copies.rs` has the numbers).
/// Host nodes stay: a host node costs a graph 2-3 µs, but taking it out split host_function's and
/// worker_threads' graphs and measured slower still.
pub fn holds(command: &Command, host_copies: HostCopies) -> bool {
    match command {
        Command::Copy(Copy { src: Place::Host { .. }, .. } | Copy { dst: Place::Host { .. }, .. }) => host_copies != HostCopies::Stream,
        _ => true,
    }
}

pub struct BuiltGraph {
    graph: CUgraph,
    pub exec: CUgraphExec,
    /// The graph node of each kernel launch of the partition, for updates.
    kernel_nodes: HashMap<NodeId, CUgraphNode>,
    /// Nodes the last update changed: the next update must set them back if it leaves them out.
    patched: BTreeSet<NodeId>,
    /// The partition's first node, which reports the whole graph's time.
    pub first: Option<(NodeId, usize)>,
    /// Where the partition's own memory lies and the handles of its conditions.
    scope: Scope,
    /// The pinned host data its copies read: held as long as the graph.
    _sources: Vec<Rc<HostBuffer>>,
    /// Where each of its nodes' copies to the host lands, by partition index, when the data is
    /// compared (see `Objects::landings`): the same buffers whatever the graph is rebuilt into.
    landings: Vec<Option<Rc<HostBuffer>>>,
    /// The copies to the host each launch delivers into a landing: node, buffer, extent.
    pub received: Vec<(NodeId, Rc<HostBuffer>, Extent)>,
}

/// The pinned host data the copies of `part` read, inside conditional bodies and sub-graphs too.
fn sources_read(objects: &Objects, part: &PartitionNodes<'_>) -> BackendResult<Vec<Rc<HostBuffer>>> {
    let mut sources = Vec::new();
    for (_, node) in &part.nodes {
        visit_command(&node.command, &mut |command| {
            if let Command::Copy(copy) = command {
                if let Place::Host { data: Some(blob) } = copy.src {
                    sources.extend(objects.sources.get(&blob).cloned());
                }
            }
            Ok(())
        })?;
    }
    Ok(sources)
}

/// What the nodes of a graph see of the graphs around them: the memory the partition allocates
/// and frees itself, at the address its allocation node has in every launch, and the handle each
/// condition got.
#[derive(Clone, Default)]
struct Scope {
    allocated: HashMap<MemId, CUdeviceptr>,
    conditions: HashMap<u32, CUgraphConditionalHandle>,
}

impl Scope {
    fn addresses<'a>(&'a self, objects: &'a Objects) -> Addresses<'a> {
        Addresses::new(&objects.memories.addresses, &self.allocated).with_conditions(&self.conditions).with_textures(&objects.textures).with_relocation(&objects.relocation)
    }
}

/// Builds a graph from the nodes of a partition and instantiates it; its copies to the host land
/// where the staged segment's do (`Objects::landings`).
pub fn build(objects: &Objects, context: CUcontext, part: &PartitionNodes<'_>) -> BackendResult<BuiltGraph> {
    let landings = part.nodes.iter().map(|(id, _)| objects.landings.get(id).cloned()).collect();
    build_with(objects, context, part, landings)
}

fn build_with(objects: &Objects, context: CUcontext, part: &PartitionNodes<'_>, landings: Vec<Option<Rc<HostBuffer>>>) -> BackendResult<BuiltGraph> {
    let graph = new_graph()?;
    let received = part
        .nodes
        .iter()
        .zip(&landings)
        .filter_map(|((id, node), landing)| match (&node.command, landing) {
            (Command::Copy(copy), Some(landing)) => Some((*id, landing.clone(), copy.extent.clone())),
            _ => None,
        })
        .collect();
    let mut built = BuiltGraph {
        graph,
        exec: std::ptr::null_mut(),
        kernel_nodes: HashMap::new(),
        patched: BTreeSet::new(),
        first: part.nodes.first().map(|(id, node)| (*id, node.queue.map_or(0, |q| q.index()))),
        scope: Scope::default(),
        _sources: sources_read(objects, part)?,
        landings,
        received,
    };
    let nodes: Vec<&Node> = part.nodes.iter().map(|(_, node)| *node).collect();
    let own_memory = objects.memories.allocated_by(part);
    let handles = add_nodes(objects, context, graph, &nodes, &built.landings, &part.edges, &own_memory, &mut built.scope)?;
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
pub fn rebuild(objects: &Objects, context: CUcontext, part: &PartitionNodes<'_>, patches: &[Patch], replaced: &BuiltGraph) -> BackendResult<BuiltGraph> {
    let patched = part.patched(patches)?;
    let nodes = part.over(&patched);
    build_with(objects, context, &nodes, replaced.landings.clone())
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
/// `own_memory` gets allocation and free nodes, its addresses added to `scope`; the allocation
/// nodes come first, as the other nodes' parameters need their addresses. So do the handles of
/// the conditionals among `nodes`, added to `scope` too (which holds those of the graphs around
/// `graph`).
#[allow(clippy::too_many_arguments)] // the graph being built and what its nodes need, no bundle of its own
fn add_nodes(
    objects: &Objects,
    context: CUcontext,
    graph: CUgraph,
    nodes: &[&Node],
    landings: &[Option<Rc<HostBuffer>>],
    edges: &[(usize, usize)],
    own_memory: &BTreeSet<MemId>,
    scope: &mut Scope,
) -> BackendResult<Vec<CUgraphNode>> {
    let mut handles = vec![std::ptr::null_mut(); nodes.len()];
    for (node, handle) in nodes.iter().zip(&mut handles) {
        if let Command::MemAlloc { mem } = node.command {
            if own_memory.contains(&mem) {
                let size = objects.memories.sizes.get(mem.index()).copied().unwrap_or(0);
                let address;
                (*handle, address) = add_allocation(graph, objects.device, size)?;
                scope.allocated.insert(mem, address);
            }
        }
    }
    for node in nodes {
        if let Command::Conditional(conditional) = &node.command {
            scope.conditions.insert(conditional.condition, create_condition(graph, context, conditional.default)?);
        }
    }
    for (index, (node, handle)) in nodes.iter().zip(&mut handles).enumerate() {
        if handle.is_null() {
            let landing = landings.get(index).and_then(Option::as_deref);
            *handle = add_node(objects, scope, context, graph, &node.command, landing)?;
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

/// A condition of `graph`, reset to `default` at each launch if it has one.
fn create_condition(graph: CUgraph, context: CUcontext, default: Option<u32>) -> BackendResult<CUgraphConditionalHandle> {
    let mut handle = 0;
    let flags = if default.is_some() { sys::CU_GRAPH_COND_ASSIGN_DEFAULT } else { 0 };
    // SAFETY: a graph of this backend and a valid out-pointer.
    check(unsafe { sys::cuGraphConditionalHandleCreate(&mut handle, graph, context, default.unwrap_or(0), flags) }, "cuGraphConditionalHandleCreate")?;
    Ok(handle)
}

/// A conditional node of `graph` and its bodies, each built like a graph of its own.
fn add_conditional(objects: &Objects, scope: &Scope, context: CUcontext, graph: CUgraph, conditional: &Conditional) -> BackendResult<CUgraphNode> {
    use sys::CUgraphConditionalNodeType::{CU_GRAPH_COND_TYPE_IF, CU_GRAPH_COND_TYPE_SWITCH, CU_GRAPH_COND_TYPE_WHILE};
    let kind = match conditional.kind {
        ConditionalKind::If => CU_GRAPH_COND_TYPE_IF,
        ConditionalKind::While => CU_GRAPH_COND_TYPE_WHILE,
        ConditionalKind::Switch => CU_GRAPH_COND_TYPE_SWITCH,
    };
    let size = u32::try_from(conditional.bodies.len()).map_err(|_| BackendError::Unsupported("a conditional with too many bodies".into()))?;
    // SAFETY: a plain C struct and union for which all zeroes is valid (every enum has a zero value).
    let mut params: sys::CUgraphNodeParams = unsafe { std::mem::zeroed() };
    params.type_ = sys::CUgraphNodeType::CU_GRAPH_NODE_TYPE_CONDITIONAL;
    params.__bindgen_anon_1.conditional =
        sys::CUDA_CONDITIONAL_NODE_PARAMS { handle: scope.addresses(objects).condition(conditional.condition)?, type_: kind, size, phGraph_out: std::ptr::null_mut(), ctx: context };
    let mut node = std::ptr::null_mut();
    // SAFETY: a graph of this backend; the driver fills in the bodies it creates.
    check(unsafe { sys::cuGraphAddNode_v2(&mut node, graph, std::ptr::null(), std::ptr::null(), 0, &mut params) }, "cuGraphAddNode (conditional)")?;
    // SAFETY: the driver's array of `size` body graphs, valid as long as the node.
    let bodies = unsafe { std::slice::from_raw_parts(params.__bindgen_anon_1.conditional.phGraph_out, size as usize) };
    for (body, &body_graph) in conditional.bodies.iter().zip(bodies) {
        add_graph(objects, scope, context, body_graph, body)?;
    }
    Ok(node)
}

/// Adds the nodes and edges of a recorded graph (a conditional's body, a sub-graph in one) to
/// `graph`, seeing the conditions and allocations of the graphs around it.
fn add_graph(objects: &Objects, scope: &Scope, context: CUcontext, graph: CUgraph, inner: &Graph) -> BackendResult<()> {
    let nodes: Vec<&Node> = inner.nodes.iter().collect();
    let edges: Vec<(usize, usize)> = inner.edges.iter().map(|edge| (edge.from.index(), edge.to.index())).collect();
    add_nodes(objects, context, graph, &nodes, &[], &edges, &BTreeSet::new(), &mut scope.clone()).map(drop)
}

fn add_node(objects: &Objects, scope: &Scope, context: CUcontext, graph: CUgraph, command: &Command, landing: Option<&HostBuffer>) -> BackendResult<CUgraphNode> {
    let addresses = scope.addresses(objects).landing_in(landing);
    let mut node = std::ptr::null_mut();
    let none = std::ptr::null();
    // SAFETY: parameter blocks live across each call; the driver copies them.
    unsafe {
        match command {
            Command::Kernel(launch) => {
                let mut call = KernelCall::new(objects, addresses, launch)?;
                let params = call.node_params();
                check(sys::cuGraphAddKernelNode_v2(&mut node, graph, none, 0, &params), "cuGraphAddKernelNode")
                    .map_err(|error| call.refused("cuGraphAddKernelNode", error))?;
                for attribute in &call.attributes {
                    check(sys::cuGraphKernelNodeSetAttribute(node, attribute.id, &attribute.value), "cuGraphKernelNodeSetAttribute")
                        .map_err(|error| call.refused(&format!("cuGraphKernelNodeSetAttribute({:?})", attribute.id), error))?;
                }
            }
            Command::Copy(copy) => {
                let params = copy_params(objects, addresses, copy)?;
                let by_kernel = match (&objects.host_copier, host_copies::by_kernel(copy)) {
                    (Some(copier), true) => copier.add_node(graph, &params)?,
                    _ => None,
                };
                match by_kernel {
                    Some(kernel) => node = kernel,
                    None => check(sys::cuGraphAddMemcpyNode(&mut node, graph, none, 0, &params, context), "cuGraphAddMemcpyNode")?,
                }
            }
            Command::Fill(fill) => {
                let params = memset_params(objects, addresses, fill)?;
                check(sys::cuGraphAddMemsetNode(&mut node, graph, none, 0, &params, context), "cuGraphAddMemsetNode")?;
            }
            // Only inside a conditional's body: the segment's own were inlined.
            Command::Subgraph(inner) => {
                let child = new_graph()?;
                let added = add_graph(objects, scope, context, child, inner)
                    .and_then(|()| check(sys::cuGraphAddChildGraphNode(&mut node, graph, none, 0, child), "cuGraphAddChildGraphNode"));
                // The child graph node holds a copy.
                sys::cuGraphDestroy(child);
                added?;
            }
            Command::Conditional(conditional) => node = add_conditional(objects, scope, context, graph, conditional)?,
            Command::EventRecord { event } => check(sys::cuGraphAddEventRecordNode(&mut node, graph, none, 0, objects.event(*event)?), "cuGraphAddEventRecordNode")?,
            Command::EventWait { event } => check(sys::cuGraphAddEventWaitNode(&mut node, graph, none, 0, objects.event(*event)?), "cuGraphAddEventWaitNode")?,
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
        // A whole-graph update would add allocation nodes and conditions of its own, at other
        // addresses and with other handles.
        if launches.len() > 1 && launches.len() * 2 > self.kernel_nodes.len() && self.scope.allocated.is_empty() && self.scope.conditions.is_empty() {
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
            let mut call = KernelCall::new(objects, self.scope.addresses(objects), launch)?;
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
        let updated = add_nodes(objects, context, graph, &nodes, &self.landings, &part.edges, &BTreeSet::new(), &mut Scope::default()).and_then(|_| {
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
