//! The program's own graphs: conditions and conditional nodes kept as the program creates them
//! (the driver cannot report them), each graph read when instantiated, every change the program
//! makes to an executable graph followed (node parameters of each type, whole updates, nodes
//! enabled and disabled), and each `cuGraphLaunch` recorded as one sub-graph node on the launching
//! stream, built from the graph as it stands then. `cuGraphUpload` changes nothing recorded.

use super::commands::{enqueue, Enqueued};
use super::graph_read::{
    conditional_kind, event_number, kernel_node, memset_node, read_graph, CUgraph, CUgraphNode, KernelNodeParams, MemsetNodeParams,
    CHILD_GRAPH, CONDITIONAL, EVENT_RECORD, KERNEL, MEMCPY, MEMSET, WAIT_EVENT,
};
use super::graphs::{Condition, CreatedConditional, ExecGraph, KernelNode, NodeRead};
use super::hooks::CUcontext;
use super::memory::{freed_in_order, track};
use super::rect::Memcpy3D;
use super::state::{with_recorder, with_state, State};
use super::streams::stream_key;
use super::{key, modules, succeeded, CUresult, CUstream, Recorded};
use crate::entry::Forward;
use crate::recorder::{MemShape, Recorder};
use std::cell::RefCell;
use std::ffi::{c_int, c_uint, c_void};
use trace_format::MemKind;

pub type CUgraphExec = *mut c_void;

/// `CUgraphNodeParams` of cuda.h: the node type, then (16 bytes in) a union of each type's
/// parameters, read here as the words it starts with.
#[repr(C)]
pub struct NodeParams {
    kind: c_int,
    reserved: [c_int; 3],
    union: [u64; 29],
    reserved2: i64,
}

impl NodeParams {
    /// The union as a type's parameter structure, which starts it.
    fn as_params<T>(&self) -> *const T {
        self.union.as_ptr().cast()
    }
}

/// `CU_GRAPH_COND_ASSIGN_DEFAULT`: the default is the condition's value at each launch.
const ASSIGN_DEFAULT: c_uint = 1;

/// `cuGraphConditionalHandleCreate`: a condition gets the trace's next number.
pub unsafe fn condition_created(
    forward: &mut Forward<'_, CUresult>,
    _call: &str,
    handle: *mut u64,
    _graph: CUgraph,
    _context: CUcontext,
    default: c_uint,
    flags: c_uint,
) -> Recorded {
    if succeeded(forward) {
        // SAFETY: the call succeeded, so it wrote the handle.
        let handle = unsafe { *handle };
        with_state(|state| {
            let number = state.conditions.len() as u32;
            let default = (flags & ASSIGN_DEFAULT != 0).then_some(default);
            state.conditions.insert(handle, Condition { number, default });
        });
    }
    Ok(())
}

/// `cuGraphAddNode_v2`: a conditional node is kept with its handle and bodies (which the driver
/// created and wrote into the parameters).
pub unsafe fn add_node_v2(
    forward: &mut Forward<'_, CUresult>,
    call: &str,
    node: *mut CUgraphNode,
    graph: CUgraph,
    dependencies: *const CUgraphNode,
    _dependency_data: *const c_void,
    count: usize,
    params: *mut NodeParams,
) -> Recorded {
    unsafe { add_node(forward, call, node, graph, dependencies, count, params) }
}

pub unsafe fn add_node(
    forward: &mut Forward<'_, CUresult>,
    _call: &str,
    node: *mut CUgraphNode,
    _graph: CUgraph,
    _dependencies: *const CUgraphNode,
    _count: usize,
    params: *mut NodeParams,
) -> Recorded {
    if !succeeded(forward) {
        return Ok(());
    }
    // SAFETY: the driver read the parameters (and, for a conditional, wrote its bodies there).
    let Some(params) = (unsafe { params.as_ref() }).filter(|params| params.kind == CONDITIONAL) else { return Ok(()) };
    let [handle, kind_and_size, bodies, ..] = params.union;
    let (kind, size) = (kind_and_size as u32 as c_int, (kind_and_size >> 32) as usize);
    let Some(kind) = conditional_kind(kind) else { return Ok(()) };
    let bodies = bodies as usize as *const CUgraph;
    // SAFETY: the driver's array of `size` body graphs, and the node it created.
    let (bodies, node) = unsafe { (std::slice::from_raw_parts(bodies, if bodies.is_null() { 0 } else { size }), key(*node)) };
    let created = CreatedConditional { handle, kind, bodies: bodies.iter().map(|&body| key(body)).collect() };
    with_state(|state| state.conditional_nodes.insert(node, created));
    Ok(())
}

