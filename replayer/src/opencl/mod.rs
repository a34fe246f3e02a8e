//! The OpenCL backend: replays a trace as `cl_khr_command_buffer` command buffers (graph
//! mode) or command by command with events for the edges (eager mode).
//!
//! Submissions are chained: each waits for the events that ended the previous one, so a
//! command buffer (on the backend's own in-order queue) runs after eager work on the recorded
//! queues and the other way round.
//!
//! Timings: eager commands are timed one by one from their events; a command buffer has one
//! event for the whole buffer, so its time is reported on the first node of its partition.

mod api;
mod checks;
mod device;
mod eager;
mod extension;
mod extension_images;
mod graph;
mod images;
mod objects;
mod pointers;
mod programs;
mod resolve;

use crate::backend::{check_range, Backend, BackendError, BackendOptions, BackendResult, BufferHandle, NodeTiming, PartitionNodes, UpdateKind};
use crate::devices::{self, Listed};
use crate::lifetimes::{Lifetimes, SharedStorage};
use crate::replay::memory_used;
use api::{check, Api};
use extension::CommandBufferApi;
use objects::{MemObject, Objects};
use pointers::UnifiedApi;
use opencl_sys::*;
use std::ffi::c_void;
use std::ptr;
use trace_format::{Arg, BlobStore, Command, Copy, Extent, MemId, MemKind, Node, NodeId, Patch, Place, Trace};

/// Opens the device `options` choose (`devices::choose`).
pub fn open(options: &BackendOptions) -> Result<Box<dyn Backend>, BackendError> {
    Ok(Box::new(OpenClBackend::open(options)?))
}

/// Every OpenCL device of this machine, in the order `--device` indexes them.
pub fn devices() -> BackendResult<Vec<Listed>> {
    Ok(device::all_devices(Api::get()?)?.into_iter().map(|found| found.listed).collect())
}

pub struct OpenClBackend {
    api: &'static Api,
    device: cl_device_id,
    limits: checks::Limits,
    context: cl_context,
    device_label: String,
    /// Why this is not the device the trace was recorded on, when it is not.
    device_note: Option<String>,
    profile: bool,
    /// Patches rebuild command buffers even where the device updates them natively.
    rebuild_updates: bool,
    command_buffers: Option<CommandBufferApi>,
    /// `cl_intel_unified_shared_memory`, where the device has it.
    unified: Option<UnifiedApi>,
    objects: Option<Objects>,
    built: Vec<Option<graph::Built>>,
    /// Events the next submission waits for: the ends of the previous one.
    tail: Vec<cl_event>,
    /// With profiling, the events of the submissions since the last `finish`, with their node and queue.
    profiled: Vec<(NodeId, usize, cl_event)>,
    /// Set by `finish`: the next submission starts a new run and drops the old timings.
    finished: bool,
    /// What reads delivered to the host since the run started, by node (see `take_received`).
    received: Vec<(NodeId, Vec<u8>)>,
    /// Buffers that share storage, when the trace's add up to more than the device holds.
    shared: Option<SharedStorage>,
    /// Images that share storage, likewise: created at each use after another's (see `hold`).
    shared_images: Option<SharedStorage>,
    /// `BackendOptions::memory_budget`.
    memory_budget: Option<u64>,
}

impl OpenClBackend {
    pub fn open(options: &BackendOptions) -> BackendResult<OpenClBackend> {
        let api = Api::get()?;
        let mut all = device::all_devices(api)?;
        let listed: Vec<Listed> = all.iter().map(|found| found.listed.clone()).collect();
        let chosen = devices::choose(trace_format::Api::OpenCl, &listed, options.device.as_deref(), options.recorded.as_ref())?;
        let found = all.swap_remove(chosen.index);
        let limits = checks::Limits::of(api, found.device)?;
        let mut code = CL_SUCCESS;
        let context = unsafe { (api.clCreateContext)(ptr::null(), 1, &found.device, None, ptr::null_mut(), &mut code) };
        check(code, "clCreateContext")?;
        Ok(OpenClBackend {
            api,
            device: found.device,
            limits,
            context,
            device_label: found.listed.label(),
            device_note: chosen.note,
            profile: options.profile,
            rebuild_updates: options.rebuild_updates,
            command_buffers: CommandBufferApi::find(api, found.platform, found.device),
            unified: UnifiedApi::find(api, found.platform, found.device),
            objects: None,
            built: Vec::new(),
            tail: Vec::new(),
            profiled: Vec::new(),
            finished: true,
            received: Vec::new(),
            shared: None,
            shared_images: None,
            memory_budget: options.memory_budget,
        })
    }

