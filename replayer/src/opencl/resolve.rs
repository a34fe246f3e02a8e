//! Turns a recorded command into OpenCL handles and sizes, checking every handle and range
//! first: PoCL crashes on invalid command-buffer input instead of returning an error.

use super::extension::Rect;
use super::extension_images::Texels;
use super::images::{fill_region, packed_offset, texels};
use super::objects::{MemObject, Objects};
use super::pointers::PointerCalls;
use crate::backend::{BackendError, BackendResult};
use opencl_sys::{cl_kernel, cl_mem};
use std::ffi::c_void;
use trace_format::{Arg, BlobId, Command, Copy, Extent, Fill, Launch, MemId, NodeId, Place};

/// A command ready to record or enqueue.
pub enum Resolved<'n> {
    /// The kernel's object, whose arguments the caller sets to `args`.
    Kernel { kernel: cl_kernel, args: &'n [Arg], range: NdRange },
    Copy { src: cl_mem, dst: cl_mem, src_offset: usize, dst_offset: usize, bytes: usize },
    CopyRect { src: cl_mem, dst: cl_mem, rect: Rect },
    SvmCopy { dst: *mut c_void, src: *const c_void, bytes: usize, calls: PointerCalls },
    Fill { mem: cl_mem, offset: usize, bytes: usize, pattern: &'n [u8] },
    SvmFill { pointer: *mut c_void, bytes: usize, pattern: &'n [u8], calls: PointerCalls },
    /// Image copies and fills, in texels.
    CopyImage { src: cl_mem, dst: cl_mem, src_origin: Texels, dst_origin: Texels, region: Texels },
    CopyImageToBuffer { src: cl_mem, dst: cl_mem, src_origin: Texels, region: Texels, dst_offset: usize },
    CopyBufferToImage { src: cl_mem, dst: cl_mem, src_offset: usize, dst_origin: Texels, region: Texels },
    FillImage { mem: cl_mem, color: [u8; 16], origin: Texels, region: Texels },
    /// Host data into memory (eager only); `bytes` is 0 for a rectangle, whose geometry `rect` holds.
    Write { target: MemObject, offset: usize, bytes: usize, data: BlobId, rect: Option<Rect> },
    /// Memory into host memory that replay discards (eager only); sized like `Write`.
    Read { source: MemObject, offset: usize, bytes: usize, rect: Option<Rect> },
    /// Orders without work: barriers, and host tasks whose code the trace does not hold.
    Barrier,
}

/// An ND-range with the dimensions the API takes.
#[derive(Clone, Copy)]
pub struct NdRange {
    pub dims: u32,
    pub offset: [usize; 3],
    pub global: [usize; 3],
    pub local: Option<[usize; 3]>,
}

impl NdRange {
    pub fn local_ptr(&self) -> *const usize {
        self.local.as_ref().map_or(std::ptr::null(), |l| l.as_ptr())
    }
}

/// Checks `command` of `node` against the replay objects; `launch` overrides a kernel's
/// recorded ND-range (a patch). Sub-graphs are expanded by the callers.
pub fn resolve<'n>(objects: &Objects, node: NodeId, command: &'n Command, launch: Option<&Launch>) -> BackendResult<Resolved<'n>> {
    let context = |e: BackendError| e.about(&format!("node {node}"));
    match command {
        Command::Kernel(kernel_launch) => {
            let launch = launch.unwrap_or(&kernel_launch.launch);
            if runs_nothing(launch) {
                return Ok(Resolved::Barrier);
            }
            let loaded = objects.kernel(kernel_launch.kernel).map_err(context)?;
            if kernel_launch.args.len() != loaded.facts.params.len() {
                return Err(context(BackendError::Invalid(format!(
                    "it launches kernel {} with {} arguments; the kernel takes {}",
                    kernel_launch.kernel,
                    kernel_launch.args.len(),
                    loaded.facts.params.len()
                ))));
            }
            let range = nd_range(launch).map_err(context)?;
            Ok(Resolved::Kernel { kernel: loaded.kernel, args: &kernel_launch.args, range })
        }
        Command::Copy(copy) => resolve_copy(objects, copy).map_err(context),
        Command::Fill(fill) => resolve_fill(objects, fill).map_err(context),
        Command::Barrier | Command::HostTask(_) => Ok(Resolved::Barrier),
        Command::Subgraph(_) => Err(context(BackendError::Unsupported("a sub-graph: the replayer inlines them before a backend sees them".into()))),
        Command::MemAlloc { .. } | Command::MemFree { .. } | Command::Conditional(_) | Command::EventRecord { .. } | Command::EventWait { .. } => {
            Err(context(BackendError::Unsupported(format!("{} commands are not replayed by the OpenCL backend", command.kind_name()))))
        }
    }
}

