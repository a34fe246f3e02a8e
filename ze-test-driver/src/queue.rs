//! Command queues, which execute closed regular command lists, and fences.

use crate::common::*;
use crate::device::{check_device, Context};
use crate::event::wait;
use crate::list::{CommandList, Kind};
use crate::opencl::{cl, runtime, Runtime};
use crate::submit::{submit, ClQueue};
use opencl_sys::*;
use std::sync::Mutex;
use ze_sys::*;

pub struct CommandQueue {
    queue: ClQueue,
    synchronous: bool,
}

impl Handle for CommandQueue {
    type Raw = _ze_command_queue_handle_t;
}

pub unsafe fn create(context: ze_context_handle_t, device: ze_device_handle_t, desc: *const ze_command_queue_desc_t, queue: *mut ze_command_queue_handle_t) -> ZeResult<()> {
    unsafe { Context::from_handle(context) }?;
    check_device(device)?;
    let rt = runtime()?;
    let desc = unsafe { desc.as_ref() }.ok_or(ZE_RESULT_ERROR_INVALID_NULL_POINTER)?;
    let created = CommandQueue { queue: ClQueue::new(rt, false)?, synchronous: desc.mode == ZE_COMMAND_QUEUE_MODE_SYNCHRONOUS };
    unsafe { put(queue, created.into_handle()) }
}

pub unsafe fn destroy(queue: ze_command_queue_handle_t) -> ZeResult<()> {
    unsafe { CommandQueue::destroy(queue) }
}

/// Submits one closed regular list; it starts after everything submitted to the queue before it.
fn run(rt: &Runtime, queue: &ClQueue, list: &CommandList) -> ZeResult<()> {
    if !matches!(list.kind, Kind::Regular { .. }) {
        return Err(ZE_RESULT_ERROR_INVALID_COMMAND_LIST_TYPE);
    }
    let state = list.lock();
    if !state.closed {
        return Err(ZE_RESULT_ERROR_INVALID_ARGUMENT);
    }
    queue.barrier(rt)?;
    let mut previous: Option<cl_event> = None;
    let mut outcome = Ok(());
    for command in &state.commands {
        match submit(rt, queue, command, if list.in_order { previous } else { None }) {
            Ok(event) => {
                if let Some(done) = previous.replace(event) {
                    unsafe { cl!(rt, clReleaseEvent(done)) };
                }
            }
            Err(error) => {
                outcome = Err(error);
                break;
            }
        }
    }
    if let Some(last) = previous {
        unsafe { cl!(rt, clReleaseEvent(last)) };
    }
    outcome
}

pub unsafe fn execute(queue: ze_command_queue_handle_t, count: u32, lists: *mut ze_command_list_handle_t, fence: ze_fence_handle_t) -> ZeResult<()> {
    let queue = unsafe { CommandQueue::from_handle(queue) }?;
    let rt = runtime()?;
    if count > 0 && lists.is_null() {
        return Err(ZE_RESULT_ERROR_INVALID_NULL_POINTER);
    }
    for index in 0..count as usize {
        let list = unsafe { CommandList::from_handle(*lists.add(index)) }?;
        run(rt, &queue.queue, list)?;
    }
    if !fence.is_null() {
        unsafe { Fence::from_handle(fence) }?.signal(rt, queue.queue.marker(rt)?);
    }
    if queue.synchronous {
        synchronize_queue(rt, &queue.queue, u64::MAX)?;
    }
    Ok(())
}

fn synchronize_queue(rt: &Runtime, queue: &ClQueue, timeout: u64) -> ZeResult<()> {
    let marker = queue.marker(rt)?;
    let waited = wait(rt, marker, timeout);
    unsafe { cl!(rt, clReleaseEvent(marker)) };
    waited
}

pub unsafe fn synchronize(queue: ze_command_queue_handle_t, timeout: u64) -> ZeResult<()> {
    let queue = unsafe { CommandQueue::from_handle(queue) }?;
    synchronize_queue(runtime()?, &queue.queue, timeout)
}

/// Signaled when the work executed before it (its marker's event) completes.
pub struct Fence {
    marker: Mutex<Option<cl_event>>,
}

// OpenCL events may be used from any thread.
unsafe impl Send for Fence {}
unsafe impl Sync for Fence {}

impl Handle for Fence {
    type Raw = _ze_fence_handle_t;
}

impl Fence {
    fn signal(&self, rt: &Runtime, marker: cl_event) {
        if let Some(previous) = self.marker.lock().unwrap_or_else(|p| p.into_inner()).replace(marker) {
            unsafe { cl!(rt, clReleaseEvent(previous)) };
        }
    }

    fn clear(&self, rt: &Runtime) {
        if let Some(previous) = self.marker.lock().unwrap_or_else(|p| p.into_inner()).take() {
            unsafe { cl!(rt, clReleaseEvent(previous)) };
        }
    }
}

impl Drop for Fence {
    fn drop(&mut self) {
        if let Ok(rt) = runtime() {
            self.clear(rt);
        }
    }
}

pub unsafe fn create_fence(queue: ze_command_queue_handle_t, _desc: *const ze_fence_desc_t, fence: *mut ze_fence_handle_t) -> ZeResult<()> {
    unsafe { CommandQueue::from_handle(queue) }?;
    unsafe { put(fence, Fence { marker: Mutex::new(None) }.into_handle()) }
}

pub unsafe fn destroy_fence(fence: ze_fence_handle_t) -> ZeResult<()> {
    unsafe { Fence::destroy(fence) }
}

/// An unsignaled fence that nothing will signal reports `ZE_RESULT_NOT_READY` at once.
pub unsafe fn fence_synchronize(fence: ze_fence_handle_t, timeout: u64) -> ZeResult<()> {
    let fence = unsafe { Fence::from_handle(fence) }?;
    let rt = runtime()?;
    let marker = *fence.marker.lock().unwrap_or_else(|p| p.into_inner());
    let marker = marker.ok_or(ZE_RESULT_NOT_READY)?;
    unsafe { cl!(rt, clRetainEvent(marker)) };
    let waited = wait(rt, marker, timeout);
    unsafe { cl!(rt, clReleaseEvent(marker)) };
    waited
}

pub unsafe fn fence_query(fence: ze_fence_handle_t) -> ZeResult<()> {
    unsafe { fence_synchronize(fence, 0) }
}

pub unsafe fn fence_reset(fence: ze_fence_handle_t) -> ZeResult<()> {
    unsafe { Fence::from_handle(fence) }?.clear(runtime()?);
    Ok(())
}
