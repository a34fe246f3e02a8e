use super::chunks;
use super::frame::{frame_header, Codec, FrameKind, HEADER_LEN, MAGIC, TRAILER_MAGIC};
use super::{BlobStore, FormatError, Record, FORMAT_VERSION};
use crate::{BlobId, Edge, NodeId, SegmentId, Trace};
use serde::{Deserialize, Serialize};
use std::collections::HashSet;
use std::fs::File;
use std::io::{BufWriter, Write};
use std::path::Path;
use xxhash_rust::xxh3::Xxh3;

/// Blobs smaller than this are stored raw: compressing them saves too little to matter.
const MIN_COMPRESSED_LEN: usize = 512;
/// Bytes compressed first to judge whether a blob is worth compressing at all.
const PROBE_LEN: usize = 64 * 1024;

/// Where each frame starts, written at the end so readers need not scan.
#[derive(Debug, Default, Serialize, Deserialize)]
pub(super) struct Index {
    pub records: Vec<u64>,
    pub blobs: Vec<u64>,
}

/// Writes a trace as it is recorded: every call appends whole frames, so a process killed at
/// any point leaves a readable prefix. `finish` adds the index.
pub struct TraceWriter<W: Write> {
    out: W,
    position: u64,
    written_blobs: HashSet<BlobId>,
    index: Index,
    scratch: Vec<u8>,
    /// The serialized record being written.
    record_bytes: Vec<u8>,
}

impl TraceWriter<BufWriter<File>> {
    pub fn create(path: &Path) -> Result<Self, FormatError> {
        TraceWriter::new(BufWriter::with_capacity(1 << 20, File::create(path)?))
    }
}

impl<W: Write> TraceWriter<W> {
    pub fn new(mut out: W) -> Result<Self, FormatError> {
        let mut header = [0u8; HEADER_LEN];
        header[..8].copy_from_slice(MAGIC);
        header[8..12].copy_from_slice(&FORMAT_VERSION.to_le_bytes());
        out.write_all(&header)?;
        Ok(TraceWriter { out, position: HEADER_LEN as u64, written_blobs: HashSet::new(), index: Index::default(), scratch: Vec::new(), record_bytes: Vec::new() })
    }

    pub fn record(&mut self, record: &Record) -> Result<(), FormatError> {
        // Serialized into one buffer kept from record to record: a fresh one per record grew
        // and was freed each time, the writer's largest cost while a program launches.
        let mut payload = std::mem::take(&mut self.record_bytes);
        payload.clear();
        let payload = postcard::to_extend(record, payload).map_err(|e| FormatError::Io(std::io::Error::other(e)))?;
        let position = self.position;
        let written = self.frame(FrameKind::Record, &[&payload]);
        self.record_bytes = payload;
        written?;
        self.index.records.push(position);
        Ok(())
    }

    /// Stores `bytes` once per trace, compressed when that pays; returns its id either way.
    pub fn blob(&mut self, bytes: &[u8]) -> Result<BlobId, FormatError> {
        self.blob_with_id(BlobId::of(bytes), bytes)
    }

    /// As `blob`, for a caller that already hashed the bytes.
    pub fn blob_with_id(&mut self, id: BlobId, bytes: &[u8]) -> Result<BlobId, FormatError> {
        if self.written_blobs.contains(&id) {
            return Ok(id);
        }
        let mut scratch = std::mem::take(&mut self.scratch);
        let result = match compress(bytes, &mut scratch, &mut |_| ()) {
            Some((codec, len)) => self.blob_frame(id, codec, bytes.len(), &[&scratch[..len]]),
            None => self.blob_frame(id, Codec::Raw, bytes.len(), &[bytes]),
        };
        self.scratch = scratch;
        result.map(|()| id)
    }

    /// Stores a blob hashed and compressed elsewhere (`PreparedBlob::unless_stored`, on any thread), once
    /// per trace; returns its id.
    pub fn prepared_blob(&mut self, blob: &PreparedBlob) -> Result<BlobId, FormatError> {
        if !self.written_blobs.contains(&blob.id) {
            let (codec, stored) = blob.stored();
            self.blob_frame(blob.id, codec, blob.raw_len, &stored)?;
        }
        Ok(blob.id)
    }

