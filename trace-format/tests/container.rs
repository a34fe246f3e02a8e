//! The container keeps what it is given, and reads damaged or foreign files with a clear error.

mod strategies;

use proptest::prelude::*;
use trace_format::*;

fn to_bytes(trace: &Trace, blobs: &BlobStore) -> Vec<u8> {
    write_trace_to(TraceWriter::new(Vec::new()).unwrap(), trace, blobs).unwrap()
}

proptest! {
    #![proptest_config(ProptestConfig::with_cases(200))]

    #[test]
    fn any_trace_round_trips(trace in strategies::trace(), contents in strategies::blobs()) {
        let mut blobs = BlobStore::default();
        let ids: Vec<BlobId> = contents.iter().map(|c| blobs.insert(c.clone())).collect();
        let file = read_trace_bytes(&to_bytes(&trace, &blobs)).unwrap();
        prop_assert_eq!(&file.trace, &trace);
        prop_assert_eq!(file.completeness, Completeness::Complete);
        prop_assert_eq!(file.blobs.len(), blobs.len());
        // One buffer read into again and again holds each blob exactly, longer or shorter.
        let mut reused = vec![7u8; 3];
        for (id, content) in ids.iter().zip(&contents) {
            prop_assert_eq!(&*file.blobs.get(*id).unwrap(), &content[..]);
            prop_assert!(file.blobs.stored_len(*id).unwrap() <= content.len() as u64);
            file.blobs.get_into(*id, &mut reused).unwrap();
            prop_assert_eq!(&reused[..], &content[..]);
        }
    }
}

/// A recording as the shim streams it: records interleaved with blobs, and for each frame
/// the file length once it was whole.
struct Recording {
    bytes: Vec<u8>,
    /// (file length after the frame, records so far, blobs so far)
    frame_ends: Vec<(u64, usize, usize)>,
    records: Vec<Record>,
    blobs: Vec<Vec<u8>>,
}

fn recording(nodes: usize, blob_every: usize, blob_len: usize, finish: bool) -> Recording {
    let mut writer = TraceWriter::new(Vec::new()).unwrap();
    let mut records = vec![
        Record::Header(Header { api: Api::OpenCl, producer: "test".into(), command_line: vec!["app".into()], process_id: 7, started_unix_s: 1 }),
        Record::Memory(Memory { kind: MemKind::Buffer, size: blob_len as u64, address: 0x1000, flags: 1, device: None }),
        Record::SegmentBegin { ordinal: 0 },
    ];
    for n in 0..nodes {
        records.push(Record::Node(Node {
            queue: Some(QueueId(0)),
            segment: SegmentId(0),
            command: Command::Kernel(KernelLaunch {
                kernel: KernelId(0),
                args: vec![Arg::Memory { mem: MemId(0), offset: n as u64 }, Arg::Value((n as u32).to_le_bytes().to_vec())],
                launch: Launch::NdRange { dims: 1, offset: [0; 3], global: [n as u64 + 1, 1, 1], local: None },
            }),
            call: "clEnqueueNDRangeKernel".into(),
        }));
        if n > 0 {
            records.push(Record::Edge(Edge { from: NodeId(n as u32 - 1), to: NodeId(n as u32), kind: EdgeKind::InOrder }));
        }
    }
    let mut blobs = Vec::new();
    let mut frame_ends = Vec::new();
    for (i, record) in records.iter().enumerate() {
        writer.record(record).unwrap();
        frame_ends.push((writer.position(), i + 1, blobs.len()));
        if i % blob_every == 0 {
            // Alternately compressible and not, each different.
            let mut state = (i as u64).wrapping_mul(0x9E37_79B9_7F4A_7C15) | 1;
            let mut noise = || {
                state ^= state << 13;
                state ^= state >> 7;
                state ^= state << 17;
                state as u8
            };
            let blob: Vec<u8> = (0..blob_len).map(|b| if i % 2 == 0 { (b / 64 + i) as u8 } else { noise() }).collect();
            writer.blob(&blob).unwrap();
            blobs.push(blob);
            frame_ends.push((writer.position(), i + 1, blobs.len()));
        }
    }
    let bytes = if finish { writer.finish().unwrap() } else { writer.into_inner_for_tests() };
    Recording { bytes, frame_ends, records, blobs }
}