    /// The device's `cl_khr_command_buffer` revision, `None` without the extension.
    pub fn command_buffer_revision(&self) -> Option<(u32, u32, u32)> {
        self.command_buffers.as_ref().map(|c| c.revision)
    }

    /// The device's `cl_khr_command_buffer_mutable_dispatch` revision, `None` without it.
    pub fn mutable_dispatch_revision(&self) -> Option<(u32, u32, u32)> {
        self.command_buffers.as_ref().and_then(|c| c.mutable.as_ref()).map(|m| m.revision)
    }

    fn objects(&self) -> BackendResult<&Objects> {
        self.objects.as_ref().ok_or_else(not_loaded)
    }

    fn command_buffers(&self) -> BackendResult<&CommandBufferApi> {
        self.command_buffers
            .as_ref()
            .ok_or_else(|| BackendError::Unsupported(format!("{} does not support cl_khr_command_buffer: use eager mode", self.device_label)))
    }

    /// The replay uses `mem` now: where it shares storage, it takes its slot, and an image
    /// that shares storage is created (releasing the slot's previous one).
    fn hold(&mut self, mem: MemId) -> BackendResult<()> {
        if let Some(shared) = self.shared.as_mut() {
            shared.use_memory(mem);
        }
        let Some(images) = self.shared_images.as_mut() else { return Ok(()) };
        let displaced = images.held_instead(mem);
        images.use_memory(mem);
        if let Some(previous) = displaced {
            // Work submitted before may still use it, from a command buffer too.
            self.wait_for_queues()?;
            self.objects.as_mut().ok_or_else(not_loaded)?.drop_image(previous)?;
        }
        self.objects.as_mut().ok_or_else(not_loaded)?.hold_image(mem)
    }

    /// Waits until every queue has run what was submitted to it.
    fn wait_for_queues(&self) -> BackendResult<()> {
        let objects = self.objects()?;
        for &queue in objects.queues.iter().chain([&objects.main_queue]) {
            check(unsafe { (self.api.clFinish)(queue) }, "clFinish")?;
        }
        Ok(())
    }

    /// Starts a submission: after a `finish`, the previous run's profiling events go.
    fn begin_submission(&mut self) {
        if self.finished {
            self.release_profiled();
            self.received.clear();
            self.finished = false;
        }
    }

    fn release_profiled(&mut self) {
        for (_, _, event) in self.profiled.drain(..) {
            unsafe { (self.api.clReleaseEvent)(event) };
        }
    }

    /// Makes `events` what the next submission waits for, releasing the previous ones (the
    /// list keeps its capacity: launches do not allocate).
    fn replace_tail(&mut self, events: impl IntoIterator<Item = cl_event>) {
        for event in self.tail.drain(..) {
            unsafe { (self.api.clReleaseEvent)(event) };
        }
        self.tail.extend(events);
    }

    /// Keeps `event` for `timings` when profiling.
    fn keep_for_profile(&mut self, node: NodeId, queue: usize, event: cl_event) -> BackendResult<()> {
        if self.profile {
            check(unsafe { (self.api.clRetainEvent)(event) }, "clRetainEvent")?;
            self.profiled.push((node, queue, event));
        }
        Ok(())
    }

