//! Copies between host and device memory, and memsets (`Fill` with a 1, 2 or 4-byte pattern).

use super::commands::{device_access, device_place, device_write, enqueue, Enqueued};
use super::rect::{CU_MEMORYTYPE_DEVICE, CU_MEMORYTYPE_HOST};
use super::hooks::{driver, CUcontext};
use super::state::with_recorder;
use super::{CUdeviceptr, CUresult, CUstream, CUDA_SUCCESS, Recorded};
use crate::entry::Forward;
use crate::session;
use crate::recorder::Recorder;
use std::ffi::c_void;
use trace_format::{Command, Copy, Extent, Fill, Place};

/// One end of a copy.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum End {
    Host(u64),
    Device(u64),
}

/// A linear copy of `bytes` bytes; host sources are read now (the program passed them).
pub fn copy_command(recorder: &mut Recorder, src: End, dst: End, bytes: usize) -> Result<Command, &'static str> {
    let src = match src {
        End::Device(pointer) => device_place(recorder, pointer)?,
        // SAFETY: the program handed the driver `bytes` bytes of host memory there.
        End::Host(pointer) => Place::Host { data: Some(unsafe { recorder.host_blob(pointer as usize, bytes) }) },
    };
    let dst = match dst {
        End::Device(pointer) => device_place(recorder, pointer)?,
        End::Host(_) => Place::Host { data: None },
    };
    if matches!((&src, &dst), (Place::Host { .. }, Place::Host { .. })) {
        return Err("a copy between host buffers is not device work");
    }
    Ok(Command::Copy(Copy { src, dst, extent: Extent::Linear { bytes: bytes as u64 } }))
}

/// A memset of `count` elements of `pattern` (1, 2 or 4 bytes) at `dst`.
pub fn fill_command(recorder: &mut Recorder, dst: u64, pattern: &[u8], count: usize) -> Result<Command, &'static str> {
    let Place::Memory { mem, offset } = device_place(recorder, dst)? else { return Err(super::commands::UNTRACKED_MEMORY) };
    Ok(Command::Fill(Fill { mem, offset, bytes: (count * pattern.len()) as u64, pattern: pattern.to_vec(), rows: None }))
}

pub(super) fn linear(forward: &mut Forward<'_, CUresult>, enqueued: Enqueued, src: End, dst: End, bytes: usize) -> Recorded {
    let accesses = |recorder: &mut Recorder| {
        let read = match src { End::Device(pointer) => device_access(recorder, pointer, false), End::Host(_) => None };
        let written = match dst { End::Device(pointer) => device_write(recorder, pointer, bytes as u64), End::Host(_) => None };
        read.into_iter().chain(written).collect()
    };
    let enqueued = match dst {
        End::Host(address) => enqueued.receiving(address as usize as *const c_void, bytes),
        End::Device(_) => enqueued,
    };
    enqueue(forward, enqueued, accesses, |recorder| copy_command(recorder, src, dst, bytes))?;
    // A copy to pageable memory returns once it is done (asynchronous or not): its data is taken
    // now, before the program reuses or frees the memory. One into tracked (pinned) memory is
    // taken when its window closes.
    if let (End::Host(address), true) = (dst, session::commands_captured()) {
        with_recorder(|_, recorder| match recorder.locate(address) {
            None => recorder.capture_received(address as usize, bytes),
            Some(_) => recorder.received_into(address),
        })?;
    }
    Ok(())
}

fn host(pointer: *const c_void) -> End {
    End::Host(pointer as usize as u64)
}

pub unsafe fn host_to_device(forward: &mut Forward<'_, CUresult>, call: &'static str, dst: CUdeviceptr, src: *const c_void, bytes: usize) -> Recorded {
    linear(forward, Enqueued::on_default_stream(call), host(src), End::Device(dst), bytes)
}

pub unsafe fn device_to_host(forward: &mut Forward<'_, CUresult>, call: &'static str, dst: *mut c_void, src: CUdeviceptr, bytes: usize) -> Recorded {
    linear(forward, Enqueued::on_default_stream(call).blocking(), End::Device(src), host(dst), bytes)
}

