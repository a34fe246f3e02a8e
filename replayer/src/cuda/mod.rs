//! The CUDA backend: replays a trace as CUDA graphs (one per partition, instantiated once,
//! updated in place) or command by command on one stream per recorded queue.
//!
//! Submissions are ordered through the backend's own stream: graphs launch on it, and an eager
//! partition's streams wait for it first and it waits for them at the end.
//!
//! Timings: eager commands are timed one by one with events; a graph gets one pair of events,
//! reported on the first node of its partition.

mod attributes;
mod commands;
mod driver;
mod eager;
mod graph;
mod host_copies;
pub mod image_variables;
mod images;
mod memory;
mod objects;
mod printf_flush;
mod untracked_variables;

use crate::lifetimes::Lifetimes;
use crate::backend::{check_range, Backend, BackendError, BackendOptions, BackendResult, BufferHandle, NodeTiming, PartitionNodes, UpdateKind};
use cudarc::driver::sys::{self, CUevent, CUstream};
use driver::{check, Device};
use eager::{Eager, EventPool};
use graph::BuiltGraph;
use images::Array;
use objects::Objects;
use memory::HostBuffer;
use std::rc::Rc;
use trace_format::{BlobStore, Command, Extent, MemId, Node, NodeId, Patch, Trace};

/// Opens the device `options` choose (`devices::choose`); `Unavailable` without a CUDA driver
/// or GPU.
pub fn open(options: &BackendOptions) -> Result<Box<dyn Backend>, BackendError> {
    Ok(Box::new(CudaBackend::open(options)?))
}

/// Every CUDA device of this machine, in the order `--device` indexes them.
pub fn devices() -> BackendResult<Vec<crate::devices::Listed>> {
    Ok(driver::devices()?.into_iter().map(|(_, listed)| listed).collect())
}

/// The most pinned memory segments staged ahead hold (see `Backend::stages_ahead`): past it, the
/// replay waits for them before staging more.
const STAGED_AHEAD_LIMIT: usize = 256 << 20;

fn not_loaded() -> BackendError {
    BackendError::Unsupported("the trace is not loaded yet".into())
}

pub struct CudaBackend {
    device: Device,
    options: BackendOptions,
    main: CUstream,
    objects: Option<Objects>,
    graphs: Vec<BuiltGraph>,
    /// Graphs eager replay launched for partitions that only run as graphs (see
    /// `graph::needs_graph`), until `finish`.
    eager_graphs: Vec<BuiltGraph>,
    events: EventPool,
    /// With profiling: what ran since the last `finish`, and the event every time is measured
    /// from, recorded as each run begins (one timeline per run, segment after segment).
    timed: Vec<(NodeId, usize, CUevent, CUevent)>,
    origin: Option<CUevent>,
    /// With profiling: recorded at the first submission after a `finish`, which its times count
    /// from (see `timings`).
    anchor: Option<CUevent>,
    /// The copies to the host submitted since the run began whose data is compared: node, where
    /// it lands, extent (see `take_received`).
    received: Vec<(NodeId, Rc<HostBuffer>, Extent)>,
    /// Set by `finish`: the next submission starts a new run.
    finished: bool,
    /// Pinned bytes staged for segments that have not run to a `finish` yet (`None`: no such
    /// segment). Their data stays while more are staged ahead, up to `STAGED_AHEAD_LIMIT`.
    staged_ahead: Option<usize>,
    /// Loaded at the first `flush_printed`.
    printf_flush: Option<printf_flush::PrintfFlush>,
    /// When each memory object is in use (by `MemId` index), where the trace reuses addresses.
    spans: Vec<Option<(u32, u32)>>,
}

