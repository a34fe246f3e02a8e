//! Enqueued commands: kernels, reads, writes, copies, fills (and their rectangular forms),
//! maps, SVM operations, markers and barriers. Each is prepared before the real call (initial
//! memory contents) and recorded after it succeeded.

use super::access::DeviceAccess;
use super::state::{with_recorder, ArgValue, Mapping, State};
use super::{key, succeeded, sync, Failure, Recorded};
use crate::entry::Forward;
use crate::recorder::{Access, HostRegion, Key, Order, Prepared, Recorder, Submission};
use libc::size_t;
use opencl_sys::*;
use std::ffi::c_void;
use trace_format::{Arg, Command, Copy, Extent, Fill, KernelLaunch, Launch, Param, ParamKind, Place};

/// How a command was enqueued.
pub(super) struct Enqueued {
    call: &'static str,
    queue: cl_command_queue,
    order: Order,
    /// The wait list as the program passed it (read once the call succeeded).
    waits: (cl_uint, *const cl_event),
    /// Where the program gets the command's event, or null.
    event: *mut cl_event,
    /// A blocking read, write or map: a host synchronization.
    blocking: bool,
    received: Option<HostRegion>,
}

impl Enqueued {
    pub(super) fn new(call: &'static str, queue: cl_command_queue, count: cl_uint, waits: *const cl_event, event: *mut cl_event) -> Enqueued {
        Enqueued { call, queue, order: Order::Command, waits: (count, waits), event, blocking: false, received: None }
    }

    fn ordered(self, order: Order) -> Enqueued {
        Enqueued { order, ..self }
    }

    fn blocking(self, blocking: cl_bool) -> Enqueued {
        Enqueued { blocking: blocking != CL_FALSE, ..self }
    }

    fn receiving(self, address: *const c_void, len: usize) -> Enqueued {
        Enqueued { received: Some(HostRegion { address: address as usize, len }), ..self }
    }
}

/// Before the real call: the initial contents of memory the command uses first in its window.
pub(super) fn prepare(accesses: impl FnOnce(&State, &Recorder) -> Vec<Access>) -> Result<Prepared, Failure> {
    with_recorder(|state, recorder| {
        // Outside the capture range nothing is snapshotted: the accesses are not needed.
        let accesses = if recorder.capturing() { accesses(state, recorder) } else { Vec::new() };
        recorder.prepare(&accesses, &DeviceAccess::new(&state.memories))
    })
}

/// After the real call succeeded: records the command `build` makes (a barrier, and the trace
/// marked partial with the reason `build` gives, when it cannot be described).
pub(super) unsafe fn record(
    prepared: Prepared,
    enqueued: Enqueued,
    build: impl FnOnce(&mut Recorder, &State) -> Result<Command, &'static str>,
) -> Recorded {
    // SAFETY: the call succeeded, so the wait list held its events and a requested event
    // was written.
    let waits: Vec<Key> = match enqueued.waits {
        (_, list) if list.is_null() => Vec::new(),
        (count, list) => unsafe { std::slice::from_raw_parts(list, count as usize) }.iter().map(|&event| key(event)).collect(),
    };
    let signals = (!enqueued.event.is_null()).then(|| key(unsafe { *enqueued.event }));
    let call = enqueued.call;
    with_recorder(|state, recorder| {
        let submission = Submission {
            call,
            queue: Some(key(enqueued.queue)),
            order: enqueued.order,
            waits: &waits,
            signals,
            received: enqueued.received,
        };
        recorder.submit(prepared, submission, |recorder| {
            build(recorder, state).unwrap_or_else(|reason| {
                recorder.partial(call, reason);
                Command::Barrier
            })
        })
    })?;
    if enqueued.blocking {
        sync::end_window(call)?;
    }
    Ok(())
}

pub(super) const UNKNOWN_MEMORY: &str = "it names memory the shim did not see created";

pub(super) fn memory(recorder: &mut Recorder, mem: Key, offset: u64) -> Result<Place, &'static str> {
    recorder.mem_id(mem).map(|mem| Place::Memory { mem, offset }).ok_or(UNKNOWN_MEMORY)
}

/// An SVM pointer's place: inside a known allocation, else host memory.
pub(super) fn svm_place(recorder: &mut Recorder, pointer: *const c_void) -> Option<Place> {
    let (mem, offset) = recorder.locate(pointer as usize as u64)?;
    recorder.mem_id(mem).map(|mem| Place::Memory { mem, offset })
}

