//! Event pools and events. An event's state (signaled or not) changes where the device would
//! change it, in the order commands execute: signals and resets are OpenCL native kernels (host
//! functions the runtime runs as commands) placed after the command that signals, or where the
//! reset stands. A command that waits for events is preceded by a native kernel with the same
//! dependencies as the command, the probe, which looks at each event when the command could start:
//! the command waits on one OpenCL user event per awaited event, opened by the probe if the event
//! is signaled then, or by the event's next signal.

use crate::common::*;
use crate::device::Context;
use crate::opencl::{check, cl, runtime, Runtime};
use opencl_sys::*;
use std::ffi::c_void;
use std::ptr;
use std::sync::{Condvar, Mutex, MutexGuard};
use std::time::{Duration, Instant};
use ze_sys::*;

/// Events need no shared storage here: a pool only bounds their indices.
pub struct EventPool {
    count: u32,
}

impl Handle for EventPool {
    type Raw = _ze_event_pool_handle_t;
}

struct State {
    signaled: bool,
    /// User events of commands waiting for the next signal.
    waiting: Vec<cl_event>,
    /// The command whose completion signals or signaled the event, for its timestamps.
    signaled_by: Option<cl_event>,
}

pub struct Event {
    state: Mutex<State>,
    changed: Condvar,
}

// OpenCL events may be used from any thread.
unsafe impl Send for Event {}
unsafe impl Sync for Event {}

impl Handle for Event {
    type Raw = _ze_event_handle_t;
}

/// Opens a user event and drops the driver's reference to it.
fn open(rt: &Runtime, user_event: cl_event) {
    unsafe {
        cl!(rt, clSetUserEventStatus(user_event, CL_COMPLETE));
        cl!(rt, clReleaseEvent(user_event));
    }
}

impl Event {
    fn lock(&self) -> MutexGuard<'_, State> {
        self.state.lock().unwrap_or_else(|p| p.into_inner())
    }

    fn signal(&self, rt: &Runtime) {
        let mut state = self.lock();
        state.signaled = true;
        state.waiting.drain(..).for_each(|user_event| open(rt, user_event));
        self.changed.notify_all();
    }

    fn reset(&self) {
        self.lock().signaled = false;
    }

    /// Opens `user_event` (whose reference passes to the event) now if signaled, else at the next signal.
    fn open_when_signaled(&self, rt: &Runtime, user_event: cl_event) {
        let mut state = self.lock();
        if state.signaled {
            open(rt, user_event);
        } else {
            state.waiting.push(user_event);
        }
    }

    /// Keeps `command` as the one that signals the event, for its timestamps.
    fn signaled_by(&self, rt: &Runtime, command: cl_event) {
        unsafe { cl!(rt, clRetainEvent(command)) };
        if let Some(previous) = self.lock().signaled_by.replace(command) {
            unsafe { cl!(rt, clReleaseEvent(previous)) };
        }
    }

    /// Waits at most `timeout` nanoseconds for the event to be signaled.
    fn synchronize(&self, timeout: u64) -> ZeResult<()> {
        let deadline = Instant::now().checked_add(Duration::from_nanos(timeout));
        let mut state = self.lock();
        while !state.signaled {
            state = match deadline {
                None => self.changed.wait(state).unwrap_or_else(|p| p.into_inner()),
                Some(deadline) => {
                    let left = deadline.saturating_duration_since(Instant::now());
                    if left.is_zero() {
                        return Err(ZE_RESULT_NOT_READY);
                    }
                    self.changed.wait_timeout(state, left).unwrap_or_else(|p| p.into_inner()).0
                }
            };
        }
        Ok(())
    }
}

impl Drop for Event {
    fn drop(&mut self) {
        if let Ok(rt) = runtime() {
            let mut state = self.lock();
            // Nothing may wait forever for an event that is gone.
            state.waiting.drain(..).for_each(|user_event| open(rt, user_event));
            if let Some(command) = state.signaled_by.take() {
                unsafe { cl!(rt, clReleaseEvent(command)) };
            }
        }
    }
}

