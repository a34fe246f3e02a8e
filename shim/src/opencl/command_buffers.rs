//! Programs that use `cl_khr_command_buffer` themselves: the shim hands out wrappers for the
//! extension's functions (matching the signatures of the revision each platform implements:
//! before 0.9.5 only `clCommandNDRangeKernelKHR` takes `properties`), keeps each command
//! buffer's commands as a graph, and records each enqueue as one sub-graph node. The program's
//! own updates of kernel commands (`mutable_dispatch`) change that graph.

use super::commands::kernels::{kernel_accesses, kernel_command, nd_range};
use super::commands::transfers::rect_extent;
use super::command_buffer_images::{record_copy_buffer_to_image, record_copy_image, record_copy_image_to_buffer, record_fill_image};
use super::commands::{self, memory, svm_place, Enqueued};
use super::dispatch::call;
use super::mutable_dispatch::{update_mutable_commands, update_mutable_commands_chained, updates_take_config_array};
use super::state::{with_recorder, with_state, CommandBuffer, MutableKernel, State};
use super::{created, hooks, info, key, succeeded, Recorded};
use crate::entry::{intercept, Forward};
use crate::recorder::{Access, Key, Recorder};
use libc::size_t;
use opencl_sys::*;
use crate::fast_hash::HashMap;
use std::ffi::{c_void, CStr};
use std::sync::{Mutex, PoisonError};
use trace_format::{Command, Copy, Extent, Fill, Graph, Node, NodeId, Place, SegmentId};

/// The first revision whose commands all take `properties`.
const PROPERTIES_FOR_ALL: (u32, u32, u32) = (0, 9, 5);

