//! `cl_intel_unified_shared_memory`, the memory Intel's SYCL runtime uses on OpenCL: the program
//! reaches its functions through `clGetExtensionFunctionAddress(ForPlatform)` and gets the
//! shim's wrappers. Allocations are memory named by pointer, as SVM is; copies, fills and
//! argument pointers are recorded as SVM's are.
//!
//! A wrapper must reach the function of the platform the program asked, and no argument of
//! these functions leads to a dispatch table: each platform gets a slot, and each wrapper is
//! instantiated once per slot with that slot's functions, so forwarding costs one load.

use super::commands::{ordering, svm};
use super::dispatch::call;
use super::memory::{memory_created, pointer_freeing};
use super::state::{Addressing, MemObject};
use super::{command_buffers, info, key, programs, NotFound, Recorded};
use crate::entry::Forward;
use crate::recorder::{Key, MemShape};
use libc::size_t;
use opencl_sys::*;
use std::ffi::{c_void, CStr};
use std::sync::atomic::{AtomicUsize, Ordering};
use trace_format::{MemKind, UnifiedKind};

/// How many platforms with unified shared memory one process can use through the shim.
const SLOTS: usize = 8;

/// The platform each slot forwards to; 0 while free.
static SLOT_PLATFORMS: [AtomicUsize; SLOTS] = [const { AtomicUsize::new(0) }; SLOTS];

/// The slot of `platform`, claimed if it has none; `None` once every slot is taken.
fn slot_of(platform: Key) -> Option<usize> {
    let platform = usize::try_from(platform).ok().filter(|&platform| platform != 0)?;
    SLOT_PLATFORMS.iter().position(|slot| {
        match slot.compare_exchange(0, platform, Ordering::AcqRel, Ordering::Acquire) {
            Ok(_) => true,
            Err(held) => held == platform,
        }
    })
}

/// A wrapper's body: the recorder gets a `Forward`, or (`observed`) only the real result, or
/// (`named`) the function's name before the `Forward`, as SVM's recorders shared with it take.
macro_rules! body {
    (, $name:ident, $real:ident, $record:path, $($arg:ident),*) => {
        crate::entry::intercept(stringify!($name), &$real, |forward| unsafe { $record(forward, $($arg),*) })
    };
    (named, $name:ident, $real:ident, $record:path, $($arg:ident),*) => {
        crate::entry::intercept(stringify!($name), &$real, |forward| unsafe { $record(stringify!($name), forward, $($arg),*) })
    };
    (observed, $name:ident, $real:ident, $record:path, $($arg:ident),*) => {
        crate::entry::observe(stringify!($name), $real, |result| unsafe { $record(result, $($arg),*) })
    };
}

