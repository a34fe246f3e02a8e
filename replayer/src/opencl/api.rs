//! The OpenCL entry points, resolved from the ICD loader at run time so that the replayer
//! starts (and replays other APIs) on machines without OpenCL.

use crate::backend::{BackendError, BackendResult};
use opencl_sys::cl_function_types::*;
use opencl_sys::{cl_int, cl_platform_id, CL_SUCCESS};
use std::ffi::{c_void, CStr, CString};
use std::sync::OnceLock;

/// The function type inside an opencl-sys `Option<fn>` alias.
pub trait Unwrapped {
    type Inner: Copy;
}
impl<F: Copy> Unwrapped for Option<F> {
    type Inner = F;
}
pub type Raw<T> = <T as Unwrapped>::Inner;

/// Reinterprets a non-null symbol address as the function type `F`.
///
/// # Safety
/// `address` must point to a function with the signature `F`.
pub unsafe fn function_at<F: Copy>(address: *mut c_void) -> F {
    assert_eq!(std::mem::size_of::<F>(), std::mem::size_of::<*mut c_void>(), "function pointers are pointer-sized");
    unsafe { std::mem::transmute_copy(&address) }
}

macro_rules! entry_points {
    ($($name:ident),* $(,)?) => {
        /// The core OpenCL functions of the loader.
        #[allow(non_snake_case)]
        pub struct Api { $(pub $name: Raw<paste_fn!($name)>,)* }

        impl Api {
            fn resolve(library: *mut c_void) -> BackendResult<Api> {
                Ok(Api { $($name: unsafe { function_at(symbol(library, stringify!($name))?) },)* })
            }
        }
    };
}

/// `clFoo` → `clFoo_fn`, the opencl-sys type of the function.
macro_rules! paste_fn {
    (clGetPlatformIDs) => { clGetPlatformIDs_fn };
    (clGetPlatformInfo) => { clGetPlatformInfo_fn };
    (clGetDeviceIDs) => { clGetDeviceIDs_fn };
    (clGetDeviceInfo) => { clGetDeviceInfo_fn };
    (clCreateContext) => { clCreateContext_fn };
    (clReleaseContext) => { clReleaseContext_fn };
    (clCreateCommandQueueWithProperties) => { clCreateCommandQueueWithProperties_fn };
    (clReleaseCommandQueue) => { clReleaseCommandQueue_fn };
    (clCreateBuffer) => { clCreateBuffer_fn };
    (clCreateSubBuffer) => { clCreateSubBuffer_fn };
    (clRetainMemObject) => { clRetainMemObject_fn };
    (clReleaseMemObject) => { clReleaseMemObject_fn };
    (clCreateImage) => { clCreateImage_fn };
    (clGetSupportedImageFormats) => { clGetSupportedImageFormats_fn };
    (clCreateSamplerWithProperties) => { clCreateSamplerWithProperties_fn };
    (clReleaseSampler) => { clReleaseSampler_fn };
    (clEnqueueReadImage) => { clEnqueueReadImage_fn };
    (clEnqueueWriteImage) => { clEnqueueWriteImage_fn };
    (clEnqueueCopyImage) => { clEnqueueCopyImage_fn };
    (clEnqueueCopyImageToBuffer) => { clEnqueueCopyImageToBuffer_fn };
    (clEnqueueCopyBufferToImage) => { clEnqueueCopyBufferToImage_fn };
    (clEnqueueFillImage) => { clEnqueueFillImage_fn };
    (clSVMAlloc) => { clSVMAlloc_fn };
    (clSVMFree) => { clSVMFree_fn };
    (clCreateProgramWithSource) => { clCreateProgramWithSource_fn };
    (clCreateProgramWithBinary) => { clCreateProgramWithBinary_fn };
    (clCreateProgramWithIL) => { clCreateProgramWithIL_fn };
    (clBuildProgram) => { clBuildProgram_fn };
    (clCompileProgram) => { clCompileProgram_fn };
    (clLinkProgram) => { clLinkProgram_fn };
    (clGetProgramBuildInfo) => { clGetProgramBuildInfo_fn };
    (clReleaseProgram) => { clReleaseProgram_fn };
    (clCreateKernel) => { clCreateKernel_fn };
    (clReleaseKernel) => { clReleaseKernel_fn };
    (clGetKernelInfo) => { clGetKernelInfo_fn };
    (clGetKernelArgInfo) => { clGetKernelArgInfo_fn };
    (clGetKernelWorkGroupInfo) => { clGetKernelWorkGroupInfo_fn };
    (clCloneKernel) => { clCloneKernel_fn };
    (clSetKernelArg) => { clSetKernelArg_fn };
    (clSetKernelArgSVMPointer) => { clSetKernelArgSVMPointer_fn };
    (clSetKernelExecInfo) => { clSetKernelExecInfo_fn };
    (clEnqueueNDRangeKernel) => { clEnqueueNDRangeKernel_fn };
    (clEnqueueCopyBuffer) => { clEnqueueCopyBuffer_fn };
    (clEnqueueCopyBufferRect) => { clEnqueueCopyBufferRect_fn };
    (clEnqueueFillBuffer) => { clEnqueueFillBuffer_fn };
    (clEnqueueWriteBuffer) => { clEnqueueWriteBuffer_fn };
    (clEnqueueReadBuffer) => { clEnqueueReadBuffer_fn };
    (clEnqueueWriteBufferRect) => { clEnqueueWriteBufferRect_fn };
    (clEnqueueReadBufferRect) => { clEnqueueReadBufferRect_fn };
    (clEnqueueSVMMemcpy) => { clEnqueueSVMMemcpy_fn };
    (clEnqueueSVMMemFill) => { clEnqueueSVMMemFill_fn };
    (clEnqueueBarrierWithWaitList) => { clEnqueueBarrierWithWaitList_fn };
    (clFinish) => { clFinish_fn };
    (clReleaseEvent) => { clReleaseEvent_fn };
    (clRetainEvent) => { clRetainEvent_fn };
    (clGetEventProfilingInfo) => { clGetEventProfilingInfo_fn };
    (clGetExtensionFunctionAddressForPlatform) => { clGetExtensionFunctionAddressForPlatform_fn };
}

