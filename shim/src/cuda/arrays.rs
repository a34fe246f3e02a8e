//! CUDA arrays (`cuArrayCreate`, `cuArray3DCreate`): images whose texel layout only the driver
//! knows. The recorder tracks each as memory at an address of its own, in a range no device
//! pointer reaches, so that copies name an array's texels as byte positions of its packed
//! contents and everything that handles memory (snapshots, accesses, final contents) holds.

use super::commands::Enqueued;
use super::copies::End;
use super::state::with_recorder;
use crate::fast_hash::HashMap;
use super::{device, succeeded, CUdeviceptr, CUresult, CUstream, Recorded};
use crate::entry::Forward;
use crate::recorder::{HostWrites, Key, MemDesc, MemShape};
use std::ffi::{c_uint, c_void};
use trace_format::{ImageLayout, MemKind};

/// `CUDA_ARRAY_DESCRIPTOR` of cuda.h.
#[repr(C)]
pub struct ArrayDescriptor {
    width: usize,
    height: usize,
    format: c_uint,
    channels: c_uint,
}

/// `CUDA_ARRAY3D_DESCRIPTOR` of cuda.h.
#[repr(C)]
pub struct Array3DDescriptor {
    width: usize,
    height: usize,
    depth: usize,
    format: c_uint,
    channels: c_uint,
    flags: c_uint,
}

/// Where the recorder's addresses of arrays begin: above any device or host pointer.
const ARRAY_ADDRESSES: u64 = 0xf000_0000_0000_0000;
/// Each array's range: larger than any array.
const ARRAY_SPACING: u64 = 1 << 40;
/// Ranges before they are reused (the oldest arrays are long destroyed by then).
const ARRAY_RANGES: u64 = (u64::MAX - ARRAY_ADDRESSES) / ARRAY_SPACING;

/// The bytes of one channel of `CUarray_format` `format`; `None` for formats the shim does not
/// record (planar video formats, block-compressed ones).
fn channel_bytes(format: c_uint) -> Option<u32> {
    match format {
        0x01 | 0x08 => Some(1), // U8, S8
        0x02 | 0x09 | 0x10 => Some(2), // U16, S16, HALF
        0x03 | 0x0a | 0x20 => Some(4), // U32, S32, FLOAT
        _ => None,
    }
}

/// An array as the shim tracks it: its handle, the address the recorder knows it by, and the
/// packed layout of its contents.
#[derive(Clone, Debug)]
pub struct TrackedArray {
    pub handle: usize,
    pub address: Key,
    pub layout: ImageLayout,
}

/// Tracked arrays by handle.
pub type Arrays = HashMap<usize, TrackedArray>;

/// The packed layout of an array of this description, which the trace keeps as its format
/// `[width, height, depth, format, channels, flags]` (depth counts layers and cube faces).
fn layout(width: usize, height: usize, depth: usize, format: c_uint, channels: c_uint, flags: c_uint) -> Option<ImageLayout> {
    let texel_bytes = channel_bytes(format)?.checked_mul(channels)?;
    let widen = |value: usize| value as u64;
    Some(ImageLayout {
        width: widen(width),
        height: widen(height.max(1)),
        depth: widen(depth.max(1)),
        texel_bytes,
        format: vec![widen(width), widen(height), widen(depth), u64::from(format), u64::from(channels), u64::from(flags)],
    })
}


/// Tracks a new array `handle` of this layout (`None`: the trace is marked partial by the
/// copies and textures that name it).
fn created(call: &str, handle: usize, layout: Option<ImageLayout>) -> Recorded {
    with_recorder(|state, recorder| {
        let Some(layout) = layout else {
            recorder.partial(call, "arrays of planar or block-compressed formats are not recorded");
            return;
        };
        state.array_count += 1;
        let address = ARRAY_ADDRESSES + (state.array_count % ARRAY_RANGES) * ARRAY_SPACING;
        let current = device::current(state, recorder);
        let desc = MemDesc {
            shape: MemShape::Whole(MemKind::Image(layout.clone())),
            size: layout.bytes(),
            address,
            flags: 0,
            device: current.map(|(_, device)| device),
            addressable: true,
            host_writes: HostWrites::None,
        };
        recorder.memory_created(address, desc);
        if let Some((context, _)) = current {
            state.memory_contexts.insert(address, context);
        }
        state.arrays.insert(handle, TrackedArray { handle, address, layout });
        state.array_at.insert(address, handle);
    })
}

pub unsafe fn create(forward: &mut Forward<'_, CUresult>, call: &str, array: *mut *mut c_void, descriptor: *const ArrayDescriptor) -> Recorded {
    // SAFETY: the driver read the description and, having succeeded, wrote the handle.
    match (succeeded(forward), unsafe { descriptor.as_ref() }) {
        (true, Some(d)) => created(call, unsafe { *array } as usize, layout(d.width, d.height, 0, d.format, d.channels, 0)),
        _ => Ok(()),
    }
}

