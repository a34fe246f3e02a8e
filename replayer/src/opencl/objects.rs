//! The OpenCL objects a trace needs: programs, memory, queues and one kernel object per kernel,
//! whose arguments are set before each launch (eager) or on a clone per recorded command.

use super::api::{check, Api, Raw};
use super::checks::{self, KernelFacts, Limits};
use super::images;
use super::pointers::{PointerCalls, UnifiedApi};
use super::programs::{build_program, link_program};
use super::resolve::{nd_range, runs_nothing};
use crate::backend::{BackendError, BackendResult};
use crate::lifetimes::SharedStorage;
use crate::relocation::Relocation;
use cl_images::ClImage;
use opencl_sys::cl_function_types::clSetKernelArgSVMPointer_fn;
use opencl_sys::*;
use std::collections::HashMap;
use std::ffi::{c_void, CString};
use std::ptr;
use trace_format::{Arg, BlobStore, KernelId, KernelLaunch, MemKind, NodeId, ProgramLink, Trace};

/// A recorded memory object as replay created it.
#[derive(Clone, Copy)]
pub enum MemObject {
    Buffer { mem: cl_mem, size: u64 },
    /// SVM or unified shared memory, with the functions of its kind.
    Svm { pointer: *mut c_void, size: u64, calls: PointerCalls },
    /// An image; `size` is its packed size.
    Image { mem: cl_mem, size: u64, image: ClImage },
}

impl MemObject {
    pub fn size(&self) -> u64 {
        match *self {
            MemObject::Buffer { size, .. } | MemObject::Svm { size, .. } | MemObject::Image { size, .. } => size,
        }
    }
}

/// How one kernel argument reaches the API.
pub enum Binding {
    /// `clSetKernelArg` with these bytes (values, and `cl_mem` handles).
    Bytes(Vec<u8>),
    /// Local memory of this many bytes.
    Local(usize),
    /// `clSetKernelArgSVMPointer`, or its counterpart for unified shared memory.
    Svm { pointer: *const c_void, set_arg: Raw<clSetKernelArgSVMPointer_fn> },
}

/// Everything `load` created, released in reverse order on drop.
pub struct Objects {
    pub api: &'static Api,
    context: cl_context,
    device: cl_device_id,
    /// The device's unified shared memory, where it has the extension.
    unified: Option<UnifiedApi>,
    pub programs: Vec<cl_program>,
    pub memories: Vec<MemObject>,
    /// One per recorded texture object (OpenCL has only samplers).
    pub samplers: Vec<cl_sampler>,
    /// One per recorded queue.
    pub queues: Vec<cl_command_queue>,
    /// In-order queue for command buffers, memory transfers and commands without a queue.
    pub main_queue: cl_command_queue,
    /// One kernel object per recorded kernel, not one per launch: a trace may hold millions.
    pub kernels: Vec<LoadedKernel>,
    /// Images that share storage, by memory index: created when the replay uses them
    /// (`hold_image`), released when another takes their storage (`drop_image`).
    deferred_images: HashMap<usize, cl_mem_flags>,
    /// Per memory object, how many times it was created (an image that shares storage is
    /// created again at each use after another's): what a command buffer built with it names.
    pub generations: Vec<u32>,
    /// Addresses of memory named by pointer inside data, moved between the recording's
    /// allocations and the replay's.
    pub relocation: Relocation,
}

/// A recorded kernel as replay created it.
pub struct LoadedKernel {
    pub kernel: cl_kernel,
    pub name: String,
    /// What the driver says about it: a launch must set every parameter (an argument left
    /// unset crashes PoCL when the launch is recorded).
    pub facts: KernelFacts,
}

/// Host-pointer flags name memory of the recording process, which does not exist now.
const HOST_POINTER_FLAGS: cl_mem_flags = CL_MEM_USE_HOST_PTR | CL_MEM_COPY_HOST_PTR;

