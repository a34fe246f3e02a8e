//! Command queues, immediate lists (each a queue of the trace) and regular lists, with their
//! order: lists executed on one command queue follow each other; an immediate list is in order
//! with `ZE_COMMAND_QUEUE_FLAG_IN_ORDER`, a regular list with `ZE_COMMAND_LIST_FLAG_IN_ORDER`
//! (both spec 1.7), else barriers and events order their commands.

use super::access::DeviceAccess;
use super::hooks::{args, exported as ze};
use super::lists::RegularList;
use super::state::{with_recorder, Queue};
use super::{key, succeeded, Recorded};
use crate::entry::Forward;
use crate::recorder::{Key, QueueDesc, QueueSync, Recorder};
use std::ffi::CStr;
use trace_format::Device;
use ze_sys::*;

const COMMAND_QUEUE_FLAG_IN_ORDER: ze_command_queue_flags_t = 1 << 1;
const COMMAND_LIST_FLAG_IN_ORDER: ze_command_list_flags_t = 1 << 3;

/// Registers `device` with the recorder, named as the driver names it.
fn device_seen(recorder: &mut Recorder, device: ze_device_handle_t) {
    let mut properties = ze_device_properties_t::new();
    // SAFETY: a device the program used, and properties of the type the call fills.
    if unsafe { ze::zeDeviceGetProperties(device, &mut properties) } != ZE_RESULT_SUCCESS {
        return;
    }
    // SAFETY: the driver writes a NUL-terminated name.
    let name = unsafe { CStr::from_ptr(properties.name.as_ptr()) }
        .to_string_lossy()
        .into_owned();
    let vendor = format!("{:#06x}", properties.vendorId);
    recorder.device_seen(
        key(device),
        Device {
            name,
            vendor,
            driver_version: String::new(),
            properties: Default::default(),
        },
    );
}

/// A queue of the trace for a command queue or an immediate list.
unsafe fn queue_created(
    context: ze_context_handle_t,
    device: ze_device_handle_t,
    desc: *const ze_command_queue_desc_t,
    queue: Key,
    immediate: bool,
) -> Recorded {
    // SAFETY: the creation succeeded with this description.
    let desc = unsafe { desc.as_ref() }.copied().unwrap_or_default();
    let in_order = !immediate || desc.flags & COMMAND_QUEUE_FLAG_IN_ORDER != 0;
    let label = format!(
        "{} {queue:#x}",
        if immediate {
            "immediate list"
        } else {
            "command queue"
        }
    );
    with_recorder(|state, recorder| {
        state.queues.insert(
            queue,
            Queue {
                synchronous: desc.mode == ZE_COMMAND_QUEUE_MODE_SYNCHRONOUS,
                immediate,
            },
        );
        device_seen(recorder, device);
        let queue_desc = QueueDesc {
            in_order,
            sync: QueueSync::Independent,
            group: key(context),
            device: Some(key(device)),
            flags: u64::from(desc.flags),
            priority: desc.priority as i32,
            label,
        };
        recorder.queue_created(queue, queue_desc);
    })
}

pub unsafe fn create_queue(
    forward: &mut Forward<'_, ze_result_t>,
    (context, device, desc, queue): args::zeCommandQueueCreate,
) -> Recorded {
    match succeeded(forward) && !queue.is_null() {
        // SAFETY: the creation wrote the queue.
        true => unsafe { queue_created(context, device, desc, key(*queue), false) },
        false => Ok(()),
    }
}

pub unsafe fn create_immediate(
    forward: &mut Forward<'_, ze_result_t>,
    (context, device, desc, list): args::zeCommandListCreateImmediate,
) -> Recorded {
    match succeeded(forward) && !list.is_null() {
        // SAFETY: the creation wrote the list.
        true => unsafe { queue_created(context, device, desc, key(*list), true) },
        false => Ok(()),
    }
}

pub unsafe fn create_list(
    forward: &mut Forward<'_, ze_result_t>,
    (_context, _device, desc, list): args::zeCommandListCreate,
) -> Recorded {
    if !succeeded(forward) || list.is_null() {
        return Ok(());
    }
    // SAFETY: the creation succeeded with this description and wrote the list.
    let (flags, list) = (
        unsafe { desc.as_ref() }.map_or(0, |desc| desc.flags),
        key(unsafe { *list }),
    );
    with_recorder(|state, _| {
        state.lists.insert(
            list,
            RegularList::new(flags & COMMAND_LIST_FLAG_IN_ORDER != 0),
        );
    })
}

pub unsafe fn reset_list(
    forward: &mut Forward<'_, ze_result_t>,
    (list,): args::zeCommandListReset,
) -> Recorded {
    if succeeded(forward) {
        with_recorder(|state, _| state.lists.get_mut(&key(list)).map(RegularList::reset))?;
    }
    Ok(())
}

/// The program waited for the queue's work before destroying it (the specification asks it to).
fn released(call: &str, queue: Key) -> Recorded {
    with_recorder(|state, recorder| {
        state.queues.remove(&queue);
        state.lists.remove(&queue);
        recorder.queue_released(queue, call, &DeviceAccess::new(state));
    })
}

pub unsafe fn destroy_queue(
    forward: &mut Forward<'_, ze_result_t>,
    (queue,): args::zeCommandQueueDestroy,
) -> Recorded {
    match succeeded(forward) {
        true => released("zeCommandQueueDestroy", key(queue)),
        false => Ok(()),
    }
}

pub unsafe fn destroy_list(
    forward: &mut Forward<'_, ze_result_t>,
    (list,): args::zeCommandListDestroy,
) -> Recorded {
    match succeeded(forward) {
        true => released("zeCommandListDestroy", key(list)),
        false => Ok(()),
    }
}

/// The context's allocations go with it: what the capture wrote into them is read first.
pub unsafe fn destroy_context(
    forward: &mut Forward<'_, ze_result_t>,
    (context,): args::zeContextDestroy,
) -> Recorded {
    with_recorder(|state, recorder| {
        let gone: Vec<Key> = state
            .allocations
            .iter()
            .filter(|(_, allocation)| allocation.context == context)
            .map(|(&address, _)| address)
            .collect();
        recorder.read_final_contents_of(&gone, &DeviceAccess::new(state));
        for address in gone {
            state.allocations.remove(&address);
            recorder.memory_released(address);
        }
    })?;
    forward.call();
    Ok(())
}