    fn blob_frame(&mut self, id: BlobId, codec: Codec, raw_len: usize, stored: &[&[u8]]) -> Result<(), FormatError> {
        let mut prefix = [0u8; super::frame::BLOB_PREFIX_LEN];
        prefix[..16].copy_from_slice(&id.0.to_le_bytes());
        prefix[16] = codec as u8;
        prefix[17..25].copy_from_slice(&(raw_len as u64).to_le_bytes());
        let position = self.position;
        let parts: Vec<&[u8]> = std::iter::once(&prefix[..]).chain(stored.iter().copied()).collect();
        self.frame(FrameKind::Blob, &parts)?;
        // Only a blob that was written counts as stored, so a failed write is not deduplicated away.
        self.written_blobs.insert(id);
        self.index.blobs.push(position);
        Ok(())
    }

    /// Whether the trace holds blob `id` already.
    pub fn holds(&self, id: BlobId) -> bool {
        self.written_blobs.contains(&id)
    }

    /// Bytes written so far, header included.
    pub fn position(&self) -> u64 {
        self.position
    }

    pub fn flush(&mut self) -> Result<(), FormatError> {
        Ok(self.out.flush()?)
    }

    /// The output as it is, without index: what a killed writer leaves (for tests and tools).
    pub fn into_inner_for_tests(mut self) -> W {
        let _ = self.out.flush();
        self.out
    }

    /// Writes the index and trailer and hands back the output.
    pub fn finish(mut self) -> Result<W, FormatError> {
        let index_offset = self.position;
        let payload = postcard::to_allocvec(&self.index).map_err(|e| FormatError::Io(std::io::Error::other(e)))?;
        self.frame(FrameKind::Index, &[&payload])?;
        self.out.write_all(&index_offset.to_le_bytes())?;
        self.out.write_all(TRAILER_MAGIC)?;
        self.out.flush()?;
        Ok(self.out)
    }

    fn frame(&mut self, kind: FrameKind, parts: &[&[u8]]) -> Result<(), FormatError> {
        // Checked before writing anything: a length that wrapped would corrupt every later frame.
        let len = parts.iter().map(|p| p.len() as u64).sum::<u64>();
        if len > u64::from(u32::MAX) {
            return Err(FormatError::FrameTooLarge(len));
        }
        let header = frame_header(kind, parts);
        self.out.write_all(&header)?;
        for part in parts {
            self.out.write_all(part)?;
        }
        self.position += header.len() as u64 + len;
        Ok(())
    }
}

/// A blob's bytes with their content id and, where that pays, their compressed form: made on
/// whichever thread has the time (hashing and compressing large blobs in parallel), stored in
/// order by `TraceWriter::prepared_blob`.
pub struct PreparedBlob {
    pub id: BlobId,
    /// The raw bytes, while they may still be stored raw (see `take_unneeded_bytes`).
    bytes: Vec<u8>,
    raw_len: usize,
    /// The stored form, in parts written one after another.
    compressed: Option<(Codec, Vec<Vec<u8>>)>,
}

impl PreparedBlob {
    /// Hashes `bytes` and compresses them (through `scratch`, which its caller keeps between
    /// blobs), unless `stored` says the trace holds (or will hold) the same contents already:
    /// those are not written again. Where a blob is compressed in chunks, each chunk is hashed
    /// as it is compressed, reading the blob from memory once; `stored` is asked afterwards, so
    /// contents likely stored already are better prepared by `hashed_first`.
    pub fn unless_stored(bytes: Vec<u8>, stored: impl Fn(BlobId) -> bool, scratch: &mut Vec<u8>) -> PreparedBlob {
        let mut hasher = Xxh3::new();
        let mut hashed = 0;
        let compressed = compress(&bytes, scratch, &mut |chunk| {
            hasher.update(chunk);
            hashed += chunk.len();
        });
        let id = if hashed == bytes.len() { BlobId(hasher.digest128()) } else { BlobId::of(&bytes) };
        let compressed = compressed.filter(|_| !stored(id)).map(|(codec, len)| (codec, vec![scratch[..len].to_vec()]));
        PreparedBlob { id, raw_len: bytes.len(), bytes, compressed }
    }

    /// As `unless_stored`, hashing the whole blob before compressing it: two passes over memory,
    /// but nothing compressed where `stored` says the trace holds the contents (lz4 on data that
    /// compresses slowly costs several times the hash).
    pub fn hashed_first(bytes: Vec<u8>, stored: impl Fn(BlobId) -> bool, scratch: &mut Vec<u8>) -> PreparedBlob {
        let id = BlobId::of(&bytes);
        let compressed = match stored(id) {
            true => None,
            false => compress(&bytes, scratch, &mut |_| ()).map(|(codec, len)| (codec, vec![scratch[..len].to_vec()])),
        };
        PreparedBlob { id, raw_len: bytes.len(), bytes, compressed }
    }