impl Objects {
    /// Creates everything `trace` names, checking each against `limits` and against what the
    /// driver says about the kernels it built before the driver sees it. Buffers `shared` names
    /// share their slot's storage; images `deferred` names are only described (`hold_image`).
    #[allow(clippy::too_many_arguments)]
    pub fn create(
        api: &'static Api,
        context: cl_context,
        device: cl_device_id,
        limits: &Limits,
        trace: &Trace,
        blobs: &BlobStore,
        profile: bool,
        shared: Option<&SharedStorage>,
        deferred: &dyn Fn(usize) -> bool,
        unified: Option<UnifiedApi>,
    ) -> BackendResult<Objects> {
        let main_queue = create_queue(api, context, device, true, profile)?;
        let mut objects = Objects {
            api,
            context,
            device,
            unified,
            programs: Vec::new(),
            memories: Vec::new(),
            samplers: Vec::new(),
            queues: Vec::new(),
            main_queue,
            kernels: Vec::new(),
            deferred_images: HashMap::new(),
            generations: vec![1; trace.memories.len()],
            relocation: Relocation::new(&[], &[], &[]),
        };
        for queue in &trace.queues {
            objects.queues.push(create_queue(api, context, device, queue.in_order, profile)?);
        }
        let mut slots: Vec<Option<cl_mem>> = vec![None; shared.map_or(0, |shared| shared.slot_sizes.len())];
        for (index, memory) in trace.memories.iter().enumerate() {
            let parent = match memory.kind {
                MemKind::SubBuffer { parent, .. } => trace.memories.get(parent.index()),
                _ => None,
            };
            limits.memory(memory, parent).map_err(|e| e.about(&format!("memory {index}")))?;
            let object = match (shared.and_then(|shared| Some((shared, shared.slot_of.get(index).copied().flatten()?))), &memory.kind) {
                (Some((shared, slot)), _) => objects.slot_buffer(&mut slots, slot, shared.slot_sizes[slot], memory.size)?,
                (None, MemKind::Image(layout)) if deferred(index) => {
                    let (image, flags) = images::describe_image(api, context, index, layout, memory.flags & !HOST_POINTER_FLAGS)?;
                    objects.deferred_images.insert(index, flags);
                    MemObject::Image { mem: ptr::null_mut(), size: layout.bytes(), image }
                }
                (None, _) => objects.create_memory(index, memory)?,
            };
            objects.memories.push(object);
        }
        // Only pointers have addresses data can hold: a buffer's recorded "address" is its handle.
        let placed: Vec<u64> = objects.memories.iter().map(|object| match object {
            MemObject::Svm { pointer, .. } => *pointer as u64,
            _ => 0,
        }).collect();
        objects.relocation = Relocation::new(&trace.memories, &placed, &[]);
        for (index, texture) in trace.textures.iter().enumerate() {
            objects.samplers.push(images::create_sampler(api, context, index, texture)?);
        }
        let links: HashMap<usize, &ProgramLink> = trace.program_links.iter().map(|link| (link.program.index(), link)).collect();
        for (index, program) in trace.programs.iter().enumerate() {
            let built = match links.get(&index) {
                Some(link) => link_program(api, context, device, program, link, blobs),
                None => build_program(api, context, device, program, blobs),
            };
            objects.programs.push(built.map_err(|e| e.about(&format!("program {index}")))?);
        }
        let has_unified = trace.memories.iter().any(|memory| matches!(memory.kind, MemKind::Unified(_)));
        for (index, recorded) in trace.kernels.iter().enumerate() {
            let context = |e: BackendError| e.about(&format!("kernel {index} ({})", recorded.name));
            let (Some(&program), Some(built_from)) = (objects.programs.get(recorded.program.index()), trace.programs.get(recorded.program.index())) else {
                return Err(context(BackendError::Invalid(format!("it names program {} that the trace does not define", recorded.program))));
            };
            let kernel = create_kernel(api, program, &recorded.name).map_err(context)?;
            if let Some(unified) = unified.filter(|_| has_unified) {
                unified.allow_indirect_access(kernel).map_err(context)?;
            }
            // A linked program's language version is its compilations'.
            let compiled_with = links.get(&recorded.program.index()).and_then(|link| link.units.first()).map_or(&built_from.build_options, |unit| &unit.options);
            let facts = KernelFacts::of(api, kernel, device, compiled_with);
            objects.kernels.push(LoadedKernel { kernel, name: recorded.name.clone(), facts: facts.map_err(context)? });
        }
        Ok(objects)
    }

