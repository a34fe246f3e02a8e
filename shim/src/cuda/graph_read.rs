//! Reading the program's graphs from the driver: every node with its type and parameters, child
//! graphs and conditional bodies read in turn. What the driver cannot report of a node (a
//! conditional's handle and bodies) the shim kept when the program created it (`State`).

use super::graphs::{ConditionalNode, KernelNode, NodeRead, ReadGraph};
use super::hooks::driver;
use super::rect::Memcpy3D;
use super::state::{with_state, State};
use super::{key, params, CUresult, CUDA_SUCCESS};
use crate::recorder::Key;
use std::ffi::{c_int, c_uint, c_void};
use trace_format::{ConditionalKind, Launch};

pub type CUgraph = *mut c_void;
pub type CUgraphNode = *mut c_void;

/// `CUDA_KERNEL_NODE_PARAMS_v2` of cuda.h (and `_v3`, its layout).
#[repr(C)]
pub struct KernelNodeParams {
    pub function: *mut c_void,
    pub grid: [c_uint; 3],
    pub block: [c_uint; 3],
    pub shared_bytes: c_uint,
    pub params: *mut *mut c_void,
    pub extra: *mut *mut c_void,
    pub kernel: *mut c_void,
    pub context: *mut c_void,
}

/// `CUDA_MEMSET_NODE_PARAMS` of cuda.h (`_v2` adds a context after it).
#[repr(C)]
#[derive(Clone, Copy)]
pub struct MemsetNodeParams {
    pub dst: u64,
    pub pitch: usize,
    pub value: c_uint,
    pub element_size: c_uint,
    pub width: usize,
    pub height: usize,
}

/// `CUDA_MEM_ALLOC_NODE_PARAMS_v1` of cuda.h: the pool properties, then what matters here.
#[repr(C)]
pub struct AllocNodeParams {
    pool_properties: [u8; 88],
    access: *const c_void,
    access_count: usize,
    pub bytes: usize,
    pub address: u64,
}

/// `CUgraphNodeType` values.
pub const KERNEL: c_int = 0;
pub const MEMCPY: c_int = 1;
pub const MEMSET: c_int = 2;
pub const HOST: c_int = 3;
pub const CHILD_GRAPH: c_int = 4;
pub const EMPTY: c_int = 5;
pub const WAIT_EVENT: c_int = 6;
pub const EVENT_RECORD: c_int = 7;
const SEMAPHORES_SIGNAL: c_int = 8;
const SEMAPHORES_WAIT: c_int = 9;
const MEM_ALLOC: c_int = 10;
const MEM_FREE: c_int = 11;
const BATCH_MEM_OP: c_int = 12;
pub const CONDITIONAL: c_int = 13;

/// `CUgraphConditionalNodeType` values, as the trace names them.
pub fn conditional_kind(kind: c_int) -> Option<ConditionalKind> {
    match kind {
        0 => Some(ConditionalKind::If),
        1 => Some(ConditionalKind::While),
        2 => Some(ConditionalKind::Switch),
        _ => None,
    }
}

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

/// The graph's nodes and edges, each node described (child graphs and bodies read in turn).
///
/// # Safety
/// `graph` is a graph of the program's that it does not change meanwhile.
pub unsafe fn read_graph(graph: CUgraph) -> Option<ReadGraph> {
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
    Some(ReadGraph::new(nodes, edges))
}

