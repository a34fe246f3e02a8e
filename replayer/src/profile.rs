//! `replay --profile`: per-node device times in the Chrome trace format that Perfetto and
//! chrome://tracing open, one track per queue.

use crate::backend::NodeTiming;
use crate::describe;
use serde_json::{json, Value};
use std::collections::BTreeSet;
use trace_format::Trace;

/// The Chrome trace of `timings` (from the replay of `trace` on `device`), with times in
/// microseconds from the earliest start.
pub fn chrome_trace(trace: &Trace, device: &str, timings: &[NodeTiming]) -> Value {
    let origin = timings.iter().map(|t| t.start_ns).min().unwrap_or(0);
    let mut ordered: Vec<&NodeTiming> = timings.iter().collect();
    ordered.sort_by_key(|t| (t.start_ns, t.queue, t.node));
    let mut events = vec![json!({"name": "process_name", "ph": "M", "pid": 1, "args": {"name": format!("replay on {device}")}})];
    let queues: BTreeSet<usize> = ordered.iter().map(|t| t.queue).collect();
    for queue in queues {
        let label = trace.queues.get(queue).map_or_else(|| format!("queue {queue}"), |q| format!("queue {queue}: {}", q.label));
        events.push(json!({"name": "thread_name", "ph": "M", "pid": 1, "tid": queue, "args": {"name": label}}));
    }
    for timing in ordered {
        let node = trace.nodes.get(timing.node.index());
        events.push(json!({
            "name": node.map_or_else(|| format!("node {}", timing.node), |n| describe::node_title(trace, n)),
            "cat": node.map_or("unknown", |n| n.command.kind_name()),
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
