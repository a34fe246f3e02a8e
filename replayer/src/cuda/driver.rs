//! Access to the CUDA driver: the check that `libcuda.so.1` exists before cudarc touches it
//! (cudarc panics without it), result checking, and the device and its primary context.

use crate::backend::{BackendError, BackendResult};
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
}

impl Device {
    /// Initializes the driver and picks the device `choice` names (index or name fragment).
    pub fn open(choice: Option<&str>) -> BackendResult<Device> {
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
            let mut names = Vec::new();
            for ordinal in 0..count {
                let mut device: CUdevice = 0;
                check(sys::cuDeviceGet(&mut device, ordinal), "cuDeviceGet")?;
                let mut name = [0 as c_char; 256];
                check(sys::cuDeviceGetName(name.as_mut_ptr(), name.len() as i32, device), "cuDeviceGetName")?;
                names.push((device, CStr::from_ptr(name.as_ptr()).to_string_lossy().into_owned()));
            }
            let (device, name) = choose(names, choice)?;
            let mut context: CUcontext = std::ptr::null_mut();
            check(sys::cuDevicePrimaryCtxRetain(&mut context, device), "cuDevicePrimaryCtxRetain")?;
            check(sys::cuCtxSetCurrent(context), "cuCtxSetCurrent")?;
            Ok(Device { device, context, label: format!("{name} (CUDA device {device})") })
        }
    }
}

/// The device at index `choice`, or the first whose name contains it, or the first.
fn choose(devices: Vec<(CUdevice, String)>, choice: Option<&str>) -> BackendResult<(CUdevice, String)> {
    let listing = || devices.iter().map(|(d, n)| format!("{d}: {n}")).collect::<Vec<_>>().join(", ");
    let found = match choice {
        None => devices.first(),
        Some(text) => match text.parse::<usize>() {
            Ok(index) => devices.get(index),
            Err(_) => devices.iter().find(|(_, name)| name.to_lowercase().contains(&text.to_lowercase())),
        },
    };
    match found {
        Some(device) => Ok(device.clone()),
        None if devices.is_empty() => Err(BackendError::Unavailable("the CUDA driver reports no devices".into())),
        None => Err(BackendError::Unavailable(format!(
            "no CUDA device matches {:?}; devices: {}",
            choice.unwrap_or(""),
            listing()
        ))),
    }
}