/// `count` bytes of host memory the program passed.
pub(super) unsafe fn host_bytes(pointer: *const c_void, count: usize) -> Vec<u8> {
    // SAFETY: the program handed the API this memory for the command.
    unsafe { std::slice::from_raw_parts(pointer.cast::<u8>(), count) }.to_vec()
}

unsafe fn triple(values: *const size_t) -> [u64; 3] {
    // SAFETY: rectangle arguments are arrays of three sizes.
    unsafe { [*values, *values.add(1), *values.add(2)] }.map(|value| value as u64)
}

// ---- kernels -------------------------------------------------------------------------------

/// A kernel argument as the trace binds it.
enum Decoded {
    Memory(Key, u64),
    Null,
    Local(u64),
    Value(Vec<u8>),
}

fn decode(state: &State, recorder: &Recorder, value: &ArgValue) -> Decoded {
    match value {
        ArgValue::Local(size) => Decoded::Local(*size),
        ArgValue::Svm(0) => Decoded::Null,
        ArgValue::Svm(pointer) => match recorder.locate(*pointer) {
            Some((mem, offset)) => Decoded::Memory(mem, offset),
            None => Decoded::Value(pointer.to_ne_bytes().to_vec()),
        },
        ArgValue::Bytes(bytes) => {
            let handle = <[u8; 8]>::try_from(bytes.as_slice()).map(u64::from_ne_bytes);
            match handle {
                Ok(handle) if state.memories.objects.get(&handle).is_some_and(|object| !object.svm) => Decoded::Memory(handle, 0),
                _ => Decoded::Value(bytes.clone()),
            }
        }
    }
}

/// Every memory argument, read and written (what a kernel does with it is not known).
pub(super) fn kernel_accesses(state: &State, recorder: &Recorder, kernel: cl_kernel) -> Vec<Access> {
    let arguments = state.kernel_args.get(&key(kernel)).map(Vec::as_slice).unwrap_or_default();
    arguments
        .iter()
        .flatten()
        .filter_map(|value| match decode(state, recorder, value) {
            Decoded::Memory(mem, _) => Some(Access { mem, write: true }),
            _ => None,
        })
        .collect()
}

pub(super) fn kernel_command(recorder: &mut Recorder, state: &State, kernel: cl_kernel, launch: Launch) -> Result<Command, &'static str> {
    let arguments = state.kernel_args.get(&key(kernel)).ok_or("the shim did not see the kernel created")?;
    let mut params = Vec::with_capacity(arguments.len());
    let mut args = Vec::with_capacity(arguments.len());
    for value in arguments {
        let value = value.as_ref().ok_or("an argument the shim did not see set")?;
        let (kind, size, arg) = match decode(state, recorder, value) {
            Decoded::Memory(mem, offset) => {
                let mem = recorder.mem_id(mem).ok_or(UNKNOWN_MEMORY)?;
                (ParamKind::Memory, size_of::<cl_mem>(), Arg::Memory { mem, offset })
            }
            Decoded::Null => (ParamKind::Memory, size_of::<cl_mem>(), Arg::NullMemory),
            Decoded::Local(size) => (ParamKind::Local, size as usize, Arg::Local(size)),
            Decoded::Value(bytes) => (ParamKind::Value, bytes.len(), Arg::Value(bytes)),
        };
        params.push(Param { offset: 0, size: size as u32, kind });
        args.push(arg);
    }
    let kernel = recorder.kernel_id(key(kernel), &params).ok_or("the shim did not see the kernel created")?;
    Ok(Command::Kernel(KernelLaunch { kernel, args, launch }))
}

unsafe fn launch_kernel(
    forward: &mut Forward<'_, cl_int>,
    enqueued: Enqueued,
    kernel: cl_kernel,
    launch: Launch,
) -> Recorded {
    let prepared = prepare(|state, recorder| kernel_accesses(state, recorder, kernel))?;
    if !succeeded(forward) {
        return Ok(());
    }
    unsafe { record(prepared, enqueued, |recorder, state| kernel_command(recorder, state, kernel, launch)) }
}

