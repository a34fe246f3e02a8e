//! Families (issue 5): segments with the same topology, node kinds and kernels replay from
//! one command buffer built from the first of them (the base), patched before each member.
//! What a patch can change is a kernel's argument values, memory bindings and launch
//! sizes; any other difference (another kernel, a copy or fill of another shape, other
//! edges) puts the segment in another family. Commands that run eagerly (host tasks, what
//! the backend cannot record) run from each member's own node, so they only need to be
//! of the same kind. Memory a segment allocates and frees itself (stream-ordered scratch)
//! has no contents before or after it, so a member's n-th such allocation stands for the
//! base's n-th: the member's commands are compared, and patched, in the base's terms.
//!
//! Segments are placed one at a time as the trace streams by: each is hashed by what a patch
//! cannot change, and compared only with the bases of its hash, so placing costs the same
//! however many families there are.

use crate::plan::runs_eagerly;
use crate::segments::SegmentGraph;
use rustc_hash::{FxHashMap, FxHasher};
use std::borrow::Cow;
use std::collections::{BTreeMap, BTreeSet};
use std::hash::{Hash, Hasher};
use trace_format::{Arg, Command, Conditional, Copy, Extent, Graph, KernelId, KernelLaunch, Launch, MemId, Node, Patch, Place, Trace};

/// A family as found so far.
#[derive(Debug)]
pub struct Family {
    /// The first segment of the family: its graph is planned and built.
    pub base: SegmentGraph,
    /// Every argument and launch of the base's kernels that some member sets otherwise, by
    /// local index: each member's patches set them all.
    varying: BTreeSet<(usize, Slot)>,
    /// The base's topology and own memory, which every candidate is compared with.
    topology: Vec<(usize, usize)>,
    own_memory: Vec<MemId>,
}

impl Family {
    /// Patches each member gets: the arguments and launches that vary in the family so far.
    pub fn varying_slots(&self) -> usize {
        self.varying.len()
    }
}

/// Where a segment was placed.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub struct Placement {
    pub family: usize,
    /// The segment is its family's base: the family began with it.
    pub founded: bool,
}

/// Places the segments of a validated trace, in order, in families.
pub struct FamilyFinder<'o> {
    objects: &'o Trace,
    families: Vec<Family>,
    /// Families by the hash of what patches cannot change, in the order of their bases.
    by_shape: FxHashMap<u64, Vec<usize>>,
    /// Each kernel's hash by what `same_kernel` compares: its name, its program's images and options.
    kernel_keys: Vec<u64>,
    /// The family each base founded, by its segment.
    founders: FxHashMap<trace_format::SegmentId, usize>,
}

