//! `libze_reprise_test.so`: a Level Zero driver that is a **test double**. It lets Reprise's tests
//! run ordinary Level Zero programs, and replay Level Zero traces, on a machine without an Intel
//! GPU: the work runs for real, on Intel's CPU OpenCL runtime (`$REPRISE_INTEL_OCL`, which takes
//! SPIR-V 1.0 to 1.4). It is not a Level Zero implementation to rely on elsewhere.
//!
//! The Level Zero loader (`libze1`) finds it through `ZE_ENABLE_ALT_DRIVERS=<path of this
//! library>` (`scripts/env.sh` exports it). It offers one device, reported as a GPU because
//! ordinary programs ask for one; device, host and shared allocations (Intel USM); modules from
//! SPIR-V and from its own native binaries; kernels; regular and immediate command lists, command
//! queues, fences, event pools and events (kernel timestamps included); barriers, copies (linear
//! and region), fills and launches; the global offset extension; and
//! `ZE_experimental_mutable_command_list` 1.0, which `ZE_REPRISE_TEST_NO_MUTABLE=1` hides. Images,
//! samplers, IPC, virtual memory and indirect launches return `ZE_RESULT_ERROR_UNSUPPORTED_FEATURE`.
//!
//! The functions it implements are the methods of `TestDriver` below; `ze_sys::driver` turns them
//! into the dispatch tables the loader asks for.

#![allow(non_snake_case, clippy::missing_safety_doc, clippy::too_many_arguments)]

mod common;
mod device;
mod event;
mod kernel;
mod list;
mod memory;
mod module;
mod mutable;
mod native;
mod opencl;
mod queue;
mod spirv;
mod submit;

use common::{status, Handle};
use std::ffi::{c_char, c_void};
use ze_sys::*;

pub use device::NO_MUTABLE_VARIABLE;

/// The driver: each method is the Level Zero function of its name.
pub struct TestDriver;

impl driver::Driver for TestDriver {
    unsafe fn zeInit(flags: ze_init_flags_t) -> ze_result_t {
        status(device::init(flags))
    }
    unsafe fn zeDriverGet(pCount: *mut u32, phDrivers: *mut ze_driver_handle_t) -> ze_result_t {
        status(unsafe { device::get_drivers(pCount, phDrivers) })
    }
    unsafe fn zeDriverGetApiVersion(hDriver: ze_driver_handle_t, version: *mut ze_api_version_t) -> ze_result_t {
        status(unsafe { device::api_version(hDriver, version) })
    }
    unsafe fn zeDriverGetProperties(hDriver: ze_driver_handle_t, pDriverProperties: *mut ze_driver_properties_t) -> ze_result_t {
        status(unsafe { device::driver_properties(hDriver, pDriverProperties) })
    }
    unsafe fn zeDriverGetIpcProperties(hDriver: ze_driver_handle_t, pIpcProperties: *mut ze_driver_ipc_properties_t) -> ze_result_t {
        status(unsafe { device::ipc_properties(hDriver, pIpcProperties) })
    }
    unsafe fn zeDriverGetExtensionProperties(hDriver: ze_driver_handle_t, pCount: *mut u32, pExtensionProperties: *mut ze_driver_extension_properties_t) -> ze_result_t {
        status(unsafe { device::extension_properties(hDriver, pCount, pExtensionProperties) })
    }
    unsafe fn zeDriverGetExtensionFunctionAddress(hDriver: ze_driver_handle_t, name: *const c_char, ppFunctionAddress: *mut *mut c_void) -> ze_result_t {
        status(unsafe { device::extension_function(hDriver, name, ppFunctionAddress) })
    }

