//! Eager mode: each command appended to the immediate list of its recorded queue as the program
//! submitted it, signalling an event of its own; a command waits for its predecessors' events,
//! and a partition's first commands for the events that ended the previous partition.

use super::commands::Appender;
use super::events::Events;
use crate::backend::BackendResult;
use crate::backend::PartitionNodes;
use ze_sys::*;

/// Submits `part`; `tail` holds the previous partition's last events and receives this one's.
pub fn run(appender: &Appender<'_>, events: &mut Events, tail: &mut Vec<ze_event_handle_t>, part: &PartitionNodes<'_>) -> BackendResult<()> {
    let (predecessors, has_successor) = part.links();
    let mut signals: Vec<ze_event_handle_t> = Vec::with_capacity(part.nodes.len());
    let mut waits = Vec::new();
    let mut outcome = Ok(());
    for (index, &(id, node)) in part.nodes.iter().enumerate() {
        waits.clear();
        if predecessors[index].is_empty() {
            waits.extend_from_slice(tail);
        } else {
            waits.extend(predecessors[index].iter().map(|&p| signals[p]));
        }
        let signal = events.take()?;
        let list = appender.objects.list_of(node.queue);
        if let Err(error) = appender.append(list, id, &node.command, signal, &waits) {
            outcome = Err(error);
            break;
        }
        signals.push(signal);
    }
    // After a failure everything submitted ends the partition, so that `finish` waits for it all.
    tail.clear();
    tail.extend(signals.iter().enumerate().filter(|&(i, _)| outcome.is_err() || !has_successor[i]).map(|(_, &e)| e));
    outcome
}
