//! A regular command list as the program appends it: a graph whose edges come from the list's
//! order (in-order lists chain every command; others are ordered by barriers), and from events
//! signalled and waited for within it. Each execution submits the graph as it stands then.

use super::kernels::LaunchState;
use crate::fast_hash::HashMap;
use crate::recorder::{Access, HostRegion, Key, Order};
use trace_format::{Edge, EdgeKind, Graph, Node, NodeId};

pub struct RegularList {
    pub in_order: bool,
    pub graph: Graph,
    /// Memory each node uses, by node.
    pub accesses: Vec<Vec<Access>>,
    /// Host memory copies of the list read, by node: taken at each execution.
    pub host_sources: Vec<(usize, HostRegion)>,
    /// Events waited for that no earlier command of the list signals: each execution waits for them.
    pub external_waits: Vec<Key>,
    /// What an execution does to events, in order: signalled (true) or reset (false).
    pub event_effects: Vec<(Key, bool)>,
    /// Kernel launches by node, which the mutable command list extension may change.
    pub launches: HashMap<usize, LaunchState>,
    /// The command identifier `zeCommandListGetNextCommandIdExp` gave for the next command.
    pub next_command_id: Option<u64>,
    pub command_ids: HashMap<u64, usize>,
    signals: HashMap<Key, NodeId>,
    since_barrier: Vec<NodeId>,
    last_barrier: Option<NodeId>,
}

/// How a command was appended.
pub struct Appended<'a> {
    pub order: Order,
    pub waits: &'a [Key],
    pub signal: Option<Key>,
}

impl RegularList {
    pub fn new(in_order: bool) -> RegularList {
        RegularList {
            in_order,
            graph: Graph {
                nodes: Vec::new(),
                edges: Vec::new(),
            },
            accesses: Vec::new(),
            host_sources: Vec::new(),
            external_waits: Vec::new(),
            event_effects: Vec::new(),
            launches: HashMap::default(),
            next_command_id: None,
            command_ids: HashMap::default(),
            signals: HashMap::default(),
            since_barrier: Vec::new(),
            last_barrier: None,
        }
    }

    /// `zeCommandListReset`: empty again, with the flags it was created with.
    pub fn reset(&mut self) {
        *self = RegularList::new(self.in_order);
    }

    pub fn add(&mut self, node: Node, appended: Appended<'_>, accesses: Vec<Access>) -> usize {
        let id = NodeId(self.graph.nodes.len() as u32);
        if self.in_order && id.0 > 0 {
            self.edge(NodeId(id.0 - 1), id, EdgeKind::InOrder);
        } else if let Some(barrier) = self.last_barrier {
            self.edge(barrier, id, EdgeKind::Barrier);
        }
        for wait in appended.waits {
            match self.signals.get(wait) {
                Some(&from) => self.edge(from, id, EdgeKind::Event),
                None if !self.external_waits.contains(wait) => self.external_waits.push(*wait),
                None => {}
            }
        }
        if appended.order == Order::Barrier && !self.in_order {
            // Without a wait list a barrier waits for every earlier command of the list.
            if appended.waits.is_empty() {
                for from in std::mem::take(&mut self.since_barrier) {
                    self.edge(from, id, EdgeKind::Barrier);
                }
            }
            self.since_barrier.clear();
            self.last_barrier = Some(id);
        } else {
            self.since_barrier.push(id);
        }
        if let Some(event) = appended.signal {
            self.signals.insert(event, id);
            self.event_effects.push((event, true));
        }
        self.graph.nodes.push(node);
        self.accesses.push(accesses);
        let index = id.0 as usize;
        if let Some(command_id) = self.next_command_id.take() {
            self.command_ids.insert(command_id, index);
        }
        index
    }

    /// `zeCommandListAppendEventReset`: executions leave `event` unsignalled.
    pub fn reset_event(&mut self, event: Key) {
        self.signals.remove(&event);
        self.event_effects.push((event, false));
    }

    fn edge(&mut self, from: NodeId, to: NodeId, kind: EdgeKind) {
        if !self
            .graph
            .edges
            .iter()
            .rev()
            .take_while(|edge| edge.to == to)
            .any(|edge| edge.from == from)
        {
            self.graph.edges.push(Edge { from, to, kind });
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use trace_format::{Command, SegmentId};

    fn node() -> Node {
        Node {
            queue: None,
            segment: SegmentId(0),
            command: Command::Barrier,
            call: "test".into(),
        }
    }

    fn edges(list: &RegularList) -> Vec<(u32, u32, EdgeKind)> {
        list.graph
            .edges
            .iter()
            .map(|edge| (edge.from.0, edge.to.0, edge.kind))
            .collect()
    }

    fn command(list: &mut RegularList, order: Order, waits: &[Key], signal: Option<Key>) {
        list.add(
            node(),
            Appended {
                order,
                waits,
                signal,
            },
            Vec::new(),
        );
    }

    #[test]
    fn barriers_order_an_out_of_order_list() {
        let mut list = RegularList::new(false);
        command(&mut list, Order::Command, &[], None);
        command(&mut list, Order::Command, &[], None);
        command(&mut list, Order::Barrier, &[], None);
        command(&mut list, Order::Command, &[], None);
        command(&mut list, Order::Command, &[], None);
        assert_eq!(
            edges(&list),
            [
                (0, 2, EdgeKind::Barrier),
                (1, 2, EdgeKind::Barrier),
                (2, 3, EdgeKind::Barrier),
                (2, 4, EdgeKind::Barrier)
            ]
        );
    }

    #[test]
    fn events_order_within_the_list_and_name_what_an_execution_waits_for() {
        let mut list = RegularList::new(true);
        command(&mut list, Order::Command, &[7], Some(8));
        command(&mut list, Order::Command, &[], None);
        command(&mut list, Order::Command, &[8, 9], None);
        assert_eq!(
            edges(&list),
            [
                (0, 1, EdgeKind::InOrder),
                (1, 2, EdgeKind::InOrder),
                (0, 2, EdgeKind::Event)
            ]
        );
        assert_eq!(list.external_waits, [7, 9]);
        list.reset_event(8);
        assert_eq!(list.event_effects, [(8, true), (8, false)]);
    }
}