impl CudaBackend {
    pub fn open(options: &BackendOptions) -> BackendResult<CudaBackend> {
        let device = Device::open(options)?;
        let mut main = std::ptr::null_mut();
        // SAFETY: valid out-pointer, the device's context is current.
        check(unsafe { sys::cuStreamCreate(&mut main, sys::CUstream_flags::CU_STREAM_NON_BLOCKING as u32) }, "cuStreamCreate")?;
        Ok(CudaBackend {
            device,
            options: options.clone(),
            main,
            objects: None,
            graphs: Vec::new(),
            eager_graphs: Vec::new(),
            events: EventPool::new(options.profile),
            timed: Vec::new(),
            origin: if options.profile { Some(eager::create_event(true)?) } else { None },
            anchor: None,
            received: Vec::new(),
            finished: false,
            staged_ahead: None,
            printf_flush: None,
            spans: Vec::new(),
        })
    }

    /// A submission after `finish` begins a new run: what the last one received, and its times
    /// where `timings` did not take them, are dropped.
    fn begin_submission(&mut self) -> BackendResult<()> {
        if std::mem::take(&mut self.finished) {
            self.received.clear();
            self.timed.clear();
            self.events.recycle();
            if self.origin.is_some() {
                self.anchor = Some(self.record_on_main()?);
            }
        }
        Ok(())
    }

    /// Waits until everything submitted has completed, without ending the submission (a rebuild
    /// waits for the graph it replaces, in the middle of staged segments).
    fn wait_idle(&self) -> BackendResult<()> {
        // The whole context, not only the main stream every run ends on: grids that kernels
        // launched from the device and what they print are done then. (cdpSimplePrint's replays
        // that seemed to print nothing compared no stable line: its block counter, a module
        // variable, carried over between runs; `untracked_variables` puts it back.)
        // SAFETY: the backend's context is current.
        check(unsafe { sys::cuCtxSynchronize() }, "cuCtxSynchronize")
    }

    fn objects(&self) -> BackendResult<&Objects> {
        self.objects.as_ref().ok_or_else(not_loaded)
    }

    fn objects_mut(&mut self) -> BackendResult<&mut Objects> {
        self.objects.as_mut().ok_or_else(not_loaded)
    }

    /// The memory object's address and size.
    fn memory(&self, mem: MemId) -> BackendResult<(u64, u64)> {
        let memories = &self.objects()?.memories;
        match (memories.addresses.get(mem.index()), memories.sizes.get(mem.index())) {
            (Some(&address), Some(&size)) => Ok((address, size)),
            _ => Err(BackendError::Unsupported(format!("memory {mem} is not in the trace"))),
        }
    }

    fn record_on_main(&mut self) -> BackendResult<CUevent> {
        let event = self.events.take()?;
        // SAFETY: an event and the stream of this backend.
        check(unsafe { sys::cuEventRecord(event, self.main) }, "cuEventRecord")?;
        Ok(event)
    }

    /// Launches an instantiated graph on the backend's stream, timed on its partition's first node.
    fn launch_graph(&mut self, exec: sys::CUgraphExec, first: Option<(NodeId, usize)>) -> BackendResult<()> {
        let began = if self.options.profile { Some(self.record_on_main()?) } else { None };
        // SAFETY: an instantiated graph and the backend's stream.
        check(unsafe { sys::cuGraphLaunch(exec, self.main) }, "cuGraphLaunch")?;
        if let (Some(began), Some((node, queue))) = (began, first) {
            let end = self.record_on_main()?;
            self.timed.push((node, queue, began, end));
        }
        Ok(())
    }

    /// Copies a whole image between `array` and packed host memory at `host` (which holds
    /// all of it), and waits for the copy.
    fn copy_packed(&mut self, array: Array, host: *mut std::ffi::c_void, to_host: bool) -> BackendResult<()> {
        let copy = array.packed_copy(host, to_host);
        // SAFETY: the array is live and the host memory holds its packed contents.
        check(unsafe { sys::cuMemcpy3D_v2(&copy) }, "cuMemcpy3D")?;
        self.finish()
    }

    fn built(&mut self, buffer: BufferHandle) -> BackendResult<&mut BuiltGraph> {
        self.graphs
            .get_mut(buffer.0)
            .ok_or_else(|| BackendError::Unsupported(format!("command buffer {} was not built by this backend", buffer.0)))
    }
}

