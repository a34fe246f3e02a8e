//! How the recorder reads memory and waits for the device, with the shim's own calls: host and
//! shared allocations directly, device allocations through a synchronous immediate list of the
//! shim's own in their context, into host memory of its own.

use super::hooks::exported as ze;
use super::state::State;
use crate::recorder::{Key, MemoryAccess};
use std::ptr;
use trace_format::MemKind;
use ze_sys::*;

pub struct DeviceAccess<'a> {
    state: &'a State,
}

impl DeviceAccess<'_> {
    pub fn new(state: &State) -> DeviceAccess<'_> {
        DeviceAccess { state }
    }
}

impl MemoryAccess for DeviceAccess<'_> {
    /// Waits for every command queue that has no submission waiting for an event (that would
    /// wait for the program). Immediate lists cannot be waited for in specification 1.4 without
    /// an event of the program's: work appended to them before a capture starts is not waited for.
    fn drain(&self) {
        let waiting = |queue: &Key| {
            self.state
                .parked
                .get(queue)
                .is_some_and(|parked| !parked.is_empty())
        };
        for (&queue, _) in self
            .state
            .queues
            .iter()
            .filter(|(queue, kind)| !kind.immediate && !waiting(queue))
        {
            // SAFETY: a live command queue, as the program created it.
            unsafe { ze::zeCommandQueueSynchronize(queue as usize as _, u64::MAX) };
        }
    }

    fn read(&self, mem: Key, size: u64) -> Option<Vec<u8>> {
        let allocation = self.state.allocations.get(&mem)?;
        let size = usize::try_from(size).ok()?;
        if allocation.kind != MemKind::Buffer {
            // SAFETY: a live host or shared allocation of `size` bytes, which the host may read.
            return Some(
                unsafe { std::slice::from_raw_parts(mem as usize as *const u8, size) }.to_vec(),
            );
        }
        // SAFETY: a live device allocation of `size` bytes in this context.
        unsafe {
            read_device(
                allocation.context,
                allocation.device,
                mem as usize as *const _,
                size,
            )
        }
    }
}

/// Copies `size` bytes of device memory into host memory of the shim's own, through a
/// synchronous immediate list made for the copy.
unsafe fn read_device(
    context: ze_context_handle_t,
    device: ze_device_handle_t,
    source: *const std::ffi::c_void,
    size: usize,
) -> Option<Vec<u8>> {
    let desc = ze_command_queue_desc_t {
        mode: ZE_COMMAND_QUEUE_MODE_SYNCHRONOUS,
        ..ze_command_queue_desc_t::new()
    };
    let (mut list, mut staging) = (ptr::null_mut(), ptr::null_mut());
    // SAFETY: creation calls with descriptions alive for each call; everything made is released.
    unsafe {
        if ze::zeCommandListCreateImmediate(context, device, &desc, &mut list) != ZE_RESULT_SUCCESS
        {
            return None;
        }
        let mut bytes = None;
        if ze::zeMemAllocHost(
            context,
            &ze_host_mem_alloc_desc_t::new(),
            size.max(1),
            64,
            &mut staging,
        ) == ZE_RESULT_SUCCESS
        {
            if ze::zeCommandListAppendMemoryCopy(
                list,
                staging,
                source,
                size,
                ptr::null_mut(),
                0,
                ptr::null_mut(),
            ) == ZE_RESULT_SUCCESS
            {
                bytes = Some(std::slice::from_raw_parts(staging.cast::<u8>(), size).to_vec());
            }
            ze::zeMemFree(context, staging);
        }
        ze::zeCommandListDestroy(list);
        bytes
    }
}