/// An ND-range as the API gives it: `work_dim` sizes in each non-null array.
pub(super) unsafe fn nd_range(work_dim: cl_uint, offset: *const size_t, global: *const size_t, local: *const size_t) -> Launch {
    let dims = (work_dim as usize).min(3);
    // SAFETY: the call succeeded, so each non-null array holds `work_dim` sizes.
    let sizes = |array: *const size_t, missing: u64| -> Option<[u64; 3]> {
        (!array.is_null()).then(|| std::array::from_fn(|i| if i < dims { unsafe { *array.add(i) as u64 } } else { missing }))
    };
    Launch::NdRange {
        dims: work_dim,
        offset: sizes(offset, 0).unwrap_or([0; 3]),
        global: sizes(global, 1).unwrap_or([0; 3]),
        local: sizes(local, 1),
    }
}

pub unsafe fn nd_range_kernel(
    forward: &mut Forward<'_, cl_int>,
    queue: cl_command_queue,
    kernel: cl_kernel,
    work_dim: cl_uint,
    global_work_offset: *const size_t,
    global_work_size: *const size_t,
    local_work_size: *const size_t,
    wait_count: cl_uint,
    waits: *const cl_event,
    event: *mut cl_event,
) -> Recorded {
    let launch = unsafe { nd_range(work_dim, global_work_offset, global_work_size, local_work_size) };
    let enqueued = Enqueued::new("clEnqueueNDRangeKernel", queue, wait_count, waits, event);
    unsafe { launch_kernel(forward, enqueued, kernel, launch) }
}

pub unsafe fn task(
    forward: &mut Forward<'_, cl_int>,
    queue: cl_command_queue,
    kernel: cl_kernel,
    wait_count: cl_uint,
    waits: *const cl_event,
    event: *mut cl_event,
) -> Recorded {
    let launch = Launch::NdRange { dims: 1, offset: [0; 3], global: [1; 3], local: Some([1; 3]) };
    let enqueued = Enqueued::new("clEnqueueTask", queue, wait_count, waits, event);
    unsafe { launch_kernel(forward, enqueued, kernel, launch) }
}

// ---- reads, writes, copies, fills ---------------------------------------------------------------

pub unsafe fn read_buffer(
    forward: &mut Forward<'_, cl_int>,
    queue: cl_command_queue,
    buffer: cl_mem,
    blocking: cl_bool,
    offset: size_t,
    size: size_t,
    ptr: *mut c_void,
    wait_count: cl_uint,
    waits: *const cl_event,
    event: *mut cl_event,
) -> Recorded {
    let prepared = prepare(|_, _| vec![Access { mem: key(buffer), write: false }])?;
    if !succeeded(forward) {
        return Ok(());
    }
    let enqueued = Enqueued::new("clEnqueueReadBuffer", queue, wait_count, waits, event);
    let enqueued = enqueued.blocking(blocking).receiving(ptr, size);
    unsafe {
        record(prepared, enqueued, |recorder, _| {
            let src = memory(recorder, key(buffer), offset as u64)?;
            Ok(Command::Copy(Copy { src, dst: Place::Host { data: None }, extent: Extent::Linear { bytes: size as u64 } }))
        })
    }
}

pub unsafe fn write_buffer(
    forward: &mut Forward<'_, cl_int>,
    queue: cl_command_queue,
    buffer: cl_mem,
    blocking: cl_bool,
    offset: size_t,
    size: size_t,
    ptr: *const c_void,
    wait_count: cl_uint,
    waits: *const cl_event,
    event: *mut cl_event,
) -> Recorded {
    let prepared = prepare(|_, _| vec![Access { mem: key(buffer), write: true }])?;
    if !succeeded(forward) {
        return Ok(());
    }
    let enqueued = Enqueued::new("clEnqueueWriteBuffer", queue, wait_count, waits, event).blocking(blocking);
    unsafe {
        record(prepared, enqueued, |recorder, _| {
            let dst = memory(recorder, key(buffer), offset as u64)?;
            let data = recorder.blob(host_bytes(ptr, size));
            Ok(Command::Copy(Copy { src: Place::Host { data: Some(data) }, dst, extent: Extent::Linear { bytes: size as u64 } }))
        })
    }
}