impl Backend for CudaBackend {
    fn device_name(&self) -> String {
        self.device.label.clone()
    }

    fn device_note(&self) -> Option<String> {
        self.device.note.clone()
    }

    fn can_record(&self, command: &Command) -> bool {
        graph::holds(command, self.options.host_copies)
    }

    fn load(&mut self, trace: &Trace, blobs: &BlobStore) -> BackendResult<()> {
        // What was built for an earlier trace points into its memory, which goes first (with
        // --exact-addresses the new trace may need the same address ranges).
        self.finish()?;
        self.graphs.clear();
        self.objects = None;
        let spans = std::mem::take(&mut self.spans);
        self.objects = Some(Objects::load(trace, blobs, self.device.device, self.options.exact_addresses, &spans, self.options.host_copies)?);
        Ok(())
    }

    fn reuses_addresses(&self, trace: &Trace) -> bool {
        crate::relocation::addresses_reused(&trace.memories)
    }

    fn note_lifetimes(&mut self, lifetimes: &Lifetimes) {
        self.spans = lifetimes.spans().to_vec();
    }

    fn stage(&mut self, ids: &[NodeId], nodes: &[Node], blobs: &BlobStore) -> BackendResult<()> {
        // What the last segment received is no longer asked for. Held here, its landing buffers
        // could not go back to the pool: each segment freed and pinned them anew, inside the
        // timed run (eager replays without --compare: 4.5 ms per iteration instead of 0.7).
        self.received.clear();
        let keep_earlier = self.staged_ahead.is_some();
        let objects = self.objects_mut()?;
        if let Some(node) = nodes.first() {
            objects.relocation.at_segment(node.segment.0);
        }
        let pinned = objects.stage(ids, nodes, blobs, keep_earlier)?;
        self.staged_ahead = Some(self.staged_ahead.unwrap_or(0) + pinned);
        Ok(())
    }

    fn stages_ahead(&self) -> bool {
        self.staged_ahead.is_none_or(|pinned| pinned < STAGED_AHEAD_LIMIT)
    }

    fn write_memory(&mut self, mem: MemId, offset: u64, data: &[u8]) -> BackendResult<()> {
        let (address, size) = self.memory(mem)?;
        check_range(mem, size, offset, data.len())?;
        self.finish()?;
        if let Some(&array) = self.objects()?.memories.arrays.get(&mem.index()) {
            if offset != 0 || data.len() as u64 != size {
                return Err(BackendError::Unsupported(format!("memory {mem} is an array: only its whole contents are written")));
            }
            return self.copy_packed(array, data.as_ptr().cast_mut().cast(), false);
        }
        let objects = self.objects_mut()?;
        if offset == 0 && objects.variables_unwritten.remove(&mem) {
            let mut loaded = vec![0u8; data.len()];
            // SAFETY: the variable's bytes, into a buffer of their size.
            check(unsafe { sys::cuMemcpy(loaded.as_mut_ptr() as u64, address, loaded.len()) }, "cuMemcpy")?;
            objects.relocation.learn_module_words(data, &loaded);
        }
        if data.is_empty() {
            return Ok(());
        }
        let mut data = data.to_vec();
        objects.relocation.to_replay(&mut data);
        if objects.memories.on_host.contains(&mem.index()) {
            // SAFETY: inside the memory (checked above), which is the host's.
            unsafe { std::ptr::copy_nonoverlapping(data.as_ptr(), (address + offset) as *mut u8, data.len()) };
            return Ok(());
        }
        let staged = objects.pinned.take_with(&data)?;
        // SAFETY: inside the memory (checked above), from a pinned buffer that holds the data.
        check(unsafe { sys::cuMemcpyHtoDAsync_v2(address + offset, staged.ptr, data.len(), self.main) }, "cuMemcpyHtoDAsync")?;
        // Waited for before anything runs that may read it.
        self.finish()?;
        self.objects_mut()?.pinned.give(staged);
        Ok(())
    }

