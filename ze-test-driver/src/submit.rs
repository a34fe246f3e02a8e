//! Commands as the driver keeps them, and their submission to an OpenCL queue. Queues are
//! out-of-order, as Level Zero command lists are: commands only start in order, and only
//! barriers, events and in-order lists order their completion. An OpenCL barrier (or marker)
//! without a wait list waits for everything submitted before it on its queue, with one it waits
//! for those events; a barrier also holds back everything submitted after it.

use crate::common::ZeResult;
use crate::event::{await_events, reset_after, signal_after, Event};
use crate::kernel::Dispatch;
use crate::opencl::{check, cl, Runtime};
use crate::spirv::ArgKind;
use opencl_sys::*;
use std::ffi::c_void;
use std::ptr;
use ze_sys::*;

/// A kernel launch with the kernel's state at append time.
pub struct Launch {
    pub kernel: cl_kernel,
    /// The launch's own copy of the kernel (regular lists), released with it.
    pub owned: bool,
    pub args: Vec<ArgKind>,
    pub group_count: [u32; 3],
    pub dispatch: Dispatch,
}

/// One side of a region copy: the pointer, the region, and its row and slice pitches.
#[derive(Clone, Copy)]
pub struct RegionSide {
    pub pointer: usize,
    pub region: ze_copy_region_t,
    pub pitch: usize,
    pub slice_pitch: usize,
}

impl RegionSide {
    /// The address of row `y` of slice `z` of the region.
    fn row(&self, y: u32, z: u32) -> usize {
        let region = &self.region;
        let slice_pitch = if self.slice_pitch == 0 { self.pitch * region.height as usize } else { self.slice_pitch };
        self.pointer + (region.originZ + z) as usize * slice_pitch + (region.originY + y) as usize * self.pitch + region.originX as usize
    }
}

pub enum Operation {
    Launch(Launch),
    Copy { dst: usize, src: usize, size: usize },
    CopyRegion { dst: RegionSide, src: RegionSide },
    Fill { dst: usize, pattern: Vec<u8>, size: usize },
    /// Waits for its events, or everything before it, and holds back what follows (barriers,
    /// waits on events).
    Barrier,
    /// Completes after everything before it (event signals, memory hints).
    Marker,
    /// Resets events when it runs.
    Reset(Vec<&'static Event>),
}

pub struct Command {
    pub operation: Operation,
    pub signal: Option<&'static Event>,
    pub waits: Vec<&'static Event>,
}

impl Command {
    pub fn release(self, rt: &Runtime) {
        if let Operation::Launch(Launch { kernel, owned: true, .. }) = self.operation {
            // SAFETY: the launch's own kernel.
            unsafe { cl!(rt, clReleaseKernel(kernel)) };
        }
    }
}

/// An OpenCL queue owned by a command queue or an immediate command list.
pub struct ClQueue(pub cl_command_queue);

// The runtime's queues are thread-safe.
unsafe impl Send for ClQueue {}
unsafe impl Sync for ClQueue {}

impl ClQueue {
    /// Out-of-order unless `in_order`, with profiling for kernel timestamps.
    pub fn new(rt: &Runtime, in_order: bool) -> ZeResult<ClQueue> {
        let mut flags = CL_QUEUE_PROFILING_ENABLE;
        if !in_order {
            flags |= CL_QUEUE_OUT_OF_ORDER_EXEC_MODE_ENABLE;
        }
        let properties = [CL_QUEUE_PROPERTIES as cl_queue_properties, flags, 0];
        let mut code = CL_SUCCESS;
        let queue = unsafe { cl!(rt, clCreateCommandQueueWithProperties(rt.context, rt.device, properties.as_ptr(), &mut code)) };
        check(code)?;
        Ok(ClQueue(queue))
    }

    /// A marker after everything submitted so far.
    pub fn marker(&self, rt: &Runtime) -> ZeResult<cl_event> {
        let mut event = ptr::null_mut();
        check(unsafe { cl!(rt, clEnqueueMarkerWithWaitList(self.0, 0, ptr::null(), &mut event)) })?;
        Ok(event)
    }

