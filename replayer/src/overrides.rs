//! Command-line patches for what-if runs (issue 5). `--set` changes a kernel argument of one
//! node or of every launch of a kernel, `--global` a launch's global size or grid. They
//! are checked against every node they target as the trace streams by once (`OverrideCheck`),
//! then applied to each segment before planning (`Overrides::apply`), so graph and eager replay
//! and every segment see the same change. Binding an argument to another memory object rebinds
//! that allocation in every node that used it, so the nodes that produce and consume it stay
//! connected.

use std::collections::{BTreeMap, BTreeSet};
use std::str::FromStr;
use trace_format::{Arg, Command, KernelId, KernelLaunch, Launch, MemId, NodeId, Trace, TraceSegment};

/// Which launches a patch applies to: one node, or every launch of a kernel.
#[derive(Clone, Debug, PartialEq, Eq)]
pub enum Target {
    Node(NodeId),
    Kernel(String),
}

impl FromStr for Target {
    type Err = String;
    fn from_str(text: &str) -> Result<Self, String> {
        if text.is_empty() {
            return Err("the node id or kernel name is missing".to_string());
        }
        Ok(match text.parse::<u32>() {
            Ok(id) => Target::Node(NodeId(id)),
            Err(_) => Target::Kernel(text.to_string()),
        })
    }
}

#[derive(Clone, Debug, PartialEq)]
pub enum SetValue {
    /// A typed scalar, as the bytes the kernel receives.
    Scalar { type_name: &'static str, bytes: Vec<u8> },
    Memory { mem: MemId, offset: u64 },
}

/// `--set NODE_OR_KERNEL:INDEX=TYPE:VALUE`.
#[derive(Clone, Debug, PartialEq)]
pub struct ArgOverride {
    pub target: Target,
    pub index: u32,
    pub value: SetValue,
}

const SET_FORM: &str = "expected NODE_OR_KERNEL:INDEX=TYPE:VALUE with TYPE one of f32, f64, i32, u32, i64, u64, mem \
                        (for example `scale:2=f32:2.5` or `7:0=mem:3+256`)";

impl FromStr for ArgOverride {
    type Err = String;
    fn from_str(text: &str) -> Result<Self, String> {
        let (place, value) = text.split_once('=').ok_or(SET_FORM)?;
        let (target, index) = place.rsplit_once(':').ok_or(SET_FORM)?;
        let index = index.parse().map_err(|_| format!("argument index `{index}` is not a number; {SET_FORM}"))?;
        let (type_name, value) = value.split_once(':').ok_or(SET_FORM)?;
        Ok(ArgOverride { target: target.parse()?, index, value: parse_value(type_name, value)? })
    }
}

fn parse_value(type_name: &str, text: &str) -> Result<SetValue, String> {
    fn number<T: FromStr>(text: &str, type_name: &str) -> Result<T, String> {
        text.parse().map_err(|_| format!("`{text}` is not a valid {type_name}"))
    }
    let scalar = |type_name: &'static str, bytes: Vec<u8>| Ok(SetValue::Scalar { type_name, bytes });
    match type_name {
        "f32" => scalar("f32", number::<f32>(text, type_name)?.to_le_bytes().to_vec()),
        "f64" => scalar("f64", number::<f64>(text, type_name)?.to_le_bytes().to_vec()),
        "i32" => scalar("i32", number::<i32>(text, type_name)?.to_le_bytes().to_vec()),
        "u32" => scalar("u32", number::<u32>(text, type_name)?.to_le_bytes().to_vec()),
        "i64" => scalar("i64", number::<i64>(text, type_name)?.to_le_bytes().to_vec()),
        "u64" => scalar("u64", number::<u64>(text, type_name)?.to_le_bytes().to_vec()),
        "mem" => {
            let (mem, offset) = text.split_once('+').unwrap_or((text, "0"));
            Ok(SetValue::Memory { mem: MemId(number(mem, "memory id")?), offset: number(offset, "offset")? })
        }
        other => Err(format!("unknown type `{other}`; {SET_FORM}")),
    }
}

/// `--global NODE_OR_KERNEL=X[,Y[,Z]]`: the global size (ND-range) or grid (blocks).
#[derive(Clone, Debug, PartialEq, Eq)]
pub struct SizeOverride {
    pub target: Target,
    pub size: Vec<u64>,
}

const GLOBAL_FORM: &str = "expected NODE_OR_KERNEL=X[,Y[,Z]] (for example `scale=2048` or `4=64,64`)";

impl FromStr for SizeOverride {
    type Err = String;
    fn from_str(text: &str) -> Result<Self, String> {
        let (target, sizes) = text.rsplit_once('=').ok_or(GLOBAL_FORM)?;
        let size = sizes
            .split(',')
            .map(|s| s.parse::<u64>().ok().filter(|&n| n > 0).ok_or(format!("size `{s}` is not a positive number; {GLOBAL_FORM}")))
            .collect::<Result<Vec<_>, _>>()?;
        if size.len() > 3 {
            return Err(format!("{} sizes given; at most 3 dimensions exist", size.len()));
        }
        Ok(SizeOverride { target: target.parse()?, size })
    }
}

/// A patch that does not fit the trace; nothing has run yet.
#[derive(Debug, thiserror::Error)]
#[error("{option} {target}: {reason}")]
pub struct OverrideError {
    pub option: &'static str,
    pub target: String,
    pub reason: String,
}

/// Where an allocation moves: every use of `[0, size)` of the old object lands at
/// `shift` bytes into the new one.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
struct Rebinding {
    mem: MemId,
    shift: u64,
}

/// The launches a patch applies to: a node, or every launch of the kernels of a name.
struct Targets {
    target: Target,
    kernels: BTreeSet<KernelId>,
}

impl Targets {
    fn new(objects: &Trace, target: &Target) -> Targets {
        let named = |name: &String| objects.kernels.iter().enumerate().filter(|(_, k)| &k.name == name).map(|(id, _)| KernelId(id as u32)).collect();
        let kernels = match target {
            Target::Kernel(name) => named(name),
            Target::Node(_) => BTreeSet::new(),
        };
        Targets { target: target.clone(), kernels }
    }

