//! Hazards: nodes of a segment that nothing orders and that use the same memory, one of them
//! writing it. The SYCL graph specification calls such graphs racy: the replay may run them in
//! either order, or at once, and the program's result depended on an order nobody asked for.
//! A kernel writes the memory its pointer parameters name unless the trace knows the parameter
//! as a pointer to const (`Record::ParamTypes`); copies read their source and write their
//! destination, fills write.
//!
//! Cost stays linear in the segment: each use is checked against the memory's last writer and
//! the readers since (at most `READERS_KEPT`), each check searches the graph backwards through
//! at most `SEARCH_BUDGET` nodes and counts as ordered when the budget runs out.

use crate::replay::points_to_const;
use std::collections::{HashMap, HashSet};
use std::fmt;
use trace_format::{Arg, Command, KernelId, MemId, Node, NodeId, Place, TextureKind, Trace, TraceSegment};

const READERS_KEPT: usize = 64;
const SEARCH_BUDGET: usize = 4096;

/// Memory that two things nothing orders use, one of them writing it.
#[derive(Clone, Debug, PartialEq, Eq, serde::Serialize)]
pub enum Hazard {
    /// Two nodes of a segment; `first` (the earlier) writes it when `first_writes`.
    Nodes { first: NodeId, second: NodeId, mem: MemId, first_writes: bool, second_writes: bool },
    /// The host wrote it directly while `node`, which writes it too, ran (`HostWrite::while_running`).
    Host { node: NodeId, mem: MemId },
}

impl fmt::Display for Hazard {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        match *self {
            Hazard::Nodes { first, second, mem, first_writes, second_writes } => match (first_writes, second_writes) {
                (true, true) => write!(f, "nodes {first} and {second} are not ordered and both write memory {}", mem.0),
                (true, false) => write!(f, "node {first} writes memory {}, which node {second} reads, and nothing orders them", mem.0),
                _ => write!(f, "node {second} writes memory {}, which node {first} reads, and nothing orders them", mem.0),
            },
            Hazard::Host { node, mem } => write!(f, "the host wrote memory {} while node {node}, which writes it too, ran", mem.0),
        }
    }
}

/// Finds the hazards of one segment at a time.
pub struct HazardFinder {
    /// Per kernel, which parameters point to const memory (read only).
    read_only: HashMap<KernelId, Vec<bool>>,
    /// Per texture object, the memory it reads (or a surface writes), by `TextureId` index.
    textures: Vec<Option<(MemId, bool)>>,
}

impl HazardFinder {
    pub fn new(trace: &Trace) -> HazardFinder {
        let read_only = trace
            .param_types
            .iter()
            .map(|known| (known.kernel, known.types.iter().map(|spelled| points_to_const(spelled)).collect()))
            .collect();
        let textures = trace
            .textures
            .iter()
            .map(|texture| texture.resource.map(|resource| (resource.mem, texture.kind == TextureKind::Surface)))
            .collect();
        HazardFinder { read_only, textures }
    }