/// Whether a launch has a global size of 0: OpenCL 2.1 runs no work-items and only orders it
/// (command buffers may not take it, so replay records a barrier).
pub fn runs_nothing(launch: &Launch) -> bool {
    match launch {
        Launch::NdRange { dims: dims @ 1..=3, global, .. } => global[..*dims as usize].contains(&0),
        _ => false,
    }
}

/// The checked ND-range of an OpenCL launch that runs work-items.
pub fn nd_range(launch: &Launch) -> BackendResult<NdRange> {
    let Launch::NdRange { dims, offset, global, local } = launch else {
        return Err(BackendError::Unsupported("a CUDA-style grid launch in an OpenCL trace".into()));
    };
    if !(1..=3).contains(dims) {
        return Err(BackendError::Unsupported(format!("{dims} work dimensions (OpenCL takes 1 to 3)")));
    }
    let used = *dims as usize;
    if global[..used].contains(&0) || local.is_some_and(|l| l[..used].contains(&0)) {
        return Err(BackendError::Unsupported(format!("an empty ND-range: global {global:?}, local {local:?}")));
    }
    let sizes = |v: &[u64; 3]| v.map(|x| x as usize);
    Ok(NdRange { dims: *dims, offset: sizes(offset), global: sizes(global), local: local.as_ref().map(sizes) })
}

fn resolve_copy<'n>(objects: &Objects, copy: &'n Copy) -> BackendResult<Resolved<'n>> {
    match (&copy.src, &copy.dst) {
        (Place::Memory { mem: src, offset: src_offset }, Place::Memory { mem: dst, offset: dst_offset }) => {
            let (source, target) = (objects.memory(*src)?, objects.memory(*dst)?);
            if matches!(source, MemObject::Image { .. }) || matches!(target, MemObject::Image { .. }) {
                return image_copy((*src, source), (*dst, target), &copy.extent);
            }
            match (&copy.extent, source, target) {
                (Extent::Linear { bytes }, MemObject::Buffer { mem: s, .. }, MemObject::Buffer { mem: d, .. }) => {
                    within(*src, source, *src_offset, *bytes)?;
                    within(*dst, target, *dst_offset, *bytes)?;
                    Ok(Resolved::Copy { src: s, dst: d, src_offset: *src_offset as usize, dst_offset: *dst_offset as usize, bytes: *bytes as usize })
                }
                (Extent::Linear { bytes }, MemObject::Svm { pointer: s, calls: from, .. }, MemObject::Svm { pointer: d, calls: to, .. }) => {
                    within(*src, source, *src_offset, *bytes)?;
                    within(*dst, target, *dst_offset, *bytes)?;
                    let (src, dst) = unsafe { ((s as *const u8).add(*src_offset as usize) as *const c_void, (d as *mut u8).add(*dst_offset as usize) as *mut c_void) };
                    Ok(Resolved::SvmCopy { dst, src, bytes: *bytes as usize, calls: from.with(to) })
                }
                (extent @ Extent::Rect { .. }, MemObject::Buffer { mem: s, .. }, MemObject::Buffer { mem: d, .. }) => {
                    let rect = rect_of(extent)?;
                    rect_within(*src, source, rect.src_origin, rect.region, [rect.pitches[0], rect.pitches[1]])?;
                    rect_within(*dst, target, rect.dst_origin, rect.region, [rect.pitches[2], rect.pitches[3]])?;
                    Ok(Resolved::CopyRect { src: s, dst: d, rect })
                }
                _ => Err(BackendError::Unsupported(format!("a copy from memory {src} to {dst} mixing buffers and SVM, or a rectangular SVM copy"))),
            }
        }
        (Place::Host { data: Some(data) }, Place::Memory { mem, offset }) => {
            let target = objects.memory(*mem)?;
            let rect = host_rect(&copy.extent, *mem, target, true)?;
            let bytes = match copy.extent {
                Extent::Linear { bytes } => {
                    within(*mem, target, *offset, bytes)?;
                    bytes as usize
                }
                Extent::Rect { .. } => 0,
            };
            Ok(Resolved::Write { target, offset: *offset as usize, bytes, data: *data, rect })
        }
        (Place::Memory { mem, offset }, Place::Host { .. }) => {
            let source = objects.memory(*mem)?;
            let rect = host_rect(&copy.extent, *mem, source, false)?;
            let bytes = match copy.extent {
                Extent::Linear { bytes } => {
                    within(*mem, source, *offset, bytes)?;
                    bytes as usize
                }
                Extent::Rect { .. } => 0,
            };
            Ok(Resolved::Read { source, offset: *offset as usize, bytes, rect })
        }
        (Place::Host { data: None }, _) => Err(BackendError::Unsupported("a host write whose data the trace does not hold".into())),
        (Place::Host { .. }, Place::Host { .. }) => Err(BackendError::Unsupported("a host-to-host copy".into())),
    }
}

