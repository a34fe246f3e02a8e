//! Contexts (the devices they hold) and command queues.

use super::access::DeviceAccess;
use super::dispatch::call;
use super::state::{with_recorder, with_state};
use super::{created, info, key, succeeded, ContextNotify, Recorded};
use crate::entry::Forward;
use crate::recorder::{QueueDesc, QueueSync};
use opencl_sys::*;
use std::ffi::c_void;

pub unsafe fn create_context(
    forward: &mut Forward<'_, cl_context>,
    _properties: *const cl_context_properties,
    num_devices: cl_uint,
    devices: *const cl_device_id,
    _pfn_notify: ContextNotify,
    _user_data: *mut c_void,
    errcode_ret: *mut cl_int,
) -> Recorded {
    let Some(context) = (unsafe { created(forward, errcode_ret) }) else { return Ok(()) };
    // SAFETY: the call succeeded, so `devices` held `num_devices` devices.
    let devices = unsafe { std::slice::from_raw_parts(devices, num_devices as usize) }.to_vec();
    context_created(context, &devices)
}

pub unsafe fn create_context_from_type(
    forward: &mut Forward<'_, cl_context>,
    _properties: *const cl_context_properties,
    _device_type: cl_device_type,
    _pfn_notify: ContextNotify,
    _user_data: *mut c_void,
    errcode_ret: *mut cl_int,
) -> Recorded {
    let Some(context) = (unsafe { created(forward, errcode_ret) }) else { return Ok(()) };
    let bytes = info::bytes(|size, value, size_ret| call!(clGetContextInfo(context, CL_CONTEXT_DEVICES, size, value, size_ret)));
    let devices: Vec<cl_device_id> = bytes
        .unwrap_or_default()
        .chunks_exact(size_of::<cl_device_id>())
        .map(|chunk| usize::from_ne_bytes(chunk.try_into().unwrap_or_default()) as cl_device_id)
        .collect();
    context_created(context, &devices)
}

fn context_created(context: cl_context, devices: &[cl_device_id]) -> Recorded {
    with_recorder(|state, recorder| {
        if let Some(&first) = devices.first() {
            state.memories.context_devices.insert(key(context), first);
        }
        for &device in devices {
            recorder.device_seen(key(device), info::device(device));
        }
    })
}

pub unsafe fn create_queue(
    forward: &mut Forward<'_, cl_command_queue>,
    context: cl_context,
    device: cl_device_id,
    properties: cl_command_queue_properties,
    errcode_ret: *mut cl_int,
) -> Recorded {
    let Some(queue) = (unsafe { created(forward, errcode_ret) }) else { return Ok(()) };
    queue_created(queue, context, device, properties, 0)
}

pub unsafe fn create_queue_with_properties(
    forward: &mut Forward<'_, cl_command_queue>,
    context: cl_context,
    device: cl_device_id,
    properties: *const cl_queue_properties,
    errcode_ret: *mut cl_int,
) -> Recorded {
    let Some(queue) = (unsafe { created(forward, errcode_ret) }) else { return Ok(()) };
    let (mut flags, mut priority) = (0, 0);
    // SAFETY: the call succeeded, so the list is null or zero-terminated (name, value) pairs.
    let mut pair = properties;
    while !pair.is_null() && unsafe { *pair } != 0 {
        let (name, value) = unsafe { (*pair, *pair.add(1)) };
        match name {
            name if name == u64::from(CL_QUEUE_PROPERTIES) => flags = value,
            CL_QUEUE_PRIORITY_KHR => priority = value as i32,
            _ => {}
        }
        pair = unsafe { pair.add(2) };
    }
    queue_created(queue, context, device, flags, priority)
}

fn queue_created(
    queue: cl_command_queue,
    context: cl_context,
    device: cl_device_id,
    flags: cl_command_queue_properties,
    priority: i32,
) -> Recorded {
    let desc = QueueDesc {
        in_order: flags & CL_QUEUE_OUT_OF_ORDER_EXEC_MODE_ENABLE == 0,
        sync: QueueSync::Independent,
        group: key(context),
        device: Some(key(device)),
        flags,
        priority,
        label: format!("command queue {queue:p}"),
    };
    with_recorder(|state, recorder| {
        state.memories.queues.insert(key(queue));
        state.references.created(key(queue));
        recorder.queue_created(key(queue), desc)
    })
}

pub unsafe fn retain_queue(forward: &mut Forward<'_, cl_int>, queue: cl_command_queue) -> Recorded {
    if succeeded(forward) {
        with_state(|state| state.references.retained(key(queue)));
    }
    Ok(())
}

pub unsafe fn release_queue(forward: &mut Forward<'_, cl_int>, queue: cl_command_queue) -> Recorded {
    if with_state(|state| state.references.released(key(queue))) {
        // The last reference: its pending work closes while the queue can still be waited for
        // (without the shim's locks: an event callback on another thread may need a hook).
        if with_recorder(|_, recorder| recorder.queue_busy(key(queue)))? {
            call!(clFinish(queue));
        }
        with_recorder(|state, recorder| {
            state.memories.queues.remove(&key(queue));
            recorder.queue_released(key(queue), "clReleaseCommandQueue", &DeviceAccess::new(&state.memories))
        })?;
    }
    forward.call();
    Ok(())
}
