//! Writer and reader throughput on a blob-heavy trace, in MB/s of raw blob bytes.
//! `cargo bench -p trace-format --bench throughput` (release build).

use std::time::{Duration, Instant};
use trace_format::*;

const BLOBS: usize = 160;
const BLOB_LEN: usize = 2 << 20;
const NODES: usize = 20_000;

/// Half the blobs are float ramps (compressible, like real buffers), half noise.
fn blobs() -> Vec<Vec<u8>> {
    let mut state = 0x2545_F491_4F6C_DD1Du64;
    (0..BLOBS)
        .map(|i| {
            if i % 2 == 0 {
                (0..BLOB_LEN / 4).flat_map(|j| ((j % 1024) as f32 * 0.5 + i as f32).to_le_bytes()).collect()
            } else {
                (0..BLOB_LEN / 8)
                    .flat_map(|_| {
                        state ^= state << 13;
                        state ^= state >> 7;
                        state ^= state << 17;
                        state.to_le_bytes()
                    })
                    .collect()
            }
        })
        .collect()
}

fn write<W: std::io::Write>(out: W, blobs: &[Vec<u8>]) -> W {
    let mut writer = TraceWriter::new(out).unwrap();
    writer.record(&Record::SegmentBegin { ordinal: 0 }).unwrap();
    for (n, blob) in blobs.iter().enumerate() {
        writer.blob(blob).unwrap();
        for k in 0..NODES / BLOBS {
            writer
                .record(&Record::Node(Node {
                    queue: Some(QueueId(0)),
                    segment: SegmentId(0),
                    command: Command::Kernel(KernelLaunch {
                        kernel: KernelId(0),
                        args: vec![Arg::Memory { mem: MemId(n as u32), offset: 0 }, Arg::Value((k as u32).to_le_bytes().to_vec())],
                        launch: Launch::NdRange { dims: 1, offset: [0; 3], global: [1024, 1, 1], local: None },
                    }),
                    call: "clEnqueueNDRangeKernel".into(),
                }))
                .unwrap();
        }
    }
    writer.finish().unwrap()
}

fn best_of<T>(runs: usize, mut work: impl FnMut() -> T) -> (Duration, T) {
    let mut best = None;
    let mut last = None;
    for _ in 0..runs {
        let start = Instant::now();
        let out = work();
        let took = start.elapsed();
        best = Some(best.map_or(took, |b: Duration| b.min(took)));
        last = Some(out);
    }
    (best.unwrap(), last.unwrap())
}

fn main() {
    let blobs = blobs();
    let raw: usize = blobs.iter().map(Vec::len).sum();
    let mb = raw as f64 / 1e6;
    let rate = |d: Duration| mb / d.as_secs_f64();

    let (to_memory, bytes) = best_of(3, || write(Vec::with_capacity(raw), &blobs));
    let dir = std::env::temp_dir().join(format!("reprise-bench-{}", std::process::id()));
    std::fs::create_dir_all(&dir).unwrap();
    let path = dir.join("bench.trace");
    let (to_file, _) = best_of(3, || write(std::io::BufWriter::with_capacity(1 << 20, std::fs::File::create(&path).unwrap()), &blobs));
    let (memcpy, _) = best_of(3, || blobs.iter().map(|b| b.to_vec()).collect::<Vec<_>>());

    let (metadata, _) = best_of(3, || read_trace(&path).unwrap());
    let (everything, _) = best_of(3, || {
        let file = read_trace(&path).unwrap();
        let ids: Vec<BlobId> = file.blobs.ids().collect();
        ids.iter().map(|&id| file.blobs.get(id).unwrap().len()).sum::<usize>()
    });
    let (from_memory, _) = best_of(3, || {
        let file = read_trace_bytes(&bytes).unwrap();
        let ids: Vec<BlobId> = file.blobs.ids().collect();
        ids.iter().map(|&id| file.blobs.get(id).unwrap().len()).sum::<usize>()
    });
    std::fs::remove_dir_all(&dir).ok();

    println!("blob-heavy trace: {BLOBS} blobs of {} MiB (half compressible), {NODES} node records", BLOB_LEN >> 20);
    println!("raw blob bytes {mb:.0} MB, file {:.0} MB", bytes.len() as f64 / 1e6);
    println!("write to memory          {:>8.0} MB/s", rate(to_memory));
    println!("write to file            {:>8.0} MB/s", rate(to_file));
    println!("read file, metadata only {:>8.0} MB/s", rate(metadata));
    println!("read file + every blob   {:>8.0} MB/s", rate(everything));
    println!("read memory + every blob {:>8.0} MB/s", rate(from_memory));
    println!("memcpy of the blobs      {:>8.0} MB/s (the machine's copy bandwidth, for scale)", rate(memcpy));
}
