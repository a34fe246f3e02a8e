//! Modules from SPIR-V (`clCreateProgramWithIL`) or from the double's own native binaries, their
//! build logs, and their kernels' names.

use crate::common::*;
use crate::device::{check_device, Context};
use crate::native;
use crate::opencl::{check, cl, runtime, Runtime};
use crate::spirv;
use opencl_sys::*;
use std::collections::BTreeMap;
use std::ffi::{c_char, CStr, CString};
use std::ptr;
use ze_sys::*;

pub struct Module {
    pub program: cl_program,
    /// Each kernel's argument kinds, by name.
    pub kernels: native::Kernels,
    /// The kernel names as C strings, kept for `zeModuleGetKernelNames`.
    names: Vec<CString>,
}

// The program is the runtime's, which is thread-safe.
unsafe impl Send for Module {}
unsafe impl Sync for Module {}

impl Handle for Module {
    type Raw = _ze_module_handle_t;
}

impl Drop for Module {
    fn drop(&mut self) {
        if let Ok(rt) = runtime() {
            // SAFETY: the module's own program.
            unsafe { cl!(rt, clReleaseProgram(self.program)) };
        }
    }
}

pub struct BuildLog(CString);

impl Handle for BuildLog {
    type Raw = _ze_module_build_log_handle_t;
}

/// OpenCL rejects Level Zero's own build options (`-ze-opt-disable`, ...): they are dropped.
fn opencl_options(flags: *const c_char) -> CString {
    if flags.is_null() {
        return CString::default();
    }
    // SAFETY: a C string from the caller.
    let flags = unsafe { CStr::from_ptr(flags) }.to_string_lossy();
    let kept: Vec<&str> = flags.split_whitespace().filter(|option| !option.starts_with("-ze-")).collect();
    CString::new(kept.join(" ")).unwrap_or_default()
}

fn build_log(rt: &Runtime, program: cl_program) -> String {
    let mut size = 0;
    // SAFETY: size query, then a read into a buffer of that size.
    unsafe {
        cl!(rt, clGetProgramBuildInfo(program, rt.device, CL_PROGRAM_BUILD_LOG, 0, ptr::null_mut(), &mut size));
        let mut bytes = vec![0u8; size.max(1)];
        cl!(rt, clGetProgramBuildInfo(program, rt.device, CL_PROGRAM_BUILD_LOG, size, bytes.as_mut_ptr().cast(), ptr::null_mut()));
        CStr::from_bytes_until_nul(&bytes).map(|s| s.to_string_lossy().into_owned()).unwrap_or_default()
    }
}

/// Sets the specialization constants of `desc` on an IL program.
unsafe fn specialize(rt: &Runtime, program: cl_program, constants: *const ze_module_constants_t, sizes: &BTreeMap<u32, usize>) -> ZeResult<()> {
    let Some(constants) = (unsafe { constants.as_ref() }) else { return Ok(()) };
    for index in 0..constants.numConstants as usize {
        // SAFETY: the caller's arrays hold `numConstants` entries.
        let (id, value) = unsafe { (*constants.pConstantIds.add(index), *constants.pConstantValues.add(index)) };
        let size = *sizes.get(&id).ok_or(ZE_RESULT_ERROR_INVALID_ARGUMENT)?;
        check(unsafe { cl!(rt, clSetProgramSpecializationConstant(program, id, size, value)) })?;
    }
    Ok(())
}

