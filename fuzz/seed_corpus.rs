//! Writes a few valid traces into the directory given as the first argument, for the fuzzer
//! to start from: a finished one, a killed writer's, and one with compressed blobs.
use std::path::PathBuf;
use trace_format::*;

fn main() {
    let dir = PathBuf::from(std::env::args().nth(1).expect("usage: seed_corpus DIR"));
    std::fs::create_dir_all(&dir).expect("create the corpus directory");
    for (name, finish, blob_len) in [("finished", true, 64), ("killed", false, 64), ("compressed", true, 4096)] {
        let mut writer = TraceWriter::new(Vec::new()).expect("write to memory");
        writer.record(&Record::Header(Header { api: Api::OpenCl, producer: "seed".into(), command_line: vec![], process_id: 1, started_unix_s: 0 })).unwrap();
        writer.record(&Record::Memory(Memory { kind: MemKind::Buffer, size: blob_len, address: 0, flags: 0, device: None })).unwrap();
        writer.record(&Record::SegmentBegin { ordinal: 0 }).unwrap();
        let blob = writer.blob(&vec![7u8; blob_len as usize]).unwrap();
        writer.record(&Record::InitialState { segment: SegmentId(0), state: MemState { mem: MemId(0), blob } }).unwrap();
        writer
            .record(&Record::Node(Node {
                queue: None,
                segment: SegmentId(0),
                command: Command::Fill(Fill { mem: MemId(0), offset: 0, bytes: blob_len, pattern: vec![1], rows: None }),
                call: "fill".into(),
            }))
            .unwrap();
        writer.record(&Record::SegmentEnd { segment: SegmentId(0), ended_by: "sync".into(), expected: vec![] }).unwrap();
        let bytes = if finish { writer.finish().unwrap() } else { writer.into_inner_for_tests() };
        std::fs::write(dir.join(name), bytes).expect("write a seed");
    }
}