/// A rectangle's pitches with the API's defaults for zero (tightly packed rows and slices).
fn pitches(region: [u64; 3], row_pitch: size_t, slice_pitch: size_t) -> (u64, u64) {
    let row = if row_pitch == 0 { region[0] } else { row_pitch as u64 };
    let slice = if slice_pitch == 0 { region[1] * row } else { slice_pitch as u64 };
    (row, slice)
}

/// Bytes of host memory from its pointer through the last byte of the rectangle (the host
/// data of a rectangular read or write covers them, origin included).
fn host_span(origin: [u64; 3], region: [u64; 3], row_pitch: u64, slice_pitch: u64) -> usize {
    let last = |axis: usize| origin[axis] + region[axis].saturating_sub(1);
    (last(2) * slice_pitch + last(1) * row_pitch + origin[0] + region[0]) as usize
}

/// The two sides of a rectangular host transfer, as `Extent::Rect` holds them.
struct RectSides {
    buffer_origin: [u64; 3],
    host_origin: [u64; 3],
    region: [u64; 3],
    buffer_pitches: (u64, u64),
    host_pitches: (u64, u64),
}

impl RectSides {
    unsafe fn new(
        buffer_origin: *const size_t,
        host_origin: *const size_t,
        region: *const size_t,
        buffer_pitches: (size_t, size_t),
        host_pitches: (size_t, size_t),
    ) -> RectSides {
        let region = unsafe { triple(region) };
        RectSides {
            buffer_origin: unsafe { triple(buffer_origin) },
            host_origin: unsafe { triple(host_origin) },
            region,
            buffer_pitches: pitches(region, buffer_pitches.0, buffer_pitches.1),
            host_pitches: pitches(region, host_pitches.0, host_pitches.1),
        }
    }

    fn host_span(&self) -> usize {
        host_span(self.host_origin, self.region, self.host_pitches.0, self.host_pitches.1)
    }

    /// The extent of a copy from the buffer to the host (`to_host`) or back.
    fn extent(&self, to_host: bool) -> Extent {
        let (src, dst) = match to_host {
            true => ((self.buffer_origin, self.buffer_pitches), (self.host_origin, self.host_pitches)),
            false => ((self.host_origin, self.host_pitches), (self.buffer_origin, self.buffer_pitches)),
        };
        Extent::Rect {
            src_origin: src.0,
            dst_origin: dst.0,
            region: self.region,
            src_row_pitch: src.1 .0,
            src_slice_pitch: src.1 .1,
            dst_row_pitch: dst.1 .0,
            dst_slice_pitch: dst.1 .1,
        }
    }
}

pub unsafe fn read_buffer_rect(
    forward: &mut Forward<'_, cl_int>,
    queue: cl_command_queue,
    buffer: cl_mem,
    blocking: cl_bool,
    buffer_origin: *const size_t,
    host_origin: *const size_t,
    region: *const size_t,
    buffer_row_pitch: size_t,
    buffer_slice_pitch: size_t,
    host_row_pitch: size_t,
    host_slice_pitch: size_t,
    ptr: *mut c_void,
    wait_count: cl_uint,
    waits: *const cl_event,
    event: *mut cl_event,
) -> Recorded {
    let prepared = prepare(|_, _| vec![Access { mem: key(buffer), write: false }])?;
    if !succeeded(forward) {
        return Ok(());
    }
    let sides = unsafe {
        RectSides::new(buffer_origin, host_origin, region, (buffer_row_pitch, buffer_slice_pitch), (host_row_pitch, host_slice_pitch))
    };
    let enqueued = Enqueued::new("clEnqueueReadBufferRect", queue, wait_count, waits, event);
    let enqueued = enqueued.blocking(blocking).receiving(ptr, sides.host_span());
    unsafe {
        record(prepared, enqueued, |recorder, _| {
            let src = memory(recorder, key(buffer), 0)?;
            Ok(Command::Copy(Copy { src, dst: Place::Host { data: None }, extent: sides.extent(true) }))
        })
    }
}