    unsafe fn zeDeviceGet(hDriver: ze_driver_handle_t, pCount: *mut u32, phDevices: *mut ze_device_handle_t) -> ze_result_t {
        status(unsafe { device::get_devices(hDriver, pCount, phDevices) })
    }
    unsafe fn zeDeviceGetSubDevices(hDevice: ze_device_handle_t, pCount: *mut u32, _phSubdevices: *mut ze_device_handle_t) -> ze_result_t {
        status(unsafe { device::sub_devices(hDevice, pCount) })
    }
    unsafe fn zeDeviceGetProperties(hDevice: ze_device_handle_t, pDeviceProperties: *mut ze_device_properties_t) -> ze_result_t {
        status(unsafe { device::device_properties(hDevice, pDeviceProperties) })
    }
    unsafe fn zeDeviceGetComputeProperties(hDevice: ze_device_handle_t, pComputeProperties: *mut ze_device_compute_properties_t) -> ze_result_t {
        status(unsafe { device::compute_properties(hDevice, pComputeProperties) })
    }
    unsafe fn zeDeviceGetModuleProperties(hDevice: ze_device_handle_t, pModuleProperties: *mut ze_device_module_properties_t) -> ze_result_t {
        status(unsafe { device::module_properties(hDevice, pModuleProperties) })
    }
    unsafe fn zeDeviceGetCommandQueueGroupProperties(
        hDevice: ze_device_handle_t,
        pCount: *mut u32,
        pCommandQueueGroupProperties: *mut ze_command_queue_group_properties_t,
    ) -> ze_result_t {
        status(unsafe { device::queue_group_properties(hDevice, pCount, pCommandQueueGroupProperties) })
    }
    unsafe fn zeDeviceGetMemoryProperties(hDevice: ze_device_handle_t, pCount: *mut u32, pMemProperties: *mut ze_device_memory_properties_t) -> ze_result_t {
        status(unsafe { device::memory_properties(hDevice, pCount, pMemProperties) })
    }
    unsafe fn zeDeviceGetMemoryAccessProperties(hDevice: ze_device_handle_t, pMemAccessProperties: *mut ze_device_memory_access_properties_t) -> ze_result_t {
        status(unsafe { device::memory_access_properties(hDevice, pMemAccessProperties) })
    }
    unsafe fn zeDeviceGetCacheProperties(hDevice: ze_device_handle_t, pCount: *mut u32, pCacheProperties: *mut ze_device_cache_properties_t) -> ze_result_t {
        status(unsafe { device::cache_properties(hDevice, pCount, pCacheProperties) })
    }
    unsafe fn zeDeviceGetImageProperties(hDevice: ze_device_handle_t, pImageProperties: *mut ze_device_image_properties_t) -> ze_result_t {
        status(unsafe { device::image_properties(hDevice, pImageProperties) })
    }
    unsafe fn zeDeviceGetExternalMemoryProperties(hDevice: ze_device_handle_t, pExternalMemoryProperties: *mut ze_device_external_memory_properties_t) -> ze_result_t {
        status(unsafe { device::external_memory_properties(hDevice, pExternalMemoryProperties) })
    }
    unsafe fn zeDeviceGetP2PProperties(hDevice: ze_device_handle_t, hPeerDevice: ze_device_handle_t, pP2PProperties: *mut ze_device_p2p_properties_t) -> ze_result_t {
        status(unsafe { device::p2p_properties(hDevice, hPeerDevice, pP2PProperties) })
    }
    unsafe fn zeDeviceCanAccessPeer(hDevice: ze_device_handle_t, hPeerDevice: ze_device_handle_t, value: *mut ze_bool_t) -> ze_result_t {
        status(unsafe { device::can_access_peer(hDevice, hPeerDevice, value) })
    }
    unsafe fn zeDeviceGetStatus(hDevice: ze_device_handle_t) -> ze_result_t {
        status(device::device_status(hDevice))
    }
    unsafe fn zeDeviceGetGlobalTimestamps(hDevice: ze_device_handle_t, hostTimestamp: *mut u64, deviceTimestamp: *mut u64) -> ze_result_t {
        status(unsafe { device::global_timestamps(hDevice, hostTimestamp, deviceTimestamp) })
    }

