//! Access to Level Zero: the loader (`libze_loader.so.1`, opened at run time so that the replayer
//! starts on machines without it), `zeInit`, the driver and device to replay on, and what the
//! driver offers (the mutable command list extension, the largest fill pattern).

use crate::backend::{BackendError, BackendResult};
use crate::devices::{self, Listed};
use std::ffi::{c_char, c_void, CStr};
use std::ptr;
use std::sync::OnceLock;
use ze_sys::functions::{ExtensionFunctions, Functions};
use ze_sys::*;

const LOADER: &CStr = c"libze_loader.so.1";

/// Turns a Level Zero result into a backend error naming the call.
pub fn check(result: ze_result_t, call: &str) -> BackendResult<()> {
    match result {
        ZE_RESULT_SUCCESS => Ok(()),
        error => Err(BackendError::Api { call: call.to_string(), detail: result_name(error) }),
    }
}

/// The loader's functions, once `zeInit` succeeded.
pub fn loader() -> BackendResult<&'static Functions> {
    static LOADED: OnceLock<Result<Functions, String>> = OnceLock::new();
    let loaded = LOADED.get_or_init(|| {
        // SAFETY: dlopen of a constant name; the library stays loaded for the process.
        let library = unsafe { libc::dlopen(LOADER.as_ptr(), libc::RTLD_NOW | libc::RTLD_LOCAL) };
        if library.is_null() {
            return Err("no Level Zero loader (libze_loader.so.1) on this machine: replay Level Zero traces where Level Zero is installed".into());
        }
        // SAFETY: dlsym on the loader with C strings.
        let functions = Functions::load(|name| unsafe { libc::dlsym(library, name.as_ptr()) });
        // SAFETY: zeInit takes flags only.
        match unsafe { functions.zeInit(0) } {
            ZE_RESULT_SUCCESS => Ok(functions),
            error => Err(format!(
                "no Level Zero driver on this machine (zeInit: {}): replay Level Zero traces where a Level Zero driver and device are",
                result_name(error)
            )),
        }
    });
    loaded.as_ref().map_err(|message| BackendError::Unavailable(message.clone()))
}

/// The count-then-fill idiom of Level Zero queries, for handles.
fn handles<T>(call: &str, mut get: impl FnMut(*mut u32, *mut T) -> ze_result_t) -> BackendResult<Vec<T>> {
    let mut count = 0;
    check(get(&mut count, ptr::null_mut()), call)?;
    let mut found = Vec::with_capacity(count as usize);
    check(get(&mut count, found.as_mut_ptr()), call)?;
    // SAFETY: the driver wrote `count` handles.
    unsafe { found.set_len(count as usize) };
    Ok(found)
}

/// Every device of every driver the loader found, in the loader's order.
pub fn all_devices(api: &Functions) -> BackendResult<Vec<(ze_driver_handle_t, ze_device_handle_t, Listed)>> {
    let mut devices = Vec::new();
    // SAFETY (both): the loader's enumeration functions with valid out-pointers.
    for (number, driver) in handles("zeDriverGet", |count, out| unsafe { api.zeDriverGet(count, out) })?.into_iter().enumerate() {
        for device in handles("zeDeviceGet", |count, out| unsafe { api.zeDeviceGet(driver, count, out) })? {
            let listed = Listed { platform: format!("Level Zero driver {number}"), platform_vendor: String::new(), name: device_name(api, device)? };
            devices.push((driver, device, listed));
        }
    }
    Ok(devices)
}

/// The chosen device, its driver, and what the driver offers.
pub struct Device {
    pub driver: ze_driver_handle_t,
    pub device: ze_device_handle_t,
    pub label: String,
    /// Why this is not the device the trace was recorded on, when it is not.
    pub note: Option<String>,
    /// The mutable command list extension's functions and what it may change, where offered.
    pub mutable: Option<(ExtensionFunctions, ze_mutable_command_exp_flags_t)>,
    /// The largest pattern `zeCommandListAppendMemoryFill` takes.
    pub max_fill_pattern: usize,
}

fn device_name(api: &Functions, device: ze_device_handle_t) -> BackendResult<String> {
    let mut properties = ze_device_properties_t::new();
    // SAFETY: a device handle and a properties structure.
    check(unsafe { api.zeDeviceGetProperties(device, &mut properties) }, "zeDeviceGetProperties")?;
    // SAFETY: the driver wrote a NUL-terminated name into the array.
    Ok(unsafe { CStr::from_ptr(properties.name.as_ptr()) }.to_string_lossy().into_owned())
}

impl Device {
    /// The device `choice` names (an index or a fragment of its name; see `devices::choose`),
    /// else the one the trace was recorded on when present, else the first.
    pub fn open(choice: Option<&str>, recorded: Option<&trace_format::Device>) -> BackendResult<Device> {
        let api = loader()?;
        let devices = all_devices(api)?;
        let listed: Vec<Listed> = devices.iter().map(|(_, _, listed)| listed.clone()).collect();
        let chosen = devices::choose(trace_format::Api::LevelZero, &listed, choice, recorded)?;
        let (driver, device, ref listed) = devices[chosen.index];
        Ok(Device {
            driver,
            device,
            label: format!("{} (Level Zero)", listed.name),
            note: chosen.note,
            mutable: mutable_commands(api, driver, device)?,
            max_fill_pattern: max_fill_pattern(api, device)?,
        })
    }
}

/// The mutable command list extension, when the driver lists it, gives its functions, and the
/// device says what its commands may change.
fn mutable_commands(api: &Functions, driver: ze_driver_handle_t, device: ze_device_handle_t) -> BackendResult<Option<(ExtensionFunctions, ze_mutable_command_exp_flags_t)>> {
    // SAFETY: the loader's query with valid out-pointers.
    let extensions = handles("zeDriverGetExtensionProperties", |count, out| unsafe { api.zeDriverGetExtensionProperties(driver, count, out) })?;
    // SAFETY: the driver wrote NUL-terminated names.
    let listed = extensions.iter().any(|extension| unsafe { CStr::from_ptr(extension.name.as_ptr()) } == ZE_MUTABLE_COMMAND_LIST_EXP_NAME);
    if !listed {
        return Ok(None);
    }
    let functions = ExtensionFunctions::load(|name| {
        let mut address: *mut c_void = ptr::null_mut();
        // SAFETY: a function name and an out-pointer; a failure leaves the address null.
        unsafe { api.zeDriverGetExtensionFunctionAddress(driver, name.as_ptr() as *const c_char, &mut address) };
        address
    });
    if !functions.has("ZE_experimental_mutable_command_list") {
        return Ok(None);
    }
    let mut mutable = ze_mutable_command_list_exp_properties_t::new();
    let mut properties = ze_device_properties_t::new();
    properties.pNext = (&raw mut mutable).cast();
    // SAFETY: a properties structure with one chained structure, both alive for the call.
    check(unsafe { api.zeDeviceGetProperties(device, &mut properties) }, "zeDeviceGetProperties")?;
    Ok(Some((functions, mutable.mutableCommandFlags)))
}

fn max_fill_pattern(api: &Functions, device: ze_device_handle_t) -> BackendResult<usize> {
    let mut count = 1;
    let mut group = ze_command_queue_group_properties_t::new();
    // SAFETY: room for one group's properties.
    check(unsafe { api.zeDeviceGetCommandQueueGroupProperties(device, &mut count, &mut group) }, "zeDeviceGetCommandQueueGroupProperties")?;
    Ok(group.maxMemoryFillPatternSize)
}
