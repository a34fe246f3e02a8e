//! What every part of the driver uses: results, handles, `pNext` chains, the count-then-fill idiom
//! of Level Zero queries, and fixed-size C strings.

use std::ffi::{c_char, c_void};
use ze_sys::*;

/// A driver operation's outcome; the error is the Level Zero result to return.
pub type ZeResult<T> = Result<T, ze_result_t>;

/// The result code of an operation.
pub fn status(outcome: ZeResult<()>) -> ze_result_t {
    match outcome {
        Ok(()) => ZE_RESULT_SUCCESS,
        Err(result) => result,
    }
}

/// Level Zero objects the driver hands out as handles: boxed, never moved until destroyed.
pub trait Handle: Sized + 'static {
    type Raw;

    fn into_handle(self) -> *mut Self::Raw {
        Box::into_raw(Box::new(self)).cast()
    }

    /// # Safety
    /// `handle` is null or came from `into_handle` of this type and was not destroyed.
    unsafe fn from_handle<'a>(handle: *mut Self::Raw) -> ZeResult<&'a Self> {
        // SAFETY: as documented.
        unsafe { handle.cast::<Self>().as_ref() }.ok_or(ZE_RESULT_ERROR_INVALID_NULL_HANDLE)
    }

    /// # Safety
    /// As `from_handle`; the handle is not used again.
    unsafe fn destroy(handle: *mut Self::Raw) -> ZeResult<()> {
        if handle.is_null() {
            return Err(ZE_RESULT_ERROR_INVALID_NULL_HANDLE);
        }
        // SAFETY: as documented.
        drop(unsafe { Box::from_raw(handle.cast::<Self>()) });
        Ok(())
    }
}

/// Writes `value` through an output pointer.
///
/// # Safety
/// `out` is null or valid for a write.
pub unsafe fn put<T>(out: *mut T, value: T) -> ZeResult<()> {
    if out.is_null() {
        return Err(ZE_RESULT_ERROR_INVALID_NULL_POINTER);
    }
    // SAFETY: as documented.
    unsafe { out.write(value) };
    Ok(())
}

/// The count-then-fill idiom: with `*count == 0` (or no array) the number of items is returned in
/// `*count`; otherwise up to `*count` items are written and `*count` says how many.
///
/// # Safety
/// `count` is valid; `items_out` is null or holds `*count` items.
pub unsafe fn fill_list<T>(count: *mut u32, items_out: *mut T, mut items: impl ExactSizeIterator<Item = T>) -> ZeResult<()> {
    if count.is_null() {
        return Err(ZE_RESULT_ERROR_INVALID_NULL_POINTER);
    }
    // SAFETY: as documented.
    unsafe {
        let available = items.len() as u32;
        if *count == 0 || items_out.is_null() {
            *count = available;
            return Ok(());
        }
        let written = (*count).min(available);
        for index in 0..written as usize {
            if let Some(item) = items.next() {
                items_out.add(index).write(item);
            }
        }
        *count = written;
    }
    Ok(())
}

/// Copies `text` into a fixed C character array, cut to fit with its NUL.
pub fn copy_name<const N: usize>(out: &mut [c_char; N], text: &str) {
    let bytes = &text.as_bytes()[..text.len().min(N - 1)];
    for (slot, byte) in out.iter_mut().zip(bytes.iter().chain([&0])) {
        *slot = *byte as c_char;
    }
}

/// Returns a text as Level Zero functions returning strings do: its size with the NUL in `size`,
/// and the text into `out` when given.
///
/// # Safety
/// `size` is valid; `out` is null or holds `*size` bytes.
pub unsafe fn give_string(text: &std::ffi::CStr, size: *mut usize, out: *mut c_char) -> ZeResult<()> {
    if size.is_null() {
        return Err(ZE_RESULT_ERROR_INVALID_NULL_POINTER);
    }
    let bytes = text.to_bytes_with_nul();
    // SAFETY: as documented.
    unsafe {
        if !out.is_null() && *size > 0 {
            let written = bytes.len().min(*size);
            std::ptr::copy_nonoverlapping(bytes.as_ptr().cast(), out, written);
            *out.add(written - 1) = 0;
        }
        *size = bytes.len();
    }
    Ok(())
}

/// The structures of a `pNext` chain starting at `next`, with their types.
///
/// # Safety
/// `next` is null or a chain of structures that each start with `stype` and `pNext`.
pub unsafe fn chain(mut next: *const c_void) -> impl Iterator<Item = (ze_structure_type_t, *mut c_void)> {
    std::iter::from_fn(move || {
        // SAFETY: as documented.
        let base = unsafe { next.cast::<ze_base_desc_t>().as_ref() }?;
        let item = (base.stype, next.cast_mut());
        next = base.pNext;
        Some(item)
    })
}