/// What a native kernel does to events when it runs.
enum Task {
    Signal(&'static Event),
    Reset(Vec<&'static Event>),
    /// Each event with the user event of the waiting command.
    Probe(Vec<(&'static Event, cl_event)>),
}

extern "C" fn run_task(arguments: *mut c_void) {
    // SAFETY: the runtime copied the argument block, which holds the task `enqueue_task` leaked.
    let task = unsafe { Box::from_raw(*arguments.cast::<*mut Task>()) };
    let Ok(rt) = runtime() else { return };
    match *task {
        Task::Signal(event) => event.signal(rt),
        Task::Reset(events) => events.iter().for_each(|event| event.reset()),
        Task::Probe(waits) => waits.into_iter().for_each(|(event, user_event)| event.open_when_signaled(rt, user_event)),
    }
}

/// Enqueues `task` after `waits` (empty: as any command without a wait list); returns its event.
fn enqueue_task(rt: &Runtime, queue: cl_command_queue, task: Task, waits: &[cl_event]) -> ZeResult<cl_event> {
    let task = Box::into_raw(Box::new(task));
    let (count, list) = (waits.len() as cl_uint, if waits.is_empty() { ptr::null() } else { waits.as_ptr() });
    let mut event = ptr::null_mut();
    let code = unsafe {
        cl!(rt, clEnqueueNativeKernel(queue, Some(run_task), (&raw const task).cast_mut().cast(), std::mem::size_of::<*mut Task>(), 0, ptr::null(), ptr::null_mut(), count, list, &mut event))
    };
    if let Err(error) = check(code) {
        // SAFETY: not enqueued, so still ours.
        drop(unsafe { Box::from_raw(task) });
        return Err(error);
    }
    Ok(event)
}

/// Signals `event` once `command` completes; returns the signal's event, which completes after it.
pub fn signal_after(rt: &Runtime, queue: cl_command_queue, event: &'static Event, command: cl_event) -> ZeResult<cl_event> {
    event.signaled_by(rt, command);
    enqueue_task(rt, queue, Task::Signal(event), &[command])
}

/// Resets `events` after `waits`, as a command; returns its event.
pub fn reset_after(rt: &Runtime, queue: cl_command_queue, events: Vec<&'static Event>, waits: &[cl_event]) -> ZeResult<cl_event> {
    enqueue_task(rt, queue, Task::Reset(events), waits)
}

/// Prepares a command's waits for `events`: enqueues the probe after `waits` (the command's own
/// dependencies) and returns the user events the command must wait on; the caller releases them.
pub fn await_events(rt: &Runtime, queue: cl_command_queue, events: &[&'static Event], waits: &[cl_event]) -> ZeResult<Vec<cl_event>> {
    let mut user_events = Vec::with_capacity(events.len());
    for _ in events {
        let mut code = CL_SUCCESS;
        let user_event = unsafe { cl!(rt, clCreateUserEvent(rt.context, &mut code)) };
        if let Err(error) = check(code) {
            user_events.drain(..).for_each(|user_event| open(rt, user_event));
            return Err(error);
        }
        user_events.push(user_event);
    }
    // The probe holds a reference to each user event until it opens it or hands it to the event.
    for &user_event in &user_events {
        unsafe { cl!(rt, clRetainEvent(user_event)) };
    }
    let probe = Task::Probe(events.iter().copied().zip(user_events.iter().copied()).collect());
    match enqueue_task(rt, queue, probe, waits) {
        Ok(probe) => {
            unsafe { cl!(rt, clReleaseEvent(probe)) };
            Ok(user_events)
        }
        Err(error) => {
            for user_event in user_events {
                open(rt, user_event);
                unsafe { cl!(rt, clReleaseEvent(user_event)) };
            }
            Err(error)
        }
    }
}

/// Whether `event` completed: `Ok(true)`, `Ok(false)` while pending, an error if it failed.
fn completed(rt: &Runtime, event: cl_event) -> ZeResult<bool> {
    let mut status: cl_int = 0;
    check(unsafe { cl!(rt, clGetEventInfo(event, CL_EVENT_COMMAND_EXECUTION_STATUS, std::mem::size_of::<cl_int>(), (&raw mut status).cast(), ptr::null_mut())) })?;
    match status {
        CL_COMPLETE => Ok(true),
        failed if failed < 0 => Err(ZE_RESULT_ERROR_DEVICE_LOST),
        _ => Ok(false),
    }
}

/// Waits for OpenCL event `event` at most `timeout` nanoseconds (`u64::MAX`: without limit);
/// `ZE_RESULT_NOT_READY` when it has not completed by then.
pub fn wait(rt: &Runtime, event: cl_event, timeout: u64) -> ZeResult<()> {
    if timeout == u64::MAX {
        check(unsafe { cl!(rt, clWaitForEvents(1, &event)) }).map_err(|_| ZE_RESULT_ERROR_DEVICE_LOST)?;
        return Ok(());
    }
    let deadline = Instant::now() + Duration::from_nanos(timeout);
    loop {
        if completed(rt, event)? {
            return Ok(());
        }
        if Instant::now() >= deadline {
            return Err(ZE_RESULT_NOT_READY);
        }
        std::thread::sleep(Duration::from_micros(20));
    }
}

pub unsafe fn create_pool(
    context: ze_context_handle_t,
    desc: *const ze_event_pool_desc_t,
    _devices: u32,
    _device_list: *mut ze_device_handle_t,
    pool: *mut ze_event_pool_handle_t,
) -> ZeResult<()> {
    unsafe { Context::from_handle(context) }?;
    let desc = unsafe { desc.as_ref() }.ok_or(ZE_RESULT_ERROR_INVALID_NULL_POINTER)?;
    if desc.count == 0 {
        return Err(ZE_RESULT_ERROR_INVALID_SIZE);
    }
    unsafe { put(pool, EventPool { count: desc.count }.into_handle()) }
}

pub unsafe fn destroy_pool(pool: ze_event_pool_handle_t) -> ZeResult<()> {
    unsafe { EventPool::destroy(pool) }
}

pub unsafe fn create(pool: ze_event_pool_handle_t, desc: *const ze_event_desc_t, event: *mut ze_event_handle_t) -> ZeResult<()> {
    let pool = unsafe { EventPool::from_handle(pool) }?;
    let desc = unsafe { desc.as_ref() }.ok_or(ZE_RESULT_ERROR_INVALID_NULL_POINTER)?;
    if desc.index >= pool.count {
        return Err(ZE_RESULT_ERROR_INVALID_ARGUMENT);
    }
    let created = Event { state: Mutex::new(State { signaled: false, waiting: Vec::new(), signaled_by: None }), changed: Condvar::new() };
    unsafe { put(event, created.into_handle()) }
}

pub unsafe fn destroy(event: ze_event_handle_t) -> ZeResult<()> {
    unsafe { Event::destroy(event) }
}

pub unsafe fn host_signal(event: ze_event_handle_t) -> ZeResult<()> {
    unsafe { Event::from_handle(event) }?.signal(runtime()?);
    Ok(())
}

pub unsafe fn host_synchronize(event: ze_event_handle_t, timeout: u64) -> ZeResult<()> {
    unsafe { Event::from_handle(event) }?.synchronize(timeout)
}

pub unsafe fn query_status(event: ze_event_handle_t) -> ZeResult<()> {
    unsafe { host_synchronize(event, 0) }
}

pub unsafe fn host_reset(event: ze_event_handle_t) -> ZeResult<()> {
    unsafe { Event::from_handle(event) }?.reset();
    Ok(())
}

/// The start and end of the command that signaled the event, on the device's clock.
pub unsafe fn kernel_timestamp(event: ze_event_handle_t, result: *mut ze_kernel_timestamp_result_t) -> ZeResult<()> {
    let event = unsafe { Event::from_handle(event) }?;
    let rt = runtime()?;
    let result = unsafe { result.as_mut() }.ok_or(ZE_RESULT_ERROR_INVALID_NULL_POINTER)?;
    event.synchronize(0)?;
    let state = event.lock();
    let Some(command) = state.signaled_by else {
        // Signaled from the host: no command, no duration.
        *result = ze_kernel_timestamp_result_t::new();
        return Ok(());
    };
    let time = |param| -> ZeResult<u64> {
        let mut value: cl_ulong = 0;
        check(unsafe { cl!(rt, clGetEventProfilingInfo(command, param, std::mem::size_of::<cl_ulong>(), (&raw mut value).cast(), ptr::null_mut())) })?;
        Ok(value)
    };
    let span = ze_kernel_timestamp_data_t { kernelStart: time(CL_PROFILING_COMMAND_START)?, kernelEnd: time(CL_PROFILING_COMMAND_END)? };
    *result = ze_kernel_timestamp_result_t { global: span, context: span };
    Ok(())
}
