//! Access to the CUDA driver: the check that `libcuda.so.1` exists before cudarc touches it
//! (cudarc panics without it), result checking, and the device and its primary context.

use crate::backend::{BackendError, BackendOptions, BackendResult};
use crate::devices::Listed;
use trace_format::Api;
use cudarc::driver::sys::{self, CUcontext, CUdevice, CUresult};
use std::ffi::{c_char, CStr, CString};

const DRIVER_LIBRARY: &str = "libcuda.so.1";

/// Turns a driver result into a backend error naming the call and the driver's message.
pub fn check(result: CUresult, call: &str) -> BackendResult<()> {
    if result == CUresult::CUDA_SUCCESS {
        return Ok(());
    }
    let mut text: *const c_char = std::ptr::null();
    // SAFETY: cuGetErrorString only writes a pointer to a static string.
    let described = unsafe { sys::cuGetErrorString(result, &mut text) } == CUresult::CUDA_SUCCESS && !text.is_null();
    let detail = if described {
        // SAFETY: the driver returned a NUL-terminated static string.
        format!("{result:?}: {}", unsafe { CStr::from_ptr(text) }.to_string_lossy())
    } else {
        format!("{result:?}")
    };
    Err(BackendError::Api { call: call.to_string(), detail })
}

/// Loads `ptx`, a kernel the replayer carries (its `.ptx` files, assembled by
/// `tests/tests/cuda_compile.rs`), into the current context and returns its entry `name`.
pub fn own_kernel(ptx: &str, name: &CStr) -> BackendResult<sys::CUfunction> {
    let ptx = CString::new(ptx).map_err(|_| BackendError::Unsupported(format!("the replayer's PTX of {name:?} holds a NUL byte")))?;
    let (mut module, mut function) = (std::ptr::null_mut(), std::ptr::null_mut());
    // SAFETY: a NUL-terminated PTX image and valid out-pointers; the context is current.
    check(unsafe { sys::cuModuleLoadData(&mut module, ptx.as_ptr().cast()) }, "cuModuleLoadData")?;
    // SAFETY: a module just loaded; a missing entry is an error the call reports.
    check(unsafe { sys::cuModuleGetFunction(&mut function, module, name.as_ptr()) }, "cuModuleGetFunction")?;
    Ok(function)
}

/// Whether the driver library can be loaded, asked before any cudarc call.
fn driver_present() -> bool {
    let name = CString::new(DRIVER_LIBRARY).expect("a constant without NUL");
    // SAFETY: dlopen with a valid C string; the handle is closed again at once.
    unsafe {
        let handle = libc::dlopen(name.as_ptr(), libc::RTLD_NOW | libc::RTLD_LOCAL);
        if handle.is_null() {
            return false;
        }
        libc::dlclose(handle);
        sys::is_culib_present()
    }
}

/// The chosen device, with its primary context current on this thread.
pub struct Device {
    pub device: CUdevice,
    pub context: CUcontext,
    pub label: String,
    /// Why this is not the device the trace was recorded on, when it is not.
    pub note: Option<String>,
}

impl Device {
    /// Initializes the driver and picks the device `options` choose (`devices::choose`).
    pub fn open(options: &BackendOptions) -> BackendResult<Device> {
        let mut all = devices()?;
        let listed: Vec<Listed> = all.iter().map(|(_, listed)| listed.clone()).collect();
        let chosen = crate::devices::choose(Api::Cuda, &listed, options.device.as_deref(), options.recorded.as_ref())?;
        let (device, listed) = all.swap_remove(chosen.index);
        let mut context: CUcontext = std::ptr::null_mut();
        // SAFETY: the driver is initialized; valid out-pointer.
        unsafe {
            check(sys::cuDevicePrimaryCtxRetain(&mut context, device), "cuDevicePrimaryCtxRetain")?;
            check(sys::cuCtxSetCurrent(context), "cuCtxSetCurrent")?;
        }
        if let Some(recorded) = &options.recorded {
            set_limits(recorded)?;
        }
        Ok(Device { device, context, label: format!("{} (CUDA device {device})", listed.name), note: chosen.note })
    }
}

/// The limits the program set on its context (the recorded device's `cuda_limit.N`, N a `CUlimit`):
/// a device heap's size, a stack's, a printf buffer's, dynamic parallelism's depths.
fn set_limits(recorded: &trace_format::Device) -> BackendResult<()> {
    use sys::CUlimit::*;
    for (name, value) in &recorded.properties {
        let Some(limit) = name.strip_prefix("cuda_limit.") else { continue };
        let limit = match limit {
            "0" => CU_LIMIT_STACK_SIZE,
            "1" => CU_LIMIT_PRINTF_FIFO_SIZE,
            "2" => CU_LIMIT_MALLOC_HEAP_SIZE,
            "3" => CU_LIMIT_DEV_RUNTIME_SYNC_DEPTH,
            "4" => CU_LIMIT_DEV_RUNTIME_PENDING_LAUNCH_COUNT,
            "5" => CU_LIMIT_MAX_L2_FETCH_GRANULARITY,
            "6" => CU_LIMIT_PERSISTING_L2_CACHE_SIZE,
            _ => return Err(BackendError::Unsupported(format!("the recorded device sets {name}, a limit this replayer does not know"))),
        };
        let value: usize = value.parse().map_err(|_| BackendError::Invalid(format!("the recorded device's {name} is {value:?}, not a number")))?;
        // SAFETY: a known limit on the current context.
        check(unsafe { sys::cuCtxSetLimit(limit, value) }, &format!("cuCtxSetLimit({limit:?}, {value})"))?;
    }
    Ok(())
}

/// Initializes the driver and lists its devices, in ordinal order.
pub fn devices() -> BackendResult<Vec<(CUdevice, Listed)>> {
    if !driver_present() {
        return Err(BackendError::Unavailable(format!(
            "no CUDA driver ({DRIVER_LIBRARY}) on this machine: replay CUDA traces on a machine with an NVIDIA GPU"
        )));
    }
    // SAFETY: the driver library is present; plain driver calls with valid out-pointers.
    unsafe {
        let init = sys::cuInit(0);
        if init != CUresult::CUDA_SUCCESS {
            return Err(BackendError::Unavailable(format!("the CUDA driver found no usable GPU (cuInit: {init:?})")));
        }
        let mut count = 0;
        check(sys::cuDeviceGetCount(&mut count), "cuDeviceGetCount")?;
        let mut listed = Vec::new();
        for ordinal in 0..count {
            let mut device: CUdevice = 0;
            check(sys::cuDeviceGet(&mut device, ordinal), "cuDeviceGet")?;
            let mut name = [0 as c_char; 256];
            check(sys::cuDeviceGetName(name.as_mut_ptr(), name.len() as i32, device), "cuDeviceGetName")?;
            let name = CStr::from_ptr(name.as_ptr()).to_string_lossy().into_owned();
            listed.push((device, Listed { platform: "CUDA".into(), platform_vendor: "NVIDIA".into(), name }));
        }
        Ok(listed)
    }
}
