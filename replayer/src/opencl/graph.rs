//! Graph mode: one `cl_khr_command_buffer` per partition, sync points for its edges, and
//! patches applied through mutable dispatch where the device has it, else by rebuilding.

use super::api::check;
use super::extension::{wait_list, CommandBufferApi};
use super::objects::{Binding, Objects};
use super::resolve::{nd_range, resolve, runs_nothing, Resolved};
use super::OpenClBackend;
use crate::backend::{Backend, BackendError, BackendResult, BufferHandle, PartitionNodes, UpdateKind};
use opencl_sys::*;
use std::collections::HashMap;
use std::ffi::c_void;
use std::ptr;
use crate::replay::memory_used;
use trace_format::{Arg, Command, Launch, MemId, NodeId, Patch};

/// A finalized command buffer.
pub struct Built {
    pub buffer: cl_command_buffer_khr,
    /// The mutable handle of each kernel command, when the buffer is mutable.
    mutable: HashMap<NodeId, cl_mutable_command_khr>,
    /// The node whose timing stands for the whole buffer.
    pub first_node: NodeId,
    /// The buffer's own kernel objects, one per command: PoCL reads a recorded kernel's
    /// arguments at each run, so they must not change after recording.
    kernels: Vec<cl_kernel>,
    /// The memory objects it names, with the generation each had then (`Objects::generations`).
    pub names: Vec<(MemId, u32)>,
}

/// The memory `part`'s nodes and `patches` name, with their generations now; none where no
/// object is created again (no image shares storage), so that updates cost nothing more.
fn named_memory(objects: &Objects, part: &PartitionNodes<'_>, patches: &[Patch]) -> Vec<(MemId, u32)> {
    if !objects.defers_images() {
        return Vec::new();
    }
    let patched = patches.iter().filter_map(|patch| match patch {
        Patch::Arg { value: Arg::Memory { mem, .. }, .. } => Some(*mem),
        _ => None,
    });
    let mut named = memory_used(part.nodes.iter().map(|&(_, node)| node));
    named.extend(patched);
    named.sort_unstable();
    named.dedup();
    named.into_iter().filter_map(|mem| Some((mem, *objects.generations.get(mem.index())?))).collect()
}

/// The launch patches of `patches`, by node.
fn launches(patches: &[Patch]) -> HashMap<NodeId, &Launch> {
    patches.iter().filter_map(|p| if let Patch::Launch { node, launch } = p { Some((*node, launch)) } else { None }).collect()
}

/// The argument patches of `patches`, by node and argument index.
fn patched_args(patches: &[Patch]) -> HashMap<(NodeId, u32), &Arg> {
    patches.iter().filter_map(|p| if let Patch::Arg { node, index, value } = p { Some(((*node, *index), value)) } else { None }).collect()
}

impl OpenClBackend {
    /// Records and finalizes `part` with `patches` applied, on the kernel objects `reused` (those
    /// of the buffer it replaces, one per kernel command in order) or on new clones.
    pub(super) fn build_buffer(&mut self, part: &PartitionNodes<'_>, patches: &[Patch], reused: Vec<cl_kernel>) -> BackendResult<Built> {
        let first_node = part.nodes.first().map(|&(id, _)| id).ok_or_else(|| BackendError::Unsupported("an empty partition".into()))?;
        let command_buffers = self.command_buffers()?;
        let objects = self.objects()?;
        let mutable_fields = command_buffers.mutable.as_ref().map(|m| m.fields);
        let flags = if mutable_fields.is_some() { CL_COMMAND_BUFFER_MUTABLE_KHR } else { 0 };
        let properties = [CL_COMMAND_BUFFER_FLAGS_KHR, flags, 0];
        let mut code = CL_SUCCESS;
        let buffer = unsafe { (command_buffers.create)(1, &objects.main_queue, properties.as_ptr(), &mut code) };
        check(code, "clCreateCommandBufferKHR")?;
        let mut recorder =
            Recorder { command_buffers, objects, buffer, mutable_fields, args: patched_args(patches), launches: launches(patches), reused: reused.into_iter(), kernels: Vec::new() };
        let mut mutable = HashMap::new();
        let (predecessors, _) = part.links();
        let mut points: Vec<cl_sync_point_khr> = vec![0; part.nodes.len()];
        let mut waits: Vec<cl_sync_point_khr> = Vec::new();
        let recorded = (|| {
            for (index, &(id, node)) in part.nodes.iter().enumerate() {
                waits.clear();
                waits.extend(predecessors[index].iter().map(|&p| points[p]));
                let (point, handle) = recorder.record(id, &node.command, &waits)?;
                if !handle.is_null() {
                    mutable.insert(id, handle);
                }
                points[index] = point;
            }
            check(unsafe { (command_buffers.finalize)(buffer) }, "clFinalizeCommandBufferKHR")
        })();
        // Kernel objects left over from a replaced buffer stay the buffer's own, released with it.
        let kernels = recorder.kernels.into_iter().chain(recorder.reused).collect();
        let built = Built { buffer, mutable, first_node, kernels, names: named_memory(objects, part, patches) };
        match recorded {
            Ok(()) => Ok(built),
            Err(error) => {
                // Releasing a half-recorded buffer cannot fail in a way worth more than `error`.
                let _ = self.release_buffer(built);
                Err(error)
            }
        }
    }

