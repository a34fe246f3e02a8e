//! `clUpdateMutableCommandsKHR` (`cl_khr_command_buffer_mutable_dispatch`): the program's updates
//! of kernel commands go through unchanged and, once they succeed, change the recorded graph so
//! that the next enqueue records the updated commands. Before revision 0.9.2 the call takes one
//! base config chaining the dispatch configs; from 0.9.2 (OpenCL-Headers 7258b9e; Intel's CPU
//! runtime reports 0.9.3) parallel arrays of config types and configs.

use super::command_buffers::{extension_version, platform_function, platform_of_buffer};
use super::commands::kernels::{argument_accesses, launch_command, work_sizes};
use super::programs::argument;
use super::state::{with_recorder, ArgValue, State};
use super::{key, succeeded, Recorded};
use crate::entry::intercept;
use crate::recorder::{Key, Recorder};
use cl_revisions::{ChainedBaseConfig, CHAINED_BASE_CONFIG, CHAINED_DISPATCH_CONFIG};
use opencl_sys::*;
use std::ffi::c_void;
use trace_format::Launch;

const CALL: &str = "clUpdateMutableCommandsKHR";

/// Whether the platform's `clUpdateMutableCommandsKHR` takes arrays of configs (0.9.2 and later,
/// and when the device does not say).
pub fn updates_take_config_array(platform: cl_platform_id) -> bool {
    extension_version(platform, c"cl_khr_command_buffer_mutable_dispatch").is_none_or(|version| version >= (0, 9, 2))
}

/// 0.9.2 and later.
pub unsafe extern "C" fn update_mutable_commands(
    command_buffer: cl_command_buffer_khr,
    num_configs: cl_uint,
    config_types: *const cl_command_buffer_update_type_khr,
    configs: *mut *const c_void,
) -> cl_int {
    type Real = unsafe extern "C" fn(cl_command_buffer_khr, cl_uint, *const cl_command_buffer_update_type_khr, *mut *const c_void) -> cl_int;
    let real = || match platform_of_buffer(command_buffer).and_then(|p| platform_function(p, CALL)) {
        // SAFETY: the platform's function of this name, with this revision's signature.
        Some(address) => unsafe { std::mem::transmute::<usize, Real>(address)(command_buffer, num_configs, config_types, configs) },
        None => CL_INVALID_COMMAND_BUFFER_KHR,
    };
    intercept(CALL, &real, |forward| -> Recorded {
        if !succeeded(forward) {
            return Ok(());
        }
        let updates = unsafe { decode_config_array(num_configs, config_types, configs) };
        apply_updates(command_buffer, updates)
    })
}

/// Before 0.9.2.
pub unsafe extern "C" fn update_mutable_commands_chained(command_buffer: cl_command_buffer_khr, mutable_config: *const ChainedBaseConfig) -> cl_int {
    type Real = unsafe extern "C" fn(cl_command_buffer_khr, *const ChainedBaseConfig) -> cl_int;
    let real = || match platform_of_buffer(command_buffer).and_then(|p| platform_function(p, CALL)) {
        // SAFETY: the platform's function of this name, with this revision's signature.
        Some(address) => unsafe { std::mem::transmute::<usize, Real>(address)(command_buffer, mutable_config) },
        None => CL_INVALID_COMMAND_BUFFER_KHR,
    };
    intercept(CALL, &real, |forward| -> Recorded {
        if !succeeded(forward) {
            return Ok(());
        }
        let updates = unsafe { decode_chained(mutable_config) };
        apply_updates(command_buffer, updates)
    })
}

/// One kernel command's update, copied out of the program's config.
#[derive(Debug, PartialEq)]
struct DispatchUpdate {
    command: Key,
    /// New arguments by index, as `clSetKernelArg(SVMPointer)` would set them.
    arguments: Vec<(usize, ArgValue)>,
    range: RangeUpdate,
}

/// The ND-range's new sizes; `None` keeps the recorded ones.
#[derive(Debug, Default, PartialEq)]
struct RangeUpdate {
    dims: cl_uint,
    offset: Option<[u64; 3]>,
    global: Option<[u64; 3]>,
    local: Option<[u64; 3]>,
}

impl RangeUpdate {
    fn apply(&self, launch: &mut Launch) {
        let Launch::NdRange { dims, offset, global, local } = launch else { return };
        if self.offset.is_none() && self.global.is_none() && self.local.is_none() {
            return;
        }
        *dims = self.dims;
        *offset = self.offset.unwrap_or(*offset);
        *global = self.global.unwrap_or(*global);
        *local = self.local.or(*local);
    }
}