/// A copy with an image side: a rectangle whose image sides are whole texels at the image's
/// packed pitches and whose buffer side is packed.
fn image_copy<'n>((src, source): (MemId, MemObject), (dst, target): (MemId, MemObject), extent: &Extent) -> BackendResult<Resolved<'n>> {
    let &Extent::Rect { src_origin, dst_origin, region, src_row_pitch, src_slice_pitch, dst_row_pitch, dst_slice_pitch } = extent else {
        return Err(BackendError::Unsupported(format!("a linear copy from memory {src} to {dst}, one of them an image (image copies are rectangles)")));
    };
    let (src_pitches, dst_pitches) = ([src_row_pitch, src_slice_pitch], [dst_row_pitch, dst_slice_pitch]);
    match (source, target) {
        (MemObject::Image { mem: s, image: from, .. }, MemObject::Image { mem: d, image: to, .. }) => {
            if from.texel_bytes != to.texel_bytes {
                return Err(BackendError::Unsupported(format!("a copy between images {src} and {dst} of different texel sizes")));
            }
            let (src_origin, region) = texels(src, &from, src_origin, region, src_pitches)?;
            let (dst_origin, _) = texels(dst, &to, dst_origin, extent_region(extent), dst_pitches)?;
            Ok(Resolved::CopyImage { src: s, dst: d, src_origin, dst_origin, region })
        }
        (MemObject::Image { mem: s, image, .. }, MemObject::Buffer { mem: d, .. }) => {
            let (src_origin, texel_region) = texels(src, &image, src_origin, region, src_pitches)?;
            let dst_offset = packed_offset(dst, dst_origin, region, dst_pitches)?;
            within(dst, target, dst_offset, region.iter().product())?;
            Ok(Resolved::CopyImageToBuffer { src: s, dst: d, src_origin, region: texel_region, dst_offset: dst_offset as usize })
        }
        (MemObject::Buffer { mem: s, .. }, MemObject::Image { mem: d, image, .. }) => {
            let (dst_origin, texel_region) = texels(dst, &image, dst_origin, region, dst_pitches)?;
            let src_offset = packed_offset(src, src_origin, region, src_pitches)?;
            within(src, source, src_offset, region.iter().product())?;
            Ok(Resolved::CopyBufferToImage { src: s, dst: d, src_offset: src_offset as usize, dst_origin, region: texel_region })
        }
        _ => Err(BackendError::Unsupported(format!("a copy between SVM memory and an image (memory {src} to {dst})"))),
    }
}

