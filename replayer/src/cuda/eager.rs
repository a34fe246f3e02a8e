//! Eager replay: each command re-issued on its recorded queue's stream, with an event after each
//! command and a stream wait for each edge that crosses streams.

use super::commands::{copy_params, memset_params, Addresses, KernelCall};
use super::driver::check;
use super::graph::recorded_host_code;
use super::memory::HostBuffer;
use super::objects::Objects;
use crate::backend::{BackendError, BackendResult, PartitionNodes};
use cudarc::driver::sys::{self, CUdeviceptr, CUevent, CUstream};
use std::collections::{BTreeSet, HashMap};
use trace_format::{Command, MemId};

/// A new event, timed or not, which its caller destroys.
pub fn create_event(timed: bool) -> BackendResult<CUevent> {
    let flags = if timed { sys::CUevent_flags::CU_EVENT_DEFAULT } else { sys::CUevent_flags::CU_EVENT_DISABLE_TIMING };
    let mut event = std::ptr::null_mut();
    // SAFETY: valid out-pointer.
    check(unsafe { sys::cuEventCreate(&mut event, flags as u32) }, "cuEventCreate")?;
    Ok(event)
}

/// Events reused from run to run: re-recording an event does not disturb waits already issued.
pub struct EventPool {
    timed: bool,
    events: Vec<CUevent>,
    next: usize,
}

impl EventPool {
    pub fn new(timed: bool) -> EventPool {
        EventPool { timed, events: Vec::new(), next: 0 }
    }

    /// An event to record; the pool hands each out once until `recycle`.
    pub fn take(&mut self) -> BackendResult<CUevent> {
        if self.next == self.events.len() {
            self.events.push(create_event(self.timed)?);
        }
        self.next += 1;
        Ok(self.events[self.next - 1])
    }

    /// Called once everything recorded has completed.
    pub fn recycle(&mut self) {
        self.next = 0;
    }
}

impl Drop for EventPool {
    fn drop(&mut self) {
        for &event in &self.events {
            // SAFETY: created by `take`.
            unsafe { sys::cuEventDestroy_v2(event) };
        }
    }
}

/// Where an eager partition runs and what it leaves behind.
pub struct Eager<'a> {
    pub objects: &'a Objects,
    /// The backend's own stream: the partition starts after it and it waits for the partition.
    pub main: CUstream,
    pub events: &'a mut EventPool,
    /// With profiling: (node, queue, start, end) per command.
    pub timed: Option<&'a mut Vec<(trace_format::NodeId, usize, CUevent, CUevent)>>,
}

/// Memory the partition allocates and frees itself: allocated and freed in stream order in
/// every run, as the program did, at whatever address the pool gives it each time.
struct OwnMemory {
    mems: BTreeSet<MemId>,
    allocated: HashMap<MemId, CUdeviceptr>,
}

