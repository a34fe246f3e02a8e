//! What runs without a GPU: the refusal without a driver, argument packing and relocation, and
//! address ranges.

use super::memory::{granule_ranges, recorded_range, reservations, unshared_buffer_ranges, Memories, Reservation};
use crate::backend::{BackendError, BackendOptions, HostCopies};
use std::collections::HashMap;
use trace_format::{Api, EmbeddedPointer, Extent, MemKind, Memory};

fn driver_loadable() -> bool {
    // SAFETY: dlopen of a constant name; the handle is closed at once.
    unsafe {
        let handle = libc::dlopen(c"libcuda.so.1".as_ptr(), libc::RTLD_NOW | libc::RTLD_LOCAL);
        if handle.is_null() {
            return false;
        }
        libc::dlclose(handle);
        true
    }
}

#[test]
fn without_a_driver_the_backend_is_unavailable_and_does_not_panic() {
    let opened = crate::backends::open(Api::Cuda, &BackendOptions::default());
    match opened {
        Err(BackendError::Unavailable(message)) if !driver_loadable() => {
            assert_eq!(message, "no CUDA driver (libcuda.so.1) on this machine: replay CUDA traces on a machine with an NVIDIA GPU")
        }
        Err(BackendError::Unavailable(_)) | Ok(_) if driver_loadable() => {}
        Err(other) => panic!("expected the backend or Unavailable, got {other}"),
        Ok(_) => panic!("opened a CUDA backend without libcuda.so.1"),
    }
}

/// Partitions of a segment copying in, running kernels around a host task and a device copy,
/// and copying out, as the CUDA backend cuts them.
fn partitions_with_host_copies(host_copies: HostCopies, copy_in: Extent, copy_out: Extent) -> Vec<(crate::plan::PartitionKind, usize)> {
    use crate::plan::plan_segment;
    use crate::test_traces::{mem, TraceBuilder};
    use trace_format::{Command, Copy, Place};
    let mut builder = TraceBuilder::new();
    let segment = builder.segment();
    let (buffer, other) = (builder.memory(4 << 20), builder.memory(4 << 20));
    let kernel = builder.kernel("k", &[None]);
    let copy = |src, dst, extent| Command::Copy(Copy { src, dst, extent });
    let device = |mem| Place::Memory { mem, offset: 0 };
    let nodes = [
        builder.node(segment, copy(Place::Host { data: None }, device(buffer), copy_in)),
        builder.launch(segment, kernel, vec![mem(buffer)], 16),
        builder.node(segment, copy(device(buffer), device(other), Extent::Linear { bytes: 64 })),
        builder.launch(segment, kernel, vec![mem(other)], 16),
        builder.host_task(segment),
        builder.launch(segment, kernel, vec![mem(other)], 16),
        builder.node(segment, copy(device(other), Place::Host { data: None }, copy_out)),
    ];
    for pair in nodes.windows(2) {
        builder.edge(pair[0], pair[1]);
    }
    let plan = plan_segment(&builder.graphs()[0], &|command| super::graph::holds(command, host_copies)).expect("acyclic");
    plan.partitions.iter().map(|partition| (partition.kind, partition.nodes.len())).collect()
}

/// Copies with a host end run inside the graph by default, as kernels where a kernel can make
/// them (linear, at most 256 KB) and as memcpy nodes where not, all on the stream between graphs with
/// `--host-copies stream`, and all inside the graph as memcpy nodes with `--host-copies nodes`;
/// device copies and host code stay in the graph.
#[test]
fn host_copies_run_between_or_inside_graphs_as_chosen() {
    use crate::plan::PartitionKind::{Eager, Recorded};
    let linear = |bytes| Extent::Linear { bytes };
    let rows = Extent::Rect { src_origin: [0; 3], dst_origin: [0; 3], region: [16, 4, 1], src_row_pitch: 32, src_slice_pitch: 0, dst_row_pitch: 16, dst_slice_pitch: 0 };
    let between = [(Eager, 1), (Recorded, 5), (Eager, 1)];
    assert_eq!(HostCopies::default(), HostCopies::Kernels);
    assert_eq!(partitions_with_host_copies(HostCopies::Stream, linear(64), linear(64)), between);
    assert_eq!(partitions_with_host_copies(HostCopies::Nodes, linear(4 << 20), rows.clone()), [(Recorded, 7)]);
    assert_eq!(partitions_with_host_copies(HostCopies::Kernels, linear(64), linear(256 << 10)), [(Recorded, 7)]);
    assert_eq!(partitions_with_host_copies(HostCopies::Kernels, linear((256 << 10) + 16), rows), [(Recorded, 7)]);
}