/// # Safety
/// `node` is a node of a graph the driver listed.
unsafe fn read_node(node: CUgraphNode) -> NodeRead {
    let mut kind: c_int = -1;
    // SAFETY (whole function): a node the driver listed; zeroed plain data the driver fills.
    if unsafe { driver::cuGraphNodeGetType(node, &mut kind) } != CUDA_SUCCESS {
        return NodeRead::Unsupported("the driver did not say the node's type");
    }
    let reported = |status: CUresult, read: NodeRead| if status == CUDA_SUCCESS { read } else { NodeRead::Unsupported("the driver did not report a node's parameters") };
    match kind {
        KERNEL => {
            let mut params: KernelNodeParams = unsafe { std::mem::zeroed() };
            let status = unsafe { driver::cuGraphKernelNodeGetParams_v2(node, &mut params) };
            if status != CUDA_SUCCESS {
                return NodeRead::Unsupported("the driver did not report a kernel node's parameters");
            }
            NodeRead::Kernel(unsafe { kernel_node(&params) })
        }
        MEMSET => {
            let mut params: MemsetNodeParams = unsafe { std::mem::zeroed() };
            let status = unsafe { driver::cuGraphMemsetNodeGetParams(node, &mut params) };
            if status != CUDA_SUCCESS {
                return NodeRead::Unsupported("the driver did not report a memset node's parameters");
            }
            memset_node(&params)
        }
        MEMCPY => {
            let mut params: Memcpy3D = unsafe { std::mem::zeroed() };
            reported(unsafe { driver::cuGraphMemcpyNodeGetParams(node, &mut params) }, NodeRead::Copy(params))
        }
        HOST => NodeRead::Host,
        EMPTY => NodeRead::Empty,
        CHILD_GRAPH => {
            let mut child: CUgraph = std::ptr::null_mut();
            let read = unsafe { ok(driver::cuGraphChildGraphNodeGetGraph(node, &mut child)).and_then(|()| read_graph(child)) };
            read.map_or(NodeRead::Unsupported("the driver did not list a child graph"), NodeRead::Child)
        }
        EVENT_RECORD | WAIT_EVENT => {
            let mut event: *mut c_void = std::ptr::null_mut();
            let status = match kind {
                EVENT_RECORD => unsafe { driver::cuGraphEventRecordNodeGetEvent(node, &mut event) },
                _ => unsafe { driver::cuGraphEventWaitNodeGetEvent(node, &mut event) },
            };
            let event = key(event);
            let number = with_state(|state| event_number(state, event));
            let read = if kind == EVENT_RECORD { NodeRead::EventRecord { event, number } } else { NodeRead::EventWait { event, number } };
            reported(status, read)
        }
        MEM_ALLOC => {
            let mut params: AllocNodeParams = unsafe { std::mem::zeroed() };
            let status = unsafe { driver::cuGraphMemAllocNodeGetParams(node, &mut params) };
            reported(status, NodeRead::Alloc { address: params.address, size: params.bytes as u64 })
        }
        MEM_FREE => {
            let mut address = 0u64;
            reported(unsafe { driver::cuGraphMemFreeNodeGetParams(node, &mut address) }, NodeRead::Free { address })
        }
        CONDITIONAL => unsafe { conditional_node(key(node)) },
        SEMAPHORES_SIGNAL | SEMAPHORES_WAIT => NodeRead::Unsupported("external semaphore nodes cannot be reproduced by a replay (no external semaphores there)"),
        BATCH_MEM_OP => NodeRead::Unsupported("batch memory operation nodes are not recorded"),
        _ => NodeRead::Unsupported("a graph node of a type this shim does not know"),
    }
}

/// The trace's number for the program's event `event` (numbered on first sight).
pub fn event_number(state: &mut State, event: Key) -> u32 {
    let next = state.event_numbers.len() as u32;
    *state.event_numbers.entry(event).or_insert(next)
}

/// A conditional node as the program created it, its bodies read as they are now.
unsafe fn conditional_node(node: Key) -> NodeRead {
    let created = with_state(|state| {
        let created = state.conditional_nodes.get(&node)?.clone();
        let condition = *state.conditions.get(&created.handle)?;
        Some((created, condition))
    });
    let Some((created, condition)) = created else {
        return NodeRead::Unsupported("a conditional node the shim did not see created (a cloned graph's, say)");
    };
    // SAFETY: the node's bodies, which live as long as the node.
    let bodies: Option<Vec<ReadGraph>> = created.bodies.iter().map(|&body| unsafe { read_graph(body as usize as CUgraph) }).collect();
    match bodies {
        Some(bodies) => NodeRead::Conditional(ConditionalNode { handle: created.handle, kind: created.kind, condition, bodies }),
        None => NodeRead::Unsupported("the driver did not list a conditional node's body"),
    }
}

/// A kernel node's launch, its parameters read with the kernel's layout.
///
/// # Safety
/// `params` as the driver reported them (or the program passes them).
pub unsafe fn kernel_node(params: &KernelNodeParams) -> KernelNode {
    // The runtime's `CUkernel` where there is one: its launches name it, so the shim knows it.
    let function = if params.kernel.is_null() { params.function } else { params.kernel };
    let launch = Launch::Grid { grid: params.grid, block: params.block, shared_bytes: params.shared_bytes, cluster: None, cooperative: false };
    let layout = with_state(|state| state.layouts.entry(key(function)).or_insert_with(|| params::layout(function)).clone());
    // SAFETY: the node's parameters as the driver holds (or the program passes) them.
    let arguments = layout.and_then(|layout| {
        let bytes = unsafe { params::arguments(&layout, params.params, params.extra) }?;
        Some((layout, bytes.into_iter().map(<[u8]>::to_vec).collect()))
    });
    KernelNode { function: key(function), launch, arguments, variables: Vec::new() }
}

/// A memset node: `height` rows of `width` elements, `pitch` bytes apart.
pub fn memset_node(params: &MemsetNodeParams) -> NodeRead {
    let pattern = match params.element_size {
        1 => (params.value as u8).to_ne_bytes().to_vec(),
        2 => (params.value as u16).to_ne_bytes().to_vec(),
        4 => params.value.to_ne_bytes().to_vec(),
        _ => return NodeRead::Unsupported("a memset node of an element size CUDA does not have"),
    };
    NodeRead::Memset { dst: params.dst, pitch: params.pitch, pattern, width: params.width, height: params.height }
}