    unsafe fn zeContextCreate(hDriver: ze_driver_handle_t, _desc: *const ze_context_desc_t, phContext: *mut ze_context_handle_t) -> ze_result_t {
        status(unsafe { device::create_context(hDriver, phContext) })
    }
    unsafe fn zeContextDestroy(hContext: ze_context_handle_t) -> ze_result_t {
        status(unsafe { device::destroy_context(hContext) })
    }
    unsafe fn zeContextGetStatus(hContext: ze_context_handle_t) -> ze_result_t {
        status(unsafe { device::context_only(hContext) })
    }
    unsafe fn zeContextSystemBarrier(hContext: ze_context_handle_t, _hDevice: ze_device_handle_t) -> ze_result_t {
        status(unsafe { device::context_only(hContext) })
    }
    unsafe fn zeContextMakeMemoryResident(hContext: ze_context_handle_t, _hDevice: ze_device_handle_t, _ptr: *mut c_void, _size: usize) -> ze_result_t {
        status(unsafe { device::context_only(hContext) })
    }
    unsafe fn zeContextEvictMemory(hContext: ze_context_handle_t, _hDevice: ze_device_handle_t, _ptr: *mut c_void, _size: usize) -> ze_result_t {
        status(unsafe { device::context_only(hContext) })
    }

    unsafe fn zeMemAllocShared(
        hContext: ze_context_handle_t,
        _device_desc: *const ze_device_mem_alloc_desc_t,
        _host_desc: *const ze_host_mem_alloc_desc_t,
        size: usize,
        alignment: usize,
        hDevice: ze_device_handle_t,
        pptr: *mut *mut c_void,
    ) -> ze_result_t {
        status(unsafe { memory::alloc_shared(hContext, size, alignment, hDevice, pptr) })
    }
    unsafe fn zeMemAllocDevice(
        hContext: ze_context_handle_t,
        _device_desc: *const ze_device_mem_alloc_desc_t,
        size: usize,
        alignment: usize,
        hDevice: ze_device_handle_t,
        pptr: *mut *mut c_void,
    ) -> ze_result_t {
        status(unsafe { memory::alloc_device(hContext, size, alignment, hDevice, pptr) })
    }
    unsafe fn zeMemAllocHost(hContext: ze_context_handle_t, _host_desc: *const ze_host_mem_alloc_desc_t, size: usize, alignment: usize, pptr: *mut *mut c_void) -> ze_result_t {
        status(unsafe { memory::alloc_host(hContext, size, alignment, pptr) })
    }
    unsafe fn zeMemFree(hContext: ze_context_handle_t, ptr: *mut c_void) -> ze_result_t {
        status(unsafe { memory::free(hContext, ptr) })
    }
    unsafe fn zeMemGetAllocProperties(
        hContext: ze_context_handle_t,
        ptr: *const c_void,
        pMemAllocProperties: *mut ze_memory_allocation_properties_t,
        phDevice: *mut ze_device_handle_t,
    ) -> ze_result_t {
        status(unsafe { memory::alloc_properties(hContext, ptr, pMemAllocProperties, phDevice) })
    }
    unsafe fn zeMemGetAddressRange(hContext: ze_context_handle_t, ptr: *const c_void, pBase: *mut *mut c_void, pSize: *mut usize) -> ze_result_t {
        status(unsafe { memory::address_range(hContext, ptr, pBase, pSize) })
    }

    unsafe fn zeModuleCreate(
        hContext: ze_context_handle_t,
        hDevice: ze_device_handle_t,
        desc: *const ze_module_desc_t,
        phModule: *mut ze_module_handle_t,
        phBuildLog: *mut ze_module_build_log_handle_t,
    ) -> ze_result_t {
        status(unsafe { module::create(hContext, hDevice, desc, phModule, phBuildLog) })
    }
    unsafe fn zeModuleDestroy(hModule: ze_module_handle_t) -> ze_result_t {
        status(unsafe { module::destroy(hModule) })
    }
    unsafe fn zeModuleGetNativeBinary(hModule: ze_module_handle_t, pSize: *mut usize, pModuleNativeBinary: *mut u8) -> ze_result_t {
        status(unsafe { module::native_binary(hModule, pSize, pModuleNativeBinary) })
    }
    unsafe fn zeModuleGetKernelNames(hModule: ze_module_handle_t, pCount: *mut u32, pNames: *mut *const c_char) -> ze_result_t {
        status(unsafe { module::kernel_names(hModule, pCount, pNames) })
    }
    unsafe fn zeModuleGetProperties(hModule: ze_module_handle_t, pModuleProperties: *mut ze_module_properties_t) -> ze_result_t {
        status(unsafe { module::properties(hModule, pModuleProperties) })
    }
    unsafe fn zeModuleBuildLogDestroy(hModuleBuildLog: ze_module_build_log_handle_t) -> ze_result_t {
        status(unsafe { module::destroy_log(hModuleBuildLog) })
    }
    unsafe fn zeModuleBuildLogGetString(hModuleBuildLog: ze_module_build_log_handle_t, pSize: *mut usize, pBuildLog: *mut c_char) -> ze_result_t {
        status(unsafe { module::log_text(hModuleBuildLog, pSize, pBuildLog) })
    }