    /// A barrier after everything submitted so far, which holds back everything after it.
    pub fn barrier(&self, rt: &Runtime) -> ZeResult<()> {
        check(unsafe { cl!(rt, clEnqueueBarrierWithWaitList(self.0, 0, ptr::null(), ptr::null_mut())) })
    }
}

impl Drop for ClQueue {
    fn drop(&mut self) {
        if let Ok(rt) = crate::opencl::runtime() {
            // SAFETY: the queue is this object's; its work ends before it goes.
            unsafe {
                cl!(rt, clFinish(self.0));
                cl!(rt, clReleaseCommandQueue(self.0));
            }
        }
    }
}

/// Events as OpenCL takes a wait list.
fn wait_list(events: &[cl_event]) -> (cl_uint, *const cl_event) {
    (events.len() as cl_uint, if events.is_empty() { ptr::null() } else { events.as_ptr() })
}

/// Submits `command` on `queue`, after `after` too when given (in-order lists); returns the
/// event of its completion (with its signal, if it has one), which the caller releases.
pub fn submit(rt: &Runtime, queue: &ClQueue, command: &Command, after: Option<cl_event>) -> ZeResult<cl_event> {
    let mut waits: Vec<cl_event> = after.into_iter().collect();
    let mut awaited = Vec::new();
    if !command.waits.is_empty() {
        awaited = await_events(rt, queue.0, &command.waits, &waits)?;
        waits.extend_from_slice(&awaited);
    }
    let submitted = enqueue(rt, queue.0, &command.operation, &waits);
    for user_event in awaited {
        unsafe { cl!(rt, clReleaseEvent(user_event)) };
    }
    let event = submitted?;
    let Some(signal) = command.signal else { return Ok(event) };
    let signaled = signal_after(rt, queue.0, signal, event);
    unsafe { cl!(rt, clReleaseEvent(event)) };
    signaled
}

fn enqueue(rt: &Runtime, queue: cl_command_queue, operation: &Operation, waits: &[cl_event]) -> ZeResult<cl_event> {
    let (count, list) = wait_list(waits);
    let mut event: cl_event = ptr::null_mut();
    // SAFETY (whole block): the runtime's queue; pointers the program gave, valid until the work
    // completes (the program's responsibility, as on any driver).
    let code = unsafe {
        match operation {
            Operation::Launch(launch) if launch.group_count.contains(&0) => cl!(rt, clEnqueueMarkerWithWaitList(queue, count, list, &mut event)),
            Operation::Launch(launch) => {
                let local = launch.dispatch.group_size.map(|size| size as usize);
                let global = [0, 1, 2].map(|d| launch.group_count[d] as usize * local[d]);
                let offset = launch.dispatch.offset.map(|o| o as usize);
                cl!(rt, clEnqueueNDRangeKernel(queue, launch.kernel, 3, offset.as_ptr(), global.as_ptr(), local.as_ptr(), count, list, &mut event))
            }
            Operation::Copy { dst, src, size } => (rt.usm.memcpy)(queue, CL_FALSE, *dst as *mut c_void, *src as *const c_void, *size, count, list, &mut event),
            Operation::CopyRegion { dst, src } => return copy_region(rt, queue, dst, src, waits),
            Operation::Fill { dst, pattern, size } => {
                (rt.usm.fill)(queue, *dst as *mut c_void, pattern.as_ptr().cast(), pattern.len(), *size, count, list, &mut event)
            }
            Operation::Barrier => cl!(rt, clEnqueueBarrierWithWaitList(queue, count, list, &mut event)),
            Operation::Marker => cl!(rt, clEnqueueMarkerWithWaitList(queue, count, list, &mut event)),
            Operation::Reset(events) => return reset_after(rt, queue, events.clone(), waits),
        }
    };
    check(code)?;
    Ok(event)
}

/// A region copy as one copy per row, joined by a marker whose event stands for them all.
fn copy_region(rt: &Runtime, queue: cl_command_queue, dst: &RegionSide, src: &RegionSide, waits: &[cl_event]) -> ZeResult<cl_event> {
    let (count, list) = wait_list(waits);
    let (width, height, depth) = (src.region.width as usize, src.region.height, src.region.depth);
    let mut rows = Vec::with_capacity((height * depth) as usize);
    let mut outcome = Ok(());
    'rows: for z in 0..depth {
        for y in 0..height {
            let mut row = ptr::null_mut();
            let code = unsafe { (rt.usm.memcpy)(queue, CL_FALSE, dst.row(y, z) as *mut c_void, src.row(y, z) as *const c_void, width, count, list, &mut row) };
            if let Err(error) = check(code) {
                outcome = Err(error);
                break 'rows;
            }
            rows.push(row);
        }
    }
    let (joined, joined_list) = wait_list(&rows);
    let mut event = ptr::null_mut();
    if outcome.is_ok() {
        outcome = check(unsafe { cl!(rt, clEnqueueMarkerWithWaitList(queue, joined, joined_list, &mut event)) });
    }
    for row in rows {
        unsafe { cl!(rt, clReleaseEvent(row)) };
    }
    outcome.map(|()| event)
}

#[cfg(test)]
mod tests {
    use super::RegionSide;
    use ze_sys::ze_copy_region_t;

    #[test]
    fn region_rows_start_at_their_origin_in_pitched_memory() {
        let region = ze_copy_region_t { originX: 4, originY: 1, originZ: 2, width: 8, height: 3, depth: 2 };
        let side = RegionSide { pointer: 0x1000, region, pitch: 64, slice_pitch: 1024 };
        assert_eq!(side.row(0, 0), 0x1000 + 2 * 1024 + 64 + 4);
        assert_eq!(side.row(2, 1), 0x1000 + 3 * 1024 + 3 * 64 + 4);
        // A slice pitch of zero means slices of `height` rows.
        let packed = RegionSide { slice_pitch: 0, ..side };
        assert_eq!(packed.row(0, 0), 0x1000 + 2 * 3 * 64 + 64 + 4);
    }
}