    /// Whether the patch applies to `node` (a node target applies to its node whatever it is).
    fn includes(&self, id: NodeId, command: &Command) -> bool {
        match &self.target {
            Target::Node(node) => *node == id,
            Target::Kernel(_) => matches!(command, Command::Kernel(launch) if self.kernels.contains(&launch.kernel)),
        }
    }
}

/// What checking found of one patch.
#[derive(Default)]
struct Found {
    launches: usize,
    /// The first launch it does not fit, in node order.
    failure: Option<String>,
    /// The rebindings it implies, each once, in node order.
    rebindings: Vec<(MemId, Rebinding)>,
}

/// Checks `--set` and `--global` patches against every node they target, one segment at a time.
pub struct OverrideCheck<'o> {
    objects: &'o Trace,
    nodes: usize,
    args: Vec<(&'o ArgOverride, Targets)>,
    sizes: Vec<(&'o SizeOverride, Targets)>,
    /// Per patch: the `--set` ones, then the `--global` ones.
    found: Vec<Found>,
}

impl<'o> OverrideCheck<'o> {
    /// For a trace of `nodes` nodes whose objects are `objects`.
    pub fn new(objects: &'o Trace, nodes: usize, args: &'o [ArgOverride], sizes: &'o [SizeOverride]) -> OverrideCheck<'o> {
        OverrideCheck {
            objects,
            nodes,
            args: args.iter().map(|patch| (patch, Targets::new(objects, &patch.target))).collect(),
            sizes: sizes.iter().map(|patch| (patch, Targets::new(objects, &patch.target))).collect(),
            found: (0..args.len() + sizes.len()).map(|_| Found::default()).collect(),
        }
    }

    /// Checks the patches against the nodes of a validated segment.
    pub fn segment(&mut self, segment: &TraceSegment) {
        if self.found.is_empty() {
            return;
        }
        for (id, node) in segment.nodes_with_ids() {
            for (index, (patch, targets)) in self.args.iter().enumerate() {
                if !targets.includes(id, &node.command) {
                    continue;
                }
                let checked = launch_of(id, &node.command).and_then(|launch| checked_arg(self.objects, id, launch, patch));
                let found = &mut self.found[index];
                found.launches += 1;
                match checked {
                    Ok((_, Some(rebinding))) if !found.rebindings.contains(&rebinding) => found.rebindings.push(rebinding),
                    Ok(_) => {}
                    Err(reason) => {
                        found.failure.get_or_insert(reason);
                    }
                }
            }
            for (index, (patch, targets)) in self.sizes.iter().enumerate() {
                if !targets.includes(id, &node.command) {
                    continue;
                }
                let checked = launch_of(id, &node.command).and_then(|launch| resized(id, launch, &patch.size));
                let found = &mut self.found[self.args.len() + index];
                found.launches += 1;
                if let Err(reason) = checked {
                    found.failure.get_or_insert(reason);
                }
            }
        }
    }

    /// The patches, checked, once every segment went by; else the first that does not fit
    /// (`--set` before `--global`, each by the first node it does not fit).
    pub fn finish(self) -> Result<Overrides, OverrideError> {
        let mut rebindings: BTreeMap<MemId, Rebinding> = BTreeMap::new();
        let args = self.args.iter().map(|(patch, targets)| ("--set", describe_target(&patch.target, Some(patch.index)), targets));
        let sizes = self.sizes.iter().map(|(patch, targets)| ("--global", describe_target(&patch.target, None), targets));
        for ((option, target, targets), found) in args.chain(sizes).zip(&self.found) {
            let fail = |reason: String| OverrideError { option, target: target.clone(), reason };
            match &targets.target {
                Target::Node(node) if node.index() >= self.nodes => {
                    return Err(fail(format!("node {node} does not exist (the trace has {} nodes)", self.nodes)));
                }
                Target::Kernel(_) if found.launches == 0 => {
                    let mut names: Vec<&str> = self.objects.kernels.iter().map(|k| k.name.as_str()).collect();
                    names.sort_unstable();
                    names.dedup();
                    return Err(fail(format!("no launch of a kernel with this name; the trace's kernels are: {}", names.join(", "))));
                }
                _ => {}
            }
            if let Some(reason) = &found.failure {
                return Err(fail(reason.clone()));
            }
            for &(old, rebinding) in &found.rebindings {
                if rebindings.insert(old, rebinding).is_some_and(|earlier| earlier != rebinding) {
                    return Err(fail(format!("memory {old} is rebound twice, to different places")));
                }
            }
        }
        Ok(Overrides { args: self.args.into_iter().map(|(p, t)| (p.clone(), t)).collect(), sizes: self.sizes.into_iter().map(|(p, t)| (p.clone(), t)).collect(), rebindings })
    }
}

/// Checked patches, applied to each segment before it is planned.
#[derive(Default)]
pub struct Overrides {
    args: Vec<(ArgOverride, Targets)>,
    sizes: Vec<(SizeOverride, Targets)>,
    rebindings: BTreeMap<MemId, Rebinding>,
}

impl Overrides {
    pub fn is_empty(&self) -> bool {
        self.args.is_empty() && self.sizes.is_empty()
    }

    /// Applies the patches to `segment`'s recorded nodes (the trace's objects are `objects`).
    pub fn apply(&self, objects: &Trace, segment: &mut TraceSegment) {
        if self.is_empty() {
            return;
        }
        let first = segment.first_node.0;
        for (index, node) in segment.nodes.iter_mut().enumerate() {
            let id = NodeId(first + index as u32);
            let Command::Kernel(launch) = &node.command else {
                rebind(&mut node.command, &self.rebindings);
                continue;
            };
            let args: Vec<(usize, Arg)> = self
                .args
                .iter()
                .filter(|(_, targets)| targets.includes(id, &node.command))
                .filter_map(|(patch, _)| Some((patch.index as usize, checked_arg(objects, id, launch, patch).ok()?.0)))
                .collect();
            let launches: Vec<Launch> =
                self.sizes.iter().filter(|(_, targets)| targets.includes(id, &node.command)).filter_map(|(patch, _)| resized(id, launch, &patch.size).ok()).collect();
            rebind(&mut node.command, &self.rebindings);
            if let Command::Kernel(launch) = &mut node.command {
                for (index, arg) in args {
                    launch.args[index] = arg;
                }
                for new_launch in launches {
                    launch.launch = new_launch;
                }
            }
        }
    }
}

fn describe_target(target: &Target, index: Option<u32>) -> String {
    let name = match target {
        Target::Node(node) => format!("node {node}"),
        Target::Kernel(name) => format!("kernel {name}"),
    };
    match index {
        Some(index) => format!("{name} argument {index}"),
        None => name,
    }
}

/// The launch of a node a patch targets.
fn launch_of(node: NodeId, command: &Command) -> Result<&KernelLaunch, String> {
    match command {
        Command::Kernel(launch) => Ok(launch),
        other => Err(format!("node {node} is a {}, not a kernel launch", other.kind_name())),
    }
}

/// The argument `patch` gives `node`, and the rebinding it implies (old memory, new place).
fn checked_arg(trace: &Trace, node: NodeId, launch: &KernelLaunch, patch: &ArgOverride) -> Result<(Arg, Option<(MemId, Rebinding)>), String> {
    let current = launch.args.get(patch.index as usize).ok_or_else(|| {
        format!("node {node} has {} arguments (indices 0 to {})", launch.args.len(), launch.args.len().saturating_sub(1))
    })?;
    match (&patch.value, current) {
        (SetValue::Scalar { type_name, bytes }, Arg::Value(old)) => {
            if bytes.len() != old.len() {
                return Err(format!("node {node}: the argument has {} bytes, a {type_name} has {}", old.len(), bytes.len()));
            }
            Ok((Arg::Value(bytes.clone()), None))
        }
        (SetValue::Scalar { type_name, .. }, other) => {
            Err(format!("node {node}: the argument is {}, not a value; a {type_name} does not fit", crate::describe::arg(other)))
        }
        (SetValue::Memory { mem, offset }, Arg::Memory { .. } | Arg::NullMemory) => {
            let memory = trace
                .memories
                .get(mem.index())
                .ok_or_else(|| format!("memory {mem} does not exist (the trace has {})", trace.memories.len()))?;
            if *offset >= memory.size {
                return Err(format!("offset {offset} lies outside memory {mem} of {} bytes", memory.size));
            }
            let rebinding = match current {
                Arg::Memory { mem: old, offset: old_offset } if old != mem => {
                    let old_size = trace.memories.get(old.index()).map_or(0, |m| m.size);
                    let fits = offset.checked_sub(*old_offset).filter(|shift| shift + old_size <= memory.size);
                    let shift = fits.ok_or_else(|| {
                        format!(
                            "node {node} uses memory {old} ({old_size} bytes) at offset {old_offset}; rebinding it to memory {mem} \
                             at offset {offset} would put part of it outside memory {mem} ({} bytes)",
                            memory.size
                        )
                    })?;
                    Some((*old, Rebinding { mem: *mem, shift }))
                }
                _ => None,
            };
            Ok((Arg::Memory { mem: *mem, offset: *offset }, rebinding))
        }
        (SetValue::Memory { mem, .. }, other) => {
            Err(format!("node {node}: the argument is {}, not memory; memory {mem} does not fit", crate::describe::arg(other)))
        }
    }
}

/// The launch of `node` with its global size or grid replaced by `size`.
fn resized(node: NodeId, launch: &KernelLaunch, size: &[u64]) -> Result<Launch, String> {
    match &launch.launch {
        Launch::NdRange { dims, offset, local, .. } => {
            if size.len() != *dims as usize {
                return Err(format!("node {node} launches a {dims}-dimensional ND-range; give {dims} size(s)"));
            }
            let mut global = [1u64; 3];
            global[..size.len()].copy_from_slice(size);
            if let Some(local) = local {
                if let Some(d) = (0..size.len()).find(|&d| global[d] % local[d] != 0) {
                    return Err(format!("node {node}: global size {} is not a multiple of its work-group size {}", global[d], local[d]));
                }
            }
            Ok(Launch::NdRange { dims: *dims, offset: *offset, global, local: *local })
        }
        Launch::Grid { block, shared_bytes, cluster, cooperative, .. } => {
            let mut grid = [1u32; 3];
            for (d, &blocks) in size.iter().enumerate() {
                grid[d] = u32::try_from(blocks).map_err(|_| format!("a grid of {blocks} blocks is too large"))?;
            }
            if let Some(cluster) = cluster {
                if let Some(d) = (0..3).find(|&d| grid[d] % cluster[d] != 0) {
                    return Err(format!("node {node}: grid size {} is not a multiple of its cluster size {}", grid[d], cluster[d]));
                }
            }
            Ok(Launch::Grid { grid, block: *block, shared_bytes: *shared_bytes, cluster: *cluster, cooperative: *cooperative })
        }
    }
}

/// Moves every use of a rebound allocation in `command` to its new place.
fn rebind(command: &mut Command, rebindings: &BTreeMap<MemId, Rebinding>) {
    if rebindings.is_empty() {
        return;
    }
    command.for_each_memory_use(&mut |mem, offset| {
        if let Some(to) = rebindings.get(mem) {
            *mem = to.mem;
            *offset += to.shift;
        }
    });
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::test_traces::{mem, value, TraceBuilder};
    use trace_format::{Copy, Extent, Place};

    /// `scale(in, out, factor)` twice on buffers 0 -> 1 -> 2 (64, 64, 128 bytes), then a read of buffer 1.
    fn two_scales() -> TraceBuilder {
        let mut b = TraceBuilder::new();
        let scale = b.kernel("scale", &[None, None, Some(4)]);
        let (x, y, z) = (b.memory(64), b.memory(64), b.memory(128));
        let segment = b.segment();
        b.launch(segment, scale, vec![mem(x), mem(y), value(2)], 16);
        b.launch(segment, scale, vec![mem(y), mem(z), value(2)], 16);
        b.node(
            segment,
            Command::Copy(Copy {
                src: Place::Memory { mem: y, offset: 0 },
                dst: Place::Host { data: None },
                extent: Extent::Linear { bytes: 64 },
            }),
        );
        b
    }

    fn set(text: &str) -> ArgOverride {
        text.parse().expect("valid --set")
    }

    fn args_of(trace: &Trace, node: usize) -> Vec<Arg> {
        match &trace.nodes[node].command {
            Command::Kernel(launch) => launch.args.clone(),
            _ => panic!("not a launch"),
        }
    }

    /// Checks the patches on the streamed trace, then applies them to every segment of `b`.
    fn apply(b: &mut TraceBuilder, args: &[&str], sizes: &[&str]) -> Result<(), String> {
        let args: Vec<ArgOverride> = args.iter().map(|a| set(a)).collect();
        let sizes: Vec<SizeOverride> = sizes.iter().map(|s| s.parse().expect("valid --global")).collect();
        let reader = b.reader();
        let mut check = OverrideCheck::new(reader.objects(), reader.node_count(), &args, &sizes);
        for segment in reader.segments() {
            check.segment(&segment.expect("reads"));
        }
        let overrides = check.finish().map_err(|e| e.to_string())?;
        b.trace.nodes.clear();
        for segment in reader.segments() {
            let mut segment = segment.expect("reads");
            overrides.apply(reader.objects(), &mut segment);
            b.trace.nodes.extend(segment.nodes);
        }
        Ok(())
    }

    #[test]
    fn set_parses_every_type() {
        assert_eq!(set("scale:2=f32:2.5").value, SetValue::Scalar { type_name: "f32", bytes: 2.5f32.to_le_bytes().to_vec() });
        assert_eq!(set("7:0=i64:-3").target, Target::Node(NodeId(7)));
        assert_eq!(set("ns::k:1=u32:9").target, Target::Kernel("ns::k".to_string()));
        assert_eq!(set("k:0=mem:3+256").value, SetValue::Memory { mem: MemId(3), offset: 256 });
        assert_eq!(set("k:0=mem:3").value, SetValue::Memory { mem: MemId(3), offset: 0 });
    }

    #[test]
    fn malformed_sets_are_rejected_with_the_expected_form() {
        for bad in ["k=f32:1", "k:x=f32:1", "k:0=f16:1", "k:0=u32:-1", "k:0=f32", ":0=u32:1", "k:0=mem:a"] {
            let error = bad.parse::<ArgOverride>().expect_err(bad);
            assert!(!error.is_empty(), "{bad}");
        }
        assert!("k=0".parse::<SizeOverride>().is_err());
        assert!("k=1,2,3,4".parse::<SizeOverride>().is_err());
    }

    #[test]
    fn a_kernel_name_sets_every_launch() {
        let mut b = two_scales();
        apply(&mut b, &["scale:2=u32:5"], &[]).expect("fits");
        assert_eq!(args_of(&b.trace, 0)[2], value(5));
        assert_eq!(args_of(&b.trace, 1)[2], value(5));
    }

    #[test]
    fn patches_that_do_not_fit_are_rejected() {
        let cases = [
            ("scale:2=f64:1", "--set kernel scale argument 2: node 0: the argument has 4 bytes, a f64 has 8"),
            ("scale:3=u32:1", "--set kernel scale argument 3: node 0 has 3 arguments (indices 0 to 2)"),
            ("scale:0=u32:1", "--set kernel scale argument 0: node 0: the argument is mem 0 + 0, not a value; a u32 does not fit"),
            ("0:2=mem:1", "--set node 0 argument 2: node 0: the argument is 0x00000002, not memory; memory 1 does not fit"),
            ("2:0=u32:1", "--set node 2 argument 0: node 2 is a copy, not a kernel launch"),
            ("9:0=u32:1", "--set node 9 argument 0: node 9 does not exist (the trace has 3 nodes)"),
            ("scale:0=mem:7", "--set kernel scale argument 0: memory 7 does not exist (the trace has 3)"),
            ("nope:0=u32:1", "--set kernel nope argument 0: no launch of a kernel with this name; the trace's kernels are: scale"),
        ];
        for (patch, message) in cases {
            let mut b = two_scales();
            assert_eq!(apply(&mut b, &[patch], &[]), Err(message.to_string()), "{patch}");
            assert_eq!(b.trace, two_scales().trace, "{patch} changed the trace although rejected");
        }
    }

    #[test]
    fn rebinding_memory_moves_every_use_of_it() {
        let mut b = two_scales();
        // Node 0 writes buffer 1, node 1 reads it and the copy reads it: all move to buffer 2 + 64.
        apply(&mut b, &["0:1=mem:2+64"], &[]).expect("fits");
        assert_eq!(args_of(&b.trace, 0)[1], Arg::Memory { mem: MemId(2), offset: 64 });
        assert_eq!(args_of(&b.trace, 1)[0], Arg::Memory { mem: MemId(2), offset: 64 });
        assert!(matches!(&b.trace.nodes[2].command, Command::Copy(c) if c.src == Place::Memory { mem: MemId(2), offset: 64 }));
    }

    #[test]
    fn rebinding_into_too_small_memory_is_rejected() {
        let mut b = two_scales();
        let error = apply(&mut b, &["0:1=mem:2+65"], &[]).expect_err("64 bytes do not fit at 65 of 128");
        assert!(error.contains("would put part of it outside memory 2"), "{error}");
    }

    #[test]
    fn global_sizes_must_fit_the_launch() {
        let mut b = two_scales();
        apply(&mut b, &[], &["scale=32"]).expect("fits");
        assert!(matches!(&b.trace.nodes[1].command, Command::Kernel(l) if matches!(l.launch, Launch::NdRange { global: [32, 1, 1], .. })));
        let error = apply(&mut b, &[], &["0=32,2"]).expect_err("one dimension");
        assert_eq!(error, "--global node 0: node 0 launches a 1-dimensional ND-range; give 1 size(s)");
        if let Command::Kernel(launch) = &mut b.trace.nodes[0].command {
            launch.launch = Launch::NdRange { dims: 1, offset: [0; 3], global: [16, 1, 1], local: Some([8, 1, 1]) };
        }
        let error = apply(&mut b, &[], &["0=20"]).expect_err("not a multiple");
        assert_eq!(error, "--global node 0: node 0: global size 20 is not a multiple of its work-group size 8");
    }
}