    /// Checks a launch against its kernel and the device before the driver sees it: its
    /// arguments suit the parameters, its local memory and ND-range the device's limits. The
    /// arguments are set on the kernel's object (which launches set again anyway), since the
    /// driver counts local memory only for arguments that are set.
    pub fn check_launch(&self, node: NodeId, launch: &KernelLaunch, device: cl_device_id, limits: &Limits) -> BackendResult<()> {
        let loaded = self.kernel(launch.kernel).map_err(|e| e.about(&format!("node {node}")))?;
        let context = |e: BackendError| e.about(&format!("node {node} ({})", loaded.name));
        let params = &loaded.facts.params;
        if launch.args.len() != params.len() {
            return Err(context(BackendError::Invalid(format!("it passes {} arguments; the kernel takes {}", launch.args.len(), params.len()))));
        }
        for (index, (arg, class)) in launch.args.iter().zip(params).enumerate() {
            let is_image = |mem: trace_format::MemId| matches!(self.memories.get(mem.index()), Some(MemObject::Image { .. }));
            checks::argument(index, class, arg, &is_image).map_err(context)?;
            self.set_arg(loaded.kernel, index as u32, arg).map_err(context)?;
        }
        limits.local_memory(self.api, loaded.kernel, device).map_err(context)?;
        if runs_nothing(&launch.launch) {
            return Ok(());
        }
        limits.launch(&loaded.facts, &nd_range(&launch.launch).map_err(context)?).map_err(context)
    }

    /// A buffer of `size` bytes on the storage of `slot` (created at its first user, retained for
    /// each further one, so that every object's release balances).
    fn slot_buffer(&self, slots: &mut [Option<cl_mem>], slot: usize, slot_size: u64, size: u64) -> BackendResult<MemObject> {
        let mem = match slots[slot] {
            Some(mem) => {
                check(unsafe { (self.api.clRetainMemObject)(mem) }, "clRetainMemObject")?;
                mem
            }
            None => {
                let mut code = CL_SUCCESS;
                let mem = unsafe { (self.api.clCreateBuffer)(self.context, CL_MEM_READ_WRITE, slot_size as usize, ptr::null_mut(), &mut code) };
                check(code, "clCreateBuffer").map_err(|e| e.about(&format!("shared storage {slot} ({slot_size} bytes)")))?;
                slots[slot] = Some(mem);
                mem
            }
        };
        Ok(MemObject::Buffer { mem, size })
    }