impl Eager<'_> {
    pub fn run(&mut self, part: &PartitionNodes<'_>) -> BackendResult<()> {
        let mut own = OwnMemory { mems: self.objects.memories.allocated_by(part), allocated: HashMap::new() };
        let streams: Vec<CUstream> = part
            .nodes
            .iter()
            .map(|(_, node)| node.queue.and_then(|q| self.objects.streams.get(q.index()).copied()).unwrap_or(self.main))
            .collect();
        // Events only where another stream waits: the program's own launches record none either.
        let mut cross_stream_preds: Vec<Vec<usize>> = vec![Vec::new(); part.nodes.len()];
        let mut signals = vec![false; part.nodes.len()];
        for &(from, to) in &part.edges {
            if from >= to || to >= part.nodes.len() {
                return Err(BackendError::Unsupported(format!("edge {from} -> {to} is not in topological order")));
            }
            if streams[from] != streams[to] {
                cross_stream_preds[to].push(from);
                signals[from] = true;
            }
        }
        let start = self.events.take()?;
        // SAFETY: streams and events of this backend.
        check(unsafe { sys::cuEventRecord(start, self.main) }, "cuEventRecord")?;
        let mut started: Vec<CUstream> = Vec::new();
        let mut done: Vec<Option<CUevent>> = vec![None; part.nodes.len()];
        for (index, (id, node)) in part.nodes.iter().enumerate() {
            let stream = streams[index];
            // SAFETY (whole block): streams and events of this backend, parameter blocks alive across calls.
            unsafe {
                if !started.contains(&stream) {
                    check(sys::cuStreamWaitEvent(stream, start, 0), "cuStreamWaitEvent")?;
                    started.push(stream);
                }
                for &from in &cross_stream_preds[index] {
                    if let Some(event) = done[from] {
                        check(sys::cuStreamWaitEvent(stream, event, 0), "cuStreamWaitEvent")?;
                    }
                }
                let timed = self.timed.is_some();
                let began = if timed { Some(self.record(stream)?) } else { None };
                let landing = self.objects.landings.get(id).map(|landing| &**landing);
                self.issue(&node.command, stream, &mut own, landing)?;
                if timed || signals[index] {
                    done[index] = Some(self.record(stream)?);
                }
                if let (Some(timed), Some(began), Some(end)) = (self.timed.as_deref_mut(), began, done[index]) {
                    timed.push((*id, node.queue.map_or(0, |q| q.index()), began, end));
                }
            }
        }
        for stream in started {
            if stream != self.main {
                let end = self.record(stream)?;
                // SAFETY: as above.
                check(unsafe { sys::cuStreamWaitEvent(self.main, end, 0) }, "cuStreamWaitEvent")?;
            }
        }
        Ok(())
    }

    fn record(&mut self, stream: CUstream) -> BackendResult<CUevent> {
        let event = self.events.take()?;
        // SAFETY: an event and a stream of this backend.
        check(unsafe { sys::cuEventRecord(event, stream) }, "cuEventRecord")?;
        Ok(event)
    }

    /// # Safety
    /// `stream` is a stream of this backend's context.
    unsafe fn issue(&mut self, command: &Command, stream: CUstream, own: &mut OwnMemory, landing: Option<&HostBuffer>) -> BackendResult<()> {
        let addresses = Addresses::new(&self.objects.memories.addresses, &own.allocated).landing_in(landing).with_textures(&self.objects.textures).with_relocation(&self.objects.relocation);
        match command {
            Command::Kernel(launch) => {
                let mut call = KernelCall::new(self.objects, addresses, launch)?;
                let params = call.node_params();
                let config = sys::CUlaunchConfig {
                    gridDimX: params.gridDimX,
                    gridDimY: params.gridDimY,
                    gridDimZ: params.gridDimZ,
                    blockDimX: params.blockDimX,
                    blockDimY: params.blockDimY,
                    blockDimZ: params.blockDimZ,
                    sharedMemBytes: params.sharedMemBytes,
                    hStream: stream,
                    attrs: call.attributes.as_mut_ptr(),
                    numAttrs: call.attributes.len() as u32,
                };
                check(sys::cuLaunchKernelEx(&config, params.func, params.kernelParams, std::ptr::null_mut()), "cuLaunchKernelEx")
                    .map_err(|error| call.refused("cuLaunchKernelEx", error))
            }
            Command::Copy(copy) => check(sys::cuMemcpy3DAsync_v2(&copy_params(self.objects, addresses, copy)?, stream), "cuMemcpy3DAsync"),
            Command::Fill(fill) => {
                let p = memset_params(self.objects, addresses, fill)?;
                let result = match p.elementSize {
                    1 => sys::cuMemsetD2D8Async(p.dst, p.pitch, p.value as u8, p.width, p.height, stream),
                    2 => sys::cuMemsetD2D16Async(p.dst, p.pitch, p.value as u16, p.width, p.height, stream),
                    _ => sys::cuMemsetD2D32Async(p.dst, p.pitch, p.value, p.width, p.height, stream),
                };
                check(result, "cuMemsetD2DAsync")
            }
            Command::Subgraph(_) | Command::Conditional(_) => {
                Err(BackendError::Unsupported(format!("a {} runs only inside a graph (see `graph::needs_graph`)", command.kind_name())))
            }
            Command::EventRecord { event } => check(sys::cuEventRecord(self.objects.event(*event)?, stream), "cuEventRecord"),
            Command::EventWait { event } => check(sys::cuStreamWaitEvent(stream, self.objects.event(*event)?, 0), "cuStreamWaitEvent"),
            Command::HostTask(_) => check(sys::cuLaunchHostFunc(stream, Some(recorded_host_code), std::ptr::null_mut()), "cuLaunchHostFunc"),
            Command::MemAlloc { mem } if own.mems.contains(mem) => {
                let size = self.objects.memories.sizes.get(mem.index()).copied().unwrap_or(0).max(1);
                let mut address = 0;
                check(sys::cuMemAllocAsync(&mut address, size as usize, stream), "cuMemAllocAsync")?;
                own.allocated.insert(*mem, address);
                Ok(())
            }
            Command::MemFree { mem } => match own.allocated.remove(mem) {
                Some(address) => check(sys::cuMemFreeAsync(address, stream), "cuMemFreeAsync"),
                None => Ok(()),
            },
            // Ordering only: other memory lives for the whole replay.
            Command::Barrier | Command::MemAlloc { .. } => Ok(()),
        }
    }
}
