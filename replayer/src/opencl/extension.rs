//! `cl_khr_command_buffer` and `cl_khr_command_buffer_mutable_dispatch` entry points in the
//! revision the device reports. Command buffer 0.9.0-0.9.4 (PoCL 3.1) gives only
//! `clCommandNDRangeKernelKHR` a `properties` argument; 0.9.5 and 1.0 (Intel) give it to every
//! command. Mutable dispatch before 0.9.2 takes a chained base config; 0.9.2 and later (Intel
//! reports 0.9.3) take an array of typed configs.

use super::api::{check, Api, Raw};
use super::device::extension_version;
use super::extension_images::ImageCommands;
use crate::backend::BackendResult;
use cl_revisions::{ChainedBaseConfig, ChainedDispatchConfig, CHAINED_BASE_CONFIG, CHAINED_DISPATCH_CONFIG};
use opencl_sys::*;
use std::ffi::c_void;
use std::ptr;

type SyncWaits<'a> = &'a [cl_sync_point_khr];

/// The entry points of the command buffer extension on one platform.
pub struct CommandBufferApi {
    pub revision: (u32, u32, u32),
    pub create: Raw<clCreateCommandBufferKHR_fn>,
    pub finalize: Raw<clFinalizeCommandBufferKHR_fn>,
    pub release: Raw<clReleaseCommandBufferKHR_fn>,
    pub enqueue: Raw<clEnqueueCommandBufferKHR_fn>,
    pub ndrange: Raw<clCommandNDRangeKernelKHR_fn>,
    commands: Commands,
    /// Image copies and fills, when the platform has them.
    pub images: Option<ImageCommands>,
    pub mutable: Option<MutableDispatch>,
}

/// The memory commands, whose signatures depend on the revision.
enum Commands {
    WithoutProperties {
        barrier: unsafe extern "C" fn(cl_command_buffer_khr, cl_command_queue, cl_uint, *const cl_sync_point_khr, *mut cl_sync_point_khr, *mut cl_mutable_command_khr) -> cl_int,
        copy: unsafe extern "C" fn(cl_command_buffer_khr, cl_command_queue, cl_mem, cl_mem, usize, usize, usize, cl_uint, *const cl_sync_point_khr, *mut cl_sync_point_khr, *mut cl_mutable_command_khr) -> cl_int,
        #[allow(clippy::type_complexity)]
        copy_rect: unsafe extern "C" fn(cl_command_buffer_khr, cl_command_queue, cl_mem, cl_mem, *const usize, *const usize, *const usize, usize, usize, usize, usize, cl_uint, *const cl_sync_point_khr, *mut cl_sync_point_khr, *mut cl_mutable_command_khr) -> cl_int,
        fill: unsafe extern "C" fn(cl_command_buffer_khr, cl_command_queue, cl_mem, *const c_void, usize, usize, usize, cl_uint, *const cl_sync_point_khr, *mut cl_sync_point_khr, *mut cl_mutable_command_khr) -> cl_int,
    },
    WithProperties {
        barrier: Raw<clCommandBarrierWithWaitListKHR_fn>,
        copy: Raw<clCommandCopyBufferKHR_fn>,
        copy_rect: Raw<clCommandCopyBufferRectKHR_fn>,
        fill: Raw<clCommandFillBufferKHR_fn>,
        svm_memcpy: Option<Raw<clCommandSVMMemcpyKHR_fn>>,
        svm_fill: Option<Raw<clCommandSVMMemFillKHR_fn>>,
    },
}

/// A rectangular copy's geometry, in the order the API takes it.
pub struct Rect {
    pub src_origin: [usize; 3],
    pub dst_origin: [usize; 3],
    pub region: [usize; 3],
    pub pitches: [usize; 4],
}

