//! USM allocations (device, host and shared), which pointers into name, and their frees: what
//! the capture wrote into an allocation is read just before the program frees it.

use super::access::DeviceAccess;
use super::hooks::args;
use super::state::{with_recorder, Allocation};
use super::{key, succeeded, Recorded};
use crate::entry::Forward;
use crate::recorder::{HostWrites, MemDesc, MemShape};
use std::ffi::c_void;
use trace_format::MemKind;
use ze_sys::*;

/// The program got `size` bytes at `*pointer` of `kind`.
unsafe fn allocated(
    pointer: *mut *mut c_void,
    size: usize,
    context: ze_context_handle_t,
    device: ze_device_handle_t,
    kind: MemKind,
) -> Recorded {
    // SAFETY: the allocation succeeded, so it wrote the pointer.
    let address = key(unsafe { *pointer });
    // The test driver's device is the CPU: its writes would look like the host's.
    let host_writes = if kind != MemKind::Buffer { HostWrites::Unseen } else { HostWrites::None };
    let desc = MemDesc {
        shape: MemShape::Whole(kind.clone()),
        size: size as u64,
        address,
        flags: 0,
        device: (!device.is_null()).then(|| key(device)),
        addressable: true,
        host_writes,
    };
    with_recorder(|state, recorder| {
        state.allocations.insert(
            address,
            Allocation {
                context,
                device,
                kind,
            },
        );
        recorder.memory_created(address, desc);
    })
}

pub unsafe fn alloc_device(
    forward: &mut Forward<'_, ze_result_t>,
    (context, _desc, size, _alignment, device, pointer): args::zeMemAllocDevice,
) -> Recorded {
    match succeeded(forward) {
        true => unsafe { allocated(pointer, size, context, device, MemKind::Buffer) },
        false => Ok(()),
    }
}

pub unsafe fn alloc_host(
    forward: &mut Forward<'_, ze_result_t>,
    (context, _desc, size, _alignment, pointer): args::zeMemAllocHost,
) -> Recorded {
    match succeeded(forward) {
        true => unsafe { allocated(pointer, size, context, std::ptr::null_mut(), MemKind::Host) },
        false => Ok(()),
    }
}

pub unsafe fn alloc_shared(
    forward: &mut Forward<'_, ze_result_t>,
    (context, _device_desc, _host_desc, size, _alignment, device, pointer): args::zeMemAllocShared,
) -> Recorded {
    match succeeded(forward) {
        true => unsafe { allocated(pointer, size, context, device, MemKind::Shared) },
        false => Ok(()),
    }
}

/// `zeMemFree`: the program has made sure no work uses the allocation any more; what the
/// capture wrote into it is read first (and what the host received into it), then it goes.
pub unsafe fn free(
    forward: &mut Forward<'_, ze_result_t>,
    (_context, pointer): args::zeMemFree,
) -> Recorded {
    let address = key(pointer);
    with_recorder(|state, recorder| {
        if let Some(size) = recorder.memory_size(address) {
            recorder.capture_received(address as usize, size as usize);
            recorder.read_final_contents_of(&[address], &DeviceAccess::new(state));
        }
    })?;
    if succeeded(forward) {
        with_recorder(|state, recorder| {
            state.allocations.remove(&address);
            recorder.memory_released(address);
        })?;
    }
    Ok(())
}