    fn read_memory(&mut self, mem: MemId) -> BackendResult<Vec<u8>> {
        let (address, size) = self.memory(mem)?;
        self.finish()?;
        let mut data = vec![0u8; size as usize];
        if let Some(&array) = self.objects()?.memories.arrays.get(&mem.index()) {
            self.copy_packed(array, data.as_mut_ptr().cast(), true)?;
            return Ok(data);
        }
        let objects = self.objects_mut()?;
        if objects.memories.on_host.contains(&mem.index()) {
            // SAFETY: the whole memory, which is the host's.
            unsafe { std::ptr::copy_nonoverlapping(address as *const u8, data.as_mut_ptr(), data.len()) };
        } else {
            let len = data.len();
            let landing = objects.pinned.take(len)?;
            // SAFETY: the whole memory, into a pinned buffer that holds it.
            check(unsafe { sys::cuMemcpyDtoHAsync_v2(landing.ptr, address, len, self.main) }, "cuMemcpyDtoHAsync")?;
            self.finish()?;
            // SAFETY: the copy finished writing the buffer's first `len` bytes.
            data.copy_from_slice(unsafe { std::slice::from_raw_parts(landing.ptr as *const u8, len) });
            self.objects_mut()?.pinned.give(landing);
        }
        self.objects()?.relocation.to_recorded(&mut data);
        Ok(data)
    }

    fn build(&mut self, part: &PartitionNodes<'_>) -> BackendResult<BufferHandle> {
        let built = graph::build(self.objects()?, self.device.context, part)?;
        self.graphs.push(built);
        Ok(BufferHandle(self.graphs.len() - 1))
    }

    fn launch(&mut self, buffer: BufferHandle) -> BackendResult<()> {
        self.begin_submission()?;
        let (exec, first, received) = {
            let built = self.built(buffer)?;
            (built.exec, built.first, built.received.clone())
        };
        self.received.extend(received);
        self.launch_graph(exec, first)
    }

    fn run_eager(&mut self, part: &PartitionNodes<'_>, _blobs: &BlobStore) -> BackendResult<()> {
        self.begin_submission()?;
        let objects = self.objects.as_ref().ok_or_else(not_loaded)?;
        self.received.extend(part.nodes.iter().filter_map(|(id, node)| match (&node.command, objects.landings.get(id)) {
            (Command::Copy(copy), Some(landing)) => Some((*id, landing.clone(), copy.extent.clone())),
            _ => None,
        }));
        if part.nodes.iter().any(|(_, node)| graph::needs_graph(&node.command)) {
            let built = graph::build(objects, self.device.context, part)?;
            let (exec, first) = (built.exec, built.first);
            // Destroyed at `finish`, after it ran.
            self.eager_graphs.push(built);
            return self.launch_graph(exec, first);
        }
        Eager {
            objects,
            main: self.main,
            events: &mut self.events,
            timed: self.options.profile.then_some(&mut self.timed),
        }
        .run(part)
    }

    fn update(&mut self, buffer: BufferHandle, part: &PartitionNodes<'_>, patches: &[Patch]) -> BackendResult<UpdateKind> {
        if self.options.rebuild_updates {
            // The graph being replaced may still be running.
            self.wait_idle()?;
        }
        let objects = self.objects.as_ref().ok_or_else(not_loaded)?;
        let built = self
            .graphs
            .get_mut(buffer.0)
            .ok_or_else(|| BackendError::Unsupported(format!("command buffer {} was not built by this backend", buffer.0)))?;
        if self.options.rebuild_updates {
            *built = graph::rebuild(objects, self.device.context, part, patches, built)?;
            return Ok(UpdateKind::Rebuilt);
        }
        built.update(objects, self.device.context, part, patches)?;
        Ok(UpdateKind::Native)
    }