impl CommandBufferApi {
    /// The extension on `device`, or `None` when it lacks it (or a required entry point).
    pub fn find(api: &Api, platform: cl_platform_id, device: cl_device_id) -> Option<CommandBufferApi> {
        let revision = extension_version(api, device, "cl_khr_command_buffer")?;
        // SAFETY (all lookups): each type is the signature of the named function in `revision`.
        let commands = if commands_take_properties(revision) {
            Commands::WithProperties {
                barrier: unsafe { api.extension(platform, "clCommandBarrierWithWaitListKHR")? },
                copy: unsafe { api.extension(platform, "clCommandCopyBufferKHR")? },
                copy_rect: unsafe { api.extension(platform, "clCommandCopyBufferRectKHR")? },
                fill: unsafe { api.extension(platform, "clCommandFillBufferKHR")? },
                svm_memcpy: unsafe { api.extension(platform, "clCommandSVMMemcpyKHR") },
                svm_fill: unsafe { api.extension(platform, "clCommandSVMMemFillKHR") },
            }
        } else {
            Commands::WithoutProperties {
                barrier: unsafe { api.extension(platform, "clCommandBarrierWithWaitListKHR")? },
                copy: unsafe { api.extension(platform, "clCommandCopyBufferKHR")? },
                copy_rect: unsafe { api.extension(platform, "clCommandCopyBufferRectKHR")? },
                fill: unsafe { api.extension(platform, "clCommandFillBufferKHR")? },
            }
        };
        Some(CommandBufferApi {
            revision,
            create: unsafe { api.extension(platform, "clCreateCommandBufferKHR")? },
            finalize: unsafe { api.extension(platform, "clFinalizeCommandBufferKHR")? },
            release: unsafe { api.extension(platform, "clReleaseCommandBufferKHR")? },
            enqueue: unsafe { api.extension(platform, "clEnqueueCommandBufferKHR")? },
            ndrange: unsafe { api.extension(platform, "clCommandNDRangeKernelKHR")? },
            commands,
            images: ImageCommands::find(api, platform, commands_take_properties(revision)),
            mutable: MutableDispatch::find(api, platform, device),
        })
    }

    /// The image commands, for `node`'s image copy or fill.
    pub fn image_commands(&self, node: trace_format::NodeId) -> BackendResult<&ImageCommands> {
        self.images.as_ref().ok_or_else(|| crate::backend::BackendError::Unsupported(format!("node {node}: this platform records no image commands in command buffers")))
    }

    /// Whether kernels that take a sampler can be recorded: PoCL 3.1, the implementation of
    /// revisions before 0.9.5 this replayer meets, aborts inside `clCommandNDRangeKernelKHR`.
    pub fn records_samplers(&self) -> bool {
        commands_take_properties(self.revision)
    }

    /// Whether SVM copies and fills can be recorded (revisions with properties that export them).
    pub fn records_svm(&self) -> bool {
        matches!(&self.commands, Commands::WithProperties { svm_memcpy: Some(_), svm_fill: Some(_), .. })
    }

    pub fn barrier(&self, buffer: cl_command_buffer_khr, waits: SyncWaits, point: &mut cl_sync_point_khr) -> BackendResult<()> {
        let (count, list) = wait_list(waits);
        let code = match &self.commands {
            Commands::WithoutProperties { barrier, .. } => unsafe { barrier(buffer, ptr::null_mut(), count, list, point, ptr::null_mut()) },
            Commands::WithProperties { barrier, .. } => unsafe { barrier(buffer, ptr::null_mut(), ptr::null(), count, list, point, ptr::null_mut()) },
        };
        check(code, "clCommandBarrierWithWaitListKHR")
    }

    #[allow(clippy::too_many_arguments)]
    pub fn copy(&self, buffer: cl_command_buffer_khr, src: cl_mem, dst: cl_mem, src_offset: usize, dst_offset: usize, size: usize, waits: SyncWaits, point: &mut cl_sync_point_khr) -> BackendResult<()> {
        let (count, list) = wait_list(waits);
        let code = match &self.commands {
            Commands::WithoutProperties { copy, .. } => unsafe { copy(buffer, ptr::null_mut(), src, dst, src_offset, dst_offset, size, count, list, point, ptr::null_mut()) },
            Commands::WithProperties { copy, .. } => unsafe { copy(buffer, ptr::null_mut(), ptr::null(), src, dst, src_offset, dst_offset, size, count, list, point, ptr::null_mut()) },
        };
        check(code, "clCommandCopyBufferKHR")
    }

