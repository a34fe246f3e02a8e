//! Replays place device memory at the addresses the program had (`cuda::memory`). Those lie near
//! the top of the address space, where the recording process's mappings began; this process's
//! own mappings, the driver's address ranges among them, would begin there too, and the driver
//! grants a requested range only while it lies above the ranges it holds (measured, driver 580).
//! With the legacy layout a process maps upwards from the lower third of the address space, out
//! of the way of recorded addresses.

use std::ffi::CString;
use std::os::unix::ffi::OsStringExt;

/// Runs this program again with the legacy layout, once; carries on as it is where that fails.
pub fn map_from_below() {
    let compat = libc::ADDR_COMPAT_LAYOUT as libc::c_ulong;
    // SAFETY: personality(0xffffffff) only queries the current persona.
    let current = unsafe { libc::personality(0xffff_ffff) };
    if current < 0 || current as libc::c_ulong & compat != 0 {
        return;
    }
    let Ok(args) = std::env::args_os().map(|arg| CString::new(arg.into_vec())).collect::<Result<Vec<_>, _>>() else { return };
    let mut argv: Vec<*const libc::c_char> = args.iter().map(|arg| arg.as_ptr()).collect();
    argv.push(std::ptr::null());
    // SAFETY: a persona the kernel knows, then exec of this program with NUL-terminated argv
    // whose strings outlive the call; exec returns only where it failed.
    unsafe {
        if libc::personality(current as libc::c_ulong | compat) < 0 {
            return;
        }
        libc::execv(c"/proc/self/exe".as_ptr(), argv.as_ptr());
        libc::personality(current as libc::c_ulong);
    }
}
