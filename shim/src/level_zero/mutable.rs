//! `ZE_experimental_mutable_command_list`: commands of a closed regular list changed in place.
//! The updates are recorded into the list's graph, so later executions record what they run;
//! the functions themselves come from `zeDriverGetExtensionFunctionAddress`, which hands out the
//! shim's hooks instead.

use super::hooks::{args, extension};
use super::kernels::{self, arg_value};
use super::lists::RegularList;
use super::state::with_recorder;
use super::{key, succeeded, unsupported, Recorded};
use crate::entry::Forward;
use crate::recorder::Recorder;
use std::ffi::{c_void, CStr};
use ze_sys::*;

/// `zeDriverGetExtensionFunctionAddress`: the shim's hook of each extension function it knows.
pub unsafe fn extension_address(
    forward: &mut Forward<'_, ze_result_t>,
    (_driver, name, address): args::zeDriverGetExtensionFunctionAddress,
) -> Recorded {
    if succeeded(forward) && !name.is_null() && !address.is_null() {
        // SAFETY: the call succeeded with this name and wrote the driver's function.
        let (name, found) = unsafe { (CStr::from_ptr(name), *address) };
        if let Some(hook) = extension::substitute(name, found) {
            // SAFETY: the program's out-pointer, which the driver just wrote.
            unsafe { *address = hook };
        }
    }
    Ok(())
}

pub unsafe fn next_command_id(
    forward: &mut Forward<'_, ze_result_t>,
    (list, _desc, id): args::zeCommandListGetNextCommandIdExp,
) -> Recorded {
    if succeeded(forward) && !id.is_null() {
        // SAFETY: the call succeeded, so it wrote the identifier.
        let id = unsafe { *id };
        with_recorder(|state, _| {
            state
                .lists
                .get_mut(&key(list))
                .map(|list| list.next_command_id = Some(id))
        })?;
    }
    Ok(())
}

/// What one update description asks, read from the program's chain.
enum Update {
    Argument {
        command: u64,
        index: u32,
        value: kernels::ArgValue,
    },
    GroupCount {
        command: u64,
        groups: [u32; 3],
    },
    GroupSize {
        command: u64,
        size: [u32; 3],
    },
    GlobalOffset {
        command: u64,
        offset: [u32; 3],
    },
    Unknown,
}

/// The updates of a `ze_mutable_commands_exp_desc_t` chain.
///
/// # Safety
/// `desc` is a valid description whose chain holds valid structures.
unsafe fn updates(desc: *const ze_mutable_commands_exp_desc_t) -> Vec<Update> {
    let mut updates = Vec::new();
    // SAFETY (whole loop): each structure of the chain starts with its type and next pointer.
    let mut next = unsafe { (*desc).pNext };
    while !next.is_null() {
        let stype = unsafe { *next.cast::<ze_structure_type_t>() };
        let update = unsafe {
            match stype {
                ZE_STRUCTURE_TYPE_MUTABLE_KERNEL_ARGUMENT_EXP_DESC => {
                    let d = &*next.cast::<ze_mutable_kernel_argument_exp_desc_t>();
                    Update::Argument {
                        command: d.commandId,
                        index: d.argIndex,
                        value: arg_value(d.argSize, d.pArgValue),
                    }
                }
                ZE_STRUCTURE_TYPE_MUTABLE_GROUP_COUNT_EXP_DESC => {
                    let d = &*next.cast::<ze_mutable_group_count_exp_desc_t>();
                    let g = &*d.pGroupCount;
                    Update::GroupCount {
                        command: d.commandId,
                        groups: [g.groupCountX, g.groupCountY, g.groupCountZ],
                    }
                }
                ZE_STRUCTURE_TYPE_MUTABLE_GROUP_SIZE_EXP_DESC => {
                    let d = &*next.cast::<ze_mutable_group_size_exp_desc_t>();
                    Update::GroupSize {
                        command: d.commandId,
                        size: [d.groupSizeX, d.groupSizeY, d.groupSizeZ],
                    }
                }
                ZE_STRUCTURE_TYPE_MUTABLE_GLOBAL_OFFSET_EXP_DESC => {
                    let d = &*next.cast::<ze_mutable_global_offset_exp_desc_t>();
                    Update::GlobalOffset {
                        command: d.commandId,
                        offset: [d.offsetX, d.offsetY, d.offsetZ],
                    }
                }
                _ => Update::Unknown,
            }
        };
        updates.push(update);
        next = unsafe { *next.cast::<*const c_void>().add(1) };
    }
    updates
}

/// Applies `update` to the launch it names and records the launch again.
fn apply(
    recorder: &mut Recorder,
    list: &mut RegularList,
    update: Update,
) -> Result<(), &'static str> {
    let command = match &update {
        Update::Argument { command, .. }
        | Update::GroupCount { command, .. }
        | Update::GroupSize { command, .. }
        | Update::GlobalOffset { command, .. } => *command,
        Update::Unknown => return Err("an update of a kind the shim does not know"),
    };
    let node = *list
        .command_ids
        .get(&command)
        .ok_or("an update of a command the shim did not see appended")?;
    let launch = list
        .launches
        .get_mut(&node)
        .ok_or("an update of a command that is not a kernel launch")?;
    match update {
        Update::Argument { index, value, .. } => launch.state.set(index as usize, value),
        Update::GroupCount { groups, .. } => launch.groups = groups,
        Update::GroupSize { size, .. } => launch.state.group_size = Some(size),
        Update::GlobalOffset { offset, .. } => launch.state.offset = offset,
        Update::Unknown => {}
    }
    let (command, accesses) = kernels::command(recorder, launch)?;
    list.graph.nodes[node].command = command;
    list.accesses[node] = accesses;
    Ok(())
}

pub unsafe fn update_commands(
    forward: &mut Forward<'_, ze_result_t>,
    (list, desc): args::zeCommandListUpdateMutableCommandsExp,
) -> Recorded {
    if !succeeded(forward) || desc.is_null() {
        return Ok(());
    }
    // SAFETY: the call succeeded with this description.
    let updates = unsafe { updates(desc) };
    with_recorder(|state, recorder| {
        let Some(list) = state.lists.get_mut(&key(list)) else {
            return recorder.partial(
                "zeCommandListUpdateMutableCommandsExp",
                "a command list the shim did not see created",
            );
        };
        for update in updates {
            if let Err(reason) = apply(recorder, list, update) {
                recorder.partial("zeCommandListUpdateMutableCommandsExp", reason);
            }
        }
    })
}

pub unsafe fn update_signal_event(
    forward: &mut Forward<'_, ze_result_t>,
    _args: args::zeCommandListUpdateMutableCommandSignalEventExp,
) -> Recorded {
    unsupported(
        forward,
        "zeCommandListUpdateMutableCommandSignalEventExp",
        "updates of a command's events are not recorded",
    )
}

pub unsafe fn update_wait_events(
    forward: &mut Forward<'_, ze_result_t>,
    _args: args::zeCommandListUpdateMutableCommandWaitEventsExp,
) -> Recorded {
    unsupported(
        forward,
        "zeCommandListUpdateMutableCommandWaitEventsExp",
        "updates of a command's events are not recorded",
    )
}
