//! Modules with the bytes they were created from (SPIR-V or the driver's native binary) and
//! their build flags, and kernels by name.

use super::hooks::args;
use super::state::{with_recorder, with_state};
use super::{key, succeeded, unsupported, Recorded};
use crate::entry::Forward;
use std::ffi::CStr;
use trace_format::ImageKind;
use ze_sys::*;

pub unsafe fn create_module(
    forward: &mut Forward<'_, ze_result_t>,
    (_context, _device, desc, module, _log): args::zeModuleCreate,
) -> Recorded {
    if !succeeded(forward) || desc.is_null() || module.is_null() {
        return Ok(());
    }
    // SAFETY: the call succeeded with this description and wrote the module.
    let (desc, module) = unsafe { (&*desc, *module) };
    let kind = match desc.format {
        ZE_MODULE_FORMAT_IL_SPIRV => ImageKind::SpirV,
        _ => ImageKind::DeviceBinary,
    };
    // SAFETY: the description holds `inputSize` bytes of the module and a C string of options.
    let bytes = unsafe { std::slice::from_raw_parts(desc.pInputModule, desc.inputSize) }.to_vec();
    let options = match desc.pBuildFlags.is_null() {
        true => String::new(),
        false => unsafe { CStr::from_ptr(desc.pBuildFlags) }
            .to_string_lossy()
            .into_owned(),
    };
    // SAFETY: a non-null constants pointer points to the program's constants.
    let constants = !desc.pConstants.is_null() && unsafe { (*desc.pConstants).numConstants } > 0;
    with_recorder(|_, recorder| {
        recorder.program_created(key(module), vec![(kind, bytes)]);
        recorder.program_built(key(module), &options);
        if constants {
            recorder.partial("zeModuleCreate", "specialization constants are not recorded; the replay builds the module without them");
        }
    })
}

pub unsafe fn create_kernel(
    forward: &mut Forward<'_, ze_result_t>,
    (module, desc, kernel): args::zeKernelCreate,
) -> Recorded {
    if !succeeded(forward)
        || desc.is_null()
        || kernel.is_null()
        || unsafe { (*desc).pKernelName.is_null() }
    {
        return Ok(());
    }
    // SAFETY: the call succeeded with this name and wrote the kernel.
    let (name, kernel) = unsafe {
        (
            CStr::from_ptr((*desc).pKernelName)
                .to_string_lossy()
                .into_owned(),
            *kernel,
        )
    };
    with_state(|state| state.kernels.remove(&key(kernel)));
    with_recorder(|_, recorder| {
        recorder.kernel_created(key(kernel), key(module), &name, Vec::new())
    })
}

pub unsafe fn dynamic_link(
    forward: &mut Forward<'_, ze_result_t>,
    _args: args::zeModuleDynamicLink,
) -> Recorded {
    unsupported(
        forward,
        "zeModuleDynamicLink",
        "linked modules are recorded as built alone",
    )
}