    pub(super) fn update_buffer(&mut self, handle: BufferHandle, part: &PartitionNodes<'_>, patches: &[Patch]) -> BackendResult<UpdateKind> {
        let built = self.built.get(handle.0).and_then(Option::as_ref).ok_or_else(|| super::unknown_buffer(handle))?;
        // A buffer naming an image created again since holds a released handle: only a rebuild helps.
        if !self.rebuild_updates && !self.outdated(handle) && self.update_natively(built, patches)? {
            let names = named_memory(self.objects()?, part, patches);
            if let Some(built) = self.built.get_mut(handle.0).and_then(Option::as_mut) {
                built.names = names;
            }
            return Ok(UpdateKind::Native);
        }
        // The old buffer goes first (nothing runs it: the previous segment finished); its kernel
        // objects are recorded again with the new arguments.
        let old = self.built[handle.0].take().ok_or_else(|| super::unknown_buffer(handle))?;
        check(unsafe { (self.command_buffers()?.release)(old.buffer) }, "clReleaseCommandBufferKHR")?;
        self.built[handle.0] = Some(self.build_buffer(part, patches, old.kernels)?);
        Ok(UpdateKind::Rebuilt)
    }

    /// Applies `patches` with `clUpdateMutableCommandsKHR`; `false` when the device cannot.
    fn update_natively(&self, built: &Built, patches: &[Patch]) -> BackendResult<bool> {
        let Some(mutable) = self.command_buffers.as_ref().and_then(|c| c.mutable.as_ref()) else { return Ok(false) };
        let changes_launch = patches.iter().any(|p| matches!(p, Patch::Launch { .. }));
        // A launch of nothing is recorded as a barrier, which has no kernel to update.
        if patches.iter().any(|p| matches!(p, Patch::Launch { launch, .. } if runs_nothing(launch))) {
            return Ok(false);
        }
        let patched_nodes = patches.iter().map(|(Patch::Arg { node, .. } | Patch::Launch { node, .. })| *node);
        if !mutable.can_change(changes_launch) || patched_nodes.clone().any(|node| !built.mutable.contains_key(&node)) {
            return Ok(false);
        }
        let objects = self.objects()?;
        let mut updates: Vec<NodeUpdate> = Vec::new();
        for patch in patches {
            let (Patch::Arg { node, .. } | Patch::Launch { node, .. }) = patch;
            let position = match updates.iter().position(|u| u.node == *node) {
                Some(position) => position,
                None => {
                    updates.push(NodeUpdate { node: *node, args: Vec::new(), range: None });
                    updates.len() - 1
                }
            };
            let update = &mut updates[position];
            match patch {
                Patch::Arg { index, value, .. } => update.args.push((*index, objects.binding(*index, value)?)),
                Patch::Launch { node, launch } => {
                    update.range = Some(nd_range(launch).map_err(|e| e.about(&format!("node {node}")))?);
                }
            }
        }
        // The API structs point into `updates`, which outlives the call.
        let arg_lists: Vec<(Vec<cl_mutable_dispatch_arg_khr>, Vec<cl_mutable_dispatch_arg_khr>)> = updates.iter().map(NodeUpdate::arg_lists).collect();
        let configs: Vec<cl_mutable_dispatch_config_khr> = updates
            .iter()
            .zip(&arg_lists)
            .map(|(update, (args, svm_args))| {
                let range = update.range.as_ref();
                cl_mutable_dispatch_config_khr {
                    command: built.mutable[&update.node],
                    num_args: args.len() as cl_uint,
                    num_svm_args: svm_args.len() as cl_uint,
                    num_exec_infos: 0,
                    work_dim: range.map_or(0, |r| r.dims),
                    arg_list: if args.is_empty() { ptr::null() } else { args.as_ptr() },
                    arg_svm_list: if svm_args.is_empty() { ptr::null() } else { svm_args.as_ptr() },
                    exec_info_list: ptr::null(),
                    global_work_offset: range.map_or(ptr::null(), |r| r.offset.as_ptr()),
                    global_work_size: range.map_or(ptr::null(), |r| r.global.as_ptr()),
                    local_work_size: range.map_or(ptr::null(), |r| r.local_ptr()),
                }
            })
            .collect();
        if !configs.is_empty() {
            mutable.update(built.buffer, &configs)?;
        }
        Ok(true)
    }

