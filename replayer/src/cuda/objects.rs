//! What `load` creates for a whole trace: modules and their functions, streams for the recorded
//! queues, and memory; and what `stage` prepares for each segment: pinned host memory for the
//! host side of its copies.

use super::driver::check;
use super::host_copies::HostCopier;
use super::images::TextureObject;
use super::memory::{HostBuffer, Memories, PinnedPool};
use crate::relocation::Relocation;
use super::untracked_variables::UntrackedVariables;
use crate::backend::{BackendError, BackendResult, HostCopies};
use cudarc::driver::sys::{self, CUdevice, CUdeviceptr, CUevent, CUfunction, CUmodule, CUstream};
use std::collections::{BTreeSet, HashMap};
use std::ffi::CString;
use std::rc::Rc;
use trace_format::{BlobId, BlobStore, Command, ImageKind, MemId, MemKind, Node, NodeId, Param, Place, Program, ProgramId, Trace};

/// A recorded kernel's function in the replay's module.
pub struct LoadedFunction {
    pub function: CUfunction,
    pub params: Vec<Param>,
    pub name: String,
}

pub struct Objects {
    pub device: CUdevice,
    /// By `ProgramId` index; `None` for programs no recorded kernel comes from.
    modules: Vec<Option<CUmodule>>,
    /// By `KernelId` index: the function and its parameter layout.
    pub functions: Vec<LoadedFunction>,
    /// By `QueueId` index.
    pub streams: Vec<CUstream>,
    pub memories: Memories,
    /// Moves device addresses inside data between the recorded and the replay placement.
    pub relocation: Relocation,
    /// Program variables whose recorded contents the replay has not written yet: the first
    /// write tells what in them is an address into a loaded module (`learn_module_words`).
    pub variables_unwritten: BTreeSet<MemId>,
    /// Recorded host data of the staged segments' copies to the device, pinned, by blob; a
    /// graph holds on to those it copies from.
    pub sources: HashMap<BlobId, Rc<HostBuffer>>,
    /// Where copies to the host land whose data the trace does not keep.
    pub sink: HostBuffer,
    /// Where each copy of the staged segments lands whose data the trace keeps (by node), to be
    /// compared; a graph holds on to those its copies land in.
    pub landings: HashMap<NodeId, Rc<HostBuffer>>,
    /// Pinned buffers of landings, sources and restored contents no segment uses now, kept for the next.
    pub pinned: PinnedPool,
    /// An event for each event number the trace's event records and waits name.
    pub events: HashMap<u32, CUevent>,
    /// Smaller sinks that graphs built before may still copy into.
    outgrown_sinks: Vec<HostBuffer>,
    /// By `TextureId` index; dropped before the memory they read.
    pub textures: Vec<TextureObject>,
    /// Makes graphs' copies to and from pinned host memory, with `--host-copies kernels`.
    pub host_copier: Option<HostCopier>,
    /// Variables of the loaded modules that the trace does not hold, put back before each run.
    pub untracked_variables: UntrackedVariables,
}