    unsafe fn zeKernelCreate(hModule: ze_module_handle_t, desc: *const ze_kernel_desc_t, phKernel: *mut ze_kernel_handle_t) -> ze_result_t {
        status(unsafe { kernel::create(hModule, desc, phKernel) })
    }
    unsafe fn zeKernelDestroy(hKernel: ze_kernel_handle_t) -> ze_result_t {
        status(unsafe { kernel::destroy(hKernel) })
    }
    unsafe fn zeKernelSetCacheConfig(hKernel: ze_kernel_handle_t, _flags: ze_cache_config_flags_t) -> ze_result_t {
        status(unsafe { kernel::Kernel::from_handle(hKernel) }.map(|_| ()))
    }
    unsafe fn zeKernelSetGroupSize(hKernel: ze_kernel_handle_t, groupSizeX: u32, groupSizeY: u32, groupSizeZ: u32) -> ze_result_t {
        status(unsafe { kernel::set_group_size(hKernel, groupSizeX, groupSizeY, groupSizeZ) })
    }
    unsafe fn zeKernelSuggestGroupSize(
        hKernel: ze_kernel_handle_t,
        globalSizeX: u32,
        globalSizeY: u32,
        globalSizeZ: u32,
        groupSizeX: *mut u32,
        groupSizeY: *mut u32,
        groupSizeZ: *mut u32,
    ) -> ze_result_t {
        status(unsafe { kernel::suggest_group_size(hKernel, globalSizeX, globalSizeY, globalSizeZ, groupSizeX, groupSizeY, groupSizeZ) })
    }
    unsafe fn zeKernelSetArgumentValue(hKernel: ze_kernel_handle_t, argIndex: u32, argSize: usize, pArgValue: *const c_void) -> ze_result_t {
        status(unsafe { kernel::set_argument(hKernel, argIndex, argSize, pArgValue) })
    }
    unsafe fn zeKernelSetIndirectAccess(hKernel: ze_kernel_handle_t, flags: ze_kernel_indirect_access_flags_t) -> ze_result_t {
        status(unsafe { kernel::set_indirect_access(hKernel, flags) })
    }
    unsafe fn zeKernelGetIndirectAccess(hKernel: ze_kernel_handle_t, pFlags: *mut ze_kernel_indirect_access_flags_t) -> ze_result_t {
        status(unsafe { kernel::indirect_access(hKernel, pFlags) })
    }
    unsafe fn zeKernelGetSourceAttributes(hKernel: ze_kernel_handle_t, pSize: *mut u32, pString: *mut *mut c_char) -> ze_result_t {
        status(unsafe { kernel::source_attributes(hKernel, pSize, pString) })
    }
    unsafe fn zeKernelGetProperties(hKernel: ze_kernel_handle_t, pKernelProperties: *mut ze_kernel_properties_t) -> ze_result_t {
        status(unsafe { kernel::properties(hKernel, pKernelProperties) })
    }
    unsafe fn zeKernelGetName(hKernel: ze_kernel_handle_t, pSize: *mut usize, pName: *mut c_char) -> ze_result_t {
        status(unsafe { kernel::name(hKernel, pSize, pName) })
    }
    unsafe fn zeKernelSetGlobalOffsetExp(hKernel: ze_kernel_handle_t, offsetX: u32, offsetY: u32, offsetZ: u32) -> ze_result_t {
        status(unsafe { kernel::set_global_offset(hKernel, offsetX, offsetY, offsetZ) })
    }