/// What a reader must see of the first `records` records: built here independently of the reader.
fn expected_trace(all: &[Record], records: usize) -> Trace {
    let mut trace = Trace::default();
    for record in &all[..records] {
        match record.clone() {
            Record::Header(h) => trace.header = Some(h),
            Record::Memory(m) => trace.memories.push(m),
            Record::SegmentBegin { ordinal } => trace.segments.push(Segment { ordinal, ended_by: String::new(), initial: vec![], expected: vec![], failed_with: None, printed: None, racy_reads: Vec::new(), host_writes: Vec::new() }),
            Record::Node(n) => trace.nodes.push(n),
            Record::Edge(e) => trace.edges.push(e),
            other => panic!("the test recording has no {other:?}"),
        }
    }
    trace
}

fn check_cut(rec: &Recording, cut: usize) {
    let result = read_trace_bytes(&rec.bytes[..cut]);
    if cut < 16 {
        let err = result.expect_err("a file cut inside its header is an error");
        assert!(matches!(err, FormatError::NoHeader(_)), "cut {cut}: {err}");
        return;
    }
    let file = result.unwrap_or_else(|e| panic!("cut at {cut}: {e}"));
    let (valid, records, blobs) = rec.frame_ends.iter().rev().find(|(end, ..)| *end as usize <= cut).copied().unwrap_or((16, 0, 0));
    assert_eq!(file.trace, expected_trace(&rec.records, records), "cut at {cut}");
    assert_eq!(file.blobs.len(), blobs, "cut at {cut}");
    for blob in &rec.blobs[..blobs] {
        assert_eq!(&*file.blobs.get(BlobId::of(blob)).unwrap(), &blob[..]);
    }
    if cut < rec.bytes.len() {
        match file.completeness {
            Completeness::Truncated { valid_bytes, .. } => assert_eq!(valid_bytes, valid, "cut at {cut}"),
            Completeness::Complete => panic!("a file cut at {cut} of {} reads as complete", rec.bytes.len()),
        }
    }
}

#[test]
fn a_cut_at_every_offset_keeps_exactly_the_whole_records_before_it() {
    let rec = recording(120, 10, 700, true);
    assert!(rec.bytes.len() > 10_000, "the test trace should be real-sized");
    for cut in 0..=rec.bytes.len() {
        check_cut(&rec, cut);
    }
}

#[test]
fn a_large_trace_cut_at_sampled_offsets() {
    let rec = recording(3000, 50, 20_000, true);
    let step = rec.bytes.len() / 400;
    for cut in (0..rec.bytes.len()).step_by(step).chain(rec.bytes.len() - 40..=rec.bytes.len()) {
        check_cut(&rec, cut);
    }
}

#[test]
fn a_killed_writer_leaves_every_record_readable() {
    let rec = recording(200, 20, 300, false);
    let file = read_trace_bytes(&rec.bytes).unwrap();
    assert_eq!(file.trace, expected_trace(&rec.records, rec.records.len()));
    assert!(matches!(file.completeness, Completeness::Truncated { ref reason, .. } if reason.contains("without an index")));
}

#[test]
fn a_foreign_file_is_not_a_trace() {
    let err = read_trace_bytes(b"\x7fELF\x02\x01\x01\0\0\0\0\0\0\0\0\0\0\0\0\0").unwrap_err();
    assert!(matches!(err, FormatError::NotATrace));
    assert!(err.to_string().contains("not a Reprise trace"));
}

#[test]
fn a_newer_version_asks_for_an_upgrade() {
    let mut bytes = recording(3, 1, 10, true).bytes;
    bytes[8..12].copy_from_slice(&(FORMAT_VERSION + 1).to_le_bytes());
    let err = read_trace_bytes(&bytes).unwrap_err();
    assert!(matches!(err, FormatError::NewerVersion { found, supported } if found == FORMAT_VERSION + 1 && supported == FORMAT_VERSION));
    assert!(err.to_string().contains("upgrade the replayer"));
}

#[test]
fn a_flipped_byte_in_the_middle_names_the_damaged_frame() {
    for finish in [true, false] {
        let rec = recording(100, 10, 500, finish);
        // A byte inside the payload of a frame in the middle of the file.
        let (frame_start, ..) = rec.frame_ends[rec.frame_ends.len() / 2];
        let mut bytes = rec.bytes.clone();
        bytes[frame_start as usize + 12] ^= 0x40;
        let err = read_trace_bytes(&bytes).unwrap_err();
        assert!(matches!(err, FormatError::Checksum { offset } if offset == frame_start), "{err}");
        assert!(err.to_string().contains(&format!("byte {frame_start}")));
    }
}