entry_points!(
    clGetPlatformIDs,
    clGetPlatformInfo,
    clGetDeviceIDs,
    clGetDeviceInfo,
    clCreateContext,
    clReleaseContext,
    clCreateCommandQueueWithProperties,
    clReleaseCommandQueue,
    clCreateBuffer,
    clCreateSubBuffer,
    clRetainMemObject,
    clReleaseMemObject,
    clCreateImage,
    clGetSupportedImageFormats,
    clCreateSamplerWithProperties,
    clReleaseSampler,
    clEnqueueReadImage,
    clEnqueueWriteImage,
    clEnqueueCopyImage,
    clEnqueueCopyImageToBuffer,
    clEnqueueCopyBufferToImage,
    clEnqueueFillImage,
    clSVMAlloc,
    clSVMFree,
    clCreateProgramWithSource,
    clCreateProgramWithBinary,
    clCreateProgramWithIL,
    clBuildProgram,
    clCompileProgram,
    clLinkProgram,
    clGetProgramBuildInfo,
    clReleaseProgram,
    clCreateKernel,
    clReleaseKernel,
    clGetKernelInfo,
    clGetKernelArgInfo,
    clGetKernelWorkGroupInfo,
    clCloneKernel,
    clSetKernelArg,
    clSetKernelArgSVMPointer,
    clSetKernelExecInfo,
    clEnqueueNDRangeKernel,
    clEnqueueCopyBuffer,
    clEnqueueCopyBufferRect,
    clEnqueueFillBuffer,
    clEnqueueWriteBuffer,
    clEnqueueReadBuffer,
    clEnqueueWriteBufferRect,
    clEnqueueReadBufferRect,
    clEnqueueSVMMemcpy,
    clEnqueueSVMMemFill,
    clEnqueueBarrierWithWaitList,
    clFinish,
    clReleaseEvent,
    clRetainEvent,
    clGetEventProfilingInfo,
    clGetExtensionFunctionAddressForPlatform,
);

const LOADER: &str = "libOpenCL.so.1";

impl Api {
    /// The ICD loader's entry points, loaded once per process (the loader is never unloaded,
    /// so every OpenCL handle may outlive any backend).
    pub fn get() -> BackendResult<&'static Api> {
        static API: OnceLock<Result<Api, String>> = OnceLock::new();
        API.get_or_init(|| Api::load().map_err(|e| e.to_string())).as_ref().map_err(|m| BackendError::Unavailable(m.clone()))
    }

    /// Opens the ICD loader; `Unavailable` when it is missing or lacks OpenCL 2.0 entry points.
    fn load() -> BackendResult<Api> {
        let name = CString::new(LOADER).map_err(|e| BackendError::Unavailable(e.to_string()))?;
        let library = unsafe { libc::dlopen(name.as_ptr(), libc::RTLD_NOW | libc::RTLD_LOCAL) };
        if library.is_null() {
            return Err(BackendError::Unavailable(format!(
                "the OpenCL ICD loader ({LOADER}) cannot be loaded: {}",
                last_dl_error()
            )));
        }
        Api::resolve(library)
    }

    /// An extension function of `platform`, or `None` when the platform lacks it.
    ///
    /// # Safety
    /// `F` must be the signature of `name` in the revision the platform implements.
    pub unsafe fn extension<F: Copy>(&self, platform: cl_platform_id, name: &str) -> Option<F> {
        let name = CString::new(name).ok()?;
        let address = unsafe { (self.clGetExtensionFunctionAddressForPlatform)(platform, name.as_ptr()) };
        (!address.is_null()).then(|| unsafe { function_at(address) })
    }
}

