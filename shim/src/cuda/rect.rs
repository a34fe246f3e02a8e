//! 2D copies (`CUDA_MEMCPY2D`) and 2D memsets. Host data is kept from the host pointer the
//! program passed, over the rows the copy touches (as for OpenCL rectangular transfers).

use super::commands::{device_access, enqueue, Enqueued, UNTRACKED_MEMORY};
use super::copies::End;
use super::{CUdeviceptr, CUresult, CUstream, Recorded};
use crate::entry::Forward;
use crate::recorder::Recorder;
use std::ffi::c_void;
use trace_format::{Command, Copy, Extent, Fill, Place};

/// `CUDA_MEMCPY2D` of cuda.h.
#[repr(C)]
pub struct Memcpy2D {
    src_x_bytes: usize,
    src_y: usize,
    src_memory_type: u32,
    src_host: *const c_void,
    src_device: CUdeviceptr,
    src_array: *mut c_void,
    src_pitch: usize,
    dst_x_bytes: usize,
    dst_y: usize,
    dst_memory_type: u32,
    dst_host: *mut c_void,
    dst_device: CUdeviceptr,
    dst_array: *mut c_void,
    dst_pitch: usize,
    width_bytes: usize,
    height: usize,
}

const CU_MEMORYTYPE_HOST: u32 = 1;
const CU_MEMORYTYPE_DEVICE: u32 = 2;
const CU_MEMORYTYPE_UNIFIED: u32 = 4;

/// Bytes from a side's base pointer to the end of the last row the copy touches.
fn span(x: usize, y: usize, pitch: usize, width: usize, height: usize) -> usize {
    if height == 0 { 0 } else { (y + height - 1) * pitch + x + width }
}

/// One side of a 2D copy: its memory, origin and pitch.
#[derive(Clone, Copy)]
struct Side {
    end: End,
    x: usize,
    y: usize,
    pitch: usize,
}

impl Memcpy2D {
    /// Both sides, `None` for arrays (and unified pointers outside tracked memory, which the
    /// caller cannot tell from host memory safely).
    fn sides(&self, recorder: &Recorder) -> Option<(Side, Side)> {
        let end = |memory_type, host: *const c_void, device: CUdeviceptr| match memory_type {
            CU_MEMORYTYPE_HOST => Some(End::Host(host as usize as u64)),
            CU_MEMORYTYPE_DEVICE => Some(End::Device(device)),
            CU_MEMORYTYPE_UNIFIED => recorder.locate(device).map(|_| End::Device(device)),
            _ => None,
        };
        let src = end(self.src_memory_type, self.src_host, self.src_device)?;
        let dst = end(self.dst_memory_type, self.dst_host.cast_const(), self.dst_device)?;
        Some((Side { end: src, x: self.src_x_bytes, y: self.src_y, pitch: self.src_pitch }, Side { end: dst, x: self.dst_x_bytes, y: self.dst_y, pitch: self.dst_pitch }))
    }
}

fn place(recorder: &mut Recorder, side: Side, width: usize, height: usize, source: bool) -> Result<Place, &'static str> {
    match side.end {
        End::Device(pointer) => super::commands::device_place(recorder, pointer),
        End::Host(_) if !source => Ok(Place::Host { data: None }),
        // SAFETY: the driver read these rows of the program's host memory.
        End::Host(pointer) => {
            let bytes = unsafe { std::slice::from_raw_parts(pointer as usize as *const u8, span(side.x, side.y, side.pitch, width, height)) };
            Ok(Place::Host { data: Some(recorder.blob(bytes.to_vec())) })
        }
    }
}

fn copy_2d(forward: &mut Forward<'_, CUresult>, enqueued: Enqueued, copy: *const Memcpy2D) -> Recorded {
    // SAFETY: the driver reads the description; a null one it refuses.
    let Some(copy) = (unsafe { copy.as_ref() }) else {
        forward.call();
        return Ok(());
    };
    let call = enqueued.call();
    let Some((src, dst)) = super::state::with_recorder(|_, recorder| copy.sides(recorder))? else {
        forward.call();
        return super::state::with_recorder(|_, recorder| recorder.partial(call, "2D copies with arrays or untracked unified memory are not recorded"));
    };
    let (width, height) = (copy.width_bytes, copy.height);
    let enqueued = match dst.end {
        End::Host(address) => enqueued.receiving(address as usize as *const c_void, span(dst.x, dst.y, dst.pitch, width, height)),
        End::Device(_) => enqueued,
    };
    let accesses = |recorder: &Recorder| {
        let read = match src.end { End::Device(pointer) => device_access(recorder, pointer, false), End::Host(_) => None };
        let written = match dst.end { End::Device(pointer) => device_access(recorder, pointer, true), End::Host(_) => None };
        read.into_iter().chain(written).collect()
    };
    let build = |recorder: &mut Recorder| {
        let extent = Extent::Rect {
            src_origin: [src.x as u64, src.y as u64, 0],
            dst_origin: [dst.x as u64, dst.y as u64, 0],
            region: [width as u64, height as u64, 1],
            src_row_pitch: src.pitch as u64,
            src_slice_pitch: 0,
            dst_row_pitch: dst.pitch as u64,
            dst_slice_pitch: 0,
        };
        let (src, dst) = (place(recorder, src, width, height, true)?, place(recorder, dst, width, height, false)?);
        Ok(Command::Copy(Copy { src, dst, extent }))
    };
    enqueue(forward, enqueued, accesses, build)
}

