//! Handles and scalar types of `ze_api.h` (spec 1.4).

macro_rules! handles {
    ($($handle:ident $object:ident),* $(,)?) => {$(
        /// What a handle points to: owned by the driver, never looked into by callers.
        #[repr(C)]
        pub struct $object {
            _opaque: [u8; 0],
        }
        pub type $handle = *mut $object;
    )*};
}

handles!(
    ze_driver_handle_t _ze_driver_handle_t,
    ze_device_handle_t _ze_device_handle_t,
    ze_context_handle_t _ze_context_handle_t,
    ze_command_queue_handle_t _ze_command_queue_handle_t,
    ze_command_list_handle_t _ze_command_list_handle_t,
    ze_fence_handle_t _ze_fence_handle_t,
    ze_event_pool_handle_t _ze_event_pool_handle_t,
    ze_event_handle_t _ze_event_handle_t,
    ze_image_handle_t _ze_image_handle_t,
    ze_module_handle_t _ze_module_handle_t,
    ze_module_build_log_handle_t _ze_module_build_log_handle_t,
    ze_kernel_handle_t _ze_kernel_handle_t,
    ze_sampler_handle_t _ze_sampler_handle_t,
    ze_physical_mem_handle_t _ze_physical_mem_handle_t,
    ze_fabric_vertex_handle_t _ze_fabric_vertex_handle_t,
    ze_fabric_edge_handle_t _ze_fabric_edge_handle_t,
);

macro_rules! opaque_structs {
    ($($name:ident),* $(,)?) => {$(
        /// A structure the project only passes by pointer, never reads.
        #[repr(C)]
        pub struct $name {
            _opaque: [u8; 0],
        }
    )*};
}

opaque_structs!(
    ze_pci_ext_properties_t,
    ze_image_desc_t,
    ze_image_region_t,
    ze_image_properties_t,
    ze_image_allocation_ext_properties_t,
    ze_image_memory_properties_exp_t,
    ze_sampler_desc_t,
    ze_physical_mem_desc_t,
    ze_fabric_edge_exp_properties_t,
    ze_fabric_vertex_exp_properties_t,
    ze_linkage_inspection_ext_desc_t,
    ze_memory_free_ext_desc_t,
    ze_scheduling_hint_exp_desc_t,
);

/// C enums are 32-bit here; values from another producer are kept as numbers, never as Rust enums.
pub type ze_result_t = u32;
pub type ze_bool_t = u8;
pub type ze_structure_type_t = u32;
pub type ze_api_version_t = u32;
pub type ze_init_flags_t = u32;
pub type ze_ipc_property_flags_t = u32;
pub type ze_device_type_t = u32;
pub type ze_device_property_flags_t = u32;
pub type ze_device_module_flags_t = u32;
pub type ze_device_fp_flags_t = u32;
pub type ze_command_queue_group_property_flags_t = u32;
pub type ze_device_memory_property_flags_t = u32;
pub type ze_memory_access_cap_flags_t = u32;
pub type ze_device_cache_property_flags_t = u32;
pub type ze_external_memory_type_flags_t = u32;
pub type ze_device_p2p_property_flags_t = u32;
pub type ze_context_flags_t = u32;
pub type ze_command_queue_flags_t = u32;
pub type ze_command_queue_mode_t = u32;
pub type ze_command_queue_priority_t = u32;
pub type ze_command_list_flags_t = u32;
pub type ze_event_pool_flags_t = u32;
pub type ze_event_scope_flags_t = u32;
pub type ze_fence_flags_t = u32;
pub type ze_device_mem_alloc_flags_t = u32;
pub type ze_host_mem_alloc_flags_t = u32;
pub type ze_memory_type_t = u32;
pub type ze_module_format_t = u32;
pub type ze_module_property_flags_t = u32;
pub type ze_kernel_flags_t = u32;
pub type ze_kernel_indirect_access_flags_t = u32;
pub type ze_cache_config_flags_t = u32;
pub type ze_cache_ext_region_t = u32;
pub type ze_ipc_memory_flags_t = u32;
pub type ze_memory_access_attribute_t = u32;
pub type ze_memory_advice_t = u32;

/// `ZE_MAKE_VERSION`.
pub const fn ze_make_version(major: u32, minor: u32) -> u32 {
    (major << 16) | (minor & 0xffff)
}
