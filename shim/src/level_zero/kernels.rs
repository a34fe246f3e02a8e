//! Kernels as the program sets them up (`zeKernelSetArgumentValue`, `zeKernelSetGroupSize`,
//! `zeKernelSetGlobalOffsetExp`) and what a launch of one records: arguments with pointers into
//! USM allocations relocated (the replayer passes each allocation's replay address), and the
//! launch shape as global and group sizes.

use super::hooks::args;
use super::state::with_state;
use super::{key, succeeded, Recorded};
use crate::entry::Forward;
use crate::recorder::{Access, Key, Recorder};
use std::ffi::c_void;
use trace_format::{Arg, Command, KernelLaunch, Launch, Param, ParamKind};
use ze_sys::*;

/// An argument as the program last set it.
#[derive(Clone, Debug, PartialEq)]
pub enum ArgValue {
    Bytes(Vec<u8>),
    /// A null value: local memory of this many bytes.
    Local(u64),
}

/// What a launch of a kernel takes from it, fixed when the launch is appended.
#[derive(Clone, Debug, Default, PartialEq)]
pub struct KernelState {
    pub args: Vec<Option<ArgValue>>,
    /// None until `zeKernelSetGroupSize`: the driver's default, which the replay asks for again.
    pub group_size: Option<[u32; 3]>,
    pub offset: [u32; 3],
}

/// A kernel launch: the kernel, its state when appended, and the group count.
#[derive(Clone, Debug)]
pub struct LaunchState {
    pub kernel: Key,
    pub state: KernelState,
    pub groups: [u32; 3],
}

impl KernelState {
    pub fn set(&mut self, index: usize, value: ArgValue) {
        if self.args.len() <= index {
            self.args.resize(index + 1, None);
        }
        self.args[index] = Some(value);
    }
}

/// Reads an argument as `zeKernelSetArgumentValue` and the mutable extension take it.
///
/// # Safety
/// `value` is null or points to `size` bytes.
pub unsafe fn arg_value(size: usize, value: *const c_void) -> ArgValue {
    match value.is_null() {
        true => ArgValue::Local(size as u64),
        // SAFETY: as documented.
        false => ArgValue::Bytes(
            unsafe { std::slice::from_raw_parts(value.cast::<u8>(), size) }.to_vec(),
        ),
    }
}

pub unsafe fn set_argument_value(
    forward: &mut Forward<'_, ze_result_t>,
    (kernel, index, size, value): args::zeKernelSetArgumentValue,
) -> Recorded {
    if succeeded(forward) {
        // SAFETY: the call succeeded, so `value` held `size` bytes (or was null).
        let value = unsafe { arg_value(size, value) };
        with_state(|state| {
            state
                .kernels
                .entry(key(kernel))
                .or_default()
                .set(index as usize, value)
        });
    }
    Ok(())
}

pub unsafe fn set_group_size(
    forward: &mut Forward<'_, ze_result_t>,
    (kernel, x, y, z): args::zeKernelSetGroupSize,
) -> Recorded {
    if succeeded(forward) {
        with_state(|state| {
            state.kernels.entry(key(kernel)).or_default().group_size = Some([x, y, z])
        });
    }
    Ok(())
}

pub unsafe fn set_global_offset(
    forward: &mut Forward<'_, ze_result_t>,
    (kernel, x, y, z): args::zeKernelSetGlobalOffsetExp,
) -> Recorded {
    if succeeded(forward) {
        with_state(|state| state.kernels.entry(key(kernel)).or_default().offset = [x, y, z]);
    }
    Ok(())
}

/// The recorded command of `launch` and the memory it uses (every allocation a pointer argument
/// names, taken as read and written).
pub fn command(
    recorder: &mut Recorder,
    launch: &LaunchState,
) -> Result<(Command, Vec<Access>), &'static str> {
    let mut args = Vec::with_capacity(launch.state.args.len());
    let mut params = Vec::with_capacity(launch.state.args.len());
    let mut accesses = Vec::new();
    for value in &launch.state.args {
        let (arg, param) = match value
            .as_ref()
            .ok_or("an argument of the kernel was never set")?
        {
            ArgValue::Local(size) => (Arg::Local(*size), param(ParamKind::Local, 8)),
            ArgValue::Bytes(bytes) => match pointer_into_allocation(recorder, bytes) {
                Some((mem, offset)) => {
                    accesses.push(Access {
                        mem,
                        write: true,
                        overwrites: false,
                    });
                    let mem = recorder
                        .mem_id(mem)
                        .ok_or("a pointer argument names memory the shim did not see allocated")?;
                    (Arg::Memory { mem, offset }, param(ParamKind::Memory, 8))
                }
                None => (
                    Arg::Value(bytes.clone()),
                    param(ParamKind::Value, bytes.len() as u32),
                ),
            },
        };
        args.push(arg);
        params.push(param);
    }
    let kernel = recorder
        .kernel_id(launch.kernel, params.into_iter())
        .ok_or("a kernel the shim did not see created")?;
    Ok((
        Command::Kernel(KernelLaunch {
            kernel,
            args,
            launch: shape(launch),
        }),
        accesses,
    ))
}

fn param(kind: ParamKind, size: u32) -> Param {
    Param {
        offset: 0,
        size,
        kind,
    }
}

/// An argument of pointer size whose value lies inside an allocation: the allocation and the
/// offset into it.
fn pointer_into_allocation(recorder: &Recorder, bytes: &[u8]) -> Option<(Key, u64)> {
    let bytes: [u8; 8] = bytes.try_into().ok()?;
    recorder.locate(u64::from_ne_bytes(bytes))
}

/// Level Zero's group count and size as global and local sizes, over as many dimensions as
/// are used.
fn shape(launch: &LaunchState) -> Launch {
    let size = launch.state.group_size.unwrap_or([1; 3]);
    let global = [0, 1, 2].map(|d| u64::from(launch.groups[d]) * u64::from(size[d]));
    let dims = match (global[2], global[1]) {
        (z, _) if z > 1 => 3,
        (_, y) if y > 1 => 2,
        _ => 1,
    };
    Launch::NdRange {
        dims,
        offset: launch.state.offset.map(u64::from),
        global,
        local: launch.state.group_size.map(|size| size.map(u64::from)),
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn group_counts_and_sizes_become_global_and_local_sizes() {
        let state = KernelState {
            args: Vec::new(),
            group_size: Some([16, 2, 1]),
            offset: [4, 0, 0],
        };
        let launch = LaunchState {
            kernel: 1,
            state,
            groups: [8, 3, 1],
        };
        assert_eq!(
            shape(&launch),
            Launch::NdRange {
                dims: 2,
                offset: [4, 0, 0],
                global: [128, 6, 1],
                local: Some([16, 2, 1])
            }
        );
        let unset = LaunchState {
            kernel: 1,
            state: KernelState::default(),
            groups: [5, 1, 1],
        };
        assert_eq!(
            shape(&unset),
            Launch::NdRange {
                dims: 1,
                offset: [0; 3],
                global: [5, 1, 1],
                local: None
            }
        );
    }
}