    pub fn segment(&self, segment: &TraceSegment) -> Vec<Hazard> {
        let first = segment.first_node.0;
        let mut preds: Vec<Vec<usize>> = vec![Vec::new(); segment.nodes.len()];
        for edge in &segment.edges {
            if let (Some(from), Some(to)) = (edge.from.0.checked_sub(first), edge.to.0.checked_sub(first)) {
                if let Some(list) = preds.get_mut(to as usize) {
                    list.push(from as usize);
                }
            }
        }
        let mut users: HashMap<MemId, MemoryUsers> = HashMap::new();
        let mut found = Vec::new();
        let mut reported = HashSet::new();
        for (index, node) in segment.nodes.iter().enumerate() {
            for (mem, writes) in self.uses(node) {
                let known = users.entry(mem).or_default();
                let writer = known.writer.filter(|&writer| writer != index).map(|writer| (writer, true));
                let readers = known.readers.iter().copied().filter(|&reader| writes && reader != index).map(|reader| (reader, false));
                for (earlier, earlier_writes) in writer.into_iter().chain(readers) {
                    if reported.contains(&(earlier, index)) || reaches(&preds, earlier, index) {
                        continue;
                    }
                    reported.insert((earlier, index));
                    let id = |local: usize| NodeId(first + local as u32);
                    found.push(Hazard::Nodes { first: id(earlier), second: id(index), mem, first_writes: earlier_writes, second_writes: writes });
                }
                if writes {
                    known.writer = Some(index);
                    known.readers.clear();
                } else if known.readers.len() < READERS_KEPT {
                    known.readers.push(index);
                }
            }
        }
        let mut raced = HashSet::new();
        for write in segment.segment.host_writes.iter().filter(|write| write.while_running) {
            let writer = users.get(&write.mem).and_then(|known| known.writer);
            if let Some(writer) = writer.filter(|_| raced.insert(write.mem)) {
                found.push(Hazard::Host { node: NodeId(first + writer as u32), mem: write.mem });
            }
        }
        found
    }

    /// The memory `node` uses, each once, and whether it (may) write it.
    fn uses(&self, node: &Node) -> Vec<(MemId, bool)> {
        let mut uses: Vec<(MemId, bool)> = Vec::new();
        self.command_uses(&node.command, &mut |mem, writes| match uses.iter_mut().find(|(known, _)| *known == mem) {
            Some(known) => known.1 |= writes,
            None => uses.push((mem, writes)),
        });
        uses
    }

    fn command_uses(&self, command: &Command, f: &mut dyn FnMut(MemId, bool)) {
        command.for_each_leaf(&mut |leaf| match leaf {
            Command::Kernel(launch) => {
                let read_only = self.read_only.get(&launch.kernel);
                for (index, arg) in launch.args.iter().enumerate() {
                    match arg {
                        Arg::Memory { mem, .. } => f(*mem, !read_only.and_then(|params| params.get(index)).copied().unwrap_or(false)),
                        Arg::ValueWithPointers { pointers, .. } => pointers.iter().for_each(|pointer| f(pointer.mem, true)),
                        Arg::Texture(texture) => {
                            if let Some(&Some((mem, writes))) = self.textures.get(texture.index()) {
                                f(mem, writes);
                            }
                        }
                        _ => {}
                    }
                }
            }
            Command::Copy(copy) => {
                if let Place::Memory { mem, .. } = copy.src {
                    f(mem, false);
                }
                if let Place::Memory { mem, .. } = copy.dst {
                    f(mem, true);
                }
            }
            Command::Fill(fill) => f(fill.mem, true),
            _ => {}
        });
    }
}

#[derive(Default)]
struct MemoryUsers {
    writer: Option<usize>,
    readers: Vec<usize>,
}

/// Whether a path of edges leads from `earlier` to `later` (edges go from earlier nodes to later
/// ones). A search past the budget counts as ordered: a hazard is never reported on a guess.
fn reaches(preds: &[Vec<usize>], earlier: usize, later: usize) -> bool {
    let mut stack = vec![later];
    let mut seen = HashSet::new();
    while let Some(node) = stack.pop() {
        for &pred in &preds[node] {
            if pred == earlier {
                return true;
            }
            if pred > earlier && seen.insert(pred) {
                if seen.len() > SEARCH_BUDGET {
                    return true;
                }
                stack.push(pred);
            }
        }
    }
    false
}

#[cfg(test)]
mod tests {
    use super::*;
    use trace_format::{Copy, Edge, EdgeKind, Extent, Fill, KernelLaunch, Launch, ParamTypes, Segment, SegmentId};

    fn node(command: Command) -> Node {
        Node { queue: None, segment: SegmentId(0), command, call: "".into() }
    }

    fn fill(mem: u32) -> Node {
        node(Command::Fill(Fill { mem: MemId(mem), offset: 0, bytes: 4, pattern: vec![0], rows: None }))
    }

