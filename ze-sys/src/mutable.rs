//! `ZE_experimental_mutable_command_list` (specification 1.9 and later), written by hand from the
//! specification: Debian's headers are spec 1.4 and do not have it. Version 1.0 of the extension:
//! command identifiers, and updates of kernel arguments, group counts, group sizes, global
//! offsets, signal events and wait events of closed command lists.

use crate::structs::ze_structs;
use crate::types::*;
use std::ffi::c_void;

pub const ZE_MUTABLE_COMMAND_LIST_EXP_NAME: &std::ffi::CStr = c"ZE_experimental_mutable_command_list";
pub const ZE_MUTABLE_COMMAND_LIST_EXP_VERSION_1_0: u32 = ze_make_version(1, 0);

pub const ZE_STRUCTURE_TYPE_MUTABLE_COMMAND_LIST_EXP_PROPERTIES: ze_structure_type_t = 0x0002_0015;
pub const ZE_STRUCTURE_TYPE_MUTABLE_COMMAND_LIST_EXP_DESC: ze_structure_type_t = 0x0002_0016;
pub const ZE_STRUCTURE_TYPE_MUTABLE_COMMAND_ID_EXP_DESC: ze_structure_type_t = 0x0002_0017;
pub const ZE_STRUCTURE_TYPE_MUTABLE_COMMANDS_EXP_DESC: ze_structure_type_t = 0x0002_0018;
pub const ZE_STRUCTURE_TYPE_MUTABLE_KERNEL_ARGUMENT_EXP_DESC: ze_structure_type_t = 0x0002_0019;
pub const ZE_STRUCTURE_TYPE_MUTABLE_GROUP_COUNT_EXP_DESC: ze_structure_type_t = 0x0002_001A;
pub const ZE_STRUCTURE_TYPE_MUTABLE_GROUP_SIZE_EXP_DESC: ze_structure_type_t = 0x0002_001B;
pub const ZE_STRUCTURE_TYPE_MUTABLE_GLOBAL_OFFSET_EXP_DESC: ze_structure_type_t = 0x0002_001C;

pub type ze_mutable_command_exp_flags_t = u32;
pub const ZE_MUTABLE_COMMAND_EXP_FLAG_KERNEL_ARGUMENTS: ze_mutable_command_exp_flags_t = 1 << 0;
pub const ZE_MUTABLE_COMMAND_EXP_FLAG_GROUP_COUNT: ze_mutable_command_exp_flags_t = 1 << 1;
pub const ZE_MUTABLE_COMMAND_EXP_FLAG_GROUP_SIZE: ze_mutable_command_exp_flags_t = 1 << 2;
pub const ZE_MUTABLE_COMMAND_EXP_FLAG_GLOBAL_OFFSET: ze_mutable_command_exp_flags_t = 1 << 3;
pub const ZE_MUTABLE_COMMAND_EXP_FLAG_SIGNAL_EVENT: ze_mutable_command_exp_flags_t = 1 << 4;
pub const ZE_MUTABLE_COMMAND_EXP_FLAG_WAIT_EVENTS: ze_mutable_command_exp_flags_t = 1 << 5;
pub type ze_mutable_command_list_exp_flags_t = u32;

ze_structs! { MUTABLE_LAYOUTS:
    pub struct ze_mutable_command_id_exp_desc_t = ZE_STRUCTURE_TYPE_MUTABLE_COMMAND_ID_EXP_DESC {
        pub stype: ze_structure_type_t, pub pNext: *const c_void, pub flags: ze_mutable_command_exp_flags_t,
    }
    pub struct ze_mutable_command_list_exp_properties_t = ZE_STRUCTURE_TYPE_MUTABLE_COMMAND_LIST_EXP_PROPERTIES {
        pub stype: ze_structure_type_t,
        pub pNext: *mut c_void,
        pub mutableCommandListFlags: ze_mutable_command_list_exp_flags_t,
        pub mutableCommandFlags: ze_mutable_command_exp_flags_t,
    }
    pub struct ze_mutable_command_list_exp_desc_t = ZE_STRUCTURE_TYPE_MUTABLE_COMMAND_LIST_EXP_DESC {
        pub stype: ze_structure_type_t, pub pNext: *const c_void, pub flags: ze_mutable_command_list_exp_flags_t,
    }
    pub struct ze_mutable_commands_exp_desc_t = ZE_STRUCTURE_TYPE_MUTABLE_COMMANDS_EXP_DESC {
        pub stype: ze_structure_type_t, pub pNext: *const c_void, pub flags: u32,
    }
    pub struct ze_mutable_kernel_argument_exp_desc_t = ZE_STRUCTURE_TYPE_MUTABLE_KERNEL_ARGUMENT_EXP_DESC {
        pub stype: ze_structure_type_t,
        pub pNext: *const c_void,
        pub commandId: u64,
        pub argIndex: u32,
        pub argSize: usize,
        pub pArgValue: *const c_void,
    }
    pub struct ze_mutable_group_count_exp_desc_t = ZE_STRUCTURE_TYPE_MUTABLE_GROUP_COUNT_EXP_DESC {
        pub stype: ze_structure_type_t, pub pNext: *const c_void, pub commandId: u64, pub pGroupCount: *const crate::ze_group_count_t,
    }
    pub struct ze_mutable_group_size_exp_desc_t = ZE_STRUCTURE_TYPE_MUTABLE_GROUP_SIZE_EXP_DESC {
        pub stype: ze_structure_type_t,
        pub pNext: *const c_void,
        pub commandId: u64,
        pub groupSizeX: u32,
        pub groupSizeY: u32,
        pub groupSizeZ: u32,
    }
    pub struct ze_mutable_global_offset_exp_desc_t = ZE_STRUCTURE_TYPE_MUTABLE_GLOBAL_OFFSET_EXP_DESC {
        pub stype: ze_structure_type_t,
        pub pNext: *const c_void,
        pub commandId: u64,
        pub offsetX: u32,
        pub offsetY: u32,
        pub offsetZ: u32,
    }
}
