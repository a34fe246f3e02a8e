//! Writes a trace of any number of segments with the real writer, record for record as the shim
//! records `tests/opencl/many_segments.c` on PoCL: one OpenCL program, two kernels, three
//! buffers; each segment launches `advance` nine times with a new constant (the patches between
//! segments), then `reduce`, then reads the 16-byte result back, which is the data the host
//! received. The values are computed as the kernels compute them, so the trace replays and
//! compares for real. For benchmarks of the replayer at scale (`scripts/bench-replayer-scale.sh`).
//! With FAMILIES, each segment first fills the result with a value that cycles through FAMILIES
//! values: a fill no patch changes, so the segments fall into that many families.
//!
//! Usage: synthetic_trace OUTPUT SEGMENTS [FAMILIES]

use std::path::PathBuf;
use trace_format::*;

const SOURCE: &str = "__kernel void advance(__global uint *dst, __global const uint *src, uint k) {\n    size_t i = get_global_id(0); dst[i] = src[i] * 3u + k + (uint)i; }\n__kernel void reduce(__global uint *r, __global const uint *src, uint n) {\n    size_t j = get_global_id(0); uint s = 0;\n    for (uint i = (uint)j; i < n; i += 4u) s += src[i];\n    r[j] = s; }\n";
const ELEMENTS: usize = 256;
const STEPS: u32 = 9;
const LANES: usize = 4;

fn words(values: &[u32]) -> Vec<u8> {
    values.iter().flat_map(|v| v.to_le_bytes()).collect()
}

fn nd_range(global: u64) -> Launch {
    Launch::NdRange { dims: 1, offset: [0; 3], global: [global, 1, 1], local: None }
}

fn memory_arg(mem: u32) -> Arg {
    Arg::Memory { mem: MemId(mem), offset: 0 }
}

