//! proptest strategies for every model type, shared by the container tests.

use proptest::collection::vec;
use proptest::option;
use proptest::prelude::*;
use trace_format::*;

fn text() -> impl Strategy<Value = String> {
    "[a-zA-Z0-9_ .-]{0,12}"
}

fn triple() -> impl Strategy<Value = [u64; 3]> {
    [any::<u64>(), any::<u64>(), any::<u64>()]
}

fn blob_id() -> impl Strategy<Value = BlobId> {
    any::<u128>().prop_map(BlobId)
}

fn device() -> impl Strategy<Value = Device> {
    (text(), text(), text(), proptest::collection::btree_map(text(), text(), 0..3))
        .prop_map(|(name, vendor, driver_version, properties)| Device { name, vendor, driver_version, properties })
}

fn mem_kind() -> impl Strategy<Value = MemKind> {
    prop_oneof![
        Just(MemKind::Buffer),
        (any::<u32>(), any::<u64>()).prop_map(|(p, offset)| MemKind::SubBuffer { parent: MemId(p), offset }),
        Just(MemKind::Shared),
        Just(MemKind::Host),
        Just(MemKind::Managed),
        triple().prop_map(|[pitch, width, height]| MemKind::Pitched { pitch, width, height }),
        Just(MemKind::StreamOrdered),
        (any::<u32>(), text()).prop_map(|(p, name)| MemKind::Global { program: ProgramId(p), name }),
        (triple(), any::<u32>(), vec(any::<u64>(), 0..6))
            .prop_map(|([width, height, depth], texel_bytes, format)| MemKind::Image(ImageLayout { width, height, depth, texel_bytes, format })),
        prop_oneof![Just(UnifiedKind::Host), Just(UnifiedKind::Device), Just(UnifiedKind::Shared)].prop_map(MemKind::Unified),
    ]
}

fn texture() -> impl Strategy<Value = Texture> {
    let kind = prop_oneof![Just(TextureKind::Sampled), Just(TextureKind::Surface), Just(TextureKind::Sampler)];
    let resource = option::of((any::<u32>(), any::<u64>()).prop_map(|(mem, offset)| TextureResource { mem: MemId(mem), offset }));
    (kind, resource, vec(any::<u8>(), 0..40)).prop_map(|(kind, resource, description)| Texture { kind, resource, description })
}

fn memory() -> impl Strategy<Value = Memory> {
    (mem_kind(), any::<u64>(), any::<u64>(), any::<u64>(), option::of(any::<u32>().prop_map(DeviceId)))
        .prop_map(|(kind, size, address, flags, device)| Memory { kind, size, address, flags, device })
}

fn image_kind() -> impl Strategy<Value = ImageKind> {
    prop_oneof![
        Just(ImageKind::Ptx),
        Just(ImageKind::Cubin),
        Just(ImageKind::Fatbin),
        Just(ImageKind::OpenClSource),
        Just(ImageKind::DeviceBinary),
        Just(ImageKind::SpirV)
    ]
}

fn program() -> impl Strategy<Value = Program> {
    (vec((image_kind(), blob_id()).prop_map(|(kind, blob)| ProgramImage { kind, blob }), 0..3), text())
        .prop_map(|(images, build_options)| Program { images, build_options })
}

fn program_link() -> impl Strategy<Value = ProgramLink> {
    let image = (image_kind(), blob_id()).prop_map(|(kind, blob)| ProgramImage { kind, blob });
    let header = (text(), blob_id()).prop_map(|(name, blob)| ProgramHeader { name, blob });
    let unit = (vec(image, 0..2), text(), vec(header, 0..2)).prop_map(|(images, options, headers)| CompiledUnit { images, options, headers });
    (any::<u32>(), vec(unit, 0..3)).prop_map(|(program, units)| ProgramLink { program: ProgramId(program), units })
}

fn kernel() -> impl Strategy<Value = Kernel> {
    let kind = prop_oneof![Just(ParamKind::Value), Just(ParamKind::Memory), Just(ParamKind::Local), Just(ParamKind::Handle)];
    let param = (any::<u32>(), any::<u32>(), kind).prop_map(|(offset, size, kind)| Param { offset, size, kind });
    (any::<u32>(), text(), vec(param, 0..4)).prop_map(|(p, name, params)| Kernel { program: ProgramId(p), name, params })
}

