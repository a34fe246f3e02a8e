//! Intel's CPU OpenCL runtime, which does the driver's work. It is loaded from
//! `$REPRISE_INTEL_OCL` directly, not through an ICD loader: the program's OpenCL set-up
//! (`OCL_ICD_VENDORS` choosing PoCL, say) does not change which runtime the driver gets. Only
//! `clGetExtensionFunctionAddress` is looked up by name; everything else is called through the
//! runtime's ICD dispatch table and its extension functions, which no `LD_PRELOAD` interposer
//! sees: a program recorded on this driver records Level Zero calls, not the driver's OpenCL. That
//! one lookup goes to the C library's `dlsym` itself, which an interposer's `dlsym` does not see.

use crate::common::ZeResult;
use opencl_sys::cl_icd::cl_icd_dispatch;
use opencl_sys::*;
use std::ffi::{c_void, CStr, CString};
use std::ptr;
use std::sync::OnceLock;
use ze_sys::*;

/// Calls `$function` of the runtime's dispatch table (present: `Runtime::load` checked it).
macro_rules! cl {
    ($runtime:expr, $function:ident($($arg:expr),* $(,)?)) => {
        match $runtime.dispatch.$function {
            Some(function) => function($($arg),*),
            None => unreachable!(concat!(stringify!($function), " is checked when the runtime loads")),
        }
    };
}
pub(crate) use cl;

/// The dispatch table entries the driver calls.
macro_rules! required_functions {
    ($dispatch:expr, $($function:ident),* $(,)?) => {{
        let missing: Vec<&str> = [$(($dispatch.$function.is_none(), stringify!($function))),*]
            .into_iter().filter(|(absent, _)| *absent).map(|(_, name)| name).collect();
        missing
    }};
}

type HostAlloc = unsafe extern "C" fn(cl_context, *const cl_mem_properties_intel, usize, cl_uint, *mut cl_int) -> *mut c_void;
type DeviceAlloc = unsafe extern "C" fn(cl_context, cl_device_id, *const cl_mem_properties_intel, usize, cl_uint, *mut cl_int) -> *mut c_void;
type Free = unsafe extern "C" fn(cl_context, *mut c_void) -> cl_int;
type SetArgPointer = unsafe extern "C" fn(cl_kernel, cl_uint, *const c_void) -> cl_int;
type Memcpy = unsafe extern "C" fn(cl_command_queue, cl_bool, *mut c_void, *const c_void, usize, cl_uint, *const cl_event, *mut cl_event) -> cl_int;
type Fill = unsafe extern "C" fn(cl_command_queue, *mut c_void, *const c_void, usize, usize, cl_uint, *const cl_event, *mut cl_event) -> cl_int;

/// The Intel USM functions (`cl_intel_unified_shared_memory`).
pub struct Usm {
    pub host_alloc: HostAlloc,
    pub device_alloc: DeviceAlloc,
    pub shared_alloc: DeviceAlloc,
    pub blocking_free: Free,
    pub set_arg_pointer: SetArgPointer,
    pub memcpy: Memcpy,
    pub fill: Fill,
}

pub struct Runtime {
    pub dispatch: &'static cl_icd_dispatch,
    pub device: cl_device_id,
    pub context: cl_context,
    pub usm: Usm,
    /// The OpenCL device's name, for the Level Zero device's.
    pub device_name: String,
}

// The handles are the runtime's, which is thread-safe; they live as long as the process.
unsafe impl Send for Runtime {}
unsafe impl Sync for Runtime {}

static RUNTIME: OnceLock<Result<Runtime, String>> = OnceLock::new();

/// The runtime, loaded on the first call; `ZE_RESULT_ERROR_UNINITIALIZED` (with a line on stderr
/// saying why, once) when it cannot be.
pub fn runtime() -> ZeResult<&'static Runtime> {
    let loaded = RUNTIME.get_or_init(|| {
        // SAFETY: loading and asking a library that implements the OpenCL ICD interface.
        let loaded = unsafe { Runtime::load() };
        if let Err(reason) = &loaded {
            eprintln!("libze_reprise_test (a test double): {reason}");
        }
        loaded
    });
    loaded.as_ref().map_err(|_| ZE_RESULT_ERROR_UNINITIALIZED)
}

/// The dispatch table alone, for `cl!` while the runtime is being loaded.
struct Dispatch {
    dispatch: &'static cl_icd_dispatch,
}

type Dlsym = unsafe extern "C" fn(*mut c_void, *const std::ffi::c_char) -> *mut c_void;

