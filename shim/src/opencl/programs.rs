//! Programs (their source, binary or IL, and build options), kernels and kernel arguments.

use super::dispatch::call;
use super::state::{with_recorder, with_state, with_state_unless_held, ArgValue, KernelArgs};
use super::{created, info, key, signature, succeeded, ProgramNotify, Recorded};
use crate::recorder::{Key, Recorder};
use crate::entry::Forward;
use libc::size_t;
use opencl_sys::*;
use std::ffi::{c_char, c_uchar, c_void, CStr};
use trace_format::ImageKind;

/// A C string argument, or empty.
unsafe fn text(pointer: *const c_char) -> String {
    if pointer.is_null() {
        return String::new();
    }
    // SAFETY: the API takes NUL-terminated strings here.
    unsafe { CStr::from_ptr(pointer) }.to_string_lossy().into_owned()
}

/// `count` bytes at `pointer` (none for null).
unsafe fn bytes(pointer: *const c_void, count: usize) -> Vec<u8> {
    if pointer.is_null() {
        return Vec::new();
    }
    // SAFETY: the caller names memory the program passed with its length.
    unsafe { std::slice::from_raw_parts(pointer.cast::<u8>(), count) }.to_vec()
}

pub unsafe fn create_with_source(
    forward: &mut Forward<'_, cl_program>,
    _context: cl_context,
    count: cl_uint,
    strings: *mut *const c_char,
    lengths: *const size_t,
    errcode_ret: *mut cl_int,
) -> Recorded {
    let Some(program) = (unsafe { created(forward, errcode_ret) }) else { return Ok(()) };
    let mut source = Vec::new();
    for index in 0..count as usize {
        // SAFETY: the call succeeded, so there are `count` strings, each NUL-terminated unless
        // its length is given.
        unsafe {
            let string = *strings.add(index);
            let length = if lengths.is_null() { 0 } else { *lengths.add(index) };
            match length {
                0 => source.extend_from_slice(CStr::from_ptr(string).to_bytes()),
                length => source.extend(bytes(string.cast(), length)),
            }
        }
    }
    with_recorder(|_, recorder| recorder.program_created(key(program), vec![(ImageKind::OpenClSource, source)]))
}

pub unsafe fn create_with_binary(
    forward: &mut Forward<'_, cl_program>,
    _context: cl_context,
    num_devices: cl_uint,
    _device_list: *const cl_device_id,
    lengths: *const size_t,
    binaries: *mut *const c_uchar,
    _binary_status: *mut cl_int,
    errcode_ret: *mut cl_int,
) -> Recorded {
    let Some(program) = (unsafe { created(forward, errcode_ret) }) else { return Ok(()) };
    // SAFETY: the call succeeded, so there is a binary with its length per device.
    let binary = unsafe { bytes((*binaries).cast(), *lengths) };
    with_recorder(|_, recorder| {
        if num_devices > 1 {
            recorder.partial("clCreateProgramWithBinary", "only the first device's binary is kept");
        }
        recorder.program_created(key(program), vec![(ImageKind::DeviceBinary, binary)]);
    })
}

pub unsafe fn create_with_il(
    forward: &mut Forward<'_, cl_program>,
    _context: cl_context,
    il: *const c_void,
    length: size_t,
    errcode_ret: *mut cl_int,
) -> Recorded {
    let Some(program) = (unsafe { created(forward, errcode_ret) }) else { return Ok(()) };
    let il = unsafe { bytes(il, length) };
    with_recorder(|_, recorder| recorder.program_created(key(program), vec![(ImageKind::SpirV, il)]))
}

pub unsafe fn build(
    forward: &mut Forward<'_, cl_int>,
    program: cl_program,
    _num_devices: cl_uint,
    _device_list: *const cl_device_id,
    options: *const c_char,
    _pfn_notify: ProgramNotify,
    _user_data: *mut c_void,
) -> Recorded {
    if !succeeded(forward) {
        return Ok(());
    }
    let options = unsafe { text(options) };
    with_recorder(|_, recorder| recorder.program_built(key(program), &options))
}