/// Extension addresses by (platform, function), as the platform's driver gives them.
static ADDRESSES: Mutex<Option<HashMap<(Key, &'static str), usize>>> = Mutex::new(None);

/// The platform of each command buffer, kept whether or not the shim records (the wrappers
/// need it to reach the right driver).
static PLATFORMS: Mutex<Option<HashMap<Key, Key>>> = Mutex::new(None);

/// The platform's own implementation of the extension function `name`.
pub(super) fn platform_function(platform: Key, name: &'static str) -> Option<usize> {
    let mut addresses = ADDRESSES.lock().unwrap_or_else(PoisonError::into_inner);
    let addresses = addresses.get_or_insert_with(HashMap::default);
    if let Some(&address) = addresses.get(&(platform, name)) {
        return Some(address);
    }
    let c_name = std::ffi::CString::new(name).ok()?;
    // SAFETY: a valid platform (the program's objects belong to it) and a C string.
    let address = unsafe { hooks::real::clGetExtensionFunctionAddressForPlatform(platform as usize as cl_platform_id, c_name.as_ptr()) };
    (!address.is_null()).then(|| *addresses.entry((platform, name)).or_insert(address as usize))
}

fn platform_of_queue(queue: cl_command_queue) -> Option<Key> {
    let device: cl_device_id =
        info::value(|size, value, size_ret| call!(clGetCommandQueueInfo(queue, CL_QUEUE_DEVICE, size, value, size_ret)))?;
    let platform: cl_platform_id =
        info::value(|size, value, size_ret| call!(clGetDeviceInfo(device, CL_DEVICE_PLATFORM, size, value, size_ret)))?;
    Some(key(platform))
}

pub(super) fn platform_of_buffer(buffer: cl_command_buffer_khr) -> Option<Key> {
    PLATFORMS.lock().unwrap_or_else(PoisonError::into_inner).as_ref()?.get(&key(buffer)).copied()
}

/// Whether the platform's `cl_khr_command_buffer` takes `properties` in every command.
fn properties_for_all(platform: cl_platform_id) -> bool {
    extension_version(platform, c"cl_khr_command_buffer").is_none_or(|version| version >= PROPERTIES_FOR_ALL)
}

/// The revision of `extension` the platform's first device reports.
pub(super) fn extension_version(platform: cl_platform_id, extension: &CStr) -> Option<(u32, u32, u32)> {
    let mut device: cl_device_id = std::ptr::null_mut();
    if call!(clGetDeviceIDs(platform, CL_DEVICE_TYPE_ALL, 1, &mut device, std::ptr::null_mut())) != CL_SUCCESS {
        return None;
    }
    let bytes = info::bytes(|size, value, size_ret| {
        call!(clGetDeviceInfo(device, CL_DEVICE_EXTENSIONS_WITH_VERSION, size, value, size_ret))
    });
    let entry = size_of::<cl_name_version>();
    let version = bytes?.chunks_exact(entry).find_map(|chunk| {
        let (version, name) = chunk.split_at(size_of::<cl_version>());
        let name = CStr::from_bytes_until_nul(name).ok()?;
        (name == extension).then(|| u32::from_ne_bytes(version.try_into().unwrap_or_default()))
    })?;
    Some((version >> 22, (version >> 12) & 0x3ff, version & 0xfff))
}

/// Sync points a command waits for, and where the driver returns the one it signals.
pub(super) struct SyncPoints {
    count: cl_uint,
    waits: *const cl_sync_point_khr,
    signals: *mut cl_sync_point_khr,
}

impl SyncPoints {
    /// The sync points waited for and the one signalled, once the call succeeded.
    unsafe fn read(&self) -> (Vec<cl_sync_point_khr>, Option<cl_sync_point_khr>) {
        // SAFETY: the call succeeded, so the wait list held its sync points and the driver wrote
        // the signalled one.
        let waits = match self.waits.is_null() {
            true => Vec::new(),
            false => unsafe { std::slice::from_raw_parts(self.waits, self.count as usize) }.to_vec(),
        };
        (waits, (!self.signals.is_null()).then(|| unsafe { *self.signals }))
    }
}

/// Adds the command `build` makes to the command buffer's graph, once the real call succeeded.
pub(super) unsafe fn add_command(
    buffer: cl_command_buffer_khr,
    call: &'static str,
    sync: SyncPoints,
    accesses: impl FnOnce(&State, &Recorder) -> Vec<Access>,
    build: impl FnOnce(&mut Recorder, &State) -> Result<Command, &'static str>,
) -> Recorded {
    let (waits, signals) = unsafe { sync.read() };
    with_recorder(|state, recorder| {
        let accesses = accesses(state, recorder);
        let command = build(recorder, state);
        push_node(state, recorder, buffer, call, (&waits, signals), command, accesses);
    })
}

/// Adds `command` (a barrier and a partial trace when it could not be recorded) to the command
/// buffer's graph; the node it became, `None` for a buffer the shim did not see created.
fn push_node(
    state: &mut State,
    recorder: &mut Recorder,
    buffer: cl_command_buffer_khr,
    call: &'static str,
    (waits, signals): (&[cl_sync_point_khr], Option<cl_sync_point_khr>),
    command: Result<Command, &'static str>,
    accesses: Vec<Access>,
) -> Option<NodeId> {
    let command = command.unwrap_or_else(|reason| {
        recorder.partial(call, reason);
        Command::Barrier
    });
    let node = Node { queue: None, segment: SegmentId(0), command, call: call.into() };
    match state.command_buffers.get_mut(&key(buffer)) {
        Some(buffer) => Some(buffer.add(node, waits, signals, accesses)),
        None => {
            recorder.partial(call, "a command buffer the shim did not see created");
            None
        }
    }
}

/// Declares, for each command, the wrapper for revisions before 0.9.5 and the one for later
/// revisions (with `properties`), both recording through the same function.
macro_rules! command_wrappers {
    ($( $name:ident: $before:ident / $after:ident ($($arg:ident: $ty:ty),*) => $record:ident; )*) => {
        $(
            #[allow(non_snake_case)]
            unsafe extern "C" fn $before(
                command_buffer: cl_command_buffer_khr,
                command_queue: cl_command_queue,
                $($arg: $ty,)*
                num_sync_points: cl_uint,
                sync_point_wait_list: *const cl_sync_point_khr,
                sync_point: *mut cl_sync_point_khr,
                mutable_handle: *mut cl_mutable_command_khr,
            ) -> cl_int {
                type Real = unsafe extern "C" fn(cl_command_buffer_khr, cl_command_queue, $($ty,)* cl_uint,
                    *const cl_sync_point_khr, *mut cl_sync_point_khr, *mut cl_mutable_command_khr) -> cl_int;
                let real = || match platform_of_buffer(command_buffer).and_then(|p| platform_function(p, stringify!($name))) {
                    // SAFETY: the platform's function of this name, with this revision's signature.
                    Some(address) => unsafe {
                        std::mem::transmute::<usize, Real>(address)(command_buffer, command_queue, $($arg,)*
                            num_sync_points, sync_point_wait_list, sync_point, mutable_handle)
                    },
                    None => CL_INVALID_COMMAND_BUFFER_KHR,
                };
                let sync = SyncPoints { count: num_sync_points, waits: sync_point_wait_list, signals: sync_point };
                intercept(stringify!($name), &real, |forward| unsafe { $record(forward, command_buffer, $($arg,)* sync) })
            }

            #[allow(non_snake_case, clippy::too_many_arguments)]
            unsafe extern "C" fn $after(
                command_buffer: cl_command_buffer_khr,
                command_queue: cl_command_queue,
                properties: *const cl_command_properties_khr,
                $($arg: $ty,)*
                num_sync_points: cl_uint,
                sync_point_wait_list: *const cl_sync_point_khr,
                sync_point: *mut cl_sync_point_khr,
                mutable_handle: *mut cl_mutable_command_khr,
            ) -> cl_int {
                type Real = unsafe extern "C" fn(cl_command_buffer_khr, cl_command_queue, *const cl_command_properties_khr,
                    $($ty,)* cl_uint, *const cl_sync_point_khr, *mut cl_sync_point_khr, *mut cl_mutable_command_khr) -> cl_int;
                let real = || match platform_of_buffer(command_buffer).and_then(|p| platform_function(p, stringify!($name))) {
                    // SAFETY: the platform's function of this name, with this revision's signature.
                    Some(address) => unsafe {
                        std::mem::transmute::<usize, Real>(address)(command_buffer, command_queue, properties, $($arg,)*
                            num_sync_points, sync_point_wait_list, sync_point, mutable_handle)
                    },
                    None => CL_INVALID_COMMAND_BUFFER_KHR,
                };
                let sync = SyncPoints { count: num_sync_points, waits: sync_point_wait_list, signals: sync_point };
                intercept(stringify!($name), &real, |forward| unsafe { $record(forward, command_buffer, $($arg,)* sync) })
            }
        )*

        /// The shim's wrapper for the extension function `name`, with the signature of the
        /// revision `platform` implements; `None` for functions it does not wrap.
        pub fn wrapper(name: &CStr, platform: cl_platform_id) -> Option<*mut c_void> {
            $(
                if name.to_bytes() == stringify!($name).as_bytes() {
                    let wrapper = if properties_for_all(platform) { $after as *const () } else { $before as *const () };
                    return Some(wrapper.cast_mut().cast());
                }
            )*
            let wrapper = match name.to_bytes() {
                b"clCreateCommandBufferKHR" => clCreateCommandBufferKHR as *const (),
                b"clEnqueueCommandBufferKHR" => clEnqueueCommandBufferKHR as *const (),
                b"clCommandNDRangeKernelKHR" => clCommandNDRangeKernelKHR as *const (),
                b"clUpdateMutableCommandsKHR" => match updates_take_config_array(platform) {
                    true => update_mutable_commands as *const (),
                    false => update_mutable_commands_chained as *const (),
                },
                _ => return None,
            };
            Some(wrapper.cast_mut().cast())
        }
    };
}

command_wrappers! {
    clCommandBarrierWithWaitListKHR: barrier_before_0_9_5 / barrier_since_0_9_5 () => record_barrier;
    clCommandCopyBufferKHR: copy_buffer_before_0_9_5 / copy_buffer_since_0_9_5 (src_buffer: cl_mem, dst_buffer: cl_mem,
        src_offset: size_t, dst_offset: size_t, size: size_t) => record_copy_buffer;
    clCommandCopyBufferRectKHR: copy_buffer_rect_before_0_9_5 / copy_buffer_rect_since_0_9_5 (src_buffer: cl_mem,
        dst_buffer: cl_mem, src_origin: *const size_t, dst_origin: *const size_t, region: *const size_t,
        src_row_pitch: size_t, src_slice_pitch: size_t, dst_row_pitch: size_t, dst_slice_pitch: size_t)
        => record_copy_buffer_rect;
    clCommandFillBufferKHR: fill_buffer_before_0_9_5 / fill_buffer_since_0_9_5 (buffer: cl_mem, pattern: *const c_void,
        pattern_size: size_t, offset: size_t, size: size_t) => record_fill_buffer;
    clCommandSVMMemcpyKHR: svm_memcpy_before_0_9_5 / svm_memcpy_since_0_9_5 (dst_ptr: *mut c_void, src_ptr: *const c_void,
        size: size_t) => record_svm_memcpy;
    clCommandSVMMemFillKHR: svm_mem_fill_before_0_9_5 / svm_mem_fill_since_0_9_5 (svm_ptr: *mut c_void,
        pattern: *const c_void, pattern_size: size_t, size: size_t) => record_svm_mem_fill;
    clCommandCopyImageKHR: copy_image_before_0_9_5 / copy_image_since_0_9_5 (src_image: cl_mem, dst_image: cl_mem,
        src_origin: *const size_t, dst_origin: *const size_t, region: *const size_t) => record_copy_image;
    clCommandCopyImageToBufferKHR: copy_image_to_buffer_before_0_9_5 / copy_image_to_buffer_since_0_9_5 (src_image: cl_mem,
        dst_buffer: cl_mem, src_origin: *const size_t, region: *const size_t, dst_offset: size_t) => record_copy_image_to_buffer;
    clCommandCopyBufferToImageKHR: copy_buffer_to_image_before_0_9_5 / copy_buffer_to_image_since_0_9_5 (src_buffer: cl_mem,
        dst_image: cl_mem, src_offset: size_t, dst_origin: *const size_t, region: *const size_t) => record_copy_buffer_to_image;
    clCommandFillImageKHR: fill_image_before_0_9_5 / fill_image_since_0_9_5 (image: cl_mem, fill_color: *const c_void,
        origin: *const size_t, region: *const size_t) => record_fill_image;
}

unsafe fn record_barrier(forward: &mut Forward<'_, cl_int>, buffer: cl_command_buffer_khr, sync: SyncPoints) -> Recorded {
    if !succeeded(forward) {
        return Ok(());
    }
    unsafe { add_command(buffer, "clCommandBarrierWithWaitListKHR", sync, |_, _| Vec::new(), |_, _| Ok(Command::Barrier)) }
}

unsafe fn record_copy_buffer(
    forward: &mut Forward<'_, cl_int>,
    buffer: cl_command_buffer_khr,
    src: cl_mem,
    dst: cl_mem,
    src_offset: size_t,
    dst_offset: size_t,
    size: size_t,
    sync: SyncPoints,
) -> Recorded {
    if !succeeded(forward) {
        return Ok(());
    }
    let accesses = vec![Access { mem: key(src), write: false, overwrites: false }, Access { mem: key(dst), write: true, overwrites: false }];
    unsafe {
        add_command(buffer, "clCommandCopyBufferKHR", sync, |_, _| accesses, |recorder, _| {
            let src = memory(recorder, key(src), src_offset as u64)?;
            let dst = memory(recorder, key(dst), dst_offset as u64)?;
            Ok(Command::Copy(Copy { src, dst, extent: Extent::Linear { bytes: size as u64 } }))
        })
    }
}

unsafe fn record_copy_buffer_rect(
    forward: &mut Forward<'_, cl_int>,
    buffer: cl_command_buffer_khr,
    src: cl_mem,
    dst: cl_mem,
    src_origin: *const size_t,
    dst_origin: *const size_t,
    region: *const size_t,
    src_row_pitch: size_t,
    src_slice_pitch: size_t,
    dst_row_pitch: size_t,
    dst_slice_pitch: size_t,
    sync: SyncPoints,
) -> Recorded {
    if !succeeded(forward) {
        return Ok(());
    }
    let extent = unsafe { rect_extent(src_origin, dst_origin, region, (src_row_pitch, src_slice_pitch), (dst_row_pitch, dst_slice_pitch)) };
    let accesses = vec![Access { mem: key(src), write: false, overwrites: false }, Access { mem: key(dst), write: true, overwrites: false }];
    unsafe {
        add_command(buffer, "clCommandCopyBufferRectKHR", sync, |_, _| accesses, |recorder, _| {
            let (src, dst) = (memory(recorder, key(src), 0)?, memory(recorder, key(dst), 0)?);
            Ok(Command::Copy(Copy { src, dst, extent }))
        })
    }
}

unsafe fn record_fill_buffer(
    forward: &mut Forward<'_, cl_int>,
    buffer: cl_command_buffer_khr,
    mem: cl_mem,
    pattern: *const c_void,
    pattern_size: size_t,
    offset: size_t,
    size: size_t,
    sync: SyncPoints,
) -> Recorded {
    if !succeeded(forward) {
        return Ok(());
    }
    let pattern = unsafe { commands::host_bytes(pattern, pattern_size) };
    unsafe {
        add_command(buffer, "clCommandFillBufferKHR", sync, |_, _| vec![Access { mem: key(mem), write: true, overwrites: false }], |recorder, _| {
            let mem = recorder.mem_id(key(mem)).ok_or(commands::UNKNOWN_MEMORY)?;
            Ok(Command::Fill(Fill { mem, offset: offset as u64, bytes: size as u64, pattern, rows: None }))
        })
    }
}

/// The SVM allocations `pointers` fall in, as accesses.
fn svm_accesses(recorder: &Recorder, pointers: &[(*const c_void, bool)]) -> Vec<Access> {
    pointers
        .iter()
        .filter_map(|&(pointer, write)| recorder.locate(pointer as usize as u64).map(|(mem, _)| Access { mem, write, overwrites: false }))
        .collect()
}

unsafe fn record_svm_memcpy(
    forward: &mut Forward<'_, cl_int>,
    buffer: cl_command_buffer_khr,
    dst: *mut c_void,
    src: *const c_void,
    size: size_t,
    sync: SyncPoints,
) -> Recorded {
    if !succeeded(forward) {
        return Ok(());
    }
    let accesses = |_: &State, recorder: &Recorder| svm_accesses(recorder, &[(src, false), (dst.cast_const(), true)]);
    unsafe {
        add_command(buffer, "clCommandSVMMemcpyKHR", sync, accesses, |recorder, _| {
            match (svm_place(recorder, src), svm_place(recorder, dst)) {
                (Some(src), Some(dst)) => Ok(Command::Copy(Copy { src, dst, extent: Extent::Linear { bytes: size as u64 } })),
                _ => Err("a command-buffer copy with host memory outside SVM allocations"),
            }
        })
    }
}

unsafe fn record_svm_mem_fill(
    forward: &mut Forward<'_, cl_int>,
    buffer: cl_command_buffer_khr,
    svm_ptr: *mut c_void,
    pattern: *const c_void,
    pattern_size: size_t,
    size: size_t,
    sync: SyncPoints,
) -> Recorded {
    if !succeeded(forward) {
        return Ok(());
    }
    let pattern = unsafe { commands::host_bytes(pattern, pattern_size) };
    let accesses = |_: &State, recorder: &Recorder| svm_accesses(recorder, &[(svm_ptr.cast_const(), true)]);
    unsafe {
        add_command(buffer, "clCommandSVMMemFillKHR", sync, accesses, |recorder, _| match svm_place(recorder, svm_ptr) {
            Some(Place::Memory { mem, offset }) => Ok(Command::Fill(Fill { mem, offset, bytes: size as u64, pattern, rows: None })),
            _ => Err("a command-buffer fill outside SVM allocations"),
        })
    }
}

/// `clCommandNDRangeKernelKHR` takes `properties` in every revision.
#[allow(non_snake_case, clippy::too_many_arguments)]
unsafe extern "C" fn clCommandNDRangeKernelKHR(
    command_buffer: cl_command_buffer_khr,
    command_queue: cl_command_queue,
    properties: *const cl_command_properties_khr,
    kernel: cl_kernel,
    work_dim: cl_uint,
    global_work_offset: *const size_t,
    global_work_size: *const size_t,
    local_work_size: *const size_t,
    num_sync_points: cl_uint,
    sync_point_wait_list: *const cl_sync_point_khr,
    sync_point: *mut cl_sync_point_khr,
    mutable_handle: *mut cl_mutable_command_khr,
) -> cl_int {
    type Real = unsafe extern "C" fn(cl_command_buffer_khr, cl_command_queue, *const cl_command_properties_khr,
        cl_kernel, cl_uint, *const size_t, *const size_t, *const size_t, cl_uint, *const cl_sync_point_khr,
        *mut cl_sync_point_khr, *mut cl_mutable_command_khr) -> cl_int;
    let real = || match platform_of_buffer(command_buffer).and_then(|p| platform_function(p, "clCommandNDRangeKernelKHR")) {
        // SAFETY: the platform's function of this name and signature.
        Some(address) => unsafe {
            std::mem::transmute::<usize, Real>(address)(command_buffer, command_queue, properties, kernel, work_dim,
                global_work_offset, global_work_size, local_work_size, num_sync_points, sync_point_wait_list, sync_point,
                mutable_handle)
        },
        None => CL_INVALID_COMMAND_BUFFER_KHR,
    };
    intercept("clCommandNDRangeKernelKHR", &real, |forward| -> Recorded {
        if !succeeded(forward) {
            return Ok(());
        }
        let launch = unsafe { nd_range(work_dim, global_work_offset, global_work_size, local_work_size) };
        let sync = SyncPoints { count: num_sync_points, waits: sync_point_wait_list, signals: sync_point };
        let (waits, signals) = unsafe { sync.read() };
        // SAFETY: the call succeeded, so the driver wrote the handle the program asked for.
        let handle = (!mutable_handle.is_null()).then(|| unsafe { *mutable_handle });
        with_recorder(|state, recorder| {
            let accesses = kernel_accesses(state, recorder, kernel);
            let command = kernel_command(recorder, state, kernel, launch.clone());
            let arguments = state.kernels.get(&key(kernel)).cloned();
            let node = push_node(state, recorder, command_buffer, "clCommandNDRangeKernelKHR", (&waits, signals), command, accesses);
            // Kept for the program's updates: they change this node from its arguments now.
            if let (Some(handle), Some(node), Some(arguments)) = (handle, node, arguments) {
                let mutable = MutableKernel { node, kernel: key(kernel), arguments, launch };
                if let Some(buffer) = state.command_buffers.get_mut(&key(command_buffer)) {
                    buffer.mutable.insert(key(handle), mutable);
                }
            }
        })
    })
}

#[allow(non_snake_case)]
unsafe extern "C" fn clCreateCommandBufferKHR(
    num_queues: cl_uint,
    queues: *const cl_command_queue,
    properties: *const cl_command_buffer_properties_khr,
    errcode_ret: *mut cl_int,
) -> cl_command_buffer_khr {
    type Real = unsafe extern "C" fn(cl_uint, *const cl_command_queue, *const cl_command_buffer_properties_khr, *mut cl_int)
        -> cl_command_buffer_khr;
    // SAFETY: the API requires at least one queue.
    let first_queue = if queues.is_null() || num_queues == 0 { std::ptr::null_mut() } else { unsafe { *queues } };
    let platform = platform_of_queue(first_queue);
    let real = || match platform.and_then(|platform| platform_function(platform, "clCreateCommandBufferKHR")) {
        // SAFETY: the platform's function of this name and signature.
        Some(address) => unsafe { std::mem::transmute::<usize, Real>(address)(num_queues, queues, properties, errcode_ret) },
        None => std::ptr::null_mut(),
    };
    let buffer = intercept("clCreateCommandBufferKHR", &real, |forward| -> Recorded {
        let Some(buffer) = (unsafe { created(forward, errcode_ret) }) else { return Ok(()) };
        let properties: Option<cl_command_queue_properties> = info::value(|size, value, size_ret| {
            call!(clGetCommandQueueInfo(first_queue, CL_QUEUE_PROPERTIES, size, value, size_ret))
        });
        let command_buffer = CommandBuffer {
            queue: first_queue,
            in_order: properties.is_some_and(|properties| properties & CL_QUEUE_OUT_OF_ORDER_EXEC_MODE_ENABLE == 0),
            graph: Graph { nodes: Vec::new(), edges: Vec::new() },
            accesses: Vec::new(),
            sync_points: HashMap::default(),
            mutable: HashMap::default(),
        };
        with_state(|state| state.command_buffers.insert(key(buffer), command_buffer));
        Ok(())
    });
    if let (false, Some(platform)) = (buffer.is_null(), platform) {
        PLATFORMS.lock().unwrap_or_else(PoisonError::into_inner).get_or_insert_with(HashMap::default).insert(key(buffer), platform);
    }
    buffer
}

#[allow(non_snake_case)]
unsafe extern "C" fn clEnqueueCommandBufferKHR(
    num_queues: cl_uint,
    queues: *mut cl_command_queue,
    command_buffer: cl_command_buffer_khr,
    num_events_in_wait_list: cl_uint,
    event_wait_list: *const cl_event,
    event: *mut cl_event,
) -> cl_int {
    type Real = unsafe extern "C" fn(cl_uint, *mut cl_command_queue, cl_command_buffer_khr, cl_uint, *const cl_event,
        *mut cl_event) -> cl_int;
    let real = || match platform_of_buffer(command_buffer).and_then(|p| platform_function(p, "clEnqueueCommandBufferKHR")) {
        // SAFETY: the platform's function of this name and signature.
        Some(address) => unsafe {
            std::mem::transmute::<usize, Real>(address)(num_queues, queues, command_buffer, num_events_in_wait_list,
                event_wait_list, event)
        },
        None => CL_INVALID_COMMAND_BUFFER_KHR,
    };
    intercept("clEnqueueCommandBufferKHR", &real, |forward| -> Recorded {
        let recorded = with_state(|state| {
            let buffer = state.command_buffers.get(&key(command_buffer))?;
            Some((buffer.graph.clone(), buffer.accesses.concat(), buffer.queue))
        });
        let Some((graph, accesses, default_queue)) = recorded else {
            forward.call();
            return with_recorder(|_, recorder| recorder.partial("clEnqueueCommandBufferKHR", "a command buffer the shim did not see created"));
        };
        // SAFETY: a non-empty queue list holds `num_queues` queues.
        let queue = if num_queues > 0 && !queues.is_null() { unsafe { *queues } } else { default_queue };
        let prepared = commands::prepare(|_, _| accesses)?;
        if !succeeded(forward) {
            return Ok(());
        }
        let enqueued = Enqueued::new("clEnqueueCommandBufferKHR", queue, num_events_in_wait_list, event_wait_list, event);
        unsafe { commands::record(prepared, enqueued, |_, _| Ok(Command::Subgraph(graph))) }
    })
}