pub unsafe fn write_buffer_rect(
    forward: &mut Forward<'_, cl_int>,
    queue: cl_command_queue,
    buffer: cl_mem,
    blocking: cl_bool,
    buffer_origin: *const size_t,
    host_origin: *const size_t,
    region: *const size_t,
    buffer_row_pitch: size_t,
    buffer_slice_pitch: size_t,
    host_row_pitch: size_t,
    host_slice_pitch: size_t,
    ptr: *const c_void,
    wait_count: cl_uint,
    waits: *const cl_event,
    event: *mut cl_event,
) -> Recorded {
    let prepared = prepare(|_, _| vec![Access { mem: key(buffer), write: true }])?;
    if !succeeded(forward) {
        return Ok(());
    }
    let sides = unsafe {
        RectSides::new(buffer_origin, host_origin, region, (buffer_row_pitch, buffer_slice_pitch), (host_row_pitch, host_slice_pitch))
    };
    let enqueued = Enqueued::new("clEnqueueWriteBufferRect", queue, wait_count, waits, event).blocking(blocking);
    unsafe {
        record(prepared, enqueued, |recorder, _| {
            let dst = memory(recorder, key(buffer), 0)?;
            let data = recorder.blob(host_bytes(ptr, sides.host_span()));
            Ok(Command::Copy(Copy { src: Place::Host { data: Some(data) }, dst, extent: sides.extent(false) }))
        })
    }
}

pub unsafe fn copy_buffer(
    forward: &mut Forward<'_, cl_int>,
    queue: cl_command_queue,
    src_buffer: cl_mem,
    dst_buffer: cl_mem,
    src_offset: size_t,
    dst_offset: size_t,
    size: size_t,
    wait_count: cl_uint,
    waits: *const cl_event,
    event: *mut cl_event,
) -> Recorded {
    let accesses = vec![Access { mem: key(src_buffer), write: false }, Access { mem: key(dst_buffer), write: true }];
    let prepared = prepare(|_, _| accesses)?;
    if !succeeded(forward) {
        return Ok(());
    }
    let enqueued = Enqueued::new("clEnqueueCopyBuffer", queue, wait_count, waits, event);
    unsafe {
        record(prepared, enqueued, |recorder, _| {
            let src = memory(recorder, key(src_buffer), src_offset as u64)?;
            let dst = memory(recorder, key(dst_buffer), dst_offset as u64)?;
            Ok(Command::Copy(Copy { src, dst, extent: Extent::Linear { bytes: size as u64 } }))
        })
    }
}

/// The extent of a rectangular copy between buffers, with the API's default pitches.
pub(super) unsafe fn rect_extent(
    src_origin: *const size_t,
    dst_origin: *const size_t,
    region: *const size_t,
    src_pitches: (size_t, size_t),
    dst_pitches: (size_t, size_t),
) -> Extent {
    let region = unsafe { triple(region) };
    let (src_row_pitch, src_slice_pitch) = pitches(region, src_pitches.0, src_pitches.1);
    let (dst_row_pitch, dst_slice_pitch) = pitches(region, dst_pitches.0, dst_pitches.1);
    Extent::Rect {
        src_origin: unsafe { triple(src_origin) },
        dst_origin: unsafe { triple(dst_origin) },
        region,
        src_row_pitch,
        src_slice_pitch,
        dst_row_pitch,
        dst_slice_pitch,
    }
}

pub unsafe fn copy_buffer_rect(
    forward: &mut Forward<'_, cl_int>,
    queue: cl_command_queue,
    src_buffer: cl_mem,
    dst_buffer: cl_mem,
    src_origin: *const size_t,
    dst_origin: *const size_t,
    region: *const size_t,
    src_row_pitch: size_t,
    src_slice_pitch: size_t,
    dst_row_pitch: size_t,
    dst_slice_pitch: size_t,
    wait_count: cl_uint,
    waits: *const cl_event,
    event: *mut cl_event,
) -> Recorded {
    let accesses = vec![Access { mem: key(src_buffer), write: false }, Access { mem: key(dst_buffer), write: true }];
    let prepared = prepare(|_, _| accesses)?;
    if !succeeded(forward) {
        return Ok(());
    }
    let extent = unsafe { rect_extent(src_origin, dst_origin, region, (src_row_pitch, src_slice_pitch), (dst_row_pitch, dst_slice_pitch)) };
    let enqueued = Enqueued::new("clEnqueueCopyBufferRect", queue, wait_count, waits, event);
    unsafe {
        record(prepared, enqueued, |recorder, _| {
            let src = memory(recorder, key(src_buffer), 0)?;
            let dst = memory(recorder, key(dst_buffer), 0)?;
            Ok(Command::Copy(Copy { src, dst, extent }))
        })
    }
}

