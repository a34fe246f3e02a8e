//! Device allocations, tracked by address range so that pointers into them relocate.

use super::access::DeviceAccess;
use super::commands::{enqueue, Enqueued, UNTRACKED_MEMORY};
use super::sync::settle;
use super::state::{with_recorder, with_state, State};
use super::streams::stream_key;
use super::hooks::driver;
use super::{device, succeeded, CUdeviceptr, CUresult, CUstream, Recorded, CUDA_SUCCESS};
use crate::entry::Forward;
use crate::recorder::{HostWrites, Key, MemDesc, MemShape, Recorder};
use std::ffi::{c_int, c_uint, c_void};
use trace_format::{Command, MemKind};

/// The description of a device allocation of `size` bytes at `address`.
pub fn allocation(address: CUdeviceptr, size: u64, device: Option<Key>) -> MemDesc {
    MemDesc { shape: MemShape::Whole(MemKind::Buffer), size, address, flags: 0, device, addressable: true, host_writes: HostWrites::None }
}

/// After a successful allocation: tracks it (with the stream that allocated it, if in order).
fn allocated(pointer: *mut CUdeviceptr, size: usize, ordered_by: Option<Key>) -> Recorded {
    allocated_as(pointer, size, ordered_by, MemKind::Buffer, 0)
}

fn allocated_as(pointer: *mut CUdeviceptr, size: usize, ordered_by: Option<Key>, kind: MemKind, flags: u64) -> Recorded {
    // SAFETY: the call succeeded, so it wrote the pointer.
    let address = unsafe { *pointer };
    track(address, size as u64, ordered_by, MemShape::Whole(kind), flags)
}

/// Tracks the memory at `address` (in the current context, which frees it when destroyed).
pub fn track(address: CUdeviceptr, size: u64, ordered_by: Option<Key>, shape: MemShape, flags: u64) -> Recorded {
    with_recorder(|state, recorder| {
        if ordered_by.is_some_and(|queue| state.capturing.contains_key(&queue)) {
            // A graph's allocation: the program's graph, not the shim's business.
            return;
        }
        let current = device::current(state, recorder);
        // Pinned, registered and managed memory: the host writes it directly, the GPU without
        // the CPU's page tables.
        let host_writable = matches!(shape, MemShape::Whole(MemKind::Host | MemKind::Managed));
        let host_writes = if host_writable { HostWrites::Watchable } else { HostWrites::None };
        let desc = MemDesc { shape, flags, host_writes, ..allocation(address, size, current.map(|(_, device)| device)) };
        recorder.memory_created(address, desc);
        if let Some((context, _)) = current {
            state.memory_contexts.insert(address, context);
        }
        if let Some(queue) = ordered_by {
            state.ordered_allocations.insert(address, queue);
        }
    })
}

/// `CUpointer_attribute` values.
pub const MEMORY_TYPE: c_int = 2;
const IS_MANAGED: c_int = 8;
const DEVICE_ORDINAL: c_int = 9;
const RANGE_START_ADDR: c_int = 11;
const RANGE_SIZE: c_int = 12;

/// Device memory the program names but the shim did not see allocated: a library's private way
/// to the driver (nvJPEG allocates through one). Where the driver knows the allocation holding
/// `pointer`, it is tracked from now on, its contents read at its first use after each host
/// synchronization: what writes it may be unseen too (nvJPEG's JPEG engine).
pub fn adopt(recorder: &mut Recorder, pointer: CUdeviceptr) -> Option<(Key, u64)> {
    let attribute = |value: *mut c_void, attribute: c_int| {
        // SAFETY: each attribute asked for has a value of the type `value` points to.
        unsafe { driver::cuPointerGetAttribute(value, attribute, pointer) == CUDA_SUCCESS }
    };
    let (mut start, mut size, mut memory_type, mut managed, mut ordinal): (CUdeviceptr, usize, c_uint, c_int, c_int) = (0, 0, 0, 0, 0);
    let known = attribute((&raw mut memory_type).cast(), MEMORY_TYPE)
        && memory_type == super::rect::CU_MEMORYTYPE_DEVICE
        && attribute((&raw mut start).cast(), RANGE_START_ADDR)
        && attribute((&raw mut size).cast(), RANGE_SIZE)
        && attribute((&raw mut managed).cast(), IS_MANAGED)
        && attribute((&raw mut ordinal).cast(), DEVICE_ORDINAL);
    if !known || size == 0 || tracks_part_of(recorder, start, size as u64) {
        return None;
    }
    let kind = if managed != 0 { MemKind::Managed } else { MemKind::Buffer };
    let desc = MemDesc { shape: MemShape::Whole(kind), host_writes: if managed != 0 { HostWrites::Watchable } else { HostWrites::Unseen }, ..allocation(start, size as u64, Some(ordinal as Key)) };
    crate::log::debug!("{pointer:#x}: adopting the allocation the driver knows there ({start:#x}, {size} bytes)");
    recorder.memory_created(start, desc);
    recorder.locate(pointer)
}

