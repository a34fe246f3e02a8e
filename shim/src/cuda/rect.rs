//! 2D and 3D copies (`CUDA_MEMCPY2D`, `CUDA_MEMCPY3D`) and 2D memsets. Host data is kept from
//! the host pointer the program passed, over the rows the copy touches (as for OpenCL
//! rectangular transfers).

use super::commands::{device_access, enqueue, Enqueued, UNTRACKED_MEMORY};
use super::arrays::Arrays;
use super::copies::End;
use super::{CUdeviceptr, CUresult, CUstream, Recorded};
use crate::entry::Forward;
use crate::recorder::{Access, Recorder};
use std::ffi::{c_uint, c_void};
use trace_format::{Command, Copy, Extent, Fill, ImageLayout, Place};

/// `CUDA_MEMCPY2D` of cuda.h.
#[repr(C)]
pub struct Memcpy2D {
    src_x_bytes: usize,
    src_y: usize,
    src_memory_type: c_uint,
    src_host: *const c_void,
    src_device: CUdeviceptr,
    src_array: *mut c_void,
    src_pitch: usize,
    dst_x_bytes: usize,
    dst_y: usize,
    dst_memory_type: c_uint,
    dst_host: *mut c_void,
    dst_device: CUdeviceptr,
    dst_array: *mut c_void,
    dst_pitch: usize,
    width_bytes: usize,
    height: usize,
}

/// `CUDA_MEMCPY3D` of cuda.h (also what the driver reports of a graph's memcpy node, kept as
/// long as the graph: its pointers are held as integers).
#[repr(C)]
#[derive(Clone, Copy, Debug, Default)]
pub struct Memcpy3D {
    pub src_x_bytes: usize,
    pub src_y: usize,
    pub src_z: usize,
    pub src_lod: usize,
    pub src_memory_type: c_uint,
    pub src_host: usize,
    pub src_device: CUdeviceptr,
    pub src_array: usize,
    pub reserved0: usize,
    pub src_pitch: usize,
    /// Rows per slice of the source.
    pub src_height: usize,
    pub dst_x_bytes: usize,
    pub dst_y: usize,
    pub dst_z: usize,
    pub dst_lod: usize,
    pub dst_memory_type: c_uint,
    pub dst_host: usize,
    pub dst_device: CUdeviceptr,
    pub dst_array: usize,
    pub reserved1: usize,
    pub dst_pitch: usize,
    pub dst_height: usize,
    pub width_bytes: usize,
    pub height: usize,
    pub depth: usize,
}

pub const CU_MEMORYTYPE_HOST: c_uint = 1;
pub const CU_MEMORYTYPE_DEVICE: c_uint = 2;
pub const CU_MEMORYTYPE_ARRAY: c_uint = 3;
const CU_MEMORYTYPE_UNIFIED: c_uint = 4;

/// Why a copy is not recorded when an end is unknown.
pub const UNTRACKED_ENDS: &str = "copies with arrays or unified memory the shim did not see created are not recorded";

/// One side of a rectangular copy: its memory, origin (x in bytes, row, slice), row pitch and
/// slice pitch (0 for 2D copies).
#[derive(Clone, Copy, Debug)]
struct Side {
    end: End,
    origin: [usize; 3],
    pitch: usize,
    slice_pitch: usize,
}

impl Side {
    /// Bytes from the base pointer to the end of the last row the copy touches.
    fn span(&self, [width, height, depth]: [usize; 3]) -> usize {
        if height == 0 || depth == 0 {
            return 0;
        }
        let [x, y, z] = self.origin;
        (z + depth - 1) * self.slice_pitch + (y + height - 1) * self.pitch + x + width
    }
}

/// Both sides and the region (width in bytes, rows, slices).
pub struct Rect {
    src: Side,
    dst: Side,
    region: [usize; 3],
}

impl Rect {
    /// A copy of one row, as a linear copy's ends (origins applied) and length.
    pub fn as_linear(&self) -> Option<(End, End, usize)> {
        let [width, height, depth] = self.region;
        let row_start = |side: &Side| side.origin[1] == 0 && side.origin[2] == 0;
        let shifted = |side: &Side| match side.end {
            End::Host(pointer) => End::Host(pointer + side.origin[0] as u64),
            End::Device(pointer) => End::Device(pointer + side.origin[0] as u64),
        };
        (height <= 1 && depth <= 1 && row_start(&self.src) && row_start(&self.dst)).then(|| (shifted(&self.src), shifted(&self.dst), width))
    }