    fn create_memory(&self, index: usize, memory: &trace_format::Memory) -> BackendResult<MemObject> {
        let api = self.api;
        let size = memory.size;
        if size == 0 {
            return Err(BackendError::Unsupported(format!("memory {index} has size 0")));
        }
        let flags = memory.flags & !HOST_POINTER_FLAGS;
        let mut code = CL_SUCCESS;
        match memory.kind {
            MemKind::SubBuffer { parent, offset } => match self.memories.get(parent.index()).copied() {
                Some(MemObject::Svm { pointer, size: parent_size, .. }) => {
                    if offset.checked_add(size).is_none_or(|end| end > parent_size) {
                        return Err(BackendError::Unsupported(format!("buffer {index} ({size} bytes at {offset}) overruns memory {parent} ({parent_size} bytes)")));
                    }
                    // The program's buffer over SVM or unified memory: one memory, as it was.
                    let host = unsafe { pointer.byte_add(offset as usize) };
                    let mem = unsafe { (api.clCreateBuffer)(self.context, flags | CL_MEM_USE_HOST_PTR, size as usize, host, &mut code) };
                    check(code, "clCreateBuffer(CL_MEM_USE_HOST_PTR)").map_err(|e| e.about(&format!("memory {index}, over memory {parent}")))?;
                    Ok(MemObject::Buffer { mem, size })
                }
                Some(MemObject::Buffer { mem: parent_mem, size: parent_size }) => {
                    if offset.checked_add(size).is_none_or(|end| end > parent_size) {
                        return Err(BackendError::Unsupported(format!("sub-buffer {index} ({size} bytes at {offset}) overruns its parent ({parent_size} bytes)")));
                    }
                    let region = cl_buffer_region { origin: offset as usize, size: size as usize };
                    // Access flags only: a sub-buffer inherits the rest from its parent.
                    let access = flags & (CL_MEM_READ_WRITE | CL_MEM_READ_ONLY | CL_MEM_WRITE_ONLY);
                    let mem = unsafe {
                        (api.clCreateSubBuffer)(parent_mem, access, CL_BUFFER_CREATE_TYPE_REGION, &region as *const _ as *const c_void, &mut code)
                    };
                    check(code, "clCreateSubBuffer").map_err(|e| e.about(&format!("memory {index}")))?;
                    Ok(MemObject::Buffer { mem, size })
                }
                _ => Err(BackendError::Unsupported(format!("sub-buffer {index} has parent {parent}, which is not an earlier buffer"))),
            },
            MemKind::Image(ref layout) => images::create_image(api, self.context, index, layout, flags),
            MemKind::Shared => {
                let svm_flags = flags & (CL_MEM_READ_WRITE | CL_MEM_READ_ONLY | CL_MEM_WRITE_ONLY | CL_MEM_SVM_FINE_GRAIN_BUFFER | CL_MEM_SVM_ATOMICS);
                let pointer = unsafe { (api.clSVMAlloc)(self.context, svm_flags, size as usize, 0) };
                if pointer.is_null() {
                    return Err(BackendError::Api { call: "clSVMAlloc".into(), detail: format!("memory {index}: {size} bytes could not be allocated") });
                }
                Ok(MemObject::Svm { pointer, size, calls: PointerCalls::svm(api) })
            }
            MemKind::Unified(kind) => {
                let Some(unified) = &self.unified else {
                    return Err(BackendError::Unsupported(format!(
                        "memory {index} is unified shared memory, and this device lacks cl_intel_unified_shared_memory"
                    )));
                };
                let pointer = unified.allocate(self.context, self.device, kind, size, index)?;
                Ok(MemObject::Svm { pointer, size, calls: unified.calls })
            }
            _ => {
                let mem = unsafe { (api.clCreateBuffer)(self.context, flags, size as usize, ptr::null_mut(), &mut code) };
                check(code, "clCreateBuffer").map_err(|e| e.about(&format!("memory {index} ({size} bytes)")))?;
                Ok(MemObject::Buffer { mem, size })
            }
        }
    }

    /// Binds one recorded argument to `kernel`.
    pub fn set_arg(&self, kernel: cl_kernel, index: u32, arg: &Arg) -> BackendResult<()> {
        let api = self.api;
        let code = match self.binding(index, arg)? {
            Binding::Bytes(bytes) => unsafe { (api.clSetKernelArg)(kernel, index, bytes.len(), bytes.as_ptr() as *const c_void) },
            Binding::Local(size) => unsafe { (api.clSetKernelArg)(kernel, index, size, ptr::null()) },
            Binding::Svm { pointer, set_arg } => unsafe { set_arg(kernel, index, pointer) },
        };
        check(code, &format!("clSetKernelArg({index})"))
    }