impl Objects {
    /// `spans`: when each memory object is in use (by `MemId` index), where the trace reuses addresses.
    pub fn load(trace: &Trace, blobs: &BlobStore, device: CUdevice, exact_addresses: bool, spans: &[Option<(u32, u32)>], host_copies: HostCopies) -> BackendResult<Objects> {
        // Only programs a recorded kernel or variable comes from: a PyTorch or cuBLAS process
        // registers hundreds of fatbins it never launches from.
        let variables = trace.memories.iter().filter_map(|memory| match &memory.kind {
            MemKind::Global { program, .. } => Some(program.index()),
            _ => None,
        });
        let used: BTreeSet<usize> = trace.kernels.iter().map(|kernel| kernel.program.index()).chain(variables).collect();
        let mut objects = Objects {
            device,
            modules: Vec::new(),
            functions: Vec::new(),
            streams: Vec::new(),
            memories: Memories::none(),
            relocation: Relocation::new(&[], &[], &[]),
            variables_unwritten: BTreeSet::new(),
            sources: HashMap::new(),
            sink: HostBuffer::zeroed(0)?,
            landings: HashMap::new(),
            pinned: PinnedPool::default(),
            events: HashMap::new(),
            outgrown_sinks: Vec::new(),
            textures: Vec::new(),
            host_copier: match host_copies {
                HostCopies::Kernels => Some(HostCopier::load()?),
                HostCopies::Stream | HostCopies::Nodes => None,
            },
            untracked_variables: UntrackedVariables::default(),
        };
        let tracked: BTreeSet<(usize, &str)> = trace.memories.iter().filter_map(|memory| match &memory.kind {
            MemKind::Global { program, name } => Some((program.index(), name.as_str())),
            _ => None,
        }).collect();
        crate::backend::whole_programs_only(trace)?;
        for (index, program) in trace.programs.iter().enumerate() {
            if !used.contains(&index) {
                objects.modules.push(None);
                continue;
            }
            let (module, variables) = load_module(program, blobs).map_err(|error| match error {
                BackendError::Api { call, detail } => BackendError::Api { call: format!("{call} (program {index})"), detail },
                other => other,
            })?;
            objects.modules.push(Some(module));
            objects.untracked_variables.save(module, &variables, |name| tracked.contains(&(index, name)))?;
        }
        // Variables live in their loaded programs, so memory is placed once those are loaded.
        let modules = &objects.modules;
        objects.memories = Memories::allocate(&trace.memories, device, exact_addresses, |program, name| find_variable(modules, program, name))?;
        objects.relocation = Relocation::new(&trace.memories, &objects.memories.addresses, spans);
        let variables = trace.memories.iter().enumerate().filter(|(_, memory)| matches!(memory.kind, MemKind::Global { .. }));
        objects.variables_unwritten = variables.map(|(index, _)| MemId(index as u32)).collect();
        for (index, texture) in trace.textures.iter().enumerate() {
            let resource = texture.resource.ok_or_else(|| BackendError::Unsupported(format!("texture {index} has no resource")))?;
            let (array, address) = (objects.memories.arrays.get(&resource.mem.index()), objects.memories.addresses.get(resource.mem.index()));
            let address = address.ok_or_else(|| BackendError::Unsupported(format!("texture {index} reads memory {}, which is not in the trace", resource.mem)))?;
            objects.textures.push(TextureObject::create(index, texture, array, address + resource.offset)?);
        }
        for kernel in &trace.kernels {
            let module = objects.modules.get(kernel.program.index()).copied().flatten().ok_or_else(|| {
                BackendError::Unsupported(format!("kernel {:?} names program {}, which the trace does not have", kernel.name, kernel.program))
            })?;
            let name = CString::new(kernel.name.as_str())
                .map_err(|_| BackendError::Unsupported(format!("kernel name {:?} holds a NUL byte", kernel.name)))?;
            let mut function = std::ptr::null_mut();
            // SAFETY: a loaded module and a valid C string.
            check(unsafe { sys::cuModuleGetFunction(&mut function, module, name.as_ptr()) }, &format!("cuModuleGetFunction({})", kernel.name))?;
            objects.functions.push(LoadedFunction { function, params: kernel.params.clone(), name: kernel.name.clone() });
        }
        super::attributes::apply(&trace.kernel_attributes, &objects.functions)?;
        for _ in &trace.queues {
            let mut stream = std::ptr::null_mut();
            // Non-blocking: replay orders by events only, never through the legacy default stream.
            check(unsafe { sys::cuStreamCreate(&mut stream, sys::CUstream_flags::CU_STREAM_NON_BLOCKING as u32) }, "cuStreamCreate")?;
            objects.streams.push(stream);
        }
        Ok(objects)
    }

    /// Pins the host data `nodes` copy to the device, and lets go of what earlier segments pinned
    /// that no graph holds, unless `keep_earlier` (segments staged before have not run yet); grows
    /// the sink to what they copy to the host; creates the events their event records and waits
    /// name. Returns the bytes it pinned for them.
    pub fn stage(&mut self, ids: &[NodeId], nodes: &[Node], blobs: &BlobStore, keep_earlier: bool) -> BackendResult<usize> {
        let mut pinned = self.stage_landings(ids, nodes, keep_earlier)?;
        let mut needed = BTreeSet::new();
        let mut sink_len = self.sink.len as u64;
        let events = &mut self.events;
        for_each_command(nodes, &mut |command| {
            match command {
                Command::Copy(copy) => {
                    if let Place::Host { data: Some(blob) } = copy.src {
                        needed.insert(blob);
                    }
                    if let Place::Host { .. } = copy.dst {
                        sink_len = sink_len.max(crate::extent::span(&copy.extent, false));
                    }
                }
                Command::EventRecord { event } | Command::EventWait { event } => {
                    if let std::collections::hash_map::Entry::Vacant(entry) = events.entry(*event) {
                        let mut created = std::ptr::null_mut();
                        let flags = sys::CUevent_flags::CU_EVENT_DISABLE_TIMING as u32;
                        // SAFETY: valid out-pointer; destroyed in Drop.
                        check(unsafe { sys::cuEventCreate(&mut created, flags) }, "cuEventCreate")?;
                        entry.insert(created);
                    }
                }
                _ => {}
            }
            Ok(())
        })?;
        if !keep_earlier {
            for (_, unneeded) in self.sources.extract_if(|blob, _| !needed.contains(blob)) {
                self.pinned.give(unneeded);
            }
        }
        for blob in needed {
            if let std::collections::hash_map::Entry::Vacant(entry) = self.sources.entry(blob) {
                let mut bytes = blobs.get(blob).map_err(|e| BackendError::Unsupported(e.to_string()))?.into_owned();
                self.relocation.to_replay(&mut bytes);
                pinned += bytes.len();
                entry.insert(self.pinned.take_with(&bytes)?);
            }
        }
        if sink_len > self.sink.len as u64 {
            let grown = HostBuffer::zeroed(sink_len as usize)?;
            self.outgrown_sinks.push(std::mem::replace(&mut self.sink, grown));
        }
        Ok(pinned)
    }
}