    /// A blocking transfer between host memory and `mem` on the backend's own queue, after
    /// everything submitted before. A blocking write returns once the host data is copied, not
    /// once it reached the memory: its event joins the tail, so later work waits for it.
    /// Copies `bytes` bytes between `host` and memory `mem` from `offset` on (images: whole).
    fn transfer(&mut self, mem: MemId, offset: u64, host: *mut c_void, bytes: usize, write: bool) -> BackendResult<()> {
        let api = self.api;
        let objects = self.objects()?;
        let object = objects.memory(mem)?;
        check_range(mem, object.size(), offset, bytes)?;
        let whole = offset == 0 && bytes as u64 == object.size();
        let offset = offset as usize;
        let queue = objects.main_queue;
        let (count, waits) = event_list(&self.tail);
        let mut event: cl_event = ptr::null_mut();
        let (code, call) = match object {
            MemObject::Buffer { mem, .. } if write => {
                (unsafe { (api.clEnqueueWriteBuffer)(queue, mem, CL_TRUE, offset, bytes, host, count, waits, &mut event) }, "clEnqueueWriteBuffer")
            }
            MemObject::Buffer { mem, .. } => {
                (unsafe { (api.clEnqueueReadBuffer)(queue, mem, CL_TRUE, offset, bytes, host, count, waits, &mut event) }, "clEnqueueReadBuffer")
            }
            MemObject::Svm { pointer, calls, .. } => {
                // SAFETY: inside the allocation (checked above).
                let pointer = unsafe { pointer.byte_add(offset) };
                let (dst, src) = if write { (pointer, host as *const c_void) } else { (host, pointer as *const c_void) };
                (unsafe { (calls.copy)(queue, CL_TRUE, dst, src, bytes, count, waits, &mut event) }, calls.names[0])
            }
            MemObject::Image { .. } if !whole => {
                return Err(BackendError::Unsupported(format!("memory {mem} is an image: only its whole contents are copied")));
            }
            MemObject::Image { mem, image, .. } => {
                (images::whole_transfer(api, queue, mem, &image, host, write, (count, waits), &mut event), "clEnqueue{Write,Read}Image")
            }
        };
        check(code, call)?;
        self.tail.push(event);
        Ok(())
    }
}

/// An event wait list as the API takes it (NULL when empty).
fn event_list(events: &[cl_event]) -> (cl_uint, *const cl_event) {
    (events.len() as cl_uint, if events.is_empty() { ptr::null() } else { events.as_ptr() })
}

impl Backend for OpenClBackend {
    fn device_name(&self) -> String {
        self.device_label.clone()
    }

    fn device_note(&self) -> Option<String> {
        self.device_note.clone()
    }

    fn can_record(&self, command: &Command) -> bool {
        let Some(command_buffers) = &self.command_buffers else { return false };
        let memory = |mem: &MemId| self.objects.as_ref().and_then(|o| o.memories.get(mem.index()).copied());
        let is_svm = |mem: &MemId| matches!(memory(mem), Some(MemObject::Svm { .. }));
        let is_image = |mem: &MemId| matches!(memory(mem), Some(MemObject::Image { .. }));
        match command {
            // PoCL 3.1 (command buffer 0.9.0) aborts recording a kernel that takes a sampler.
            Command::Kernel(launch) if launch.args.iter().any(|arg| matches!(arg, Arg::Texture(_))) => command_buffers.records_samplers(),
            Command::Kernel(_) | Command::Barrier => true,
            Command::Copy(Copy { src: Place::Memory { mem: src, .. }, dst: Place::Memory { mem: dst, .. }, .. }) if is_image(src) || is_image(dst) => {
                command_buffers.images.is_some()
            }
            Command::Copy(Copy { src: Place::Memory { mem: src, .. }, dst: Place::Memory { mem: dst, .. }, extent }) => {
                match (is_svm(src), is_svm(dst), extent) {
                    (false, false, _) => true,
                    (true, true, Extent::Linear { .. }) => command_buffers.records_svm(),
                    _ => false,
                }
            }
            Command::Fill(fill) if is_image(&fill.mem) => command_buffers.images.is_some(),
            Command::Fill(fill) => fill.rows.is_none() && (!is_svm(&fill.mem) || command_buffers.records_svm()),
            _ => false,
        }
    }

    fn memory_budget(&self) -> Option<u64> {
        // By default half the device's memory: the rest is for the runtime, programs and scratch.
        self.memory_budget.or_else(|| device::device_value::<cl_ulong>(self.api, self.device, CL_DEVICE_GLOBAL_MEM_SIZE).map(|bytes| bytes / 2))
    }

