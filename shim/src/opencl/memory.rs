//! Buffers, sub-buffers and SVM allocations.

use super::dispatch::call;
use super::state::{with_recorder, with_state, Addressing, MemObject};
use super::{created, info, key, succeeded, Recorded, SvmFreeNotify};
use crate::entry::Forward;
use super::access::DeviceAccess;
use crate::recorder::{HostWrites, Key, MemDesc, MemShape, SyncScope};
use libc::size_t;
use opencl_sys::*;
use std::ffi::c_void;
use trace_format::{MemKind, UnifiedKind};

pub unsafe fn create_buffer(
    forward: &mut Forward<'_, cl_mem>,
    context: cl_context,
    flags: cl_mem_flags,
    size: size_t,
    host_ptr: *mut c_void,
    errcode_ret: *mut cl_int,
) -> Recorded {
    let Some(buffer) = (unsafe { created(forward, errcode_ret) }) else { return Ok(()) };
    let object = MemObject { context, flags, addressing: Addressing::Handle, image: None };
    // A buffer over SVM or unified memory (`CL_MEM_USE_HOST_PTR` with a pointer into it, as
    // pyopencl's `SVMAllocation.as_buffer` makes) is that memory: a view of it, as a sub-buffer is.
    let over = match flags & CL_MEM_USE_HOST_PTR {
        0 => None,
        _ => with_recorder(|_, recorder| {
            let inside = recorder.locate(host_ptr as usize as u64);
            inside.filter(|&(parent, offset)| recorder.memory_size(parent).is_some_and(|held| offset + size as u64 <= held))
        })?,
    };
    let shape = match over {
        Some((parent, offset)) => MemShape::Within { parent, offset },
        None => MemShape::Whole(MemKind::Buffer),
    };
    memory_created(key(buffer), object, shape, size as u64)
}

pub unsafe fn create_buffer_with_properties(
    forward: &mut Forward<'_, cl_mem>,
    context: cl_context,
    _properties: *const cl_mem_properties,
    flags: cl_mem_flags,
    size: size_t,
    host_ptr: *mut c_void,
    errcode_ret: *mut cl_int,
) -> Recorded {
    unsafe { create_buffer(forward, context, flags, size, host_ptr, errcode_ret) }
}

pub unsafe fn create_sub_buffer(
    forward: &mut Forward<'_, cl_mem>,
    buffer: cl_mem,
    flags: cl_mem_flags,
    create_type: cl_buffer_create_type,
    create_info: *const c_void,
    errcode_ret: *mut cl_int,
) -> Recorded {
    let Some(sub_buffer) = (unsafe { created(forward, errcode_ret) }) else { return Ok(()) };
    if create_type != CL_BUFFER_CREATE_TYPE_REGION {
        return with_recorder(|_, recorder| recorder.partial("clCreateSubBuffer", "an unknown creation type"));
    }
    // SAFETY: the call succeeded with a region, so `create_info` points to one.
    let region = unsafe { &*create_info.cast::<cl_buffer_region>() };
    let context: Option<cl_context> =
        info::value(|size, value, size_ret| call!(clGetMemObjectInfo(buffer, CL_MEM_CONTEXT, size, value, size_ret)));
    let shape = MemShape::Within { parent: key(buffer), offset: region.origin as u64 };
    let object = MemObject { context: context.unwrap_or(std::ptr::null_mut()), flags, addressing: Addressing::Handle, image: None };
    memory_created(key(sub_buffer), object, shape, region.size as u64)
}

pub unsafe fn svm_alloc(
    forward: &mut Forward<'_, *mut c_void>,
    context: cl_context,
    flags: cl_svm_mem_flags,
    size: size_t,
    _alignment: cl_uint,
) -> Recorded {
    let pointer = forward.call();
    if pointer.is_null() {
        return Ok(());
    }
    let object = MemObject { context, flags, addressing: Addressing::Svm, image: None };
    memory_created(key(pointer), object, MemShape::Whole(MemKind::Shared), size as u64)
}

