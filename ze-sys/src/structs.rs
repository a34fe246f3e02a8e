//! The structures of `ze_api.h` (spec 1.4) the project reads or fills; `layout_tests` checks the
//! size and every field offset of each against the system headers.

use crate::constants::*;
use crate::types::*;
use std::ffi::{c_char, c_void};

/// Defines `#[repr(C)]` structures. One given a structure type (`= ZE_STRUCTURE_TYPE_...`) gets
/// `new()`: all zeroes but that type, as a caller passes it; others get `new()`: all zeroes.
macro_rules! ze_structs {
    ($layouts:ident: $( $(#[$meta:meta])* pub struct $name:ident $(= $stype:ident)? { $( pub $field:ident: $ty:ty ),* $(,)? } )*) => {
        $(
            $(#[$meta])*
            #[repr(C)]
            #[derive(Clone, Copy)]
            pub struct $name { $( pub $field: $ty ),* }

            impl $name {
                pub fn new() -> Self {
                    // SAFETY: plain C data (integers, raw pointers, arrays of them): all zeroes is valid.
                    let mut value: Self = unsafe { std::mem::zeroed() };
                    $( value.stype = $stype; )?
                    let _ = &mut value;
                    value
                }
            }

            impl Default for $name {
                fn default() -> Self {
                    Self::new()
                }
            }
        )*

        /// Name, size and field offsets of each structure, for the layout tests.
        #[cfg(test)]
        pub(crate) const $layouts: &[crate::structs::Layout] = &[
            $( (stringify!($name), std::mem::size_of::<$name>(), &[ $( (stringify!($field), std::mem::offset_of!($name, $field)) ),* ]) ),*
        ];
    };
}
pub(crate) use ze_structs;

/// A structure's name, size, and its fields' names and offsets.
#[cfg(test)]
pub(crate) type Layout = (&'static str, usize, &'static [(&'static str, usize)]);

ze_structs! { STRUCT_LAYOUTS:
    /// The start of every extensible input structure, for walking `pNext` chains.
    pub struct ze_base_desc_t { pub stype: ze_structure_type_t, pub pNext: *const c_void }
    /// The start of every extensible output structure.
    pub struct ze_base_properties_t { pub stype: ze_structure_type_t, pub pNext: *mut c_void }
    pub struct ze_ipc_mem_handle_t { pub data: [c_char; ZE_MAX_IPC_HANDLE_SIZE] }
    pub struct ze_ipc_event_pool_handle_t { pub data: [c_char; ZE_MAX_IPC_HANDLE_SIZE] }
    pub struct ze_driver_uuid_t { pub id: [u8; ZE_MAX_DRIVER_UUID_SIZE] }
    pub struct ze_driver_properties_t = ZE_STRUCTURE_TYPE_DRIVER_PROPERTIES {
        pub stype: ze_structure_type_t, pub pNext: *mut c_void, pub uuid: ze_driver_uuid_t, pub driverVersion: u32,
    }
    pub struct ze_driver_ipc_properties_t = ZE_STRUCTURE_TYPE_DRIVER_IPC_PROPERTIES {
        pub stype: ze_structure_type_t, pub pNext: *mut c_void, pub flags: ze_ipc_property_flags_t,
    }
    pub struct ze_driver_extension_properties_t { pub name: [c_char; ZE_MAX_EXTENSION_NAME], pub version: u32 }
    pub struct ze_device_uuid_t { pub id: [u8; ZE_MAX_DEVICE_UUID_SIZE] }
    pub struct ze_device_properties_t = ZE_STRUCTURE_TYPE_DEVICE_PROPERTIES {
        pub stype: ze_structure_type_t,
        pub pNext: *mut c_void,
        pub type_: ze_device_type_t,
        pub vendorId: u32,
        pub deviceId: u32,
        pub flags: ze_device_property_flags_t,
        pub subdeviceId: u32,
        pub coreClockRate: u32,
        pub maxMemAllocSize: u64,
        pub maxHardwareContexts: u32,
        pub maxCommandQueuePriority: u32,
        pub numThreadsPerEU: u32,
        pub physicalEUSimdWidth: u32,
        pub numEUsPerSubslice: u32,
        pub numSubslicesPerSlice: u32,
        pub numSlices: u32,
        pub timerResolution: u64,
        pub timestampValidBits: u32,
        pub kernelTimestampValidBits: u32,
        pub uuid: ze_device_uuid_t,
        pub name: [c_char; ZE_MAX_DEVICE_NAME],
    }
    pub struct ze_device_compute_properties_t = ZE_STRUCTURE_TYPE_DEVICE_COMPUTE_PROPERTIES {
        pub stype: ze_structure_type_t,
        pub pNext: *mut c_void,
        pub maxTotalGroupSize: u32,
        pub maxGroupSizeX: u32,
        pub maxGroupSizeY: u32,
        pub maxGroupSizeZ: u32,
        pub maxGroupCountX: u32,
        pub maxGroupCountY: u32,
        pub maxGroupCountZ: u32,
        pub maxSharedLocalMemory: u32,
        pub numSubGroupSizes: u32,
        pub subGroupSizes: [u32; ZE_SUBGROUPSIZE_COUNT],
    }
    pub struct ze_native_kernel_uuid_t { pub id: [u8; ZE_MAX_NATIVE_KERNEL_UUID_SIZE] }
    pub struct ze_device_module_properties_t = ZE_STRUCTURE_TYPE_DEVICE_MODULE_PROPERTIES {
        pub stype: ze_structure_type_t,
        pub pNext: *mut c_void,
        pub spirvVersionSupported: u32,
        pub flags: ze_device_module_flags_t,
        pub fp16flags: ze_device_fp_flags_t,
        pub fp32flags: ze_device_fp_flags_t,
        pub fp64flags: ze_device_fp_flags_t,
        pub maxArgumentsSize: u32,
        pub printfBufferSize: u32,
        pub nativeKernelSupported: ze_native_kernel_uuid_t,
    }
    pub struct ze_command_queue_group_properties_t = ZE_STRUCTURE_TYPE_COMMAND_QUEUE_GROUP_PROPERTIES {
        pub stype: ze_structure_type_t,
        pub pNext: *mut c_void,
        pub flags: ze_command_queue_group_property_flags_t,
        pub maxMemoryFillPatternSize: usize,
        pub numQueues: u32,
    }
    pub struct ze_device_memory_properties_t = ZE_STRUCTURE_TYPE_DEVICE_MEMORY_PROPERTIES {
        pub stype: ze_structure_type_t,
        pub pNext: *mut c_void,
        pub flags: ze_device_memory_property_flags_t,
        pub maxClockRate: u32,
        pub maxBusWidth: u32,
        pub totalSize: u64,
        pub name: [c_char; ZE_MAX_DEVICE_NAME],
    }
    pub struct ze_device_memory_access_properties_t = ZE_STRUCTURE_TYPE_DEVICE_MEMORY_ACCESS_PROPERTIES {
        pub stype: ze_structure_type_t,
        pub pNext: *mut c_void,
        pub hostAllocCapabilities: ze_memory_access_cap_flags_t,
        pub deviceAllocCapabilities: ze_memory_access_cap_flags_t,
        pub sharedSingleDeviceAllocCapabilities: ze_memory_access_cap_flags_t,
        pub sharedCrossDeviceAllocCapabilities: ze_memory_access_cap_flags_t,
        pub sharedSystemAllocCapabilities: ze_memory_access_cap_flags_t,
    }
    pub struct ze_device_cache_properties_t = ZE_STRUCTURE_TYPE_DEVICE_CACHE_PROPERTIES {
        pub stype: ze_structure_type_t, pub pNext: *mut c_void, pub flags: ze_device_cache_property_flags_t, pub cacheSize: usize,
    }
    pub struct ze_device_image_properties_t = ZE_STRUCTURE_TYPE_DEVICE_IMAGE_PROPERTIES {
        pub stype: ze_structure_type_t,
        pub pNext: *mut c_void,
        pub maxImageDims1D: u32,
        pub maxImageDims2D: u32,
        pub maxImageDims3D: u32,
        pub maxImageBufferSize: u64,
        pub maxImageArraySlices: u32,
        pub maxSamplers: u32,
        pub maxReadImageArgs: u32,
        pub maxWriteImageArgs: u32,
    }
    pub struct ze_device_external_memory_properties_t = ZE_STRUCTURE_TYPE_DEVICE_EXTERNAL_MEMORY_PROPERTIES {
        pub stype: ze_structure_type_t,
        pub pNext: *mut c_void,
        pub memoryAllocationImportTypes: ze_external_memory_type_flags_t,
        pub memoryAllocationExportTypes: ze_external_memory_type_flags_t,
        pub imageImportTypes: ze_external_memory_type_flags_t,
        pub imageExportTypes: ze_external_memory_type_flags_t,
    }
    pub struct ze_device_p2p_properties_t = ZE_STRUCTURE_TYPE_DEVICE_P2P_PROPERTIES {
        pub stype: ze_structure_type_t, pub pNext: *mut c_void, pub flags: ze_device_p2p_property_flags_t,
    }
    pub struct ze_context_desc_t = ZE_STRUCTURE_TYPE_CONTEXT_DESC {
        pub stype: ze_structure_type_t, pub pNext: *const c_void, pub flags: ze_context_flags_t,
    }
    pub struct ze_command_queue_desc_t = ZE_STRUCTURE_TYPE_COMMAND_QUEUE_DESC {
        pub stype: ze_structure_type_t,
        pub pNext: *const c_void,
        pub ordinal: u32,
        pub index: u32,
        pub flags: ze_command_queue_flags_t,
        pub mode: ze_command_queue_mode_t,
        pub priority: ze_command_queue_priority_t,
    }
    pub struct ze_command_list_desc_t = ZE_STRUCTURE_TYPE_COMMAND_LIST_DESC {
        pub stype: ze_structure_type_t, pub pNext: *const c_void, pub commandQueueGroupOrdinal: u32, pub flags: ze_command_list_flags_t,
    }
    pub struct ze_copy_region_t { pub originX: u32, pub originY: u32, pub originZ: u32, pub width: u32, pub height: u32, pub depth: u32 }
    pub struct ze_event_pool_desc_t = ZE_STRUCTURE_TYPE_EVENT_POOL_DESC {
        pub stype: ze_structure_type_t, pub pNext: *const c_void, pub flags: ze_event_pool_flags_t, pub count: u32,
    }
    pub struct ze_event_desc_t = ZE_STRUCTURE_TYPE_EVENT_DESC {
        pub stype: ze_structure_type_t,
        pub pNext: *const c_void,
        pub index: u32,
        pub signal: ze_event_scope_flags_t,
        pub wait: ze_event_scope_flags_t,
    }
    pub struct ze_kernel_timestamp_data_t { pub kernelStart: u64, pub kernelEnd: u64 }
    pub struct ze_kernel_timestamp_result_t { pub global: ze_kernel_timestamp_data_t, pub context: ze_kernel_timestamp_data_t }
    pub struct ze_fence_desc_t = ZE_STRUCTURE_TYPE_FENCE_DESC {
        pub stype: ze_structure_type_t, pub pNext: *const c_void, pub flags: ze_fence_flags_t,
    }
    pub struct ze_device_mem_alloc_desc_t = ZE_STRUCTURE_TYPE_DEVICE_MEM_ALLOC_DESC {
        pub stype: ze_structure_type_t, pub pNext: *const c_void, pub flags: ze_device_mem_alloc_flags_t, pub ordinal: u32,
    }
    pub struct ze_host_mem_alloc_desc_t = ZE_STRUCTURE_TYPE_HOST_MEM_ALLOC_DESC {
        pub stype: ze_structure_type_t, pub pNext: *const c_void, pub flags: ze_host_mem_alloc_flags_t,
    }
    pub struct ze_memory_allocation_properties_t = ZE_STRUCTURE_TYPE_MEMORY_ALLOCATION_PROPERTIES {
        pub stype: ze_structure_type_t, pub pNext: *mut c_void, pub type_: ze_memory_type_t, pub id: u64, pub pageSize: u64,
    }
    pub struct ze_module_constants_t { pub numConstants: u32, pub pConstantIds: *const u32, pub pConstantValues: *mut *const c_void }
    pub struct ze_module_desc_t = ZE_STRUCTURE_TYPE_MODULE_DESC {
        pub stype: ze_structure_type_t,
        pub pNext: *const c_void,
        pub format: ze_module_format_t,
        pub inputSize: usize,
        pub pInputModule: *const u8,
        pub pBuildFlags: *const c_char,
        pub pConstants: *const ze_module_constants_t,
    }
    pub struct ze_module_properties_t = ZE_STRUCTURE_TYPE_MODULE_PROPERTIES {
        pub stype: ze_structure_type_t, pub pNext: *mut c_void, pub flags: ze_module_property_flags_t,
    }
    pub struct ze_kernel_desc_t = ZE_STRUCTURE_TYPE_KERNEL_DESC {
        pub stype: ze_structure_type_t, pub pNext: *const c_void, pub flags: ze_kernel_flags_t, pub pKernelName: *const c_char,
    }
    pub struct ze_kernel_uuid_t { pub kid: [u8; ZE_MAX_KERNEL_UUID_SIZE], pub mid: [u8; ZE_MAX_MODULE_UUID_SIZE] }
    pub struct ze_kernel_properties_t = ZE_STRUCTURE_TYPE_KERNEL_PROPERTIES {
        pub stype: ze_structure_type_t,
        pub pNext: *mut c_void,
        pub numKernelArgs: u32,
        pub requiredGroupSizeX: u32,
        pub requiredGroupSizeY: u32,
        pub requiredGroupSizeZ: u32,
        pub requiredNumSubGroups: u32,
        pub requiredSubgroupSize: u32,
        pub maxSubgroupSize: u32,
        pub maxNumSubgroups: u32,
        pub localMemSize: u32,
        pub privateMemSize: u32,
        pub spillMemSize: u32,
        pub uuid: ze_kernel_uuid_t,
    }
    pub struct ze_group_count_t { pub groupCountX: u32, pub groupCountY: u32, pub groupCountZ: u32 }
}
