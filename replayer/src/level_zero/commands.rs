//! Recorded commands as Level Zero appends them, shared by graph and eager replay: kernel
//! arguments with memory relocated, launch shapes as group counts and sizes, copies (linear and
//! region) and fills checked against the memory they touch, and barriers for what only orders.

use super::driver::check;
use super::objects::{Objects, Scope};
use crate::backend::{BackendError, BackendResult};
use crate::extent::{rect_side, span};
use std::ffi::c_void;
use std::ptr;
use trace_format::{Arg, Command, Copy, Extent, Fill, KernelLaunch, Launch, NodeId, Place};
use ze_sys::*;

/// How one kernel argument is passed: `zeKernelSetArgumentValue`'s size and value.
pub enum ArgValue {
    /// Bytes by value; a pointer argument is the pointer's eight bytes.
    Bytes(Vec<u8>),
    /// Local memory of this many bytes (no value).
    Local(usize),
}

impl ArgValue {
    pub fn size(&self) -> usize {
        match self {
            ArgValue::Bytes(bytes) => bytes.len(),
            ArgValue::Local(size) => *size,
        }
    }

    pub fn pointer(&self) -> *const c_void {
        match self {
            ArgValue::Bytes(bytes) => bytes.as_ptr().cast(),
            ArgValue::Local(_) => ptr::null(),
        }
    }
}

/// A launch as Level Zero takes it.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub struct Shape {
    pub group_count: [u32; 3],
    pub group_size: [u32; 3],
    pub offset: [u32; 3],
}

fn to_u32(values: [u64; 3], what: &str) -> BackendResult<[u32; 3]> {
    let mut out = [0; 3];
    for (slot, value) in out.iter_mut().zip(values) {
        *slot = u32::try_from(value).map_err(|_| BackendError::Unsupported(format!("{what} {values:?} does not fit Level Zero's 32 bits")))?;
    }
    Ok(out)
}

/// The launch's group count, group size and global offset; `suggest` gives a group size for
/// global sizes when the recording left it to the driver.
pub fn shape(launch: &Launch, suggest: impl FnOnce([u32; 3]) -> BackendResult<[u32; 3]>) -> BackendResult<Shape> {
    match launch {
        Launch::NdRange { dims, offset, global, local } => {
            if !(1..=3).contains(dims) {
                return Err(BackendError::Unsupported(format!("{dims} work dimensions (Level Zero takes 1 to 3)")));
            }
            let used = |values: [u64; 3], unused: u64| -> [u64; 3] { [0, 1, 2].map(|d| if d < *dims as usize { values[d] } else { unused }) };
            let global = to_u32(used(*global, 1), "global size")?;
            if global.contains(&0) {
                return Err(BackendError::Unsupported(format!("an empty launch of global size {global:?}")));
            }
            let group_size = match local {
                Some(local) => to_u32(used(*local, 1), "group size")?,
                None => suggest(global)?,
            };
            if (0..3).any(|d| group_size[d] == 0 || global[d] % group_size[d] != 0) {
                return Err(BackendError::Unsupported(format!("global size {global:?} is not a whole number of groups of {group_size:?}")));
            }
            let group_count = [0, 1, 2].map(|d| global[d] / group_size[d]);
            Ok(Shape { group_count, group_size, offset: to_u32(used(*offset, 0), "global offset")? })
        }
        Launch::Grid { grid, block, shared_bytes, cluster, .. } => {
            if *shared_bytes != 0 || cluster.is_some() {
                return Err(BackendError::Unsupported("dynamic shared memory or clusters in a grid launch (Level Zero passes local memory as arguments)".into()));
            }
            Ok(Shape { group_count: *grid, group_size: *block, offset: [0; 3] })
        }
    }
}