    /// A blob of `raw_len` bytes, named `id`, compressed in pieces (`compress_piece`, in order,
    /// each the chunks of a stretch of the bytes) where it lay: no copy of its raw bytes is made.
    pub fn in_pieces(id: BlobId, raw_len: usize, pieces: Vec<Vec<u8>>) -> PreparedBlob {
        let parts = std::iter::once(chunks::stored_start()).chain(pieces).collect();
        PreparedBlob { id, raw_len, bytes: Vec::new(), compressed: Some((Codec::Lz4Chunks, parts)) }
    }

    /// How many bytes it holds in memory (its stored form, and raw bytes it still has).
    pub fn held_len(&self) -> usize {
        self.bytes.len() + self.compressed.iter().flat_map(|(_, parts)| parts).map(Vec::len).sum::<usize>()
    }

    /// Its raw bytes, decompressed where needed (for sinks that keep blobs in memory).
    pub fn to_raw(&self) -> Result<Vec<u8>, String> {
        let Some((codec, parts)) = &self.compressed else { return Ok(self.bytes.clone()) };
        let stored = parts.concat();
        match codec {
            Codec::Raw => Ok(stored),
            Codec::Lz4 => lz4_flex::block::decompress(&stored, self.raw_len).map_err(|e| e.to_string()),
            Codec::Lz4Chunks => {
                let mut out = vec![0; self.raw_len];
                chunks::decompress(&stored, &mut out)?;
                Ok(out)
            }
        }
    }

    /// The raw bytes, once compressed: storing needs only the compressed form, so the caller
    /// may reuse their buffer before the blob is stored.
    pub fn take_unneeded_bytes(&mut self) -> Option<Vec<u8>> {
        self.is_compressed().then(|| std::mem::take(&mut self.bytes))
    }

    /// How many bytes the blob holds, uncompressed.
    pub fn raw_len(&self) -> usize {
        self.raw_len
    }

    /// The raw bytes it still holds (none once `take_unneeded_bytes` took them).
    pub fn bytes(&self) -> &[u8] {
        &self.bytes
    }

    /// Its buffer of raw bytes, for reuse once stored.
    pub fn into_bytes(self) -> Vec<u8> {
        self.bytes
    }

    /// Whether it is stored compressed (if the trace does not hold it already).
    pub fn is_compressed(&self) -> bool {
        self.compressed.is_some()
    }

    fn stored(&self) -> (Codec, Vec<&[u8]>) {
        match &self.compressed {
            Some((codec, parts)) => (*codec, parts.iter().map(Vec::as_slice).collect()),
            None => (Codec::Raw, vec![&self.bytes]),
        }
    }
}

fn shrinks(input: &[u8], len: usize) -> bool {
    len < input.len() - input.len() / 8
}

/// `input` lz4-compressed into the start of `scratch` (grown to the worst case); its length.
fn lz4_into(input: &[u8], scratch: &mut Vec<u8>) -> Option<usize> {
    let needed = lz4_flex::block::get_maximum_output_size(input.len());
    if scratch.len() < needed {
        scratch.resize(needed, 0);
    }
    lz4_flex::block::compress_into(input, scratch).ok()
}

/// Whether lz4 shrinks the first `PROBE_LEN` bytes of `bytes` by an eighth.
fn prefix_shrinks(bytes: &[u8], scratch: &mut Vec<u8>) -> bool {
    let probe = &bytes[..bytes.len().min(PROBE_LEN)];
    lz4_into(probe, scratch).is_some_and(|len| shrinks(probe, len))
}

/// Whether lz4 shrinks `bytes`, judged on a prefix as `TraceWriter` judges its blobs: for a
/// caller compressing them elsewhere (`compress_piece`).
pub fn worth_compressing(bytes: &[u8]) -> bool {
    bytes.len() >= MIN_COMPRESSED_LEN && prefix_shrinks(bytes, &mut Vec::new())
}

/// Compresses `bytes` into the start of `scratch` when that shrinks them by at least an eighth and
/// returns the codec and the stored length; incompressible data is detected on a prefix so it
/// costs little. Blobs longer than a chunk are compressed in chunks, each fed to `hashed` first
/// (all of them, or none where the prefix judged the blob incompressible). `scratch` only grows:
/// zeroing a 64 MB output buffer for every blob cost as much as compressing.
fn compress(bytes: &[u8], scratch: &mut Vec<u8>, hashed: &mut dyn FnMut(&[u8])) -> Option<(Codec, usize)> {
    if bytes.len() < MIN_COMPRESSED_LEN || (bytes.len() > PROBE_LEN && !prefix_shrinks(bytes, scratch)) {
        return None;
    }
    let (codec, len) = match bytes.len() > chunks::CHUNK_LEN {
        true => (Codec::Lz4Chunks, chunks::compress(bytes, scratch, hashed)?),
        false => (Codec::Lz4, lz4_into(bytes, scratch)?),
    };
    shrinks(bytes, len).then_some((codec, len))
}