impl Objects {
    /// A landing buffer for each copy among `nodes` whose received data the trace keeps, from
    /// the pool; the bytes they hold.
    fn stage_landings(&mut self, ids: &[NodeId], nodes: &[Node], keep_earlier: bool) -> BackendResult<usize> {
        // The earlier segments' go back to the pool once they ran (`stage` dropped what they received).
        if !keep_earlier {
            for (_, landing) in self.landings.drain() {
                self.pinned.give(landing);
            }
        }
        let mut pinned = 0;
        for (id, node) in ids.iter().zip(nodes) {
            let Command::Copy(copy @ trace_format::Copy { dst: Place::Host { data: Some(_) }, .. }) = &node.command else { continue };
            let span = crate::extent::span(&copy.extent, false) as usize;
            let landing = self.pinned.take(span)?;
            pinned += landing.len;
            self.landings.insert(*id, landing);
        }
        Ok(pinned)
    }

    /// The event standing for the trace's event number `event`.
    pub fn event(&self, event: u32) -> BackendResult<CUevent> {
        self.events.get(&event).copied().ok_or_else(|| BackendError::Unsupported(format!("event {event} was not created when its segment was staged")))
    }
}

/// The address and size of the variable `name` of a loaded program.
fn find_variable(modules: &[Option<CUmodule>], program: ProgramId, name: &str) -> BackendResult<(CUdeviceptr, u64)> {
    let module = modules
        .get(program.index())
        .copied()
        .flatten()
        .ok_or_else(|| BackendError::Unsupported(format!("variable {name:?} names program {program}, which the trace does not have")))?;
    let c_name = CString::new(name).map_err(|_| BackendError::Unsupported(format!("variable name {name:?} holds a NUL byte")))?;
    let (mut address, mut size) = (0, 0);
    // SAFETY: a loaded module, a valid C string and out-pointers of the right types.
    check(unsafe { sys::cuModuleGetGlobal_v2(&mut address, &mut size, module, c_name.as_ptr()) }, &format!("cuModuleGetGlobal({name})"))?;
    Ok((address, size as u64))
}

/// Loads the first image the driver takes, trying the next when one fails (a cubin built for
/// another GPU, say), with the names of the variables that image defines. PTX is JIT-compiled,
/// so it needs its NUL.
fn load_module(program: &Program, blobs: &BlobStore) -> BackendResult<(CUmodule, Vec<String>)> {
    let mut failure = BackendError::Unsupported("a program has no PTX, cubin or fatbin image".into());
    for image in program.images.iter().filter(|image| matches!(image.kind, ImageKind::Fatbin | ImageKind::Cubin | ImageKind::Ptx)) {
        let mut bytes = blobs.get(image.blob).map_err(|e| BackendError::Unsupported(e.to_string()))?.into_owned();
        if image.kind == ImageKind::Ptx && bytes.last() != Some(&0) {
            bytes.push(0);
        }
        let mut module = std::ptr::null_mut();
        // SAFETY: the image stays alive for the call; the driver copies what it keeps.
        match check(unsafe { sys::cuModuleLoadData(&mut module, bytes.as_ptr().cast()) }, "cuModuleLoadData") {
            Ok(()) => return Ok((module, super::image_variables::names(image.kind, &bytes))),
            Err(error) => failure = error,
        }
    }
    Err(failure)
}

/// Calls `visit` for every command among `nodes`, inside sub-graphs and conditional bodies too.
fn for_each_command<'a>(nodes: &'a [Node], visit: &mut dyn FnMut(&'a Command) -> BackendResult<()>) -> BackendResult<()> {
    nodes.iter().try_for_each(|node| visit_command(&node.command, visit))
}

/// Calls `visit` for `command` and every command inside it (sub-graphs, conditional bodies).
pub fn visit_command<'a>(command: &'a Command, visit: &mut dyn FnMut(&'a Command) -> BackendResult<()>) -> BackendResult<()> {
    visit(command)?;
    match command {
        Command::Subgraph(graph) => for_each_command(&graph.nodes, visit),
        Command::Conditional(conditional) => conditional.bodies.iter().try_for_each(|body| for_each_command(&body.nodes, visit)),
        _ => Ok(()),
    }
}

impl Drop for Objects {
    fn drop(&mut self) {
        // Before the arrays and memory they read.
        self.textures.clear();
        // SAFETY: handles created by `load`; errors cannot be reported from Drop.
        unsafe {
            for &stream in &self.streams {
                sys::cuStreamDestroy_v2(stream);
            }
            for &event in self.events.values() {
                sys::cuEventDestroy_v2(event);
            }
            for &module in self.modules.iter().flatten() {
                sys::cuModuleUnload(module);
            }
        }
    }
}
