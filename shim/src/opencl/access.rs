//! How the recorder reads OpenCL memory and waits for queues: with the shim's own calls on
//! a queue of its own per context, so nothing the program waits on is involved.

use super::dispatch::call;
use super::key;
use super::state::{Addressing, MemObject, Memories};
use super::unified_memory;
use crate::recorder::{Key, MemoryAccess};
use opencl_sys::{
    cl_command_queue, cl_context, cl_int, cl_mem, CL_MEM_HOST_NO_ACCESS, CL_MEM_HOST_WRITE_ONLY, CL_MEM_READ_WRITE,
    CL_SUCCESS, CL_TRUE,
};
use std::cell::RefCell;
use crate::fast_hash::HashMap;
use std::ffi::c_void;
use std::ptr::{null, null_mut};

pub struct DeviceAccess<'a> {
    memories: &'a Memories,
    /// The shim's queues, created on first read and released when the access ends.
    queues: RefCell<HashMap<Key, cl_command_queue>>,
}

impl<'a> DeviceAccess<'a> {
    pub fn new(memories: &'a Memories) -> DeviceAccess<'a> {
        DeviceAccess { memories, queues: RefCell::new(HashMap::default()) }
    }

    fn queue(&self, context: cl_context) -> Option<cl_command_queue> {
        if let Some(&queue) = self.queues.borrow().get(&key(context)) {
            return Some(queue);
        }
        let device = *self.memories.context_devices.get(&key(context))?;
        let mut error: cl_int = CL_SUCCESS;
        let mut queue: cl_command_queue = call!(clCreateCommandQueueWithProperties(context, device, null(), &mut error));
        if queue.is_null() {
            queue = call!(clCreateCommandQueue(context, device, 0, &mut error));
        }
        if queue.is_null() || error != CL_SUCCESS {
            crate::log::warning!("cannot create the shim's own queue to read memory (error {error})");
            return None;
        }
        self.queues.borrow_mut().insert(key(context), queue);
        Some(queue)
    }

    /// Reads memory the host may not read directly through a temporary copy (an image's lands
    /// packed, as `clEnqueueCopyImageToBuffer` lays it out).
    fn read_through_copy(&self, queue: cl_command_queue, object: &MemObject, mem: cl_mem, into: &mut [u8]) -> cl_int {
        let mut error: cl_int = CL_SUCCESS;
        let staging: cl_mem = call!(clCreateBuffer(object.context, CL_MEM_READ_WRITE, into.len(), null_mut(), &mut error));
        if staging.is_null() {
            return error;
        }
        let mut status = match &object.image {
            Some(image) => {
                let region = image.whole_region().map(|value| value as usize);
                call!(clEnqueueCopyImageToBuffer(queue, mem, staging, [0usize; 3].as_ptr(), region.as_ptr(), 0, 0, null(), null_mut()))
            }
            None => call!(clEnqueueCopyBuffer(queue, mem, staging, 0, 0, into.len(), 0, null(), null_mut())),
        };
        if status == CL_SUCCESS {
            status = call!(clEnqueueReadBuffer(queue, staging, CL_TRUE, 0, into.len(), into.as_mut_ptr().cast(), 0, null(), null_mut()));
        }
        call!(clReleaseMemObject(staging));
        status
    }
}

impl MemoryAccess for DeviceAccess<'_> {
    fn drain(&self) {
        for &queue in &self.memories.queues {
            call!(clFinish(queue as usize as cl_command_queue));
        }
    }

    fn read(&self, mem: Key, size: u64) -> Option<Vec<u8>> {
        let object = self.memories.objects.get(&mem)?;
        let queue = self.queue(object.context)?;
        let mut contents = crate::large_buffers::of_len(usize::try_from(size).ok()?);
        let (length, into) = (contents.len(), contents.as_mut_ptr().cast::<c_void>());
        let status = if let Addressing::Unified { platform, .. } = object.addressing {
            unified_memory::read(platform, queue, into, mem as usize as *const c_void, length)
        } else if object.addressing == Addressing::Svm {
            call!(clEnqueueSVMMemcpy(queue, CL_TRUE, into, mem as usize as *const c_void, length, 0, null(), null_mut()))
        } else if object.flags & (CL_MEM_HOST_NO_ACCESS | CL_MEM_HOST_WRITE_ONLY) != 0 {
            self.read_through_copy(queue, object, mem as usize as cl_mem, &mut contents)
        } else if let Some(image) = &object.image {
            let region = image.whole_region().map(|value| value as usize);
            let (row_pitch, slice_pitch) = image.whole_host_pitches();
            let origin = [0usize; 3];
            call!(clEnqueueReadImage(queue, mem as usize as cl_mem, CL_TRUE, origin.as_ptr(), region.as_ptr(), row_pitch, slice_pitch, into, 0, null(), null_mut()))
        } else {
            call!(clEnqueueReadBuffer(queue, mem as usize as cl_mem, CL_TRUE, 0, length, into, 0, null(), null_mut()))
        };
        if status != CL_SUCCESS {
            crate::log::warning!("cannot read memory {mem:#x} back (error {status})");
            return None;
        }
        Some(contents)
    }
}

impl Drop for DeviceAccess<'_> {
    fn drop(&mut self) {
        for (_, queue) in self.queues.borrow_mut().drain() {
            call!(clReleaseCommandQueue(queue));
        }
    }
}
