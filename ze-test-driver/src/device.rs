//! The driver, its one device and contexts: what a program asks before it allocates anything.

use crate::common::*;
use crate::opencl::{cl, runtime};
use opencl_sys::*;
use std::ffi::{c_char, c_void, CStr};
use std::sync::OnceLock;
use ze_sys::*;

/// Set to `1`, hides the mutable command list extension, so that a replayer's rebuild path runs.
pub const NO_MUTABLE_VARIABLE: &str = "ZE_REPRISE_TEST_NO_MUTABLE";

/// What the one driver and the one device handle point to.
static DRIVER: u8 = 0;
static DEVICE: u8 = 0;

pub fn driver_handle() -> ze_driver_handle_t {
    (&raw const DRIVER).cast_mut().cast()
}

pub fn device_handle() -> ze_device_handle_t {
    (&raw const DEVICE).cast_mut().cast()
}

pub fn check_driver(driver: ze_driver_handle_t) -> ZeResult<()> {
    match driver {
        _ if driver.is_null() => Err(ZE_RESULT_ERROR_INVALID_NULL_HANDLE),
        _ if driver == driver_handle() => Ok(()),
        _ => Err(ZE_RESULT_ERROR_INVALID_ARGUMENT),
    }
}

pub fn check_device(device: ze_device_handle_t) -> ZeResult<()> {
    match device {
        _ if device.is_null() => Err(ZE_RESULT_ERROR_INVALID_NULL_HANDLE),
        _ if device == device_handle() => Ok(()),
        _ => Err(ZE_RESULT_ERROR_INVALID_ARGUMENT),
    }
}

/// Whether the mutable command list extension is offered (see `NO_MUTABLE_VARIABLE`).
pub fn mutable_offered() -> bool {
    static OFFERED: OnceLock<bool> = OnceLock::new();
    *OFFERED.get_or_init(|| std::env::var_os(NO_MUTABLE_VARIABLE).is_none_or(|value| value != "1"))
}

/// What the mutable command list extension lets a program change.
pub const MUTABLE_COMMAND_FLAGS: ze_mutable_command_exp_flags_t = ZE_MUTABLE_COMMAND_EXP_FLAG_KERNEL_ARGUMENTS
    | ZE_MUTABLE_COMMAND_EXP_FLAG_GROUP_COUNT
    | ZE_MUTABLE_COMMAND_EXP_FLAG_GROUP_SIZE
    | ZE_MUTABLE_COMMAND_EXP_FLAG_GLOBAL_OFFSET
    | ZE_MUTABLE_COMMAND_EXP_FLAG_SIGNAL_EVENT
    | ZE_MUTABLE_COMMAND_EXP_FLAG_WAIT_EVENTS;

const GLOBAL_OFFSET_EXTENSION: &str = "ZE_experimental_global_offset";

/// The extensions offered, with their versions.
fn extensions() -> Vec<(&'static str, u32)> {
    let mut offered = vec![(GLOBAL_OFFSET_EXTENSION, ZE_GLOBAL_OFFSET_EXP_VERSION_1_0)];
    if mutable_offered() {
        offered.push((ze_sys::driver::EXTENSIONS[0], ZE_MUTABLE_COMMAND_LIST_EXP_VERSION_1_0));
    }
    offered
}

/// Programs ask for GPUs (`ZE_INIT_FLAG_GPU_ONLY`, `ZE_DEVICE_TYPE_GPU`): the double stands in for
/// one, so it accepts that and refuses only a request for VPUs alone.
pub fn init(flags: ze_init_flags_t) -> ZeResult<()> {
    if flags & ZE_INIT_FLAG_VPU_ONLY != 0 && flags & ZE_INIT_FLAG_GPU_ONLY == 0 {
        return Err(ZE_RESULT_ERROR_UNINITIALIZED);
    }
    runtime().map(|_| ())
}

pub unsafe fn get_drivers(count: *mut u32, drivers: *mut ze_driver_handle_t) -> ZeResult<()> {
    runtime()?;
    unsafe { fill_list(count, drivers, [driver_handle()].into_iter()) }
}

pub unsafe fn api_version(driver: ze_driver_handle_t, version: *mut ze_api_version_t) -> ZeResult<()> {
    check_driver(driver)?;
    unsafe { put(version, ZE_API_VERSION_1_4) }
}

