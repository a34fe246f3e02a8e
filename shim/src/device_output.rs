//! What kernels print. CUDA's device `printf` reaches the program as the driver's own stdio
//! calls on the program's `stdout` (`vfprintf` piece by piece, `fwrite`, then `fflush`), made
//! inside the driver call that flushes the device's printf buffer (a synchronization, a
//! launch, a blocking copy). The shim exports `vfprintf` and `fwrite`: while this thread records
//! a driver call (`driver_call`: the real call and the shim's own), what goes to `stdout` is also
//! kept, and the synchronization that closes a window takes it (`take`) for that window's
//! segment. Otherwise they only forward: one thread-local read.

use crate::interpose::Hook;
use std::cell::Cell;
use std::ffi::{c_char, c_int, c_void};
use std::sync::{Mutex, PoisonError};

thread_local! {
    /// Set while this thread runs a real driver call for a recording hook.
    static IN_DRIVER: Cell<bool> = const { Cell::new(false) };
}

/// What the device printed since the last `take`.
static PRINTED: Mutex<Printed> = Mutex::new(Printed { text: Vec::new(), overflowed: false });

/// More than this between two windows is not kept (nor compared): a trace keeps results, not logs.
const MOST_KEPT: usize = 16 << 20;

struct Printed {
    text: Vec<u8>,
    overflowed: bool,
}

/// Runs `record`, the recording of a driver call (which makes the real call), keeping what the
/// driver prints meanwhile, in the real call or in the shim's own.
pub fn driver_call<R>(record: impl FnOnce() -> R) -> R {
    let was = IN_DRIVER.replace(true);
    let result = record();
    IN_DRIVER.set(was);
    result
}

/// Whether the device printed anything since the last `take`.
pub fn printed() -> bool {
    let printed = PRINTED.lock().unwrap_or_else(PoisonError::into_inner);
    printed.overflowed || !printed.text.is_empty()
}

/// What the device printed since the last call, unless it was more than is kept.
pub fn take() -> Option<Vec<u8>> {
    let mut printed = PRINTED.lock().unwrap_or_else(PoisonError::into_inner);
    let text = std::mem::take(&mut printed.text);
    let kept = !std::mem::take(&mut printed.overflowed) && !text.is_empty();
    kept.then_some(text)
}

fn keep(bytes: &[u8]) {
    let mut printed = PRINTED.lock().unwrap_or_else(PoisonError::into_inner);
    if printed.overflowed || printed.text.len() + bytes.len() > MOST_KEPT {
        printed.overflowed = true;
        printed.text = Vec::new();
        return;
    }
    printed.text.extend_from_slice(bytes);
}

extern "C" {
    /// glibc's standard output stream.
    static stdout: *mut libc::FILE;
}

/// Whether a write to `stream` now is the device's output.
fn device_writes(stream: *mut libc::FILE) -> bool {
    // SAFETY: glibc's `stdout` is a valid static for the whole process.
    IN_DRIVER.get() && stream == unsafe { stdout }
}

/// An `x86_64` `va_list` element (`__va_list_tag`): a `va_list` argument is a pointer to one, and
/// copying it is `va_copy`.
#[cfg(target_arch = "x86_64")]
#[repr(C)]
#[derive(Clone, Copy)]
pub struct VaListTag {
    gp_offset: u32,
    fp_offset: u32,
    overflow_arg_area: *mut c_void,
    reg_save_area: *mut c_void,
}

#[cfg(target_arch = "x86_64")]
static VFPRINTF: Hook = Hook::new(c"vfprintf", vfprintf as *const c_void);
static FWRITE: Hook = Hook::new(c"fwrite", fwrite as *const c_void);

#[cfg(target_arch = "x86_64")]
extern "C" {
    fn vsnprintf(buffer: *mut c_char, size: usize, format: *const c_char, args: *mut VaListTag) -> c_int;
}

/// # Safety
/// As C's `vfprintf`.
#[cfg(target_arch = "x86_64")]
#[no_mangle]
pub unsafe extern "C" fn vfprintf(stream: *mut libc::FILE, format: *const c_char, args: *mut VaListTag) -> c_int {
    if device_writes(stream) {
        // SAFETY: `args` is the caller's live `va_list`; formatting a copy leaves it unread.
        unsafe { keep_formatted(format, *args) };
    }
    let Some(real) = VFPRINTF.real() else { return -1 };
    // SAFETY: the next definition of `vfprintf`, with the caller's arguments.
    unsafe { std::mem::transmute::<usize, unsafe extern "C" fn(*mut libc::FILE, *const c_char, *mut VaListTag) -> c_int>(real)(stream, format, args) }
}

#[cfg(target_arch = "x86_64")]
/// Keeps `format` formatted with `args`, a copy of the caller's `va_list`.
unsafe fn keep_formatted(format: *const c_char, mut args: VaListTag) {
    let mut copy = args;
    // SAFETY: a null buffer of size 0 only measures; `copy` and `args` are separate copies.
    let needed = unsafe { vsnprintf(std::ptr::null_mut(), 0, format, &mut copy) };
    let Ok(needed) = usize::try_from(needed) else { return };
    let mut text = vec![0u8; needed + 1];
    // SAFETY: `text` holds `needed` bytes and the terminating NUL.
    unsafe { vsnprintf(text.as_mut_ptr().cast(), text.len(), format, &mut args) };
    keep(&text[..needed]);
}

/// # Safety
/// As C's `fwrite`.
#[no_mangle]
pub unsafe extern "C" fn fwrite(data: *const c_void, size: usize, count: usize, stream: *mut libc::FILE) -> usize {
    if device_writes(stream) && !data.is_null() {
        // SAFETY: `fwrite` reads `size * count` bytes from `data`.
        keep(unsafe { std::slice::from_raw_parts(data.cast::<u8>(), size.saturating_mul(count)) });
    }
    let Some(real) = FWRITE.real() else { return 0 };
    // SAFETY: the next definition of `fwrite`, with the caller's arguments.
    unsafe { std::mem::transmute::<usize, unsafe extern "C" fn(*const c_void, usize, usize, *mut libc::FILE) -> usize>(real)(data, size, count, stream) }
}
