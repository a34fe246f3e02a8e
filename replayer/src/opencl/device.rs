//! Finding the device to replay on, and what it reports about itself.

use super::api::{check, Api};
use crate::backend::{BackendError, BackendResult};
use crate::devices::Listed;
use opencl_sys::*;
use std::ffi::c_void;
use std::ptr;
use std::sync::Mutex;

/// A device with the platform it belongs to.
pub struct Found {
    pub platform: cl_platform_id,
    pub device: cl_device_id,
    pub listed: Listed,
}

/// Every device of every platform, in the loader's order.
pub fn all_devices(api: &Api) -> BackendResult<Vec<Found>> {
    // PoCL initializes its devices on the first query and reports none to a thread that
    // queries concurrently: enumerate one thread at a time.
    static ENUMERATING: Mutex<()> = Mutex::new(());
    let _one_at_a_time = ENUMERATING.lock().unwrap_or_else(|poisoned| poisoned.into_inner());
    let mut found = Vec::new();
    for platform in platforms(api)? {
        let platform_text = |param| text(|size, value, returned| unsafe { (api.clGetPlatformInfo)(platform, param, size, value, returned) });
        let (platform_name, platform_vendor) = (platform_text(CL_PLATFORM_NAME)?, platform_text(CL_PLATFORM_VENDOR)?);
        let mut count: cl_uint = 0;
        let code = unsafe { (api.clGetDeviceIDs)(platform, CL_DEVICE_TYPE_ALL, 0, ptr::null_mut(), &mut count) };
        if code == CL_DEVICE_NOT_FOUND || count == 0 {
            continue;
        }
        check(code, "clGetDeviceIDs")?;
        let mut devices = vec![ptr::null_mut(); count as usize];
        check(unsafe { (api.clGetDeviceIDs)(platform, CL_DEVICE_TYPE_ALL, count, devices.as_mut_ptr(), ptr::null_mut()) }, "clGetDeviceIDs")?;
        for device in devices {
            let name = device_text(api, device, CL_DEVICE_NAME)?;
            let listed = Listed { platform: platform_name.clone(), platform_vendor: platform_vendor.clone(), name };
            found.push(Found { platform, device, listed });
        }
    }
    Ok(found)
}

fn platforms(api: &Api) -> BackendResult<Vec<cl_platform_id>> {
    let mut count: cl_uint = 0;
    let code = unsafe { (api.clGetPlatformIDs)(0, ptr::null_mut(), &mut count) };
    if code == CL_PLATFORM_NOT_FOUND_KHR || count == 0 {
        return Err(BackendError::Unavailable("no OpenCL platform is installed (the ICD loader found none)".into()));
    }
    check(code, "clGetPlatformIDs")?;
    let mut platforms = vec![ptr::null_mut(); count as usize];
    check(unsafe { (api.clGetPlatformIDs)(count, platforms.as_mut_ptr(), ptr::null_mut()) }, "clGetPlatformIDs")?;
    Ok(platforms)
}

/// A string property of a device.
pub fn device_text(api: &Api, device: cl_device_id, param: cl_device_info) -> BackendResult<String> {
    text(|size, value, returned| unsafe { (api.clGetDeviceInfo)(device, param, size, value, returned) })
}

/// A fixed-size property of a device, `None` when the device does not know it.
pub fn device_value<T: Copy + Default>(api: &Api, device: cl_device_id, param: cl_device_info) -> Option<T> {
    let mut value = T::default();
    let code = unsafe {
        (api.clGetDeviceInfo)(device, param, std::mem::size_of::<T>(), &mut value as *mut T as *mut c_void, ptr::null_mut())
    };
    (code == CL_SUCCESS).then_some(value)
}

/// The version of each extension the device reports (`CL_DEVICE_EXTENSIONS_WITH_VERSION`,
/// OpenCL 3.0), as (major, minor, patch).
pub fn extension_version(api: &Api, device: cl_device_id, extension: &str) -> Option<(u32, u32, u32)> {
    let mut size = 0;
    let code = unsafe { (api.clGetDeviceInfo)(device, CL_DEVICE_EXTENSIONS_WITH_VERSION, 0, ptr::null_mut(), &mut size) };
    if code != CL_SUCCESS || size == 0 {
        return None;
    }
    let mut entries = vec![cl_name_version { version: 0, name: [0; CL_NAME_VERSION_MAX_NAME_SIZE] }; size / std::mem::size_of::<cl_name_version>()];
    let code = unsafe {
        (api.clGetDeviceInfo)(device, CL_DEVICE_EXTENSIONS_WITH_VERSION, size, entries.as_mut_ptr() as *mut c_void, ptr::null_mut())
    };
    if code != CL_SUCCESS {
        return None;
    }
    entries.iter().find(|entry| name_of(&entry.name) == extension).map(|entry| {
        let version = entry.version;
        (version >> 22, (version >> 12) & 0x3ff, version & 0xfff)
    })
}

fn name_of(raw: &[u8]) -> &str {
    let end = raw.iter().position(|&b| b == 0).unwrap_or(raw.len());
    std::str::from_utf8(&raw[..end]).unwrap_or("")
}

/// Runs an OpenCL info query twice (size, then contents) and decodes the string.
pub fn text(query: impl Fn(usize, *mut c_void, *mut usize) -> cl_int) -> BackendResult<String> {
    let mut size = 0;
    check(query(0, ptr::null_mut(), &mut size), "clGet*Info")?;
    let mut bytes = vec![0u8; size];
    check(query(size, bytes.as_mut_ptr() as *mut c_void, ptr::null_mut()), "clGet*Info")?;
    let end = bytes.iter().position(|&b| b == 0).unwrap_or(bytes.len());
    Ok(String::from_utf8_lossy(&bytes[..end]).into_owned())
}
