//! Command lists. A regular list keeps its commands (kernels copied with their arguments at
//! append time) until a queue executes it; an immediate list submits each command as it is
//! appended, on its own OpenCL queue. Lists created with `ZE_COMMAND_LIST_FLAG_IN_ORDER` (or
//! `ZE_COMMAND_QUEUE_FLAG_IN_ORDER` for immediate lists; spec 1.7) chain every command to the
//! one before; others only start in order.

use crate::common::*;
use crate::device::{check_device, mutable_offered, Context, MAX_FILL_PATTERN};
use crate::event::{wait, Event};
use crate::kernel::Kernel;
use crate::opencl::{check, cl, runtime, Runtime};
use crate::submit::{submit, ClQueue, Command, Launch, Operation, RegionSide};
use opencl_sys::*;
use std::ffi::c_void;
use std::sync::{Mutex, MutexGuard};
use ze_sys::*;

const COMMAND_LIST_FLAG_IN_ORDER: ze_command_list_flags_t = 1 << 3;
const COMMAND_QUEUE_FLAG_IN_ORDER: ze_command_queue_flags_t = 1 << 1;

pub enum Kind {
    Regular { mutable: bool },
    Immediate { queue: ClQueue, synchronous: bool },
}

pub struct State {
    pub commands: Vec<Command>,
    pub closed: bool,
    /// Immediate in-order lists: the last command submitted, which the next one follows.
    last: Option<cl_event>,
}

pub struct CommandList {
    pub kind: Kind,
    pub in_order: bool,
    state: Mutex<State>,
}

impl Handle for CommandList {
    type Raw = _ze_command_list_handle_t;
}

impl CommandList {
    pub fn lock(&self) -> MutexGuard<'_, State> {
        self.state.lock().unwrap_or_else(|p| p.into_inner())
    }

    fn new(kind: Kind, in_order: bool) -> CommandList {
        CommandList { kind, in_order, state: Mutex::new(State { commands: Vec::new(), closed: false, last: None }) }
    }

    /// Appends `command`: kept (regular lists) or submitted at once (immediate lists).
    fn append(&self, rt: &Runtime, command: Command) -> ZeResult<()> {
        let mut state = self.lock();
        let Kind::Immediate { queue, synchronous } = &self.kind else {
            if state.closed {
                command.release(rt);
                return Err(ZE_RESULT_ERROR_INVALID_ARGUMENT);
            }
            state.commands.push(command);
            return Ok(());
        };
        let after = if self.in_order { state.last } else { None };
        let submitted = submit(rt, queue, &command, after);
        command.release(rt);
        let event = submitted?;
        let waited = if *synchronous { wait(rt, event, u64::MAX) } else { Ok(()) };
        match state.last.replace(event) {
            Some(previous) => unsafe { cl!(rt, clReleaseEvent(previous)) },
            None => CL_SUCCESS,
        };
        waited
    }

    fn clear(&self, rt: &Runtime) {
        let mut state = self.lock();
        state.commands.drain(..).for_each(|command| command.release(rt));
        if let Some(last) = state.last.take() {
            unsafe { cl!(rt, clReleaseEvent(last)) };
        }
        state.closed = false;
    }
}

impl Drop for CommandList {
    fn drop(&mut self) {
        if let Ok(rt) = runtime() {
            self.clear(rt);
        }
    }
}

/// Whether the `pNext` chain of a list's description asks for a mutable list.
unsafe fn asks_mutable(next: *const c_void) -> bool {
    unsafe { chain(next) }.any(|(stype, _)| stype == ZE_STRUCTURE_TYPE_MUTABLE_COMMAND_LIST_EXP_DESC)
}

pub unsafe fn create(context: ze_context_handle_t, device: ze_device_handle_t, desc: *const ze_command_list_desc_t, list: *mut ze_command_list_handle_t) -> ZeResult<()> {
    unsafe { Context::from_handle(context) }?;
    check_device(device)?;
    let desc = unsafe { desc.as_ref() }.ok_or(ZE_RESULT_ERROR_INVALID_NULL_POINTER)?;
    let mutable = unsafe { asks_mutable(desc.pNext) };
    if mutable && !mutable_offered() {
        return Err(ZE_RESULT_ERROR_UNSUPPORTED_FEATURE);
    }
    let in_order = desc.flags & COMMAND_LIST_FLAG_IN_ORDER != 0;
    unsafe { put(list, CommandList::new(Kind::Regular { mutable }, in_order).into_handle()) }
}

