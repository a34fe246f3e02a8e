//! Every OpenCL function the shim exports, with its C signature, how its real function is
//! found when no loader is in sight (`object(arg)`: the argument's ICD dispatch table;
//! `first(list)`: the first object of a list; `loader`: only from a loaded library), and the
//! function that records it (`unsupported`: passed through, the trace marked partial; `pass`:
//! only passed through, hooked so that the shim's own calls find the real function).
//! An attribute names a faster kind of hook (see `hook_body`).

#![allow(non_snake_case, clippy::too_many_arguments)]

use super::commands::pass_when_uncaptured;
use super::{commands, extensions, images, memory, programs, queues, samplers, sync, unsupported, ContextNotify, EventNotify, NotFound, ProgramNotify, SvmFreeNotify};
use crate::interpose::Hook;
use libc::size_t;
use opencl_sys::*;
use std::ffi::{c_char, c_uchar, c_void};

type NativeKernel = Option<unsafe extern "C" fn(*mut c_void)>;

/// The real function's address through the dispatch table, typed as the hook is: a table entry
/// of another type does not compile, which checks the signatures against cl_icd.h.
macro_rules! through_dispatch {
    (loader, $name:ident, $real:ty) => {
        None::<usize>
    };
    (object($object:ident), $name:ident, $real:ty) => {
        unsafe { crate::opencl::dispatch::table($object) }.and_then(|table| table.$name).map(|function: $real| function as usize)
    };
    (first($list:ident), $name:ident, $real:ty) => {{
        let first = if $list.is_null() { std::ptr::null_mut() } else { unsafe { *$list } };
        through_dispatch!(object(first), $name, $real)
    }};
}

macro_rules! record {
    (pass, $name:ident, $forward:ident, $($arg:ident),*) => {{
        $forward.call();
        Ok::<(), super::Failure>(())
    }};
    (unsupported, $name:ident, $forward:ident, $($arg:ident),*) => {
        unsupported($forward, stringify!($name))
    };
    ($($record:ident)::+, $name:ident, $forward:ident, $($arg:ident),*) => {
        unsafe { $($record)::+($forward, $($arg),*) }
    };
}

/// A hook's body, by the kind its entry names: none (the recorder gets a `Forward` and runs the
/// real function when it wants), `named` (the same, the function's name first: recorders shared
/// by functions of the same arguments, such as SVM's and unified memory's), `pass_when_uncaptured` (a command that never blocks: outside the
/// capture it is passed through before the hook's entry, see `commands::pass_when_uncaptured`) or
/// `observed` (the recorder only notes the real function's result: `entry::observe`, for calls
/// as frequent as setting an argument).
macro_rules! hook_body {
    (, $name:ident, ($($arg:ident: $ty:ty),*) -> $ret:ty, $($record:ident)::+) => {{
        let real = || unsafe { real::$name($($arg),*) };
        crate::entry::intercept(stringify!($name), &real, |forward| record!($($record)::+, $name, forward, $($arg),*))
    }};
    (named, $name:ident, ($($arg:ident: $ty:ty),*) -> $ret:ty, $($record:ident)::+) => {{
        let real = || unsafe { real::$name($($arg),*) };
        crate::entry::intercept(stringify!($name), &real, |forward| unsafe { $($record)::+(stringify!($name), forward, $($arg),*) })
    }};
    (pass_when_uncaptured, $name:ident, ($($arg:ident: $ty:ty),*) -> $ret:ty, $($record:ident)::+) => {{
        // Apart, so that the fast path's registers are not spilled for the entry's closures.
        #[inline(never)]
        unsafe fn intercepted($($arg: $ty),*) -> $ret {
            hook_body!(, $name, ($($arg: $ty),*) -> $ret, $($record)::+)
        }
        match pass_when_uncaptured(|| unsafe { real::$name($($arg),*) }) {
            Some(result) => result,
            None => unsafe { intercepted($($arg),*) },
        }
    }};
    (observed, $name:ident, ($($arg:ident: $ty:ty),*) -> $ret:ty, $($record:ident)::+) => {
        crate::entry::observe(stringify!($name), || unsafe { real::$name($($arg),*) }, |result| unsafe {
            $($record)::+(result, $($arg),*)
        })
    };
}