pub unsafe fn driver_properties(driver: ze_driver_handle_t, properties: *mut ze_driver_properties_t) -> ZeResult<()> {
    check_driver(driver)?;
    let properties = unsafe { properties.as_mut() }.ok_or(ZE_RESULT_ERROR_INVALID_NULL_POINTER)?;
    properties.uuid.id = *b"reprise-ze-test\0";
    properties.driverVersion = 1;
    Ok(())
}

pub unsafe fn ipc_properties(driver: ze_driver_handle_t, properties: *mut ze_driver_ipc_properties_t) -> ZeResult<()> {
    check_driver(driver)?;
    unsafe { properties.as_mut() }.ok_or(ZE_RESULT_ERROR_INVALID_NULL_POINTER)?.flags = 0;
    Ok(())
}

pub unsafe fn extension_properties(driver: ze_driver_handle_t, count: *mut u32, properties: *mut ze_driver_extension_properties_t) -> ZeResult<()> {
    check_driver(driver)?;
    let listed = extensions().into_iter().map(|(name, version)| {
        let mut property = ze_driver_extension_properties_t::new();
        copy_name(&mut property.name, name);
        property.version = version;
        property
    });
    unsafe { fill_list(count, properties, listed.collect::<Vec<_>>().into_iter()) }
}

pub unsafe fn extension_function(driver: ze_driver_handle_t, name: *const c_char, address: *mut *mut c_void) -> ZeResult<()> {
    check_driver(driver)?;
    if name.is_null() {
        return Err(ZE_RESULT_ERROR_INVALID_NULL_POINTER);
    }
    let name = unsafe { CStr::from_ptr(name) };
    match ze_sys::driver::extension_function::<crate::TestDriver>(name) {
        Some((extension, function)) if extensions().iter().any(|(offered, _)| *offered == extension) => unsafe { put(address, function) },
        _ => Err(ZE_RESULT_ERROR_INVALID_ARGUMENT),
    }
}

pub unsafe fn get_devices(driver: ze_driver_handle_t, count: *mut u32, devices: *mut ze_device_handle_t) -> ZeResult<()> {
    check_driver(driver)?;
    unsafe { fill_list(count, devices, [device_handle()].into_iter()) }
}

pub unsafe fn sub_devices(device: ze_device_handle_t, count: *mut u32) -> ZeResult<()> {
    check_device(device)?;
    unsafe { put(count, 0) }
}

pub unsafe fn device_properties(device: ze_device_handle_t, properties: *mut ze_device_properties_t) -> ZeResult<()> {
    check_device(device)?;
    let rt = runtime()?;
    let properties = unsafe { properties.as_mut() }.ok_or(ZE_RESULT_ERROR_INVALID_NULL_POINTER)?;
    properties.type_ = ZE_DEVICE_TYPE_GPU;
    properties.vendorId = 0x8086;
    properties.deviceId = 0;
    properties.flags = ZE_DEVICE_PROPERTY_FLAG_INTEGRATED;
    properties.subdeviceId = 0;
    properties.coreClockRate = rt.device_value::<cl_uint>(CL_DEVICE_MAX_CLOCK_FREQUENCY);
    properties.maxMemAllocSize = rt.device_value::<cl_ulong>(CL_DEVICE_MAX_MEM_ALLOC_SIZE);
    properties.maxHardwareContexts = 1;
    properties.maxCommandQueuePriority = 0;
    properties.numThreadsPerEU = 1;
    properties.physicalEUSimdWidth = 16;
    properties.numEUsPerSubslice = 1;
    properties.numSubslicesPerSlice = 1;
    properties.numSlices = rt.device_value::<cl_uint>(CL_DEVICE_MAX_COMPUTE_UNITS);
    properties.timerResolution = 1;
    properties.timestampValidBits = 64;
    properties.kernelTimestampValidBits = 64;
    properties.uuid.id = *b"reprise-ze-cpu\0\0";
    copy_name(&mut properties.name, &format!("Reprise Level Zero test double on {}", rt.device_name));
    for (stype, structure) in unsafe { chain(properties.pNext) } {
        if stype == ZE_STRUCTURE_TYPE_MUTABLE_COMMAND_LIST_EXP_PROPERTIES && mutable_offered() {
            let mutable = structure.cast::<ze_mutable_command_list_exp_properties_t>();
            unsafe {
                (*mutable).mutableCommandListFlags = 0;
                (*mutable).mutableCommandFlags = MUTABLE_COMMAND_FLAGS;
            }
        }
    }
    Ok(())
}

