//! What `load` creates for a whole trace: modules and one kernel per recorded kernel, memory, and
//! an immediate command list per recorded queue for eager replay; `stage` adds host memory holding
//! the recorded host data of each segment's copies (and a sink for copies to the host).

use super::driver::check;
use crate::backend::{BackendError, BackendResult};
use std::collections::HashMap;
use std::ffi::{c_void, CString};
use std::ptr;
use trace_format::{BlobId, BlobStore, Command, ImageKind, MemKind, MemId, Node, Place, Program, Trace};
use ze_sys::functions::Functions;
use ze_sys::*;

/// The handles a load works with.
#[derive(Clone, Copy)]
pub struct Scope {
    pub api: &'static Functions,
    pub context: ze_context_handle_t,
    pub device: ze_device_handle_t,
}

pub struct Objects {
    scope: Scope,
    modules: Vec<ze_module_handle_t>,
    /// By `KernelId` index.
    pub kernels: Vec<ze_kernel_handle_t>,
    /// Address and size of each memory object, by `MemId` index.
    pub memories: Vec<(u64, u64)>,
    /// Host memory with each recorded host source of a copy, and its size, by blob.
    pub sources: HashMap<BlobId, (*mut c_void, u64)>,
    /// Where copies to the host land; what they read is not kept (comparisons read memory).
    pub sink: *mut c_void,
    pub sink_size: u64,
    /// One immediate list per recorded queue, then one for commands of no queue.
    pub lists: Vec<ze_command_list_handle_t>,
    allocations: Vec<*mut c_void>,
}

impl Objects {
    pub fn load(scope: Scope, trace: &Trace, blobs: &BlobStore) -> BackendResult<Objects> {
        let mut objects = Objects {
            scope,
            modules: Vec::new(),
            kernels: Vec::new(),
            memories: Vec::new(),
            sources: HashMap::new(),
            sink: ptr::null_mut(),
            sink_size: 0,
            lists: Vec::new(),
            allocations: Vec::new(),
        };
        crate::backend::whole_programs_only(trace)?;
        for (index, program) in trace.programs.iter().enumerate() {
            let module = build_module(scope, program, blobs).map_err(|error| error.about(&format!("program {index}")))?;
            objects.modules.push(module);
        }
        for kernel in &trace.kernels {
            let module = *objects.modules.get(kernel.program.index()).ok_or_else(|| {
                BackendError::Unsupported(format!("kernel {:?} names program {}, which the trace does not have", kernel.name, kernel.program))
            })?;
            let name = CString::new(kernel.name.as_str()).map_err(|_| BackendError::Unsupported(format!("kernel name {:?} holds a NUL byte", kernel.name)))?;
            let desc = ze_kernel_desc_t { pKernelName: name.as_ptr(), ..ze_kernel_desc_t::new() };
            let mut handle = ptr::null_mut();
            // SAFETY: a built module, a description alive for the call.
            check(unsafe { scope.api.zeKernelCreate(module, &desc, &mut handle) }, &format!("zeKernelCreate({})", kernel.name))?;
            objects.kernels.push(handle);
            // Structures of pointers reach memory no argument names.
            let everywhere = ZE_KERNEL_INDIRECT_ACCESS_FLAG_HOST | ZE_KERNEL_INDIRECT_ACCESS_FLAG_DEVICE | ZE_KERNEL_INDIRECT_ACCESS_FLAG_SHARED;
            check(unsafe { scope.api.zeKernelSetIndirectAccess(handle, everywhere) }, "zeKernelSetIndirectAccess")?;
        }
        for (index, memory) in trace.memories.iter().enumerate() {
            let address = objects.place(index, memory)?;
            objects.memories.push((address, memory.size));
        }
        for _ in 0..=trace.queues.len() {
            let desc = ze_command_queue_desc_t { mode: ZE_COMMAND_QUEUE_MODE_ASYNCHRONOUS, ..ze_command_queue_desc_t::new() };
            let mut list = ptr::null_mut();
            check(unsafe { scope.api.zeCommandListCreateImmediate(scope.context, scope.device, &desc, &mut list) }, "zeCommandListCreateImmediate")?;
            objects.lists.push(list);
        }
        Ok(objects)
    }

