//! Families (issue 5): segments with the same topology, node kinds and kernels replay from
//! one command buffer built from the first of them (the base), patched before each member.
//! What a patch can change is a kernel's argument values, memory bindings and launch
//! sizes; any other difference (another kernel, a copy or fill of another shape, other
//! edges) puts the segment in another family. Commands that run eagerly (host tasks, what
//! the backend cannot record) run from each member's own node, so they only need to be
//! of the same kind. Memory a segment allocates and frees itself (stream-ordered scratch)
//! has no contents before or after it, so a member's n-th such allocation stands for the
//! base's n-th: the member's commands are compared, and patched, in the base's terms.

use crate::plan::runs_eagerly;
use crate::segments::SegmentGraph;
use std::borrow::Cow;
use std::collections::{BTreeMap, BTreeSet};
use trace_format::{Arg, Command, Conditional, Copy, Graph, KernelId, KernelLaunch, Launch, MemId, Patch, Place, SegmentId, Trace};

#[derive(Clone, Debug, PartialEq)]
pub struct Family {
    /// The first segment of the family: its graph is planned and built.
    pub base: SegmentId,
    /// Every segment of the family in trace order, the base first.
    pub members: Vec<SegmentId>,
    /// For each member, the patches that turn the base's command buffer into it. A list
    /// sets every argument and launch that varies anywhere in the family (the base's list
    /// holds its own values), so applying it is right whichever member ran before.
    /// Patches name the base's nodes.
    pub patches: Vec<Vec<Patch>>,
}

/// The families of a validated trace, in the order of their bases; `can_record` is the
/// backend's `Backend::can_record`.
pub fn find_families(trace: &Trace, graphs: &[SegmentGraph], can_record: &dyn Fn(&Command) -> bool) -> Vec<Family> {
    let topologies: Vec<Vec<(usize, usize)>> = graphs.iter().map(topology).collect();
    let mut families: Vec<(usize, Vec<usize>)> = Vec::new();
    for (index, graph) in graphs.iter().enumerate() {
        let joined = families.iter_mut().find(|(base, _)| {
            topologies[*base] == topologies[index] && same_shape(trace, &graphs[*base], graph, can_record)
        });
        match joined {
            Some((_, members)) => members.push(index),
            None => families.push((index, vec![index])),
        }
    }
    families
        .into_iter()
        .map(|(base, members)| {
            let member_graphs: Vec<&SegmentGraph> = members.iter().map(|&m| &graphs[m]).collect();
            Family {
                base: graphs[base].segment,
                members: member_graphs.iter().map(|g| g.segment).collect(),
                patches: member_patches(trace, &member_graphs),
            }
        })
        .collect()
}

/// A segment's edges without their kinds, which do not change how it runs.
fn topology(graph: &SegmentGraph) -> Vec<(usize, usize)> {
    let mut edges: Vec<(usize, usize)> = graph.local_edges().collect();
    edges.sort_unstable();
    edges.dedup();
    edges
}

fn same_shape(trace: &Trace, base: &SegmentGraph, other: &SegmentGraph, can_record: &dyn Fn(&Command) -> bool) -> bool {
    if base.nodes.len() != other.nodes.len() {
        return false;
    }
    let stand_ins = stand_ins(trace, base, other);
    base.nodes.iter().zip(&other.nodes).all(|(a, b)| {
        let (a, b) = (&trace.nodes[a.index()].command, &trace.nodes[b.index()].command);
        match (runs_eagerly(a, can_record), runs_eagerly(b, can_record)) {
            (true, true) => a.kind_name() == b.kind_name(),
            (false, false) => patchable_into(trace, a, &in_base_terms(b, &stand_ins)),
            _ => false,
        }
    })
}

/// Memory the segment allocates and frees itself, in allocation order.
fn own_memory(trace: &Trace, graph: &SegmentGraph) -> Vec<MemId> {
    let commands = || graph.nodes.iter().map(|node| &trace.nodes[node.index()].command);
    let freed: BTreeSet<MemId> = commands()
        .filter_map(|command| match command {
            Command::MemFree { mem } => Some(*mem),
            _ => None,
        })
        .collect();
    commands()
        .filter_map(|command| match command {
            Command::MemAlloc { mem } if freed.contains(mem) => Some(*mem),
            _ => None,
        })
        .collect()
}

/// For each of `other`'s own memory objects, the base's that stands for it: the n-th
/// allocation for the n-th, where both are of the same kind and size.
fn stand_ins(trace: &Trace, base: &SegmentGraph, other: &SegmentGraph) -> BTreeMap<MemId, MemId> {
    let alike = |a: MemId, b: MemId| {
        let (a, b) = (&trace.memories[a.index()], &trace.memories[b.index()]);
        a.kind == b.kind && a.size == b.size
    };
    own_memory(trace, other).into_iter().zip(own_memory(trace, base)).filter(|&(mine, theirs)| alike(mine, theirs)).collect()
}

