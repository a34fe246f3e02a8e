//! The program's own graphs: read from the driver when instantiated, kernel nodes followed
//! through `cuGraphExecKernelNodeSetParams`, and each `cuGraphLaunch` recorded as one sub-graph
//! node on the launching stream.

use super::commands::{enqueue, Enqueued};
use super::graphs::{ExecGraph, KernelNode, NodeRead, ReadGraph};
use super::hooks::driver;
use super::state::{with_recorder, with_state, State};
use super::rect::Memcpy3D;
use super::{key, modules, params, succeeded, CUresult, CUstream, Recorded, CUDA_SUCCESS};
use crate::entry::Forward;
use crate::recorder::Recorder;
use std::ffi::{c_int, c_uint, c_void};
use trace_format::{Command, Launch};

pub type CUgraph = *mut c_void;
pub type CUgraphNode = *mut c_void;
pub type CUgraphExec = *mut c_void;

/// `CUDA_KERNEL_NODE_PARAMS_v2` of cuda.h.
#[repr(C)]
pub struct KernelNodeParams {
    function: *mut c_void,
    grid: [c_uint; 3],
    block: [c_uint; 3],
    shared_bytes: c_uint,
    params: *mut *mut c_void,
    extra: *mut *mut c_void,
    kernel: *mut c_void,
    context: *mut c_void,
}

/// `CUDA_MEMSET_NODE_PARAMS` of cuda.h.
#[repr(C)]
pub struct MemsetNodeParams {
    dst: u64,
    pitch: usize,
    value: c_uint,
    element_size: c_uint,
    width: usize,
    height: usize,
}

/// `CU_MEMORYTYPE_DEVICE` and `CU_MEMORYTYPE_UNIFIED`: memory a device pointer names.
const DEVICE_MEMORY: [c_uint; 2] = [2, 4];

/// `CUgraphNodeType` values the trace describes.
const KERNEL: c_int = 0;
const MEMCPY: c_int = 1;
const MEMSET: c_int = 2;
const CHILD_GRAPH: c_int = 4;
const EMPTY: c_int = 5;

/// The driver's answer as an option.
fn ok(status: CUresult) -> Option<()> {
    (status == CUDA_SUCCESS).then_some(())
}

/// A list the driver fills after telling its length: `query(buffers, count)`.
fn listed<T: Clone>(empty: T, ways: usize, query: impl Fn(&mut [Vec<T>], &mut usize) -> CUresult) -> Option<Vec<Vec<T>>> {
    let mut count = 0usize;
    let mut none: Vec<Vec<T>> = vec![Vec::new(); ways];
    ok(query(&mut none, &mut count))?;
    let mut lists = vec![vec![empty; count]; ways];
    ok(query(&mut lists, &mut count))?;
    lists.iter_mut().for_each(|list| list.truncate(count));
    Some(lists)
}

/// The graph's nodes and edges, each node described (child graphs read recursively).
unsafe fn read_graph(graph: CUgraph) -> Option<ReadGraph> {
    let pointer = |list: &mut Vec<CUgraphNode>| if list.is_empty() { std::ptr::null_mut() } else { list.as_mut_ptr() };
    // SAFETY: arrays of `count` handles, or null to ask for the count.
    let nodes = listed(std::ptr::null_mut(), 1, |lists, count| unsafe { driver::cuGraphGetNodes(graph, pointer(&mut lists[0]), count) })?;
    let edges = listed(std::ptr::null_mut(), 2, |lists, count| {
        let (from, to) = lists.split_at_mut(1);
        // SAFETY: as above; no edge data asked for (plain dependencies).
        unsafe { driver::cuGraphGetEdges_v2(graph, pointer(&mut from[0]), pointer(&mut to[0]), std::ptr::null_mut(), count) }
    })?;
    let nodes = nodes[0].iter().map(|&node| (key(node), unsafe { read_node(node) })).collect();
    let edges = edges[0].iter().zip(&edges[1]).map(|(&from, &to)| (key(from), key(to))).collect();
    Some(ReadGraph { nodes, edges })
}