pub unsafe fn compute_properties(device: ze_device_handle_t, properties: *mut ze_device_compute_properties_t) -> ZeResult<()> {
    check_device(device)?;
    let rt = runtime()?;
    let properties = unsafe { properties.as_mut() }.ok_or(ZE_RESULT_ERROR_INVALID_NULL_POINTER)?;
    let sizes = rt.device_value::<[usize; 3]>(CL_DEVICE_MAX_WORK_ITEM_SIZES);
    properties.maxTotalGroupSize = rt.device_value::<usize>(CL_DEVICE_MAX_WORK_GROUP_SIZE) as u32;
    [properties.maxGroupSizeX, properties.maxGroupSizeY, properties.maxGroupSizeZ] = sizes.map(|size| size.min(u32::MAX as usize) as u32);
    [properties.maxGroupCountX, properties.maxGroupCountY, properties.maxGroupCountZ] = [u32::MAX; 3];
    properties.maxSharedLocalMemory = rt.device_value::<cl_ulong>(CL_DEVICE_LOCAL_MEM_SIZE).min(u32::MAX as u64) as u32;
    properties.numSubGroupSizes = 1;
    properties.subGroupSizes = [16, 0, 0, 0, 0, 0, 0, 0];
    Ok(())
}

pub unsafe fn module_properties(device: ze_device_handle_t, properties: *mut ze_device_module_properties_t) -> ZeResult<()> {
    check_device(device)?;
    let rt = runtime()?;
    let properties = unsafe { properties.as_mut() }.ok_or(ZE_RESULT_ERROR_INVALID_NULL_POINTER)?;
    properties.spirvVersionSupported = ze_make_version(1, 4);
    properties.flags = ZE_DEVICE_MODULE_FLAG_FP16 | ZE_DEVICE_MODULE_FLAG_FP64 | ZE_DEVICE_MODULE_FLAG_INT64_ATOMICS;
    let fp = ZE_DEVICE_FP_FLAG_DENORM | ZE_DEVICE_FP_FLAG_INF_NAN | ZE_DEVICE_FP_FLAG_ROUND_TO_NEAREST | ZE_DEVICE_FP_FLAG_FMA;
    (properties.fp16flags, properties.fp32flags, properties.fp64flags) = (fp, fp, fp);
    properties.maxArgumentsSize = rt.device_value::<usize>(CL_DEVICE_MAX_PARAMETER_SIZE) as u32;
    properties.printfBufferSize = rt.device_value::<usize>(CL_DEVICE_PRINTF_BUFFER_SIZE) as u32;
    properties.nativeKernelSupported.id = crate::native::FORMAT_ID;
    Ok(())
}

/// Maximum fill pattern: what `clEnqueueMemFillINTEL` takes.
pub const MAX_FILL_PATTERN: usize = 128;

pub unsafe fn queue_group_properties(device: ze_device_handle_t, count: *mut u32, properties: *mut ze_command_queue_group_properties_t) -> ZeResult<()> {
    check_device(device)?;
    let mut group = ze_command_queue_group_properties_t::new();
    if let Some(given) = unsafe { properties.as_ref() } {
        // The caller's structure type and chain stay as they were.
        (group.stype, group.pNext) = (given.stype, given.pNext);
    }
    group.flags = ZE_COMMAND_QUEUE_GROUP_PROPERTY_FLAG_COMPUTE | ZE_COMMAND_QUEUE_GROUP_PROPERTY_FLAG_COPY;
    group.maxMemoryFillPatternSize = MAX_FILL_PATTERN;
    group.numQueues = 8;
    unsafe { fill_list(count, properties, [group].into_iter()) }
}

pub unsafe fn memory_properties(device: ze_device_handle_t, count: *mut u32, properties: *mut ze_device_memory_properties_t) -> ZeResult<()> {
    check_device(device)?;
    let rt = runtime()?;
    let mut memory = ze_device_memory_properties_t::new();
    if let Some(given) = unsafe { properties.as_ref() } {
        (memory.stype, memory.pNext) = (given.stype, given.pNext);
    }
    memory.totalSize = rt.device_value::<cl_ulong>(CL_DEVICE_GLOBAL_MEM_SIZE);
    copy_name(&mut memory.name, "host memory");
    unsafe { fill_list(count, properties, [memory].into_iter()) }
}

