//! Patching a built list for the next member of its family: in place through the mutable command
//! list extension, where the list is mutable and the device may change what the patches change,
//! else by building the list again with the patches applied.

use super::commands::{arg_value, shape, Appender, ArgValue};
use super::driver::check;
use super::graph::{Built, UPDATABLE};
use crate::backend::{BackendError, BackendResult, PartitionNodes};
use std::collections::BTreeSet;
use std::ffi::c_void;
use trace_format::{Command, NodeId, Patch};
use ze_sys::functions::ExtensionFunctions;
use ze_sys::*;

/// The descriptors of one `zeCommandListUpdateMutableCommandsExp` call and the values they point to.
#[derive(Default)]
struct Updates {
    values: Vec<ArgValue>,
    counts: Vec<ze_group_count_t>,
    arguments: Vec<ze_mutable_kernel_argument_exp_desc_t>,
    group_counts: Vec<ze_mutable_group_count_exp_desc_t>,
    group_sizes: Vec<ze_mutable_group_size_exp_desc_t>,
    offsets: Vec<ze_mutable_global_offset_exp_desc_t>,
}

impl Updates {
    /// Chains every descriptor behind `head`; the vectors must not change afterwards.
    fn chain(&mut self, head: &mut ze_mutable_commands_exp_desc_t) {
        for (argument, value) in self.arguments.iter_mut().zip(&self.values) {
            argument.pArgValue = value.pointer();
        }
        for (group_count, count) in self.group_counts.iter_mut().zip(&self.counts) {
            group_count.pGroupCount = count;
        }
        let mut links: Vec<*mut *const c_void> = vec![&raw mut head.pNext];
        let mut link = |next: *const c_void, its_next: *mut *const c_void| {
            // SAFETY: the previous link points into a descriptor of `self` or the head.
            unsafe { **links.last().expect("the head") = next };
            links.push(its_next);
        };
        for d in &mut self.arguments {
            link((&raw const *d).cast(), &raw mut d.pNext);
        }
        for d in &mut self.group_counts {
            link((&raw const *d).cast(), &raw mut d.pNext);
        }
        for d in &mut self.group_sizes {
            link((&raw const *d).cast(), &raw mut d.pNext);
        }
        for d in &mut self.offsets {
            link((&raw const *d).cast(), &raw mut d.pNext);
        }
    }
}

/// Sets every kernel node the patches change now or changed last time to its launch with the
/// new patches; `false` (nothing changed) when the list cannot be updated in place.
pub fn update_natively(appender: &Appender<'_>, functions: &ExtensionFunctions, flags: ze_mutable_command_exp_flags_t, built: &mut Built, part: &PartitionNodes<'_>, patches: &[Patch]) -> BackendResult<bool> {
    let patched_now: BTreeSet<NodeId> = patches.iter().map(|(Patch::Arg { node, .. } | Patch::Launch { node, .. })| *node).collect();
    let touched: BTreeSet<NodeId> = patched_now.union(&built.patched).copied().collect();
    if flags & UPDATABLE != UPDATABLE || touched.iter().any(|node| !built.commands.contains_key(node)) {
        return Ok(false);
    }
    let nodes = part.patched(patches)?;
    let mut updates = Updates::default();
    for (id, node) in nodes.iter().filter(|(id, _)| touched.contains(id)) {
        let Command::Kernel(launch) = &node.command else {
            return Err(BackendError::Unsupported(format!("node {id} is a {}, only kernels take patches", node.command.kind_name())));
        };
        let command = built.commands[id];
        for (index, arg) in launch.args.iter().enumerate() {
            let value = arg_value(appender.objects, index, arg)?;
            updates.arguments.push(ze_mutable_kernel_argument_exp_desc_t { commandId: command, argIndex: index as u32, argSize: value.size(), ..ze_mutable_kernel_argument_exp_desc_t::new() });
            updates.values.push(value);
        }
        let kernel = *appender.objects.kernels.get(launch.kernel.index()).ok_or_else(|| BackendError::Unsupported(format!("kernel {} is not in the trace", launch.kernel)))?;
        let shape = shape(&launch.launch, |global| appender.suggest(kernel, global))?;
        let [x, y, z] = shape.group_count;
        updates.counts.push(ze_group_count_t { groupCountX: x, groupCountY: y, groupCountZ: z });
        updates.group_counts.push(ze_mutable_group_count_exp_desc_t { commandId: command, ..ze_mutable_group_count_exp_desc_t::new() });
        let [x, y, z] = shape.group_size;
        updates.group_sizes.push(ze_mutable_group_size_exp_desc_t { commandId: command, groupSizeX: x, groupSizeY: y, groupSizeZ: z, ..ze_mutable_group_size_exp_desc_t::new() });
        let [x, y, z] = shape.offset;
        updates.offsets.push(ze_mutable_global_offset_exp_desc_t { commandId: command, offsetX: x, offsetY: y, offsetZ: z, ..ze_mutable_global_offset_exp_desc_t::new() });
    }
    let mut head = ze_mutable_commands_exp_desc_t::new();
    updates.chain(&mut head);
    // SAFETY: a closed mutable list that is not running (the backend finished), and a chain of
    // descriptors whose values live in `updates` across the call.
    check(unsafe { functions.zeCommandListUpdateMutableCommandsExp(built.list, &head) }, "zeCommandListUpdateMutableCommandsExp")?;
    check(unsafe { appender.scope.api.zeCommandListClose(built.list) }, "zeCommandListClose")?;
    built.patched = patched_now;
    Ok(true)
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn every_descriptor_is_chained_once_with_its_value() {
        let mut updates = Updates {
            values: vec![ArgValue::Bytes(vec![1, 2, 3, 4]), ArgValue::Local(64)],
            counts: vec![ze_group_count_t { groupCountX: 3, groupCountY: 1, groupCountZ: 1 }],
            arguments: vec![ze_mutable_kernel_argument_exp_desc_t::new(), ze_mutable_kernel_argument_exp_desc_t::new()],
            group_counts: vec![ze_mutable_group_count_exp_desc_t::new()],
            group_sizes: vec![ze_mutable_group_size_exp_desc_t::new()],
            offsets: vec![ze_mutable_global_offset_exp_desc_t::new()],
        };
        let mut head = ze_mutable_commands_exp_desc_t::new();
        updates.chain(&mut head);
        let mut types = Vec::new();
        let mut next = head.pNext;
        while !next.is_null() {
            // SAFETY: the chain links descriptors of `updates`, each starting like ze_base_desc_t.
            let base = unsafe { &*next.cast::<ze_base_desc_t>() };
            types.push(base.stype);
            next = base.pNext;
        }
        assert_eq!(
            types,
            [
                ZE_STRUCTURE_TYPE_MUTABLE_KERNEL_ARGUMENT_EXP_DESC,
                ZE_STRUCTURE_TYPE_MUTABLE_KERNEL_ARGUMENT_EXP_DESC,
                ZE_STRUCTURE_TYPE_MUTABLE_GROUP_COUNT_EXP_DESC,
                ZE_STRUCTURE_TYPE_MUTABLE_GROUP_SIZE_EXP_DESC,
                ZE_STRUCTURE_TYPE_MUTABLE_GLOBAL_OFFSET_EXP_DESC,
            ]
        );
        assert_eq!(updates.arguments[0].pArgValue, updates.values[0].pointer());
        assert!(updates.arguments[1].pArgValue.is_null(), "local memory has no value");
        assert_eq!(updates.group_counts[0].pGroupCount, &raw const updates.counts[0]);
    }
}