fn memory(kind: MemKind, address: u64, size: u64) -> Memory {
    Memory { kind, size, address, flags: 0, device: None }
}

#[test]
fn exact_addresses_map_each_granule_once_and_leave_host_memory_to_its_allocator() {
    const MB2: u64 = 2 << 20;
    let base = 0x7f00_0000_0000;
    let memories = [
        // Two small runtime allocations sharing a granule, one spilling into the next.
        memory(MemKind::Buffer, base + 512, 1024),
        memory(MemKind::Buffer, base + MB2 - 256, 512),
        // A pool allocation far away, and host memory inside the first granule's range.
        memory(MemKind::StreamOrdered, base + 10 * MB2, MB2 + 1),
        memory(MemKind::Host, base + 4 * MB2, 64),
    ];
    let device_resident = memories.iter().filter(|memory| memory.kind != MemKind::Host).map(recorded_range);
    assert_eq!(granule_ranges(device_resident, MB2), vec![(base, base + 2 * MB2), (base + 10 * MB2, base + 12 * MB2)]);
}

/// The driver honours a requested address for new addresses only at its chunk boundary (a request
/// 8 MB past one got the next boundary), so each reservation starts at one and covers every
/// granule range up to the next reservation's boundary.
#[test]
fn reservations_start_at_chunk_boundaries_and_hold_the_ranges_up_to_the_next() {
    const MB: u64 = 1 << 20;
    let chunk = 32 * MB;
    let base = 0x7fb3_e000_0000;
    let granules = vec![
        (base + 8 * MB, base + 10 * MB),
        (base + 30 * MB, base + 36 * MB),
        // Starts in the chunk the previous range ends in: the same reservation.
        (base + 40 * MB, base + 42 * MB),
        (base + 200 * MB, base + 202 * MB),
    ];
    assert_eq!(
        reservations(granules, chunk),
        vec![
            Reservation { start: base, end: base + 42 * MB, parts: vec![(base + 8 * MB, base + 10 * MB), (base + 30 * MB, base + 36 * MB), (base + 40 * MB, base + 42 * MB)] },
            Reservation { start: base + 192 * MB, end: base + 202 * MB, parts: vec![(base + 200 * MB, base + 202 * MB)] },
        ]
    );
}

/// By default buffers go where they were recorded, except where another object's recorded range
/// overlaps theirs (the program freed one and allocated the other there): those two would share
/// storage, and the earlier one's final contents would be the later one's.
#[test]
fn buffers_whose_recorded_ranges_overlap_are_not_placed_where_recorded() {
    let base = 0x7f00_0000_0000;
    let memories = [
        memory(MemKind::Buffer, base, 4096),
        // Freed and allocated again: a larger buffer over the first, then a small one inside it.
        memory(MemKind::Buffer, base + 8192, 1 << 20),
        memory(MemKind::Buffer, base + 8192 + 4096, 64),
        memory(MemKind::Buffer, base + (2 << 20), 64),
        memory(MemKind::Managed, base + (4 << 20), 64),
    ];
    let placed: Vec<(u64, u64)> = unshared_buffer_ranges(&memories).collect();
    assert_eq!(placed, vec![(base, base + 4096), (base + (2 << 20), base + (2 << 20) + 64)]);
}