/// The C library's `dlsym` (its current version, or the first of x86-64), past any interposer's.
fn libc_dlsym() -> Option<Dlsym> {
    [c"GLIBC_2.34", c"GLIBC_2.2.5"].into_iter().find_map(|version| {
        // SAFETY: dlvsym with constant C strings; an interposer's unversioned `dlsym` does not match.
        let found = unsafe { libc::dlvsym(libc::RTLD_DEFAULT, c"dlsym".as_ptr(), version.as_ptr()) };
        // SAFETY: the C library's dlsym has this type.
        (!found.is_null()).then(|| unsafe { std::mem::transmute::<*mut c_void, Dlsym>(found) })
    })
}

type GetExtensionFunctionAddress = unsafe extern "C" fn(*const std::ffi::c_char) -> *mut c_void;
type IcdGetPlatformIds = unsafe extern "C" fn(cl_uint, *mut cl_platform_id, *mut cl_uint) -> cl_int;

impl Runtime {
    unsafe fn load() -> Result<Runtime, String> {
        let path = std::env::var("REPRISE_INTEL_OCL")
            .ok()
            .filter(|path| !path.is_empty())
            .ok_or("REPRISE_INTEL_OCL (the path of Intel's CPU OpenCL runtime, libintelocl.so) is not set")?;
        let c_path = CString::new(path.clone()).map_err(|_| format!("REPRISE_INTEL_OCL={path:?} holds a NUL byte"))?;
        // SAFETY (whole block): dlopen/dlsym with C strings; the functions found have the ICD
        // interface's types; the library stays loaded for the life of the process.
        unsafe {
            let library = libc::dlopen(c_path.as_ptr(), libc::RTLD_NOW | libc::RTLD_LOCAL);
            if library.is_null() {
                return Err(format!("cannot load {path}: {}", CStr::from_ptr(libc::dlerror()).to_string_lossy()));
            }
            let dlsym = libc_dlsym().ok_or("the C library's dlsym is not found")?;
            let lookup = dlsym(library, c"clGetExtensionFunctionAddress".as_ptr());
            if lookup.is_null() {
                return Err(format!("{path} has no clGetExtensionFunctionAddress"));
            }
            let lookup = std::mem::transmute::<*mut c_void, GetExtensionFunctionAddress>(lookup);
            let get_platforms = lookup(c"clIcdGetPlatformIDsKHR".as_ptr());
            if get_platforms.is_null() {
                return Err(format!("{path} is not an OpenCL ICD (no clIcdGetPlatformIDsKHR)"));
            }
            let get_platforms = std::mem::transmute::<*mut c_void, IcdGetPlatformIds>(get_platforms);
            let mut platform: cl_platform_id = ptr::null_mut();
            let mut count = 0;
            if get_platforms(1, &mut platform, &mut count) != CL_SUCCESS || count == 0 {
                return Err(format!("{path} lists no OpenCL platform"));
            }
            let dispatch = &**platform.cast::<*const cl_icd_dispatch>();
            let missing = required_functions!(
                dispatch,
                clGetDeviceIDs, clGetDeviceInfo, clCreateContext, clCreateCommandQueueWithProperties, clReleaseCommandQueue,
                clFinish, clCreateProgramWithIL, clCreateProgramWithBinary, clBuildProgram, clGetProgramInfo,
                clGetProgramBuildInfo, clReleaseProgram, clSetProgramSpecializationConstant, clCreateKernel, clCloneKernel,
                clReleaseKernel, clSetKernelArg, clSetKernelExecInfo, clGetKernelInfo, clGetKernelWorkGroupInfo,
                clEnqueueNDRangeKernel, clEnqueueNativeKernel, clEnqueueBarrierWithWaitList, clEnqueueMarkerWithWaitList, clCreateUserEvent,
                clSetUserEventStatus, clGetEventInfo, clGetEventProfilingInfo, clWaitForEvents,
                clRetainEvent, clReleaseEvent, clGetDeviceAndHostTimer, clGetExtensionFunctionAddressForPlatform,
            );
            if !missing.is_empty() {
                return Err(format!("{path} lacks {}", missing.join(", ")));
            }
            let table = Dispatch { dispatch };
            let mut device: cl_device_id = ptr::null_mut();
            if cl!(table, clGetDeviceIDs(platform, CL_DEVICE_TYPE_ALL, 1, &mut device, ptr::null_mut())) != CL_SUCCESS {
                return Err(format!("{path} lists no OpenCL device"));
            }
            let mut code = CL_SUCCESS;
            let context = cl!(table, clCreateContext(ptr::null(), 1, &device, None, ptr::null_mut(), &mut code));
            if code != CL_SUCCESS {
                return Err(format!("clCreateContext on {path} failed: {code}"));
            }
            let extension = |name: &CStr| -> Result<*mut c_void, String> {
                let found = cl!(table, clGetExtensionFunctionAddressForPlatform(platform, name.as_ptr()));
                if found.is_null() {
                    Err(format!("{path} lacks {} (cl_intel_unified_shared_memory)", name.to_string_lossy()))
                } else {
                    Ok(found)
                }
            };
            let usm = Usm {
                host_alloc: std::mem::transmute::<*mut c_void, HostAlloc>(extension(c"clHostMemAllocINTEL")?),
                device_alloc: std::mem::transmute::<*mut c_void, DeviceAlloc>(extension(c"clDeviceMemAllocINTEL")?),
                shared_alloc: std::mem::transmute::<*mut c_void, DeviceAlloc>(extension(c"clSharedMemAllocINTEL")?),
                blocking_free: std::mem::transmute::<*mut c_void, Free>(extension(c"clMemBlockingFreeINTEL")?),
                set_arg_pointer: std::mem::transmute::<*mut c_void, SetArgPointer>(extension(c"clSetKernelArgMemPointerINTEL")?),
                memcpy: std::mem::transmute::<*mut c_void, Memcpy>(extension(c"clEnqueueMemcpyINTEL")?),
                fill: std::mem::transmute::<*mut c_void, Fill>(extension(c"clEnqueueMemFillINTEL")?),
            };
            let mut runtime = Runtime { dispatch, device, context, usm, device_name: String::new() };
            runtime.device_name = runtime.device_text(CL_DEVICE_NAME);
            Ok(runtime)
        }
    }

