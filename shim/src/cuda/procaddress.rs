//! `cuGetProcAddress`: how the CUDA runtime gets every driver function. For a function the shim
//! hooks, the program gets the hook whose real function is exactly the pointer the driver
//! answered: the flags and version select the variant (`_v2`, the per-thread-stream `_ptsz` and
//! `_ptds`), and the hook named after that variant forwards to it.

use super::hooks::{real_address, HOOKS};
use super::{succeeded, CUresult};
use crate::entry::Forward;
use crate::interpose::Hook;
use std::ffi::{c_char, c_int, c_void, CStr};

/// Whether `hook` is named `symbol` or one of its variants (`symbol_...`).
pub fn variant_of(hook: &[u8], symbol: &[u8]) -> bool {
    hook.strip_prefix(symbol).is_some_and(|rest| rest.is_empty() || rest.starts_with(b"_"))
}

/// Names whose current version is a function of another name (cuda.h's `#define`s).
const RENAMED: &[(&[u8], &[u8])] = &[(b"cuGraphInstantiate", b"cuGraphInstantiateWithFlags")];

/// The hook to hand out for `symbol` answered by the driver with `real`, if the shim hooks it:
/// one of the symbol's variants, or of the name its current version has.
pub fn hook_for(symbol: &[u8], real: usize, real_of: impl Fn(&Hook) -> Option<usize>) -> Option<&'static Hook> {
    let renamed = RENAMED.iter().find(|(old, _)| *old == symbol).map(|(_, new)| *new);
    let named = |hook: &&'static Hook| {
        let name = hook.name.to_bytes();
        variant_of(name, symbol) || renamed.is_some_and(|renamed| variant_of(name, renamed))
    };
    HOOKS.iter().copied().filter(named).find(|hook| real_of(hook) == Some(real))
}

unsafe fn substitute(forward: &mut Forward<'_, CUresult>, symbol: *const c_char, pfn: *mut *mut c_void) {
    if !succeeded(forward) || symbol.is_null() || pfn.is_null() {
        return;
    }
    // SAFETY: the call succeeded, so the symbol is a C string and the pointer was written.
    let (symbol, found) = unsafe { (CStr::from_ptr(symbol), *pfn) };
    if found.is_null() {
        return;
    }
    if let Some(hook) = hook_for(symbol.to_bytes(), found as usize, real_address) {
        // SAFETY: the program's out-parameter.
        unsafe { *pfn = hook.address() };
    }
}

pub unsafe fn get_proc_address(
    forward: &mut Forward<'_, CUresult>,
    _call: &str,
    symbol: *const c_char,
    pfn: *mut *mut c_void,
    _version: c_int,
    _flags: u64,
) -> super::Recorded {
    unsafe { substitute(forward, symbol, pfn) };
    Ok(())
}

pub unsafe fn get_proc_address_v2(
    forward: &mut Forward<'_, CUresult>,
    _call: &str,
    symbol: *const c_char,
    pfn: *mut *mut c_void,
    _version: c_int,
    _flags: u64,
    _status: *mut c_int,
) -> super::Recorded {
    unsafe { substitute(forward, symbol, pfn) };
    Ok(())
}
