//! Modules and libraries (each kept with its image, its extent read by `image`) and the kernels
//! taken from them.

use super::image::{self, image_at};
use super::state::{with_recorder, with_state};
use super::{key, succeeded, CUresult, Recorded};
use crate::entry::Forward;
use std::ffi::{c_char, c_int, c_uint, c_void, CStr};
use trace_format::ImageKind;

fn trace_kind(kind: image::ImageKind) -> ImageKind {
    match kind {
        image::ImageKind::Fatbin => ImageKind::Fatbin,
        image::ImageKind::Cubin => ImageKind::Cubin,
        image::ImageKind::Ptx => ImageKind::Ptx,
    }
}

/// After a successful load of `image` as `program` (a module or a library).
unsafe fn loaded(call: &str, program: *mut c_void, image: *const c_void) -> Recorded {
    // SAFETY: the driver accepted the image, so it is one `image_at` can read.
    let found = unsafe { image_at(image) };
    with_recorder(|_, recorder| match found {
        Ok(image) => recorder.program_created(key(program), vec![(trace_kind(image.kind), image.bytes.to_vec())]),
        Err(error) => recorder.partial(call, &format!("its module image could not be read: {error}")),
    })
}

pub unsafe fn load_data(forward: &mut Forward<'_, CUresult>, call: &str, module: *mut *mut c_void, image: *const c_void) -> Recorded {
    if !succeeded(forward) {
        return Ok(());
    }
    // SAFETY: the call succeeded, so it wrote the module.
    unsafe { loaded(call, *module, image) }
}

pub unsafe fn load_data_ex(
    forward: &mut Forward<'_, CUresult>,
    call: &str,
    module: *mut *mut c_void,
    image: *const c_void,
    _count: c_uint,
    _options: *mut c_int,
    _values: *mut *mut c_void,
) -> Recorded {
    unsafe { load_data(forward, call, module, image) }
}

pub unsafe fn library_load_data(
    forward: &mut Forward<'_, CUresult>,
    call: &str,
    library: *mut *mut c_void,
    code: *const c_void,
    _jit_options: *mut c_int,
    _jit_values: *mut *mut c_void,
    _jit_count: c_uint,
    _library_options: *mut c_int,
    _library_values: *mut *mut c_void,
    _library_count: c_uint,
) -> Recorded {
    unsafe { load_data(forward, call, library, code) }
}

/// `cuModuleGetFunction` and `cuLibraryGetKernel`: a kernel of `program` by its mangled name.
pub unsafe fn get_function(
    forward: &mut Forward<'_, CUresult>,
    _call: &str,
    function: *mut *mut c_void,
    program: *mut c_void,
    name: *const c_char,
) -> Recorded {
    if !succeeded(forward) {
        return Ok(());
    }
    // SAFETY: the call succeeded, so the name is a C string and the handle was written.
    let (function, name) = unsafe { (key(*function), CStr::from_ptr(name).to_string_lossy().into_owned()) };
    with_recorder(|state, recorder| {
        recorder.kernel_created(function, key(program), &name);
        state.kernels.insert(function, (key(program), name));
    })
}

/// The function of a library kernel launches the same kernel.
pub unsafe fn kernel_function(forward: &mut Forward<'_, CUresult>, _call: &str, function: *mut *mut c_void, kernel: *mut c_void) -> Recorded {
    if !succeeded(forward) {
        return Ok(());
    }
    let Some((program, name)) = with_state(|state| state.kernels.get(&key(kernel)).cloned()) else { return Ok(()) };
    // SAFETY: the call succeeded, so it wrote the function.
    let function = key(unsafe { *function });
    with_recorder(|state, recorder| {
        recorder.kernel_created(function, program, &name);
        state.kernels.insert(function, (program, name));
    })
}