fn queue() -> impl Strategy<Value = Queue> {
    (any::<bool>(), option::of(any::<u32>().prop_map(DeviceId)), any::<u64>(), any::<i32>(), text())
        .prop_map(|(in_order, device, flags, priority, label)| Queue { in_order, device, flags, priority, label })
}

fn arg() -> impl Strategy<Value = Arg> {
    prop_oneof![
        vec(any::<u8>(), 0..16).prop_map(Arg::Value),
        (any::<u32>(), any::<u64>()).prop_map(|(m, offset)| Arg::Memory { mem: MemId(m), offset }),
        Just(Arg::NullMemory),
        any::<u64>().prop_map(Arg::Local),
        (vec(any::<u8>(), 0..32), vec((any::<u32>(), any::<u32>(), any::<u64>()), 0..3)).prop_map(|(bytes, pointers)| {
            let pointers = pointers.into_iter().map(|(at, m, offset)| EmbeddedPointer { at, mem: MemId(m), offset }).collect();
            Arg::ValueWithPointers { bytes, pointers }
        }),
        any::<u32>().prop_map(Arg::Condition),
        any::<u32>().prop_map(|texture| Arg::Texture(TextureId(texture))),
    ]
}

fn launch() -> impl Strategy<Value = Launch> {
    let u32x3 = || [any::<u32>(), any::<u32>(), any::<u32>()];
    prop_oneof![
        (1u32..4, triple(), triple(), option::of(triple()))
            .prop_map(|(dims, offset, global, local)| Launch::NdRange { dims, offset, global, local }),
        (u32x3(), u32x3(), any::<u32>(), option::of(u32x3()), any::<bool>())
            .prop_map(|(grid, block, shared_bytes, cluster, cooperative)| Launch::Grid { grid, block, shared_bytes, cluster, cooperative }),
    ]
}

fn place() -> impl Strategy<Value = Place> {
    prop_oneof![
        (any::<u32>(), any::<u64>()).prop_map(|(m, offset)| Place::Memory { mem: MemId(m), offset }),
        option::of(blob_id()).prop_map(|data| Place::Host { data }),
    ]
}

fn extent() -> impl Strategy<Value = Extent> {
    prop_oneof![
        any::<u64>().prop_map(|bytes| Extent::Linear { bytes }),
        (triple(), triple(), triple(), triple(), any::<u64>()).prop_map(|(src_origin, dst_origin, region, p, dst_slice_pitch)| {
            Extent::Rect { src_origin, dst_origin, region, src_row_pitch: p[0], src_slice_pitch: p[1], dst_row_pitch: p[2], dst_slice_pitch }
        }),
    ]
}

fn leaf_command() -> impl Strategy<Value = Command> {
    prop_oneof![
        (any::<u32>(), vec(arg(), 0..4), launch())
            .prop_map(|(k, args, launch)| Command::Kernel(KernelLaunch { kernel: KernelId(k), args, launch })),
        (place(), place(), extent()).prop_map(|(src, dst, extent)| Command::Copy(Copy { src, dst, extent })),
        (any::<u32>(), any::<u64>(), any::<u64>(), vec(any::<u8>(), 1..5), option::of(triple()))
            .prop_map(|(m, offset, bytes, pattern, rows)| Command::Fill(Fill { mem: MemId(m), offset, bytes, pattern, rows })),
        Just(Command::Barrier),
        prop_oneof![Just(HostTaskKind::UserEvent), Just(HostTaskKind::Callback), Just(HostTaskKind::HostFunction)]
            .prop_map(Command::HostTask),
        any::<u32>().prop_map(|m| Command::MemAlloc { mem: MemId(m) }),
        any::<u32>().prop_map(|m| Command::MemFree { mem: MemId(m) }),
    ]
}

fn edge() -> impl Strategy<Value = Edge> {
    let kind = prop_oneof![Just(EdgeKind::InOrder), Just(EdgeKind::Event), Just(EdgeKind::Barrier), Just(EdgeKind::DefaultStream)];
    (any::<u32>(), any::<u32>(), kind).prop_map(|(from, to, kind)| Edge { from: NodeId(from), to: NodeId(to), kind })
}

/// Commands, with sub-graphs nested up to two levels deep.
fn command() -> impl Strategy<Value = Command> {
    leaf_command().prop_recursive(2, 8, 3, |inner| {
        (vec(node_with(inner), 0..3), vec(edge(), 0..3)).prop_map(|(nodes, edges)| Command::Subgraph(Graph { nodes, edges }))
    })
}