unsafe fn read_node(node: CUgraphNode) -> NodeRead {
    let mut kind: c_int = -1;
    // SAFETY: a node of a graph the driver listed.
    if unsafe { driver::cuGraphNodeGetType(node, &mut kind) } != CUDA_SUCCESS {
        return NodeRead::Unsupported("the driver did not say the node's type");
    }
    match kind {
        KERNEL => {
            // SAFETY: zeroed plain data the driver fills.
            let mut params: KernelNodeParams = unsafe { std::mem::zeroed() };
            match unsafe { driver::cuGraphKernelNodeGetParams_v2(node, &mut params) } {
                CUDA_SUCCESS => NodeRead::Kernel(unsafe { kernel_node(&params) }),
                _ => NodeRead::Unsupported("the driver did not report the kernel node"),
            }
        }
        MEMSET => {
            let mut params: MemsetNodeParams = unsafe { std::mem::zeroed() };
            match unsafe { driver::cuGraphMemsetNodeGetParams(node, &mut params) } {
                CUDA_SUCCESS => memset_node(&params),
                _ => NodeRead::Unsupported("the driver did not report the memset node"),
            }
        }
        CHILD_GRAPH => {
            let mut child: CUgraph = std::ptr::null_mut();
            let read = unsafe { ok(driver::cuGraphChildGraphNodeGetGraph(node, &mut child)).and_then(|()| read_graph(child)) };
            read.map_or(NodeRead::Unsupported("the driver did not list the child graph"), NodeRead::Child)
        }
        EMPTY => NodeRead::Empty,
        MEMCPY => {
            let mut params: Memcpy3D = unsafe { std::mem::zeroed() };
            match unsafe { driver::cuGraphMemcpyNodeGetParams(node, &mut params) } {
                CUDA_SUCCESS => memcpy_node(&params),
                _ => NodeRead::Unsupported("the driver did not report the memcpy node"),
            }
        }
        _ => NodeRead::Unsupported("host, event, allocation and conditional nodes of the program's own graphs are not recorded"),
    }
}

/// A kernel node's launch, its parameters read with the kernel's layout.
unsafe fn kernel_node(params: &KernelNodeParams) -> KernelNode {
    // The runtime's `CUkernel` where there is one: its launches name it, so the shim knows it.
    let function = if params.kernel.is_null() { params.function } else { params.kernel };
    let launch = Launch::Grid { grid: params.grid, block: params.block, shared_bytes: params.shared_bytes, cluster: None, cooperative: false };
    let layout = with_state(|state| state.layouts.entry(key(function)).or_insert_with(|| params::layout(function)).clone());
    // SAFETY: the node's parameters as the driver holds (or the program passes) them.
    let arguments = layout.and_then(|layout| unsafe { params::arguments(&layout, params.params, params.extra) }.map(|bytes| (layout, bytes)));
    KernelNode { function: key(function), launch, arguments, variables: Vec::new() }
}

fn memset_node(params: &MemsetNodeParams) -> NodeRead {
    let pattern = match params.element_size {
        1 => (params.value as u8).to_ne_bytes().to_vec(),
        2 => (params.value as u16).to_ne_bytes().to_vec(),
        4 => params.value.to_ne_bytes().to_vec(),
        _ => return NodeRead::Unsupported("a memset node of an element size CUDA does not have"),
    };
    match params.height {
        1 => NodeRead::Memset { dst: params.dst, pattern, count: params.width },
        _ => NodeRead::Unsupported("2D memset nodes of the program's own graphs are not recorded"),
    }
}

/// A linear copy between device pointers; host ends (whose contents matter at each launch),
/// arrays and 2D/3D regions are not described.
fn memcpy_node(params: &Memcpy3D) -> NodeRead {
    let device = DEVICE_MEMORY.contains(&params.src_memory_type) && DEVICE_MEMORY.contains(&params.dst_memory_type);
    let rows = [params.src_y, params.src_z, params.dst_y, params.dst_z].iter().any(|&start| start != 0) || params.height > 1 || params.depth > 1;
    match (device, rows) {
        (true, false) => NodeRead::Copy {
            src: params.src_device + params.src_x_bytes as u64,
            dst: params.dst_device + params.dst_x_bytes as u64,
            bytes: params.width_bytes,
        },
        (false, _) => NodeRead::Unsupported("memcpy nodes with host or array ends in the program's own graphs are not recorded"),
        (true, true) => NodeRead::Unsupported("2D and 3D memcpy nodes of the program's own graphs are not recorded"),
    }
}