    /// What argument `index` passes to the API for `arg`.
    pub fn binding(&self, index: u32, arg: &Arg) -> BackendResult<Binding> {
        Ok(match arg {
            Arg::Value(bytes) => Binding::Bytes(bytes.clone()),
            Arg::ValueWithPointers { bytes, pointers } => {
                let mut bytes = bytes.clone();
                for embedded in pointers {
                    let MemObject::Svm { pointer, size, .. } = self.memory(embedded.mem)? else {
                        return Err(BackendError::Unsupported(format!("argument {index} holds an address of memory {}, which OpenCL names by handle", embedded.mem)));
                    };
                    let at = embedded.at as usize;
                    let word = bytes.get_mut(at..at + 8).filter(|_| embedded.offset < size).ok_or_else(|| {
                        BackendError::Invalid(format!("argument {index}: the address at byte {at} (memory {} + {}) does not fit", embedded.mem, embedded.offset))
                    })?;
                    word.copy_from_slice(&(pointer as u64 + embedded.offset).to_ne_bytes());
                }
                Binding::Bytes(bytes)
            }
            Arg::Condition(_) => return Err(BackendError::Unsupported(format!("argument {index} is a graph condition, which OpenCL has not"))),
            Arg::Texture(texture) => match self.samplers.get(texture.index()) {
                Some(&sampler) => Binding::Bytes((sampler as usize).to_ne_bytes().to_vec()),
                None => return Err(BackendError::Invalid(format!("argument {index} is texture {texture}, which the trace does not define"))),
            },
            Arg::Local(size) => Binding::Local(*size as usize),
            Arg::NullMemory => Binding::Bytes((ptr::null_mut::<c_void>() as usize).to_ne_bytes().to_vec()),
            Arg::Memory { mem, offset } => match self.memory(*mem)? {
                MemObject::Buffer { mem: handle, .. } | MemObject::Image { mem: handle, .. } if *offset == 0 => {
                    Binding::Bytes((handle as usize).to_ne_bytes().to_vec())
                }
                MemObject::Image { .. } => return Err(BackendError::Invalid(format!("argument {index} points {offset} bytes into image {mem}"))),
                MemObject::Buffer { .. } => {
                    return Err(BackendError::Unsupported(format!("argument {index} points {offset} bytes into buffer {mem}; OpenCL buffers bind whole")))
                }
                MemObject::Svm { pointer, size, calls } if *offset < size => {
                    Binding::Svm { pointer: unsafe { (pointer as *const u8).add(*offset as usize) } as *const c_void, set_arg: calls.set_arg }
                }
                MemObject::Svm { size, .. } => {
                    return Err(BackendError::Unsupported(format!("argument {index} points {offset} bytes into SVM allocation {mem} of {size} bytes")))
                }
            },
        })
    }

    /// Whether some images share storage (command buffers then track what they name).
    pub fn defers_images(&self) -> bool {
        !self.deferred_images.is_empty()
    }

    pub fn memory(&self, mem: trace_format::MemId) -> BackendResult<MemObject> {
        match self.memories.get(mem.index()).copied() {
            Some(MemObject::Image { mem: handle, .. }) if handle.is_null() => {
                Err(BackendError::Unsupported(format!("memory {mem}, an image that shares storage, is used where the replay does not hold it")))
            }
            Some(object) => Ok(object),
            None => Err(BackendError::Unsupported(format!("memory {mem} is not in the trace"))),
        }
    }

    /// Creates deferred image `mem` where the replay does not hold it now.
    pub fn hold_image(&mut self, mem: trace_format::MemId) -> BackendResult<()> {
        let Some(&flags) = self.deferred_images.get(&mem.index()) else { return Ok(()) };
        let Some(MemObject::Image { mem: handle, image, .. }) = self.memories.get_mut(mem.index()) else { return Ok(()) };
        if handle.is_null() {
            *handle = images::create_described(self.api, self.context, mem.index(), image, flags)?;
            self.generations[mem.index()] += 1;
        }
        Ok(())
    }