impl<'o> FamilyFinder<'o> {
    /// For the segments of the trace whose objects are `objects`.
    pub fn new(objects: &'o Trace) -> FamilyFinder<'o> {
        let kernel_keys = objects
            .kernels
            .iter()
            .map(|kernel| {
                let mut hasher = FxHasher::default();
                kernel.name.hash(&mut hasher);
                if let Some(program) = objects.programs.get(kernel.program.index()) {
                    program.build_options.hash(&mut hasher);
                    for image in &program.images {
                        (image.blob, image.kind as u8).hash(&mut hasher);
                    }
                }
                hasher.finish()
            })
            .collect();
        FamilyFinder { objects, families: Vec::new(), by_shape: FxHashMap::default(), kernel_keys, founders: FxHashMap::default() }
    }

    pub fn families(&self) -> &[Family] {
        &self.families
    }

    pub fn family(&self, index: usize) -> &Family {
        &self.families[index]
    }

    /// Places `graph` in the first family whose base it can be patched into, or founds a new one
    /// with it; `can_record` is the backend's `Backend::can_record`. What differs from the base
    /// joins the family's varying slots. A segment placed again (a second pass over the trace)
    /// lands where it did.
    pub fn place(&mut self, graph: &SegmentGraph, can_record: &dyn Fn(&Command) -> bool) -> Placement {
        // Its base is itself, whatever a comparison of shapes would say.
        if let Some(&family) = self.founders.get(&graph.segment) {
            return Placement { family, founded: true };
        }
        let own_memory = own_memory(graph);
        let topology = topology(graph);
        let key = shape_key(self.objects, &self.kernel_keys, graph, &topology, &own_memory, can_record);
        let candidates = self.by_shape.entry(key).or_default();
        let objects = self.objects;
        let found = candidates.iter().copied().find(|&index| {
            let family = &self.families[index];
            family.topology == topology && same_shape(objects, family, graph, &own_memory, can_record)
        });
        let Some(index) = found else {
            candidates.push(self.families.len());
            self.families.push(Family { base: graph.clone(), varying: BTreeSet::new(), topology, own_memory });
            self.founders.insert(graph.segment, self.families.len() - 1);
            return Placement { family: self.families.len() - 1, founded: true };
        };
        let family = &mut self.families[index];
        let stand_ins = stand_ins(objects, &family.own_memory, &own_memory);
        for (local, (base, member)) in family.base.nodes.iter().zip(&graph.nodes).enumerate() {
            let member = in_base_terms(&member.command, &stand_ins);
            let (Some(a), Some(b)) = (launch_of(&base.command), launch_of(&member)) else { continue };
            for (index, (x, y)) in a.args.iter().zip(&b.args).enumerate() {
                if x != y {
                    family.varying.insert((local, Slot::Arg(index as u32)));
                }
            }
            if a.launch != b.launch {
                family.varying.insert((local, Slot::Launch));
            }
        }
        Placement { family: index, founded: family.base.segment == graph.segment }
    }

    /// What `graph` (a segment placed in `family`) runs on in the family's command buffers: the
    /// base's own memory where the member's stands in for it. Graph mode runs an eager
    /// partition's nodes so (`StandIns::apply`), between command buffers that use the base's.
    pub fn stand_ins(&self, family: usize, graph: &SegmentGraph) -> StandIns {
        let family = &self.families[family];
        StandIns(stand_ins(self.objects, &family.own_memory, &own_memory(graph)))
    }

    /// The patches that turn the base's command buffer of `family` into `graph`, a segment
    /// placed in it. They set every argument and launch that varies in the family so far (the
    /// rest hold the base's values in the command buffer whichever member ran before), and name
    /// the base's nodes.
    pub fn patches(&self, family: usize, graph: &SegmentGraph) -> Vec<Patch> {
        let family = &self.families[family];
        let stand_ins = stand_ins(self.objects, &family.own_memory, &own_memory(graph));
        family
            .varying
            .iter()
            .filter_map(|&(local, slot)| {
                let command = in_base_terms(&graph.nodes.get(local)?.command, &stand_ins);
                let launch = launch_of(&command)?;
                let node = family.base.ids[local];
                Some(match slot {
                    Slot::Arg(index) => Patch::Arg { node, index, value: launch.args.get(index as usize)?.clone() },
                    Slot::Launch => Patch::Launch { node, launch: launch.launch.clone() },
                })
            })
            .collect()
    }
}

/// A member's own memory and the base's that stands for it (`FamilyFinder::stand_ins`).
pub struct StandIns(BTreeMap<MemId, MemId>);

impl StandIns {
    pub fn is_empty(&self) -> bool {
        self.0.is_empty()
    }

    /// `command` on the base's memory where the member's stands in for it.
    pub fn apply<'c>(&self, command: &'c Command) -> Cow<'c, Command> {
        in_base_terms(command, &self.0)
    }

    /// `node` with its command on the base's memory.
    pub fn apply_to_node(&self, node: &Node) -> Node {
        Node { queue: node.queue, segment: node.segment, command: self.apply(&node.command).into_owned(), call: node.call.clone() }
    }
}

/// A segment's edges without their kinds, which do not change how it runs.
fn topology(graph: &SegmentGraph) -> Vec<(usize, usize)> {
    let mut edges: Vec<(usize, usize)> = graph.local_edges().collect();
    edges.sort_unstable();
    edges.dedup();
    edges
}