    fn finish(&mut self) -> BackendResult<()> {
        self.wait_idle()?;
        // The staged segments ran if something was submitted since the last `finish` (the replay
        // stages nothing while it submits); one between staging and submitting (writing initial
        // states) leaves them staged.
        if !self.finished {
            self.staged_ahead = None;
        }
        self.finished = true;
        self.eager_graphs.clear();
        if !self.options.profile {
            self.events.recycle();
        }
        Ok(())
    }

    fn begin_run(&mut self) -> BackendResult<()> {
        let main = self.main;
        if let Some(origin) = self.origin {
            // SAFETY: an event and the stream of this backend.
            check(unsafe { sys::cuEventRecord(origin, main) }, "cuEventRecord")?;
        }
        self.objects()?.untracked_variables.restore(main)
    }

    fn flush_printed(&mut self) -> BackendResult<()> {
        let flush = match self.printf_flush.take() {
            Some(flush) => flush,
            None => printf_flush::PrintfFlush::load()?,
        };
        let flushed = flush.run(self.main);
        self.printf_flush = Some(flush);
        flushed
    }

    fn take_received(&mut self) -> BackendResult<Vec<(NodeId, Vec<u8>)>> {
        self.finish()?;
        let received = std::mem::take(&mut self.received);
        let relocation = &self.objects()?.relocation;
        let mut taken = Vec::with_capacity(received.len());
        for (node, landing, extent) in received {
            // SAFETY: the landing buffer holds `landing.len` bytes, which the copies finished writing.
            let landed = unsafe { std::slice::from_raw_parts(landing.ptr as *const u8, landing.len) };
            let mut packed = Vec::new();
            for (offset, len) in extent.rows(false) {
                let row = landed.get(offset as usize..(offset + len) as usize).ok_or_else(|| {
                    BackendError::Unsupported(format!("node {node}: a row at {offset} of {len} bytes lies outside its {} bytes", landing.len))
                })?;
                packed.extend_from_slice(row);
            }
            relocation.to_recorded(&mut packed);
            taken.push((node, packed));
        }
        Ok(taken)
    }

    fn timings(&mut self) -> BackendResult<Vec<NodeTiming>> {
        let (Some(origin), Some(anchor)) = (self.origin, self.anchor) else { return Ok(Vec::new()) };
        let elapsed_ns = |from: CUevent, to: CUevent| -> BackendResult<f64> {
            let mut ms = 0f32;
            // SAFETY: completed events of this backend (timings come after finish).
            check(unsafe { sys::cuEventElapsedTime_v2(&mut ms, from, to) }, "cuEventElapsedTime")?;
            Ok(f64::from(ms) * 1e6)
        };
        // Milliseconds in an f32 lose microseconds a minute into a run: the nodes' times are taken
        // from the submission's anchor, and its offset in the run once.
        let offset = elapsed_ns(origin, anchor)?;
        let since_origin = |event: CUevent| -> BackendResult<u64> { Ok((offset + elapsed_ns(anchor, event)?).max(0.0) as u64) };
        let mut timings = Vec::with_capacity(self.timed.len());
        for &(node, queue, start, end) in &self.timed {
            timings.push(NodeTiming { node, queue, start_ns: since_origin(start)?, end_ns: since_origin(end)? });
        }
        self.timed.clear();
        self.events.recycle();
        Ok(timings)
    }
}

impl Drop for CudaBackend {
    fn drop(&mut self) {
        // Work still running uses the objects about to go; errors cannot be reported here.
        // SAFETY: the backend's context and stream.
        unsafe {
            sys::cuCtxSynchronize();
            self.graphs.clear();
            self.eager_graphs.clear();
            self.events = EventPool::new(false);
            if let Some(origin) = self.origin {
                sys::cuEventDestroy_v2(origin);
            }
            self.objects = None;
            sys::cuStreamDestroy_v2(self.main);
            sys::cuDevicePrimaryCtxRelease_v2(self.device.device);
        }
    }
}

#[cfg(test)]
mod tests;
