//! The calling thread's current context and device, and the device as the trace describes it
//! (see the brief's conventions for CUDA).

use super::hooks::{driver, CUcontext, CUdevice};
use super::state::State;
use super::{key, CUDA_SUCCESS};
use crate::recorder::{Key, Recorder};
use std::collections::BTreeMap;
use std::ffi::c_int;
use trace_format::Device;

const CU_DEVICE_ATTRIBUTE_COMPUTE_CAPABILITY_MAJOR: c_int = 75;
const CU_DEVICE_ATTRIBUTE_COMPUTE_CAPABILITY_MINOR: c_int = 76;

/// The current context (the group streams synchronize within) and device, described to the
/// recorder on first sight; `None` outside any context.
pub fn current(state: &mut State, recorder: &mut Recorder) -> Option<(Key, Key)> {
    let mut context: CUcontext = std::ptr::null_mut();
    let mut device: CUdevice = 0;
    // SAFETY: out-parameters of the right types.
    let found = unsafe { driver::cuCtxGetCurrent(&mut context) == CUDA_SUCCESS && driver::cuCtxGetDevice(&mut device) == CUDA_SUCCESS };
    if !found || context.is_null() {
        return None;
    }
    let device_key = device as Key;
    if state.devices.insert(device_key) {
        recorder.device_seen(device_key, describe(device));
    }
    Some((key(context), device_key))
}

fn describe(device: CUdevice) -> Device {
    let mut name = [0u8; 256];
    // SAFETY: the buffer holds `len` bytes.
    unsafe { driver::cuDeviceGetName(name.as_mut_ptr().cast(), name.len() as c_int, device) };
    let name = name.split(|&byte| byte == 0).next().unwrap_or_default();
    let attribute = |attribute| {
        let mut value: c_int = 0;
        // SAFETY: an out-parameter of the right type.
        unsafe { driver::cuDeviceGetAttribute(&mut value, attribute, device) };
        value
    };
    let mut version: c_int = 0;
    // SAFETY: an out-parameter of the right type.
    unsafe { driver::cuDriverGetVersion(&mut version) };
    let capability = format!(
        "{}.{}",
        attribute(CU_DEVICE_ATTRIBUTE_COMPUTE_CAPABILITY_MAJOR),
        attribute(CU_DEVICE_ATTRIBUTE_COMPUTE_CAPABILITY_MINOR)
    );
    Device {
        name: String::from_utf8_lossy(name).into_owned(),
        vendor: "NVIDIA".to_string(),
        driver_version: version.to_string(),
        properties: BTreeMap::from([
            ("compute_capability".to_string(), capability),
            ("cuda_driver_version".to_string(), version.to_string()),
        ]),
    }
}