pub unsafe fn compile(
    forward: &mut Forward<'_, cl_int>,
    program: cl_program,
    _num_devices: cl_uint,
    _device_list: *const cl_device_id,
    options: *const c_char,
    num_input_headers: cl_uint,
    input_headers: *const cl_program,
    header_include_names: *mut *const c_char,
    _pfn_notify: ProgramNotify,
    _user_data: *mut c_void,
) -> Recorded {
    if !succeeded(forward) {
        return Ok(());
    }
    let options = unsafe { text(options) };
    // SAFETY: the call succeeded, so there are `num_input_headers` headers, each with its name.
    let headers: Vec<(String, Key)> = (0..num_input_headers as usize)
        .map(|index| unsafe { (text(*header_include_names.add(index)), key(*input_headers.add(index))) })
        .collect();
    with_recorder(|_, recorder| recorder.program_compiled(key(program), &options, &headers))
}

/// A linked program: its inputs' compilations and the link options.
pub unsafe fn link(
    forward: &mut Forward<'_, cl_program>,
    _context: cl_context,
    _num_devices: cl_uint,
    _device_list: *const cl_device_id,
    options: *const c_char,
    num_input_programs: cl_uint,
    input_programs: *const cl_program,
    _pfn_notify: ProgramNotify,
    _user_data: *mut c_void,
    errcode_ret: *mut cl_int,
) -> Recorded {
    let Some(program) = (unsafe { created(forward, errcode_ret) }) else { return Ok(()) };
    // SAFETY: the call succeeded, so the list holds `num_input_programs` programs.
    let inputs: Vec<Key> = unsafe { std::slice::from_raw_parts(input_programs, num_input_programs as usize) }.iter().map(|input| key(*input)).collect();
    let options = unsafe { text(options) };
    with_recorder(|_, recorder| recorder.program_linked("clLinkProgram", key(program), &inputs, &options))
}

pub unsafe fn create_kernel(
    forward: &mut Forward<'_, cl_kernel>,
    program: cl_program,
    _name: *const c_char,
    errcode_ret: *mut cl_int,
) -> Recorded {
    let Some(kernel) = (unsafe { created(forward, errcode_ret) }) else { return Ok(()) };
    kernel_created(kernel, program, None)
}

pub unsafe fn create_kernels_in_program(
    forward: &mut Forward<'_, cl_int>,
    program: cl_program,
    num_kernels: cl_uint,
    kernels: *mut cl_kernel,
    num_kernels_ret: *mut cl_uint,
) -> Recorded {
    if !succeeded(forward) || kernels.is_null() {
        return Ok(());
    }
    let count = if num_kernels_ret.is_null() { num_kernels } else { unsafe { *num_kernels_ret }.min(num_kernels) };
    for index in 0..count as usize {
        // SAFETY: the call filled `count` kernels.
        kernel_created(unsafe { *kernels.add(index) }, program, None)?;
    }
    Ok(())
}

pub unsafe fn clone_kernel(forward: &mut Forward<'_, cl_kernel>, source: cl_kernel, errcode_ret: *mut cl_int) -> Recorded {
    let Some(kernel) = (unsafe { created(forward, errcode_ret) }) else { return Ok(()) };
    let program: Option<cl_program> =
        info::value(|size, value, size_ret| call!(clGetKernelInfo(kernel, CL_KERNEL_PROGRAM, size, value, size_ret)));
    let arguments = with_state(|state| state.kernels.get(&key(source)).cloned());
    kernel_created(kernel, program.unwrap_or(std::ptr::null_mut()), arguments)
}

/// Registers a kernel; `arguments` are those it starts with (a clone's), else none set.
fn kernel_created(kernel: cl_kernel, program: cl_program, arguments: Option<KernelArgs>) -> Recorded {
    let name = info::string(|size, value, size_ret| call!(clGetKernelInfo(kernel, CL_KERNEL_FUNCTION_NAME, size, value, size_ret)));
    let count: cl_uint = info::kernel(kernel, CL_KERNEL_NUM_ARGS).unwrap_or(0);
    let arguments = arguments.unwrap_or_else(|| KernelArgs { values: vec![None; count as usize], pointers: pointer_parameters(kernel, count) });
    let types = parameter_types(kernel, count);
    with_recorder(|state, recorder| {
        let types = match types.is_empty() {
            true => source_of(recorder, key(program)).map(|source| signature::parameter_types(&source, &name)).unwrap_or_default(),
            false => types,
        };
        recorder.kernel_created(key(kernel), key(program), &name, types);
        state.kernels.insert(key(kernel), arguments);
        state.references.created(key(kernel));
    })
}

