//! What the shim keeps about OpenCL objects beyond what the recorder holds: what it needs to
//! read memory back, each kernel's current arguments (OpenCL cannot report them), and the
//! regions the program has mapped.

use super::references::References;
use cl_images::ClImage;
use super::Failure;
use crate::recorder::{Access, Key, Recorder};
use crate::{entry, session};
use opencl_sys::{cl_command_queue, cl_context, cl_device_id, cl_mem, cl_mem_flags, cl_sync_point_khr};
use crate::fast_hash::{HashMap, HashSet};
use std::sync::{Mutex, PoisonError, TryLockError};
use trace_format::{Api, Edge, EdgeKind, Extent, Graph, Launch, Node, NodeId, UnifiedKind};

/// A memory object as the shim reads it: a `cl_mem` buffer or image, an SVM allocation or
/// unified shared memory.
pub struct MemObject {
    pub context: cl_context,
    pub flags: cl_mem_flags,
    pub addressing: Addressing,
    /// What an image is, for reading it packed and placing its texels.
    pub image: Option<ClImage>,
}

/// How the program names a memory object.
#[derive(Clone, Copy, PartialEq, Eq)]
pub enum Addressing {
    /// A `cl_mem` handle.
    Handle,
    /// A pointer from `clSVMAlloc`.
    Svm,
    /// A pointer from `cl_intel_unified_shared_memory` of `platform`, whose functions read it.
    Unified { platform: Key, kind: UnifiedKind },
}

impl Addressing {
    pub fn by_pointer(self) -> bool {
        self != Addressing::Handle
    }
}

/// What reading memory back needs: each memory object's context, and a device of each context;
/// and the program's live queues, which a capture starting waits for.
#[derive(Default)]
pub struct Memories {
    pub objects: HashMap<Key, MemObject>,
    pub context_devices: HashMap<Key, cl_device_id>,
    pub queues: HashSet<Key>,
}

/// A kernel argument as the program last set it.
#[derive(Clone, Debug, PartialEq)]
pub enum ArgValue {
    /// `clSetKernelArg` with a value: the bytes.
    Bytes(Vec<u8>),
    /// `clSetKernelArg` with a null value: local memory of this size.
    Local(u64),
    /// `clSetKernelArgSVMPointer` (null included).
    Svm(u64),
    /// A null `cl_mem` for a parameter the driver reports as a pointer.
    NullMemory,
}

/// What the shim keeps of a kernel: its arguments as last set, and which are pointers.
#[derive(Clone, Debug, Default)]
pub struct KernelArgs {
    pub values: Vec<Option<ArgValue>>,
    /// Whether each parameter is a global or constant pointer, as far as the driver reports
    /// it (`clGetKernelArgInfo` may need `-cl-kernel-arg-info`; empty when it does not say).
    pub pointers: Vec<bool>,
}

impl KernelArgs {
    /// Sets argument `index` as `clSetKernelArg(SVMPointer)` would; a null `cl_mem` for a
    /// pointer parameter, given by address or as a null value, is a null buffer, not eight zero
    /// bytes nor local memory.
    pub fn set(&mut self, index: usize, argument: ArgValue) {
        let null = match &argument {
            ArgValue::Bytes(bytes) => is_null_handle(bytes),
            ArgValue::Local(size) => *size == size_of::<cl_mem>() as u64,
            _ => false,
        };
        let argument = match null && self.pointers.get(index) == Some(&true) {
            true => ArgValue::NullMemory,
            false => argument,
        };
        if self.values.len() <= index {
            self.values.resize(index + 1, None);
        }
        self.values[index] = Some(argument);
    }

    /// `set` with a value: into the bytes the argument holds where they are as long (a loop
    /// setting its arguments anew before every launch allocates nothing).
    pub fn set_bytes(&mut self, index: usize, bytes: &[u8]) {
        let null_memory = is_null_handle(bytes) && self.pointers.get(index) == Some(&true);
        match self.values.get_mut(index) {
            Some(Some(ArgValue::Bytes(held))) if held.len() == bytes.len() && !null_memory => held.copy_from_slice(bytes),
            _ => self.set(index, ArgValue::Bytes(bytes.to_vec())),
        }
    }
}