pub unsafe fn copy_2d_sync(forward: &mut Forward<'_, CUresult>, call: &'static str, copy: *const Memcpy2D) -> Recorded {
    // SAFETY: as for `copy_2d`.
    let to_host = unsafe { copy.as_ref() }.is_some_and(|copy| copy.dst_memory_type == CU_MEMORYTYPE_HOST);
    let enqueued = Enqueued::on_default_stream(call);
    copy_2d(forward, if to_host { enqueued.blocking() } else { enqueued }, copy)
}

pub unsafe fn copy_2d_async(forward: &mut Forward<'_, CUresult>, call: &'static str, copy: *const Memcpy2D, stream: CUstream) -> Recorded {
    copy_2d(forward, Enqueued::new(call, stream), copy)
}

/// A 2D memset: `height` rows of `width` elements of `pattern`, `pitch` bytes apart.
pub fn fill_2d_command(recorder: &mut Recorder, dst: CUdeviceptr, pitch: usize, pattern: &[u8], width: usize, height: usize) -> Result<Command, &'static str> {
    let Place::Memory { mem, offset } = super::commands::device_place(recorder, dst)? else { return Err(UNTRACKED_MEMORY) };
    let bytes = span(0, 0, pitch, width * pattern.len(), height) as u64;
    Ok(Command::Fill(Fill { mem, offset, bytes, pattern: pattern.to_vec(), rows: Some([pitch as u64, width as u64, height as u64]) }))
}

fn memset_2d(forward: &mut Forward<'_, CUresult>, enqueued: Enqueued, dst: CUdeviceptr, pitch: usize, pattern: &[u8], width: usize, height: usize) -> Recorded {
    let accesses = |recorder: &Recorder| device_access(recorder, dst, true).into_iter().collect();
    enqueue(forward, enqueued, accesses, |recorder| fill_2d_command(recorder, dst, pitch, pattern, width, height))
}

pub unsafe fn memset_2d_d8(forward: &mut Forward<'_, CUresult>, call: &'static str, dst: CUdeviceptr, pitch: usize, value: u8, width: usize, height: usize) -> Recorded {
    memset_2d(forward, Enqueued::on_default_stream(call), dst, pitch, &value.to_ne_bytes(), width, height)
}

pub unsafe fn memset_2d_d16(forward: &mut Forward<'_, CUresult>, call: &'static str, dst: CUdeviceptr, pitch: usize, value: u16, width: usize, height: usize) -> Recorded {
    memset_2d(forward, Enqueued::on_default_stream(call), dst, pitch, &value.to_ne_bytes(), width, height)
}

pub unsafe fn memset_2d_d32(forward: &mut Forward<'_, CUresult>, call: &'static str, dst: CUdeviceptr, pitch: usize, value: u32, width: usize, height: usize) -> Recorded {
    memset_2d(forward, Enqueued::on_default_stream(call), dst, pitch, &value.to_ne_bytes(), width, height)
}

pub unsafe fn memset_2d_d8_async(forward: &mut Forward<'_, CUresult>, call: &'static str, dst: CUdeviceptr, pitch: usize, value: u8, width: usize, height: usize, stream: CUstream) -> Recorded {
    memset_2d(forward, Enqueued::new(call, stream), dst, pitch, &value.to_ne_bytes(), width, height)
}

pub unsafe fn memset_2d_d16_async(forward: &mut Forward<'_, CUresult>, call: &'static str, dst: CUdeviceptr, pitch: usize, value: u16, width: usize, height: usize, stream: CUstream) -> Recorded {
    memset_2d(forward, Enqueued::new(call, stream), dst, pitch, &value.to_ne_bytes(), width, height)
}

pub unsafe fn memset_2d_d32_async(forward: &mut Forward<'_, CUresult>, call: &'static str, dst: CUdeviceptr, pitch: usize, value: u32, width: usize, height: usize, stream: CUstream) -> Recorded {
    memset_2d(forward, Enqueued::new(call, stream), dst, pitch, &value.to_ne_bytes(), width, height)
}
