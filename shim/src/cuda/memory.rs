//! Device allocations, tracked by address range so that pointers into them relocate.

use super::access::DeviceAccess;
use super::state::with_recorder;
use super::streams::stream_key;
use super::sync::{quiet, settled};
use super::{device, succeeded, CUdeviceptr, CUresult, CUstream, Recorded};
use crate::entry::Forward;
use crate::recorder::{Key, MemDesc, MemShape};
use trace_format::MemKind;

/// The description of a device allocation of `size` bytes at `address`.
pub fn allocation(address: CUdeviceptr, size: u64, device: Option<Key>) -> MemDesc {
    MemDesc { shape: MemShape::Whole(MemKind::Buffer), size, address, flags: 0, device, addressable: true }
}

/// After a successful allocation: tracks it (with the stream that allocated it, if in order).
fn allocated(pointer: *mut CUdeviceptr, size: usize, ordered_by: Option<Key>) -> Recorded {
    allocated_as(pointer, size, ordered_by, MemKind::Buffer, 0)
}

fn allocated_as(pointer: *mut CUdeviceptr, size: usize, ordered_by: Option<Key>, kind: MemKind, flags: u64) -> Recorded {
    // SAFETY: the call succeeded, so it wrote the pointer.
    let address = unsafe { *pointer };
    with_recorder(|state, recorder| {
        if ordered_by.is_some_and(|queue| state.capturing.contains(&queue)) {
            // A graph's allocation: the program's graph, not the shim's business.
            return;
        }
        let device = device::current(state, recorder).map(|(_, device)| device);
        let desc = MemDesc { shape: MemShape::Whole(kind), flags, ..allocation(address, size as u64, device) };
        recorder.memory_created(address, desc);
        if let Some(queue) = ordered_by {
            state.ordered_allocations.insert(address, queue);
        }
    })
}

pub unsafe fn alloc(forward: &mut Forward<'_, CUresult>, _call: &str, pointer: *mut CUdeviceptr, size: usize) -> Recorded {
    if succeeded(forward) {
        allocated(pointer, size, None)?;
    }
    Ok(())
}

pub unsafe fn alloc_async(
    forward: &mut Forward<'_, CUresult>,
    call: &str,
    pointer: *mut CUdeviceptr,
    size: usize,
    stream: CUstream,
) -> Recorded {
    if succeeded(forward) {
        allocated(pointer, size, Some(stream_key(stream, call)))?;
    }
    Ok(())
}

pub unsafe fn alloc_from_pool_async(
    forward: &mut Forward<'_, CUresult>,
    call: &str,
    pointer: *mut CUdeviceptr,
    size: usize,
    _pool: *mut std::ffi::c_void,
    stream: CUstream,
) -> Recorded {
    unsafe { alloc_async(forward, call, pointer, size, stream) }
}

pub unsafe fn alloc_pitch(
    forward: &mut Forward<'_, CUresult>,
    _call: &str,
    pointer: *mut CUdeviceptr,
    pitch: *mut usize,
    width: usize,
    height: usize,
    _element_size: std::ffi::c_uint,
) -> Recorded {
    if !succeeded(forward) {
        return Ok(());
    }
    // SAFETY: the call succeeded, so it wrote the pitch.
    let pitch = unsafe { *pitch };
    let kind = MemKind::Pitched { pitch: pitch as u64, width: width as u64, height: height as u64 };
    allocated_as(pointer, pitch * height, None, kind, 0)
}

pub unsafe fn alloc_managed(forward: &mut Forward<'_, CUresult>, _call: &str, pointer: *mut CUdeviceptr, size: usize, flags: std::ffi::c_uint) -> Recorded {
    if succeeded(forward) {
        allocated_as(pointer, size, None, MemKind::Managed, u64::from(flags))?;
    }
    Ok(())
}

/// Before a free: a window using the allocation ends while its final contents can be read.
fn releasing(address: CUdeviceptr, call: &str) -> Recorded {
    settled(|state, recorder| {
        if !recorder.is_memory(address) {
            return;
        }
        if quiet(state) {
            recorder.partial(call, "memory freed while the program captured a stream: its final contents are not read");
        } else {
            recorder.memory_released(address, call, &DeviceAccess::new(state));
        }
        state.ordered_allocations.remove(&address);
    })
}

pub unsafe fn free(forward: &mut Forward<'_, CUresult>, call: &str, pointer: CUdeviceptr) -> Recorded {
    releasing(pointer, call)?;
    forward.call();
    Ok(())
}

pub unsafe fn free_async(forward: &mut Forward<'_, CUresult>, call: &str, pointer: CUdeviceptr, _stream: CUstream) -> Recorded {
    releasing(pointer, call)?;
    forward.call();
    Ok(())
}