/// The OpenCL C source program `key` was built from, if it was.
fn source_of(recorder: &Recorder, key: Key) -> Option<String> {
    let images = recorder.program_images(key)?;
    let (_, source) = images.iter().find(|(kind, _)| *kind == ImageKind::OpenClSource)?;
    Some(String::from_utf8_lossy(source).into_owned())
}

/// Each parameter's type name ("float*", "float4*", "int"); empty if the driver does not say
/// (`clGetKernelArgInfo` may need `-cl-kernel-arg-info`).
fn parameter_types(kernel: cl_kernel, count: cl_uint) -> Vec<String> {
    let types: Option<Vec<String>> = (0..count)
        .map(|index| {
            let name = info::string(|size, value, size_ret| call!(clGetKernelArgInfo(kernel, index, CL_KERNEL_ARG_TYPE_NAME, size, value, size_ret)));
            Some(name).filter(|name| !name.is_empty())
        })
        .collect();
    types.unwrap_or_default()
}

/// Which parameters are global or constant pointers; empty if the driver does not say.
fn pointer_parameters(kernel: cl_kernel, count: cl_uint) -> Vec<bool> {
    let qualifiers: Option<Vec<cl_kernel_arg_address_qualifier>> = (0..count)
        .map(|index| {
            info::value(|size, value, size_ret| {
                call!(clGetKernelArgInfo(kernel, index, CL_KERNEL_ARG_ADDRESS_QUALIFIER, size, value, size_ret))
            })
        })
        .collect();
    let pointer = |qualifier| qualifier == CL_KERNEL_ARG_ADDRESS_GLOBAL || qualifier == CL_KERNEL_ARG_ADDRESS_CONSTANT;
    qualifiers.map(|qualifiers| qualifiers.into_iter().map(pointer).collect()).unwrap_or_default()
}

pub unsafe fn retain_kernel(forward: &mut Forward<'_, cl_int>, kernel: cl_kernel) -> Recorded {
    if succeeded(forward) {
        with_state(|state| state.references.retained(key(kernel)));
    }
    Ok(())
}

pub unsafe fn release_kernel(forward: &mut Forward<'_, cl_int>, kernel: cl_kernel) -> Recorded {
    if succeeded(forward) {
        with_state(|state| {
            if state.references.released(key(kernel)) {
                state.kernels.remove(&key(kernel));
            }
        });
    }
    Ok(())
}

pub unsafe fn set_arg(result: cl_int, kernel: cl_kernel, index: cl_uint, size: size_t, value: *const c_void) -> Recorded {
    if result != CL_SUCCESS {
        return Ok(());
    }
    match value.is_null() {
        true => arguments_of(kernel, |args| args.set(index as usize, ArgValue::Local(size as u64))),
        false => {
            // SAFETY: the call succeeded, so `value` holds the `size` bytes it names.
            let bytes = unsafe { std::slice::from_raw_parts(value.cast::<u8>(), size) };
            arguments_of(kernel, |args| args.set_bytes(index as usize, bytes));
        }
    }
    Ok(())
}

/// An argument as `clSetKernelArg` takes it: a value of `size` bytes, or local memory of
/// `size` bytes when `value` is null.
pub(super) unsafe fn argument(size: size_t, value: *const c_void) -> ArgValue {
    match value.is_null() {
        true => ArgValue::Local(size as u64),
        false => ArgValue::Bytes(unsafe { bytes(value, size) }),
    }
}

pub unsafe fn set_arg_svm_pointer(result: cl_int, kernel: cl_kernel, index: cl_uint, value: *const c_void) -> Recorded {
    if result == CL_SUCCESS {
        arguments_of(kernel, |args| args.set(index as usize, ArgValue::Svm(value as usize as u64)));
    }
    Ok(())
}

/// Runs `work` on what the shim keeps of `kernel`'s arguments (an observed hook's: see
/// `with_state_unless_held`).
fn arguments_of(kernel: cl_kernel, work: impl FnOnce(&mut KernelArgs)) {
    with_state_unless_held(|state| work(state.kernels.entry(key(kernel)).or_default()));
}