pub unsafe fn device_to_device(forward: &mut Forward<'_, CUresult>, call: &'static str, dst: CUdeviceptr, src: CUdeviceptr, bytes: usize) -> Recorded {
    linear(forward, Enqueued::on_default_stream(call), End::Device(src), End::Device(dst), bytes)
}

pub unsafe fn host_to_device_async(
    forward: &mut Forward<'_, CUresult>,
    call: &'static str,
    dst: CUdeviceptr,
    src: *const c_void,
    bytes: usize,
    stream: CUstream,
) -> Recorded {
    linear(forward, Enqueued::new(call, stream), host(src), End::Device(dst), bytes)
}

pub unsafe fn device_to_host_async(
    forward: &mut Forward<'_, CUresult>,
    call: &'static str,
    dst: *mut c_void,
    src: CUdeviceptr,
    bytes: usize,
    stream: CUstream,
) -> Recorded {
    linear(forward, Enqueued::new(call, stream), End::Device(src), host(dst), bytes)
}

pub unsafe fn device_to_device_async(
    forward: &mut Forward<'_, CUresult>,
    call: &'static str,
    dst: CUdeviceptr,
    src: CUdeviceptr,
    bytes: usize,
    stream: CUstream,
) -> Recorded {
    linear(forward, Enqueued::new(call, stream), End::Device(src), End::Device(dst), bytes)
}

/// Whether two contexts are on one device (the same context is; others are asked of the driver).
fn same_device(first: CUcontext, second: CUcontext) -> bool {
    let (mut first_device, mut second_device) = (0, 0);
    // SAFETY: out-parameters of the right type; the driver refuses contexts it does not know.
    first == second
        || unsafe {
            driver::cuCtxGetDevice_v2(&mut first_device, first) == CUDA_SUCCESS
                && driver::cuCtxGetDevice_v2(&mut second_device, second) == CUDA_SUCCESS
        } && first_device == second_device
}

/// A peer copy: within one device, an ordinary device-to-device copy; between devices, not
/// recorded (replay has one device).
fn peer(forward: &mut Forward<'_, CUresult>, enqueued: Enqueued, dst: CUdeviceptr, dst_context: CUcontext, src: CUdeviceptr, src_context: CUcontext, bytes: usize) -> Recorded {
    if same_device(dst_context, src_context) {
        linear(forward, enqueued, End::Device(src), End::Device(dst), bytes)
    } else {
        forward.call();
        super::sync::unrecorded(enqueued.call())
    }
}

pub unsafe fn copy_peer(
    forward: &mut Forward<'_, CUresult>,
    call: &'static str,
    dst: CUdeviceptr,
    dst_context: CUcontext,
    src: CUdeviceptr,
    src_context: CUcontext,
    bytes: usize,
) -> Recorded {
    peer(forward, Enqueued::on_default_stream(call), dst, dst_context, src, src_context, bytes)
}

pub unsafe fn copy_peer_async(
    forward: &mut Forward<'_, CUresult>,
    call: &'static str,
    dst: CUdeviceptr,
    dst_context: CUcontext,
    src: CUdeviceptr,
    src_context: CUcontext,
    bytes: usize,
    stream: CUstream,
) -> Recorded {
    peer(forward, Enqueued::new(call, stream), dst, dst_context, src, src_context, bytes)
}

/// Where an end of a unified-addressing copy lies: a tracked allocation, else host memory when
/// the driver says so or does not know the pointer (pageable memory), else device memory the
/// shim did not see allocated (adopted when the copy is recorded); `None` for anything else.
pub(super) fn classify(recorder_knows: bool, pointer: CUdeviceptr) -> Option<End> {
    if recorder_knows {
        return Some(End::Device(pointer));
    }
    let mut memory_type: std::ffi::c_uint = 0;
    // SAFETY: the attribute's value is an unsigned int.
    let status = unsafe { driver::cuPointerGetAttribute((&raw mut memory_type).cast(), super::memory::MEMORY_TYPE, pointer) };
    match memory_type {
        _ if status != CUDA_SUCCESS => Some(End::Host(pointer)),
        CU_MEMORYTYPE_HOST => Some(End::Host(pointer)),
        CU_MEMORYTYPE_DEVICE => Some(End::Device(pointer)),
        _ => None,
    }
}