pub unsafe fn create_immediate(
    context: ze_context_handle_t,
    device: ze_device_handle_t,
    desc: *const ze_command_queue_desc_t,
    list: *mut ze_command_list_handle_t,
) -> ZeResult<()> {
    unsafe { Context::from_handle(context) }?;
    check_device(device)?;
    let rt = runtime()?;
    let desc = unsafe { desc.as_ref() }.ok_or(ZE_RESULT_ERROR_INVALID_NULL_POINTER)?;
    let in_order = desc.flags & COMMAND_QUEUE_FLAG_IN_ORDER != 0;
    let kind = Kind::Immediate { queue: ClQueue::new(rt, in_order)?, synchronous: desc.mode == ZE_COMMAND_QUEUE_MODE_SYNCHRONOUS };
    unsafe { put(list, CommandList::new(kind, in_order).into_handle()) }
}

pub unsafe fn destroy(list: ze_command_list_handle_t) -> ZeResult<()> {
    unsafe { CommandList::destroy(list) }
}

pub unsafe fn close(list: ze_command_list_handle_t) -> ZeResult<()> {
    unsafe { CommandList::from_handle(list) }?.lock().closed = true;
    Ok(())
}

pub unsafe fn reset(list: ze_command_list_handle_t) -> ZeResult<()> {
    unsafe { CommandList::from_handle(list) }?.clear(runtime()?);
    Ok(())
}

/// The events a command signals and waits for, from the caller's handles.
unsafe fn events(signal: ze_event_handle_t, count: u32, waits: *mut ze_event_handle_t) -> ZeResult<(Option<&'static Event>, Vec<&'static Event>)> {
    let signal = if signal.is_null() { None } else { Some(unsafe { Event::from_handle(signal) }?) };
    if count > 0 && waits.is_null() {
        return Err(ZE_RESULT_ERROR_INVALID_NULL_POINTER);
    }
    let waits = (0..count as usize).map(|index| unsafe { Event::from_handle(*waits.add(index)) }).collect::<ZeResult<Vec<_>>>()?;
    Ok((signal, waits))
}

/// Appends `operation` with its events to `list`.
unsafe fn append(list: ze_command_list_handle_t, operation: Operation, signal: ze_event_handle_t, count: u32, waits: *mut ze_event_handle_t) -> ZeResult<()> {
    let rt = runtime()?;
    let found = unsafe { CommandList::from_handle(list) }.and_then(|list| Ok((list, unsafe { events(signal, count, waits) }?)));
    match found {
        Ok((list, (signal, waits))) => list.append(rt, Command { operation, signal, waits }),
        Err(error) => {
            Command { operation, signal: None, waits: Vec::new() }.release(rt);
            Err(error)
        }
    }
}

pub unsafe fn barrier(list: ze_command_list_handle_t, signal: ze_event_handle_t, count: u32, waits: *mut ze_event_handle_t) -> ZeResult<()> {
    unsafe { append(list, Operation::Barrier, signal, count, waits) }
}

pub unsafe fn wait_on_events(list: ze_command_list_handle_t, count: u32, waits: *mut ze_event_handle_t) -> ZeResult<()> {
    if count == 0 {
        return Ok(());
    }
    unsafe { append(list, Operation::Barrier, std::ptr::null_mut(), count, waits) }
}

pub unsafe fn signal_event(list: ze_command_list_handle_t, event: ze_event_handle_t) -> ZeResult<()> {
    if event.is_null() {
        return Err(ZE_RESULT_ERROR_INVALID_NULL_HANDLE);
    }
    unsafe { append(list, Operation::Marker, event, 0, std::ptr::null_mut()) }
}

pub unsafe fn event_reset(list: ze_command_list_handle_t, event: ze_event_handle_t) -> ZeResult<()> {
    let event = unsafe { Event::from_handle(event) }?;
    unsafe { append(list, Operation::Reset(vec![event]), std::ptr::null_mut(), 0, std::ptr::null_mut()) }
}

/// Memory hints (prefetch, advice): nothing to do, but they keep their place in the list.
pub unsafe fn hint(list: ze_command_list_handle_t) -> ZeResult<()> {
    unsafe { append(list, Operation::Marker, std::ptr::null_mut(), 0, std::ptr::null_mut()) }
}

