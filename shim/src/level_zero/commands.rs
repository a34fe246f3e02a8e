//! Appended commands: kernel launches, copies (linear and region), fills, barriers, event
//! waits, signals and resets. Each is described before the real call (arguments as set now):
//! on a regular list it joins the list's graph, on an immediate list it is prepared then
//! submitted to the recorder.

use super::access::DeviceAccess;
use super::hooks::args;
use super::kernels::{self, LaunchState};
use super::lists::Appended;
use super::state::{with_recorder, State};
use super::submit::{submit, Work};
use super::{key, succeeded, Recorded};
use crate::entry::Forward;
use crate::recorder::{Access, HostRegion, Key, Order, Recorder};
use std::ffi::c_void;
use trace_format::{Command, Copy, Extent, Fill, Node, Place, SegmentId};
use ze_sys::*;

/// What a command does, described before its real call.
#[derive(Default)]
pub struct Described {
    pub command: Option<Command>,
    pub accesses: Vec<Access>,
    /// Host memory a copy reads (`Place::Host` source), taken when the command is submitted.
    pub host_source: Option<HostRegion>,
    pub received: Option<HostRegion>,
    pub launch: Option<LaunchState>,
}

/// How a command was appended: its list, ordering and events.
struct Append {
    call: &'static str,
    list: Key,
    order: Order,
    signal: Option<Key>,
    waits: Vec<Key>,
}

impl Append {
    /// # Safety
    /// `waits` holds `count` events (or is null).
    unsafe fn new(
        call: &'static str,
        list: ze_command_list_handle_t,
        order: Order,
        signal: ze_event_handle_t,
        count: u32,
        waits: *mut ze_event_handle_t,
    ) -> Append {
        let waits = match waits.is_null() {
            true => Vec::new(),
            // SAFETY: as documented.
            false => unsafe { std::slice::from_raw_parts(waits, count as usize) }
                .iter()
                .map(|&event| key(event))
                .collect(),
        };
        Append {
            call,
            list: key(list),
            order,
            signal: (!signal.is_null()).then(|| key(signal)),
            waits,
        }
    }
}

/// Appends what `describe` makes (a barrier and the trace marked partial with its reason when
/// it cannot) to the list: into a regular list's graph, or submitted from an immediate list.
fn append(
    forward: &mut Forward<'_, ze_result_t>,
    append: Append,
    describe: impl FnOnce(&State, &mut Recorder) -> Result<Described, &'static str>,
) -> Recorded {
    let before = with_recorder(|state, recorder| {
        let immediate = state
            .queues
            .get(&append.list)
            .is_some_and(|queue| queue.immediate);
        let mut described = describe(state, recorder).unwrap_or_else(|reason| {
            recorder.partial(append.call, reason);
            Described::default()
        });
        let prepared = immediate.then(|| {
            if let Some(region) = described.host_source.take() {
                take_host_source(recorder, described.command.as_mut(), region);
            }
            recorder.prepare(described.accesses.clone(), &DeviceAccess::new(state))
        });
        (described, prepared)
    })?;
    if !succeeded(forward) {
        return Ok(());
    }
    let (described, prepared) = before;
    with_recorder(|state, recorder| {
        let command = described.command.unwrap_or(Command::Barrier);
        match prepared {
            Some(prepared) => {
                let Append {
                    call,
                    list,
                    order,
                    signal,
                    waits,
                } = append;
                let work = Work {
                    call,
                    command,
                    order,
                    waits,
                    signal,
                    received: described.received,
                    event_effects: Vec::new(),
                };
                submit(state, recorder, list, prepared, work);
            }
            None => match state.lists.get_mut(&append.list) {
                Some(list) => {
                    let node = Node {
                        queue: None,
                        segment: SegmentId(0),
                        command,
                        call: append.call.into(),
                    };
                    let appended = Appended {
                        order: append.order,
                        waits: &append.waits,
                        signal: append.signal,
                    };
                    let index = list.add(node, appended, described.accesses);
                    if let Some(region) = described.host_source {
                        list.host_sources.push((index, region));
                    }
                    if let Some(launch) = described.launch {
                        list.launches.insert(index, launch);
                    }
                }
                None => {
                    recorder.partial(append.call, "a command list the shim did not see created")
                }
            },
        }
    })
}

/// Puts the bytes of host memory a copy reads into its source place, as they are now.
pub fn take_host_source(
    recorder: &mut Recorder,
    command: Option<&mut Command>,
    region: HostRegion,
) {
    if let Some(Command::Copy(Copy {
        src: Place::Host { data },
        ..
    })) = command
    {
        // SAFETY: the program handed this host memory to the copy, which reads it.
        *data = Some(unsafe { recorder.host_blob(region.address, region.len) });
    }
}