fn symbol(library: *mut c_void, name: &str) -> BackendResult<*mut c_void> {
    let c_name = CString::new(name).map_err(|e| BackendError::Unavailable(e.to_string()))?;
    let address = unsafe { libc::dlsym(library, c_name.as_ptr()) };
    if address.is_null() {
        return Err(BackendError::Unavailable(format!(
            "the OpenCL ICD loader ({LOADER}) has no {name}: an OpenCL 2.0 loader is needed"
        )));
    }
    Ok(address)
}

fn last_dl_error() -> String {
    let message = unsafe { libc::dlerror() };
    if message.is_null() {
        return "unknown error".into();
    }
    unsafe { CStr::from_ptr(message) }.to_string_lossy().into_owned()
}

/// `Ok` for `CL_SUCCESS`, else an `Api` error naming `call` and the error code.
pub fn check(code: cl_int, call: &str) -> BackendResult<()> {
    if code == CL_SUCCESS {
        return Ok(());
    }
    Err(BackendError::Api { call: call.into(), detail: error_name(code) })
}

/// The name of an OpenCL error code, for messages.
pub fn error_name(code: cl_int) -> String {
    let name = match code {
        -1 => "CL_DEVICE_NOT_FOUND",
        -2 => "CL_DEVICE_NOT_AVAILABLE",
        -4 => "CL_MEM_OBJECT_ALLOCATION_FAILURE",
        -5 => "CL_OUT_OF_RESOURCES",
        -6 => "CL_OUT_OF_HOST_MEMORY",
        -10 => "CL_IMAGE_FORMAT_NOT_SUPPORTED",
        -11 => "CL_BUILD_PROGRAM_FAILURE",
        -13 => "CL_MISALIGNED_SUB_BUFFER_OFFSET",
        -30 => "CL_INVALID_VALUE",
        -34 => "CL_INVALID_CONTEXT",
        -35 => "CL_INVALID_QUEUE_PROPERTIES",
        -36 => "CL_INVALID_COMMAND_QUEUE",
        -38 => "CL_INVALID_MEM_OBJECT",
        -39 => "CL_INVALID_IMAGE_FORMAT_DESCRIPTOR",
        -40 => "CL_INVALID_IMAGE_SIZE",
        -41 => "CL_INVALID_SAMPLER",
        -42 => "CL_INVALID_BINARY",
        -43 => "CL_INVALID_BUILD_OPTIONS",
        -44 => "CL_INVALID_PROGRAM",
        -46 => "CL_INVALID_KERNEL_NAME",
        -48 => "CL_INVALID_KERNEL",
        -49 => "CL_INVALID_ARG_INDEX",
        -50 => "CL_INVALID_ARG_VALUE",
        -51 => "CL_INVALID_ARG_SIZE",
        -52 => "CL_INVALID_KERNEL_ARGS",
        -53 => "CL_INVALID_WORK_DIMENSION",
        -54 => "CL_INVALID_WORK_GROUP_SIZE",
        -55 => "CL_INVALID_WORK_ITEM_SIZE",
        -56 => "CL_INVALID_GLOBAL_OFFSET",
        -57 => "CL_INVALID_EVENT_WAIT_LIST",
        -59 => "CL_INVALID_OPERATION",
        -61 => "CL_INVALID_BUFFER_SIZE",
        -63 => "CL_INVALID_GLOBAL_WORK_SIZE",
        -65 => "CL_INVALID_IMAGE_DESCRIPTOR",
        -1001 => "CL_PLATFORM_NOT_FOUND_KHR",
        -1138 => "CL_INVALID_COMMAND_BUFFER_KHR",
        -1139 => "CL_INVALID_SYNC_POINT_WAIT_LIST_KHR",
        -1140 => "CL_INCOMPATIBLE_COMMAND_QUEUE_KHR",
        -1141 => "CL_INVALID_MUTABLE_COMMAND_KHR",
        _ => return format!("error {code}"),
    };
    format!("{name} ({code})")
}