pub unsafe fn create_3d(forward: &mut Forward<'_, CUresult>, call: &str, array: *mut *mut c_void, descriptor: *const Array3DDescriptor) -> Recorded {
    // SAFETY: as in `create`.
    match (succeeded(forward), unsafe { descriptor.as_ref() }) {
        (true, Some(d)) => created(call, unsafe { *array } as usize, layout(d.width, d.height, d.depth, d.format, d.channels, d.flags)),
        _ => Ok(()),
    }
}

/// `cuArrayDestroy`: like a free, what the capture wrote into the array is read first.
pub unsafe fn destroy(forward: &mut Forward<'_, CUresult>, call: &str, array: *mut c_void) -> Recorded {
    let address = with_recorder(|state, _| state.arrays.get(&(array as usize)).map(|array| array.address))?;
    if let Some(address) = address {
        super::memory::final_contents_before_free(call, address)?;
        with_recorder(|state, recorder| {
            super::memory::forget(state, recorder, address);
            state.arrays.remove(&(array as usize));
            state.array_at.remove(&address);
        })?;
    }
    forward.call();
    Ok(())
}

/// A copy of a whole array into packed host memory at `host`.
pub fn packed_read(array: &TrackedArray, host: *mut c_void) -> super::rect::Memcpy3D {
    let row = array.layout.row_bytes() as usize;
    let rows = array.layout.height as usize;
    super::rect::Memcpy3D {
        src_memory_type: super::rect::CU_MEMORYTYPE_ARRAY,
        src_array: array.handle,
        dst_memory_type: super::rect::CU_MEMORYTYPE_HOST,
        dst_host: host as usize,
        dst_pitch: row,
        dst_height: rows,
        width_bytes: row,
        height: rows,
        depth: array.layout.depth as usize,
        ..Default::default()
    }
}

/// The place `offset` bytes into array `array`'s packed contents; `None` for an array the shim
/// does not track.
fn array_end(array: *mut c_void, offset: usize) -> Result<Option<End>, super::Failure> {
    with_recorder(|state, _| state.arrays.get(&(array as usize)).map(|array| End::Device(array.address + offset as u64)))
}

/// A linear copy with array ends (`cuMemcpyHtoA` and the like).
fn linear_with_arrays(forward: &mut Forward<'_, CUresult>, enqueued: Enqueued, src: Option<End>, dst: Option<End>, bytes: usize) -> Recorded {
    match (src, dst) {
        (Some(src), Some(dst)) => super::copies::linear(forward, enqueued, src, dst, bytes),
        _ => {
            forward.call();
            super::sync::unrecorded(enqueued.call())
        }
    }
}

fn host(pointer: *const c_void) -> Option<End> {
    Some(End::Host(pointer as u64))
}

pub unsafe fn host_to_array(forward: &mut Forward<'_, CUresult>, call: &'static str, dst: *mut c_void, dst_offset: usize, src: *const c_void, bytes: usize) -> Recorded {
    linear_with_arrays(forward, Enqueued::on_default_stream(call), host(src), array_end(dst, dst_offset)?, bytes)
}

pub unsafe fn array_to_host(forward: &mut Forward<'_, CUresult>, call: &'static str, dst: *mut c_void, src: *mut c_void, src_offset: usize, bytes: usize) -> Recorded {
    linear_with_arrays(forward, Enqueued::on_default_stream(call).blocking(), array_end(src, src_offset)?, host(dst), bytes)
}

pub unsafe fn device_to_array(forward: &mut Forward<'_, CUresult>, call: &'static str, dst: *mut c_void, dst_offset: usize, src: CUdeviceptr, bytes: usize) -> Recorded {
    linear_with_arrays(forward, Enqueued::on_default_stream(call), Some(End::Device(src)), array_end(dst, dst_offset)?, bytes)
}

pub unsafe fn array_to_device(forward: &mut Forward<'_, CUresult>, call: &'static str, dst: CUdeviceptr, src: *mut c_void, src_offset: usize, bytes: usize) -> Recorded {
    linear_with_arrays(forward, Enqueued::on_default_stream(call), array_end(src, src_offset)?, Some(End::Device(dst)), bytes)
}

pub unsafe fn array_to_array(
    forward: &mut Forward<'_, CUresult>,
    call: &'static str,
    dst: *mut c_void,
    dst_offset: usize,
    src: *mut c_void,
    src_offset: usize,
    bytes: usize,
) -> Recorded {
    linear_with_arrays(forward, Enqueued::on_default_stream(call), array_end(src, src_offset)?, array_end(dst, dst_offset)?, bytes)
}

pub unsafe fn host_to_array_async(
    forward: &mut Forward<'_, CUresult>,
    call: &'static str,
    dst: *mut c_void,
    dst_offset: usize,
    src: *const c_void,
    bytes: usize,
    stream: CUstream,
) -> Recorded {
    linear_with_arrays(forward, Enqueued::new(call, stream), host(src), array_end(dst, dst_offset)?, bytes)
}

pub unsafe fn array_to_host_async(
    forward: &mut Forward<'_, CUresult>,
    call: &'static str,
    dst: *mut c_void,
    src: *mut c_void,
    src_offset: usize,
    bytes: usize,
    stream: CUstream,
) -> Recorded {
    linear_with_arrays(forward, Enqueued::new(call, stream), array_end(src, src_offset)?, host(dst), bytes)
}