    pub fn copy_rect(&self, buffer: cl_command_buffer_khr, src: cl_mem, dst: cl_mem, rect: &Rect, waits: SyncWaits, point: &mut cl_sync_point_khr) -> BackendResult<()> {
        let (count, list) = wait_list(waits);
        let [srp, ssp, drp, dsp] = rect.pitches;
        let (so, dso, region) = (rect.src_origin.as_ptr(), rect.dst_origin.as_ptr(), rect.region.as_ptr());
        let code = match &self.commands {
            Commands::WithoutProperties { copy_rect, .. } => unsafe { copy_rect(buffer, ptr::null_mut(), src, dst, so, dso, region, srp, ssp, drp, dsp, count, list, point, ptr::null_mut()) },
            Commands::WithProperties { copy_rect, .. } => unsafe { copy_rect(buffer, ptr::null_mut(), ptr::null(), src, dst, so, dso, region, srp, ssp, drp, dsp, count, list, point, ptr::null_mut()) },
        };
        check(code, "clCommandCopyBufferRectKHR")
    }

    #[allow(clippy::too_many_arguments)]
    pub fn fill(&self, buffer: cl_command_buffer_khr, target: cl_mem, pattern: &[u8], offset: usize, size: usize, waits: SyncWaits, point: &mut cl_sync_point_khr) -> BackendResult<()> {
        let (count, list) = wait_list(waits);
        let bytes = pattern.as_ptr() as *const c_void;
        let code = match &self.commands {
            Commands::WithoutProperties { fill, .. } => unsafe { fill(buffer, ptr::null_mut(), target, bytes, pattern.len(), offset, size, count, list, point, ptr::null_mut()) },
            Commands::WithProperties { fill, .. } => unsafe { fill(buffer, ptr::null_mut(), ptr::null(), target, bytes, pattern.len(), offset, size, count, list, point, ptr::null_mut()) },
        };
        check(code, "clCommandFillBufferKHR")
    }

    pub fn svm_memcpy(&self, buffer: cl_command_buffer_khr, dst: *mut c_void, src: *const c_void, size: usize, waits: SyncWaits, point: &mut cl_sync_point_khr) -> BackendResult<()> {
        let (count, list) = wait_list(waits);
        let Commands::WithProperties { svm_memcpy: Some(memcpy), .. } = &self.commands else {
            return Err(crate::backend::BackendError::Unsupported("SVM copies in this command buffer revision".into()));
        };
        check(unsafe { memcpy(buffer, ptr::null_mut(), ptr::null(), dst, src, size, count, list, point, ptr::null_mut()) }, "clCommandSVMMemcpyKHR")
    }

    pub fn svm_fill(&self, buffer: cl_command_buffer_khr, target: *mut c_void, pattern: &[u8], size: usize, waits: SyncWaits, point: &mut cl_sync_point_khr) -> BackendResult<()> {
        let (count, list) = wait_list(waits);
        let Commands::WithProperties { svm_fill: Some(fill), .. } = &self.commands else {
            return Err(crate::backend::BackendError::Unsupported("SVM fills in this command buffer revision".into()));
        };
        let bytes = pattern.as_ptr() as *const c_void;
        check(unsafe { fill(buffer, ptr::null_mut(), ptr::null(), target, bytes, pattern.len(), size, count, list, point, ptr::null_mut()) }, "clCommandSVMMemFillKHR")
    }
}

/// Whether every `clCommand*KHR` of command buffer `revision` takes `properties` (added in
/// 0.9.5; before, only `clCommandNDRangeKernelKHR` has it).
fn commands_take_properties(revision: (u32, u32, u32)) -> bool {
    revision >= (0, 9, 5)
}

/// Whether `clUpdateMutableCommandsKHR` of mutable dispatch `revision` takes an array of
/// configs (0.9.2, OpenCL-Headers commit 7258b9e) instead of a chained base config.
fn updates_take_config_array(revision: (u32, u32, u32)) -> bool {
    revision >= (0, 9, 2)
}