/// Whether memory the recorder tracks lies in `size` bytes from `start` (never adopted over).
fn tracks_part_of(recorder: &Recorder, start: u64, size: u64) -> bool {
    let covers_start = recorder.locate(start).is_some_and(|(mem, offset)| recorder.memory_size(mem).is_some_and(|tracked| offset < tracked));
    let last = start + size - 1;
    covers_start || recorder.locate(last).is_some_and(|(_, offset)| last - offset >= start)
}

pub unsafe fn alloc(forward: &mut Forward<'_, CUresult>, _call: &str, pointer: *mut CUdeviceptr, size: usize) -> Recorded {
    if succeeded(forward) {
        allocated(pointer, size, None)?;
    }
    Ok(())
}

/// Stream-ordered allocation: the memory comes into being at this point of its stream, a
/// `MemAlloc` node there (so it has no initial contents in the window).
pub unsafe fn alloc_async(
    forward: &mut Forward<'_, CUresult>,
    call: &'static str,
    pointer: *mut CUdeviceptr,
    size: usize,
    stream: CUstream,
) -> Recorded {
    if !succeeded(forward) {
        return Ok(());
    }
    allocated(pointer, size, Some(stream_key(stream, call)))?;
    // SAFETY: the call succeeded, so it wrote the pointer.
    let address = unsafe { *pointer };
    enqueue(forward, Enqueued::new(call, stream), |_| Vec::new(), |recorder| {
        let mem = recorder.allocated_in_order(address).ok_or(UNTRACKED_MEMORY)?;
        Ok(Command::MemAlloc { mem })
    })
}

pub unsafe fn alloc_from_pool_async(
    forward: &mut Forward<'_, CUresult>,
    call: &'static str,
    pointer: *mut CUdeviceptr,
    size: usize,
    _pool: *mut c_void,
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
    _element_size: c_uint,
) -> Recorded {
    if !succeeded(forward) {
        return Ok(());
    }
    // SAFETY: the call succeeded, so it wrote the pitch.
    let pitch = unsafe { *pitch };
    let kind = MemKind::Pitched { pitch: pitch as u64, width: width as u64, height: height as u64 };
    allocated_as(pointer, pitch * height, None, kind, 0)
}

pub unsafe fn alloc_managed(forward: &mut Forward<'_, CUresult>, _call: &str, pointer: *mut CUdeviceptr, size: usize, flags: c_uint) -> Recorded {
    if succeeded(forward) {
        allocated_as(pointer, size, None, MemKind::Managed, u64::from(flags))?;
    }
    Ok(())
}

/// Before a free: the recorder forgets the memory (pending work that uses it keeps what it
/// needs, see `Recorder::memory_released`).
pub fn releasing(address: CUdeviceptr) -> Recorded {
    with_recorder(|state, recorder| forget(state, recorder, address))
}

/// Forgets freed memory.
pub fn forget(state: &mut State, recorder: &mut Recorder, address: CUdeviceptr) {
    recorder.memory_released(address);
    forget_bookkeeping(state, address);
}

/// What the CUDA module keeps about memory at `address`, which the program freed.
fn forget_bookkeeping(state: &mut State, address: CUdeviceptr) {
    state.ordered_allocations.remove(&address);
    state.memory_contexts.remove(&address);
    state.mappings.remove(&address);
    if let Some(program) = state.variables.remove(&address) {
        if let Some(variables) = state.program_variables.get_mut(&program) {
            variables.retain(|&variable| variable != address);
        }
    }
}

/// `cuMemFree`: what the capture wrote into the memory is read before it goes (a program whose
/// results never reach the host leaves them only there).
pub unsafe fn free(forward: &mut Forward<'_, CUresult>, call: &str, pointer: CUdeviceptr) -> Recorded {
    final_contents_before_free(call, pointer)?;
    releasing(pointer)?;
    forward.call();
    Ok(())
}

/// Memory at `address` is about to be freed: work still pending that writes it is done by now
/// (the program frees memory it no longer waits for; `cuMemFree` itself synchronizes), so its
/// streams are waited for and it closes first; then the final contents of what the capture
/// wrote into it are read. Nothing waits while a stream captures.
pub fn final_contents_before_free(call: &str, address: CUdeviceptr) -> Recorded {
    if with_recorder(|_, recorder| recorder.pending_writes(address))? {
        settle(call)?;
    }
    with_recorder(|state, recorder| recorder.read_final_contents_of(&[address], &DeviceAccess::new(state)))
}