macro_rules! hooks {
    ($( $(#[$kind:ident])? $name:ident($($arg:ident: $ty:ty),* $(,)?) -> $ret:ty, $how:ident$(($object:ident))? => $($record:ident)::+; )*) => {
        /// The real functions, for the hooks and for the shim's own calls.
        pub mod real {
            use super::*;
            $(
                pub unsafe fn $name($($arg: $ty),*) -> $ret {
                    type Real = unsafe extern "C" fn($($ty),*) -> $ret;
                    let hook = &super::slots::$name;
                    let address = hook
                        .real()
                        .or_else(|| through_dispatch!($how$(($object))?, $name, Real))
                        .or_else(|| hook.real_in_loaded_libraries());
                    match address {
                        // SAFETY: an address found under this function's name has its type.
                        Some(address) => unsafe { std::mem::transmute::<usize, Real>(address)($($arg),*) },
                        None => NotFound::not_found(),
                    }
                }
            )*
        }

        $(
            /// # Safety
            /// As the OpenCL function of this name.
            #[no_mangle]
            pub unsafe extern "C" fn $name($($arg: $ty),*) -> $ret {
                hook_body!($($kind)?, $name, ($($arg: $ty),*) -> $ret, $($record)::+)
            }
        )*

        #[allow(non_upper_case_globals)]
        mod slots {
            use crate::interpose::Hook;
            $(
                pub static $name: Hook = Hook::new(
                    match std::ffi::CStr::from_bytes_with_nul(concat!(stringify!($name), "\0").as_bytes()) {
                        Ok(name) => name,
                        Err(_) => panic!("hook names are C identifiers"),
                    },
                    super::$name as *const std::ffi::c_void,
                );
            )*
        }

        /// Every OpenCL hook, for the exported `dlsym`.
        pub static HOOKS: &[&Hook] = &[$(&slots::$name),*];
    };
}

hooks! {
    clGetPlatformIDs(num_entries: cl_uint, platforms: *mut cl_platform_id, num_platforms: *mut cl_uint) -> cl_int,
        loader => pass;

    // Contexts and queues.
    clCreateContext(properties: *const cl_context_properties, num_devices: cl_uint, devices: *const cl_device_id,
        pfn_notify: ContextNotify, user_data: *mut c_void, errcode_ret: *mut cl_int) -> cl_context,
        first(devices) => queues::create_context;
    clCreateContextFromType(properties: *const cl_context_properties, device_type: cl_device_type,
        pfn_notify: ContextNotify, user_data: *mut c_void, errcode_ret: *mut cl_int) -> cl_context,
        loader => queues::create_context_from_type;
    clCreateCommandQueue(context: cl_context, device: cl_device_id, properties: cl_command_queue_properties,
        errcode_ret: *mut cl_int) -> cl_command_queue,
        object(context) => queues::create_queue;
    clCreateCommandQueueWithProperties(context: cl_context, device: cl_device_id,
        properties: *const cl_queue_properties, errcode_ret: *mut cl_int) -> cl_command_queue,
        object(context) => queues::create_queue_with_properties;
    clRetainCommandQueue(command_queue: cl_command_queue) -> cl_int,
        object(command_queue) => queues::retain_queue;
    clReleaseCommandQueue(command_queue: cl_command_queue) -> cl_int,
        object(command_queue) => queues::release_queue;

    // Memory.
    clCreateBuffer(context: cl_context, flags: cl_mem_flags, size: size_t, host_ptr: *mut c_void,
        errcode_ret: *mut cl_int) -> cl_mem,
        object(context) => memory::create_buffer;
    clCreateBufferWithProperties(context: cl_context, properties: *const cl_mem_properties, flags: cl_mem_flags,
        size: size_t, host_ptr: *mut c_void, errcode_ret: *mut cl_int) -> cl_mem,
        object(context) => memory::create_buffer_with_properties;
    clCreateSubBuffer(buffer: cl_mem, flags: cl_mem_flags, buffer_create_type: cl_buffer_create_type,
        buffer_create_info: *const c_void, errcode_ret: *mut cl_int) -> cl_mem,
        object(buffer) => memory::create_sub_buffer;
    clRetainMemObject(memobj: cl_mem) -> cl_int,
        object(memobj) => memory::retain;
    clReleaseMemObject(memobj: cl_mem) -> cl_int,
        object(memobj) => memory::release;
    clSVMAlloc(context: cl_context, flags: cl_svm_mem_flags, size: size_t, alignment: cl_uint) -> *mut c_void,
        object(context) => memory::svm_alloc;
    clSVMFree(context: cl_context, svm_pointer: *mut c_void) -> (),
        object(context) => memory::svm_free;
    clCreateImage(context: cl_context, flags: cl_mem_flags, image_format: *const cl_image_format,
        image_desc: *const cl_image_desc, host_ptr: *mut c_void, errcode_ret: *mut cl_int) -> cl_mem,
        object(context) => images::create_image;
    clCreateImageWithProperties(context: cl_context, properties: *const cl_mem_properties, flags: cl_mem_flags,
        image_format: *const cl_image_format, image_desc: *const cl_image_desc, host_ptr: *mut c_void,
        errcode_ret: *mut cl_int) -> cl_mem,
        object(context) => images::create_image_with_properties;
    clCreateImage2D(context: cl_context, flags: cl_mem_flags, image_format: *const cl_image_format,
        image_width: size_t, image_height: size_t, image_row_pitch: size_t, host_ptr: *mut c_void,
        errcode_ret: *mut cl_int) -> cl_mem,
        object(context) => images::create_image_2d;
    clCreateImage3D(context: cl_context, flags: cl_mem_flags, image_format: *const cl_image_format,
        image_width: size_t, image_height: size_t, image_depth: size_t, image_row_pitch: size_t,
        image_slice_pitch: size_t, host_ptr: *mut c_void, errcode_ret: *mut cl_int) -> cl_mem,
        object(context) => images::create_image_3d;
    clCreateSampler(context: cl_context, normalized_coords: cl_bool, addressing_mode: cl_addressing_mode,
        filter_mode: cl_filter_mode, errcode_ret: *mut cl_int) -> cl_sampler,
        object(context) => samplers::create_sampler;
    clCreateSamplerWithProperties(context: cl_context, sampler_properties: *const cl_sampler_properties,
        errcode_ret: *mut cl_int) -> cl_sampler,
        object(context) => samplers::create_sampler_with_properties;
    clRetainSampler(sampler: cl_sampler) -> cl_int,
        object(sampler) => samplers::retain_sampler;
    clReleaseSampler(sampler: cl_sampler) -> cl_int,
        object(sampler) => samplers::release_sampler;

    // Programs and kernels.
    clCreateProgramWithSource(context: cl_context, count: cl_uint, strings: *mut *const c_char,
        lengths: *const size_t, errcode_ret: *mut cl_int) -> cl_program,
        object(context) => programs::create_with_source;
    clCreateProgramWithBinary(context: cl_context, num_devices: cl_uint, device_list: *const cl_device_id,
        lengths: *const size_t, binaries: *mut *const c_uchar, binary_status: *mut cl_int,
        errcode_ret: *mut cl_int) -> cl_program,
        object(context) => programs::create_with_binary;
    clCreateProgramWithIL(context: cl_context, il: *const c_void, length: size_t, errcode_ret: *mut cl_int)
        -> cl_program,
        object(context) => programs::create_with_il;
    clCreateProgramWithBuiltInKernels(context: cl_context, num_devices: cl_uint, device_list: *const cl_device_id,
        kernel_names: *const c_char, errcode_ret: *mut cl_int) -> cl_program,
        object(context) => unsupported;
    clBuildProgram(program: cl_program, num_devices: cl_uint, device_list: *const cl_device_id,
        options: *const c_char, pfn_notify: ProgramNotify, user_data: *mut c_void) -> cl_int,
        object(program) => programs::build;
    clCompileProgram(program: cl_program, num_devices: cl_uint, device_list: *const cl_device_id,
        options: *const c_char, num_input_headers: cl_uint, input_headers: *const cl_program,
        header_include_names: *mut *const c_char, pfn_notify: ProgramNotify, user_data: *mut c_void) -> cl_int,
        object(program) => programs::compile;
    clLinkProgram(context: cl_context, num_devices: cl_uint, device_list: *const cl_device_id,
        options: *const c_char, num_input_programs: cl_uint, input_programs: *const cl_program,
        pfn_notify: ProgramNotify, user_data: *mut c_void, errcode_ret: *mut cl_int) -> cl_program,
        object(context) => programs::link;
    clCreateKernel(program: cl_program, kernel_name: *const c_char, errcode_ret: *mut cl_int) -> cl_kernel,
        object(program) => programs::create_kernel;
    clCreateKernelsInProgram(program: cl_program, num_kernels: cl_uint, kernels: *mut cl_kernel,
        num_kernels_ret: *mut cl_uint) -> cl_int,
        object(program) => programs::create_kernels_in_program;
    clCloneKernel(source_kernel: cl_kernel, errcode_ret: *mut cl_int) -> cl_kernel,
        object(source_kernel) => programs::clone_kernel;
    clRetainKernel(kernel: cl_kernel) -> cl_int,
        object(kernel) => programs::retain_kernel;
    clReleaseKernel(kernel: cl_kernel) -> cl_int,
        object(kernel) => programs::release_kernel;
    #[observed]
    clSetKernelArg(kernel: cl_kernel, arg_index: cl_uint, arg_size: size_t, arg_value: *const c_void) -> cl_int,
        object(kernel) => programs::set_arg;
    #[observed]
    clSetKernelArgSVMPointer(kernel: cl_kernel, arg_index: cl_uint, arg_value: *const c_void) -> cl_int,
        object(kernel) => programs::set_arg_svm_pointer;

    // Commands.
    #[pass_when_uncaptured]
    clEnqueueNDRangeKernel(command_queue: cl_command_queue, kernel: cl_kernel, work_dim: cl_uint,
        global_work_offset: *const size_t, global_work_size: *const size_t, local_work_size: *const size_t,
        num_events_in_wait_list: cl_uint, event_wait_list: *const cl_event, event: *mut cl_event) -> cl_int,
        object(command_queue) => commands::kernels::nd_range_kernel;
    #[pass_when_uncaptured]
    clEnqueueTask(command_queue: cl_command_queue, kernel: cl_kernel, num_events_in_wait_list: cl_uint,
        event_wait_list: *const cl_event, event: *mut cl_event) -> cl_int,
        object(command_queue) => commands::kernels::task;
    clEnqueueNativeKernel(command_queue: cl_command_queue, user_func: NativeKernel, args: *mut c_void,
        cb_args: size_t, num_mem_objects: cl_uint, mem_list: *const cl_mem, args_mem_loc: *mut *const c_void,
        num_events_in_wait_list: cl_uint, event_wait_list: *const cl_event, event: *mut cl_event) -> cl_int,
        object(command_queue) => unsupported;
    clEnqueueReadBuffer(command_queue: cl_command_queue, buffer: cl_mem, blocking_read: cl_bool, offset: size_t,
        size: size_t, ptr: *mut c_void, num_events_in_wait_list: cl_uint, event_wait_list: *const cl_event,
        event: *mut cl_event) -> cl_int,
        object(command_queue) => commands::transfers::read_buffer;
    clEnqueueWriteBuffer(command_queue: cl_command_queue, buffer: cl_mem, blocking_write: cl_bool, offset: size_t,
        size: size_t, ptr: *const c_void, num_events_in_wait_list: cl_uint, event_wait_list: *const cl_event,
        event: *mut cl_event) -> cl_int,
        object(command_queue) => commands::transfers::write_buffer;
    clEnqueueReadBufferRect(command_queue: cl_command_queue, buffer: cl_mem, blocking_read: cl_bool,
        buffer_origin: *const size_t, host_origin: *const size_t, region: *const size_t,
        buffer_row_pitch: size_t, buffer_slice_pitch: size_t, host_row_pitch: size_t, host_slice_pitch: size_t,
        ptr: *mut c_void, num_events_in_wait_list: cl_uint, event_wait_list: *const cl_event,
        event: *mut cl_event) -> cl_int,
        object(command_queue) => commands::transfers::read_buffer_rect;
    clEnqueueWriteBufferRect(command_queue: cl_command_queue, buffer: cl_mem, blocking_write: cl_bool,
        buffer_origin: *const size_t, host_origin: *const size_t, region: *const size_t,
        buffer_row_pitch: size_t, buffer_slice_pitch: size_t, host_row_pitch: size_t, host_slice_pitch: size_t,
        ptr: *const c_void, num_events_in_wait_list: cl_uint, event_wait_list: *const cl_event,
        event: *mut cl_event) -> cl_int,
        object(command_queue) => commands::transfers::write_buffer_rect;
    clEnqueueCopyBuffer(command_queue: cl_command_queue, src_buffer: cl_mem, dst_buffer: cl_mem,
        src_offset: size_t, dst_offset: size_t, size: size_t, num_events_in_wait_list: cl_uint,
        event_wait_list: *const cl_event, event: *mut cl_event) -> cl_int,
        object(command_queue) => commands::transfers::copy_buffer;
    clEnqueueCopyBufferRect(command_queue: cl_command_queue, src_buffer: cl_mem, dst_buffer: cl_mem,
        src_origin: *const size_t, dst_origin: *const size_t, region: *const size_t, src_row_pitch: size_t,
        src_slice_pitch: size_t, dst_row_pitch: size_t, dst_slice_pitch: size_t, num_events_in_wait_list: cl_uint,
        event_wait_list: *const cl_event, event: *mut cl_event) -> cl_int,
        object(command_queue) => commands::transfers::copy_buffer_rect;
    clEnqueueFillBuffer(command_queue: cl_command_queue, buffer: cl_mem, pattern: *const c_void,
        pattern_size: size_t, offset: size_t, size: size_t, num_events_in_wait_list: cl_uint,
        event_wait_list: *const cl_event, event: *mut cl_event) -> cl_int,
        object(command_queue) => commands::transfers::fill_buffer;
    clEnqueueReadImage(command_queue: cl_command_queue, image: cl_mem, blocking_read: cl_bool, origin: *const size_t,
        region: *const size_t, row_pitch: size_t, slice_pitch: size_t, ptr: *mut c_void,
        num_events_in_wait_list: cl_uint, event_wait_list: *const cl_event, event: *mut cl_event) -> cl_int,
        object(command_queue) => commands::images::read_image;
    clEnqueueWriteImage(command_queue: cl_command_queue, image: cl_mem, blocking_write: cl_bool, origin: *const size_t,
        region: *const size_t, input_row_pitch: size_t, input_slice_pitch: size_t, ptr: *const c_void,
        num_events_in_wait_list: cl_uint, event_wait_list: *const cl_event, event: *mut cl_event) -> cl_int,
        object(command_queue) => commands::images::write_image;
    clEnqueueCopyImage(command_queue: cl_command_queue, src_image: cl_mem, dst_image: cl_mem,
        src_origin: *const size_t, dst_origin: *const size_t, region: *const size_t, num_events_in_wait_list: cl_uint,
        event_wait_list: *const cl_event, event: *mut cl_event) -> cl_int,
        object(command_queue) => commands::images::copy_image;
    clEnqueueCopyImageToBuffer(command_queue: cl_command_queue, src_image: cl_mem, dst_buffer: cl_mem,
        src_origin: *const size_t, region: *const size_t, dst_offset: size_t, num_events_in_wait_list: cl_uint,
        event_wait_list: *const cl_event, event: *mut cl_event) -> cl_int,
        object(command_queue) => commands::images::copy_image_to_buffer;
    clEnqueueCopyBufferToImage(command_queue: cl_command_queue, src_buffer: cl_mem, dst_image: cl_mem,
        src_offset: size_t, dst_origin: *const size_t, region: *const size_t, num_events_in_wait_list: cl_uint,
        event_wait_list: *const cl_event, event: *mut cl_event) -> cl_int,
        object(command_queue) => commands::images::copy_buffer_to_image;
    clEnqueueFillImage(command_queue: cl_command_queue, image: cl_mem, fill_color: *const c_void,
        origin: *const size_t, region: *const size_t, num_events_in_wait_list: cl_uint,
        event_wait_list: *const cl_event, event: *mut cl_event) -> cl_int,
        object(command_queue) => commands::images::fill_image;
    clEnqueueMapImage(command_queue: cl_command_queue, image: cl_mem, blocking_map: cl_bool, map_flags: cl_map_flags,
        origin: *const size_t, region: *const size_t, image_row_pitch: *mut size_t, image_slice_pitch: *mut size_t,
        num_events_in_wait_list: cl_uint, event_wait_list: *const cl_event, event: *mut cl_event,
        errcode_ret: *mut cl_int) -> *mut c_void,
        object(command_queue) => commands::maps::map_image;
    clEnqueueMapBuffer(command_queue: cl_command_queue, buffer: cl_mem, blocking_map: cl_bool,
        map_flags: cl_map_flags, offset: size_t, size: size_t, num_events_in_wait_list: cl_uint,
        event_wait_list: *const cl_event, event: *mut cl_event, errcode_ret: *mut cl_int) -> *mut c_void,
        object(command_queue) => commands::maps::map_buffer;
    clEnqueueUnmapMemObject(command_queue: cl_command_queue, memobj: cl_mem, mapped_ptr: *mut c_void,
        num_events_in_wait_list: cl_uint, event_wait_list: *const cl_event, event: *mut cl_event) -> cl_int,
        object(command_queue) => commands::maps::unmap;
    #[named]
    clEnqueueSVMMemcpy(command_queue: cl_command_queue, blocking_copy: cl_bool, dst_ptr: *mut c_void,
        src_ptr: *const c_void, size: size_t, num_events_in_wait_list: cl_uint, event_wait_list: *const cl_event,
        event: *mut cl_event) -> cl_int,
        object(command_queue) => commands::svm::copy_by_pointer;
    #[named]
    clEnqueueSVMMemFill(command_queue: cl_command_queue, svm_ptr: *mut c_void, pattern: *const c_void,
        pattern_size: size_t, size: size_t, num_events_in_wait_list: cl_uint, event_wait_list: *const cl_event,
        event: *mut cl_event) -> cl_int,
        object(command_queue) => commands::svm::fill_by_pointer;
    clEnqueueSVMMap(command_queue: cl_command_queue, blocking_map: cl_bool, flags: cl_map_flags,
        svm_ptr: *mut c_void, size: size_t, num_events_in_wait_list: cl_uint, event_wait_list: *const cl_event,
        event: *mut cl_event) -> cl_int,
        object(command_queue) => commands::maps::svm_map;
    clEnqueueSVMUnmap(command_queue: cl_command_queue, svm_ptr: *mut c_void, num_events_in_wait_list: cl_uint,
        event_wait_list: *const cl_event, event: *mut cl_event) -> cl_int,
        object(command_queue) => commands::maps::svm_unmap;
    clEnqueueSVMFree(command_queue: cl_command_queue, num_svm_pointers: cl_uint, svm_pointers: *mut *mut c_void,
        pfn_free_func: SvmFreeNotify, user_data: *mut c_void, num_events_in_wait_list: cl_uint,
        event_wait_list: *const cl_event, event: *mut cl_event) -> cl_int,
        object(command_queue) => memory::enqueue_svm_free;
    clEnqueueMigrateMemObjects(command_queue: cl_command_queue, num_mem_objects: cl_uint,
        mem_objects: *const cl_mem, flags: cl_mem_migration_flags, num_events_in_wait_list: cl_uint,
        event_wait_list: *const cl_event, event: *mut cl_event) -> cl_int,
        object(command_queue) => commands::ordering::migrate_mem_objects;
    clEnqueueSVMMigrateMem(command_queue: cl_command_queue, num_svm_pointers: cl_uint,
        svm_pointers: *mut *const c_void, sizes: *const size_t, flags: cl_mem_migration_flags,
        num_events_in_wait_list: cl_uint, event_wait_list: *const cl_event, event: *mut cl_event) -> cl_int,
        object(command_queue) => commands::ordering::svm_migrate_mem;
    clEnqueueMarkerWithWaitList(command_queue: cl_command_queue, num_events_in_wait_list: cl_uint,
        event_wait_list: *const cl_event, event: *mut cl_event) -> cl_int,
        object(command_queue) => commands::ordering::marker_with_wait_list;
    clEnqueueBarrierWithWaitList(command_queue: cl_command_queue, num_events_in_wait_list: cl_uint,
        event_wait_list: *const cl_event, event: *mut cl_event) -> cl_int,
        object(command_queue) => commands::ordering::barrier_with_wait_list;
    clEnqueueMarker(command_queue: cl_command_queue, event: *mut cl_event) -> cl_int,
        object(command_queue) => commands::ordering::marker;
    clEnqueueBarrier(command_queue: cl_command_queue) -> cl_int,
        object(command_queue) => commands::ordering::barrier;
    clEnqueueWaitForEvents(command_queue: cl_command_queue, num_events: cl_uint, event_list: *const cl_event)
        -> cl_int,
        object(command_queue) => commands::ordering::wait_for_events;

    // Host synchronization, user events, callbacks.
    clFinish(command_queue: cl_command_queue) -> cl_int,
        object(command_queue) => sync::finish;
    clWaitForEvents(num_events: cl_uint, event_list: *const cl_event) -> cl_int,
        first(event_list) => sync::wait_for_events;
    clCreateUserEvent(context: cl_context, errcode_ret: *mut cl_int) -> cl_event,
        object(context) => sync::create_user_event;
    clSetUserEventStatus(event: cl_event, execution_status: cl_int) -> cl_int,
        object(event) => sync::set_user_event_status;
    clSetEventCallback(event: cl_event, command_exec_callback_type: cl_int, pfn_notify: EventNotify,
        user_data: *mut c_void) -> cl_int,
        object(event) => sync::set_event_callback;

    // Extension functions: the program gets the shim's wrappers for those it records.
    clGetExtensionFunctionAddress(func_name: *const c_char) -> *mut c_void,
        loader => extensions::function_address;
    clGetExtensionFunctionAddressForPlatform(platform: cl_platform_id, func_name: *const c_char) -> *mut c_void,
        object(platform) => extensions::function_address_for_platform;
}