    unsafe fn zeCommandQueueCreate(
        hContext: ze_context_handle_t,
        hDevice: ze_device_handle_t,
        desc: *const ze_command_queue_desc_t,
        phCommandQueue: *mut ze_command_queue_handle_t,
    ) -> ze_result_t {
        status(unsafe { queue::create(hContext, hDevice, desc, phCommandQueue) })
    }
    unsafe fn zeCommandQueueDestroy(hCommandQueue: ze_command_queue_handle_t) -> ze_result_t {
        status(unsafe { queue::destroy(hCommandQueue) })
    }
    unsafe fn zeCommandQueueExecuteCommandLists(
        hCommandQueue: ze_command_queue_handle_t,
        numCommandLists: u32,
        phCommandLists: *mut ze_command_list_handle_t,
        hFence: ze_fence_handle_t,
    ) -> ze_result_t {
        status(unsafe { queue::execute(hCommandQueue, numCommandLists, phCommandLists, hFence) })
    }
    unsafe fn zeCommandQueueSynchronize(hCommandQueue: ze_command_queue_handle_t, timeout: u64) -> ze_result_t {
        status(unsafe { queue::synchronize(hCommandQueue, timeout) })
    }

    unsafe fn zeFenceCreate(hCommandQueue: ze_command_queue_handle_t, desc: *const ze_fence_desc_t, phFence: *mut ze_fence_handle_t) -> ze_result_t {
        status(unsafe { queue::create_fence(hCommandQueue, desc, phFence) })
    }
    unsafe fn zeFenceDestroy(hFence: ze_fence_handle_t) -> ze_result_t {
        status(unsafe { queue::destroy_fence(hFence) })
    }
    unsafe fn zeFenceHostSynchronize(hFence: ze_fence_handle_t, timeout: u64) -> ze_result_t {
        status(unsafe { queue::fence_synchronize(hFence, timeout) })
    }
    unsafe fn zeFenceQueryStatus(hFence: ze_fence_handle_t) -> ze_result_t {
        status(unsafe { queue::fence_query(hFence) })
    }
    unsafe fn zeFenceReset(hFence: ze_fence_handle_t) -> ze_result_t {
        status(unsafe { queue::fence_reset(hFence) })
    }

    unsafe fn zeEventPoolCreate(
        hContext: ze_context_handle_t,
        desc: *const ze_event_pool_desc_t,
        numDevices: u32,
        phDevices: *mut ze_device_handle_t,
        phEventPool: *mut ze_event_pool_handle_t,
    ) -> ze_result_t {
        status(unsafe { event::create_pool(hContext, desc, numDevices, phDevices, phEventPool) })
    }
    unsafe fn zeEventPoolDestroy(hEventPool: ze_event_pool_handle_t) -> ze_result_t {
        status(unsafe { event::destroy_pool(hEventPool) })
    }
    unsafe fn zeEventCreate(hEventPool: ze_event_pool_handle_t, desc: *const ze_event_desc_t, phEvent: *mut ze_event_handle_t) -> ze_result_t {
        status(unsafe { event::create(hEventPool, desc, phEvent) })
    }
    unsafe fn zeEventDestroy(hEvent: ze_event_handle_t) -> ze_result_t {
        status(unsafe { event::destroy(hEvent) })
    }
    unsafe fn zeEventHostSignal(hEvent: ze_event_handle_t) -> ze_result_t {
        status(unsafe { event::host_signal(hEvent) })
    }
    unsafe fn zeEventHostSynchronize(hEvent: ze_event_handle_t, timeout: u64) -> ze_result_t {
        status(unsafe { event::host_synchronize(hEvent, timeout) })
    }
    unsafe fn zeEventQueryStatus(hEvent: ze_event_handle_t) -> ze_result_t {
        status(unsafe { event::query_status(hEvent) })
    }
    unsafe fn zeEventHostReset(hEvent: ze_event_handle_t) -> ze_result_t {
        status(unsafe { event::host_reset(hEvent) })
    }
    unsafe fn zeEventQueryKernelTimestamp(hEvent: ze_event_handle_t, dstptr: *mut ze_kernel_timestamp_result_t) -> ze_result_t {
        status(unsafe { event::kernel_timestamp(hEvent, dstptr) })
    }