fn node_with(command: impl Strategy<Value = Command>) -> impl Strategy<Value = Node> {
    (option::of(any::<u32>().prop_map(QueueId)), any::<u32>(), command, text())
        .prop_map(|(queue, s, command, call)| Node { queue, segment: SegmentId(s), command, call: call.into() })
}

fn mem_state() -> impl Strategy<Value = MemState> {
    (any::<u32>(), blob_id()).prop_map(|(m, blob)| MemState { mem: MemId(m), blob })
}

fn host_write() -> impl Strategy<Value = HostWrite> {
    (any::<u32>(), any::<u64>(), blob_id(), any::<bool>()).prop_map(|(m, offset, blob, while_running)| HostWrite { mem: MemId(m), offset, blob, while_running })
}

fn segment() -> impl Strategy<Value = Segment> {
    let writes = vec(host_write(), 0..2);
    (any::<u64>(), text(), vec(mem_state(), 0..3), vec(mem_state(), 0..3), proptest::option::of(text()), proptest::option::of(blob_id()), vec(any::<u32>(), 0..2), writes)
        .prop_map(|(ordinal, ended_by, initial, expected, failed_with, printed, racy, host_writes)| Segment {
            ordinal,
            ended_by,
            initial,
            expected,
            failed_with,
            printed,
            racy_reads: racy.into_iter().map(NodeId).collect(),
            host_writes,
        })
}

fn header() -> impl Strategy<Value = Header> {
    let api = prop_oneof![Just(Api::OpenCl), Just(Api::Cuda), Just(Api::LevelZero)];
    (api, text(), vec(text(), 0..3), any::<u32>(), any::<u64>())
        .prop_map(|(api, producer, command_line, process_id, started_unix_s)| Header { api, producer, command_line, process_id, started_unix_s })
}

/// Any trace the container holds: references need not resolve, but segments are written one
/// after another, so each node is in an existing segment, nodes are in segment order and edges
/// in the order of the segments they are written with (`write_trace_to`).
pub fn trace() -> impl Strategy<Value = Trace> {
    (
        option::of(header()),
        vec(device(), 0..3),
        vec(memory(), 0..4),
        vec(program(), 0..3),
        vec(kernel(), 0..3),
        vec(queue(), 0..3),
        vec(node_with(command()), 0..6),
        vec(edge(), 0..6),
        vec(segment(), 0..3),
        vec((text(), text()).prop_map(|(call, reason)| PartialReason { call, reason }), 0..2),
        vec((any::<u32>(), vec(text(), 0..3)).prop_map(|(kernel, types)| ParamTypes { kernel: KernelId(kernel), types }), 0..2),
        (vec(texture(), 0..2), vec(program_link(), 0..2), vec(kernel_attribute(), 0..3)),
    )
        .prop_map(|(header, devices, memories, programs, kernels, queues, mut nodes, mut edges, segments, partial, param_types, (textures, program_links, kernel_attributes))| {
            if segments.is_empty() {
                nodes.clear();
                edges.clear();
            }
            for node in &mut nodes {
                node.segment = SegmentId(node.segment.0 % segments.len().max(1) as u32);
            }
            nodes.sort_by_key(|node| node.segment);
            let segment_of = |id: NodeId| nodes.get(id.index()).map(|node| node.segment.0);
            edges.sort_by_key(|edge| segment_of(edge.to).or_else(|| segment_of(edge.from)).unwrap_or(u32::MAX));
            Trace { header, devices, memories, programs, kernels, queues, nodes, edges, segments, partial, param_types, textures, program_links, kernel_attributes }
        })
}

fn kernel_attribute() -> impl Strategy<Value = KernelAttribute> {
    (any::<u32>(), any::<u32>(), any::<i64>()).prop_map(|(kernel, attribute, value)| KernelAttribute { kernel: KernelId(kernel), attribute, value })
}

/// Blob contents: small and large, repetitive (compressible) and random.
pub fn blobs() -> impl Strategy<Value = Vec<Vec<u8>>> {
    let repetitive = (any::<u8>(), 0usize..5000).prop_map(|(byte, len)| vec![byte; len]);
    let random = vec(any::<u8>(), 0..3000);
    vec(prop_oneof![repetitive, random], 0..5)
}