    /// A device property of a fixed-size type.
    pub fn device_value<T: Copy + Default>(&self, param: cl_device_info) -> T {
        let mut value = T::default();
        // SAFETY: the value is written with at most its size.
        unsafe {
            cl!(self, clGetDeviceInfo(self.device, param, std::mem::size_of::<T>(), (&mut value as *mut T).cast(), ptr::null_mut()));
        }
        value
    }

    /// A device property that is a string (empty when the runtime does not know it).
    pub fn device_text(&self, param: cl_device_info) -> String {
        let mut size = 0;
        // SAFETY: size query, then a read into a buffer of that size.
        unsafe {
            if cl!(self, clGetDeviceInfo(self.device, param, 0, ptr::null_mut(), &mut size)) != CL_SUCCESS {
                return String::new();
            }
            let mut bytes = vec![0u8; size];
            cl!(self, clGetDeviceInfo(self.device, param, size, bytes.as_mut_ptr().cast(), ptr::null_mut()));
            CStr::from_bytes_until_nul(&bytes).map(|s| s.to_string_lossy().into_owned()).unwrap_or_default()
        }
    }
}

/// The Level Zero result for an OpenCL error code.
pub fn ze_result(code: cl_int) -> ze_result_t {
    match code {
        CL_SUCCESS => ZE_RESULT_SUCCESS,
        CL_OUT_OF_HOST_MEMORY => ZE_RESULT_ERROR_OUT_OF_HOST_MEMORY,
        CL_OUT_OF_RESOURCES | CL_MEM_OBJECT_ALLOCATION_FAILURE => ZE_RESULT_ERROR_OUT_OF_DEVICE_MEMORY,
        CL_BUILD_PROGRAM_FAILURE | CL_INVALID_BUILD_OPTIONS | CL_COMPILE_PROGRAM_FAILURE => ZE_RESULT_ERROR_MODULE_BUILD_FAILURE,
        CL_INVALID_BINARY => ZE_RESULT_ERROR_INVALID_NATIVE_BINARY,
        CL_INVALID_KERNEL_NAME => ZE_RESULT_ERROR_INVALID_KERNEL_NAME,
        CL_INVALID_ARG_INDEX => ZE_RESULT_ERROR_INVALID_KERNEL_ARGUMENT_INDEX,
        CL_INVALID_ARG_SIZE | CL_INVALID_ARG_VALUE => ZE_RESULT_ERROR_INVALID_KERNEL_ARGUMENT_SIZE,
        CL_INVALID_WORK_GROUP_SIZE | CL_INVALID_WORK_ITEM_SIZE => ZE_RESULT_ERROR_INVALID_GROUP_SIZE_DIMENSION,
        CL_INVALID_BUFFER_SIZE => ZE_RESULT_ERROR_UNSUPPORTED_SIZE,
        _ => ZE_RESULT_ERROR_INVALID_ARGUMENT,
    }
}

/// `Ok` for `CL_SUCCESS`, else the matching Level Zero error.
pub fn check(code: cl_int) -> ZeResult<()> {
    match code {
        CL_SUCCESS => Ok(()),
        other => Err(ze_result(other)),
    }
}