    unsafe fn zeCommandListCreate(
        hContext: ze_context_handle_t,
        hDevice: ze_device_handle_t,
        desc: *const ze_command_list_desc_t,
        phCommandList: *mut ze_command_list_handle_t,
    ) -> ze_result_t {
        status(unsafe { list::create(hContext, hDevice, desc, phCommandList) })
    }
    unsafe fn zeCommandListCreateImmediate(
        hContext: ze_context_handle_t,
        hDevice: ze_device_handle_t,
        altdesc: *const ze_command_queue_desc_t,
        phCommandList: *mut ze_command_list_handle_t,
    ) -> ze_result_t {
        status(unsafe { list::create_immediate(hContext, hDevice, altdesc, phCommandList) })
    }
    unsafe fn zeCommandListDestroy(hCommandList: ze_command_list_handle_t) -> ze_result_t {
        status(unsafe { list::destroy(hCommandList) })
    }
    unsafe fn zeCommandListClose(hCommandList: ze_command_list_handle_t) -> ze_result_t {
        status(unsafe { list::close(hCommandList) })
    }
    unsafe fn zeCommandListReset(hCommandList: ze_command_list_handle_t) -> ze_result_t {
        status(unsafe { list::reset(hCommandList) })
    }
    unsafe fn zeCommandListAppendBarrier(hCommandList: ze_command_list_handle_t, hSignalEvent: ze_event_handle_t, numWaitEvents: u32, phWaitEvents: *mut ze_event_handle_t) -> ze_result_t {
        status(unsafe { list::barrier(hCommandList, hSignalEvent, numWaitEvents, phWaitEvents) })
    }
    unsafe fn zeCommandListAppendMemoryRangesBarrier(
        hCommandList: ze_command_list_handle_t,
        _numRanges: u32,
        _pRangeSizes: *const usize,
        _pRanges: *mut *const c_void,
        hSignalEvent: ze_event_handle_t,
        numWaitEvents: u32,
        phWaitEvents: *mut ze_event_handle_t,
    ) -> ze_result_t {
        status(unsafe { list::barrier(hCommandList, hSignalEvent, numWaitEvents, phWaitEvents) })
    }
    unsafe fn zeCommandListAppendMemoryCopy(
        hCommandList: ze_command_list_handle_t,
        dstptr: *mut c_void,
        srcptr: *const c_void,
        size: usize,
        hSignalEvent: ze_event_handle_t,
        numWaitEvents: u32,
        phWaitEvents: *mut ze_event_handle_t,
    ) -> ze_result_t {
        status(unsafe { list::memory_copy(hCommandList, dstptr, srcptr, size, hSignalEvent, numWaitEvents, phWaitEvents) })
    }
    unsafe fn zeCommandListAppendMemoryFill(
        hCommandList: ze_command_list_handle_t,
        ptr: *mut c_void,
        pattern: *const c_void,
        pattern_size: usize,
        size: usize,
        hSignalEvent: ze_event_handle_t,
        numWaitEvents: u32,
        phWaitEvents: *mut ze_event_handle_t,
    ) -> ze_result_t {
        status(unsafe { list::memory_fill(hCommandList, ptr, pattern, pattern_size, size, hSignalEvent, numWaitEvents, phWaitEvents) })
    }
    unsafe fn zeCommandListAppendMemoryCopyRegion(
        hCommandList: ze_command_list_handle_t,
        dstptr: *mut c_void,
        dstRegion: *const ze_copy_region_t,
        dstPitch: u32,
        dstSlicePitch: u32,
        srcptr: *const c_void,
        srcRegion: *const ze_copy_region_t,
        srcPitch: u32,
        srcSlicePitch: u32,
        hSignalEvent: ze_event_handle_t,
        numWaitEvents: u32,
        phWaitEvents: *mut ze_event_handle_t,
    ) -> ze_result_t {
        status(unsafe {
            list::memory_copy_region(
                hCommandList, dstptr, dstRegion, dstPitch, dstSlicePitch, srcptr, srcRegion, srcPitch, srcSlicePitch, hSignalEvent, numWaitEvents, phWaitEvents,
            )
        })
    }
    unsafe fn zeCommandListAppendMemoryCopyFromContext(
        hCommandList: ze_command_list_handle_t,
        dstptr: *mut c_void,
        _hContextSrc: ze_context_handle_t,
        srcptr: *const c_void,
        size: usize,
        hSignalEvent: ze_event_handle_t,
        numWaitEvents: u32,
        phWaitEvents: *mut ze_event_handle_t,
    ) -> ze_result_t {
        status(unsafe { list::memory_copy(hCommandList, dstptr, srcptr, size, hSignalEvent, numWaitEvents, phWaitEvents) })
    }
    unsafe fn zeCommandListAppendMemoryPrefetch(hCommandList: ze_command_list_handle_t, _ptr: *const c_void, _size: usize) -> ze_result_t {
        status(unsafe { list::hint(hCommandList) })
    }
    unsafe fn zeCommandListAppendMemAdvise(
        hCommandList: ze_command_list_handle_t,
        _hDevice: ze_device_handle_t,
        _ptr: *const c_void,
        _size: usize,
        _advice: ze_memory_advice_t,
    ) -> ze_result_t {
        status(unsafe { list::hint(hCommandList) })
    }
    unsafe fn zeCommandListAppendSignalEvent(hCommandList: ze_command_list_handle_t, hEvent: ze_event_handle_t) -> ze_result_t {
        status(unsafe { list::signal_event(hCommandList, hEvent) })
    }
    unsafe fn zeCommandListAppendWaitOnEvents(hCommandList: ze_command_list_handle_t, numEvents: u32, phEvents: *mut ze_event_handle_t) -> ze_result_t {
        status(unsafe { list::wait_on_events(hCommandList, numEvents, phEvents) })
    }
    unsafe fn zeCommandListAppendEventReset(hCommandList: ze_command_list_handle_t, hEvent: ze_event_handle_t) -> ze_result_t {
        status(unsafe { list::event_reset(hCommandList, hEvent) })
    }
    unsafe fn zeCommandListAppendLaunchKernel(
        hCommandList: ze_command_list_handle_t,
        hKernel: ze_kernel_handle_t,
        pLaunchFuncArgs: *const ze_group_count_t,
        hSignalEvent: ze_event_handle_t,
        numWaitEvents: u32,
        phWaitEvents: *mut ze_event_handle_t,
    ) -> ze_result_t {
        status(unsafe { list::launch(hCommandList, hKernel, pLaunchFuncArgs, hSignalEvent, numWaitEvents, phWaitEvents) })
    }
    unsafe fn zeCommandListAppendLaunchCooperativeKernel(
        hCommandList: ze_command_list_handle_t,
        hKernel: ze_kernel_handle_t,
        pLaunchFuncArgs: *const ze_group_count_t,
        hSignalEvent: ze_event_handle_t,
        numWaitEvents: u32,
        phWaitEvents: *mut ze_event_handle_t,
    ) -> ze_result_t {
        status(unsafe { list::launch(hCommandList, hKernel, pLaunchFuncArgs, hSignalEvent, numWaitEvents, phWaitEvents) })
    }