pub unsafe fn launch(
    forward: &mut Forward<'_, ze_result_t>,
    (list, kernel, groups, signal, count, waits): args::zeCommandListAppendLaunchKernel,
) -> Recorded {
    let appended = unsafe {
        Append::new(
            "zeCommandListAppendLaunchKernel",
            list,
            Order::Command,
            signal,
            count,
            waits,
        )
    };
    // SAFETY: the program passes its group count.
    let groups = (!groups.is_null()).then(|| unsafe {
        [
            (*groups).groupCountX,
            (*groups).groupCountY,
            (*groups).groupCountZ,
        ]
    });
    append(forward, appended, |state, recorder| {
        let launch = LaunchState {
            kernel: key(kernel),
            state: state.kernels.get(&key(kernel)).cloned().unwrap_or_default(),
            groups: groups.ok_or("no group count")?,
        };
        let (command, accesses) = kernels::command(recorder, &launch)?;
        Ok(Described {
            command: Some(command),
            accesses,
            launch: Some(launch),
            ..Described::default()
        })
    })
}

pub unsafe fn launch_cooperative(
    forward: &mut Forward<'_, ze_result_t>,
    arguments: args::zeCommandListAppendLaunchCooperativeKernel,
) -> Recorded {
    // A cooperative launch runs as a launch; only its groups' residency differs.
    unsafe { launch(forward, arguments) }
}

/// One side of a copy: inside an allocation (a place and an access), or host memory the API
/// did not allocate.
enum Side {
    Memory { mem: Key, place: Place },
    Host,
}

fn side(recorder: &mut Recorder, pointer: *const c_void) -> Result<Side, &'static str> {
    match recorder.locate(key(pointer)) {
        Some((mem, offset)) => {
            let id = recorder
                .mem_id(mem)
                .ok_or("memory the shim did not see allocated")?;
            Ok(Side::Memory {
                mem,
                place: Place::Memory { mem: id, offset },
            })
        }
        None => Ok(Side::Host),
    }
}

/// A copy of `extent` from `src` to `dst`, which span `src_span` and `dst_span` bytes from there.
fn copy(
    recorder: &mut Recorder,
    dst: *const c_void,
    src: *const c_void,
    extent: Extent,
    src_span: usize,
    dst_span: usize,
) -> Result<Described, &'static str> {
    let mut described = Described::default();
    let src = match side(recorder, src)? {
        Side::Memory { mem, place } => {
            described.accesses.push(Access {
                mem,
                write: false,
                overwrites: false,
            });
            place
        }
        Side::Host => {
            described.host_source = Some(HostRegion {
                address: src as usize,
                len: src_span,
            });
            Place::Host { data: None }
        }
    };
    let dst = match side(recorder, dst)? {
        Side::Memory { mem, place } => {
            let whole = matches!((&place, &extent), (Place::Memory { offset, .. }, Extent::Linear { bytes }) if recorder.covers_whole(mem, *offset, *bytes));
            described.accesses.push(Access {
                mem,
                write: true,
                overwrites: whole,
            });
            place
        }
        Side::Host => {
            described.received = Some(HostRegion {
                address: dst as usize,
                len: dst_span,
            });
            Place::Host { data: None }
        }
    };
    if matches!((&src, &dst), (Place::Host { .. }, Place::Host { .. })) {
        return Err("a copy between host memory the API did not allocate is not replayed");
    }
    described.command = Some(Command::Copy(Copy { src, dst, extent }));
    Ok(described)
}

pub unsafe fn memory_copy(
    forward: &mut Forward<'_, ze_result_t>,
    (list, dst, src, size, signal, count, waits): args::zeCommandListAppendMemoryCopy,
) -> Recorded {
    let appended = unsafe {
        Append::new(
            "zeCommandListAppendMemoryCopy",
            list,
            Order::Command,
            signal,
            count,
            waits,
        )
    };
    append(forward, appended, |_, recorder| {
        copy(
            recorder,
            dst,
            src,
            Extent::Linear { bytes: size as u64 },
            size,
            size,
        )
    })
}

/// The bytes a region of `pitch` and `slice_pitch` spans from its base pointer.
fn region_span(region: &ze_copy_region_t, pitch: u32, slice_pitch: u32) -> usize {
    let last = |origin: u32, extent: u32| u64::from(origin) + u64::from(extent.max(1)) - 1;
    let end = last(region.originZ, region.depth) * u64::from(slice_pitch)
        + last(region.originY, region.height) * u64::from(pitch)
        + u64::from(region.originX)
        + u64::from(region.width);
    end as usize
}

pub unsafe fn memory_copy_region(
    forward: &mut Forward<'_, ze_result_t>,
    (
        list,
        dst,
        dst_region,
        dst_pitch,
        dst_slice_pitch,
        src,
        src_region,
        src_pitch,
        src_slice_pitch,
        signal,
        count,
        waits,
    ): args::zeCommandListAppendMemoryCopyRegion,
) -> Recorded {
    let appended = unsafe {
        Append::new(
            "zeCommandListAppendMemoryCopyRegion",
            list,
            Order::Command,
            signal,
            count,
            waits,
        )
    };
    append(forward, appended, |_, recorder| {
        if dst_region.is_null() || src_region.is_null() {
            return Err("a region copy without its regions");
        }
        // SAFETY: the program passes both regions.
        let (d, s) = unsafe { (&*dst_region, &*src_region) };
        let extent = Extent::Rect {
            src_origin: [s.originX, s.originY, s.originZ].map(u64::from),
            dst_origin: [d.originX, d.originY, d.originZ].map(u64::from),
            region: [s.width, s.height.max(1), s.depth.max(1)].map(u64::from),
            src_row_pitch: u64::from(src_pitch),
            src_slice_pitch: u64::from(src_slice_pitch),
            dst_row_pitch: u64::from(dst_pitch),
            dst_slice_pitch: u64::from(dst_slice_pitch),
        };
        copy(
            recorder,
            dst,
            src,
            extent,
            region_span(s, src_pitch, src_slice_pitch),
            region_span(d, dst_pitch, dst_slice_pitch),
        )
    })
}