/// Memory the segment allocates and frees itself, in allocation order.
fn own_memory(graph: &SegmentGraph) -> Vec<MemId> {
    let freed: BTreeSet<MemId> = graph
        .nodes
        .iter()
        .filter_map(|node| match node.command {
            Command::MemFree { mem } => Some(mem),
            _ => None,
        })
        .collect();
    if freed.is_empty() {
        return Vec::new();
    }
    graph
        .nodes
        .iter()
        .filter_map(|node| match node.command {
            Command::MemAlloc { mem } if freed.contains(&mem) => Some(mem),
            _ => None,
        })
        .collect()
}

/// A hash of what patches cannot change: equal for any two segments one could be patched into
/// the other (`same_shape`). A segment's own memory counts by its allocation order, kind and size.
fn shape_key(objects: &Trace, kernel_keys: &[u64], graph: &SegmentGraph, topology: &[(usize, usize)], own: &[MemId], can_record: &dyn Fn(&Command) -> bool) -> u64 {
    let mut hasher = FxHasher::default();
    (graph.nodes.len(), topology).hash(&mut hasher);
    for &mem in own {
        objects.memories.get(mem.index()).map(|m| (format!("{:?}", m.kind), m.size)).hash(&mut hasher);
    }
    let canonical = |mem: MemId| own.iter().position(|&m| m == mem).map_or(u64::from(mem.0), |ordinal| u64::MAX - ordinal as u64);
    for node in &graph.nodes {
        let eager = runs_eagerly(&node.command, can_record);
        (eager, node.command.kind_name()).hash(&mut hasher);
        if eager {
            continue;
        }
        match &node.command {
            Command::Kernel(launch) => hash_kernel_shape(kernel_keys, launch, &mut hasher),
            Command::Copy(copy) => {
                hash_place(&copy.src, &canonical, &mut hasher);
                if !matches!(copy.dst, Place::Host { .. }) {
                    hash_place(&copy.dst, &canonical, &mut hasher);
                }
                hash_extent(&copy.extent, &mut hasher);
            }
            Command::Fill(fill) => (canonical(fill.mem), fill.offset, fill.bytes, &fill.pattern, fill.rows).hash(&mut hasher),
            // Other memory lives for the whole replay: its allocation and free only order.
            Command::MemAlloc { mem } | Command::MemFree { mem } => own.contains(mem).then(|| canonical(*mem)).hash(&mut hasher),
            // Bodies are compared by `same_shape`; the hash needs only what decides.
            Command::Conditional(conditional) => {
                (conditional.kind as u8, conditional.condition, conditional.default, conditional.bodies.len()).hash(&mut hasher)
            }
            Command::EventRecord { event } | Command::EventWait { event } => event.hash(&mut hasher),
            Command::Barrier | Command::HostTask(_) | Command::Subgraph(_) => {}
        }
    }
    hasher.finish()
}

fn hash_kernel_shape(kernel_keys: &[u64], launch: &KernelLaunch, hasher: &mut FxHasher) {
    kernel_keys.get(launch.kernel.index()).hash(hasher);
    for arg in &launch.args {
        match arg {
            Arg::Value(bytes) | Arg::ValueWithPointers { bytes, .. } => (0u8, bytes.len()).hash(hasher),
            Arg::Memory { .. } | Arg::NullMemory => 1u8.hash(hasher),
            Arg::Local(_) => 2u8.hash(hasher),
            Arg::Condition(condition) => (3u8, condition).hash(hasher),
            Arg::Texture(_) => 4u8.hash(hasher),
        }
    }
    match &launch.launch {
        Launch::NdRange { dims, local, .. } => (0u8, dims, local.is_some()).hash(hasher),
        Launch::Grid { cluster, cooperative, .. } => (1u8, cluster, cooperative).hash(hasher),
    }
}

fn hash_place(place: &Place, canonical: &dyn Fn(MemId) -> u64, hasher: &mut FxHasher) {
    match place {
        Place::Memory { mem, offset } => (0u8, canonical(*mem), offset).hash(hasher),
        Place::Host { data } => (1u8, data).hash(hasher),
    }
}