/// Writes a whole in-memory trace to a file, with every blob of `blobs`.
pub fn write_trace(path: &Path, trace: &Trace, blobs: &BlobStore) -> Result<(), FormatError> {
    write_trace_to(TraceWriter::create(path)?, trace, blobs).map(drop)
}

/// Writes a whole in-memory trace through `writer`, finishes it and hands back the output.
/// Segments are written one after another, as a recording writes them, so the nodes must be in
/// segment order; an edge goes with the segment of the node it leads to (else of the node it
/// leaves, else with the last segment).
pub fn write_trace_to<W: Write>(mut writer: TraceWriter<W>, trace: &Trace, blobs: &BlobStore) -> Result<W, FormatError> {
    let edges = edges_by_segment(trace)?;
    let objects = trace.header.iter().cloned().map(Record::Header)
        .chain(trace.devices.iter().cloned().map(Record::Device))
        .chain(trace.memories.iter().cloned().map(Record::Memory))
        .chain(trace.programs.iter().cloned().map(Record::Program))
        .chain(trace.program_links.iter().cloned().map(Record::ProgramLink))
        .chain(trace.kernels.iter().cloned().map(Record::Kernel))
        .chain(trace.param_types.iter().cloned().map(Record::ParamTypes))
        .chain(trace.kernel_attributes.iter().cloned().map(Record::KernelAttribute))
        .chain(trace.textures.iter().cloned().map(Record::Texture))
        .chain(trace.queues.iter().cloned().map(Record::Queue));
    for record in objects {
        writer.record(&record)?;
    }
    let mut nodes = trace.nodes.iter().peekable();
    for ((index, segment), edges) in trace.segments.iter().enumerate().zip(edges) {
        let id = SegmentId(index as u32);
        writer.record(&Record::SegmentBegin { ordinal: segment.ordinal })?;
        for state in &segment.initial {
            writer.record(&Record::InitialState { segment: id, state: state.clone() })?;
        }
        for write in &segment.host_writes {
            writer.record(&Record::HostWrote { segment: id, write: write.clone() })?;
        }
        while let Some(node) = nodes.next_if(|node| node.segment == id) {
            writer.record(&Record::Node(node.clone()))?;
        }
        for edge in edges {
            writer.record(&Record::Edge(*edge))?;
        }
        writer.record(&Record::SegmentEnd { segment: id, ended_by: segment.ended_by.clone(), expected: segment.expected.clone() })?;
        if let Some(error) = &segment.failed_with {
            writer.record(&Record::SegmentFailed { segment: id, error: error.clone() })?;
        }
        if let Some(text) = segment.printed {
            writer.record(&Record::DevicePrinted { segment: id, text })?;
        }
        for &node in &segment.racy_reads {
            writer.record(&Record::RacyRead { segment: id, node })?;
        }
    }
    if nodes.next().is_some() {
        let position = trace.nodes.len() - nodes.count() - 1;
        return Err(FormatError::Unordered(format!("node {position} is not in segment order (its segment {} is earlier than an earlier node's, or does not exist)", trace.nodes[position].segment)));
    }
    for reason in &trace.partial {
        writer.record(&Record::Partial(reason.clone()))?;
    }
    let mut ids: Vec<BlobId> = blobs.ids().collect();
    ids.sort();
    for id in ids {
        writer.blob_with_id(id, &blobs.get(id)?)?;
    }
    writer.finish()
}

/// Each segment's edges, in trace order.
fn edges_by_segment(trace: &Trace) -> Result<Vec<Vec<&Edge>>, FormatError> {
    let segments = trace.segments.len();
    let mut by_segment = vec![Vec::new(); segments];
    let segment_of = |node: NodeId| trace.nodes.get(node.index()).map(|n| n.segment.index()).filter(|&s| s < segments);
    for (index, edge) in trace.edges.iter().enumerate() {
        let segment = segment_of(edge.to).or_else(|| segment_of(edge.from)).or(segments.checked_sub(1));
        let segment = segment.ok_or_else(|| FormatError::Unordered(format!("edge {index} has no segment to be written with")))?;
        by_segment[segment].push(edge);
    }
    Ok(by_segment)
}