pub unsafe fn create(
    context: ze_context_handle_t,
    device: ze_device_handle_t,
    desc: *const ze_module_desc_t,
    module: *mut ze_module_handle_t,
    log: *mut ze_module_build_log_handle_t,
) -> ZeResult<()> {
    unsafe { Context::from_handle(context) }?;
    check_device(device)?;
    let rt = runtime()?;
    let desc = unsafe { desc.as_ref() }.ok_or(ZE_RESULT_ERROR_INVALID_NULL_POINTER)?;
    if desc.pInputModule.is_null() || module.is_null() {
        return Err(ZE_RESULT_ERROR_INVALID_NULL_POINTER);
    }
    // SAFETY: the caller's module bytes.
    let input = unsafe { std::slice::from_raw_parts(desc.pInputModule, desc.inputSize) };
    let mut code = CL_SUCCESS;
    let (program, kernels) = match desc.format {
        ZE_MODULE_FORMAT_IL_SPIRV => {
            let parsed = spirv::parse(input).ok_or(ZE_RESULT_ERROR_INVALID_ARGUMENT)?;
            let program = unsafe { cl!(rt, clCreateProgramWithIL(rt.context, input.as_ptr().cast(), input.len(), &mut code)) };
            check(code)?;
            if let Err(error) = unsafe { specialize(rt, program, desc.pConstants, &parsed.spec_constants) } {
                unsafe { cl!(rt, clReleaseProgram(program)) };
                return Err(error);
            }
            (program, parsed.kernels)
        }
        ZE_MODULE_FORMAT_NATIVE => {
            let (kernels, binary) = native::decode(input).ok_or(ZE_RESULT_ERROR_INVALID_NATIVE_BINARY)?;
            let (length, mut start, mut status) = (binary.len(), binary.as_ptr(), CL_SUCCESS);
            let program = unsafe { cl!(rt, clCreateProgramWithBinary(rt.context, 1, &rt.device, &length, &mut start, &mut status, &mut code)) };
            check(code).map_err(|_| ZE_RESULT_ERROR_INVALID_NATIVE_BINARY)?;
            (program, kernels)
        }
        _ => return Err(ZE_RESULT_ERROR_INVALID_ENUMERATION),
    };
    let options = opencl_options(desc.pBuildFlags);
    let built = unsafe { cl!(rt, clBuildProgram(program, 1, &rt.device, options.as_ptr(), None, ptr::null_mut())) };
    if !log.is_null() {
        let text = CString::new(build_log(rt, program).replace('\0', " ")).unwrap_or_default();
        unsafe { log.write(BuildLog(text).into_handle()) };
    }
    if built != CL_SUCCESS {
        unsafe { cl!(rt, clReleaseProgram(program)) };
        return Err(ZE_RESULT_ERROR_MODULE_BUILD_FAILURE);
    }
    let names = kernels.keys().filter_map(|name| CString::new(name.as_str()).ok()).collect();
    unsafe { put(module, Module { program, kernels, names }.into_handle()) }
}

pub unsafe fn destroy(module: ze_module_handle_t) -> ZeResult<()> {
    unsafe { Module::destroy(module) }
}

pub unsafe fn kernel_names(module: ze_module_handle_t, count: *mut u32, names: *mut *const c_char) -> ZeResult<()> {
    let module = unsafe { Module::from_handle(module) }?;
    unsafe { fill_list(count, names, module.names.iter().map(|name| name.as_ptr())) }
}

pub unsafe fn properties(module: ze_module_handle_t, properties: *mut ze_module_properties_t) -> ZeResult<()> {
    unsafe { Module::from_handle(module) }?;
    unsafe { properties.as_mut() }.ok_or(ZE_RESULT_ERROR_INVALID_NULL_POINTER)?.flags = 0;
    Ok(())
}

pub unsafe fn native_binary(module: ze_module_handle_t, size: *mut usize, out: *mut u8) -> ZeResult<()> {
    let module = unsafe { Module::from_handle(module) }?;
    let rt = runtime()?;
    if size.is_null() {
        return Err(ZE_RESULT_ERROR_INVALID_NULL_POINTER);
    }
    let mut binary_size: usize = 0;
    check(unsafe {
        cl!(rt, clGetProgramInfo(module.program, CL_PROGRAM_BINARY_SIZES, std::mem::size_of::<usize>(), (&raw mut binary_size).cast(), ptr::null_mut()))
    })?;
    let mut binary = vec![0u8; binary_size];
    let mut binary_start = binary.as_mut_ptr();
    check(unsafe {
        cl!(rt, clGetProgramInfo(module.program, CL_PROGRAM_BINARIES, std::mem::size_of::<*mut u8>(), (&raw mut binary_start).cast(), ptr::null_mut()))
    })?;
    let encoded = native::encode(&module.kernels, &binary);
    unsafe {
        if !out.is_null() {
            if *size < encoded.len() {
                return Err(ZE_RESULT_ERROR_INVALID_SIZE);
            }
            ptr::copy_nonoverlapping(encoded.as_ptr(), out, encoded.len());
        }
        *size = encoded.len();
    }
    Ok(())
}

pub unsafe fn log_text(log: ze_module_build_log_handle_t, size: *mut usize, text: *mut c_char) -> ZeResult<()> {
    let log = unsafe { BuildLog::from_handle(log) }?;
    unsafe { give_string(&log.0, size, text) }
}

pub unsafe fn destroy_log(log: ze_module_build_log_handle_t) -> ZeResult<()> {
    unsafe { BuildLog::destroy(log) }
}