fn hash_extent(extent: &Extent, hasher: &mut FxHasher) {
    match extent {
        Extent::Linear { bytes } => (0u8, bytes).hash(hasher),
        Extent::Rect { src_origin, dst_origin, region, src_row_pitch, src_slice_pitch, dst_row_pitch, dst_slice_pitch } => {
            (1u8, src_origin, dst_origin, region, src_row_pitch, src_slice_pitch, dst_row_pitch, dst_slice_pitch).hash(hasher)
        }
    }
}

fn same_shape(objects: &Trace, base: &Family, other: &SegmentGraph, other_own: &[MemId], can_record: &dyn Fn(&Command) -> bool) -> bool {
    if base.base.nodes.len() != other.nodes.len() {
        return false;
    }
    let stand_ins = stand_ins(objects, &base.own_memory, other_own);
    base.base.nodes.iter().zip(&other.nodes).all(|(a, b)| {
        let (a, b) = (&a.command, &b.command);
        match (runs_eagerly(a, can_record), runs_eagerly(b, can_record)) {
            (true, true) => a.kind_name() == b.kind_name(),
            (false, false) => match (a, b) {
                // Memory neither owns lives for the whole replay: its allocation and free only order.
                (Command::MemAlloc { mem: x }, Command::MemAlloc { mem: y }) | (Command::MemFree { mem: x }, Command::MemFree { mem: y })
                    if !base.own_memory.contains(x) && !other_own.contains(y) =>
                {
                    true
                }
                _ => patchable_into(objects, a, &in_base_terms(b, &stand_ins)),
            },
            _ => false,
        }
    })
}

