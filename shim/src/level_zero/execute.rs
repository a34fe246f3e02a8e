//! `zeCommandQueueExecuteCommandLists`: each list executed is a sub-graph node of its queue, the
//! list's graph as it stands (one instance of the same list per execution), with the host
//! memory its copies read taken now. The fence stands for the last list's execution.

use super::access::DeviceAccess;
use super::commands::take_host_source;
use super::hooks::args;
use super::state::{with_recorder, State};
use super::submit::{submit, Work};
use super::{key, succeeded, Recorded};
use crate::entry::Forward;
use crate::recorder::{Key, Order, Prepared, Recorder};
use trace_format::Command;
use ze_sys::*;

const CALL: &str = "zeCommandQueueExecuteCommandLists";

/// One list's execution, prepared before the real call; `None` for a list the shim did not
/// see created.
fn execution(state: &State, recorder: &mut Recorder, list: Key) -> Option<(Prepared, Work)> {
    let recorded = state.lists.get(&list)?;
    let mut graph = recorded.graph.clone();
    for &(index, region) in &recorded.host_sources {
        take_host_source(
            recorder,
            graph.nodes.get_mut(index).map(|node| &mut node.command),
            region,
        );
    }
    let prepared = recorder.prepare(recorded.accesses.concat(), &DeviceAccess::new(state));
    let work = Work {
        call: CALL,
        command: Command::Subgraph(graph),
        order: Order::Command,
        waits: recorded.external_waits.clone(),
        signal: None,
        received: None,
        event_effects: recorded.event_effects.clone(),
    };
    Some((prepared, work))
}

pub unsafe fn execute(
    forward: &mut Forward<'_, ze_result_t>,
    (queue, count, lists, fence): args::zeCommandQueueExecuteCommandLists,
) -> Recorded {
    let lists: Vec<Key> = match lists.is_null() {
        true => Vec::new(),
        // SAFETY: the program passes `count` lists.
        false => unsafe { std::slice::from_raw_parts(lists, count as usize) }
            .iter()
            .map(|&list| key(list))
            .collect(),
    };
    let executions = with_recorder(|state, recorder| {
        lists
            .iter()
            .map(|&list| execution(state, recorder, list))
            .collect::<Vec<_>>()
    })?;
    if !succeeded(forward) {
        return Ok(());
    }
    let fence = (!fence.is_null()).then(|| key(fence));
    with_recorder(|state, recorder| {
        let last = executions.len().saturating_sub(1);
        for (index, execution) in executions.into_iter().enumerate() {
            let Some((prepared, mut work)) = execution else {
                recorder.partial(CALL, "a command list the shim did not see created");
                continue;
            };
            work.signal = fence.filter(|_| index == last);
            submit(state, recorder, key(queue), prepared, work);
        }
    })
}