    /// The immediate list of a recorded queue.
    pub fn list_of(&self, queue: Option<trace_format::QueueId>) -> ze_command_list_handle_t {
        let last = self.lists.len() - 1;
        self.lists[queue.map_or(last, |q| q.index().min(last))]
    }

    /// Address and size of memory object `mem`.
    pub fn memory(&self, mem: MemId) -> BackendResult<(u64, u64)> {
        self.memories.get(mem.index()).copied().ok_or_else(|| BackendError::Unsupported(format!("memory {mem} is not in the trace")))
    }

    fn allocate(&mut self, kind: &MemKind, size: u64) -> BackendResult<*mut c_void> {
        let Scope { api, context, device } = self.scope;
        let size = size.max(1) as usize;
        let mut pointer = ptr::null_mut();
        let (device_desc, host_desc) = (ze_device_mem_alloc_desc_t::new(), ze_host_mem_alloc_desc_t::new());
        // SAFETY: allocation calls with descriptions alive for the call; each result is freed on drop.
        let (result, call) = unsafe {
            match kind {
                MemKind::Host => (api.zeMemAllocHost(context, &host_desc, size, 0, &mut pointer), "zeMemAllocHost"),
                MemKind::Shared | MemKind::Managed => (api.zeMemAllocShared(context, &device_desc, &host_desc, size, 0, device, &mut pointer), "zeMemAllocShared"),
                _ => (api.zeMemAllocDevice(context, &device_desc, size, 0, device, &mut pointer), "zeMemAllocDevice"),
            }
        };
        check(result, call)?;
        self.allocations.push(pointer);
        Ok(pointer)
    }

    /// Where memory object `index` lives in this replay.
    fn place(&mut self, index: usize, memory: &trace_format::Memory) -> BackendResult<u64> {
        match &memory.kind {
            MemKind::SubBuffer { parent, offset } => {
                let (base, size) = self.memories.get(parent.index()).copied().ok_or_else(|| {
                    BackendError::Unsupported(format!("memory {index} is inside memory {parent}, which comes after it"))
                })?;
                if offset.checked_add(memory.size).is_none_or(|end| end > size) {
                    return Err(BackendError::Unsupported(format!("memory {index} ({} bytes at {offset}) overruns memory {parent} ({size} bytes)", memory.size)));
                }
                Ok(base + offset)
            }
            MemKind::Global { program, name } => self.global(*program, name, memory.size),
            MemKind::Image(_) => Err(BackendError::Unsupported(format!("memory {index} is an image, which the Level Zero backend does not make"))),
            kind => self.allocate(kind, memory.size).map(|pointer| pointer as u64),
        }
    }

    /// The variable `name` of a loaded program, which must have `size` bytes.
    fn global(&self, program: trace_format::ProgramId, name: &str, size: u64) -> BackendResult<u64> {
        let module = *self.modules.get(program.index()).ok_or_else(|| BackendError::Unsupported(format!("variable {name:?} names program {program}, which the trace does not have")))?;
        let c_name = CString::new(name).map_err(|_| BackendError::Unsupported(format!("variable name {name:?} holds a NUL byte")))?;
        let (mut found, mut pointer) = (0usize, ptr::null_mut());
        // SAFETY: a loaded module, a C string and out-pointers.
        check(unsafe { self.scope.api.zeModuleGetGlobalPointer(module, c_name.as_ptr(), &mut found, &mut pointer) }, &format!("zeModuleGetGlobalPointer({name})"))?;
        if found as u64 != size {
            return Err(BackendError::Unsupported(format!("the variable {name} of program {program} has {found} bytes here, {size} when recorded")));
        }
        Ok(pointer as u64)
    }