/// A sync-point list as the API takes it (NULL when empty).
pub fn wait_list(waits: SyncWaits) -> (cl_uint, *const cl_sync_point_khr) {
    (waits.len() as cl_uint, if waits.is_empty() { ptr::null() } else { waits.as_ptr() })
}

/// `clUpdateMutableCommandsKHR` in the device's revision, and what it may change.
pub struct MutableDispatch {
    pub revision: (u32, u32, u32),
    pub fields: cl_mutable_dispatch_fields_khr,
    update: Update,
}

enum Update {
    /// Before 0.9.2: one base config chaining an array of dispatch configs.
    Chained(unsafe extern "C" fn(cl_command_buffer_khr, *const ChainedBaseConfig) -> cl_int),
    /// 0.9.2 and later: parallel arrays of config types and configs.
    Array(Raw<clUpdateMutableCommandsKHR_fn>),
}

impl MutableDispatch {
    fn find(api: &Api, platform: cl_platform_id, device: cl_device_id) -> Option<MutableDispatch> {
        let revision = extension_version(api, device, "cl_khr_command_buffer_mutable_dispatch")?;
        let fields = super::device::device_value::<cl_mutable_dispatch_fields_khr>(api, device, CL_DEVICE_MUTABLE_DISPATCH_CAPABILITIES_KHR)?;
        // SAFETY: the signature of clUpdateMutableCommandsKHR in `revision`.
        let update = if updates_take_config_array(revision) {
            Update::Array(unsafe { api.extension(platform, "clUpdateMutableCommandsKHR")? })
        } else {
            Update::Chained(unsafe { api.extension(platform, "clUpdateMutableCommandsKHR")? })
        };
        Some(MutableDispatch { revision, fields, update })
    }

    /// Whether updates may change kernel arguments and, when `launch`, the ND-range.
    pub fn can_change(&self, launch: bool) -> bool {
        let mut needed = CL_MUTABLE_DISPATCH_ARGUMENTS_KHR;
        if launch {
            needed |= CL_MUTABLE_DISPATCH_GLOBAL_OFFSET_KHR | CL_MUTABLE_DISPATCH_GLOBAL_SIZE_KHR | CL_MUTABLE_DISPATCH_LOCAL_SIZE_KHR;
        }
        self.fields & needed == needed
    }

    /// Applies `configs` to `buffer` in one call.
    pub fn update(&self, buffer: cl_command_buffer_khr, configs: &[cl_mutable_dispatch_config_khr]) -> BackendResult<()> {
        let code = match &self.update {
            Update::Array(update) => {
                let types = vec![CL_STRUCTURE_TYPE_MUTABLE_DISPATCH_CONFIG_KHR; configs.len()];
                let mut pointers: Vec<*const c_void> = configs.iter().map(|c| c as *const _ as *const c_void).collect();
                unsafe { update(buffer, configs.len() as cl_uint, types.as_ptr(), pointers.as_mut_ptr()) }
            }
            Update::Chained(update) => {
                let chained: Vec<ChainedDispatchConfig> =
                    configs.iter().map(|&config| ChainedDispatchConfig { kind: CHAINED_DISPATCH_CONFIG, next: ptr::null(), config }).collect();
                let base = ChainedBaseConfig {
                    kind: CHAINED_BASE_CONFIG,
                    next: ptr::null(),
                    num_mutable_dispatch: chained.len() as cl_uint,
                    mutable_dispatch_list: chained.as_ptr(),
                };
                unsafe { update(buffer, &base) }
            }
        };
        check(code, "clUpdateMutableCommandsKHR")
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    /// The revisions the Khronos header history names: PoCL 3.1 reports command buffer 0.9.0,
    /// Intel 1.0 with mutable dispatch 0.9.3.
    #[test]
    fn signatures_follow_the_header_history() {
        assert!(!commands_take_properties((0, 9, 0)));
        assert!(!commands_take_properties((0, 9, 4)));
        assert!(commands_take_properties((0, 9, 5)));
        assert!(commands_take_properties((1, 0, 0)));
        assert!(!updates_take_config_array((0, 9, 1)));
        assert!(updates_take_config_array((0, 9, 2)));
        assert!(updates_take_config_array((0, 9, 3)));
    }
}