pub unsafe fn memory_copy(
    list: ze_command_list_handle_t,
    dst: *mut c_void,
    src: *const c_void,
    size: usize,
    signal: ze_event_handle_t,
    count: u32,
    waits: *mut ze_event_handle_t,
) -> ZeResult<()> {
    if dst.is_null() || src.is_null() {
        return Err(ZE_RESULT_ERROR_INVALID_NULL_POINTER);
    }
    unsafe { append(list, Operation::Copy { dst: dst as usize, src: src as usize, size }, signal, count, waits) }
}

pub unsafe fn memory_fill(
    list: ze_command_list_handle_t,
    dst: *mut c_void,
    pattern: *const c_void,
    pattern_size: usize,
    size: usize,
    signal: ze_event_handle_t,
    count: u32,
    waits: *mut ze_event_handle_t,
) -> ZeResult<()> {
    if dst.is_null() || pattern.is_null() {
        return Err(ZE_RESULT_ERROR_INVALID_NULL_POINTER);
    }
    if !pattern_size.is_power_of_two() || pattern_size > MAX_FILL_PATTERN || !size.is_multiple_of(pattern_size) {
        return Err(ZE_RESULT_ERROR_INVALID_SIZE);
    }
    // The pattern is the caller's until the call returns.
    let pattern = unsafe { std::slice::from_raw_parts(pattern.cast::<u8>(), pattern_size) }.to_vec();
    unsafe { append(list, Operation::Fill { dst: dst as usize, pattern, size }, signal, count, waits) }
}

pub unsafe fn memory_copy_region(
    list: ze_command_list_handle_t,
    dst: *mut c_void,
    dst_region: *const ze_copy_region_t,
    dst_pitch: u32,
    dst_slice_pitch: u32,
    src: *const c_void,
    src_region: *const ze_copy_region_t,
    src_pitch: u32,
    src_slice_pitch: u32,
    signal: ze_event_handle_t,
    count: u32,
    waits: *mut ze_event_handle_t,
) -> ZeResult<()> {
    let (dst_region, src_region) = unsafe { (dst_region.as_ref(), src_region.as_ref()) };
    let (Some(&dst_region), Some(&src_region)) = (dst_region, src_region) else { return Err(ZE_RESULT_ERROR_INVALID_NULL_POINTER) };
    if dst.is_null() || src.is_null() {
        return Err(ZE_RESULT_ERROR_INVALID_NULL_POINTER);
    }
    let extent = |r: &ze_copy_region_t| (r.width, r.height, r.depth);
    if extent(&dst_region) != extent(&src_region) {
        return Err(ZE_RESULT_ERROR_INVALID_ARGUMENT);
    }
    let dst = RegionSide { pointer: dst as usize, region: dst_region, pitch: dst_pitch as usize, slice_pitch: dst_slice_pitch as usize };
    let src = RegionSide { pointer: src as usize, region: src_region, pitch: src_pitch as usize, slice_pitch: src_slice_pitch as usize };
    unsafe { append(list, Operation::CopyRegion { dst, src }, signal, count, waits) }
}

pub unsafe fn launch(
    list: ze_command_list_handle_t,
    kernel: ze_kernel_handle_t,
    group_count: *const ze_group_count_t,
    signal: ze_event_handle_t,
    count: u32,
    waits: *mut ze_event_handle_t,
) -> ZeResult<()> {
    let commands = unsafe { CommandList::from_handle(list) }?;
    let kernel = unsafe { Kernel::from_handle(kernel) }?;
    let rt = runtime()?;
    let group_count = unsafe { group_count.as_ref() }.ok_or(ZE_RESULT_ERROR_INVALID_NULL_POINTER)?;
    // A regular list keeps the arguments of append time: its launch gets a copy of the kernel.
    let owned = matches!(commands.kind, Kind::Regular { .. });
    let launched = if owned {
        let mut code = CL_SUCCESS;
        let copy = unsafe { cl!(rt, clCloneKernel(kernel.kernel, &mut code)) };
        check(code)?;
        copy
    } else {
        kernel.kernel
    };
    let launch = Launch {
        kernel: launched,
        owned,
        args: kernel.args.clone(),
        group_count: [group_count.groupCountX, group_count.groupCountY, group_count.groupCountZ],
        dispatch: kernel.dispatch(),
    };
    unsafe { append(list, Operation::Launch(launch), signal, count, waits) }
}
