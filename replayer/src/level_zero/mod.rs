//! The Level Zero backend: replays a trace as closed regular command lists executed on a command
//! queue (graph mode, one list per partition, patched through the mutable command list extension
//! where the driver has it, rebuilt where not), or command by command on immediate command lists
//! with events for the edges (eager mode). Written against the Level Zero specification (1.4, and
//! the extension of 1.9): any driver the loader finds will do.
//!
//! Submissions are ordered as follows: lists executed on the queue start after everything the
//! queue ran (each begins with a barrier); an eager partition starts after the events that ended
//! the previous one. Between the two the host waits: graph mode submits eagerly only what a list
//! cannot hold (host tasks), which needs the host anyway.
//!
//! Timings are not collected yet (`--profile` writes an empty profile).

mod commands;
mod driver;
mod eager;
mod events;
mod graph;
mod objects;
mod updates;

use crate::backend::{check_range, Backend, BackendError, BackendOptions, BackendResult, BufferHandle, PartitionNodes, UpdateKind};
use commands::Appender;
use driver::{check, Device};
use events::Events;
use graph::Built;
use objects::{Objects, Scope};
use std::ffi::c_void;
use std::ptr;
use trace_format::{BlobStore, Command, Copy, MemId, Patch, Place, Trace};
use ze_sys::*;

/// Opens the device `options.device` names (the first when `None`); `Unavailable` without a
/// Level Zero loader, driver or device.
pub fn open(options: &BackendOptions) -> Result<Box<dyn Backend>, BackendError> {
    Ok(Box::new(LevelZeroBackend::open(options)?))
}

/// Every device of every Level Zero driver, in the order `--device` indexes them.
pub fn devices() -> BackendResult<Vec<crate::devices::Listed>> {
    Ok(driver::all_devices(driver::loader()?)?.into_iter().map(|(_, _, listed)| listed).collect())
}

pub struct LevelZeroBackend {
    device: Device,
    scope: Scope,
    /// Patches rebuild lists even where the device updates them in place.
    rebuild_updates: bool,
    /// Where built lists execute.
    queue: ze_command_queue_handle_t,
    /// A synchronous immediate list for memory contents.
    transfers: ze_command_list_handle_t,
    objects: Option<Objects>,
    built: Vec<Built>,
    /// Eager commands' events since the last `finish`.
    events: Events,
    /// The events that end the last eager partition.
    tail: Vec<ze_event_handle_t>,
    /// Lists were executed since the queue was last synchronized.
    queue_busy: bool,
}

impl LevelZeroBackend {
    pub fn open(options: &BackendOptions) -> BackendResult<LevelZeroBackend> {
        if options.exact_addresses {
            return Err(BackendError::Unsupported("--exact-addresses: the Level Zero backend places memory where the driver allocates it".into()));
        }
        let device = Device::open(options.device.as_deref(), options.recorded.as_ref())?;
        let api = driver::loader()?;
        let mut context = ptr::null_mut();
        // SAFETY (whole block): creation calls with descriptions and out-pointers alive for each call.
        unsafe {
            check(api.zeContextCreate(device.driver, &ze_context_desc_t::new(), &mut context), "zeContextCreate")?;
            let scope = Scope { api, context, device: device.device };
            let mut queue = ptr::null_mut();
            let queue_desc = ze_command_queue_desc_t { mode: ZE_COMMAND_QUEUE_MODE_ASYNCHRONOUS, ..ze_command_queue_desc_t::new() };
            check(api.zeCommandQueueCreate(context, device.device, &queue_desc, &mut queue), "zeCommandQueueCreate")?;
            let mut transfers = ptr::null_mut();
            let transfer_desc = ze_command_queue_desc_t { mode: ZE_COMMAND_QUEUE_MODE_SYNCHRONOUS, ..ze_command_queue_desc_t::new() };
            check(api.zeCommandListCreateImmediate(context, device.device, &transfer_desc, &mut transfers), "zeCommandListCreateImmediate")?;
            Ok(LevelZeroBackend {
                device,
                scope,
                rebuild_updates: options.rebuild_updates,
                queue,
                transfers,
                objects: None,
                built: Vec::new(),
                events: Events::new(api, context),
                tail: Vec::new(),
                queue_busy: false,
            })
        }
    }