fn extent_region(extent: &Extent) -> [u64; 3] {
    match extent {
        Extent::Rect { region, .. } => *region,
        Extent::Linear { bytes } => [*bytes, 1, 1],
    }
}

/// The geometry of a rectangular host transfer, checked on the device side (`to_device`:
/// the destination is the memory object).
fn host_rect(extent: &Extent, mem: MemId, object: MemObject, to_device: bool) -> BackendResult<Option<Rect>> {
    if matches!(extent, Extent::Linear { .. }) {
        return Ok(None);
    }
    if matches!(object, MemObject::Svm { .. }) {
        return Err(BackendError::Unsupported("a rectangular transfer of SVM memory".into()));
    }
    let rect = rect_of(extent)?;
    let (origin, pitches) =
        if to_device { (rect.dst_origin, [rect.pitches[2], rect.pitches[3]]) } else { (rect.src_origin, [rect.pitches[0], rect.pitches[1]]) };
    match object {
        MemObject::Image { image, .. } => {
            let wide = |v: [usize; 2]| v.map(|x| x as u64);
            texels(mem, &image, origin.map(|x| x as u64), rect.region.map(|x| x as u64), wide(pitches))?;
        }
        _ => rect_within(mem, object, origin, rect.region, pitches)?,
    }
    Ok(Some(rect))
}

fn rect_of(extent: &Extent) -> BackendResult<Rect> {
    let Extent::Rect { src_origin, dst_origin, region, src_row_pitch, src_slice_pitch, dst_row_pitch, dst_slice_pitch } = extent else {
        return Err(BackendError::Unsupported("expected a rectangular extent".into()));
    };
    if region.contains(&0) {
        return Err(BackendError::Unsupported(format!("an empty rectangle {region:?}")));
    }
    let sizes = |v: &[u64; 3]| v.map(|x| x as usize);
    let [src_row, src_slice] = pitches_or_default(region, *src_row_pitch, *src_slice_pitch)?;
    let [dst_row, dst_slice] = pitches_or_default(region, *dst_row_pitch, *dst_slice_pitch)?;
    Ok(Rect { src_origin: sizes(src_origin), dst_origin: sizes(dst_origin), region: sizes(region), pitches: [src_row, src_slice, dst_row, dst_slice] })
}

/// One side's pitches with OpenCL's meaning of zero made explicit (rows of `region[0]` bytes,
/// slices of `region[1]` rows) and OpenCL's rule that rows and slices do not overlap, so a
/// rectangle's end bounds every byte the driver touches.
fn pitches_or_default(region: &[u64; 3], row_pitch: u64, slice_pitch: u64) -> BackendResult<[usize; 2]> {
    let row = if row_pitch == 0 { region[0] } else { row_pitch };
    let least_slice = row.checked_mul(region[1]);
    let slice = if slice_pitch == 0 { least_slice } else { Some(slice_pitch) };
    match (least_slice, slice) {
        (Some(least), Some(slice)) if row >= region[0] && slice >= least => Ok([row as usize, slice as usize]),
        _ => Err(BackendError::Unsupported(format!(
            "a rectangle {region:?} with row pitch {row_pitch} and slice pitch {slice_pitch} (OpenCL needs rows and slices that do not overlap)"
        ))),
    }
}

/// Bytes from the start of a rectangle's memory through its last byte; `None` when that
/// overflows (or the region is empty).
pub fn rect_end(origin: [usize; 3], region: [usize; 3], [row_pitch, slice_pitch]: [usize; 2]) -> Option<u64> {
    let [x, y, z] = origin.map(|v| v as u64);
    let [width, height, depth] = region.map(|v| v as u64);
    let (row, slice) = (row_pitch as u64, slice_pitch as u64);
    let start = x.checked_add(y.checked_mul(row)?)?.checked_add(z.checked_mul(slice)?)?;
    let last_row = depth.checked_sub(1)?.checked_mul(slice)?.checked_add(height.checked_sub(1)?.checked_mul(row)?)?;
    start.checked_add(last_row)?.checked_add(width)
}