/// Makes sure every kernel the graph launches is known to the recorder, with its program's
/// variables.
fn identify_kernels(state: &mut State, recorder: &mut Recorder, graph: &mut ExecGraph) {
    graph.nodes_mut(&mut |node| {
        if let NodeRead::Kernel(kernel) = node {
            identify_kernel(state, recorder, kernel);
        }
    });
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
        Some(read) => {
            let mut graph = ExecGraph::new(read);
            identify_kernels(state, recorder, &mut graph);
            state.graph_execs.insert(exec, graph);
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

/// `cuGraphExecUpdate`: the executable graph takes the parameters of `graph`'s nodes.
pub unsafe fn exec_update(forward: &mut Forward<'_, CUresult>, call: &str, exec: CUgraphExec, graph: CUgraph, _result: *mut c_void) -> Recorded {
    if !succeeded(forward) {
        return Ok(());
    }
    // SAFETY: the graph the update succeeded from.
    let read = unsafe { read_graph(graph) };
    with_recorder(|state, recorder| match (read, state.graph_execs.get(&key(exec))) {
        (Some(read), Some(before)) => {
            let mut updated = before.updated(read);
            identify_kernels(state, recorder, &mut updated);
            state.graph_execs.insert(key(exec), updated);
        }
        (None, _) => recorder.partial(call, "the driver did not list the graph's nodes and edges"),
        (_, None) => recorder.partial(call, "a graph the shim did not see instantiated"),
    })
}

/// After a successful update of node `node` of `exec`: it does what `read` says from now on.
fn node_updated(call: &str, exec: CUgraphExec, node: CUgraphNode, read: NodeRead) -> Recorded {
    with_recorder(|state, recorder| {
        let mut read = read;
        if let NodeRead::Kernel(kernel) = &mut read {
            identify_kernel(state, recorder, kernel);
        }
        match state.graph_execs.get_mut(&key(exec)).map(|graph| graph.set(key(node), read)) {
            Some(true) => {}
            Some(false) => recorder.partial(call, "a node the shim did not see in the instantiated graph"),
            None => recorder.partial(call, "a graph the shim did not see instantiated"),
        }
    })
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
    let Some(kernel) = (unsafe { params.as_ref() }).map(|params| unsafe { kernel_node(params) }) else { return Ok(()) };
    node_updated(call, exec, node, NodeRead::Kernel(kernel))
}

pub unsafe fn exec_memset_node_set_params(
    forward: &mut Forward<'_, CUresult>,
    call: &'static str,
    exec: CUgraphExec,
    node: CUgraphNode,
    params: *const MemsetNodeParams,
    _context: CUcontext,
) -> Recorded {
    // SAFETY: the call succeeded, so the parameters were readable.
    match (succeeded(forward), unsafe { params.as_ref() }) {
        (true, Some(params)) => node_updated(call, exec, node, memset_node(params)),
        _ => Ok(()),
    }
}

pub unsafe fn exec_memcpy_node_set_params(
    forward: &mut Forward<'_, CUresult>,
    call: &'static str,
    exec: CUgraphExec,
    node: CUgraphNode,
    params: *const Memcpy3D,
    _context: CUcontext,
) -> Recorded {
    // SAFETY: the call succeeded, so the parameters were readable.
    match (succeeded(forward), unsafe { params.as_ref() }) {
        (true, Some(copy)) => node_updated(call, exec, node, NodeRead::Copy(*copy)),
        _ => Ok(()),
    }
}

pub unsafe fn exec_child_graph_node_set_params(forward: &mut Forward<'_, CUresult>, call: &'static str, exec: CUgraphExec, node: CUgraphNode, child: CUgraph) -> Recorded {
    if !succeeded(forward) {
        return Ok(());
    }
    // SAFETY: the graph the update succeeded from.
    match unsafe { read_graph(child) } {
        Some(read) => node_updated(call, exec, node, NodeRead::Child(read)),
        None => with_recorder(|_, recorder| recorder.partial(call, "the driver did not list the graph's nodes and edges")),
    }
}

/// `cuGraphExecEventRecordNodeSetEvent` and `cuGraphExecEventWaitNodeSetEvent`.
pub unsafe fn exec_event_node_set_event(forward: &mut Forward<'_, CUresult>, call: &'static str, exec: CUgraphExec, node: CUgraphNode, event: *mut c_void) -> Recorded {
    if !succeeded(forward) {
        return Ok(());
    }
    let event = key(event);
    let number = with_state(|state| event_number(state, event));
    let read = match call.contains("Record") {
        true => NodeRead::EventRecord { event, number },
        false => NodeRead::EventWait { event, number },
    };
    node_updated(call, exec, node, read)
}

/// `cuGraphExecNodeSetParams`: the parameters of any node type, named in them.
pub unsafe fn exec_node_set_params(forward: &mut Forward<'_, CUresult>, call: &'static str, exec: CUgraphExec, node: CUgraphNode, params: *mut NodeParams) -> Recorded {
    if !succeeded(forward) {
        return Ok(());
    }
    // SAFETY: the call succeeded, so the parameters were readable, as their type says.
    let Some(params) = (unsafe { params.as_ref() }) else { return Ok(()) };
    let read = unsafe {
        match params.kind {
            KERNEL => NodeRead::Kernel(kernel_node(&*params.as_params::<KernelNodeParams>())),
            MEMSET => memset_node(&*params.as_params::<MemsetNodeParams>()),
            // `CUDA_MEMCPY_NODE_PARAMS`: flags, a reserved word and a context before the copy.
            MEMCPY => NodeRead::Copy(*params.as_params::<u8>().add(16).cast::<Memcpy3D>()),
            CHILD_GRAPH => return exec_child_graph_node_set_params(forward, call, exec, node, params.union[0] as usize as CUgraph),
            EVENT_RECORD | WAIT_EVENT => {
                let event = params.union[0];
                let number = with_state(|state| event_number(state, event));
                if params.kind == EVENT_RECORD { NodeRead::EventRecord { event, number } } else { NodeRead::EventWait { event, number } }
            }
            // Host code is not recorded, whatever its function.
            super::graph_read::HOST => NodeRead::Host,
            _ => return with_recorder(|_, recorder| recorder.partial(call, "an update of a node of this type is not recorded")),
        }
    };
    node_updated(call, exec, node, read)
}

/// `cuGraphNodeSetEnabled`: a disabled node does nothing until enabled again.
pub unsafe fn node_set_enabled(forward: &mut Forward<'_, CUresult>, call: &str, exec: CUgraphExec, node: CUgraphNode, enabled: c_uint) -> Recorded {
    if !succeeded(forward) {
        return Ok(());
    }
    with_recorder(|state, recorder| {
        let known = state.graph_execs.get_mut(&key(exec)).is_some_and(|graph| graph.set_enabled(key(node), enabled != 0));
        if !known {
            recorder.partial(call, "a node the shim did not see in an instantiated graph");
        }
    })
}

pub unsafe fn exec_destroy(forward: &mut Forward<'_, CUresult>, _call: &str, exec: CUgraphExec) -> Recorded {
    forward.call();
    with_state(|state| state.graph_execs.remove(&key(exec)));
    Ok(())
}

/// Records the launch as one sub-graph node on the stream, built from the graph as it stands
/// now: its allocations are memory of their own in each launch, its event records stand for the
/// launch and its event waits are the launch's. A launch into a capture is part of the captured
/// graph, read when that one is instantiated.
pub unsafe fn launch(forward: &mut Forward<'_, CUresult>, call: &'static str, exec: CUgraphExec, stream: CUstream) -> Recorded {
    let queue = stream_key(stream, call);
    let (captured, graph) = with_state(|state| (state.capturing.contains_key(&queue), state.graph_execs.get(&key(exec)).cloned()));
    if captured {
        forward.call();
        return Ok(());
    }
    let Some(graph) = graph else {
        return enqueue(forward, Enqueued::new(call, stream), |_| Vec::new(), |_| Err("a graph the shim did not see instantiated"));
    };
    let (allocated, freed) = graph.allocations();
    // Tracked here too for launches outside the capture range, whose nodes are not translated.
    for &(address, size) in &allocated {
        track(address, size, Some(queue), MemShape::Whole(MemKind::StreamOrdered), 0)?;
    }
    // The arrays its copies may name (rarely any: a copy of the few there are).
    let (device, arrays) = with_recorder(|state, recorder| (super::device::current(state, recorder).map(|(_, device)| device), state.arrays.clone()))?;
    let (recorded, waited) = graph.events();
    let command = RefCell::new(None);
    let accesses = |recorder: &mut Recorder| {
        let launched = graph.launched(recorder, &arrays, call, device);
        *command.borrow_mut() = Some(launched.command);
        launched.accesses
    };
    let build = |recorder: &mut Recorder| {
        for &(address, _) in &allocated {
            recorder.allocated_in_order(address);
        }
        command.borrow_mut().take().ok_or("the graph was not translated")
    };
    enqueue(forward, Enqueued::new(call, stream).waiting(waited), accesses, build)?;
    if succeeded(forward) {
        with_recorder(|state, recorder| {
            for event in recorded {
                recorder.record_event(event, queue);
            }
            for address in freed {
                freed_in_order(state, recorder, address);
            }
        })?;
    }
    Ok(())
}