#[test]
fn kernel_arguments_are_packed_with_memory_relocated_to_the_replay_addresses() {
    use super::commands::{pack_args, Addresses};
    use trace_format::{Arg, MemId, Param, ParamKind};
    let params = [
        Param { offset: 0, size: 8, kind: ParamKind::Memory },
        Param { offset: 8, size: 8, kind: ParamKind::Memory },
        Param { offset: 16, size: 4, kind: ParamKind::Value },
        Param { offset: 24, size: 8, kind: ParamKind::Value },
    ];
    // Memory 1 lives at 0x7000_0000 in this replay; the recorded pointer was 0x40 bytes into it.
    let addresses = [0x5000_0000, 0x7000_0000];
    let args = [
        Arg::Memory { mem: MemId(1), offset: 0x40 },
        Arg::NullMemory,
        Arg::Value(2.5f32.to_le_bytes().to_vec()),
        Arg::Value(vec![7, 0, 0]),
    ];
    let values = pack_args(&params, &args, Addresses::new(&addresses, &HashMap::new())).expect("packs");
    assert_eq!(values[0], 0x7000_0040u64.to_le_bytes());
    assert_eq!(values[1], [0; 8]);
    assert_eq!(values[2], 2.5f32.to_le_bytes());
    // A value shorter than its parameter is zero-padded (a recorded 3-byte struct in an 8-byte slot).
    assert_eq!(values[3], [7, 0, 0, 0, 0, 0, 0, 0]);
}

#[test]
fn memory_a_partition_allocates_itself_is_reached_at_the_address_its_allocation_gave() {
    use super::commands::{pack_args, Addresses};
    use trace_format::{Arg, MemId, Param, ParamKind};
    let params = [Param { offset: 0, size: 8, kind: ParamKind::Memory }, Param { offset: 8, size: 8, kind: ParamKind::Memory }];
    let args = [Arg::Memory { mem: MemId(0), offset: 8 }, Arg::Memory { mem: MemId(1), offset: 16 }];
    // Memory 1 is the partition's own: its graph allocation node put it at 0x9000_0000.
    let allocated = HashMap::from([(MemId(1), 0x9000_0000)]);
    let values = pack_args(&params, &args, Addresses::new(&[0x5000_0000, 0x7000_0000], &allocated)).expect("packs");
    assert_eq!(values, [0x5000_0008u64.to_le_bytes(), 0x9000_0010u64.to_le_bytes()]);
}

#[test]
fn kernel_arguments_that_do_not_fit_their_parameters_are_refused() {
    use super::commands::{pack_args, Addresses};
    use trace_format::{Arg, MemId, Param, ParamKind};
    let param = [Param { offset: 0, size: 4, kind: ParamKind::Value }];
    let refused = |args: &[Arg]| matches!(pack_args(&param, args, Addresses::new(&[0x1000], &HashMap::new())), Err(BackendError::Unsupported(_)));
    assert!(refused(&[Arg::Value(vec![0; 8])]), "8 bytes into a 4-byte parameter");
    assert!(refused(&[Arg::Memory { mem: MemId(3), offset: 0 }]), "memory the trace does not have");
    assert!(refused(&[Arg::Local(64)]), "OpenCL local memory");
    assert!(refused(&[]), "too few arguments");
    let outside = Arg::ValueWithPointers { bytes: vec![0; 4], pointers: vec![EmbeddedPointer { at: 0, mem: MemId(0), offset: 0 }] };
    assert!(refused(&[outside]), "a pointer past the end of its structure");
}

#[test]
fn addresses_inside_a_structure_are_relocated_and_its_other_bytes_kept() {
    use super::commands::{pack_args, Addresses};
    use trace_format::{Arg, MemId, Param, ParamKind};
    let params = [Param { offset: 0, size: 24, kind: ParamKind::Value }];
    let mut bytes = vec![0xAA; 24];
    bytes[8..16].copy_from_slice(&0x7f00_0000_1040u64.to_le_bytes());
    let pointers = vec![EmbeddedPointer { at: 8, mem: MemId(1), offset: 0x40 }, EmbeddedPointer { at: 16, mem: MemId(0), offset: 0 }];
    let values = pack_args(&params, &[Arg::ValueWithPointers { bytes, pointers }], Addresses::new(&[0x5000_0000, 0x7000_0000], &HashMap::new())).expect("packs");
    let expected = [[0xAA; 8], 0x7000_0040u64.to_le_bytes(), 0x5000_0000u64.to_le_bytes()].concat();
    assert_eq!(values, vec![expected]);
}

