//! `replay --profile`: per-node device times in the Chrome trace format that Perfetto and
//! chrome://tracing open, one track per queue.

use crate::backend::NodeTiming;
use crate::describe;
use serde_json::{json, Value};
use std::collections::BTreeSet;
use trace_format::{Node, Queue, SegmentId, Trace};

/// A node's device time, with the node as a profile names it (where the replay knows it).
#[derive(Clone, Debug)]
pub struct ProfiledNode {
    pub timing: NodeTiming,
    pub described: Option<NodeName>,
}

#[derive(Clone, Debug)]
pub struct NodeName {
    pub title: String,
    pub kind: &'static str,
    pub segment: SegmentId,
}

impl NodeName {
    /// `node` of a trace whose objects are `objects`.
    pub fn of(objects: &Trace, node: &Node) -> NodeName {
        NodeName { title: describe::node_title(objects, node), kind: node.command.kind_name(), segment: node.segment }
    }
}

/// The Chrome trace of `profiled` nodes (from a replay on `device`, whose recorded queues are
/// `queues`), with times in microseconds from the earliest start.
pub fn chrome_trace(queues: &[Queue], device: &str, profiled: &[ProfiledNode]) -> Value {
    let origin = profiled.iter().map(|p| p.timing.start_ns).min().unwrap_or(0);
    let mut ordered: Vec<&ProfiledNode> = profiled.iter().collect();
    ordered.sort_by_key(|p| (p.timing.start_ns, p.timing.queue, p.timing.node));
    let mut events = vec![json!({"name": "process_name", "ph": "M", "pid": 1, "args": {"name": format!("replay on {device}")}})];
    let used: BTreeSet<usize> = ordered.iter().map(|p| p.timing.queue).collect();
    for queue in used {
        let label = queues.get(queue).map_or_else(|| format!("queue {queue}"), |q| format!("queue {queue}: {}", q.label));
        events.push(json!({"name": "thread_name", "ph": "M", "pid": 1, "tid": queue, "args": {"name": label}}));
    }
    for ProfiledNode { timing, described } in ordered {
        let node = described.as_ref();
        events.push(json!({
            "name": node.map_or_else(|| format!("node {}", timing.node), |n| n.title.clone()),
            "cat": node.map_or("unknown", |n| n.kind),
            "ph": "X",
            "pid": 1,
            "tid": timing.queue,
            "ts": (timing.start_ns - origin) as f64 / 1000.0,
            "dur": timing.end_ns.saturating_sub(timing.start_ns) as f64 / 1000.0,
            "args": {"node": timing.node.0, "segment": node.map(|n| n.segment.0)},
        }));
    }
    json!({"traceEvents": events, "displayTimeUnit": "ns"})
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::test_traces::{mem, TraceBuilder};
    use trace_format::NodeId;

    #[test]
    fn one_complete_event_per_node_on_its_queue_track_in_time_order() {
        let mut b = TraceBuilder::new();
        let k = b.kernel("scale", &[None]);
        let buffer = b.memory(64);
        let segment = b.segment();
        let first = b.launch(segment, k, vec![mem(buffer)], 16);
        let host = b.host_task(segment);
        let profiled = |node: NodeId, start_ns, end_ns| ProfiledNode {
            timing: NodeTiming { node, queue: 0, start_ns, end_ns },
            described: Some(NodeName::of(&b.trace, &b.trace.nodes[node.index()])),
        };
        let profile = chrome_trace(&b.trace.queues, "test device", &[profiled(host, 5_000, 5_500), profiled(first, 2_000, 4_000)]);
        let events = profile["traceEvents"].as_array().expect("events");
        let spans: Vec<&Value> = events.iter().filter(|e| e["ph"] == "X").collect();
        assert_eq!(spans.len(), 2);
        assert_eq!((spans[0]["name"].as_str(), spans[0]["ts"].as_f64(), spans[0]["dur"].as_f64()), (Some("scale"), Some(0.0), Some(2.0)));
        assert_eq!((spans[1]["name"].as_str(), spans[1]["ts"].as_f64()), (Some("host_task"), Some(3.0)));
        assert_eq!(spans[1]["args"]["node"], NodeId(1).0);
        let track = events.iter().find(|e| e["name"] == "thread_name").expect("a track per queue");
        assert_eq!(track["args"]["name"], "queue 0: queue");
    }
}
