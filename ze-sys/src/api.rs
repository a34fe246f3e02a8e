//! The Level Zero API described once: every function of the loader's dispatch tables (spec 1.4,
//! `ze_ddi.h`: table, getter, slot, name and signature, in slot order), then the extension
//! functions reached through `zeDriverGetExtensionFunctionAddress`, by extension. Every function
//! returns `ze_result_t`.
//!
//! `ze_api!(callback)` (or `ze_api!(callback, extra tokens)`) expands to
//! `callback! { [extra tokens] tables { TABLE GETTER STRUCT { SLOT => FUNCTION(ARG: TYPE, ...); ... } ... }
//! extensions { EXTENSION { FUNCTION(ARG: TYPE, ...); ... } ... } }`, which is how the table
//! structs, the driver side and the caller side of this crate are made, and how an interposer
//! derives its hooks. Types are written `$crate::...`, so the callback may live in any crate.
//!
//! The tables' slots were transcribed once from the system's `ze_ddi.h` and `ze_api.h`;
//! `layout_tests` checks every slot's offset against the header.

#[macro_export]
macro_rules! ze_api {
    ($($callback:ident)::+ $(, $($extra:tt)*)?) => {
        $($callback)::+! {
            [$($($extra)*)?]
            tables {
            Global zeGetGlobalProcAddrTable ze_global_dditable_t {
                pfnInit => zeInit(flags: $crate::ze_init_flags_t);
            }
            Driver zeGetDriverProcAddrTable ze_driver_dditable_t {
                pfnGet => zeDriverGet(pCount: *mut u32, phDrivers: *mut $crate::ze_driver_handle_t);
                pfnGetApiVersion => zeDriverGetApiVersion(hDriver: $crate::ze_driver_handle_t, version: *mut $crate::ze_api_version_t);
                pfnGetProperties => zeDriverGetProperties(hDriver: $crate::ze_driver_handle_t, pDriverProperties: *mut $crate::ze_driver_properties_t);
                pfnGetIpcProperties => zeDriverGetIpcProperties(hDriver: $crate::ze_driver_handle_t, pIpcProperties: *mut $crate::ze_driver_ipc_properties_t);
                pfnGetExtensionProperties => zeDriverGetExtensionProperties(hDriver: $crate::ze_driver_handle_t, pCount: *mut u32, pExtensionProperties: *mut $crate::ze_driver_extension_properties_t);
                pfnGetExtensionFunctionAddress => zeDriverGetExtensionFunctionAddress(hDriver: $crate::ze_driver_handle_t, name: *const ::std::ffi::c_char, ppFunctionAddress: *mut *mut ::std::ffi::c_void);
            }
            Device zeGetDeviceProcAddrTable ze_device_dditable_t {
                pfnGet => zeDeviceGet(hDriver: $crate::ze_driver_handle_t, pCount: *mut u32, phDevices: *mut $crate::ze_device_handle_t);
                pfnGetSubDevices => zeDeviceGetSubDevices(hDevice: $crate::ze_device_handle_t, pCount: *mut u32, phSubdevices: *mut $crate::ze_device_handle_t);
                pfnGetProperties => zeDeviceGetProperties(hDevice: $crate::ze_device_handle_t, pDeviceProperties: *mut $crate::ze_device_properties_t);
                pfnGetComputeProperties => zeDeviceGetComputeProperties(hDevice: $crate::ze_device_handle_t, pComputeProperties: *mut $crate::ze_device_compute_properties_t);
                pfnGetModuleProperties => zeDeviceGetModuleProperties(hDevice: $crate::ze_device_handle_t, pModuleProperties: *mut $crate::ze_device_module_properties_t);
                pfnGetCommandQueueGroupProperties => zeDeviceGetCommandQueueGroupProperties(hDevice: $crate::ze_device_handle_t, pCount: *mut u32, pCommandQueueGroupProperties: *mut $crate::ze_command_queue_group_properties_t);
                pfnGetMemoryProperties => zeDeviceGetMemoryProperties(hDevice: $crate::ze_device_handle_t, pCount: *mut u32, pMemProperties: *mut $crate::ze_device_memory_properties_t);
                pfnGetMemoryAccessProperties => zeDeviceGetMemoryAccessProperties(hDevice: $crate::ze_device_handle_t, pMemAccessProperties: *mut $crate::ze_device_memory_access_properties_t);
                pfnGetCacheProperties => zeDeviceGetCacheProperties(hDevice: $crate::ze_device_handle_t, pCount: *mut u32, pCacheProperties: *mut $crate::ze_device_cache_properties_t);
                pfnGetImageProperties => zeDeviceGetImageProperties(hDevice: $crate::ze_device_handle_t, pImageProperties: *mut $crate::ze_device_image_properties_t);
                pfnGetExternalMemoryProperties => zeDeviceGetExternalMemoryProperties(hDevice: $crate::ze_device_handle_t, pExternalMemoryProperties: *mut $crate::ze_device_external_memory_properties_t);
                pfnGetP2PProperties => zeDeviceGetP2PProperties(hDevice: $crate::ze_device_handle_t, hPeerDevice: $crate::ze_device_handle_t, pP2PProperties: *mut $crate::ze_device_p2p_properties_t);
                pfnCanAccessPeer => zeDeviceCanAccessPeer(hDevice: $crate::ze_device_handle_t, hPeerDevice: $crate::ze_device_handle_t, value: *mut $crate::ze_bool_t);
                pfnGetStatus => zeDeviceGetStatus(hDevice: $crate::ze_device_handle_t);
                pfnGetGlobalTimestamps => zeDeviceGetGlobalTimestamps(hDevice: $crate::ze_device_handle_t, hostTimestamp: *mut u64, deviceTimestamp: *mut u64);
                pfnReserveCacheExt => zeDeviceReserveCacheExt(hDevice: $crate::ze_device_handle_t, cacheLevel: usize, cacheReservationSize: usize);
                pfnSetCacheAdviceExt => zeDeviceSetCacheAdviceExt(hDevice: $crate::ze_device_handle_t, ptr: *mut ::std::ffi::c_void, regionSize: usize, cacheRegion: $crate::ze_cache_ext_region_t);
                pfnPciGetPropertiesExt => zeDevicePciGetPropertiesExt(hDevice: $crate::ze_device_handle_t, pPciProperties: *mut $crate::ze_pci_ext_properties_t);
            }
            DeviceExp zeGetDeviceExpProcAddrTable ze_device_exp_dditable_t {
                pfnGetFabricVertexExp => zeDeviceGetFabricVertexExp(hDevice: $crate::ze_device_handle_t, phVertex: *mut $crate::ze_fabric_vertex_handle_t);
            }
            Context zeGetContextProcAddrTable ze_context_dditable_t {
                pfnCreate => zeContextCreate(hDriver: $crate::ze_driver_handle_t, desc: *const $crate::ze_context_desc_t, phContext: *mut $crate::ze_context_handle_t);
                pfnDestroy => zeContextDestroy(hContext: $crate::ze_context_handle_t);
                pfnGetStatus => zeContextGetStatus(hContext: $crate::ze_context_handle_t);
                pfnSystemBarrier => zeContextSystemBarrier(hContext: $crate::ze_context_handle_t, hDevice: $crate::ze_device_handle_t);
                pfnMakeMemoryResident => zeContextMakeMemoryResident(hContext: $crate::ze_context_handle_t, hDevice: $crate::ze_device_handle_t, ptr: *mut ::std::ffi::c_void, size: usize);
                pfnEvictMemory => zeContextEvictMemory(hContext: $crate::ze_context_handle_t, hDevice: $crate::ze_device_handle_t, ptr: *mut ::std::ffi::c_void, size: usize);
                pfnMakeImageResident => zeContextMakeImageResident(hContext: $crate::ze_context_handle_t, hDevice: $crate::ze_device_handle_t, hImage: $crate::ze_image_handle_t);
                pfnEvictImage => zeContextEvictImage(hContext: $crate::ze_context_handle_t, hDevice: $crate::ze_device_handle_t, hImage: $crate::ze_image_handle_t);
                pfnCreateEx => zeContextCreateEx(hDriver: $crate::ze_driver_handle_t, desc: *const $crate::ze_context_desc_t, numDevices: u32, phDevices: *mut $crate::ze_device_handle_t, phContext: *mut $crate::ze_context_handle_t);
            }
            CommandQueue zeGetCommandQueueProcAddrTable ze_command_queue_dditable_t {
                pfnCreate => zeCommandQueueCreate(hContext: $crate::ze_context_handle_t, hDevice: $crate::ze_device_handle_t, desc: *const $crate::ze_command_queue_desc_t, phCommandQueue: *mut $crate::ze_command_queue_handle_t);
                pfnDestroy => zeCommandQueueDestroy(hCommandQueue: $crate::ze_command_queue_handle_t);
                pfnExecuteCommandLists => zeCommandQueueExecuteCommandLists(hCommandQueue: $crate::ze_command_queue_handle_t, numCommandLists: u32, phCommandLists: *mut $crate::ze_command_list_handle_t, hFence: $crate::ze_fence_handle_t);
                pfnSynchronize => zeCommandQueueSynchronize(hCommandQueue: $crate::ze_command_queue_handle_t, timeout: u64);
            }
            CommandList zeGetCommandListProcAddrTable ze_command_list_dditable_t {
                pfnCreate => zeCommandListCreate(hContext: $crate::ze_context_handle_t, hDevice: $crate::ze_device_handle_t, desc: *const $crate::ze_command_list_desc_t, phCommandList: *mut $crate::ze_command_list_handle_t);
                pfnCreateImmediate => zeCommandListCreateImmediate(hContext: $crate::ze_context_handle_t, hDevice: $crate::ze_device_handle_t, altdesc: *const $crate::ze_command_queue_desc_t, phCommandList: *mut $crate::ze_command_list_handle_t);
                pfnDestroy => zeCommandListDestroy(hCommandList: $crate::ze_command_list_handle_t);
                pfnClose => zeCommandListClose(hCommandList: $crate::ze_command_list_handle_t);
                pfnReset => zeCommandListReset(hCommandList: $crate::ze_command_list_handle_t);
                pfnAppendWriteGlobalTimestamp => zeCommandListAppendWriteGlobalTimestamp(hCommandList: $crate::ze_command_list_handle_t, dstptr: *mut u64, hSignalEvent: $crate::ze_event_handle_t, numWaitEvents: u32, phWaitEvents: *mut $crate::ze_event_handle_t);
                pfnAppendBarrier => zeCommandListAppendBarrier(hCommandList: $crate::ze_command_list_handle_t, hSignalEvent: $crate::ze_event_handle_t, numWaitEvents: u32, phWaitEvents: *mut $crate::ze_event_handle_t);
                pfnAppendMemoryRangesBarrier => zeCommandListAppendMemoryRangesBarrier(hCommandList: $crate::ze_command_list_handle_t, numRanges: u32, pRangeSizes: *const usize, pRanges: *mut *const ::std::ffi::c_void, hSignalEvent: $crate::ze_event_handle_t, numWaitEvents: u32, phWaitEvents: *mut $crate::ze_event_handle_t);
                pfnAppendMemoryCopy => zeCommandListAppendMemoryCopy(hCommandList: $crate::ze_command_list_handle_t, dstptr: *mut ::std::ffi::c_void, srcptr: *const ::std::ffi::c_void, size: usize, hSignalEvent: $crate::ze_event_handle_t, numWaitEvents: u32, phWaitEvents: *mut $crate::ze_event_handle_t);
                pfnAppendMemoryFill => zeCommandListAppendMemoryFill(hCommandList: $crate::ze_command_list_handle_t, ptr: *mut ::std::ffi::c_void, pattern: *const ::std::ffi::c_void, pattern_size: usize, size: usize, hSignalEvent: $crate::ze_event_handle_t, numWaitEvents: u32, phWaitEvents: *mut $crate::ze_event_handle_t);
                pfnAppendMemoryCopyRegion => zeCommandListAppendMemoryCopyRegion(hCommandList: $crate::ze_command_list_handle_t, dstptr: *mut ::std::ffi::c_void, dstRegion: *const $crate::ze_copy_region_t, dstPitch: u32, dstSlicePitch: u32, srcptr: *const ::std::ffi::c_void, srcRegion: *const $crate::ze_copy_region_t, srcPitch: u32, srcSlicePitch: u32, hSignalEvent: $crate::ze_event_handle_t, numWaitEvents: u32, phWaitEvents: *mut $crate::ze_event_handle_t);
                pfnAppendMemoryCopyFromContext => zeCommandListAppendMemoryCopyFromContext(hCommandList: $crate::ze_command_list_handle_t, dstptr: *mut ::std::ffi::c_void, hContextSrc: $crate::ze_context_handle_t, srcptr: *const ::std::ffi::c_void, size: usize, hSignalEvent: $crate::ze_event_handle_t, numWaitEvents: u32, phWaitEvents: *mut $crate::ze_event_handle_t);
                pfnAppendImageCopy => zeCommandListAppendImageCopy(hCommandList: $crate::ze_command_list_handle_t, hDstImage: $crate::ze_image_handle_t, hSrcImage: $crate::ze_image_handle_t, hSignalEvent: $crate::ze_event_handle_t, numWaitEvents: u32, phWaitEvents: *mut $crate::ze_event_handle_t);
                pfnAppendImageCopyRegion => zeCommandListAppendImageCopyRegion(hCommandList: $crate::ze_command_list_handle_t, hDstImage: $crate::ze_image_handle_t, hSrcImage: $crate::ze_image_handle_t, pDstRegion: *const $crate::ze_image_region_t, pSrcRegion: *const $crate::ze_image_region_t, hSignalEvent: $crate::ze_event_handle_t, numWaitEvents: u32, phWaitEvents: *mut $crate::ze_event_handle_t);
                pfnAppendImageCopyToMemory => zeCommandListAppendImageCopyToMemory(hCommandList: $crate::ze_command_list_handle_t, dstptr: *mut ::std::ffi::c_void, hSrcImage: $crate::ze_image_handle_t, pSrcRegion: *const $crate::ze_image_region_t, hSignalEvent: $crate::ze_event_handle_t, numWaitEvents: u32, phWaitEvents: *mut $crate::ze_event_handle_t);
                pfnAppendImageCopyFromMemory => zeCommandListAppendImageCopyFromMemory(hCommandList: $crate::ze_command_list_handle_t, hDstImage: $crate::ze_image_handle_t, srcptr: *const ::std::ffi::c_void, pDstRegion: *const $crate::ze_image_region_t, hSignalEvent: $crate::ze_event_handle_t, numWaitEvents: u32, phWaitEvents: *mut $crate::ze_event_handle_t);
                pfnAppendMemoryPrefetch => zeCommandListAppendMemoryPrefetch(hCommandList: $crate::ze_command_list_handle_t, ptr: *const ::std::ffi::c_void, size: usize);
                pfnAppendMemAdvise => zeCommandListAppendMemAdvise(hCommandList: $crate::ze_command_list_handle_t, hDevice: $crate::ze_device_handle_t, ptr: *const ::std::ffi::c_void, size: usize, advice: $crate::ze_memory_advice_t);
                pfnAppendSignalEvent => zeCommandListAppendSignalEvent(hCommandList: $crate::ze_command_list_handle_t, hEvent: $crate::ze_event_handle_t);
                pfnAppendWaitOnEvents => zeCommandListAppendWaitOnEvents(hCommandList: $crate::ze_command_list_handle_t, numEvents: u32, phEvents: *mut $crate::ze_event_handle_t);
                pfnAppendEventReset => zeCommandListAppendEventReset(hCommandList: $crate::ze_command_list_handle_t, hEvent: $crate::ze_event_handle_t);
                pfnAppendQueryKernelTimestamps => zeCommandListAppendQueryKernelTimestamps(hCommandList: $crate::ze_command_list_handle_t, numEvents: u32, phEvents: *mut $crate::ze_event_handle_t, dstptr: *mut ::std::ffi::c_void, pOffsets: *const usize, hSignalEvent: $crate::ze_event_handle_t, numWaitEvents: u32, phWaitEvents: *mut $crate::ze_event_handle_t);
                pfnAppendLaunchKernel => zeCommandListAppendLaunchKernel(hCommandList: $crate::ze_command_list_handle_t, hKernel: $crate::ze_kernel_handle_t, pLaunchFuncArgs: *const $crate::ze_group_count_t, hSignalEvent: $crate::ze_event_handle_t, numWaitEvents: u32, phWaitEvents: *mut $crate::ze_event_handle_t);
                pfnAppendLaunchCooperativeKernel => zeCommandListAppendLaunchCooperativeKernel(hCommandList: $crate::ze_command_list_handle_t, hKernel: $crate::ze_kernel_handle_t, pLaunchFuncArgs: *const $crate::ze_group_count_t, hSignalEvent: $crate::ze_event_handle_t, numWaitEvents: u32, phWaitEvents: *mut $crate::ze_event_handle_t);
                pfnAppendLaunchKernelIndirect => zeCommandListAppendLaunchKernelIndirect(hCommandList: $crate::ze_command_list_handle_t, hKernel: $crate::ze_kernel_handle_t, pLaunchArgumentsBuffer: *const $crate::ze_group_count_t, hSignalEvent: $crate::ze_event_handle_t, numWaitEvents: u32, phWaitEvents: *mut $crate::ze_event_handle_t);
                pfnAppendLaunchMultipleKernelsIndirect => zeCommandListAppendLaunchMultipleKernelsIndirect(hCommandList: $crate::ze_command_list_handle_t, numKernels: u32, phKernels: *mut $crate::ze_kernel_handle_t, pCountBuffer: *const u32, pLaunchArgumentsBuffer: *const $crate::ze_group_count_t, hSignalEvent: $crate::ze_event_handle_t, numWaitEvents: u32, phWaitEvents: *mut $crate::ze_event_handle_t);
                pfnAppendImageCopyToMemoryExt => zeCommandListAppendImageCopyToMemoryExt(hCommandList: $crate::ze_command_list_handle_t, dstptr: *mut ::std::ffi::c_void, hSrcImage: $crate::ze_image_handle_t, pSrcRegion: *const $crate::ze_image_region_t, destRowPitch: u32, destSlicePitch: u32, hSignalEvent: $crate::ze_event_handle_t, numWaitEvents: u32, phWaitEvents: *mut $crate::ze_event_handle_t);
                pfnAppendImageCopyFromMemoryExt => zeCommandListAppendImageCopyFromMemoryExt(hCommandList: $crate::ze_command_list_handle_t, hDstImage: $crate::ze_image_handle_t, srcptr: *const ::std::ffi::c_void, pDstRegion: *const $crate::ze_image_region_t, srcRowPitch: u32, srcSlicePitch: u32, hSignalEvent: $crate::ze_event_handle_t, numWaitEvents: u32, phWaitEvents: *mut $crate::ze_event_handle_t);
            }
            Image zeGetImageProcAddrTable ze_image_dditable_t {
                pfnGetProperties => zeImageGetProperties(hDevice: $crate::ze_device_handle_t, desc: *const $crate::ze_image_desc_t, pImageProperties: *mut $crate::ze_image_properties_t);
                pfnCreate => zeImageCreate(hContext: $crate::ze_context_handle_t, hDevice: $crate::ze_device_handle_t, desc: *const $crate::ze_image_desc_t, phImage: *mut $crate::ze_image_handle_t);
                pfnDestroy => zeImageDestroy(hImage: $crate::ze_image_handle_t);
                pfnGetAllocPropertiesExt => zeImageGetAllocPropertiesExt(hContext: $crate::ze_context_handle_t, hImage: $crate::ze_image_handle_t, pImageAllocProperties: *mut $crate::ze_image_allocation_ext_properties_t);
            }
            ImageExp zeGetImageExpProcAddrTable ze_image_exp_dditable_t {
                pfnGetMemoryPropertiesExp => zeImageGetMemoryPropertiesExp(hImage: $crate::ze_image_handle_t, pMemoryProperties: *mut $crate::ze_image_memory_properties_exp_t);
                pfnViewCreateExp => zeImageViewCreateExp(hContext: $crate::ze_context_handle_t, hDevice: $crate::ze_device_handle_t, desc: *const $crate::ze_image_desc_t, hImage: $crate::ze_image_handle_t, phImageView: *mut $crate::ze_image_handle_t);
            }
            Fence zeGetFenceProcAddrTable ze_fence_dditable_t {
                pfnCreate => zeFenceCreate(hCommandQueue: $crate::ze_command_queue_handle_t, desc: *const $crate::ze_fence_desc_t, phFence: *mut $crate::ze_fence_handle_t);
                pfnDestroy => zeFenceDestroy(hFence: $crate::ze_fence_handle_t);
                pfnHostSynchronize => zeFenceHostSynchronize(hFence: $crate::ze_fence_handle_t, timeout: u64);
                pfnQueryStatus => zeFenceQueryStatus(hFence: $crate::ze_fence_handle_t);
                pfnReset => zeFenceReset(hFence: $crate::ze_fence_handle_t);
            }
            EventPool zeGetEventPoolProcAddrTable ze_event_pool_dditable_t {
                pfnCreate => zeEventPoolCreate(hContext: $crate::ze_context_handle_t, desc: *const $crate::ze_event_pool_desc_t, numDevices: u32, phDevices: *mut $crate::ze_device_handle_t, phEventPool: *mut $crate::ze_event_pool_handle_t);
                pfnDestroy => zeEventPoolDestroy(hEventPool: $crate::ze_event_pool_handle_t);
                pfnGetIpcHandle => zeEventPoolGetIpcHandle(hEventPool: $crate::ze_event_pool_handle_t, phIpc: *mut $crate::ze_ipc_event_pool_handle_t);
                pfnOpenIpcHandle => zeEventPoolOpenIpcHandle(hContext: $crate::ze_context_handle_t, hIpc: $crate::ze_ipc_event_pool_handle_t, phEventPool: *mut $crate::ze_event_pool_handle_t);
                pfnCloseIpcHandle => zeEventPoolCloseIpcHandle(hEventPool: $crate::ze_event_pool_handle_t);
            }
            Event zeGetEventProcAddrTable ze_event_dditable_t {
                pfnCreate => zeEventCreate(hEventPool: $crate::ze_event_pool_handle_t, desc: *const $crate::ze_event_desc_t, phEvent: *mut $crate::ze_event_handle_t);
                pfnDestroy => zeEventDestroy(hEvent: $crate::ze_event_handle_t);
                pfnHostSignal => zeEventHostSignal(hEvent: $crate::ze_event_handle_t);
                pfnHostSynchronize => zeEventHostSynchronize(hEvent: $crate::ze_event_handle_t, timeout: u64);
                pfnQueryStatus => zeEventQueryStatus(hEvent: $crate::ze_event_handle_t);
                pfnHostReset => zeEventHostReset(hEvent: $crate::ze_event_handle_t);
                pfnQueryKernelTimestamp => zeEventQueryKernelTimestamp(hEvent: $crate::ze_event_handle_t, dstptr: *mut $crate::ze_kernel_timestamp_result_t);
            }
            EventExp zeGetEventExpProcAddrTable ze_event_exp_dditable_t {
                pfnQueryTimestampsExp => zeEventQueryTimestampsExp(hEvent: $crate::ze_event_handle_t, hDevice: $crate::ze_device_handle_t, pCount: *mut u32, pTimestamps: *mut $crate::ze_kernel_timestamp_result_t);
            }
            Module zeGetModuleProcAddrTable ze_module_dditable_t {
                pfnCreate => zeModuleCreate(hContext: $crate::ze_context_handle_t, hDevice: $crate::ze_device_handle_t, desc: *const $crate::ze_module_desc_t, phModule: *mut $crate::ze_module_handle_t, phBuildLog: *mut $crate::ze_module_build_log_handle_t);
                pfnDestroy => zeModuleDestroy(hModule: $crate::ze_module_handle_t);
                pfnDynamicLink => zeModuleDynamicLink(numModules: u32, phModules: *mut $crate::ze_module_handle_t, phLinkLog: *mut $crate::ze_module_build_log_handle_t);
                pfnGetNativeBinary => zeModuleGetNativeBinary(hModule: $crate::ze_module_handle_t, pSize: *mut usize, pModuleNativeBinary: *mut u8);
                pfnGetGlobalPointer => zeModuleGetGlobalPointer(hModule: $crate::ze_module_handle_t, pGlobalName: *const ::std::ffi::c_char, pSize: *mut usize, pptr: *mut *mut ::std::ffi::c_void);
                pfnGetKernelNames => zeModuleGetKernelNames(hModule: $crate::ze_module_handle_t, pCount: *mut u32, pNames: *mut *const ::std::ffi::c_char);
                pfnGetProperties => zeModuleGetProperties(hModule: $crate::ze_module_handle_t, pModuleProperties: *mut $crate::ze_module_properties_t);
                pfnGetFunctionPointer => zeModuleGetFunctionPointer(hModule: $crate::ze_module_handle_t, pFunctionName: *const ::std::ffi::c_char, pfnFunction: *mut *mut ::std::ffi::c_void);
                pfnInspectLinkageExt => zeModuleInspectLinkageExt(pInspectDesc: *mut $crate::ze_linkage_inspection_ext_desc_t, numModules: u32, phModules: *mut $crate::ze_module_handle_t, phLog: *mut $crate::ze_module_build_log_handle_t);
            }
            ModuleBuildLog zeGetModuleBuildLogProcAddrTable ze_module_build_log_dditable_t {
                pfnDestroy => zeModuleBuildLogDestroy(hModuleBuildLog: $crate::ze_module_build_log_handle_t);
                pfnGetString => zeModuleBuildLogGetString(hModuleBuildLog: $crate::ze_module_build_log_handle_t, pSize: *mut usize, pBuildLog: *mut ::std::ffi::c_char);
            }
            Kernel zeGetKernelProcAddrTable ze_kernel_dditable_t {
                pfnCreate => zeKernelCreate(hModule: $crate::ze_module_handle_t, desc: *const $crate::ze_kernel_desc_t, phKernel: *mut $crate::ze_kernel_handle_t);
                pfnDestroy => zeKernelDestroy(hKernel: $crate::ze_kernel_handle_t);
                pfnSetCacheConfig => zeKernelSetCacheConfig(hKernel: $crate::ze_kernel_handle_t, flags: $crate::ze_cache_config_flags_t);
                pfnSetGroupSize => zeKernelSetGroupSize(hKernel: $crate::ze_kernel_handle_t, groupSizeX: u32, groupSizeY: u32, groupSizeZ: u32);
                pfnSuggestGroupSize => zeKernelSuggestGroupSize(hKernel: $crate::ze_kernel_handle_t, globalSizeX: u32, globalSizeY: u32, globalSizeZ: u32, groupSizeX: *mut u32, groupSizeY: *mut u32, groupSizeZ: *mut u32);
                pfnSuggestMaxCooperativeGroupCount => zeKernelSuggestMaxCooperativeGroupCount(hKernel: $crate::ze_kernel_handle_t, totalGroupCount: *mut u32);
                pfnSetArgumentValue => zeKernelSetArgumentValue(hKernel: $crate::ze_kernel_handle_t, argIndex: u32, argSize: usize, pArgValue: *const ::std::ffi::c_void);
                pfnSetIndirectAccess => zeKernelSetIndirectAccess(hKernel: $crate::ze_kernel_handle_t, flags: $crate::ze_kernel_indirect_access_flags_t);
                pfnGetIndirectAccess => zeKernelGetIndirectAccess(hKernel: $crate::ze_kernel_handle_t, pFlags: *mut $crate::ze_kernel_indirect_access_flags_t);
                pfnGetSourceAttributes => zeKernelGetSourceAttributes(hKernel: $crate::ze_kernel_handle_t, pSize: *mut u32, pString: *mut *mut ::std::ffi::c_char);
                pfnGetProperties => zeKernelGetProperties(hKernel: $crate::ze_kernel_handle_t, pKernelProperties: *mut $crate::ze_kernel_properties_t);
                pfnGetName => zeKernelGetName(hKernel: $crate::ze_kernel_handle_t, pSize: *mut usize, pName: *mut ::std::ffi::c_char);
            }
            KernelExp zeGetKernelExpProcAddrTable ze_kernel_exp_dditable_t {
                pfnSetGlobalOffsetExp => zeKernelSetGlobalOffsetExp(hKernel: $crate::ze_kernel_handle_t, offsetX: u32, offsetY: u32, offsetZ: u32);
                pfnSchedulingHintExp => zeKernelSchedulingHintExp(hKernel: $crate::ze_kernel_handle_t, pHint: *mut $crate::ze_scheduling_hint_exp_desc_t);
            }
            Sampler zeGetSamplerProcAddrTable ze_sampler_dditable_t {
                pfnCreate => zeSamplerCreate(hContext: $crate::ze_context_handle_t, hDevice: $crate::ze_device_handle_t, desc: *const $crate::ze_sampler_desc_t, phSampler: *mut $crate::ze_sampler_handle_t);
                pfnDestroy => zeSamplerDestroy(hSampler: $crate::ze_sampler_handle_t);
            }
            PhysicalMem zeGetPhysicalMemProcAddrTable ze_physical_mem_dditable_t {
                pfnCreate => zePhysicalMemCreate(hContext: $crate::ze_context_handle_t, hDevice: $crate::ze_device_handle_t, desc: *mut $crate::ze_physical_mem_desc_t, phPhysicalMemory: *mut $crate::ze_physical_mem_handle_t);
                pfnDestroy => zePhysicalMemDestroy(hContext: $crate::ze_context_handle_t, hPhysicalMemory: $crate::ze_physical_mem_handle_t);
            }
            Mem zeGetMemProcAddrTable ze_mem_dditable_t {
                pfnAllocShared => zeMemAllocShared(hContext: $crate::ze_context_handle_t, device_desc: *const $crate::ze_device_mem_alloc_desc_t, host_desc: *const $crate::ze_host_mem_alloc_desc_t, size: usize, alignment: usize, hDevice: $crate::ze_device_handle_t, pptr: *mut *mut ::std::ffi::c_void);
                pfnAllocDevice => zeMemAllocDevice(hContext: $crate::ze_context_handle_t, device_desc: *const $crate::ze_device_mem_alloc_desc_t, size: usize, alignment: usize, hDevice: $crate::ze_device_handle_t, pptr: *mut *mut ::std::ffi::c_void);
                pfnAllocHost => zeMemAllocHost(hContext: $crate::ze_context_handle_t, host_desc: *const $crate::ze_host_mem_alloc_desc_t, size: usize, alignment: usize, pptr: *mut *mut ::std::ffi::c_void);
                pfnFree => zeMemFree(hContext: $crate::ze_context_handle_t, ptr: *mut ::std::ffi::c_void);
                pfnGetAllocProperties => zeMemGetAllocProperties(hContext: $crate::ze_context_handle_t, ptr: *const ::std::ffi::c_void, pMemAllocProperties: *mut $crate::ze_memory_allocation_properties_t, phDevice: *mut $crate::ze_device_handle_t);
                pfnGetAddressRange => zeMemGetAddressRange(hContext: $crate::ze_context_handle_t, ptr: *const ::std::ffi::c_void, pBase: *mut *mut ::std::ffi::c_void, pSize: *mut usize);
                pfnGetIpcHandle => zeMemGetIpcHandle(hContext: $crate::ze_context_handle_t, ptr: *const ::std::ffi::c_void, pIpcHandle: *mut $crate::ze_ipc_mem_handle_t);
                pfnOpenIpcHandle => zeMemOpenIpcHandle(hContext: $crate::ze_context_handle_t, hDevice: $crate::ze_device_handle_t, handle: $crate::ze_ipc_mem_handle_t, flags: $crate::ze_ipc_memory_flags_t, pptr: *mut *mut ::std::ffi::c_void);
                pfnCloseIpcHandle => zeMemCloseIpcHandle(hContext: $crate::ze_context_handle_t, ptr: *const ::std::ffi::c_void);
                pfnFreeExt => zeMemFreeExt(hContext: $crate::ze_context_handle_t, pMemFreeDesc: *const $crate::ze_memory_free_ext_desc_t, ptr: *mut ::std::ffi::c_void);
            }
            VirtualMem zeGetVirtualMemProcAddrTable ze_virtual_mem_dditable_t {
                pfnReserve => zeVirtualMemReserve(hContext: $crate::ze_context_handle_t, pStart: *const ::std::ffi::c_void, size: usize, pptr: *mut *mut ::std::ffi::c_void);
                pfnFree => zeVirtualMemFree(hContext: $crate::ze_context_handle_t, ptr: *const ::std::ffi::c_void, size: usize);
                pfnQueryPageSize => zeVirtualMemQueryPageSize(hContext: $crate::ze_context_handle_t, hDevice: $crate::ze_device_handle_t, size: usize, pagesize: *mut usize);
                pfnMap => zeVirtualMemMap(hContext: $crate::ze_context_handle_t, ptr: *const ::std::ffi::c_void, size: usize, hPhysicalMemory: $crate::ze_physical_mem_handle_t, offset: usize, access: $crate::ze_memory_access_attribute_t);
                pfnUnmap => zeVirtualMemUnmap(hContext: $crate::ze_context_handle_t, ptr: *const ::std::ffi::c_void, size: usize);
                pfnSetAccessAttribute => zeVirtualMemSetAccessAttribute(hContext: $crate::ze_context_handle_t, ptr: *const ::std::ffi::c_void, size: usize, access: $crate::ze_memory_access_attribute_t);
                pfnGetAccessAttribute => zeVirtualMemGetAccessAttribute(hContext: $crate::ze_context_handle_t, ptr: *const ::std::ffi::c_void, size: usize, access: *mut $crate::ze_memory_access_attribute_t, outSize: *mut usize);
            }
            FabricVertexExp zeGetFabricVertexExpProcAddrTable ze_fabric_vertex_exp_dditable_t {
                pfnGetExp => zeFabricVertexGetExp(hDriver: $crate::ze_driver_handle_t, pCount: *mut u32, phVertices: *mut $crate::ze_fabric_vertex_handle_t);
                pfnGetSubVerticesExp => zeFabricVertexGetSubVerticesExp(hVertex: $crate::ze_fabric_vertex_handle_t, pCount: *mut u32, phSubvertices: *mut $crate::ze_fabric_vertex_handle_t);
                pfnGetPropertiesExp => zeFabricVertexGetPropertiesExp(hVertex: $crate::ze_fabric_vertex_handle_t, pVertexProperties: *mut $crate::ze_fabric_vertex_exp_properties_t);
                pfnGetDeviceExp => zeFabricVertexGetDeviceExp(hVertex: $crate::ze_fabric_vertex_handle_t, phDevice: *mut $crate::ze_device_handle_t);
            }
            FabricEdgeExp zeGetFabricEdgeExpProcAddrTable ze_fabric_edge_exp_dditable_t {
                pfnGetExp => zeFabricEdgeGetExp(hVertexA: $crate::ze_fabric_vertex_handle_t, hVertexB: $crate::ze_fabric_vertex_handle_t, pCount: *mut u32, phEdges: *mut $crate::ze_fabric_edge_handle_t);
                pfnGetVerticesExp => zeFabricEdgeGetVerticesExp(hEdge: $crate::ze_fabric_edge_handle_t, phVertexA: *mut $crate::ze_fabric_vertex_handle_t, phVertexB: *mut $crate::ze_fabric_vertex_handle_t);
                pfnGetPropertiesExp => zeFabricEdgeGetPropertiesExp(hEdge: $crate::ze_fabric_edge_handle_t, pEdgeProperties: *mut $crate::ze_fabric_edge_exp_properties_t);
            }
            }
            extensions {
                ZE_experimental_mutable_command_list {
                    zeCommandListGetNextCommandIdExp(hCommandList: $crate::ze_command_list_handle_t, desc: *const $crate::ze_mutable_command_id_exp_desc_t, pCommandId: *mut u64);
                    zeCommandListUpdateMutableCommandsExp(hCommandList: $crate::ze_command_list_handle_t, desc: *const $crate::ze_mutable_commands_exp_desc_t);
                    zeCommandListUpdateMutableCommandSignalEventExp(hCommandList: $crate::ze_command_list_handle_t, commandId: u64, hSignalEvent: $crate::ze_event_handle_t);
                    zeCommandListUpdateMutableCommandWaitEventsExp(hCommandList: $crate::ze_command_list_handle_t, commandId: u64, numWaitEvents: u32, phWaitEvents: *mut $crate::ze_event_handle_t);
                }
            }
        }
    };
}