/// `command` with the memory in `stand_ins` replaced by what stands for it.
fn in_base_terms<'c>(command: &'c Command, stand_ins: &BTreeMap<MemId, MemId>) -> Cow<'c, Command> {
    if stand_ins.is_empty() {
        return Cow::Borrowed(command);
    }
    let mut command = command.clone();
    let replace = |mem: &mut MemId| {
        if let Some(&base) = stand_ins.get(mem) {
            *mem = base;
        }
    };
    command.for_each_memory_use(&mut |mem, _| replace(mem));
    if let Command::MemAlloc { mem } | Command::MemFree { mem } = &mut command {
        replace(mem);
    }
    Cow::Owned(command)
}

/// Whether patches can turn command `base` into command `other`.
fn patchable_into(trace: &Trace, base: &Command, other: &Command) -> bool {
    match (base, other) {
        (Command::Kernel(a), Command::Kernel(b)) => {
            same_kernel(trace, a.kernel, b.kernel)
                && a.args.len() == b.args.len()
                && a.args.iter().zip(&b.args).all(|(x, y)| arg_patchable_into(x, y))
                && launch_patchable_into(&a.launch, &b.launch)
        }
        (Command::Copy(a), Command::Copy(b)) => copies_alike(a, b),
        (Command::Subgraph(a), Command::Subgraph(b)) => same_subgraph(a, b),
        (Command::Conditional(a), Command::Conditional(b)) => same_conditional(a, b),
        _ => base == other,
    }
}

/// Sub-graphs replay alike when their nodes and edges are equal; no patch reaches inside one.
/// The segment their nodes carry is where each submission ran, not part of the work.
fn same_subgraph(a: &Graph, b: &Graph) -> bool {
    a.edges == b.edges
        && a.nodes.len() == b.nodes.len()
        && a.nodes.iter().zip(&b.nodes).all(|(x, y)| {
            x.queue == y.queue
                && x.call == y.call
                && match (&x.command, &y.command) {
                    (Command::Subgraph(x), Command::Subgraph(y)) => same_subgraph(x, y),
                    (Command::Conditional(x), Command::Conditional(y)) => same_conditional(x, y),
                    (x, y) => x == y,
                }
        })
}

/// Conditionals replay alike when they decide alike on the same condition and their bodies
/// replay alike.
fn same_conditional(a: &Conditional, b: &Conditional) -> bool {
    a.kind == b.kind
        && a.condition == b.condition
        && a.default == b.default
        && a.bodies.len() == b.bodies.len()
        && a.bodies.iter().zip(&b.bodies).all(|(x, y)| same_subgraph(x, y))
}

/// Two kernel objects of the same function (same name, same program images and options)
/// run the same code.
fn same_kernel(trace: &Trace, a: KernelId, b: KernelId) -> bool {
    let (ka, kb) = (&trace.kernels[a.index()], &trace.kernels[b.index()]);
    a == b || (ka.name == kb.name && trace.programs[ka.program.index()] == trace.programs[kb.program.index()])
}

fn arg_patchable_into(base: &Arg, other: &Arg) -> bool {
    match (base, other) {
        (Arg::Value(a) | Arg::ValueWithPointers { bytes: a, .. }, Arg::Value(b) | Arg::ValueWithPointers { bytes: b, .. }) => a.len() == b.len(),
        (Arg::Memory { .. } | Arg::NullMemory, Arg::Memory { .. } | Arg::NullMemory) => true,
        (Arg::Local(_), Arg::Local(_)) => true,
        _ => false,
    }
}

fn launch_patchable_into(base: &Launch, other: &Launch) -> bool {
    match (base, other) {
        (Launch::NdRange { dims: a, local: la, .. }, Launch::NdRange { dims: b, local: lb, .. }) => {
            a == b && la.is_some() == lb.is_some()
        }
        (
            Launch::Grid { cluster: ca, cooperative: oa, .. },
            Launch::Grid { cluster: cb, cooperative: ob, .. },
        ) => ca == cb && oa == ob,
        _ => false,
    }
}

/// Copies alike but for the data a read handed the program, which is kept only for comparison.
fn copies_alike(a: &Copy, b: &Copy) -> bool {
    let destinations_alike = match (&a.dst, &b.dst) {
        (Place::Host { .. }, Place::Host { .. }) => true,
        (x, y) => x == y,
    };
    a.src == b.src && a.extent == b.extent && destinations_alike
}

