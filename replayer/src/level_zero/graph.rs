//! Graph mode: one closed regular command list per partition, executed on the backend's queue
//! whenever the partition runs. Level Zero lists only start their commands in order, so the
//! partition's edges are events (or barriers, for a straight line); a barrier first orders the
//! list after what the queue ran before, and one at the end lets it reset its events for the next
//! execution. Lists are mutable where the driver has the extension (and rebuilds are not asked
//! for), with a command identifier for each kernel.

use super::commands::Appender;
use super::driver::check;
use super::events::Events;
use super::objects::Scope;
use crate::backend::{BackendResult, PartitionNodes};
use std::collections::{BTreeSet, HashMap};
use trace_format::{Command, NodeId};
use ze_sys::functions::ExtensionFunctions;
use ze_sys::*;

/// What kernel commands of a mutable list may change: arguments, group counts and sizes, offsets.
pub const UPDATABLE: ze_mutable_command_exp_flags_t =
    ZE_MUTABLE_COMMAND_EXP_FLAG_KERNEL_ARGUMENTS | ZE_MUTABLE_COMMAND_EXP_FLAG_GROUP_COUNT | ZE_MUTABLE_COMMAND_EXP_FLAG_GROUP_SIZE | ZE_MUTABLE_COMMAND_EXP_FLAG_GLOBAL_OFFSET;

pub struct Built {
    scope: Scope,
    pub list: ze_command_list_handle_t,
    /// The mutable command identifier of each kernel node; empty for a list that is not mutable.
    pub commands: HashMap<NodeId, u64>,
    /// Nodes the last update changed: the next one sets them back if it leaves them out.
    pub patched: BTreeSet<NodeId>,
    /// The list's own events, one per node with successors.
    events: Events,
}

impl Drop for Built {
    fn drop(&mut self) {
        // SAFETY: the list this value built; nothing runs it any more (the backend finished).
        unsafe { self.scope.api.zeCommandListDestroy(self.list) };
    }
}

/// Builds and closes the list of `part`; mutable when `mutable` gives the extension.
pub fn build(appender: &Appender<'_>, part: &PartitionNodes<'_>, mutable: Option<&ExtensionFunctions>) -> BackendResult<Built> {
    let Scope { api, context, device } = appender.scope;
    let mutable_desc = ze_mutable_command_list_exp_desc_t::new();
    let mut desc = ze_command_list_desc_t::new();
    if mutable.is_some() {
        desc.pNext = (&raw const mutable_desc).cast();
    }
    let mut list = std::ptr::null_mut();
    // SAFETY: the backend's context and device; descriptions alive for the call.
    check(unsafe { api.zeCommandListCreate(context, device, &desc, &mut list) }, "zeCommandListCreate")?;
    let mut built = Built { scope: appender.scope, list, commands: HashMap::new(), patched: BTreeSet::new(), events: Events::new(api, context) };
    let barrier = |list| check(unsafe { api.zeCommandListAppendBarrier(list, std::ptr::null_mut(), 0, std::ptr::null_mut()) }, "zeCommandListAppendBarrier");
    barrier(list)?;
    let (predecessors, has_successor) = part.links();
    let mut signals: Vec<ze_event_handle_t> = vec![std::ptr::null_mut(); part.nodes.len()];
    if !part.straight_line {
        for (signal, _) in signals.iter_mut().zip(&has_successor).filter(|(_, has)| **has) {
            *signal = built.events.take()?;
        }
    }
    let mut waits = Vec::new();
    for (index, &(id, node)) in part.nodes.iter().enumerate() {
        if part.straight_line && index > 0 {
            barrier(list)?;
        }
        if let (Some(functions), Command::Kernel(_)) = (mutable, &node.command) {
            let id_desc = ze_mutable_command_id_exp_desc_t { flags: UPDATABLE, ..ze_mutable_command_id_exp_desc_t::new() };
            let mut command = 0;
            // SAFETY: an open mutable list, a description and an out-pointer.
            check(unsafe { functions.zeCommandListGetNextCommandIdExp(list, &id_desc, &mut command) }, "zeCommandListGetNextCommandIdExp")?;
            built.commands.insert(id, command);
        }
        waits.clear();
        if !part.straight_line {
            waits.extend(predecessors[index].iter().map(|&p| signals[p]));
        }
        appender.append(list, id, &node.command, signals[index], &waits)?;
    }
    barrier(list)?;
    for &event in built.events.used() {
        // SAFETY: an event of this list, reset once everything before the barrier ran.
        check(unsafe { api.zeCommandListAppendEventReset(list, event) }, "zeCommandListAppendEventReset")?;
    }
    check(unsafe { api.zeCommandListClose(list) }, "zeCommandListClose")?;
    Ok(built)
}