/// Stream-ordered free: the memory is gone once its stream gets here, a `MemFree` node there.
/// The window goes on: nobody can read the memory's final contents, so none are expected.
/// On a capturing stream the free is a node of the program's graph, recorded when it runs.
pub unsafe fn free_async(forward: &mut Forward<'_, CUresult>, call: &'static str, pointer: CUdeviceptr, stream: CUstream) -> Recorded {
    let queue = stream_key(stream, call);
    let (tracked, captured) = with_recorder(|state, recorder| (recorder.is_memory(pointer), state.capturing.contains_key(&queue)))?;
    if captured {
        forward.call();
        return Ok(());
    }
    if !tracked {
        return unsafe { free(forward, call, pointer) };
    }
    enqueue(forward, Enqueued::new(call, stream), |_| Vec::new(), |recorder| {
        let mem = recorder.mem_id(pointer).ok_or(UNTRACKED_MEMORY)?;
        Ok(Command::MemFree { mem })
    })?;
    if succeeded(forward) {
        with_recorder(|state, recorder| freed_in_order(state, recorder, pointer))?;
    }
    Ok(())
}

/// Memory at `address` is freed once its stream gets to where it was just submitted.
pub fn freed_in_order(state: &mut State, recorder: &mut Recorder, address: CUdeviceptr) {
    recorder.freed_in_order(address);
    forget_bookkeeping(state, address);
}

/// `cuMemAllocHost` and `cuMemHostAlloc`: pinned host memory, which kernels reach at its host
/// address (unified addressing).
pub unsafe fn alloc_host(forward: &mut Forward<'_, CUresult>, call: &str, pointer: *mut *mut c_void, size: usize) -> Recorded {
    unsafe { host_alloc(forward, call, pointer, size, 0) }
}

pub unsafe fn host_alloc(forward: &mut Forward<'_, CUresult>, _call: &str, pointer: *mut *mut c_void, size: usize, flags: c_uint) -> Recorded {
    if succeeded(forward) {
        allocated_as(pointer.cast(), size, None, MemKind::Host, u64::from(flags))?;
    }
    Ok(())
}

/// `cuMemFreeHost` and `cuMemHostUnregister`. What device work wrote into the host memory is
/// what the host received (a stream callback's thread reads it, then frees it): it is taken
/// before it goes, as the data of pending copies into it and as the final contents of the
/// memory (see `free`).
pub unsafe fn free_host(forward: &mut Forward<'_, CUresult>, call: &str, pointer: *mut c_void) -> Recorded {
    let address = pointer as CUdeviceptr;
    with_recorder(|_, recorder| {
        // Copies into it that the host waited for through a callback or query deliver their data now.
        let size = recorder.memory_size(address).unwrap_or(1);
        recorder.capture_received(address as usize, size as usize);
    })?;
    unsafe { free(forward, call, address) }
}

pub unsafe fn host_register(forward: &mut Forward<'_, CUresult>, _call: &str, pointer: *mut c_void, size: usize, flags: c_uint) -> Recorded {
    if succeeded(forward) {
        track(pointer as CUdeviceptr, size as u64, None, MemShape::Whole(MemKind::Host), u64::from(flags))?;
    }
    Ok(())
}

/// The device address of host memory, where it differs from the host address (no unified
/// addressing), names the same allocation.
pub unsafe fn host_device_pointer(
    forward: &mut Forward<'_, CUresult>,
    _call: &str,
    device_pointer: *mut CUdeviceptr,
    pointer: *mut c_void,
    _flags: c_uint,
) -> Recorded {
    if !succeeded(forward) {
        return Ok(());
    }
    // SAFETY: the call succeeded, so it wrote the device pointer.
    let device_pointer = unsafe { *device_pointer };
    with_recorder(|_, recorder| {
        if let Some((mem, 0)) = recorder.locate(pointer as CUdeviceptr) {
            recorder.memory_alias(mem, device_pointer);
        }
    })
}

/// `cuMemMap`: physical memory mapped at `pointer` is an allocation there until unmapped.
pub unsafe fn map(
    forward: &mut Forward<'_, CUresult>,
    _call: &str,
    pointer: CUdeviceptr,
    size: usize,
    _offset: usize,
    _handle: u64,
    _flags: u64,
) -> Recorded {
    if succeeded(forward) {
        track(pointer, size as u64, None, MemShape::Whole(MemKind::Buffer), 0)?;
        with_state(|state| state.mappings.insert(pointer, size as u64));
    }
    Ok(())
}

/// `cuMemUnmap`: every mapping in the range goes, its final contents read first (see `free`).
pub unsafe fn unmap(forward: &mut Forward<'_, CUresult>, call: &str, pointer: CUdeviceptr, size: usize) -> Recorded {
    let end = pointer.saturating_add(size as u64);
    let unmapped: Vec<Key> = with_state(|state| state.mappings.range(pointer..end).map(|(&start, _)| start).collect());
    for start in unmapped {
        final_contents_before_free(call, start)?;
        releasing(start)?;
    }
    forward.call();
    Ok(())
}
