//! Programs as the recording built them: whole from one image (source, binary or IL), or
//! compiled unit by unit and linked.

use super::api::{check, error_name, Api};
use super::device::text;
use crate::backend::{BackendError, BackendResult};
use opencl_sys::*;
use std::ffi::{c_void, CString};
use std::ptr;
use trace_format::{BlobStore, CompiledUnit, ImageKind, Program, ProgramLink};

/// Builds the first image of `program` that this device accepts: source, then binary, then IL.
pub fn build_program(api: &Api, context: cl_context, device: cl_device_id, program: &Program, blobs: &BlobStore) -> BackendResult<cl_program> {
    let mut failures = Vec::new();
    for image in &program.images {
        let bytes = blobs.get(image.blob).map_err(|e| BackendError::Unsupported(format!("program image: {e}")))?;
        match build_image(api, context, device, image.kind, &bytes, &program.build_options) {
            Ok(Some(built)) => return Ok(built),
            Ok(None) => {}
            Err(error) => failures.push(error.to_string()),
        }
    }
    Err(BackendError::Unsupported(if failures.is_empty() {
        "no OpenCL source, binary or IL image".into()
    } else {
        failures.join("; ")
    }))
}

const ARG_INFO: &str = "-cl-kernel-arg-info";

/// Kernel argument information is what `checks` tells memory from images by; PoCL keeps it only
/// when asked as soon as any build option is given. It changes no code.
fn with_arg_info(options: &str) -> BackendResult<CString> {
    match options.contains(ARG_INFO) {
        true => c_options(options),
        false => c_options(&format!("{options} {ARG_INFO}")),
    }
}

fn c_options(options: &str) -> BackendResult<CString> {
    CString::new(options).map_err(|_| BackendError::Unsupported(format!("the options {options:?} hold a NUL byte")))
}

/// A program created from one image, and the call that created it; `Ok(None)` for image kinds
/// OpenCL cannot load.
fn create_program(api: &Api, context: cl_context, device: cl_device_id, kind: ImageKind, bytes: &[u8]) -> BackendResult<Option<(cl_program, &'static str)>> {
    let mut code = CL_SUCCESS;
    let (program, call) = match kind {
        ImageKind::OpenClSource => {
            let mut source = bytes.as_ptr() as *const std::ffi::c_char;
            let length = bytes.len();
            (unsafe { (api.clCreateProgramWithSource)(context, 1, &mut source, &length, &mut code) }, "clCreateProgramWithSource")
        }
        ImageKind::DeviceBinary => {
            let mut binary = bytes.as_ptr();
            let length = bytes.len();
            let mut status = CL_SUCCESS;
            (unsafe { (api.clCreateProgramWithBinary)(context, 1, &device, &length, &mut binary, &mut status, &mut code) }, "clCreateProgramWithBinary")
        }
        ImageKind::SpirV => (unsafe { (api.clCreateProgramWithIL)(context, bytes.as_ptr() as *const c_void, bytes.len(), &mut code) }, "clCreateProgramWithIL"),
        ImageKind::Ptx | ImageKind::Cubin | ImageKind::Fatbin => return Ok(None),
    };
    check(code, call)?;
    Ok(Some((program, call)))
}

/// `code`, or the failure of `call` on `program` with the device's build log.
fn built(api: &Api, program: cl_program, device: cl_device_id, code: cl_int, call: &str, from: &str) -> BackendResult<()> {
    if code == CL_SUCCESS {
        return Ok(());
    }
    let log = text(|size, value, returned| unsafe { (api.clGetProgramBuildInfo)(program, device, CL_PROGRAM_BUILD_LOG, size, value, returned) }).unwrap_or_default();
    Err(BackendError::Api { call: call.into(), detail: format!("{} from {from}: {}", error_name(code), log.trim()) })
}