pub unsafe fn memory_access_properties(device: ze_device_handle_t, properties: *mut ze_device_memory_access_properties_t) -> ZeResult<()> {
    check_device(device)?;
    let properties = unsafe { properties.as_mut() }.ok_or(ZE_RESULT_ERROR_INVALID_NULL_POINTER)?;
    let all = ZE_MEMORY_ACCESS_CAP_FLAG_RW
        | ZE_MEMORY_ACCESS_CAP_FLAG_ATOMIC
        | ZE_MEMORY_ACCESS_CAP_FLAG_CONCURRENT
        | ZE_MEMORY_ACCESS_CAP_FLAG_CONCURRENT_ATOMIC;
    properties.hostAllocCapabilities = all;
    properties.deviceAllocCapabilities = all;
    properties.sharedSingleDeviceAllocCapabilities = all;
    properties.sharedCrossDeviceAllocCapabilities = 0;
    properties.sharedSystemAllocCapabilities = 0;
    Ok(())
}

pub unsafe fn cache_properties(device: ze_device_handle_t, count: *mut u32, properties: *mut ze_device_cache_properties_t) -> ZeResult<()> {
    check_device(device)?;
    let rt = runtime()?;
    let mut cache = ze_device_cache_properties_t::new();
    if let Some(given) = unsafe { properties.as_ref() } {
        (cache.stype, cache.pNext) = (given.stype, given.pNext);
    }
    cache.cacheSize = rt.device_value::<cl_ulong>(CL_DEVICE_GLOBAL_MEM_CACHE_SIZE) as usize;
    unsafe { fill_list(count, properties, [cache].into_iter()) }
}

/// No images: every limit is zero.
pub unsafe fn image_properties(device: ze_device_handle_t, properties: *mut ze_device_image_properties_t) -> ZeResult<()> {
    check_device(device)?;
    let properties = unsafe { properties.as_mut() }.ok_or(ZE_RESULT_ERROR_INVALID_NULL_POINTER)?;
    let (stype, next) = (properties.stype, properties.pNext);
    *properties = ze_device_image_properties_t { stype, pNext: next, ..ze_device_image_properties_t::new() };
    Ok(())
}

pub unsafe fn external_memory_properties(device: ze_device_handle_t, properties: *mut ze_device_external_memory_properties_t) -> ZeResult<()> {
    check_device(device)?;
    let properties = unsafe { properties.as_mut() }.ok_or(ZE_RESULT_ERROR_INVALID_NULL_POINTER)?;
    let (stype, next) = (properties.stype, properties.pNext);
    *properties = ze_device_external_memory_properties_t { stype, pNext: next, ..ze_device_external_memory_properties_t::new() };
    Ok(())
}

pub unsafe fn p2p_properties(device: ze_device_handle_t, peer: ze_device_handle_t, properties: *mut ze_device_p2p_properties_t) -> ZeResult<()> {
    check_device(device)?;
    check_device(peer)?;
    unsafe { properties.as_mut() }.ok_or(ZE_RESULT_ERROR_INVALID_NULL_POINTER)?.flags = ZE_DEVICE_P2P_PROPERTY_FLAG_ACCESS;
    Ok(())
}

pub unsafe fn can_access_peer(device: ze_device_handle_t, peer: ze_device_handle_t, value: *mut ze_bool_t) -> ZeResult<()> {
    check_device(device)?;
    check_device(peer)?;
    unsafe { put(value, 1) }
}

pub fn device_status(device: ze_device_handle_t) -> ZeResult<()> {
    check_device(device)
}

pub unsafe fn global_timestamps(device: ze_device_handle_t, host: *mut u64, device_time: *mut u64) -> ZeResult<()> {
    check_device(device)?;
    let rt = runtime()?;
    let (mut device_ns, mut host_ns): (cl_ulong, cl_ulong) = (0, 0);
    crate::opencl::check(unsafe { cl!(rt, clGetDeviceAndHostTimer(rt.device, &mut device_ns, &mut host_ns)) })?;
    unsafe {
        put(host, host_ns)?;
        put(device_time, device_ns)
    }
}

/// Every context shares the runtime's one OpenCL context: memory is valid in all of them.
pub struct Context;

impl Handle for Context {
    type Raw = _ze_context_handle_t;
}

pub unsafe fn create_context(driver: ze_driver_handle_t, context: *mut ze_context_handle_t) -> ZeResult<()> {
    check_driver(driver)?;
    runtime()?;
    unsafe { put(context, Context.into_handle()) }
}

pub unsafe fn destroy_context(context: ze_context_handle_t) -> ZeResult<()> {
    unsafe { Context::destroy(context) }
}

/// Context calls that have nothing to do here (status, residency, system barriers) but check the handle.
pub unsafe fn context_only(context: ze_context_handle_t) -> ZeResult<()> {
    unsafe { Context::from_handle(context) }.map(|_| ())
}