    /// Whether the driver offers the mutable command list extension (graph mode updates in place).
    pub fn updates_natively(&self) -> bool {
        self.device.mutable.is_some()
    }

    fn appender(&self) -> BackendResult<Appender<'_>> {
        appender(self.scope, &self.device, &self.objects)
    }

    fn synchronize_queue(&mut self) -> BackendResult<()> {
        if self.queue_busy {
            // SAFETY: the backend's queue.
            check(unsafe { self.scope.api.zeCommandQueueSynchronize(self.queue, u64::MAX) }, "zeCommandQueueSynchronize")?;
            self.queue_busy = false;
        }
        Ok(())
    }

    /// Waits for the last eager partition, whose end follows every eager command before it.
    fn synchronize_eager(&mut self) -> BackendResult<()> {
        for event in self.tail.drain(..) {
            // SAFETY: an event an eager command signals.
            check(unsafe { self.scope.api.zeEventHostSynchronize(event, u64::MAX) }, "zeEventHostSynchronize")?;
        }
        Ok(())
    }

    /// Copies between `host` and all of memory `mem` once everything submitted has finished.
    /// Copies `bytes` bytes between `host` and memory `mem` from `offset` on.
    fn transfer(&mut self, mem: MemId, offset: u64, host: *mut c_void, bytes: usize, to_device: bool) -> BackendResult<()> {
        self.finish()?;
        let (address, size) = self.appender()?.objects.memory(mem)?;
        check_range(mem, size, offset, bytes)?;
        let address = address + offset;
        let (dst, src) = if to_device { (address as *mut c_void, host.cast_const()) } else { (host, address as *const c_void) };
        // SAFETY: a synchronous list: the copy is done when the call returns; both sides hold `bytes`.
        check(unsafe { self.scope.api.zeCommandListAppendMemoryCopy(self.transfers, dst, src, bytes, ptr::null_mut(), 0, ptr::null_mut()) }, "zeCommandListAppendMemoryCopy")
    }

    fn built(&mut self, buffer: BufferHandle) -> BackendResult<&mut Built> {
        self.built.get_mut(buffer.0).ok_or_else(|| unknown_list(buffer))
    }

    fn build_list(&self, part: &PartitionNodes<'_>) -> BackendResult<Built> {
        let mutable = self.device.mutable.as_ref().filter(|_| !self.rebuild_updates).map(|(functions, _)| functions);
        graph::build(&self.appender()?, part, mutable)
    }
}

/// What appends commands for the loaded trace (a function of the fields it needs, so that other
/// fields stay free to borrow).
fn appender<'a>(scope: Scope, device: &Device, objects: &'a Option<Objects>) -> BackendResult<Appender<'a>> {
    let objects = objects.as_ref().ok_or_else(|| BackendError::Unsupported("the trace is not loaded yet".into()))?;
    Ok(Appender { scope, objects, max_fill_pattern: device.max_fill_pattern })
}

impl Backend for LevelZeroBackend {
    fn device_name(&self) -> String {
        self.device.label.clone()
    }

    fn device_note(&self) -> Option<String> {
        self.device.note.clone()
    }

    fn stage(&mut self, _ids: &[trace_format::NodeId], nodes: &[trace_format::Node], blobs: &BlobStore) -> BackendResult<()> {
        self.objects.as_mut().ok_or_else(|| BackendError::Unsupported("the trace is not loaded yet".into()))?.stage(nodes, blobs)
    }