    /// Plain buffers share slots of storage, images take turns; buffers that sub-buffers view
    /// and SVM keep their own.
    fn share_storage(&mut self, lifetimes: &Lifetimes, trace: &Trace) -> BackendResult<()> {
        let parents: std::collections::HashSet<usize> = trace
            .memories
            .iter()
            .filter_map(|memory| match memory.kind {
                MemKind::SubBuffer { parent, .. } => Some(parent.index()),
                _ => None,
            })
            .collect();
        let sizes: Vec<u64> = trace.memories.iter().map(|memory| memory.size).collect();
        // Buffers share slots of their own storage; images cannot live on a buffer's, so theirs
        // are created and released as they come.
        let buffer = |mem: usize| trace.memories[mem].kind == MemKind::Buffer && !parents.contains(&mem);
        let image = |mem: usize| matches!(trace.memories[mem].kind, MemKind::Image(_));
        let (buffers, images) = (lifetimes.shared_storage(&sizes, &buffer), lifetimes.shared_storage(&sizes, &image));
        // Buffers that sub-buffers view (and SVM) keep storage of their own: past the budget the
        // replay would be ended by the system for memory, so it is refused instead.
        let views = |mem: usize| matches!(trace.memories[mem].kind, MemKind::SubBuffer { .. });
        let own: u64 = (0..sizes.len()).filter(|&mem| !buffer(mem) && !image(mem) && !views(mem)).map(|mem| sizes[mem]).sum();
        let held = own.saturating_add(buffers.slot_sizes.iter().sum()).saturating_add(images.slot_sizes.iter().sum());
        let budget = self.memory_budget().unwrap_or(u64::MAX);
        if held > budget {
            return Err(BackendError::Unsupported(format!(
                "the trace needs {held} bytes of memory objects at once ({own} of them buffers that sub-buffers view and SVM, which do not share storage), more than the memory budget of {budget} bytes (--memory-budget)"
            )));
        }
        (self.shared, self.shared_images) = (Some(buffers), Some(images));
        Ok(())
    }

    fn load(&mut self, trace: &Trace, blobs: &BlobStore) -> BackendResult<()> {
        self.release_buffers();
        self.objects = None;
        let images = self.shared_images.as_ref();
        let deferred = |mem: usize| images.is_some_and(|images| images.slot_of.get(mem).copied().flatten().is_some());
        self.objects = Some(Objects::create(self.api, self.context, self.device, &self.limits, trace, blobs, self.profile, self.shared.as_ref(), &deferred, self.unified)?);
        Ok(())
    }

    /// Every launch of the segment is checked before the driver sees it (a driver crashes on
    /// arguments that do not suit the kernel, or ranges beyond the device's limits).
    fn stage(&mut self, ids: &[NodeId], nodes: &[Node], _blobs: &BlobStore) -> BackendResult<()> {
        if self.shared.is_some() {
            for mem in memory_used(nodes) {
                self.hold(mem)?;
            }
        }
        let objects = self.objects()?;
        for (id, node) in ids.iter().zip(nodes) {
            if let Command::Kernel(launch) = &node.command {
                objects.check_launch(*id, launch, self.device, &self.limits)?;
            }
        }
        Ok(())
    }

    fn write_memory(&mut self, mem: MemId, offset: u64, data: &[u8]) -> BackendResult<()> {
        self.hold(mem)?;
        let mut data = data.to_vec();
        self.objects()?.relocation.to_replay(&mut data);
        self.transfer(mem, offset, data.as_mut_ptr() as *mut c_void, data.len(), true)
    }

    fn read_memory(&mut self, mem: MemId) -> BackendResult<Vec<u8>> {
        let held_instead = |shared: &Option<SharedStorage>| shared.as_ref().and_then(|shared| shared.held_instead(mem));
        if let Some(later) = held_instead(&self.shared).or_else(|| held_instead(&self.shared_images)) {
            return Err(BackendError::Unsupported(format!(
                "memory {mem} shared its storage with memory {later}, used after it (the trace's memory objects add up to more than the device holds at once): its contents after the run are gone"
            )));
        }
        let size = self.objects()?.memory(mem)?.size() as usize;
        let mut data = vec![0u8; size];
        self.transfer(mem, 0, data.as_mut_ptr() as *mut c_void, size, false)?;
        self.objects()?.relocation.to_recorded(&mut data);
        Ok(data)
    }