/// Registers memory `mem` (buffer, sub-buffer, image or SVM allocation) of `size` bytes.
pub(super) fn memory_created(mem: Key, object: MemObject, shape: MemShape, size: u64) -> Recorded {
    with_recorder(|state, recorder| {
        let (addressing, flags) = (object.addressing, object.flags);
        state.memories.objects.insert(mem, object);
        state.references.created(mem);
        // SVM, host and shared unified memory, and memory over the program's own host memory:
        // the host writes it directly. Unseen: on a CPU device the device's own writes would
        // look like the host's.
        let host_writes = match addressing {
            Addressing::Unified { kind: UnifiedKind::Device, .. } => HostWrites::None,
            Addressing::Svm | Addressing::Unified { .. } => HostWrites::Unseen,
            Addressing::Handle if flags & CL_MEM_USE_HOST_PTR != 0 => HostWrites::Unseen,
            Addressing::Handle => HostWrites::None,
        };
        let desc = MemDesc { shape, size, address: mem, flags, device: None, addressable: addressing.by_pointer(), host_writes };
        recorder.memory_created(mem, desc);
    })
}

pub unsafe fn retain(forward: &mut Forward<'_, cl_int>, mem: cl_mem) -> Recorded {
    if succeeded(forward) {
        with_state(|state| state.references.retained(key(mem)));
    }
    Ok(())
}

/// The program's last release: what the capture wrote into the memory is read first (a program
/// whose results never reach the host leaves them only there: clpeak's), unless its storage is the
/// program's own host memory (`CL_MEM_USE_HOST_PTR`), which the program may have changed or freed
/// by then (OpenCL-CTS test_buffers frees it first).
pub unsafe fn release(forward: &mut Forward<'_, cl_int>, mem: cl_mem) -> Recorded {
    if with_state(|state| state.references.released(key(mem))) {
        let host_storage = with_recorder(|state, _| state.memories.objects.get(&key(mem)).is_some_and(|object| object.flags & CL_MEM_USE_HOST_PTR != 0))?;
        if !host_storage {
            final_contents_before_release("clReleaseMemObject", key(mem))?;
        }
        released(key(mem))?;
    }
    forward.call();
    Ok(())
}

pub unsafe fn svm_free(forward: &mut Forward<'_, ()>, _context: cl_context, pointer: *mut c_void) -> Recorded {
    pointer_freeing("clSVMFree", pointer)?;
    forward.call();
    Ok(())
}

/// `clEnqueueSVMFree`: the allocations go once the command runs (pyopencl frees its SVM so), so
/// their final contents are read first, as `clSVMFree`'s are; the command only orders.
pub unsafe fn enqueue_svm_free(
    forward: &mut Forward<'_, cl_int>,
    queue: cl_command_queue,
    count: cl_uint,
    pointers: *mut *mut c_void,
    _notify: SvmFreeNotify,
    _user_data: *mut c_void,
    wait_count: cl_uint,
    waits: *const cl_event,
    event: *mut cl_event,
) -> Recorded {
    if !pointers.is_null() {
        // SAFETY: the program passes `count` pointers there.
        for &pointer in unsafe { std::slice::from_raw_parts(pointers, count as usize) } {
            pointer_freeing("clEnqueueSVMFree", pointer)?;
        }
    }
    unsafe { super::commands::ordering::order_only("clEnqueueSVMFree", forward, queue, wait_count, waits, event) }
}

/// Memory the program names by pointer (SVM, unified shared memory) is about to be freed.
pub(super) fn pointer_freeing(call: &str, pointer: *mut c_void) -> Recorded {
    if !pointer.is_null() {
        final_contents_before_release(call, key(pointer))?;
        released(key(pointer))?;
    }
    Ok(())
}

/// Memory `mem` is about to go: the queues with pending work that writes it are waited for
/// (without the shim's locks: an event callback on another thread may need a hook) and close as
/// a window, then the final contents of what the capture wrote into it are read. A release does
/// not wait for the commands that use the memory; the shim's wait only delays the program.
fn final_contents_before_release(call: &str, mem: Key) -> Recorded {
    let (busy, scope) = with_recorder(|_, recorder| {
        let busy = if recorder.pending_writes(mem) { recorder.busy_queues() } else { Vec::new() };
        let scope = recorder.wait_begins(SyncScope::Queues(&busy));
        (busy, scope)
    })?;
    if !busy.is_empty() {
        for &queue in &busy {
            call!(clFinish(queue as usize as cl_command_queue));
        }
        super::sync::closed(call, scope)?;
    }
    with_recorder(|state, recorder| recorder.read_final_contents_of(&[mem], &DeviceAccess::new(&state.memories)))
}

/// Before the last reference goes: the recorder forgets the memory (pending work that uses it
/// keeps what it needs, see `Recorder::memory_released`).
fn released(mem: Key) -> Recorded {
    with_recorder(|state, recorder| {
        recorder.memory_released(mem);
        // Sub-buffers keep their parent in the recorder; the shim must still read it then.
        if !recorder.is_memory(mem) {
            state.memories.objects.remove(&mem);
        }
    })
}
