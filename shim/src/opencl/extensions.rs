//! Extension functions reach programs through `clGetExtensionFunctionAddress(ForPlatform)`:
//! those the shim records come back as its wrappers.

use super::{command_buffers, hooks, unified_memory, Recorded};
use crate::entry::Forward;
use opencl_sys::{cl_platform_id, cl_uint, CL_SUCCESS};
use std::ffi::{c_char, c_void, CStr};


pub unsafe fn function_address_for_platform(
    forward: &mut Forward<'_, *mut c_void>,
    platform: cl_platform_id,
    name: *const c_char,
) -> Recorded {
    let found = forward.call();
    if found.is_null() || name.is_null() {
        return Ok(());
    }
    // SAFETY: the driver found a function under this name, so it is a C string.
    unsafe { substitute(forward, platform, CStr::from_ptr(name), found) }
}

pub unsafe fn function_address(forward: &mut Forward<'_, *mut c_void>, name: *const c_char) -> Recorded {
    let found = forward.call();
    if found.is_null() || name.is_null() {
        return Ok(());
    }
    // SAFETY: as above.
    let name = unsafe { CStr::from_ptr(name) };
    match unsafe { platform_providing(name, found) } {
        Some(platform) => unsafe { substitute(forward, platform, name, found) },
        None => Ok(()),
    }
}

/// The platform whose driver gives `address` for `name` (the loader asks each in turn).
unsafe fn platform_providing(name: &CStr, address: *mut c_void) -> Option<cl_platform_id> {
    let mut platforms = [std::ptr::null_mut(); 16];
    let mut count: cl_uint = 0;
    let listed = unsafe { hooks::real::clGetPlatformIDs(platforms.len() as cl_uint, platforms.as_mut_ptr(), &mut count) };
    if listed != CL_SUCCESS {
        return None;
    }
    platforms.into_iter().take(count as usize).find(|&platform| {
        let provided = unsafe { hooks::real::clGetExtensionFunctionAddressForPlatform(platform, name.as_ptr()) };
        provided == address
    })
}

/// Hands out the shim's wrapper for `name` instead of `found`, the platform's own.
unsafe fn substitute(forward: &mut Forward<'_, *mut c_void>, platform: cl_platform_id, name: &CStr, found: *mut c_void) -> Recorded {
    let wrapper = command_buffers::wrapper(name, platform).or_else(|| unified_memory::wrapper(name, platform, found));
    if let Some(wrapper) = wrapper {
        forward.substitute(wrapper);
    }
    Ok(())
}