    fn build(&mut self, part: &PartitionNodes<'_>) -> BackendResult<BufferHandle> {
        let built = self.build_buffer(part, &[], Vec::new())?;
        self.built.push(Some(built));
        Ok(BufferHandle(self.built.len() - 1))
    }

    fn launch(&mut self, buffer: BufferHandle) -> BackendResult<()> {
        self.begin_submission();
        let built = self.built.get(buffer.0).and_then(Option::as_ref).ok_or_else(|| unknown_buffer(buffer))?;
        let (command_buffer, first_node) = (built.buffer, built.first_node);
        let enqueue = self.command_buffers()?.enqueue;
        let (count, waits) = event_list(&self.tail);
        let mut event = ptr::null_mut();
        check(unsafe { enqueue(0, ptr::null_mut(), command_buffer, count, waits, &mut event) }, "clEnqueueCommandBufferKHR")?;
        self.replace_tail([event]);
        let main_queue = self.objects()?.queues.len();
        self.keep_for_profile(first_node, main_queue, event)
    }

    fn run_eager(&mut self, part: &PartitionNodes<'_>, blobs: &BlobStore) -> BackendResult<()> {
        self.begin_submission();
        self.enqueue_partition(part, blobs)
    }

    fn update(&mut self, buffer: BufferHandle, part: &PartitionNodes<'_>, patches: &[Patch]) -> BackendResult<UpdateKind> {
        self.update_buffer(buffer, part, patches)
    }

    fn outdated(&self, buffer: BufferHandle) -> bool {
        let (Some(Some(built)), Ok(objects)) = (self.built.get(buffer.0), self.objects()) else { return false };
        built.names.iter().any(|&(mem, generation)| objects.generations.get(mem.index()) != Some(&generation))
    }

    fn finish(&mut self) -> BackendResult<()> {
        self.wait_for_queues()?;
        self.replace_tail([]);
        self.finished = true;
        Ok(())
    }

    fn take_received(&mut self) -> BackendResult<Vec<(NodeId, Vec<u8>)>> {
        let mut received = std::mem::take(&mut self.received);
        let relocation = &self.objects()?.relocation;
        received.iter_mut().for_each(|(_, data)| relocation.to_recorded(data));
        Ok(received)
    }

    fn timings(&mut self) -> BackendResult<Vec<NodeTiming>> {
        let mut timings = Vec::with_capacity(self.profiled.len());
        for &(node, queue, event) in &self.profiled {
            let time = |param| -> BackendResult<u64> {
                let mut value: cl_ulong = 0;
                let code = unsafe {
                    (self.api.clGetEventProfilingInfo)(event, param, std::mem::size_of::<cl_ulong>(), &mut value as *mut cl_ulong as *mut c_void, ptr::null_mut())
                };
                check(code, "clGetEventProfilingInfo")?;
                Ok(value)
            };
            timings.push(NodeTiming { node, queue, start_ns: time(CL_PROFILING_COMMAND_START)?, end_ns: time(CL_PROFILING_COMMAND_END)? });
        }
        Ok(timings)
    }
}

fn not_loaded() -> BackendError {
    BackendError::Unsupported("the OpenCL backend was used before `load`".into())
}

fn unknown_buffer(buffer: BufferHandle) -> BackendError {
    BackendError::Unsupported(format!("command buffer {} was not built by this backend", buffer.0))
}

impl Drop for OpenClBackend {
    fn drop(&mut self) {
        // Let submitted work end before its command buffers go; a failure here changes nothing.
        let _ = self.finish();
        self.replace_tail([]);
        self.release_profiled();
        self.release_buffers();
        self.objects = None;
        unsafe { (self.api.clReleaseContext)(self.context) };
    }
}