/// Makes sure every kernel the graph launches is known to the recorder, with its program's
/// variables.
fn identify_kernels(state: &mut State, recorder: &mut Recorder, graph: &mut ReadGraph) {
    for (_, node) in &mut graph.nodes {
        match node {
            NodeRead::Kernel(kernel) => identify_kernel(state, recorder, kernel),
            NodeRead::Child(child) => identify_kernels(state, recorder, child),
            _ => {}
        }
    }
}

fn identify_kernel(state: &mut State, recorder: &mut Recorder, kernel: &mut KernelNode) {
    modules::identify(state, recorder, kernel.function as usize as *mut c_void);
    modules::read_image(state, recorder, kernel.function);
    kernel.variables = modules::variables_of(state, kernel.function);
}

unsafe fn instantiated(forward: &mut Forward<'_, CUresult>, call: &'static str, exec: *mut CUgraphExec, graph: CUgraph) -> Recorded {
    if !succeeded(forward) || exec.is_null() {
        return Ok(());
    }
    // SAFETY: the call succeeded, so it wrote the executable graph.
    let exec = key(unsafe { *exec });
    let read = unsafe { read_graph(graph) };
    with_recorder(|state, recorder| match read {
        Some(mut read) => {
            identify_kernels(state, recorder, &mut read);
            state.graph_execs.insert(exec, ExecGraph::build(recorder, call, &read));
        }
        None => {
            state.graph_execs.remove(&exec);
            recorder.partial(call, "the driver did not list the graph's nodes and edges");
        }
    })
}

pub unsafe fn instantiate_with_flags(forward: &mut Forward<'_, CUresult>, call: &'static str, exec: *mut CUgraphExec, graph: CUgraph, _flags: u64) -> Recorded {
    unsafe { instantiated(forward, call, exec, graph) }
}

pub unsafe fn instantiate_with_params(forward: &mut Forward<'_, CUresult>, call: &'static str, exec: *mut CUgraphExec, graph: CUgraph, _params: *mut c_void) -> Recorded {
    unsafe { instantiated(forward, call, exec, graph) }
}

pub unsafe fn exec_kernel_node_set_params(
    forward: &mut Forward<'_, CUresult>,
    call: &'static str,
    exec: CUgraphExec,
    node: CUgraphNode,
    params: *const KernelNodeParams,
) -> Recorded {
    if !succeeded(forward) {
        return Ok(());
    }
    // SAFETY: the call succeeded, so the parameters were readable.
    let Some(mut kernel) = (unsafe { params.as_ref() }).map(|params| unsafe { kernel_node(params) }) else { return Ok(()) };
    with_recorder(|state, recorder| {
        identify_kernel(state, recorder, &mut kernel);
        match state.graph_execs.get_mut(&key(exec)) {
            Some(graph) => graph.set_kernel(recorder, call, key(node), &kernel),
            None => recorder.partial(call, "a graph the shim did not see instantiated"),
        }
    })
}

pub unsafe fn exec_destroy(forward: &mut Forward<'_, CUresult>, _call: &str, exec: CUgraphExec) -> Recorded {
    forward.call();
    with_state(|state| state.graph_execs.remove(&key(exec)));
    Ok(())
}

/// Records the launch as one sub-graph node on the stream.
pub unsafe fn launch(forward: &mut Forward<'_, CUresult>, call: &'static str, exec: CUgraphExec, stream: CUstream) -> Recorded {
    let graph: Option<ExecGraph> = with_state(|state| state.graph_execs.get(&key(exec)).cloned());
    let accesses = graph.as_ref().map(ExecGraph::accesses).unwrap_or_default();
    enqueue(forward, Enqueued::new(call, stream), |_| accesses, |_| {
        graph.map(|graph| Command::Subgraph(graph.graph)).ok_or("a graph the shim did not see instantiated")
    })
}