pub unsafe fn fill_buffer(
    forward: &mut Forward<'_, cl_int>,
    queue: cl_command_queue,
    buffer: cl_mem,
    pattern: *const c_void,
    pattern_size: size_t,
    offset: size_t,
    size: size_t,
    wait_count: cl_uint,
    waits: *const cl_event,
    event: *mut cl_event,
) -> Recorded {
    let prepared = prepare(|_, _| vec![Access { mem: key(buffer), write: true }])?;
    if !succeeded(forward) {
        return Ok(());
    }
    let pattern = unsafe { host_bytes(pattern, pattern_size) };
    let enqueued = Enqueued::new("clEnqueueFillBuffer", queue, wait_count, waits, event);
    unsafe {
        record(prepared, enqueued, |recorder, _| {
            let mem = recorder.mem_id(key(buffer)).ok_or(UNKNOWN_MEMORY)?;
            Ok(Command::Fill(Fill { mem, offset: offset as u64, bytes: size as u64, pattern, rows: None }))
        })
    }
}

// ---- maps ------------------------------------------------------------------------------------

fn maps_for_writing(flags: cl_map_flags) -> bool {
    flags & (CL_MAP_WRITE | CL_MAP_WRITE_INVALIDATE_REGION) != 0
}

/// A map for reading is a read of the region into the mapped memory; a map only for writing
/// orders but moves nothing (its unmap is the write).
unsafe fn map_region(
    prepared: Prepared,
    enqueued: Enqueued,
    mapping: Mapping,
    flags: cl_map_flags,
    mapped: *mut c_void,
) -> Recorded {
    let reads = flags & CL_MAP_READ != 0 || flags == 0;
    with_recorder(|state, _| state.mappings.insert(mapped as usize, mapping))?;
    let enqueued = match reads {
        true => enqueued.receiving(mapped, mapping.size as usize),
        false => enqueued,
    };
    unsafe {
        record(prepared, enqueued, |recorder, _| match reads {
            true => {
                let src = memory(recorder, mapping.mem, mapping.offset)?;
                let extent = Extent::Linear { bytes: mapping.size };
                Ok(Command::Copy(Copy { src, dst: Place::Host { data: None }, extent }))
            }
            false => Ok(Command::Barrier),
        })
    }
}

/// An unmap of a region mapped for writing writes it back with what the program put there.
unsafe fn unmap_region(forward: &mut Forward<'_, cl_int>, enqueued: Enqueued, mapped: *mut c_void) -> Recorded {
    let taken = with_recorder(|state, recorder| {
        let mapping = state.mappings.remove(&(mapped as usize))?;
        // The mapped memory is gone after the unmap: take what the program received and wrote now.
        recorder.capture_received(mapped as usize);
        let written = (mapping.write && recorder.capturing())
            .then(|| recorder.blob(unsafe { host_bytes(mapped, mapping.size as usize) }));
        let accesses = [Access { mem: mapping.mem, write: mapping.write }];
        Some((mapping, written, recorder.prepare(&accesses, &DeviceAccess::new(&state.memories))))
    })?;
    let Some((mapping, written, prepared)) = taken else {
        forward.call();
        return Ok(());
    };
    if !succeeded(forward) {
        return Ok(());
    }
    unsafe {
        record(prepared, enqueued, |recorder, _| match written {
            Some(data) => {
                let dst = memory(recorder, mapping.mem, mapping.offset)?;
                let extent = Extent::Linear { bytes: mapping.size };
                Ok(Command::Copy(Copy { src: Place::Host { data: Some(data) }, dst, extent }))
            }
            None => Ok(Command::Barrier),
        })
    }
}

pub unsafe fn map_buffer(
    forward: &mut Forward<'_, *mut c_void>,
    queue: cl_command_queue,
    buffer: cl_mem,
    blocking: cl_bool,
    flags: cl_map_flags,
    offset: size_t,
    size: size_t,
    wait_count: cl_uint,
    waits: *const cl_event,
    event: *mut cl_event,
    errcode_ret: *mut cl_int,
) -> Recorded {
    let prepared = prepare(|_, _| vec![Access { mem: key(buffer), write: false }])?;
    let Some(mapped) = (unsafe { super::created(forward, errcode_ret) }) else { return Ok(()) };
    let mapping = Mapping { mem: key(buffer), offset: offset as u64, size: size as u64, write: maps_for_writing(flags) };
    let enqueued = Enqueued::new("clEnqueueMapBuffer", queue, wait_count, waits, event).blocking(blocking);
    unsafe { map_region(prepared, enqueued, mapping, flags, mapped) }
}

