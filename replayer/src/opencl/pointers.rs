//! Memory named by pointer: SVM, and unified shared memory (`cl_intel_unified_shared_memory`,
//! which SYCL runs on), whose copy, fill and argument functions take SVM's arguments. Each
//! allocation keeps the functions of its kind, so that the commands using it need not ask.

use super::api::{Api, Raw};
use super::device::device_text;
use crate::backend::{BackendError, BackendResult};
use opencl_sys::cl_function_types::*;
use opencl_sys::*;
use std::ffi::c_void;
use std::ptr;
use trace_format::UnifiedKind;

/// The functions that copy, fill and pass memory of one kind of pointer.
#[derive(Clone, Copy)]
pub struct PointerCalls {
    pub copy: Raw<clEnqueueSVMMemcpy_fn>,
    pub fill: Raw<clEnqueueSVMMemFill_fn>,
    pub set_arg: Raw<clSetKernelArgSVMPointer_fn>,
    /// The names of `copy`, `fill` and `set_arg`, for errors.
    pub names: [&'static str; 3],
    /// Unified shared memory (freed with `clMemBlockingFreeINTEL`), not SVM.
    pub unified: bool,
}

impl PointerCalls {
    pub fn svm(api: &Api) -> PointerCalls {
        PointerCalls {
            copy: api.clEnqueueSVMMemcpy,
            fill: api.clEnqueueSVMMemFill,
            set_arg: api.clSetKernelArgSVMPointer,
            names: ["clEnqueueSVMMemcpy", "clEnqueueSVMMemFill", "clSetKernelArgSVMPointer"],
            unified: false,
        }
    }

    /// The calls for a copy between `self`'s memory and `other`'s: unified shared memory's copy
    /// takes any pointer, SVM's only SVM and host pointers.
    pub fn with(self, other: PointerCalls) -> PointerCalls {
        if self.unified { self } else { other }
    }
}

/// The unified shared memory functions of a platform whose device has the extension.
#[derive(Clone, Copy)]
pub struct UnifiedApi {
    host_alloc: Raw<clHostMemAllocINTEL_fn>,
    device_alloc: Raw<clDeviceMemAllocINTEL_fn>,
    shared_alloc: Raw<clSharedMemAllocINTEL_fn>,
    free: Raw<clMemBlockingFreeINTEL_fn>,
    set_exec_info: Raw<clSetKernelExecInfo_fn>,
    pub calls: PointerCalls,
}

impl UnifiedApi {
    /// The extension's functions, or `None` when `device` does not report it.
    pub fn find(api: &Api, platform: cl_platform_id, device: cl_device_id) -> Option<UnifiedApi> {
        let extensions = device_text(api, device, CL_DEVICE_EXTENSIONS).ok()?;
        if !extensions.split_whitespace().any(|name| name == "cl_intel_unified_shared_memory") {
            return None;
        }
        // SAFETY (all lookups): each type is the signature of the named function.
        Some(UnifiedApi {
            host_alloc: unsafe { api.extension(platform, "clHostMemAllocINTEL")? },
            device_alloc: unsafe { api.extension(platform, "clDeviceMemAllocINTEL")? },
            shared_alloc: unsafe { api.extension(platform, "clSharedMemAllocINTEL")? },
            free: unsafe { api.extension(platform, "clMemBlockingFreeINTEL")? },
            set_exec_info: api.clSetKernelExecInfo,
            calls: PointerCalls {
                copy: unsafe { api.extension(platform, "clEnqueueMemcpyINTEL")? },
                fill: unsafe { api.extension(platform, "clEnqueueMemFillINTEL")? },
                set_arg: unsafe { api.extension(platform, "clSetKernelArgMemPointerINTEL")? },
                names: ["clEnqueueMemcpyINTEL", "clEnqueueMemFillINTEL", "clSetKernelArgMemPointerINTEL"],
                unified: true,
            },
        })
    }

    /// Allocates `size` bytes of `kind` for memory `index`.
    pub fn allocate(&self, context: cl_context, device: cl_device_id, kind: UnifiedKind, size: u64, index: usize) -> BackendResult<*mut c_void> {
        let mut code = CL_SUCCESS;
        let size = size as usize;
        let (pointer, call) = unsafe {
            match kind {
                UnifiedKind::Host => ((self.host_alloc)(context, ptr::null(), size, 0, &mut code), "clHostMemAllocINTEL"),
                UnifiedKind::Device => ((self.device_alloc)(context, device, ptr::null(), size, 0, &mut code), "clDeviceMemAllocINTEL"),
                UnifiedKind::Shared => ((self.shared_alloc)(context, device, ptr::null(), size, 0, &mut code), "clSharedMemAllocINTEL"),
            }
        };
        if pointer.is_null() || code != CL_SUCCESS {
            return Err(BackendError::Api { call: call.into(), detail: format!("memory {index}: {size} bytes could not be allocated (error {code})") });
        }
        Ok(pointer)
    }

    pub fn free(&self, context: cl_context, pointer: *mut c_void) {
        unsafe { (self.free)(context, pointer) };
    }

    /// Lets `kernel` reach every kind of unified shared memory through pointers it finds in
    /// memory, not only through its arguments: the recording cannot tell which it did.
    pub fn allow_indirect_access(&self, kernel: cl_kernel) -> BackendResult<()> {
        let allowed: cl_bool = CL_TRUE;
        for info in [
            CL_KERNEL_EXEC_INFO_INDIRECT_HOST_ACCESS_INTEL,
            CL_KERNEL_EXEC_INFO_INDIRECT_DEVICE_ACCESS_INTEL,
            CL_KERNEL_EXEC_INFO_INDIRECT_SHARED_ACCESS_INTEL,
        ] {
            let code = unsafe { (self.set_exec_info)(kernel, info, size_of::<cl_bool>(), (&raw const allowed).cast()) };
            super::api::check(code, "clSetKernelExecInfo")?;
        }
        Ok(())
    }
}