/// What argument `index` passes for `arg`, with memory at its replay address.
pub fn arg_value(objects: &Objects, index: usize, arg: &Arg) -> BackendResult<ArgValue> {
    let address = |mem: trace_format::MemId, offset: u64| -> BackendResult<u64> {
        let (base, size) = objects.memory(mem)?;
        if offset > size {
            return Err(BackendError::Unsupported(format!("argument {index} points {offset} bytes into memory {mem} of {size} bytes")));
        }
        Ok(base + offset)
    };
    Ok(match arg {
        Arg::Value(bytes) => ArgValue::Bytes(bytes.clone()),
        Arg::Memory { mem, offset } => ArgValue::Bytes(address(*mem, *offset)?.to_ne_bytes().to_vec()),
        Arg::NullMemory => ArgValue::Bytes(vec![0; 8]),
        Arg::Local(size) => ArgValue::Local(*size as usize),
        Arg::ValueWithPointers { bytes, pointers } => {
            let mut bytes = bytes.clone();
            for pointer in pointers {
                let at = pointer.at as usize;
                let slot = bytes.get_mut(at..at + 8).ok_or_else(|| BackendError::Unsupported(format!("argument {index} has a pointer past its end")))?;
                slot.copy_from_slice(&address(pointer.mem, pointer.offset)?.to_ne_bytes());
            }
            ArgValue::Bytes(bytes)
        }
        Arg::Condition(_) => return Err(BackendError::Unsupported(format!("argument {index} is a CUDA graph conditional's handle"))),
        Arg::Texture(_) => return Err(BackendError::Unsupported(format!("argument {index} is a texture object, which the Level Zero backend does not make"))),
    })
}

/// Appends recorded commands to command lists.
pub struct Appender<'a> {
    pub scope: Scope,
    pub objects: &'a Objects,
    pub max_fill_pattern: usize,
}