pub unsafe fn unmap(
    forward: &mut Forward<'_, cl_int>,
    queue: cl_command_queue,
    _mem: cl_mem,
    mapped: *mut c_void,
    wait_count: cl_uint,
    waits: *const cl_event,
    event: *mut cl_event,
) -> Recorded {
    let enqueued = Enqueued::new("clEnqueueUnmapMemObject", queue, wait_count, waits, event);
    unsafe { unmap_region(forward, enqueued, mapped) }
}

// ---- SVM -------------------------------------------------------------------------------------

pub unsafe fn svm_memcpy(
    forward: &mut Forward<'_, cl_int>,
    queue: cl_command_queue,
    blocking: cl_bool,
    dst: *mut c_void,
    src: *const c_void,
    size: size_t,
    wait_count: cl_uint,
    waits: *const cl_event,
    event: *mut cl_event,
) -> Recorded {
    let prepared = prepare(|_, recorder| {
        let side = |pointer: *const c_void, write| recorder.locate(pointer as usize as u64).map(|(mem, _)| Access { mem, write });
        side(src, false).into_iter().chain(side(dst, true)).collect()
    })?;
    if !succeeded(forward) {
        return Ok(());
    }
    let enqueued = Enqueued::new("clEnqueueSVMMemcpy", queue, wait_count, waits, event).blocking(blocking);
    let dst_in_svm = with_recorder(|_, recorder| recorder.locate(dst as usize as u64).is_some())?;
    let enqueued = match dst_in_svm {
        true => enqueued,
        false => enqueued.receiving(dst, size),
    };
    unsafe {
        record(prepared, enqueued, |recorder, _| {
            let src = svm_place(recorder, src).unwrap_or_else(|| Place::Host { data: Some(recorder.blob(host_bytes(src, size))) });
            let dst = svm_place(recorder, dst).unwrap_or(Place::Host { data: None });
            if matches!((&src, &dst), (Place::Host { .. }, Place::Host { .. })) {
                return Err("a copy between host memory outside SVM allocations");
            }
            Ok(Command::Copy(Copy { src, dst, extent: Extent::Linear { bytes: size as u64 } }))
        })
    }
}

pub unsafe fn svm_mem_fill(
    forward: &mut Forward<'_, cl_int>,
    queue: cl_command_queue,
    svm_ptr: *mut c_void,
    pattern: *const c_void,
    pattern_size: size_t,
    size: size_t,
    wait_count: cl_uint,
    waits: *const cl_event,
    event: *mut cl_event,
) -> Recorded {
    let prepared = prepare(|_, recorder| {
        recorder.locate(svm_ptr as usize as u64).map(|(mem, _)| Access { mem, write: true }).into_iter().collect()
    })?;
    if !succeeded(forward) {
        return Ok(());
    }
    let pattern = unsafe { host_bytes(pattern, pattern_size) };
    let enqueued = Enqueued::new("clEnqueueSVMMemFill", queue, wait_count, waits, event);
    unsafe {
        record(prepared, enqueued, |recorder, _| match svm_place(recorder, svm_ptr) {
            Some(Place::Memory { mem, offset }) => {
                Ok(Command::Fill(Fill { mem, offset, bytes: size as u64, pattern, rows: None }))
            }
            _ => Err("a fill outside SVM allocations"),
        })
    }
}

pub unsafe fn svm_map(
    forward: &mut Forward<'_, cl_int>,
    queue: cl_command_queue,
    blocking: cl_bool,
    flags: cl_map_flags,
    svm_ptr: *mut c_void,
    size: size_t,
    wait_count: cl_uint,
    waits: *const cl_event,
    event: *mut cl_event,
) -> Recorded {
    let located = with_recorder(|_, recorder| recorder.locate(svm_ptr as usize as u64))?;
    let Some((mem, offset)) = located else {
        forward.call();
        return Ok(());
    };
    let prepared = prepare(|_, _| vec![Access { mem, write: false }])?;
    if !succeeded(forward) {
        return Ok(());
    }
    let mapping = Mapping { mem, offset, size: size as u64, write: maps_for_writing(flags) };
    let enqueued = Enqueued::new("clEnqueueSVMMap", queue, wait_count, waits, event).blocking(blocking);
    unsafe { map_region(prepared, enqueued, mapping, flags, svm_ptr) }
}