    /// The copy with host ends inside tracked memory (pinned, registered) naming that memory,
    /// for copies that read and write it when they run rather than when submitted (a graph's).
    pub fn naming_tracked_host_memory(mut self, recorder: &Recorder) -> Rect {
        for side in [&mut self.src, &mut self.dst] {
            if let End::Host(pointer) = side.end {
                if recorder.locate(pointer).is_some() {
                    side.end = End::Device(pointer);
                }
            }
        }
        self
    }

    /// The memory it reads and writes.
    pub fn accesses(&self, recorder: &mut Recorder) -> Vec<Access> {
        let read = match self.src.end { End::Device(pointer) => device_access(recorder, pointer, false), End::Host(_) => None };
        let written = match self.dst.end { End::Device(pointer) => device_access(recorder, pointer, true), End::Host(_) => None };
        read.into_iter().chain(written).collect()
    }

    /// The copy as the trace holds it; host sources are read now.
    pub fn command(&self, recorder: &mut Recorder) -> Result<Command, &'static str> {
        let (src, dst, region) = (self.src, self.dst, self.region);
        let widen = |values: [usize; 3]| values.map(|value| value as u64);
        let extent = Extent::Rect {
            src_origin: widen(src.origin),
            dst_origin: widen(dst.origin),
            region: widen(region),
            src_row_pitch: src.pitch as u64,
            src_slice_pitch: src.slice_pitch as u64,
            dst_row_pitch: dst.pitch as u64,
            dst_slice_pitch: dst.slice_pitch as u64,
        };
        let (src, dst) = (place(recorder, src, region, true)?, place(recorder, dst, region, false)?);
        Ok(Command::Copy(Copy { src, dst, extent }))
    }
}

/// A side's memory, and for an array the layout its packed contents have; `None` for arrays
/// the shim does not track and unified pointers to device memory it did not see allocated.
fn end<'a>(arrays: &'a Arrays, recorder: &Recorder, memory_type: c_uint, host: usize, device: CUdeviceptr, array: usize) -> Option<(End, Option<&'a ImageLayout>)> {
    match memory_type {
        CU_MEMORYTYPE_HOST => Some((End::Host(host as u64), None)),
        CU_MEMORYTYPE_DEVICE => Some((End::Device(device), None)),
        CU_MEMORYTYPE_ARRAY => arrays.get(&array).map(|array| (End::Device(array.address), Some(&array.layout))),
        // Pageable host memory too, which cuBLASXT passes to 2D copies of unified kind.
        CU_MEMORYTYPE_UNIFIED => super::copies::classify(recorder.locate(device).is_some(), device).map(|end| (end, None)),
        _ => None,
    }
}

/// A side at `origin`: an array's rows and slices are those of its packed contents, whatever
/// pitches the description gives.
fn side((end, image): (End, Option<&ImageLayout>), origin: [usize; 3], pitch: usize, slice_pitch: usize) -> Side {
    match image {
        Some(layout) => Side { end, origin, pitch: layout.row_bytes() as usize, slice_pitch: layout.slice_bytes() as usize },
        None => Side { end, origin, pitch, slice_pitch },
    }
}

/// A copy description `copy_rect` records.
pub trait RectCopy {
    /// Its sides and region; `None` for copies with untracked arrays or unified memory.
    fn rect(&self, arrays: &Arrays, recorder: &Recorder) -> Option<Rect>;
    fn to_host(&self) -> bool;
}

impl RectCopy for Memcpy2D {
    fn rect(&self, arrays: &Arrays, recorder: &Recorder) -> Option<Rect> {
        let src = end(arrays, recorder, self.src_memory_type, self.src_host as usize, self.src_device, self.src_array as usize)?;
        let dst = end(arrays, recorder, self.dst_memory_type, self.dst_host as usize, self.dst_device, self.dst_array as usize)?;
        Some(Rect {
            src: side(src, [self.src_x_bytes, self.src_y, 0], self.src_pitch, 0),
            dst: side(dst, [self.dst_x_bytes, self.dst_y, 0], self.dst_pitch, 0),
            region: [self.width_bytes, self.height, 1],
        })
    }

    fn to_host(&self) -> bool {
        self.dst_memory_type == CU_MEMORYTYPE_HOST
    }
}

impl RectCopy for Memcpy3D {
    fn rect(&self, arrays: &Arrays, recorder: &Recorder) -> Option<Rect> {
        let src = end(arrays, recorder, self.src_memory_type, self.src_host, self.src_device, self.src_array)?;
        let dst = end(arrays, recorder, self.dst_memory_type, self.dst_host, self.dst_device, self.dst_array)?;
        // A pitch of 0 means rows (and slices) packed at the copy's own width (height).
        let pitch = |pitch: usize| if pitch == 0 { self.width_bytes } else { pitch };
        let rows = |rows: usize| if rows == 0 { self.height } else { rows };
        let described = |end, origin, row_pitch, slice_rows| {
            let row_pitch = pitch(row_pitch);
            side(end, origin, row_pitch, row_pitch * rows(slice_rows))
        };
        Some(Rect {
            src: described(src, [self.src_x_bytes, self.src_y, self.src_z], self.src_pitch, self.src_height),
            dst: described(dst, [self.dst_x_bytes, self.dst_y, self.dst_z], self.dst_pitch, self.dst_height),
            region: [self.width_bytes, self.height, self.depth],
        })
    }