/// `Ok(None)` for image kinds OpenCL cannot load.
fn build_image(api: &Api, context: cl_context, device: cl_device_id, kind: ImageKind, bytes: &[u8], options: &str) -> BackendResult<Option<cl_program>> {
    let options = match kind {
        ImageKind::OpenClSource => with_arg_info(options)?,
        _ => c_options(options)?,
    };
    let Some((program, call)) = create_program(api, context, device, kind, bytes)? else { return Ok(None) };
    let code = unsafe { (api.clBuildProgram)(program, 1, &device, options.as_ptr(), None, ptr::null_mut()) };
    if let Err(error) = built(api, program, device, code, "clBuildProgram", call) {
        unsafe { (api.clReleaseProgram)(program) };
        return Err(error);
    }
    Ok(Some(program))
}

/// Programs released when dropped: the compilations a link takes in, and their headers.
struct Held<'a>(&'a Api, Vec<cl_program>);

impl Drop for Held<'_> {
    fn drop(&mut self) {
        for &program in &self.1 {
            unsafe { (self.0.clReleaseProgram)(program) };
        }
    }
}

/// Compiles each unit of a linked program as the recording did, then links them with the
/// program's options.
pub fn link_program(api: &Api, context: cl_context, device: cl_device_id, program: &Program, link: &ProgramLink, blobs: &BlobStore) -> BackendResult<cl_program> {
    let mut compiled = Held(api, Vec::new());
    for (index, unit) in link.units.iter().enumerate() {
        let unit_program = compile_unit(api, context, device, unit, blobs).map_err(|e| e.about(&format!("unit {index} of its link")))?;
        compiled.1.push(unit_program);
    }
    let options = c_options(&program.build_options)?;
    let mut code = CL_SUCCESS;
    let linked = unsafe {
        (api.clLinkProgram)(context, 1, &device, options.as_ptr(), compiled.1.len() as cl_uint, compiled.1.as_ptr(), None, ptr::null_mut(), &mut code)
    };
    if linked.is_null() {
        return Err(BackendError::Api { call: "clLinkProgram".into(), detail: error_name(code).to_string() });
    }
    if let Err(error) = built(api, linked, device, code, "clLinkProgram", "compiled units") {
        unsafe { (api.clReleaseProgram)(linked) };
        return Err(error);
    }
    Ok(linked)
}

/// One compilation: from its first image OpenCL loads, with its headers; a binary is taken as
/// compiled already.
fn compile_unit(api: &Api, context: cl_context, device: cl_device_id, unit: &CompiledUnit, blobs: &BlobStore) -> BackendResult<cl_program> {
    let mut headers = Held(api, Vec::new());
    let mut names = Vec::new();
    for header in &unit.headers {
        let source = blobs.get(header.blob).map_err(|e| BackendError::Unsupported(format!("header {:?}: {e}", header.name)))?;
        if let Some((program, _)) = create_program(api, context, device, ImageKind::OpenClSource, &source)? {
            headers.1.push(program);
        }
        names.push(CString::new(header.name.as_str()).map_err(|_| BackendError::Unsupported(format!("header name {:?} holds a NUL byte", header.name)))?);
    }
    let name_pointers: Vec<*const std::ffi::c_char> = names.iter().map(|name| name.as_ptr()).collect();
    let options = with_arg_info(&unit.options)?;
    for image in &unit.images {
        let bytes = blobs.get(image.blob).map_err(|e| BackendError::Unsupported(format!("unit image: {e}")))?;
        let Some((program, call)) = create_program(api, context, device, image.kind, &bytes)? else { continue };
        if image.kind == ImageKind::DeviceBinary {
            return Ok(program);
        }
        let code = unsafe {
            (api.clCompileProgram)(
                program,
                1,
                &device,
                options.as_ptr(),
                headers.1.len() as cl_uint,
                // Both null without headers: a driver may refuse a list of none (Intel's does).
                if headers.1.is_empty() { ptr::null() } else { headers.1.as_ptr() },
                if headers.1.is_empty() { ptr::null_mut() } else { name_pointers.as_ptr() as *mut *const std::ffi::c_char },
                None,
                ptr::null_mut(),
            )
        };
        if let Err(error) = built(api, program, device, code, "clCompileProgram", call) {
            unsafe { (api.clReleaseProgram)(program) };
            return Err(error);
        }
        return Ok(program);
    }
    Err(BackendError::Unsupported("no OpenCL source, binary or IL image to compile".into()))
}