#[test]
fn duplicate_blobs_are_stored_once() {
    let mut writer = TraceWriter::new(Vec::new()).unwrap();
    let data = vec![42u8; 100_000];
    let first = writer.blob(&data).unwrap();
    let after_first = writer.position();
    assert_eq!(writer.blob(&data).unwrap(), first);
    assert_eq!(writer.position(), after_first);
    assert!(after_first < 10_000, "100 kB of one byte compresses");
}

/// Found by the fuzzer: a trailer pointing near `usize::MAX` made the reader overflow.
#[test]
fn a_trailer_pointing_past_the_file_falls_back_to_scanning() {
    let mut bytes = recording(5, 2, 100, true).bytes;
    let trailer = bytes.len() - 16;
    bytes[trailer..trailer + 8].copy_from_slice(&(u64::MAX - 3).to_le_bytes());
    let file = read_trace_bytes(&bytes).unwrap();
    assert!(matches!(file.completeness, Completeness::Truncated { .. }));
    assert_eq!(file.trace.nodes.len(), 5);
}

/// Bytes lz4 cannot shrink.
fn noise(len: usize) -> Vec<u8> {
    let mut state = 0x2545_f491_4f6c_dd1du64;
    (0..len)
        .map(|_| {
            state ^= state << 13;
            state ^= state >> 7;
            state ^= state << 17;
            (state >> 32) as u8
        })
        .collect()
}

/// Blobs longer than a chunk, written by the writer or prepared on other threads, compressible
/// or not, read back exactly and under their content hash.
#[test]
fn large_blobs_read_back_whichever_way_they_were_compressed() {
    let compressible: Vec<u8> = (0..3_000_000u32).flat_map(|i| (i / 5).to_le_bytes()).collect();
    let noise = noise(2_000_000);
    let odd_tail = vec![9u8; 256 * 1024 * 4 + 17];
    let mut writer = TraceWriter::new(Vec::new()).unwrap();
    let mut scratch = Vec::new();
    let mut ids = Vec::new();
    for (index, bytes) in [&compressible, &noise, &odd_tail].into_iter().enumerate() {
        let id = match index % 2 {
            0 => writer.prepared_blob(&PreparedBlob::unless_stored(bytes.clone(), |_| false, &mut scratch)).unwrap(),
            _ => writer.blob(bytes).unwrap(),
        };
        assert_eq!(id, BlobId::of(bytes));
        ids.push(id);
    }
    let written = writer.finish().unwrap();
    let file = read_trace_bytes(&written).unwrap();
    for (id, bytes) in ids.iter().zip([&compressible, &noise, &odd_tail]) {
        assert_eq!(&*file.blobs.get(*id).unwrap(), &bytes[..]);
    }
    assert!(file.blobs.stored_len(ids[0]).unwrap() < compressible.len() as u64 / 2);
    assert_eq!(file.blobs.stored_len(ids[1]).unwrap(), noise.len() as u64);
    assert!(file.blobs.stored_len(ids[2]).unwrap() < 100_000);
}

/// A blob compressed in pieces on other threads (each piece whole chunks, the last shorter), as
/// the shim compresses what the program received where it lies, reads back as its bytes.
#[test]
fn a_blob_compressed_in_pieces_reads_back_as_its_bytes() {
    let bytes: Vec<u8> = (0..(3 * CHUNK_LEN + 1000) as u32).flat_map(|i| (i / 300).to_le_bytes()).collect();
    assert!(worth_compressing(&bytes));
    let pieces: Vec<Vec<u8>> = bytes
        .chunks(2 * CHUNK_LEN)
        .map(|piece| {
            let mut scratch = Vec::new();
            let end = compress_piece(piece, &mut scratch, 0, &mut |_| ()).unwrap();
            scratch[..end].to_vec()
        })
        .collect();
    let blob = PreparedBlob::in_pieces(BlobId(7), bytes.len(), pieces);
    assert!(blob.held_len() < bytes.len() / 4);
    assert_eq!(blob.to_raw().unwrap(), bytes);
    let mut writer = TraceWriter::new(Vec::new()).unwrap();
    assert_eq!(writer.prepared_blob(&blob).unwrap(), BlobId(7));
    let file = read_trace_bytes(&writer.finish().unwrap()).unwrap();
    assert_eq!(&*file.blobs.get(BlobId(7)).unwrap(), &bytes[..]);
    let noise = noise(100_000);
    assert!(!worth_compressing(&noise));
}