macro_rules! unified_functions {
    ($( $(#[$kind:ident])? $name:ident($($arg:ident: $ty:ty),* $(,)?) -> $ret:ty => $record:path; )*) => {
        /// Each function's real address per slot.
        #[allow(non_upper_case_globals)]
        mod reals {
            use std::sync::atomic::AtomicUsize;
            $( pub static $name: [AtomicUsize; super::SLOTS] = [const { AtomicUsize::new(0) }; super::SLOTS]; )*
        }

        $(
            #[allow(non_snake_case, clippy::too_many_arguments)]
            unsafe extern "C" fn $name<const SLOT: usize>($($arg: $ty),*) -> $ret {
                type Real = unsafe extern "C" fn($($ty),*) -> $ret;
                let real = || match reals::$name[SLOT].load(Ordering::Acquire) {
                    0 => NotFound::not_found(),
                    // SAFETY: the platform's function of this name, which has this type.
                    address => unsafe { std::mem::transmute::<usize, Real>(address)($($arg),*) },
                };
                body!($($kind)?, $name, real, $record, $($arg),*)
            }
        )*

        /// The shim's wrapper for the unified shared memory function `name` of `platform`,
        /// whose own is `real`; `None` for functions it does not wrap.
        pub fn wrapper(name: &CStr, platform: cl_platform_id, real: *mut c_void) -> Option<*mut c_void> {
            $(
                if name.to_bytes() == stringify!($name).as_bytes() {
                    let Some(slot) = slot_of(key(platform)) else {
                        crate::log::warning!("{}: more than {SLOTS} platforms with unified shared memory; the rest is not recorded", stringify!($name));
                        return None;
                    };
                    reals::$name[slot].store(real as usize, Ordering::Release);
                    let wrappers: [*const (); SLOTS] = [
                        $name::<0> as *const (), $name::<1> as *const (), $name::<2> as *const (), $name::<3> as *const (),
                        $name::<4> as *const (), $name::<5> as *const (), $name::<6> as *const (), $name::<7> as *const (),
                    ];
                    return Some(wrappers[slot].cast_mut().cast());
                }
            )*
            None
        }
    };
}

unified_functions! {
    clHostMemAllocINTEL(context: cl_context, properties: *const cl_mem_properties_intel, size: size_t, alignment: cl_uint,
        errcode_ret: *mut cl_int) -> *mut c_void => host_alloc;
    #[named]
    clDeviceMemAllocINTEL(context: cl_context, device: cl_device_id, properties: *const cl_mem_properties_intel, size: size_t,
        alignment: cl_uint, errcode_ret: *mut cl_int) -> *mut c_void => device_side_alloc;
    #[named]
    clSharedMemAllocINTEL(context: cl_context, device: cl_device_id, properties: *const cl_mem_properties_intel, size: size_t,
        alignment: cl_uint, errcode_ret: *mut cl_int) -> *mut c_void => device_side_alloc;
    #[named]
    clMemFreeINTEL(context: cl_context, ptr: *mut c_void) -> cl_int => free;
    #[named]
    clMemBlockingFreeINTEL(context: cl_context, ptr: *mut c_void) -> cl_int => free;
    #[observed]
    clSetKernelArgMemPointerINTEL(kernel: cl_kernel, arg_index: cl_uint, arg_value: *const c_void) -> cl_int
        => programs::set_arg_svm_pointer;
    #[named]
    clEnqueueMemcpyINTEL(command_queue: cl_command_queue, blocking: cl_bool, dst_ptr: *mut c_void, src_ptr: *const c_void,
        size: size_t, num_events_in_wait_list: cl_uint, event_wait_list: *const cl_event, event: *mut cl_event) -> cl_int
        => svm::copy_by_pointer;
    #[named]
    clEnqueueMemFillINTEL(command_queue: cl_command_queue, dst_ptr: *mut c_void, pattern: *const c_void, pattern_size: size_t,
        size: size_t, num_events_in_wait_list: cl_uint, event_wait_list: *const cl_event, event: *mut cl_event) -> cl_int
        => svm::fill_by_pointer;
    #[named]
    clEnqueueMemsetINTEL(command_queue: cl_command_queue, dst_ptr: *mut c_void, value: cl_int, size: size_t,
        num_events_in_wait_list: cl_uint, event_wait_list: *const cl_event, event: *mut cl_event) -> cl_int => memset;
    #[named]
    clEnqueueMigrateMemINTEL(command_queue: cl_command_queue, ptr: *const c_void, size: size_t, flags: cl_mem_migration_flags,
        num_events_in_wait_list: cl_uint, event_wait_list: *const cl_event, event: *mut cl_event) -> cl_int => hint;
    #[named]
    clEnqueueMemAdviseINTEL(command_queue: cl_command_queue, ptr: *const c_void, size: size_t, advice: cl_mem_advice_intel,
        num_events_in_wait_list: cl_uint, event_wait_list: *const cl_event, event: *mut cl_event) -> cl_int => hint;
}

/// Reads `length` bytes of unified shared memory at `source` into `into` on the shim's `queue`.
pub(super) fn read(platform: Key, queue: cl_command_queue, into: *mut c_void, source: *const c_void, length: usize) -> cl_int {
    type Memcpy = unsafe extern "C" fn(cl_command_queue, cl_bool, *mut c_void, *const c_void, size_t, cl_uint, *const cl_event, *mut cl_event) -> cl_int;
    match command_buffers::platform_function(platform, "clEnqueueMemcpyINTEL") {
        // SAFETY: the platform's clEnqueueMemcpyINTEL, on a queue of the memory's context.
        Some(address) => unsafe {
            std::mem::transmute::<usize, Memcpy>(address)(queue, CL_TRUE, into, source, length, 0, std::ptr::null(), std::ptr::null_mut())
        },
        None => CL_INVALID_OPERATION,
    }
}

/// The platform of `context`'s first device.
fn platform_of_context(context: cl_context) -> Option<Key> {
    let devices = info::bytes(|size, value, size_ret| call!(clGetContextInfo(context, CL_CONTEXT_DEVICES, size, value, size_ret)))?;
    let device = usize::from_ne_bytes(devices.get(..size_of::<usize>())?.try_into().ok()?) as cl_device_id;
    let platform: cl_platform_id =
        info::value(|size, value, size_ret| call!(clGetDeviceInfo(device, CL_DEVICE_PLATFORM, size, value, size_ret)))?;
    Some(key(platform))
}

/// Registers an allocation the real call made.
fn allocated(forward: &mut Forward<'_, *mut c_void>, context: cl_context, size: size_t, kind: UnifiedKind) -> Recorded {
    let pointer = forward.call();
    if pointer.is_null() {
        return Ok(());
    }
    let Some(platform) = platform_of_context(context) else {
        return super::state::with_recorder(|_, recorder| recorder.partial("unified shared memory", "the platform of its context is unknown"));
    };
    let object = MemObject { context, flags: 0, addressing: Addressing::Unified { platform, kind }, image: None };
    memory_created(key(pointer), object, MemShape::Whole(MemKind::Unified(kind)), size as u64)
}

unsafe fn host_alloc(
    forward: &mut Forward<'_, *mut c_void>,
    context: cl_context,
    _properties: *const cl_mem_properties_intel,
    size: size_t,
    _alignment: cl_uint,
    _errcode_ret: *mut cl_int,
) -> Recorded {
    allocated(forward, context, size, UnifiedKind::Host)
}

/// `clDeviceMemAllocINTEL` and `clSharedMemAllocINTEL`, which take the same arguments.
unsafe fn device_side_alloc(
    call: &str,
    forward: &mut Forward<'_, *mut c_void>,
    context: cl_context,
    _device: cl_device_id,
    _properties: *const cl_mem_properties_intel,
    size: size_t,
    _alignment: cl_uint,
    _errcode_ret: *mut cl_int,
) -> Recorded {
    let kind = if call == "clSharedMemAllocINTEL" { UnifiedKind::Shared } else { UnifiedKind::Device };
    allocated(forward, context, size, kind)
}

/// `clMemFreeINTEL` and `clMemBlockingFreeINTEL`.
unsafe fn free(call: &str, forward: &mut Forward<'_, cl_int>, _context: cl_context, pointer: *mut c_void) -> Recorded {
    pointer_freeing(call, pointer)?;
    forward.call();
    Ok(())
}

/// `clEnqueueMemsetINTEL` fills with the low byte of `value`.
unsafe fn memset(
    call: &'static str,
    forward: &mut Forward<'_, cl_int>,
    queue: cl_command_queue,
    dst: *mut c_void,
    value: cl_int,
    size: size_t,
    wait_count: cl_uint,
    waits: *const cl_event,
    event: *mut cl_event,
) -> Recorded {
    let pattern = value as u8;
    unsafe { svm::fill_by_pointer(call, forward, queue, dst, (&raw const pattern).cast(), 1, size, wait_count, waits, event) }
}

/// `clEnqueueMigrateMemINTEL` and `clEnqueueMemAdviseINTEL` (whose `how` is migration flags or
/// advice): they only order.
unsafe fn hint<How>(
    call: &'static str,
    forward: &mut Forward<'_, cl_int>,
    queue: cl_command_queue,
    _pointer: *const c_void,
    _size: size_t,
    _how: How,
    wait_count: cl_uint,
    waits: *const cl_event,
    event: *mut cl_event,
) -> Recorded {
    unsafe { ordering::order_only(call, forward, queue, wait_count, waits, event) }
}