    /// Host memory with each recorded host source `nodes` copy from, and a sink as large as the
    /// largest copy to the host so far. Lists built before may still name what earlier segments
    /// placed, so it stays until the trace is unloaded.
    pub fn stage(&mut self, nodes: &[Node], blobs: &BlobStore) -> BackendResult<()> {
        let mut sink = self.sink_size;
        for node in nodes {
            let Command::Copy(copy) = &node.command else { continue };
            if let Place::Host { data: Some(blob) } = copy.src {
                if !self.sources.contains_key(&blob) {
                    let bytes = blobs.get(blob).map_err(|error| BackendError::Unsupported(error.to_string()))?;
                    let host = self.allocate(&MemKind::Host, bytes.len() as u64)?;
                    // SAFETY: the allocation holds at least `bytes.len()` bytes.
                    unsafe { ptr::copy_nonoverlapping(bytes.as_ptr(), host.cast::<u8>(), bytes.len()) };
                    self.sources.insert(blob, (host, bytes.len() as u64));
                }
            }
            if let Place::Host { .. } = copy.dst {
                sink = sink.max(crate::extent::span(&copy.extent, false));
            }
        }
        if sink > self.sink_size || self.sink.is_null() {
            self.sink = self.allocate(&MemKind::Host, sink)?;
            self.sink_size = sink;
        }
        Ok(())
    }
}

impl Drop for Objects {
    fn drop(&mut self) {
        let api = self.scope.api;
        // SAFETY: handles `load` created; failures cannot be reported from drop.
        unsafe {
            for &list in &self.lists {
                api.zeCommandListDestroy(list);
            }
            for &kernel in &self.kernels {
                api.zeKernelDestroy(kernel);
            }
            for &module in &self.modules {
                api.zeModuleDestroy(module);
            }
            for &pointer in &self.allocations {
                api.zeMemFree(self.scope.context, pointer);
            }
        }
    }
}

/// Builds the first image the driver takes: SPIR-V, or a native binary for this driver.
fn build_module(scope: Scope, program: &Program, blobs: &BlobStore) -> BackendResult<ze_module_handle_t> {
    let mut failures = Vec::new();
    for image in &program.images {
        let format = match image.kind {
            ImageKind::SpirV => ZE_MODULE_FORMAT_IL_SPIRV,
            ImageKind::DeviceBinary => ZE_MODULE_FORMAT_NATIVE,
            ImageKind::Ptx | ImageKind::Cubin | ImageKind::Fatbin | ImageKind::OpenClSource => continue,
        };
        let bytes = blobs.get(image.blob).map_err(|error| BackendError::Unsupported(format!("program image: {error}")))?;
        match build_image(scope, format, &bytes, &program.build_options) {
            Ok(module) => return Ok(module),
            Err(error) => failures.push(format!("{:?} image: {error}", image.kind)),
        }
    }
    Err(BackendError::Unsupported(if failures.is_empty() { "no SPIR-V or native image, which Level Zero needs".into() } else { failures.join("; ") }))
}

fn build_image(scope: Scope, format: ze_module_format_t, bytes: &[u8], options: &str) -> BackendResult<ze_module_handle_t> {
    let options = CString::new(options).map_err(|_| BackendError::Unsupported("build options hold a NUL byte".into()))?;
    let desc = ze_module_desc_t { format, inputSize: bytes.len(), pInputModule: bytes.as_ptr(), pBuildFlags: options.as_ptr(), ..ze_module_desc_t::new() };
    let (mut module, mut log) = (ptr::null_mut(), ptr::null_mut());
    // SAFETY: a description whose bytes and options outlive the call.
    let result = unsafe { scope.api.zeModuleCreate(scope.context, scope.device, &desc, &mut module, &mut log) };
    let text = build_log(scope.api, log);
    check(result, "zeModuleCreate").map_err(|error| match error {
        BackendError::Api { call, detail } if !text.is_empty() => BackendError::Api { call, detail: format!("{detail}: {}", text.trim()) },
        other => other,
    })?;
    Ok(module)
}

/// The text of a build log, which is destroyed.
fn build_log(api: &Functions, log: ze_module_build_log_handle_t) -> String {
    if log.is_null() {
        return String::new();
    }
    let mut size = 0;
    // SAFETY: size query, then a read into a buffer of that size; then the log goes.
    unsafe {
        api.zeModuleBuildLogGetString(log, &mut size, ptr::null_mut());
        let mut text = vec![0u8; size.max(1)];
        api.zeModuleBuildLogGetString(log, &mut size, text.as_mut_ptr().cast());
        api.zeModuleBuildLogDestroy(log);
        std::ffi::CStr::from_bytes_until_nul(&text).map(|t| t.to_string_lossy().into_owned()).unwrap_or_default()
    }
}
