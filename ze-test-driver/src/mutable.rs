//! `ZE_experimental_mutable_command_list` 1.0: command identifiers are the index the command takes
//! in its list; updates change the kept command, so the next execution runs the new values.

use crate::common::*;
use crate::event::Event;
use crate::kernel::bind_argument;
use crate::list::{CommandList, Kind, State};
use crate::opencl::runtime;
use crate::submit::{Command, Launch, Operation};
use ze_sys::*;

/// The state of a mutable list, which must be one.
fn mutable_state(list: &CommandList) -> ZeResult<std::sync::MutexGuard<'_, State>> {
    match list.kind {
        Kind::Regular { mutable: true } => Ok(list.lock()),
        _ => Err(ZE_RESULT_ERROR_INVALID_ARGUMENT),
    }
}

fn command(state: &mut State, id: u64) -> ZeResult<&mut Command> {
    state.commands.get_mut(id as usize).ok_or(ZE_RESULT_ERROR_INVALID_ARGUMENT)
}

fn launch(state: &mut State, id: u64) -> ZeResult<&mut Launch> {
    match &mut command(state, id)?.operation {
        Operation::Launch(launch) => Ok(launch),
        _ => Err(ZE_RESULT_ERROR_INVALID_ARGUMENT),
    }
}

pub unsafe fn next_command_id(list: ze_command_list_handle_t, desc: *const ze_mutable_command_id_exp_desc_t, id: *mut u64) -> ZeResult<()> {
    let list = unsafe { CommandList::from_handle(list) }?;
    if desc.is_null() {
        return Err(ZE_RESULT_ERROR_INVALID_NULL_POINTER);
    }
    let state = mutable_state(list)?;
    if state.closed {
        return Err(ZE_RESULT_ERROR_INVALID_ARGUMENT);
    }
    unsafe { put(id, state.commands.len() as u64) }
}

/// Applies each update chained to `desc`.
pub unsafe fn update(list: ze_command_list_handle_t, desc: *const ze_mutable_commands_exp_desc_t) -> ZeResult<()> {
    let list = unsafe { CommandList::from_handle(list) }?;
    let rt = runtime()?;
    let desc = unsafe { desc.as_ref() }.ok_or(ZE_RESULT_ERROR_INVALID_NULL_POINTER)?;
    let mut state = mutable_state(list)?;
    for (stype, structure) in unsafe { chain(desc.pNext) } {
        // SAFETY (each arm): the structure type says what the caller chained.
        match stype {
            ZE_STRUCTURE_TYPE_MUTABLE_KERNEL_ARGUMENT_EXP_DESC => {
                let argument = unsafe { &*structure.cast::<ze_mutable_kernel_argument_exp_desc_t>() };
                let launch = launch(&mut state, argument.commandId)?;
                unsafe { bind_argument(rt, launch.kernel, &launch.args, argument.argIndex, argument.argSize, argument.pArgValue) }?;
            }
            ZE_STRUCTURE_TYPE_MUTABLE_GROUP_COUNT_EXP_DESC => {
                let count = unsafe { &*structure.cast::<ze_mutable_group_count_exp_desc_t>() };
                let groups = unsafe { count.pGroupCount.as_ref() }.ok_or(ZE_RESULT_ERROR_INVALID_NULL_POINTER)?;
                launch(&mut state, count.commandId)?.group_count = [groups.groupCountX, groups.groupCountY, groups.groupCountZ];
            }
            ZE_STRUCTURE_TYPE_MUTABLE_GROUP_SIZE_EXP_DESC => {
                let size = unsafe { &*structure.cast::<ze_mutable_group_size_exp_desc_t>() };
                if [size.groupSizeX, size.groupSizeY, size.groupSizeZ].contains(&0) {
                    return Err(ZE_RESULT_ERROR_INVALID_GROUP_SIZE_DIMENSION);
                }
                launch(&mut state, size.commandId)?.dispatch.group_size = [size.groupSizeX, size.groupSizeY, size.groupSizeZ];
            }
            ZE_STRUCTURE_TYPE_MUTABLE_GLOBAL_OFFSET_EXP_DESC => {
                let offset = unsafe { &*structure.cast::<ze_mutable_global_offset_exp_desc_t>() };
                launch(&mut state, offset.commandId)?.dispatch.offset = [offset.offsetX, offset.offsetY, offset.offsetZ];
            }
            _ => return Err(ZE_RESULT_ERROR_INVALID_ARGUMENT),
        }
    }
    Ok(())
}

pub unsafe fn update_signal_event(list: ze_command_list_handle_t, id: u64, event: ze_event_handle_t) -> ZeResult<()> {
    let list = unsafe { CommandList::from_handle(list) }?;
    let signal = if event.is_null() { None } else { Some(unsafe { Event::from_handle(event) }?) };
    command(&mut *mutable_state(list)?, id)?.signal = signal;
    Ok(())
}

/// Replaces the wait events one for one; a null entry removes that wait.
pub unsafe fn update_wait_events(list: ze_command_list_handle_t, id: u64, count: u32, events: *mut ze_event_handle_t) -> ZeResult<()> {
    let list = unsafe { CommandList::from_handle(list) }?;
    let mut state = mutable_state(list)?;
    let command = command(&mut state, id)?;
    if events.is_null() {
        command.waits.clear();
        return Ok(());
    }
    if count as usize != command.waits.len() {
        return Err(ZE_RESULT_ERROR_INVALID_SIZE);
    }
    let mut waits = Vec::with_capacity(count as usize);
    for index in 0..count as usize {
        let handle = unsafe { *events.add(index) };
        if !handle.is_null() {
            waits.push(unsafe { Event::from_handle(handle) }?);
        }
    }
    command.waits = waits;
    Ok(())
}