/// For each of a segment's own memory objects (`other_own`), the base's that stands for it: the
/// n-th allocation for the n-th, where both are of the same kind and size.
fn stand_ins(objects: &Trace, base_own: &[MemId], other_own: &[MemId]) -> BTreeMap<MemId, MemId> {
    let alike = |a: MemId, b: MemId| match (objects.memories.get(a.index()), objects.memories.get(b.index())) {
        (Some(a), Some(b)) => a.kind == b.kind && a.size == b.size,
        _ => false,
    };
    other_own.iter().zip(base_own).filter(|&(&mine, &theirs)| alike(mine, theirs)).map(|(&mine, &theirs)| (mine, theirs)).collect()
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
fn patchable_into(objects: &Trace, base: &Command, other: &Command) -> bool {
    match (base, other) {
        (Command::Kernel(a), Command::Kernel(b)) => {
            same_kernel(objects, a.kernel, b.kernel)
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
fn same_kernel(objects: &Trace, a: KernelId, b: KernelId) -> bool {
    let (Some(ka), Some(kb)) = (objects.kernels.get(a.index()), objects.kernels.get(b.index())) else { return false };
    a == b || (ka.name == kb.name && objects.programs.get(ka.program.index()) == objects.programs.get(kb.program.index()))
}

fn arg_patchable_into(base: &Arg, other: &Arg) -> bool {
    match (base, other) {
        (Arg::Value(a) | Arg::ValueWithPointers { bytes: a, .. }, Arg::Value(b) | Arg::ValueWithPointers { bytes: b, .. }) => a.len() == b.len(),
        (Arg::Memory { .. } | Arg::NullMemory, Arg::Memory { .. } | Arg::NullMemory) => true,
        (Arg::Local(_), Arg::Local(_)) => true,
        (Arg::Texture(_), Arg::Texture(_)) => true,
        // A condition's handle is the graph's own: the same condition, or no patch makes it.
        (Arg::Condition(a), Arg::Condition(b)) => a == b,
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

#[cfg(test)]
mod tests {
    use super::*;
    use crate::test_traces::{mem, value, TraceBuilder};
    use trace_format::{MemId, NodeId, SegmentId};

    /// Each segment's placement and patches, as the trace streams by.
    fn placements(b: &TraceBuilder, can_record: &dyn Fn(&Command) -> bool) -> Vec<(Placement, Vec<Patch>)> {
        let mut finder = FamilyFinder::new(&b.trace);
        b.graphs()
            .iter()
            .map(|graph| {
                let placement = finder.place(graph, can_record);
                (placement, finder.patches(placement.family, graph))
            })
            .collect()
    }

    /// The members of each family, in the order of their bases.
    fn members(placements: &[(Placement, Vec<Patch>)]) -> Vec<Vec<u32>> {
        let mut families: Vec<Vec<u32>> = Vec::new();
        for (segment, (placement, _)) in placements.iter().enumerate() {
            if placement.family == families.len() {
                families.push(Vec::new());
            }
            families[placement.family].push(segment as u32);
        }
        families
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
        let placed = placements(&jacobi(3), &|_| true);
        assert_eq!(members(&placed), vec![vec![0, 1, 2]]);
        assert!(placed[0].0.founded && !placed[1].0.founded);
        let (x, y) = (MemId(0), MemId(1));
        // The second member sets all four slots that vary from the base; patches name the base's nodes 0 and 1.
        assert_eq!(
            placed[1].1,
            vec![
                Patch::Arg { node: NodeId(0), index: 0, value: mem(y) },
                Patch::Arg { node: NodeId(0), index: 1, value: mem(x) },
                Patch::Arg { node: NodeId(0), index: 2, value: value(11) },
                Patch::Arg { node: NodeId(1), index: 0, value: mem(x) },
            ]
        );
        assert_eq!(placed[2].1[2], Patch::Arg { node: NodeId(0), index: 2, value: value(12) });
        assert_eq!(placed[2].1.len(), 4, "every slot that varied so far");
    }

    #[test]
    fn a_segment_placed_again_lands_in_its_family_with_every_varying_slot() {
        let b = jacobi(3);
        let mut finder = FamilyFinder::new(&b.trace);
        let graphs = b.graphs();
        for graph in &graphs {
            finder.place(graph, &|_| true);
        }
        let again = finder.place(&graphs[0], &|_| true);
        assert!(again.founded);
        assert_eq!(finder.patches(again.family, &graphs[0]).len(), 4, "the base sets back its own values");
        assert_eq!(finder.families().len(), 1);
        assert_eq!(finder.family(0).varying_slots(), 4);
    }

    #[test]
    fn segments_with_textures_and_conditions_share_a_family_and_keep_it() {
        // Each replay iteration places every segment again: one with a kernel taking a texture
        // object and a graph condition must land in its family, not found another (CUDA's texture
        // samples and conditional graphs rebuilt their command buffers every iteration).
        let mut b = TraceBuilder::new();
        let kernel = b.kernel("sample", &[Some(8), Some(8)]);
        for texture in 0..2 {
            let segment = b.segment();
            b.launch(segment, kernel, vec![Arg::Texture(trace_format::TextureId(texture)), Arg::Condition(1)], 16);
        }
        let graphs = b.graphs();
        let mut finder = FamilyFinder::new(&b.trace);
        for _ in 0..2 {
            assert_eq!([&graphs[0], &graphs[1]].map(|graph| finder.place(graph, &|_| true).family), [0, 0]);
        }
        assert_eq!(finder.families().len(), 1);
        assert_eq!(finder.patches(0, &graphs[1]), vec![Patch::Arg { node: NodeId(0), index: 0, value: Arg::Texture(trace_format::TextureId(1)) }]);
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
        let placed = placements(&b, &|_| true);
        // Scratch of another size is not a stand-in: the third segment is a family of its own.
        assert_eq!(members(&placed), vec![vec![0, 1], vec![2]]);
        // The second segment's scratch (memory 2) is reached as the base's (memory 1): only the scalar varies.
        assert_eq!(placed[1].1, vec![Patch::Arg { node: NodeId(1), index: 2, value: value(1) }]);
    }

    /// Two segments, each allocating 64 bytes of its own (returned) that kernel `k` of `b` writes,
    /// then doing `after` with them.
    fn allocating_segments(b: &mut TraceBuilder, after: impl Fn(&mut TraceBuilder, SegmentId, MemId)) -> Vec<MemId> {
        let k = b.kernel("k", &[None]);
        let mut allocated = Vec::new();
        for _ in 0..2 {
            let segment = b.segment();
            let memory = b.memory(64);
            allocated.push(memory);
            b.node(segment, Command::MemAlloc { mem: memory });
            b.launch(segment, k, vec![mem(memory)], 16);
            after(b, segment, memory);
        }
        allocated
    }

    /// Stream-ordered memory a host copy reads back (run eagerly) stands for the base's like any
    /// other own memory: the copy runs on the base's, which the command buffer's kernel wrote
    /// (streamOrderedAllocation read zeros when the copy read the member's).
    #[test]
    fn an_eager_node_runs_on_the_memory_its_family_s_command_buffers_use() {
        let mut b = TraceBuilder::new();
        let outputs = allocating_segments(&mut b, |b, segment, output| {
            let read_back = Copy { src: Place::Memory { mem: output, offset: 0 }, dst: Place::Host { data: None }, extent: Extent::Linear { bytes: 64 } };
            b.node(segment, Command::Copy(read_back));
            b.node(segment, Command::MemFree { mem: output });
        });
        let host_copies_eager = |command: &Command| !matches!(command, Command::Copy(_));
        let mut finder = FamilyFinder::new(&b.trace);
        let graphs = b.graphs();
        let placed: Vec<Placement> = graphs.iter().map(|graph| finder.place(graph, &host_copies_eager)).collect();
        assert_eq!((placed[0].family, placed[1].family), (0, 0));
        assert!(finder.patches(0, &graphs[1]).is_empty(), "the base's output stands in for the member's");
        let Command::Copy(copy) = &*finder.stand_ins(0, &graphs[1]).apply(&graphs[1].nodes[2].command) else { panic!("a copy") };
        assert_eq!(copy.src, Place::Memory { mem: outputs[0], offset: 0 });
    }

    /// Memory a segment allocates and a later one frees (neither owns it) lives for the whole
    /// replay: its allocation only orders, and segments allocating other such memory are one family.
    #[test]
    fn allocations_of_memory_no_segment_owns_do_not_split_families() {
        let mut b = TraceBuilder::new();
        let buffers = allocating_segments(&mut b, |_, _, _| {});
        let placed = placements(&b, &|_| true);
        assert_eq!(members(&placed), vec![vec![0, 1]]);
        assert_eq!(placed[1].1, vec![Patch::Arg { node: NodeId(1), index: 0, value: mem(buffers[1]) }]);
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
        let placed = placements(&b, &|_| true);
        assert_eq!(members(&placed), vec![vec![0, 1]]);
        assert!(placed.iter().all(|(_, patches)| patches.is_empty()));
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
        let placed = placements(&b, &|_| true);
        assert_eq!(members(&placed), vec![vec![0, 1]]);
        assert!(matches!(&placed[1].1[..], [Patch::Launch { node: NodeId(0), launch: Launch::NdRange { global: [32, 1, 1], .. } }]));
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
        assert_eq!(members(&placements(&b, &|_| true)), vec![vec![0, 2], vec![1]]);
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
        assert_eq!(members(&placements(&b, &|_| true)), vec![vec![0], vec![1]]);
    }

    #[test]
    fn a_scalar_of_another_size_is_not_a_patch() {
        let mut b = TraceBuilder::new();
        let k = b.kernel("k", &[Some(4)]);
        for bytes in [vec![0u8; 4], vec![0u8; 8]] {
            let segment = b.segment();
            b.launch(segment, k, vec![Arg::Value(bytes)], 16);
        }
        assert_eq!(members(&placements(&b, &|_| true)), vec![vec![0], vec![1]]);
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
        assert_eq!(members(&placements(&b, &|_| true)), vec![vec![0], vec![1]]);
        let no_copies = |c: &Command| !matches!(c, Command::Copy(_));
        assert_eq!(members(&placements(&b, &no_copies)), vec![vec![0, 1]]);
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
        assert_eq!(members(&placements(&b, &|_| true)), vec![vec![0, 1], vec![2]]);
    }

    #[test]
    fn fills_of_other_values_are_families_of_their_own_found_by_hash() {
        let mut b = TraceBuilder::new();
        let buffer = b.memory(64);
        for value in [1u8, 2, 1] {
            let segment = b.segment();
            b.node(segment, Command::Fill(trace_format::Fill { mem: buffer, offset: 0, bytes: 64, pattern: vec![value], rows: None }));
        }
        assert_eq!(members(&placements(&b, &|_| true)), vec![vec![0, 2], vec![1]]);
    }

}
