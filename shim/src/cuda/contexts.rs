//! Contexts the program destroys or resets: their memory goes with them, so their work closes
//! first, the final contents of what the capture wrote there are read while they exist, and the
//! recorder forgets that memory. Limits set on a context (`cuCtxSetLimit`) go with its device.
//! Creating, pushing, popping and setting contexts need no hook: `device::current` asks the driver
//! for the current context each time.

use super::hooks::{CUcontext, CUdevice};
use std::ffi::c_int;
use super::access::DeviceAccess;
use super::memory::forget;
use super::state::with_state;
use super::state::with_recorder;
use super::sync::closed;
use super::{key, succeeded, CUresult, Recorded};
use crate::entry::Forward;
use crate::recorder::{Key, SyncScope};

/// Before `context` is destroyed: its work closes (destroying a context waits for it, so the
/// shim waits for it first: copies still delivering data into pinned memory are taken once
/// done), the final contents of its memory are read, and that memory is forgotten.
fn ending(context: Key, call: &str) -> Recorded {
    super::sync::settle(call)?;
    with_recorder(|state, recorder| {
        let freed: Vec<Key> = state.memory_contexts.iter().filter(|&(_, &owner)| owner == context).map(|(&mem, _)| mem).collect();
        super::sync::close_window(state, recorder, call, SyncScope::Everything);
        recorder.read_final_contents_of(&freed, &DeviceAccess::new(state));
        for mem in freed {
            forget(state, recorder, mem);
        }
        super::access::context_gone(context);
    })
}

pub unsafe fn destroy(forward: &mut Forward<'_, CUresult>, call: &str, context: CUcontext) -> Recorded {
    ending(key(context), call)?;
    forward.call();
    Ok(())
}

/// `cuCtxSetLimit`: the device's kernels run with this limit (a device heap's size, a stack's, a
/// printf buffer's, dynamic parallelism's depths), which the replay must set too; the trace's
/// device keeps it as `cuda_limit.N` (N: the `CUlimit` value).
pub unsafe fn set_limit(forward: &mut Forward<'_, CUresult>, call: &str, limit: c_int, value: usize) -> Recorded {
    if !succeeded(forward) {
        return Ok(());
    }
    with_recorder(|state, recorder| {
        let Some((_, device)) = super::device::current(state, recorder) else { return };
        if !recorder.device_property(device, &format!("cuda_limit.{limit}"), &value.to_string()) {
            recorder.partial(call, "a limit set after the device was written to the trace is not replayed");
        }
    })
}

/// `cuDevicePrimaryCtxRetain`: which context is the device's primary one, and one more retain.
pub unsafe fn primary_retain(forward: &mut Forward<'_, CUresult>, _call: &str, context: *mut CUcontext, device: CUdevice) -> Recorded {
    if !succeeded(forward) {
        return Ok(());
    }
    // SAFETY: the call succeeded, so it wrote the context.
    let context = key(unsafe { *context });
    with_state(|state| {
        let (primary, retains) = state.primary_contexts.entry(device as Key).or_insert((context, 0));
        *primary = context;
        *retains += 1;
    });
    Ok(())
}

/// `cuDevicePrimaryCtxRelease`: the last release destroys the primary context.
pub unsafe fn primary_release(forward: &mut Forward<'_, CUresult>, call: &str, device: CUdevice) -> Recorded {
    let last = with_state(|state| state.primary_contexts.get(&(device as Key)).and_then(|&(context, retains)| (retains == 1).then_some(context)));
    if let Some(context) = last {
        ending(context, call)?;
    }
    if succeeded(forward) {
        with_state(|state| {
            if let Some((_, retains)) = state.primary_contexts.get_mut(&(device as Key)) {
                *retains = retains.saturating_sub(1);
            }
        });
    }
    Ok(())
}

/// `cuDevicePrimaryCtxReset`: the primary context's memory is freed. A primary context the shim
/// did not see retained still ends the window; its memory stays known until its addresses are
/// allocated again.
pub unsafe fn primary_reset(forward: &mut Forward<'_, CUresult>, call: &str, device: CUdevice) -> Recorded {
    match with_state(|state| state.primary_contexts.get(&(device as Key)).map(|&(context, _)| context)) {
        Some(context) => ending(context, call)?,
        None => closed(call, SyncScope::Everything)?,
    }
    forward.call();
    Ok(())
}