    fn copy(src: u32, dst: u32) -> Node {
        let place = |mem| Place::Memory { mem: MemId(mem), offset: 0 };
        node(Command::Copy(Copy { src: place(src), dst: place(dst), extent: Extent::Linear { bytes: 4 } }))
    }

    fn kernel(mems: &[u32]) -> Node {
        let args = mems.iter().map(|&mem| Arg::Memory { mem: MemId(mem), offset: 0 }).collect();
        let launch = Launch::NdRange { dims: 1, offset: [0; 3], global: [1, 1, 1], local: None };
        node(Command::Kernel(KernelLaunch { kernel: KernelId(0), args, launch }))
    }

    fn segment(nodes: Vec<Node>, edges: &[(u32, u32)]) -> TraceSegment {
        let edges = edges.iter().map(|&(from, to)| Edge { from: NodeId(from), to: NodeId(to), kind: EdgeKind::Event }).collect();
        let segment = Segment { ordinal: 0, ended_by: String::new(), initial: Vec::new(), expected: Vec::new(), failed_with: None, printed: None, racy_reads: Vec::new(), host_writes: Vec::new() };
        TraceSegment { id: SegmentId(0), segment, first_node: NodeId(0), nodes, first_edge: 0, edges }
    }

    fn found(trace: &Trace, segment: &TraceSegment) -> Vec<String> {
        HazardFinder::new(trace).segment(segment).iter().map(ToString::to_string).collect()
    }

    #[test]
    fn unordered_uses_of_the_same_memory_with_a_write_are_hazards() {
        // 0 fills memory 3; 1 copies it to 4 with nothing ordering them; 2 fills 3 again after 1.
        let racy = segment(vec![fill(3), copy(3, 4), fill(3), fill(4)], &[(1, 2)]);
        assert_eq!(
            found(&Trace::default(), &racy),
            [
                "node 0 writes memory 3, which node 1 reads, and nothing orders them",
                "nodes 0 and 2 are not ordered and both write memory 3",
                "nodes 1 and 3 are not ordered and both write memory 4"
            ]
        );
        let ordered = segment(vec![fill(3), copy(3, 4), fill(3), fill(4)], &[(0, 1), (1, 2), (1, 3)]);
        assert!(found(&Trace::default(), &ordered).is_empty());
    }

    #[test]
    fn kernels_only_read_what_their_parameter_types_call_const() {
        let two_kernels = segment(vec![kernel(&[1, 2]), kernel(&[1, 3])], &[]);
        assert_eq!(found(&Trace::default(), &two_kernels), ["nodes 0 and 1 are not ordered and both write memory 1"]);
        let typed = Trace {
            param_types: vec![ParamTypes { kernel: KernelId(0), types: vec!["const float*".into(), "float*".into()] }],
            ..Trace::default()
        };
        assert!(found(&typed, &two_kernels).is_empty(), "both only read memory 1");
    }

    #[test]
    fn a_surface_writes_what_a_texture_over_the_same_image_reads() {
        let resource = Some(trace_format::TextureResource { mem: MemId(5), offset: 0 });
        let object = |kind| trace_format::Texture { kind, resource, description: Vec::new() };
        let trace = Trace { textures: vec![object(TextureKind::Sampled), object(TextureKind::Surface)], ..Trace::default() };
        let through = |texture: u32| {
            let launch = Launch::NdRange { dims: 1, offset: [0; 3], global: [1, 1, 1], local: None };
            node(Command::Kernel(KernelLaunch { kernel: KernelId(0), args: vec![Arg::Texture(trace_format::TextureId(texture))], launch }))
        };
        assert!(found(&trace, &segment(vec![through(0), through(0)], &[])).is_empty(), "two reads");
        assert_eq!(found(&trace, &segment(vec![through(0), through(1)], &[])), ["node 1 writes memory 5, which node 0 reads, and nothing orders them"]);
    }
}