impl Appender<'_> {
    /// Sets `launch`'s arguments and shape on its kernel; returns the kernel and its group count.
    pub fn prepare_kernel(&self, launch: &KernelLaunch) -> BackendResult<(ze_kernel_handle_t, Shape)> {
        let api = self.scope.api;
        let kernel = *self.objects.kernels.get(launch.kernel.index()).ok_or_else(|| BackendError::Unsupported(format!("kernel {} is not in the trace", launch.kernel)))?;
        for (index, arg) in launch.args.iter().enumerate() {
            let value = arg_value(self.objects, index, arg)?;
            // SAFETY: a kernel of this load; the value lives across the call.
            check(unsafe { api.zeKernelSetArgumentValue(kernel, index as u32, value.size(), value.pointer()) }, &format!("zeKernelSetArgumentValue({index})"))?;
        }
        let shape = shape(&launch.launch, |global| self.suggest(kernel, global))?;
        let [x, y, z] = shape.group_size;
        check(unsafe { api.zeKernelSetGroupSize(kernel, x, y, z) }, "zeKernelSetGroupSize")?;
        // The kernel keeps its offset: every launch sets its own, zero included.
        let [x, y, z] = shape.offset;
        let offset = unsafe { api.zeKernelSetGlobalOffsetExp(kernel, x, y, z) };
        if offset != ZE_RESULT_SUCCESS && shape.offset != [0; 3] {
            check(offset, "zeKernelSetGlobalOffsetExp")?;
        }
        Ok((kernel, shape))
    }

    pub fn suggest(&self, kernel: ze_kernel_handle_t, [x, y, z]: [u32; 3]) -> BackendResult<[u32; 3]> {
        let mut size = [0u32; 3];
        let [sx, sy, sz] = &mut size;
        // SAFETY: a kernel of this load and out-pointers.
        check(unsafe { self.scope.api.zeKernelSuggestGroupSize(kernel, x, y, z, sx, sy, sz) }, "zeKernelSuggestGroupSize")?;
        Ok(size)
    }

    /// Appends `command` of `node` to `list`, signalling `signal` (may be null) after `waits`.
    pub fn append(&self, list: ze_command_list_handle_t, node: NodeId, command: &Command, signal: ze_event_handle_t, waits: &[ze_event_handle_t]) -> BackendResult<()> {
        let api = self.scope.api;
        let (count, mut wait_list) = (waits.len() as u32, waits.to_vec());
        let wait_list = if waits.is_empty() { ptr::null_mut() } else { wait_list.as_mut_ptr() };
        // SAFETY (whole block): a list of this backend, checked addresses, values alive across each call.
        let appended = unsafe {
            match command {
                Command::Kernel(launch) => {
                    let (kernel, shape) = self.prepare_kernel(launch)?;
                    let groups = ze_group_count_t { groupCountX: shape.group_count[0], groupCountY: shape.group_count[1], groupCountZ: shape.group_count[2] };
                    let cooperative = matches!(launch.launch, Launch::Grid { cooperative: true, .. });
                    if cooperative {
                        check(api.zeCommandListAppendLaunchCooperativeKernel(list, kernel, &groups, signal, count, wait_list), "zeCommandListAppendLaunchCooperativeKernel")
                    } else {
                        check(api.zeCommandListAppendLaunchKernel(list, kernel, &groups, signal, count, wait_list), "zeCommandListAppendLaunchKernel")
                    }
                }
                Command::Copy(copy) => self.append_copy(list, copy, signal, count, wait_list),
                Command::Fill(fill) => self.append_fill(list, fill, signal, count, wait_list),
                // The recorded host code and allocations are not replayed: only their order is.
                Command::Barrier | Command::HostTask(_) | Command::MemAlloc { .. } | Command::MemFree { .. } => {
                    check(api.zeCommandListAppendBarrier(list, signal, count, wait_list), "zeCommandListAppendBarrier")
                }
                Command::Subgraph(_) => Err(BackendError::Unsupported("a sub-graph: the replayer inlines them before a backend sees them".into())),
                Command::Conditional(_) | Command::EventRecord { .. } | Command::EventWait { .. } => {
                    Err(BackendError::Unsupported(format!("{} commands (of CUDA graphs) are not replayed by the Level Zero backend", command.kind_name())))
                }
            }
        };
        appended.map_err(|error| error.about(&format!("node {node}")))
    }

    /// Where a copy's source or destination starts, checked to hold `reach` bytes.
    fn place(&self, place: &Place, source: bool, reach: u64) -> BackendResult<*mut c_void> {
        let (start, room) = match place {
            Place::Memory { mem, offset } => {
                let (base, size) = self.objects.memory(*mem)?;
                (base.saturating_add(*offset), size.saturating_sub(*offset))
            }
            Place::Host { data: Some(blob) } if source => {
                let (host, size) = self.objects.sources.get(blob).copied().ok_or_else(|| BackendError::Unsupported(format!("host data {blob} was not loaded")))?;
                (host as u64, size)
            }
            Place::Host { data: None } if source => return Err(BackendError::Unsupported("a copy from host data the trace does not hold".into())),
            Place::Host { .. } => (self.objects.sink as u64, self.objects.sink_size),
        };
        if reach == 0 || reach > room {
            return Err(BackendError::Unsupported(format!("a copy reaching {reach} bytes from a place that holds {room}")));
        }
        Ok(start as *mut c_void)
    }

    unsafe fn append_copy(&self, list: ze_command_list_handle_t, copy: &Copy, signal: ze_event_handle_t, count: u32, waits: *mut ze_event_handle_t) -> BackendResult<()> {
        let api = self.scope.api;
        if matches!((&copy.src, &copy.dst), (Place::Host { .. }, Place::Host { .. })) {
            return Err(BackendError::Unsupported("a host-to-host copy".into()));
        }
        let src = self.place(&copy.src, true, span(&copy.extent, true))?;
        let dst = self.place(&copy.dst, false, span(&copy.extent, false))?;
        match copy.extent {
            Extent::Linear { bytes } => {
                check(unsafe { api.zeCommandListAppendMemoryCopy(list, dst, src, bytes as usize, signal, count, waits) }, "zeCommandListAppendMemoryCopy")
            }
            Extent::Rect { src_origin, dst_origin, region, src_row_pitch, src_slice_pitch, dst_row_pitch, dst_slice_pitch } => {
                let sides = [(src_origin, src_row_pitch, src_slice_pitch), (dst_origin, dst_row_pitch, dst_slice_pitch)].map(|(origin, row, slice)| rect_side(region, origin, row, slice));
                let [width, height, depth] = to_u32(region, "region")?;
                let mut regions = [ze_copy_region_t { originX: 0, originY: 0, originZ: 0, width, height, depth }; 2];
                let mut pitches = [[0u32; 2]; 2];
                for ((side, region), pitch) in sides.iter().zip(&mut regions).zip(&mut pitches) {
                    [region.originX, region.originY, region.originZ] = to_u32(side.origin, "origin")?;
                    let [row, slice, _] = to_u32([side.row_pitch, side.slice_pitch, 0], "pitch")?;
                    *pitch = [row, slice];
                }
                let [[src_pitch, src_slice], [dst_pitch, dst_slice]] = pitches;
                check(
                    unsafe { api.zeCommandListAppendMemoryCopyRegion(list, dst, &regions[1], dst_pitch, dst_slice, src, &regions[0], src_pitch, src_slice, signal, count, waits) },
                    "zeCommandListAppendMemoryCopyRegion",
                )
            }
        }
    }

    unsafe fn append_fill(&self, list: ze_command_list_handle_t, fill: &Fill, signal: ze_event_handle_t, count: u32, waits: *mut ze_event_handle_t) -> BackendResult<()> {
        let size = fill.pattern.len();
        if fill.rows.is_some() {
            return Err(BackendError::Unsupported("a 2D fill (Level Zero fills are linear)".into()));
        }
        if !size.is_power_of_two() || size > self.max_fill_pattern || !fill.bytes.is_multiple_of(size as u64) {
            return Err(BackendError::Unsupported(format!(
                "a fill of {} bytes with a {size}-byte pattern (the device takes power-of-two patterns of at most {} bytes dividing the size)",
                fill.bytes, self.max_fill_pattern
            )));
        }
        let dst = self.place(&Place::Memory { mem: fill.mem, offset: fill.offset }, false, fill.bytes)?;
        check(
            unsafe { self.scope.api.zeCommandListAppendMemoryFill(list, dst, fill.pattern.as_ptr().cast(), size, fill.bytes as usize, signal, count, waits) },
            "zeCommandListAppendMemoryFill",
        )
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    fn nd(dims: u32, global: [u64; 3], local: Option<[u64; 3]>, offset: [u64; 3]) -> Launch {
        Launch::NdRange { dims, offset, global, local }
    }

    #[test]
    fn an_nd_range_becomes_group_counts_of_its_group_size() {
        let no_suggestion = |_| -> BackendResult<[u32; 3]> { panic!("the recording gave a group size") };
        let shape = super::shape(&nd(2, [64, 6, 99], Some([16, 3, 99]), [8, 0, 5]), no_suggestion).unwrap();
        // The unused third dimension is one item at offset zero.
        assert_eq!(shape, Shape { group_count: [4, 2, 1], group_size: [16, 3, 1], offset: [8, 0, 0] });
    }

    #[test]
    fn without_a_group_size_the_driver_suggests_one() {
        let shape = super::shape(&nd(1, [96, 1, 1], None, [0; 3]), |global| {
            assert_eq!(global, [96, 1, 1]);
            Ok([32, 1, 1])
        })
        .unwrap();
        assert_eq!(shape.group_count, [3, 1, 1]);
    }

    #[test]
    fn launches_level_zero_cannot_express_are_refused() {
        let any = |_| Ok([1, 1, 1]);
        for launch in [
            nd(1, [100, 1, 1], Some([32, 1, 1]), [0; 3]),
            nd(1, [1 << 33, 1, 1], None, [0; 3]),
            nd(4, [1, 1, 1], None, [0; 3]),
            nd(1, [0, 1, 1], None, [0; 3]),
            Launch::Grid { grid: [1; 3], block: [1; 3], shared_bytes: 64, cluster: None, cooperative: false },
        ] {
            assert!(matches!(super::shape(&launch, any), Err(BackendError::Unsupported(_))), "{launch:?}");
        }
    }
}