#[test]
fn a_program_variable_is_placed_where_its_loaded_program_has_it() {
    let variable = Memory {
        kind: MemKind::Global { program: trace_format::ProgramId(1), name: "counter".into() },
        size: 16,
        address: 0x7f00_0000_0000,
        flags: 0,
        device: None,
    };
    let inside = Memory { kind: MemKind::SubBuffer { parent: trace_format::MemId(0), offset: 4 }, size: 8, ..variable.clone() };
    let asked = std::cell::RefCell::new(Vec::new());
    let find = |program: trace_format::ProgramId, name: &str| {
        asked.borrow_mut().push((program.0, name.to_string()));
        Ok((0x5000, 16))
    };
    let placed = Memories::allocate(&[variable.clone(), inside], 0, false, find).unwrap();
    assert_eq!(placed.addresses, [0x5000, 0x5004]);
    assert_eq!(asked.into_inner(), [(1, "counter".to_string())]);
    // A program built differently, whose variable has another size, is refused.
    let other_size = |_: trace_format::ProgramId, _: &str| Ok((0x5000, 32));
    let Err(BackendError::Unsupported(message)) = Memories::allocate(&[variable], 0, false, other_size) else { panic!("placed") };
    assert!(message.contains("of 16 bytes, not 32"), "{message}");
}

#[test]
fn a_condition_argument_is_the_handle_the_graph_being_built_gave_it() {
    use super::commands::{pack_args, Addresses};
    use trace_format::{Arg, Param, ParamKind};
    let params = [Param { offset: 0, size: 8, kind: ParamKind::Value }];
    let conditions = HashMap::from([(3, 0x1234_5678_9abc)]);
    let values = pack_args(&params, &[Arg::Condition(3)], Addresses::new(&[], &HashMap::new()).with_conditions(&conditions)).expect("packs");
    assert_eq!(values, [0x1234_5678_9abcu64.to_le_bytes()]);
    // Outside a graph, or for a condition no conditional of the graph has, there is no handle.
    assert!(pack_args(&params, &[Arg::Condition(3)], Addresses::new(&[], &HashMap::new())).is_err());
    assert!(pack_args(&params, &[Arg::Condition(4)], Addresses::new(&[], &HashMap::new()).with_conditions(&conditions)).is_err());
}

#[test]
fn conditionals_and_the_kernels_that_set_them_run_only_inside_graphs() {
    use super::graph::needs_graph;
    use trace_format::{Arg, Command, Conditional, ConditionalKind, Graph, KernelId, KernelLaunch, Launch, Node, SegmentId};
    let launch = |args| {
        let shape = Launch::Grid { grid: [1; 3], block: [1; 3], shared_bytes: 0, cluster: None, cooperative: false };
        Command::Kernel(KernelLaunch { kernel: KernelId(0), args, launch: shape })
    };
    let conditional = Command::Conditional(Conditional { kind: ConditionalKind::If, condition: 0, default: Some(1), bodies: vec![] });
    assert!(needs_graph(&conditional));
    assert!(needs_graph(&launch(vec![Arg::Condition(0)])));
    assert!(!needs_graph(&launch(vec![Arg::Value(vec![0; 8])])));
    let node = |command| Node { queue: None, segment: SegmentId(0), command, call: "".into() };
    assert!(needs_graph(&Command::Subgraph(Graph { nodes: vec![node(conditional)], edges: vec![] })));
    assert!(!needs_graph(&Command::EventRecord { event: 0 }));
}