/// The configs of the array form, each of which must be a dispatch config.
unsafe fn decode_config_array(
    count: cl_uint,
    types: *const cl_command_buffer_update_type_khr,
    configs: *mut *const c_void,
) -> Result<Vec<DispatchUpdate>, &'static str> {
    if count == 0 {
        return Ok(Vec::new());
    }
    // SAFETY: the call succeeded, so both arrays hold `count` entries.
    let types = unsafe { std::slice::from_raw_parts(types, count as usize) };
    let configs = unsafe { std::slice::from_raw_parts(configs, count as usize) };
    types
        .iter()
        .zip(configs)
        .map(|(&kind, &config)| match kind {
            // SAFETY: a config of this type is a dispatch config.
            CL_STRUCTURE_TYPE_MUTABLE_DISPATCH_CONFIG_KHR => unsafe { decode_dispatch(&*config.cast::<cl_mutable_dispatch_config_khr>()) },
            _ => Err("an update config of a type the shim does not know"),
        })
        .collect()
}

/// The dispatch configs a chained base config lists; anything chained further is not known.
unsafe fn decode_chained(base: *const ChainedBaseConfig) -> Result<Vec<DispatchUpdate>, &'static str> {
    const UNKNOWN: &str = "an update config chains structures the shim does not know";
    // SAFETY: the call succeeded, so the base config is valid and lists its dispatch configs.
    let base = unsafe { &*base };
    if base.kind != CHAINED_BASE_CONFIG || !base.next.is_null() {
        return Err(UNKNOWN);
    }
    if base.num_mutable_dispatch == 0 {
        return Ok(Vec::new());
    }
    let list = unsafe { std::slice::from_raw_parts(base.mutable_dispatch_list, base.num_mutable_dispatch as usize) };
    list.iter()
        .map(|chained| match chained.kind == CHAINED_DISPATCH_CONFIG && chained.next.is_null() {
            true => unsafe { decode_dispatch(&chained.config) },
            false => Err(UNKNOWN),
        })
        .collect()
}

unsafe fn decode_dispatch(config: &cl_mutable_dispatch_config_khr) -> Result<DispatchUpdate, &'static str> {
    if config.num_exec_infos > 0 {
        return Err("an update of a kernel's execution info, which the trace does not hold");
    }
    // SAFETY: the call succeeded, so each non-null list holds its count of entries.
    let list = |list: *const cl_mutable_dispatch_arg_khr, count: cl_uint| match list.is_null() || count == 0 {
        true => &[][..],
        false => unsafe { std::slice::from_raw_parts(list, count as usize) },
    };
    let values = list(config.arg_list, config.num_args).iter().map(|arg| (arg.arg_index as usize, unsafe { argument(arg.arg_size, arg.arg_value) }));
    let pointers = list(config.arg_svm_list, config.num_svm_args).iter().map(|arg| (arg.arg_index as usize, ArgValue::Svm(arg.arg_value as usize as u64)));
    let (offset, global, local) = (config.global_work_offset, config.global_work_size, config.local_work_size);
    if config.work_dim == 0 && !(offset.is_null() && global.is_null() && local.is_null()) {
        return Err("an ND-range update without its work_dim");
    }
    let range = unsafe {
        RangeUpdate {
            dims: config.work_dim,
            offset: work_sizes(config.work_dim, offset, 0),
            global: work_sizes(config.work_dim, global, 1),
            local: work_sizes(config.work_dim, local, 1),
        }
    };
    Ok(DispatchUpdate { command: key(config.command), arguments: values.chain(pointers).collect(), range })
}

/// Changes the recorded commands as the program's (successful) update did; an update the shim
/// cannot follow marks the trace partial.
fn apply_updates(buffer: cl_command_buffer_khr, updates: Result<Vec<DispatchUpdate>, &'static str>) -> Recorded {
    with_recorder(|state, recorder| match updates {
        Ok(updates) => {
            for update in updates {
                if let Err(reason) = apply(state, recorder, key(buffer), update) {
                    recorder.partial(CALL, reason);
                }
            }
        }
        Err(reason) => recorder.partial(CALL, reason),
    })
}

fn apply(state: &mut State, recorder: &mut Recorder, buffer: Key, update: DispatchUpdate) -> Result<(), &'static str> {
    const UNKNOWN_BUFFER: &str = "a command buffer the shim did not see created";
    let recorded = state.command_buffers.get(&buffer).ok_or(UNKNOWN_BUFFER)?;
    let mut kernel = recorded.mutable.get(&update.command).ok_or("a mutable command the shim did not see recorded")?.clone();
    for (index, value) in update.arguments {
        kernel.arguments.set(index, value);
    }
    update.range.apply(&mut kernel.launch);
    let command = launch_command(recorder, state, kernel.kernel, &kernel.arguments.values, kernel.launch.clone())?;
    let accesses = argument_accesses(state, recorder, &kernel.arguments.values);
    let recorded = state.command_buffers.get_mut(&buffer).ok_or(UNKNOWN_BUFFER)?;
    let node = kernel.node.0 as usize;
    match (recorded.graph.nodes.get_mut(node), recorded.accesses.get_mut(node)) {
        (Some(recorded_node), Some(recorded_accesses)) => {
            recorded_node.command = command;
            *recorded_accesses = accesses;
        }
        _ => return Err("a mutable command outside its command buffer's graph"),
    }
    recorded.mutable.insert(update.command, kernel);
    Ok(())
}

#[cfg(test)]
mod tests {
    use super::*;
    use cl_revisions::ChainedDispatchConfig;
    use std::ptr;