    unsafe fn zeCommandListGetNextCommandIdExp(hCommandList: ze_command_list_handle_t, desc: *const ze_mutable_command_id_exp_desc_t, pCommandId: *mut u64) -> ze_result_t {
        status(unsafe { mutable::next_command_id(hCommandList, desc, pCommandId) })
    }
    unsafe fn zeCommandListUpdateMutableCommandsExp(hCommandList: ze_command_list_handle_t, desc: *const ze_mutable_commands_exp_desc_t) -> ze_result_t {
        status(unsafe { mutable::update(hCommandList, desc) })
    }
    unsafe fn zeCommandListUpdateMutableCommandSignalEventExp(hCommandList: ze_command_list_handle_t, commandId: u64, hSignalEvent: ze_event_handle_t) -> ze_result_t {
        status(unsafe { mutable::update_signal_event(hCommandList, commandId, hSignalEvent) })
    }
    unsafe fn zeCommandListUpdateMutableCommandWaitEventsExp(
        hCommandList: ze_command_list_handle_t,
        commandId: u64,
        numWaitEvents: u32,
        phWaitEvents: *mut ze_event_handle_t,
    ) -> ze_result_t {
        status(unsafe { mutable::update_wait_events(hCommandList, commandId, numWaitEvents, phWaitEvents) })
    }
}

ze_sys::export_driver!(TestDriver);