fn main() -> Result<(), FormatError> {
    let mut args = std::env::args().skip(1);
    let (Some(output), Some(segments)) = (args.next(), args.next().and_then(|s| s.parse::<u32>().ok())) else {
        eprintln!("usage: synthetic_trace OUTPUT SEGMENTS [FAMILIES]");
        std::process::exit(2);
    };
    let families = args.next().and_then(|s| s.parse::<u32>().ok()).filter(|&f| f > 1);
    let mut writer = TraceWriter::create(&PathBuf::from(&output))?;
    let command_line = vec!["many_segments".to_string(), segments.to_string()];
    writer.record(&Record::Header(Header { api: Api::OpenCl, producer: "reprise synthetic_trace".into(), command_line, process_id: 1, started_unix_s: 0 }))?;
    let device = Device { name: "pthread-synthetic".into(), vendor: "synthetic".into(), driver_version: "3.1".into(), properties: Default::default() };
    writer.record(&Record::Device(device))?;
    writer.record(&Record::Queue(Queue { in_order: true, device: Some(DeviceId(0)), flags: 0, priority: 0, label: "command queue 0x1".into() }))?;
    // Memory 0 and 1 ping-pong (the program's buffers[1] and [0]), memory 2 holds the result.
    let mut buffers = [(0..ELEMENTS as u32).collect::<Vec<u32>>(), (0..ELEMENTS as u32).collect::<Vec<u32>>()];
    let mut result = vec![0u32; LANES];
    for size in [ELEMENTS * 4, ELEMENTS * 4, LANES * 4] {
        writer.record(&Record::Memory(Memory { kind: MemKind::Buffer, size: size as u64, address: 0x1000, flags: 1, device: None }))?;
    }
    let source = writer.blob(SOURCE.as_bytes())?;
    writer.record(&Record::Program(Program { images: vec![ProgramImage { kind: ImageKind::OpenClSource, blob: source }], build_options: String::new() }))?;
    let params = vec![Param { offset: 0, size: 8, kind: ParamKind::Memory }, Param { offset: 0, size: 8, kind: ParamKind::Memory }, Param { offset: 0, size: 4, kind: ParamKind::Value }];
    for name in ["advance", "reduce"] {
        writer.record(&Record::Kernel(Kernel { program: ProgramId(0), name: name.into(), params: params.clone() }))?;
    }
    let mut next_node = 0u32;
    for index in 0..segments {
        let segment = SegmentId(index);
        writer.record(&Record::SegmentBegin { ordinal: u64::from(index) })?;
        if index == 0 {
            let blobs = [writer.blob(&words(&buffers[0]))?, writer.blob(&words(&buffers[1]))?, writer.blob(&words(&result))?];
            for (mem, blob) in blobs.into_iter().enumerate() {
                writer.record(&Record::InitialState { segment, state: MemState { mem: MemId(mem as u32), blob } })?;
            }
        }
        let node = |command| Record::Node(Node { queue: Some(QueueId(0)), segment, command, call: "clEnqueueNDRangeKernel".into() });
        let mut nodes = Vec::new();
        if let Some(families) = families {
            // `reduce` overwrites the whole result: the fill only shapes the family.
            let pattern = (index % families).to_le_bytes().to_vec();
            let fill = Fill { mem: MemId(2), offset: 0, bytes: (LANES * 4) as u64, pattern, rows: None };
            nodes.push(Record::Node(Node { queue: Some(QueueId(0)), segment, command: Command::Fill(fill), call: "clEnqueueFillBuffer".into() }));
        }
        for step in 0..STEPS {
            let k = index.wrapping_mul(16).wrapping_add(step);
            let (src, dst) = if step % 2 == 0 { (1, 0) } else { (0, 1) };
            let source = buffers[src].clone();
            for (i, value) in buffers[dst].iter_mut().enumerate() {
                *value = source[i].wrapping_mul(3).wrapping_add(k).wrapping_add(i as u32);
            }
            let args = vec![memory_arg(dst as u32), memory_arg(src as u32), Arg::Value(k.to_le_bytes().to_vec())];
            nodes.push(node(Command::Kernel(KernelLaunch { kernel: KernelId(0), args, launch: nd_range(ELEMENTS as u64) })));
        }
        for (lane, sum) in result.iter_mut().enumerate() {
            *sum = buffers[0].iter().skip(lane).step_by(LANES).fold(0u32, |s, &v| s.wrapping_add(v));
        }
        let args = vec![memory_arg(2), memory_arg(0), Arg::Value((ELEMENTS as u32).to_le_bytes().to_vec())];
        nodes.push(node(Command::Kernel(KernelLaunch { kernel: KernelId(1), args, launch: nd_range(LANES as u64) })));
        let received = writer.blob(&words(&result))?;
        let read = Copy { src: Place::Memory { mem: MemId(2), offset: 0 }, dst: Place::Host { data: Some(received) }, extent: Extent::Linear { bytes: (LANES * 4) as u64 } };
        nodes.push(Record::Node(Node { queue: Some(QueueId(0)), segment, command: Command::Copy(read), call: "clEnqueueReadBuffer".into() }));
        let count = nodes.len() as u32;
        for record in nodes {
            writer.record(&record)?;
        }
        for offset in 1..count {
            let (from, to) = (NodeId(next_node + offset - 1), NodeId(next_node + offset));
            writer.record(&Record::Edge(Edge { from, to, kind: EdgeKind::InOrder }))?;
        }
        next_node += count;
        writer.record(&Record::SegmentEnd { segment, ended_by: "clEnqueueReadBuffer".into(), expected: Vec::new() })?;
    }
    // The final contents at the end of the capture, as the shim reads them.
    if let Some(last) = segments.checked_sub(1) {
        let finals = [words(&result), words(&buffers[1]), words(&buffers[0])];
        for (mem, contents) in [2, 1, 0].into_iter().zip(finals) {
            let blob = writer.blob(&contents)?;
            writer.record(&Record::Expected { segment: SegmentId(last), state: MemState { mem: MemId(mem), blob } })?;
        }
    }
    writer.finish()?;
    Ok(())
}