pub unsafe fn memory_fill(
    forward: &mut Forward<'_, ze_result_t>,
    (list, pointer, pattern, pattern_size, size, signal, count, waits): args::zeCommandListAppendMemoryFill,
) -> Recorded {
    let appended = unsafe {
        Append::new(
            "zeCommandListAppendMemoryFill",
            list,
            Order::Command,
            signal,
            count,
            waits,
        )
    };
    append(forward, appended, |_, recorder| {
        let (mem, offset) = recorder
            .locate(key(pointer))
            .ok_or("a fill of memory the API did not allocate")?;
        let id = recorder
            .mem_id(mem)
            .ok_or("memory the shim did not see allocated")?;
        // SAFETY: the program passes `pattern_size` bytes of pattern.
        let pattern =
            unsafe { std::slice::from_raw_parts(pattern.cast::<u8>(), pattern_size) }.to_vec();
        let overwrites = recorder.covers_whole(mem, offset, size as u64);
        let command = Command::Fill(Fill {
            mem: id,
            offset,
            bytes: size as u64,
            pattern,
            rows: None,
        });
        Ok(Described {
            command: Some(command),
            accesses: vec![Access {
                mem,
                write: true,
                overwrites,
            }],
            ..Described::default()
        })
    })
}

/// A command that only orders: a barrier node.
fn ordering(forward: &mut Forward<'_, ze_result_t>, appended: Append) -> Recorded {
    append(forward, appended, |_, _| {
        Ok(Described {
            command: Some(Command::Barrier),
            ..Described::default()
        })
    })
}

pub unsafe fn barrier(
    forward: &mut Forward<'_, ze_result_t>,
    (list, signal, count, waits): args::zeCommandListAppendBarrier,
) -> Recorded {
    ordering(forward, unsafe {
        Append::new(
            "zeCommandListAppendBarrier",
            list,
            Order::Barrier,
            signal,
            count,
            waits,
        )
    })
}

/// The ranges only narrow what the barrier makes visible: recorded as a barrier.
pub unsafe fn memory_ranges_barrier(
    forward: &mut Forward<'_, ze_result_t>,
    (list, _, _, _, signal, count, waits): args::zeCommandListAppendMemoryRangesBarrier,
) -> Recorded {
    ordering(forward, unsafe {
        Append::new(
            "zeCommandListAppendMemoryRangesBarrier",
            list,
            Order::Barrier,
            signal,
            count,
            waits,
        )
    })
}

/// Later commands of the list wait for the events: a barrier waiting for them.
pub unsafe fn wait_on_events(
    forward: &mut Forward<'_, ze_result_t>,
    (list, count, events): args::zeCommandListAppendWaitOnEvents,
) -> Recorded {
    ordering(forward, unsafe {
        Append::new(
            "zeCommandListAppendWaitOnEvents",
            list,
            Order::Barrier,
            std::ptr::null_mut(),
            count,
            events,
        )
    })
}

/// Signalled once what comes before it ran: a barrier signalling the event.
pub unsafe fn signal_event(
    forward: &mut Forward<'_, ze_result_t>,
    (list, event): args::zeCommandListAppendSignalEvent,
) -> Recorded {
    ordering(forward, unsafe {
        Append::new(
            "zeCommandListAppendSignalEvent",
            list,
            Order::Barrier,
            event,
            0,
            std::ptr::null_mut(),
        )
    })
}

/// An event reset records no work; executions of the list leave the event unsignalled.
pub unsafe fn event_reset(
    forward: &mut Forward<'_, ze_result_t>,
    (list, event): args::zeCommandListAppendEventReset,
) -> Recorded {
    if succeeded(forward) {
        with_recorder(|state, _| match state.lists.get_mut(&key(list)) {
            Some(list) => list.reset_event(key(event)),
            None => {
                state.events.insert(key(event), false);
            }
        })?;
    }
    Ok(())
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn a_region_spans_from_its_base_to_its_last_byte() {
        let region = ze_copy_region_t {
            originX: 8,
            originY: 1,
            originZ: 0,
            width: 32,
            height: 3,
            depth: 1,
        };
        assert_eq!(region_span(&region, 48, 0), 3 * 48 + 8 + 32);
        let volume = ze_copy_region_t {
            originX: 0,
            originY: 0,
            originZ: 1,
            width: 4,
            height: 2,
            depth: 2,
        };
        assert_eq!(region_span(&volume, 16, 64), 2 * 64 + 16 + 4);
    }
}