/// A copy between pointers of the unified address space, its direction found from them.
fn unified(forward: &mut Forward<'_, CUresult>, enqueued: Enqueued, dst: CUdeviceptr, src: CUdeviceptr, bytes: usize) -> Recorded {
    let call = enqueued.call();
    let known = super::state::with_recorder(|_, recorder| (recorder.locate(src).is_some(), recorder.locate(dst).is_some()))?;
    match (classify(known.0, src), classify(known.1, dst)) {
        (Some(src), Some(dst)) => linear(forward, enqueued, src, dst, bytes),
        _ => {
            forward.call();
            super::state::with_recorder(|_, recorder| recorder.partial(call, super::commands::UNTRACKED_MEMORY))
        }
    }
}

pub unsafe fn copy_async(
    forward: &mut Forward<'_, CUresult>,
    call: &'static str,
    dst: CUdeviceptr,
    src: CUdeviceptr,
    bytes: usize,
    stream: CUstream,
) -> Recorded {
    unified(forward, Enqueued::new(call, stream), dst, src, bytes)
}

/// `cuMemcpy`: synchronous, so a host synchronization when it delivers to the host.
pub unsafe fn copy(forward: &mut Forward<'_, CUresult>, call: &'static str, dst: CUdeviceptr, src: CUdeviceptr, bytes: usize) -> Recorded {
    let to_host = super::state::with_recorder(|_, recorder| recorder.locate(dst).is_none())?;
    let enqueued = Enqueued::on_default_stream(call);
    unified(forward, if to_host { enqueued.blocking() } else { enqueued }, dst, src, bytes)
}

fn memset(forward: &mut Forward<'_, CUresult>, enqueued: Enqueued, dst: CUdeviceptr, pattern: &[u8], count: usize) -> Recorded {
    let accesses = |recorder: &mut Recorder| device_write(recorder, dst, (pattern.len() * count) as u64).into_iter().collect();
    enqueue(forward, enqueued, accesses, |recorder| fill_command(recorder, dst, pattern, count))
}

pub unsafe fn memset_d8(forward: &mut Forward<'_, CUresult>, call: &'static str, dst: CUdeviceptr, value: u8, count: usize) -> Recorded {
    memset(forward, Enqueued::on_default_stream(call), dst, &value.to_ne_bytes(), count)
}

pub unsafe fn memset_d16(forward: &mut Forward<'_, CUresult>, call: &'static str, dst: CUdeviceptr, value: u16, count: usize) -> Recorded {
    memset(forward, Enqueued::on_default_stream(call), dst, &value.to_ne_bytes(), count)
}

pub unsafe fn memset_d32(forward: &mut Forward<'_, CUresult>, call: &'static str, dst: CUdeviceptr, value: u32, count: usize) -> Recorded {
    memset(forward, Enqueued::on_default_stream(call), dst, &value.to_ne_bytes(), count)
}

pub unsafe fn memset_d8_async(forward: &mut Forward<'_, CUresult>, call: &'static str, dst: CUdeviceptr, value: u8, count: usize, stream: CUstream) -> Recorded {
    memset(forward, Enqueued::new(call, stream), dst, &value.to_ne_bytes(), count)
}

pub unsafe fn memset_d16_async(forward: &mut Forward<'_, CUresult>, call: &'static str, dst: CUdeviceptr, value: u16, count: usize, stream: CUstream) -> Recorded {
    memset(forward, Enqueued::new(call, stream), dst, &value.to_ne_bytes(), count)
}

pub unsafe fn memset_d32_async(forward: &mut Forward<'_, CUresult>, call: &'static str, dst: CUdeviceptr, value: u32, count: usize, stream: CUstream) -> Recorded {
    memset(forward, Enqueued::new(call, stream), dst, &value.to_ne_bytes(), count)
}