    pub(super) fn release_buffers(&mut self) {
        // Newest first, as `release_buffer` releases kernels.
        for built in std::mem::take(&mut self.built).into_iter().rev().flatten() {
            // Nothing to do about a failed release while tearing down.
            let _ = self.release_buffer(built);
        }
    }

    fn release_buffer(&self, built: Built) -> BackendResult<()> {
        let release = self.command_buffers()?.release;
        let released = check(unsafe { release(built.buffer) }, "clReleaseCommandBufferKHR");
        // Newest first: PoCL keeps a program's kernels in a list, newest first, that each release
        // walks to its kernel; releasing the oldest first would cost the square of their number.
        for kernel in built.kernels.into_iter().rev() {
            unsafe { (self.api.clReleaseKernel)(kernel) };
        }
        released
    }
}

/// Records commands into one command buffer.
struct Recorder<'b> {
    command_buffers: &'b CommandBufferApi,
    objects: &'b Objects,
    buffer: cl_command_buffer_khr,
    /// What kernel commands may change later, when the buffer is mutable.
    mutable_fields: Option<cl_mutable_dispatch_fields_khr>,
    /// Patches applied to the buffer's kernels as they are recorded.
    args: HashMap<(NodeId, u32), &'b Arg>,
    launches: HashMap<NodeId, &'b Launch>,
    /// Kernel objects of a buffer this one replaces, to record again.
    reused: std::vec::IntoIter<cl_kernel>,
    /// The kernel objects recorded so far, owned by the buffer.
    kernels: Vec<cl_kernel>,
}