/// Whether `bytes` are a null `cl_mem`.
fn is_null_handle(bytes: &[u8]) -> bool {
    <[u8; size_of::<cl_mem>()]>::try_from(bytes).is_ok_and(|handle| usize::from_ne_bytes(handle) == 0)
}

/// A region the program mapped, until it unmaps it.
#[derive(Clone, Debug)]
pub struct Mapping {
    pub mem: Key,
    /// The byte of `mem` the extents start from.
    pub offset: u64,
    /// The host bytes the mapped region spans.
    pub host_bytes: u64,
    /// The map's copy from `mem` to the host; the unmap copies back with `from_host`.
    pub to_host: Extent,
    pub from_host: Extent,
    /// Mapped for writing: the unmap writes the region back.
    pub write: bool,
}

impl Mapping {
    /// `size` bytes of a buffer (or SVM) from `offset`.
    pub fn linear(mem: Key, offset: u64, size: u64, write: bool) -> Mapping {
        let extent = Extent::Linear { bytes: size };
        Mapping { mem, offset, host_bytes: size, to_host: extent.clone(), from_host: extent, write }
    }
}

#[derive(Default)]
pub struct State {
    pub memories: Memories,
    /// The program's references to memory, queues and kernels.
    pub references: References,
    /// Each kernel's arguments.
    pub kernels: HashMap<Key, KernelArgs>,
    /// Mapped regions by the host address the program got.
    pub mappings: HashMap<usize, Mapping>,
    /// Command buffers the program records (`cl_khr_command_buffer`).
    pub command_buffers: HashMap<Key, CommandBuffer>,
}

/// A command buffer as the program recorded it: a graph run whole at each enqueue.
pub struct CommandBuffer {
    /// The queue it runs on unless the enqueue names one.
    pub queue: cl_command_queue,
    /// Recorded for an in-order queue: each command follows the previous one.
    pub in_order: bool,
    pub graph: Graph,
    /// Memory each node uses, by node.
    pub accesses: Vec<Vec<Access>>,
    /// The node each sync point the driver handed out stands for.
    pub sync_points: HashMap<cl_sync_point_khr, NodeId>,
    /// Kernel commands the program may update, by the `cl_mutable_command_khr` it got.
    pub mutable: HashMap<Key, MutableKernel>,
}

/// A kernel command as last recorded or updated: what `clUpdateMutableCommandsKHR` changes.
#[derive(Clone, Debug)]
pub struct MutableKernel {
    pub node: NodeId,
    pub kernel: Key,
    pub arguments: KernelArgs,
    pub launch: Launch,
}

impl CommandBuffer {
    /// Adds a command after the sync points it waits for (and the previous command when in order).
    pub fn add(&mut self, node: Node, waits: &[cl_sync_point_khr], signals: Option<cl_sync_point_khr>, accesses: Vec<Access>) -> NodeId {
        let id = NodeId(self.graph.nodes.len() as u32);
        if self.in_order && id.0 > 0 {
            self.graph.edges.push(Edge { from: NodeId(id.0 - 1), to: id, kind: EdgeKind::InOrder });
        }
        for wait in waits {
            let Some(&from) = self.sync_points.get(wait) else { continue };
            if !self.graph.edges.iter().any(|edge| edge.from == from && edge.to == id) {
                self.graph.edges.push(Edge { from, to: id, kind: EdgeKind::Event });
            }
        }
        if let Some(sync_point) = signals {
            self.sync_points.insert(sync_point, id);
        }
        self.graph.nodes.push(node);
        self.accesses.push(accesses);
        id
    }
}

// The raw handles are only used on threads that hold the lock.
unsafe impl Send for State {}

static STATE: Mutex<Option<State>> = Mutex::new(None);