fn rect_within(mem: MemId, object: MemObject, origin: [usize; 3], region: [usize; 3], pitches: [usize; 2]) -> BackendResult<()> {
    if rect_end(origin, region, pitches).is_none_or(|end| end > object.size()) {
        return Err(BackendError::Unsupported(format!(
            "a rectangle (origin {origin:?}, region {region:?}, pitches {pitches:?}) outside memory {mem} of {} bytes",
            object.size()
        )));
    }
    Ok(())
}

fn within(mem: MemId, object: MemObject, offset: u64, bytes: u64) -> BackendResult<()> {
    if bytes == 0 || offset.checked_add(bytes).is_none_or(|end| end > object.size()) {
        return Err(BackendError::Unsupported(format!("{bytes} bytes at offset {offset} of memory {mem}, which has {} bytes", object.size())));
    }
    Ok(())
}

fn resolve_fill<'n>(objects: &Objects, fill: &'n Fill) -> BackendResult<Resolved<'n>> {
    let pattern = fill.pattern.as_slice();
    let object = objects.memory(fill.mem)?;
    if let MemObject::Image { mem, image, .. } = object {
        let (color, origin, region) = fill_region(fill.mem, &image, pattern, fill.offset, fill.bytes, fill.rows)?;
        return Ok(Resolved::FillImage { mem, color, origin, region });
    }
    let size = pattern.len() as u64;
    if fill.rows.is_some() {
        return Err(BackendError::Unsupported("a 2D fill (OpenCL fills are linear)".into()));
    }
    if !size.is_power_of_two() || size > 128 || !fill.offset.is_multiple_of(size) || !fill.bytes.is_multiple_of(size) {
        return Err(BackendError::Unsupported(format!(
            "a fill of {} bytes at {} with a {size}-byte pattern (OpenCL needs a power-of-two pattern of at most 128 bytes dividing both)",
            fill.bytes, fill.offset
        )));
    }
    within(fill.mem, object, fill.offset, fill.bytes)?;
    let (offset, bytes) = (fill.offset as usize, fill.bytes as usize);
    Ok(match object {
        MemObject::Svm { pointer, calls, .. } => {
            Resolved::SvmFill { pointer: unsafe { (pointer as *mut u8).add(offset) as *mut c_void }, bytes, pattern, calls }
        }
        MemObject::Buffer { mem, .. } | MemObject::Image { mem, .. } => Resolved::Fill { mem, offset, bytes, pattern },
    })
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn rectangles_take_opencl_default_pitches() {
        let extent = Extent::Rect {
            src_origin: [0, 1, 0],
            dst_origin: [0; 3],
            region: [4, 2, 3],
            src_row_pitch: 0,
            src_slice_pitch: 0,
            dst_row_pitch: 16,
            dst_slice_pitch: 0,
        };
        let rect = rect_of(&extent).expect("a valid rectangle");
        assert_eq!(rect.pitches, [4, 8, 16, 32]);
        // Starts at row 1 (byte 4); the last row starts 2 slices and 1 row later.
        assert_eq!(rect_end(rect.src_origin, rect.region, [4, 8]), Some(4 + 2 * 8 + 4 + 4));
    }

    #[test]
    fn overflowing_or_overlapping_rectangles_are_refused() {
        assert_eq!(rect_end([0, usize::MAX, 0], [1, 1, 1], [2, 0]), None);
        assert_eq!(rect_end([0; 3], [1, 1, usize::MAX], [1, usize::MAX]), None);
        let huge = Extent::Rect { src_origin: [0; 3], dst_origin: [0; 3], region: [u64::MAX, 2, 1], src_row_pitch: 0, src_slice_pitch: 0, dst_row_pitch: 0, dst_slice_pitch: 0 };
        assert!(rect_of(&huge).is_err());
        let overlapping = Extent::Rect { src_origin: [0; 3], dst_origin: [0; 3], region: [8, 2, 1], src_row_pitch: 4, src_slice_pitch: 0, dst_row_pitch: 0, dst_slice_pitch: 0 };
        assert!(rect_of(&overlapping).is_err());
    }
}