/// What of a kernel node a patch sets.
#[derive(Clone, Copy, Debug, PartialEq, Eq, PartialOrd, Ord)]
enum Slot {
    Arg(u32),
    Launch,
}

fn launch_of(command: &Command) -> Option<&KernelLaunch> {
    match command {
        Command::Kernel(launch) => Some(launch),
        _ => None,
    }
}

/// The patch lists of a family's members (`graphs[0]` is the base).
fn member_patches(trace: &Trace, graphs: &[&SegmentGraph]) -> Vec<Vec<Patch>> {
    let base = graphs[0];
    // Each member's commands in the base's terms.
    let commands: Vec<Vec<Cow<'_, Command>>> = graphs
        .iter()
        .map(|graph| {
            let stand_ins = stand_ins(trace, base, graph);
            graph.nodes.iter().map(|node| in_base_terms(&trace.nodes[node.index()].command, &stand_ins)).collect()
        })
        .collect();
    let mut varying: BTreeSet<(usize, Slot)> = BTreeSet::new();
    for member in &commands[1..] {
        for (local, (a, b)) in commands[0].iter().zip(member).enumerate() {
            let (Some(a), Some(b)) = (launch_of(a), launch_of(b)) else { continue };
            for (index, (x, y)) in a.args.iter().zip(&b.args).enumerate() {
                if x != y {
                    varying.insert((local, Slot::Arg(index as u32)));
                }
            }
            if a.launch != b.launch {
                varying.insert((local, Slot::Launch));
            }
        }
    }
    commands
        .iter()
        .map(|member| {
            varying
                .iter()
                .filter_map(|&(local, slot)| {
                    let launch = launch_of(&member[local])?;
                    let node = base.nodes[local];
                    Some(match slot {
                        Slot::Arg(index) => Patch::Arg { node, index, value: launch.args[index as usize].clone() },
                        Slot::Launch => Patch::Launch { node, launch: launch.launch.clone() },
                    })
                })
                .collect()
        })
        .collect()
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::segments::segment_graphs;
    use crate::test_traces::{mem, value, TraceBuilder};
    use trace_format::{Extent, MemId, NodeId};

    fn families_of(builder: &TraceBuilder) -> Vec<Family> {
        find_families(&builder.trace, &segment_graphs(&builder.trace), &|_| true)
    }

    fn members(families: &[Family]) -> Vec<Vec<u32>> {
        families.iter().map(|f| f.members.iter().map(|s| s.0).collect()).collect()
    }

    /// Jacobi: `step(in, out, weight)` then `check(out)`, buffers swapped and weight changed each segment.
    fn jacobi(segments: u32) -> TraceBuilder {
        let mut b = TraceBuilder::new();
        let step = b.kernel("step", &[None, None, Some(4)]);
        let check = b.kernel("check", &[None]);
        let (x, y) = (b.memory(64), b.memory(64));
        for i in 0..segments {
            let segment = b.segment();
            let (from, to) = if i % 2 == 0 { (x, y) } else { (y, x) };
            let first = b.launch(segment, step, vec![mem(from), mem(to), value(10 + i)], 16);
            let second = b.launch(segment, check, vec![mem(to)], 16);
            b.edge(first, second);
        }
        b
    }

    #[test]
    fn swapped_buffers_and_new_scalars_are_patches_of_one_family() {
        let b = jacobi(3);
        let families = families_of(&b);
        assert_eq!(members(&families), vec![vec![0, 1, 2]]);
        let (x, y) = (MemId(0), MemId(1));
        // Every member sets all four varying slots; patches name the base's nodes 0 and 1.
        assert_eq!(
            families[0].patches[1],
            vec![
                Patch::Arg { node: NodeId(0), index: 0, value: mem(y) },
                Patch::Arg { node: NodeId(0), index: 1, value: mem(x) },
                Patch::Arg { node: NodeId(0), index: 2, value: value(11) },
                Patch::Arg { node: NodeId(1), index: 0, value: mem(x) },
            ]
        );
        assert_eq!(families[0].patches[0][2], Patch::Arg { node: NodeId(0), index: 2, value: value(10) });
        assert_eq!(families[0].patches.len(), 3);
    }

    #[test]
    fn each_segment_s_own_scratch_memory_stands_for_the_base_s() {
        let mut b = TraceBuilder::new();
        let k = b.kernel("k", &[None, None, Some(4)]);
        let acc = b.memory(64);
        for (round, size) in [(0, 64), (1, 64), (2, 128)] {
            let segment = b.segment();
            let scratch = b.memory(size);
            b.node(segment, Command::MemAlloc { mem: scratch });
            b.launch(segment, k, vec![mem(scratch), mem(acc), value(round)], 16);
            b.node(segment, Command::MemFree { mem: scratch });
        }
        let families = families_of(&b);
        // Scratch of another size is not a stand-in: the third segment is a family of its own.
        assert_eq!(members(&families), vec![vec![0, 1], vec![2]]);
        // The second segment's scratch (memory 2) is reached as the base's (memory 1): only the scalar varies.
        assert_eq!(families[0].patches[1], vec![Patch::Arg { node: NodeId(1), index: 2, value: value(1) }]);
    }

    #[test]
    fn identical_segments_need_no_patches() {
        let mut b = TraceBuilder::new();
        let k = b.kernel("k", &[None]);
        let buffer = b.memory(64);
        for _ in 0..2 {
            let segment = b.segment();
            b.launch(segment, k, vec![mem(buffer)], 16);
        }
        let families = families_of(&b);
        assert_eq!(members(&families), vec![vec![0, 1]]);
        assert!(families[0].patches.iter().all(Vec::is_empty));
    }

    #[test]
    fn a_new_launch_size_is_a_patch() {
        let mut b = TraceBuilder::new();
        let k = b.kernel("k", &[None]);
        let buffer = b.memory(64);
        for global in [16, 32] {
            let segment = b.segment();
            b.launch(segment, k, vec![mem(buffer)], global);
        }
        let families = families_of(&b);
        assert_eq!(members(&families), vec![vec![0, 1]]);
        assert!(matches!(&families[0].patches[1][..], [Patch::Launch { node: NodeId(0), launch: Launch::NdRange { global: [32, 1, 1], .. } }]));
    }

    #[test]
    fn another_kernel_starts_a_new_family_and_later_segments_rejoin_theirs() {
        let mut b = TraceBuilder::new();
        let (k1, k2) = (b.kernel("k1", &[None]), b.kernel("k2", &[None]));
        let buffer = b.memory(64);
        for kernel in [k1, k2, k1] {
            let segment = b.segment();
            b.launch(segment, kernel, vec![mem(buffer)], 16);
        }
        assert_eq!(members(&families_of(&b)), vec![vec![0, 2], vec![1]]);
    }

    #[test]
    fn another_topology_starts_a_new_family() {
        let mut b = TraceBuilder::new();
        let k = b.kernel("k", &[None]);
        let buffer = b.memory(64);
        for linked in [true, false] {
            let segment = b.segment();
            let first = b.launch(segment, k, vec![mem(buffer)], 16);
            let second = b.launch(segment, k, vec![mem(buffer)], 16);
            if linked {
                b.edge(first, second);
            }
        }
        assert_eq!(members(&families_of(&b)), vec![vec![0], vec![1]]);
    }

    #[test]
    fn a_scalar_of_another_size_is_not_a_patch() {
        let mut b = TraceBuilder::new();
        let k = b.kernel("k", &[Some(4)]);
        for bytes in [vec![0u8; 4], vec![0u8; 8]] {
            let segment = b.segment();
            b.launch(segment, k, vec![Arg::Value(bytes)], 16);
        }
        assert_eq!(members(&families_of(&b)), vec![vec![0], vec![1]]);
    }

    #[test]
    fn commands_run_eagerly_need_only_the_same_kind() {
        let mut b = TraceBuilder::new();
        let buffer = b.memory(64);
        for offset in [0, 32] {
            let segment = b.segment();
            let data = b.blobs.insert(vec![offset as u8; 32]);
            b.node(segment, Command::Copy(Copy {
                src: Place::Host { data: Some(data) },
                dst: Place::Memory { mem: buffer, offset },
                extent: Extent::Linear { bytes: 32 },
            }));
        }
        let graphs = segment_graphs(&b.trace);
        assert_eq!(members(&find_families(&b.trace, &graphs, &|_| true)), vec![vec![0], vec![1]]);
        let no_copies = |c: &Command| !matches!(c, Command::Copy(_));
        assert_eq!(members(&find_families(&b.trace, &graphs, &no_copies)), vec![vec![0, 1]]);
    }

    #[test]
    fn copies_of_another_shape_start_a_new_family_but_read_results_do_not() {
        let mut b = TraceBuilder::new();
        let buffer = b.memory(64);
        let read = |bytes: u64, data| Command::Copy(Copy {
            src: Place::Memory { mem: buffer, offset: 0 },
            dst: Place::Host { data: Some(data) },
            extent: Extent::Linear { bytes },
        });
        for (bytes, contents) in [(64, 1u8), (64, 2), (32, 3)] {
            let segment = b.segment();
            let data = b.blobs.insert(vec![contents; bytes as usize]);
            b.node(segment, read(bytes, data));
        }
        assert_eq!(members(&families_of(&b)), vec![vec![0, 1], vec![2]]);
    }
}