/// Runs `work` with the OpenCL state and the process's recorder (creating the trace on first
/// use). Lock order: this state, then the session.
pub fn with_recorder<R>(work: impl FnOnce(&mut State, &mut Recorder) -> R) -> Result<R, Failure> {
    let mut state = STATE.lock().unwrap_or_else(PoisonError::into_inner);
    let state = state.get_or_insert_with(State::default);
    Ok(session::with(Api::OpenCl, |recorder| work(state, recorder))?)
}

/// Runs `work` with the OpenCL state only (tracking that needs no recorder).
#[inline(always)]
pub fn with_state<R>(work: impl FnOnce(&mut State) -> R) -> R {
    let mut state = STATE.lock().unwrap_or_else(PoisonError::into_inner);
    work(state.get_or_insert_with(State::default))
}

/// `with_state` for hooks without the reentrancy guard (`entry::observe`): `None`, skipping
/// `work`, where this thread itself holds the state inside another hook (a driver calling back
/// in), which waiting for would deadlock. The guard's thread-local is read only when the lock
/// is taken: setting an argument costs one uncontended lock.
#[inline(always)]
pub fn with_state_unless_held<R>(work: impl FnOnce(&mut State) -> R) -> Option<R> {
    let mut state = match STATE.try_lock() {
        Ok(state) => state,
        Err(TryLockError::Poisoned(poisoned)) => poisoned.into_inner(),
        Err(TryLockError::WouldBlock) if entry::inside() => return None,
        Err(TryLockError::WouldBlock) => STATE.lock().unwrap_or_else(PoisonError::into_inner),
    };
    Some(work(state.get_or_insert_with(State::default)))
}

#[cfg(test)]
mod tests {
    use super::{with_state, with_state_unless_held, ArgValue, KernelArgs};
    use std::sync::mpsc;

    #[test]
    fn the_state_this_thread_holds_inside_a_hook_is_skipped_and_another_threads_waited_for() {
        // A driver calling clSetKernelArg back while its hook holds the state.
        crate::entry::guarded("test", || with_state(|_| assert_eq!(with_state_unless_held(|_| 1), None)));
        let (held, holding) = mpsc::channel();
        let holder = std::thread::spawn(move || {
            with_state(|_| {
                held.send(()).expect("the test waits");
                std::thread::sleep(std::time::Duration::from_millis(50));
            })
        });
        holding.recv().expect("the holder started");
        assert_eq!(with_state_unless_held(|_| 2), Some(2));
        holder.join().expect("the holder ran");
    }

    #[test]
    fn a_null_buffer_is_recognized_both_ways_opencl_allows() {
        let mut args = KernelArgs { values: Vec::new(), pointers: vec![true, true, false] };
        args.set(0, ArgValue::Bytes(vec![0; 8]));
        args.set(1, ArgValue::Local(8));
        args.set(2, ArgValue::Local(8));
        assert_eq!(args.values, [Some(ArgValue::NullMemory), Some(ArgValue::NullMemory), Some(ArgValue::Local(8))]);
    }

    #[test]
    fn a_value_set_again_replaces_the_held_bytes_whatever_it_was() {
        let mut args = KernelArgs { values: Vec::new(), pointers: vec![true, false] };
        args.set_bytes(1, &7u32.to_ne_bytes());
        args.set_bytes(1, &9u32.to_ne_bytes());
        args.set_bytes(0, &0x55u64.to_ne_bytes());
        assert_eq!(args.values, [Some(ArgValue::Bytes(0x55u64.to_ne_bytes().to_vec())), Some(ArgValue::Bytes(9u32.to_ne_bytes().to_vec()))]);
        // A null handle for a pointer is a null buffer even where a buffer's handle was held.
        args.set_bytes(0, &[0; 8]);
        args.set_bytes(1, &[1, 2]);
        args.set(1, ArgValue::Local(16));
        args.set_bytes(1, &[3; 16]);
        assert_eq!(args.values, [Some(ArgValue::NullMemory), Some(ArgValue::Bytes(vec![3; 16]))]);
    }
}
