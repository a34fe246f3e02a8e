//! Queries the shim makes about objects the program created (after the call that created them
//! succeeded, so the objects are valid).

use super::dispatch::call;
use opencl_sys::{
    cl_device_id, cl_int, cl_kernel, cl_platform_id, CL_DEVICE_EXTENSIONS, CL_DEVICE_NAME, CL_DEVICE_PLATFORM,
    CL_DEVICE_VENDOR, CL_DEVICE_VERSION, CL_DRIVER_VERSION, CL_PLATFORM_NAME, CL_SUCCESS,
};
use std::collections::BTreeMap;
use std::ffi::c_void;
use std::ptr::null_mut;
use trace_format::Device;

/// Runs an info query twice, for the size and for the bytes.
pub fn bytes(query: impl Fn(usize, *mut c_void, *mut usize) -> cl_int) -> Option<Vec<u8>> {
    let mut size = 0usize;
    if query(0, null_mut(), &mut size) != CL_SUCCESS {
        return None;
    }
    let mut bytes = vec![0u8; size];
    (query(size, bytes.as_mut_ptr().cast(), null_mut()) == CL_SUCCESS).then_some(bytes)
}

/// An info query answering a C string.
pub fn string(query: impl Fn(usize, *mut c_void, *mut usize) -> cl_int) -> String {
    let bytes = bytes(query).unwrap_or_default();
    let text = bytes.split(|&byte| byte == 0).next().unwrap_or_default();
    String::from_utf8_lossy(text).into_owned()
}

/// An info query answering one plain value.
pub fn value<T: Copy + Default>(query: impl Fn(usize, *mut c_void, *mut usize) -> cl_int) -> Option<T> {
    let mut value = T::default();
    let status = query(std::mem::size_of::<T>(), (&raw mut value).cast(), null_mut());
    (status == CL_SUCCESS).then_some(value)
}

/// The device as the trace describes it (see the brief's conventions for OpenCL).
pub fn device(device: cl_device_id) -> Device {
    let text = |param| string(|size, value, size_ret| call!(clGetDeviceInfo(device, param, size, value, size_ret)));
    let platform: Option<cl_platform_id> =
        value(|size, out, size_ret| call!(clGetDeviceInfo(device, CL_DEVICE_PLATFORM, size, out, size_ret)));
    let platform_name = platform.map_or_else(String::new, |platform| {
        string(|size, value, size_ret| call!(clGetPlatformInfo(platform, CL_PLATFORM_NAME, size, value, size_ret)))
    });
    let properties = BTreeMap::from([
        ("platform".to_string(), platform_name),
        ("opencl_version".to_string(), text(CL_DEVICE_VERSION)),
        ("extensions".to_string(), text(CL_DEVICE_EXTENSIONS)),
    ]);
    Device {
        name: text(CL_DEVICE_NAME),
        vendor: text(CL_DEVICE_VENDOR),
        driver_version: text(CL_DRIVER_VERSION),
        properties,
    }
}

/// A kernel's info value.
pub fn kernel<T: Copy + Default>(kernel: cl_kernel, param: opencl_sys::cl_kernel_info) -> Option<T> {
    value(|size, out, size_ret| call!(clGetKernelInfo(kernel, param, size, out, size_ret)))
}