    /// A config that changes nothing, for tests to fill in.
    fn empty_config(command: usize) -> cl_mutable_dispatch_config_khr {
        cl_mutable_dispatch_config_khr {
            command: command as cl_mutable_command_khr,
            num_args: 0,
            num_svm_args: 0,
            num_exec_infos: 0,
            work_dim: 0,
            arg_list: ptr::null(),
            arg_svm_list: ptr::null(),
            exec_info_list: ptr::null(),
            global_work_offset: ptr::null(),
            global_work_size: ptr::null(),
            local_work_size: ptr::null(),
        }
    }

    #[test]
    fn arguments_decode_as_set_kernel_arg_would_set_them() {
        let scale = 2.5f32;
        let buffer: u64 = 0x1234;
        let args = [
            cl_mutable_dispatch_arg_khr { arg_index: 1, arg_size: 4, arg_value: (&scale as *const f32).cast() },
            cl_mutable_dispatch_arg_khr { arg_index: 0, arg_size: 8, arg_value: (&buffer as *const u64).cast() },
            cl_mutable_dispatch_arg_khr { arg_index: 3, arg_size: 64, arg_value: ptr::null() },
        ];
        let svm_args = [cl_mutable_dispatch_arg_khr { arg_index: 2, arg_size: 0, arg_value: 0x5000 as *const c_void }];
        let config = cl_mutable_dispatch_config_khr {
            num_args: args.len() as cl_uint,
            arg_list: args.as_ptr(),
            num_svm_args: 1,
            arg_svm_list: svm_args.as_ptr(),
            ..empty_config(7)
        };
        let update = unsafe { decode_dispatch(&config) }.expect("decodes");
        assert_eq!(update.command, 7);
        assert_eq!(
            update.arguments,
            [
                (1, ArgValue::Bytes(scale.to_ne_bytes().to_vec())),
                (0, ArgValue::Bytes(buffer.to_ne_bytes().to_vec())),
                (3, ArgValue::Local(64)),
                (2, ArgValue::Svm(0x5000)),
            ]
        );
        assert_eq!(update.range, RangeUpdate::default());
    }

    #[test]
    fn a_range_update_changes_only_the_sizes_given() {
        let global = [64usize, 8];
        let config = cl_mutable_dispatch_config_khr { work_dim: 2, global_work_size: global.as_ptr(), ..empty_config(1) };
        let update = unsafe { decode_dispatch(&config) }.expect("decodes");
        let mut launch = Launch::NdRange { dims: 2, offset: [4, 0, 0], global: [16, 16, 1], local: Some([4, 4, 1]) };
        update.range.apply(&mut launch);
        assert_eq!(launch, Launch::NdRange { dims: 2, offset: [4, 0, 0], global: [64, 8, 1], local: Some([4, 4, 1]) });
    }

    #[test]
    fn updates_the_trace_cannot_hold_are_refused() {
        let exec_info = cl_mutable_dispatch_config_khr { num_exec_infos: 1, ..empty_config(1) };
        assert!(unsafe { decode_dispatch(&exec_info) }.is_err());
        let global = [64usize];
        let without_dims = cl_mutable_dispatch_config_khr { global_work_size: global.as_ptr(), ..empty_config(1) };
        assert!(unsafe { decode_dispatch(&without_dims) }.is_err());
        let mut configs = [(&empty_config(1) as *const cl_mutable_dispatch_config_khr).cast::<c_void>()];
        assert!(unsafe { decode_config_array(1, [7].as_ptr(), configs.as_mut_ptr()) }.is_err());
    }

    #[test]
    fn both_revisions_decode_to_the_same_updates() {
        let scale = 3u32;
        let args = [cl_mutable_dispatch_arg_khr { arg_index: 1, arg_size: 4, arg_value: (&scale as *const u32).cast() }];
        let config = cl_mutable_dispatch_config_khr { num_args: 1, arg_list: args.as_ptr(), ..empty_config(9) };
        let mut configs = [(&config as *const cl_mutable_dispatch_config_khr).cast::<c_void>()];
        let types = [CL_STRUCTURE_TYPE_MUTABLE_DISPATCH_CONFIG_KHR];
        let from_array = unsafe { decode_config_array(1, types.as_ptr(), configs.as_mut_ptr()) }.expect("decodes");

        let chained = [ChainedDispatchConfig { kind: CHAINED_DISPATCH_CONFIG, next: ptr::null(), config }];
        let base = ChainedBaseConfig { kind: CHAINED_BASE_CONFIG, next: ptr::null(), num_mutable_dispatch: 1, mutable_dispatch_list: chained.as_ptr() };
        let from_chain = unsafe { decode_chained(&base) }.expect("decodes");
        assert_eq!(from_array, from_chain);
        assert_eq!(from_array.len(), 1);

        let extended = ChainedBaseConfig { next: (&base as *const ChainedBaseConfig).cast(), ..base };
        assert!(unsafe { decode_chained(&extended) }.is_err(), "a chained structure the shim does not know");
    }
}