    fn to_host(&self) -> bool {
        self.dst_memory_type == CU_MEMORYTYPE_HOST
    }
}

fn place(recorder: &mut Recorder, side: Side, region: [usize; 3], source: bool) -> Result<Place, &'static str> {
    match side.end {
        End::Device(pointer) => super::commands::device_place(recorder, pointer),
        End::Host(_) if !source => Ok(Place::Host { data: None }),
        // SAFETY: the driver read these rows of the program's host memory.
        End::Host(pointer) => {
            let bytes = unsafe { std::slice::from_raw_parts(pointer as usize as *const u8, side.span(region)) };
            Ok(Place::Host { data: Some(recorder.blob(bytes.to_vec())) })
        }
    }
}

fn copy_rect(forward: &mut Forward<'_, CUresult>, enqueued: Enqueued, copy: *const impl RectCopy) -> Recorded {
    // SAFETY: the driver reads the description; a null one it refuses.
    let Some(copy) = (unsafe { copy.as_ref() }) else {
        forward.call();
        return Ok(());
    };
    let call = enqueued.call();
    let Some(rect) = super::state::with_recorder(|state, recorder| copy.rect(&state.arrays, recorder))? else {
        forward.call();
        return super::state::with_recorder(|_, recorder| recorder.partial(call, UNTRACKED_ENDS));
    };
    let enqueued = match rect.dst.end {
        End::Host(address) => enqueued.receiving(address as usize as *const c_void, rect.dst.span(rect.region)),
        End::Device(_) => enqueued,
    };
    enqueue(forward, enqueued, |recorder| rect.accesses(recorder), |recorder| rect.command(recorder))
}

/// A synchronous copy: a host synchronization when it delivers to the host.
fn copy_rect_sync(forward: &mut Forward<'_, CUresult>, call: &'static str, copy: *const impl RectCopy) -> Recorded {
    // SAFETY: as for `copy_rect`.
    let to_host = unsafe { copy.as_ref() }.is_some_and(RectCopy::to_host);
    let enqueued = Enqueued::on_default_stream(call);
    copy_rect(forward, if to_host { enqueued.blocking() } else { enqueued }, copy)
}

pub unsafe fn copy_2d_sync(forward: &mut Forward<'_, CUresult>, call: &'static str, copy: *const Memcpy2D) -> Recorded {
    copy_rect_sync(forward, call, copy)
}

pub unsafe fn copy_2d_async(forward: &mut Forward<'_, CUresult>, call: &'static str, copy: *const Memcpy2D, stream: CUstream) -> Recorded {
    copy_rect(forward, Enqueued::new(call, stream), copy)
}

pub unsafe fn copy_3d_sync(forward: &mut Forward<'_, CUresult>, call: &'static str, copy: *const Memcpy3D) -> Recorded {
    copy_rect_sync(forward, call, copy)
}

pub unsafe fn copy_3d_async(forward: &mut Forward<'_, CUresult>, call: &'static str, copy: *const Memcpy3D, stream: CUstream) -> Recorded {
    copy_rect(forward, Enqueued::new(call, stream), copy)
}

/// A 2D memset: `height` rows of `width` elements of `pattern`, `pitch` bytes apart.
pub fn fill_2d_command(recorder: &mut Recorder, dst: CUdeviceptr, pitch: usize, pattern: &[u8], width: usize, height: usize) -> Result<Command, &'static str> {
    let Place::Memory { mem, offset } = super::commands::device_place(recorder, dst)? else { return Err(UNTRACKED_MEMORY) };
    let side = Side { end: End::Device(dst), origin: [0; 3], pitch, slice_pitch: 0 };
    let bytes = side.span([width * pattern.len(), height, 1]) as u64;
    Ok(Command::Fill(Fill { mem, offset, bytes, pattern: pattern.to_vec(), rows: Some([pitch as u64, width as u64, height as u64]) }))
}

fn memset_2d(forward: &mut Forward<'_, CUresult>, enqueued: Enqueued, dst: CUdeviceptr, pitch: usize, pattern: &[u8], width: usize, height: usize) -> Recorded {
    let accesses = |recorder: &mut Recorder| device_access(recorder, dst, true).into_iter().collect();
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