    /// Lists hold everything but host code (and the program's own graphs, inlined before).
    fn can_record(&self, command: &Command) -> bool {
        match command {
            Command::Kernel(_) | Command::Barrier | Command::MemAlloc { .. } | Command::MemFree { .. } => true,
            Command::Copy(Copy { src, dst, .. }) => !matches!((src, dst), (Place::Host { .. }, Place::Host { .. })),
            Command::Fill(fill) => fill.rows.is_none(),
            Command::HostTask(_) | Command::Subgraph(_) | Command::Conditional(_) | Command::EventRecord { .. } | Command::EventWait { .. } => false,
        }
    }

    fn load(&mut self, trace: &Trace, blobs: &BlobStore) -> BackendResult<()> {
        self.finish()?;
        self.built.clear();
        self.objects = None;
        self.objects = Some(Objects::load(self.scope, trace, blobs)?);
        Ok(())
    }

    fn write_memory(&mut self, mem: MemId, offset: u64, data: &[u8]) -> BackendResult<()> {
        self.transfer(mem, offset, data.as_ptr().cast_mut().cast(), data.len(), true)
    }

    fn read_memory(&mut self, mem: MemId) -> BackendResult<Vec<u8>> {
        let size = self.appender()?.objects.memory(mem)?.1 as usize;
        let mut data = vec![0u8; size];
        self.transfer(mem, 0, data.as_mut_ptr().cast(), size, false)?;
        Ok(data)
    }

    fn build(&mut self, part: &PartitionNodes<'_>) -> BackendResult<BufferHandle> {
        let built = self.build_list(part)?;
        self.built.push(built);
        Ok(BufferHandle(self.built.len() - 1))
    }

    fn launch(&mut self, buffer: BufferHandle) -> BackendResult<()> {
        self.synchronize_eager()?;
        let mut list = self.built(buffer)?.list;
        // SAFETY: a closed list of this backend and its queue.
        check(unsafe { self.scope.api.zeCommandQueueExecuteCommandLists(self.queue, 1, &mut list, ptr::null_mut()) }, "zeCommandQueueExecuteCommandLists")?;
        self.queue_busy = true;
        Ok(())
    }

    fn run_eager(&mut self, part: &PartitionNodes<'_>, _blobs: &BlobStore) -> BackendResult<()> {
        self.synchronize_queue()?;
        eager::run(&appender(self.scope, &self.device, &self.objects)?, &mut self.events, &mut self.tail, part)
    }

    fn update(&mut self, buffer: BufferHandle, part: &PartitionNodes<'_>, patches: &[Patch]) -> BackendResult<UpdateKind> {
        // A list is updated or replaced only when it does not run.
        self.finish()?;
        if let (false, Some((functions, flags))) = (self.rebuild_updates, &self.device.mutable) {
            let appender = appender(self.scope, &self.device, &self.objects)?;
            let built = self.built.get_mut(buffer.0).ok_or_else(|| unknown_list(buffer))?;
            if updates::update_natively(&appender, functions, *flags, built, part, patches)? {
                return Ok(UpdateKind::Native);
            }
        }
        let patched = part.patched(patches)?;
        let nodes = part.over(&patched);
        let rebuilt = self.build_list(&nodes)?;
        *self.built(buffer)? = rebuilt;
        Ok(UpdateKind::Rebuilt)
    }

    fn finish(&mut self) -> BackendResult<()> {
        self.synchronize_queue()?;
        self.synchronize_eager()?;
        self.events.recycle()
    }
}

fn unknown_list(buffer: BufferHandle) -> BackendError {
    BackendError::Unsupported(format!("command list {} was not built by this backend", buffer.0))
}

impl Drop for LevelZeroBackend {
    fn drop(&mut self) {
        // Work still running uses what is about to go; errors cannot be reported here.
        let _ = self.finish();
        self.built.clear();
        self.objects = None;
        self.events = Events::new(self.scope.api, self.scope.context);
        // SAFETY: handles `open` created.
        unsafe {
            self.scope.api.zeCommandListDestroy(self.transfers);
            self.scope.api.zeCommandQueueDestroy(self.queue);
            self.scope.api.zeContextDestroy(self.scope.context);
        }
    }
}