impl Recorder<'_> {
    /// A kernel object of the buffer's own for `node` (`loaded`'s clone, or a reused one) with its
    /// recorded arguments `args` and the patched ones. Every
    /// argument is set again: PoCL's clone of a kernel with a null buffer argument crashes
    /// when it is launched.
    fn own_kernel(&mut self, node: NodeId, loaded: cl_kernel, args: &[Arg]) -> BackendResult<cl_kernel> {
        let kernel = match self.reused.next() {
            Some(kernel) => kernel,
            None => {
                let mut code = CL_SUCCESS;
                let kernel = unsafe { (self.objects.api.clCloneKernel)(loaded, &mut code) };
                check(code, "clCloneKernel")?;
                kernel
            }
        };
        self.kernels.push(kernel);
        for (index, recorded) in args.iter().enumerate() {
            let index = index as u32;
            let value = self.args.get(&(node, index)).copied().unwrap_or(recorded);
            self.objects.set_arg(kernel, index, value).map_err(|e| e.about(&format!("node {node}")))?;
        }
        Ok(kernel)
    }

    /// Records one command after `waits`; returns its sync point and its mutable handle (null
    /// unless it is a kernel in a mutable buffer).
    fn record(&mut self, node: NodeId, command: &Command, waits: &[cl_sync_point_khr]) -> BackendResult<(cl_sync_point_khr, cl_mutable_command_khr)> {
        let (command_buffers, buffer) = (self.command_buffers, self.buffer);
        let mut point = 0;
        let mut handle: cl_mutable_command_khr = ptr::null_mut();
        let launch = self.launches.get(&node).copied();
        match resolve(self.objects, node, command, launch)? {
            Resolved::Kernel { kernel, args, range } => {
                let kernel = self.own_kernel(node, kernel, args)?;
                let mutable_properties = [CL_MUTABLE_DISPATCH_UPDATABLE_FIELDS_KHR, self.mutable_fields.unwrap_or(0), 0];
                let (properties, handle_out) = match self.mutable_fields {
                    Some(_) => (mutable_properties.as_ptr(), &mut handle as *mut cl_mutable_command_khr),
                    None => (ptr::null(), ptr::null_mut()),
                };
                let (count, list) = wait_list(waits);
                let code = unsafe {
                    (command_buffers.ndrange)(buffer, ptr::null_mut(), properties, kernel, range.dims, range.offset.as_ptr(), range.global.as_ptr(), range.local_ptr(), count, list, &mut point, handle_out)
                };
                check(code, "clCommandNDRangeKernelKHR")?;
            }
            Resolved::Copy { src, dst, src_offset, dst_offset, bytes } => command_buffers.copy(buffer, src, dst, src_offset, dst_offset, bytes, waits, &mut point)?,
            Resolved::CopyRect { src, dst, rect } => command_buffers.copy_rect(buffer, src, dst, &rect, waits, &mut point)?,
            Resolved::SvmCopy { dst, src, bytes, .. } => command_buffers.svm_memcpy(buffer, dst, src, bytes, waits, &mut point)?,
            Resolved::Fill { mem, offset, bytes, pattern } => command_buffers.fill(buffer, mem, pattern, offset, bytes, waits, &mut point)?,
            Resolved::SvmFill { pointer, bytes, pattern, .. } => command_buffers.svm_fill(buffer, pointer, pattern, bytes, waits, &mut point)?,
            Resolved::CopyImage { src, dst, src_origin, dst_origin, region } => {
                command_buffers.image_commands(node)?.copy(buffer, src, dst, src_origin, dst_origin, region, waits, &mut point)?
            }
            Resolved::CopyImageToBuffer { src, dst, src_origin, region, dst_offset } => {
                command_buffers.image_commands(node)?.copy_to_buffer(buffer, src, dst, src_origin, region, dst_offset, waits, &mut point)?
            }
            Resolved::CopyBufferToImage { src, dst, src_offset, dst_origin, region } => {
                command_buffers.image_commands(node)?.copy_from_buffer(buffer, src, dst, src_offset, dst_origin, region, waits, &mut point)?
            }
            Resolved::FillImage { mem, color, origin, region } => command_buffers.image_commands(node)?.fill(buffer, mem, &color, origin, region, waits, &mut point)?,
            Resolved::Barrier => command_buffers.barrier(buffer, waits, &mut point)?,
            Resolved::Write { .. } | Resolved::Read { .. } => {
                return Err(BackendError::Unsupported(format!("node {node}: host transfers cannot be recorded in a command buffer")))
            }
        }
        Ok((point, handle))
    }
}

/// The new configuration of one mutable kernel command.
struct NodeUpdate {
    node: NodeId,
    args: Vec<(u32, Binding)>,
    range: Option<super::resolve::NdRange>,
}

impl NodeUpdate {
    /// The plain and the SVM argument lists, pointing into `self`.
    fn arg_lists(&self) -> (Vec<cl_mutable_dispatch_arg_khr>, Vec<cl_mutable_dispatch_arg_khr>) {
        let mut args = Vec::new();
        let mut svm_args = Vec::new();
        for (index, binding) in &self.args {
            match binding {
                Binding::Bytes(bytes) => args.push(cl_mutable_dispatch_arg_khr { arg_index: *index, arg_size: bytes.len(), arg_value: bytes.as_ptr() as *const c_void }),
                Binding::Local(size) => args.push(cl_mutable_dispatch_arg_khr { arg_index: *index, arg_size: *size, arg_value: ptr::null() }),
                Binding::Svm { pointer, .. } => svm_args.push(cl_mutable_dispatch_arg_khr { arg_index: *index, arg_size: 0, arg_value: *pointer }),
            }
        }
        (args, svm_args)
    }
}
