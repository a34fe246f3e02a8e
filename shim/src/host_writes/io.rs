//! Reads the kernel makes into user memory on the program's behalf: on a protected page they
//! would fail (`EFAULT`) instead of faulting, so their buffers are made writable first and count
//! as written. Each hook is one load while nothing is watched.

use crate::interpose::Hook;
use std::ffi::{c_int, c_void};

static READ: Hook = Hook::new(c"read", read as *const c_void);
static PREAD64: Hook = Hook::new(c"pread64", pread64 as *const c_void);
static FREAD: Hook = Hook::new(c"fread", fread as *const c_void);

/// Finds the real functions now (see `super::RESOLVE_AT_LOAD`).
pub fn resolve() {
    for hook in [&READ, &PREAD64, &FREAD] {
        hook.real();
    }
}

/// # Safety
/// As POSIX `read`.
#[no_mangle]
pub unsafe extern "C" fn read(fd: c_int, buffer: *mut c_void, count: usize) -> isize {
    super::unguard(buffer as u64, count as u64);
    let Some(real) = READ.real() else { return -1 };
    // SAFETY: the next definition of `read`, with the caller's arguments.
    unsafe { std::mem::transmute::<usize, unsafe extern "C" fn(c_int, *mut c_void, usize) -> isize>(real)(fd, buffer, count) }
}

/// # Safety
/// As POSIX `pread` (`pread64`, which `pread` is with 64-bit offsets).
#[no_mangle]
pub unsafe extern "C" fn pread64(fd: c_int, buffer: *mut c_void, count: usize, offset: i64) -> isize {
    super::unguard(buffer as u64, count as u64);
    let Some(real) = PREAD64.real() else { return -1 };
    // SAFETY: the next definition of `pread64`, with the caller's arguments.
    unsafe { std::mem::transmute::<usize, unsafe extern "C" fn(c_int, *mut c_void, usize, i64) -> isize>(real)(fd, buffer, count, offset) }
}

/// # Safety
/// As POSIX `pread`, the same function as `pread64` where offsets have 64 bits.
#[cfg(target_pointer_width = "64")]
#[no_mangle]
pub unsafe extern "C" fn pread(fd: c_int, buffer: *mut c_void, count: usize, offset: i64) -> isize {
    // SAFETY: the caller's arguments, as `pread64` takes them.
    unsafe { pread64(fd, buffer, count, offset) }
}

/// # Safety
/// As C's `fread`.
#[no_mangle]
pub unsafe extern "C" fn fread(buffer: *mut c_void, size: usize, count: usize, stream: *mut libc::FILE) -> usize {
    super::unguard(buffer as u64, size.saturating_mul(count) as u64);
    let Some(real) = FREAD.real() else { return 0 };
    // SAFETY: the next definition of `fread`, with the caller's arguments.
    unsafe { std::mem::transmute::<usize, unsafe extern "C" fn(*mut c_void, usize, usize, *mut libc::FILE) -> usize>(real)(buffer, size, count, stream) }
}