pub unsafe fn svm_unmap(
    forward: &mut Forward<'_, cl_int>,
    queue: cl_command_queue,
    svm_ptr: *mut c_void,
    wait_count: cl_uint,
    waits: *const cl_event,
    event: *mut cl_event,
) -> Recorded {
    let enqueued = Enqueued::new("clEnqueueSVMUnmap", queue, wait_count, waits, event);
    unsafe { unmap_region(forward, enqueued, svm_ptr) }
}

// ---- ordering only ------------------------------------------------------------------------------

/// A command that moves no data the program sees (marker, barrier, migration): a barrier node.
unsafe fn ordering(forward: &mut Forward<'_, cl_int>, enqueued: Enqueued) -> Recorded {
    let prepared = prepare(|_, _| Vec::new())?;
    if !succeeded(forward) {
        return Ok(());
    }
    unsafe { record(prepared, enqueued, |_, _| Ok(Command::Barrier)) }
}

pub unsafe fn marker_with_wait_list(
    forward: &mut Forward<'_, cl_int>,
    queue: cl_command_queue,
    wait_count: cl_uint,
    waits: *const cl_event,
    event: *mut cl_event,
) -> Recorded {
    let enqueued = Enqueued::new("clEnqueueMarkerWithWaitList", queue, wait_count, waits, event);
    unsafe { ordering(forward, enqueued.ordered(Order::Marker)) }
}

pub unsafe fn barrier_with_wait_list(
    forward: &mut Forward<'_, cl_int>,
    queue: cl_command_queue,
    wait_count: cl_uint,
    waits: *const cl_event,
    event: *mut cl_event,
) -> Recorded {
    let enqueued = Enqueued::new("clEnqueueBarrierWithWaitList", queue, wait_count, waits, event);
    unsafe { ordering(forward, enqueued.ordered(Order::Barrier)) }
}

pub unsafe fn marker(forward: &mut Forward<'_, cl_int>, queue: cl_command_queue, event: *mut cl_event) -> Recorded {
    let enqueued = Enqueued::new("clEnqueueMarker", queue, 0, std::ptr::null(), event);
    unsafe { ordering(forward, enqueued.ordered(Order::Marker)) }
}

pub unsafe fn barrier(forward: &mut Forward<'_, cl_int>, queue: cl_command_queue) -> Recorded {
    let enqueued = Enqueued::new("clEnqueueBarrier", queue, 0, std::ptr::null(), std::ptr::null_mut());
    unsafe { ordering(forward, enqueued.ordered(Order::Barrier)) }
}

pub unsafe fn wait_for_events(
    forward: &mut Forward<'_, cl_int>,
    queue: cl_command_queue,
    count: cl_uint,
    events: *const cl_event,
) -> Recorded {
    let enqueued = Enqueued::new("clEnqueueWaitForEvents", queue, count, events, std::ptr::null_mut());
    unsafe { ordering(forward, enqueued.ordered(Order::Barrier)) }
}

pub unsafe fn migrate_mem_objects(
    forward: &mut Forward<'_, cl_int>,
    queue: cl_command_queue,
    _count: cl_uint,
    _mem_objects: *const cl_mem,
    _flags: cl_mem_migration_flags,
    wait_count: cl_uint,
    waits: *const cl_event,
    event: *mut cl_event,
) -> Recorded {
    let enqueued = Enqueued::new("clEnqueueMigrateMemObjects", queue, wait_count, waits, event);
    unsafe { ordering(forward, enqueued) }
}

pub unsafe fn svm_migrate_mem(
    forward: &mut Forward<'_, cl_int>,
    queue: cl_command_queue,
    _count: cl_uint,
    _pointers: *mut *const c_void,
    _sizes: *const size_t,
    _flags: cl_mem_migration_flags,
    wait_count: cl_uint,
    waits: *const cl_event,
    event: *mut cl_event,
) -> Recorded {
    let enqueued = Enqueued::new("clEnqueueSVMMigrateMem", queue, wait_count, waits, event);
    unsafe { ordering(forward, enqueued) }
}