    /// Releases deferred image `mem`: another takes its storage, and its contents go (the
    /// caller lets the work that uses it end first).
    pub fn drop_image(&mut self, mem: trace_format::MemId) -> BackendResult<()> {
        if !self.deferred_images.contains_key(&mem.index()) {
            return Ok(());
        }
        let Some(MemObject::Image { mem: handle, .. }) = self.memories.get_mut(mem.index()) else { return Ok(()) };
        let released = std::mem::replace(handle, ptr::null_mut());
        match released.is_null() {
            true => Ok(()),
            false => check(unsafe { (self.api.clReleaseMemObject)(released) }, "clReleaseMemObject"),
        }
    }

    /// The queue a recorded command runs on.
    pub fn queue_of(&self, queue: Option<trace_format::QueueId>) -> cl_command_queue {
        queue.and_then(|q| self.queues.get(q.index()).copied()).unwrap_or(self.main_queue)
    }

    pub fn kernel(&self, kernel: KernelId) -> BackendResult<&LoadedKernel> {
        self.kernels.get(kernel.index()).ok_or_else(|| BackendError::Invalid(format!("kernel {kernel} is not in the trace")))
    }
}

impl Drop for Objects {
    fn drop(&mut self) {
        let api = self.api;
        // Release failures cannot be reported from drop; the process keeps running either way.
        unsafe {
            for &queue in self.queues.iter().chain([&self.main_queue]) {
                (api.clFinish)(queue);
            }
            // Newest first (see `release_buffer`).
            for loaded in self.kernels.drain(..).rev() {
                (api.clReleaseKernel)(loaded.kernel);
            }
            for &program in &self.programs {
                (api.clReleaseProgram)(program);
            }
            for &sampler in &self.samplers {
                (api.clReleaseSampler)(sampler);
            }
            // Sub-buffers were created after their parents: release them first.
            for memory in self.memories.iter().rev() {
                match *memory {
                    MemObject::Image { mem, .. } if mem.is_null() => CL_SUCCESS,
                    MemObject::Buffer { mem, .. } | MemObject::Image { mem, .. } => (api.clReleaseMemObject)(mem),
                    MemObject::Svm { pointer, calls, .. } => {
                        match &self.unified {
                            Some(unified) if calls.unified => unified.free(self.context, pointer),
                            _ => (api.clSVMFree)(self.context, pointer),
                        }
                        CL_SUCCESS
                    }
                };
            }
            for &queue in self.queues.iter().chain([&self.main_queue]) {
                (api.clReleaseCommandQueue)(queue);
            }
        }
    }
}

fn create_queue(api: &Api, context: cl_context, device: cl_device_id, in_order: bool, profile: bool) -> BackendResult<cl_command_queue> {
    let mut flags: cl_command_queue_properties = 0;
    if !in_order {
        flags |= CL_QUEUE_OUT_OF_ORDER_EXEC_MODE_ENABLE;
    }
    if profile {
        flags |= CL_QUEUE_PROFILING_ENABLE;
    }
    let properties = [CL_QUEUE_PROPERTIES as cl_queue_properties, flags, 0];
    let mut code = CL_SUCCESS;
    let queue = unsafe { (api.clCreateCommandQueueWithProperties)(context, device, properties.as_ptr(), &mut code) };
    if code == CL_INVALID_QUEUE_PROPERTIES && !in_order {
        // Event edges order every command, so an in-order queue replays out-of-order work correctly.
        return create_queue(api, context, device, true, profile);
    }
    check(code, "clCreateCommandQueueWithProperties")?;
    Ok(queue)
}

fn create_kernel(api: &Api, program: cl_program, name: &str) -> BackendResult<cl_kernel> {
    let c_name = CString::new(name).map_err(|_| BackendError::Unsupported(format!("kernel name {name:?} contains a NUL byte")))?;
    let mut code = CL_SUCCESS;
    let kernel = unsafe { (api.clCreateKernel)(program, c_name.as_ptr(), &mut code) };
    check(code, &format!("clCreateKernel({name})"))?;
    Ok(kernel)
}
