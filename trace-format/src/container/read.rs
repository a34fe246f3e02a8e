//! Reading a trace as a stream. Opening a trace reads it once, keeping only what is small: its
//! objects (header, devices, memories, programs, kernels, queues, why it is partial), where each
//! blob is, and how many nodes and edges it has. `TraceReader::segments` then reads it again, one
//! segment at a time, as often as a consumer asks: memory holds one segment, never the trace.
//!
//! A trace is a header record, then object records, each before the first record that refers to
//! it, and the segments one after another: `SegmentBegin`, its `InitialState`s, `Node`s and `Edge`s,
//! `SegmentEnd`, then any `Expected` states read after it ended (object records and blobs may come
//! in between). Nodes and edges are numbered in the order they are written.

use super::frame::*;
use super::frames::{Frame, Frames, Step};
use super::record::{record_kind, RecordKind};
use super::source::Source;
use super::write::{write_trace_to, TraceWriter};
use super::{BlobStore, FormatError, Record, FORMAT_VERSION};
use crate::model::*;
use std::path::Path;
use std::sync::Arc;

/// A whole trace read back into memory: the model, its blobs, and whether the file was whole.
/// For tests and small tools; the replayer streams (`TraceReader`).
#[derive(Debug)]
pub struct TraceFile {
    pub trace: Trace,
    pub blobs: BlobStore,
    pub completeness: Completeness,
}

#[derive(Clone, Debug, PartialEq, Eq)]
pub enum Completeness {
    Complete,
    /// The writer stopped early (a killed process): everything before `valid_bytes` was read.
    Truncated { valid_bytes: u64, reason: String },
}

/// Reads a whole trace into memory.
pub fn read_trace(path: &Path) -> Result<TraceFile, FormatError> {
    TraceReader::open(path)?.read_all()
}

/// Reads a whole trace held in memory.
pub fn read_trace_bytes(bytes: &[u8]) -> Result<TraceFile, FormatError> {
    TraceReader::from_bytes(bytes)?.read_all()
}

/// Batches of segments `TraceReader::for_each_segment` reads ahead, and their size in nodes.
const BATCHES_AHEAD: usize = 4;
const BATCH_NODES: usize = 4096;

/// A trace opened for streaming (see the module's documentation).
#[derive(Debug)]
pub struct TraceReader {
    source: Arc<Source>,
    objects: Trace,
    blobs: BlobStore,
    completeness: Completeness,
    /// Where the whole frames before any index end.
    end: u64,
    /// The id of each segment's first node, and the index of its first edge.
    first_nodes: Vec<u32>,
    first_edges: Vec<usize>,
    nodes: usize,
    edges: usize,
}

impl TraceReader {
    pub fn open(path: &Path) -> Result<TraceReader, FormatError> {
        TraceReader::survey(Source::open(path)?)
    }

    pub fn from_bytes(bytes: &[u8]) -> Result<TraceReader, FormatError> {
        TraceReader::survey(Source::Bytes(Arc::from(bytes)))
    }

    /// `trace` written with `blobs` and opened: how a trace built in memory is streamed. Its nodes
    /// must be in segment order (see `write_trace_to`).
    pub fn from_trace(trace: &Trace, blobs: &BlobStore) -> Result<TraceReader, FormatError> {
        let bytes = write_trace_to(TraceWriter::new(Vec::new())?, trace, blobs)?;
        TraceReader::survey(Source::Bytes(bytes.into()))
    }

    /// The trace's objects: a `Trace` without nodes, edges and segments, which `segments` streams.
    pub fn objects(&self) -> &Trace {
        &self.objects
    }

    pub fn blobs(&self) -> &BlobStore {
        &self.blobs
    }

    pub fn completeness(&self) -> &Completeness {
        &self.completeness
    }

    pub fn segment_count(&self) -> usize {
        self.first_nodes.len()
    }

    pub fn node_count(&self) -> usize {
        self.nodes
    }

    pub fn edge_count(&self) -> usize {
        self.edges
    }

    /// The segment whose records hold `node`.
    pub fn segment_of(&self, node: NodeId) -> Option<SegmentId> {
        if node.index() >= self.nodes {
            return None;
        }
        let after = self.first_nodes.partition_point(|&first| first <= node.0);
        after.checked_sub(1).map(|index| SegmentId(index as u32))
    }

    /// How many node and edge records segment `index` spans, from where it begins to where the
    /// next one does.
    fn records_of(&self, index: usize) -> (usize, usize) {
        let nodes_at = |index: usize| self.first_nodes.get(index).map_or(self.nodes, |&first| first as usize);
        let edges_at = |index: usize| self.first_edges.get(index).copied().unwrap_or(self.edges);
        (nodes_at(index + 1).saturating_sub(nodes_at(index)), edges_at(index + 1).saturating_sub(edges_at(index)))
    }

    /// Reads the segments one at a time, in order.
    pub fn segments(&self) -> Segments<'_> {
        Segments { reader: self, frames: Frames::new(&self.source, HEADER_LEN as u64, self.end), current: None, begun: 0, next_node: 0, next_edge: 0, done: false }
    }

    /// Hands the segments to `consume`, in order, while another thread reads and decodes the
    /// next ones: reading overlaps the consumer's work. The thread reads ahead by a few batches
    /// of segments, each of about `BATCH_NODES` nodes (or one larger segment).
    pub fn for_each_segment<E: From<FormatError>>(&self, mut consume: impl FnMut(TraceSegment) -> Result<(), E>) -> Result<(), E> {
        std::thread::scope(|scope| {
            let (sender, receiver) = std::sync::mpsc::sync_channel::<Vec<Result<TraceSegment, FormatError>>>(BATCHES_AHEAD);
            scope.spawn(move || {
                let mut batch = Vec::new();
                let mut nodes = 0;
                for segment in self.segments() {
                    nodes += segment.as_ref().map_or(0, |s| s.nodes.len() + 1);
                    batch.push(segment);
                    if nodes >= BATCH_NODES {
                        nodes = 0;
                        // The consumer stopped: so does the reading.
                        if sender.send(std::mem::take(&mut batch)).is_err() {
                            return;
                        }
                    }
                }
                let _ = sender.send(batch);
            });
            for batch in receiver {
                for segment in batch {
                    consume(segment?)?;
                }
            }
            Ok(())
        })
    }

    /// The whole trace in memory.
    pub fn read_all(&self) -> Result<TraceFile, FormatError> {
        let mut trace = self.objects.clone();
        for segment in self.segments() {
            let segment = segment?;
            trace.segments.push(segment.segment);
            trace.nodes.extend(segment.nodes);
            trace.edges.extend(segment.edges);
        }
        Ok(TraceFile { trace, blobs: self.blobs.clone(), completeness: self.completeness.clone() })
    }

    fn survey(source: Source) -> Result<TraceReader, FormatError> {
        let source = Arc::new(source);
        check_header(&source)?;
        let index = index_offset(&source);
        let mut reader = TraceReader {
            source: source.clone(),
            objects: Trace::default(),
            blobs: BlobStore::of_file(source.clone()),
            completeness: Completeness::Complete,
            end: 0,
            first_nodes: Vec::new(),
            first_edges: Vec::new(),
            nodes: 0,
            edges: 0,
        };
        let mut frames = Frames::new(&source, HEADER_LEN as u64, index.unwrap_or(source.len()));
        let (end, completeness) = loop {
            match frames.next_frame()? {
                Step::End if index.is_some() => break (frames.position(), Completeness::Complete),
                Step::End => {
                    let end = frames.position();
                    break (end, truncated(end, "the file ends without an index: the recording process stopped before finishing the trace"));
                }
                Step::Cut(offset) => break (offset, truncated(offset, "the file ends inside a frame: the recording process stopped while writing")),
                Step::Frame { offset, frame: Frame::Index } => break (offset, truncated(offset, "the file ends inside its trailer")),
                Step::Frame { frame: Frame::Blob { id, stored }, .. } => reader.blobs.insert_from_file(id, stored),
                Step::Frame { offset, frame: Frame::Record(payload) } => reader.survey_record(payload, offset)?,
            }
        };
        reader.end = end;
        reader.completeness = completeness;
        Ok(reader)
    }

    /// Keeps an object record, counts the others.
    fn survey_record(&mut self, payload: &[u8], offset: u64) -> Result<(), FormatError> {
        let malformed = |problem: String| FormatError::Malformed { offset, problem };
        match record_kind(payload) {
            Some(RecordKind::SegmentBegin) => {
                let first = u32::try_from(self.nodes).map_err(|_| malformed("begins a segment after more nodes than ids can number".into()))?;
                self.first_nodes.push(first);
                self.first_edges.push(self.edges);
            }
            Some(RecordKind::Node) => self.nodes += 1,
            Some(RecordKind::Edge) => self.edges += 1,
            Some(RecordKind::OfSegment) => {}
            Some(RecordKind::Object) | None => {
                let trace = &mut self.objects;
                match decode(payload, offset)? {
                    Record::Header(header) if trace.header.is_none() => trace.header = Some(header),
                    Record::Header(_) => return Err(malformed("is a second header record".into())),
                    Record::Device(device) => trace.devices.push(device),
                    Record::Memory(memory) => trace.memories.push(memory),
                    Record::Program(program) => trace.programs.push(program),
                    Record::Kernel(kernel) => trace.kernels.push(kernel),
                    Record::Queue(queue) => trace.queues.push(queue),
                    Record::Partial(reason) => trace.partial.push(reason),
                    Record::ParamTypes(types) => trace.param_types.push(types),
                    Record::Texture(texture) => trace.textures.push(texture),
                    Record::ProgramLink(link) => trace.program_links.push(link),
                    Record::KernelAttribute(attribute) => trace.kernel_attributes.push(attribute),
                    _ => return Err(malformed("holds a record of a segment where an object was expected".into())),
                }
            }
        }
        Ok(())
    }
}

/// The segments of a trace, read one at a time (`TraceReader::segments`).
pub struct Segments<'r> {
    reader: &'r TraceReader,
    frames: Frames<'r>,
    /// The segment being read: it ends where the next one begins.
    current: Option<TraceSegment>,
    begun: u32,
    next_node: u32,
    next_edge: usize,
    done: bool,
}

impl Iterator for Segments<'_> {
    type Item = Result<TraceSegment, FormatError>;

    fn next(&mut self) -> Option<Self::Item> {
        if self.done {
            return None;
        }
        let next = self.read_segment();
        self.done = !matches!(next, Ok(Some(_)));
        next.transpose()
    }
}

impl Segments<'_> {
    fn read_segment(&mut self) -> Result<Option<TraceSegment>, FormatError> {
        loop {
            let (offset, record) = match self.frames.next_frame()? {
                Step::Frame { offset, frame: Frame::Record(payload) } => match record_kind(payload) {
                    // Objects were kept when the trace was opened.
                    Some(RecordKind::Object) => continue,
                    _ => (offset, decode(payload, offset)?),
                },
                Step::Frame { .. } => continue,
                Step::End | Step::Cut(_) => return Ok(self.current.take()),
            };
            match self.apply(record) {
                Ok(None) => {}
                Ok(Some(finished)) => return Ok(Some(finished)),
                Err(problem) => return Err(FormatError::Malformed { offset, problem }),
            }
        }
    }

    /// Adds a record to the segment being read; a new segment hands back the finished one.
    fn apply(&mut self, record: Record) -> Result<Option<TraceSegment>, String> {
        match record {
            Record::SegmentBegin { ordinal } => {
                let id = SegmentId(self.begun);
                self.begun += 1;
                let segment = Segment { ordinal, ended_by: String::new(), initial: Vec::new(), expected: Vec::new(), failed_with: None, printed: None, racy_reads: Vec::new(), host_writes: Vec::new() };
                // As many nodes and edges as the trace was opened with, when they are written together.
                let (nodes, edges) = self.reader.records_of(id.index());
                let nodes = Vec::with_capacity(nodes.min(1 << 16));
                let edges = Vec::with_capacity(edges.min(1 << 16));
                let begun = TraceSegment { id, segment, first_node: NodeId(self.next_node), nodes, first_edge: self.next_edge, edges };
                return Ok(self.current.replace(begun));
            }
            Record::Node(node) => {
                let id = NodeId(self.next_node);
                let current = self.current.as_mut().ok_or_else(|| format!("holds node {id}, written before any segment began"))?;
                if node.segment != current.id {
                    return Err(format!("holds node {id} of segment {} inside segment {}: a segment's nodes are written together", node.segment, current.id));
                }
                current.nodes.push(node);
                self.next_node += 1;
            }
            Record::Edge(edge) => {
                let index = self.next_edge;
                self.current.as_mut().ok_or_else(|| format!("holds edge {index}, written before any segment began"))?.edges.push(edge);
                self.next_edge += 1;
            }
            Record::InitialState { segment, state } => self.segment_mut(segment)?.initial.push(state),
            Record::SegmentEnd { segment, ended_by, expected } => {
                let segment = self.segment_mut(segment)?;
                segment.ended_by = ended_by;
                segment.expected = expected;
            }
            Record::Expected { segment, state } => self.segment_mut(segment)?.expected.push(state),
            Record::SegmentFailed { segment, error } => self.segment_mut(segment)?.failed_with = Some(error),
            Record::DevicePrinted { segment, text } => self.segment_mut(segment)?.printed = Some(text),
            Record::RacyRead { segment, node } => self.segment_mut(segment)?.racy_reads.push(node),
            Record::HostWrote { segment, write } => self.segment_mut(segment)?.host_writes.push(write),
            Record::Header(_) | Record::Device(_) | Record::Memory(_) | Record::Program(_) | Record::Kernel(_) | Record::Queue(_) | Record::Partial(_) | Record::ParamTypes(_) | Record::Texture(_) | Record::ProgramLink(_) | Record::KernelAttribute(_) => {}
        }
        Ok(None)
    }

    fn segment_mut(&mut self, id: SegmentId) -> Result<&mut Segment, String> {
        match &mut self.current {
            Some(current) if current.id == id => Ok(&mut current.segment),
            _ if id.0 >= self.begun => Err(format!("refers to segment {id}, which has not begun")),
            _ => Err(format!("refers to segment {id} after the next segment began: a segment's records are written together")),
        }
    }
}

fn decode(payload: &[u8], offset: u64) -> Result<Record, FormatError> {
    postcard::from_bytes(payload)
        .map_err(|e| FormatError::Malformed { offset, problem: format!("holds a record that does not decode: {e}") })
}

fn check_header(source: &Source) -> Result<(), FormatError> {
    let mut start = [0u8; HEADER_LEN];
    let len = source.len().min(HEADER_LEN as u64) as usize;
    source.read_at(0, &mut start[..len])?;
    let magic_len = len.min(MAGIC.len());
    if start[..magic_len] != MAGIC[..magic_len] {
        return Err(FormatError::NotATrace);
    }
    if len < HEADER_LEN {
        return Err(FormatError::NoHeader(len as u64));
    }
    let version = u32::from_le_bytes(start[8..12].try_into().expect("4 bytes"));
    if version > FORMAT_VERSION {
        return Err(FormatError::NewerVersion { found: version, supported: FORMAT_VERSION });
    }
    if version == 0 {
        return Err(FormatError::Malformed { offset: 8, problem: "is a header with format version 0".into() });
    }
    Ok(())
}

/// Where the index starts, if the file ends with a trailer pointing at a whole, checksummed one:
/// the frames before it are then whole. The index's offsets are not needed: frames are read in
/// order.
fn index_offset(source: &Source) -> Option<u64> {
    let trailer_at = source.len().checked_sub(TRAILER_LEN as u64)?;
    let mut trailer = [0u8; TRAILER_LEN];
    source.read_at(trailer_at, &mut trailer).ok()?;
    if &trailer[8..] != TRAILER_MAGIC {
        return None;
    }
    let offset = u64::from_le_bytes(trailer[..8].try_into().ok()?);
    if offset < HEADER_LEN as u64 || offset >= trailer_at {
        return None;
    }
    let mut frames = Frames::new(source, offset, trailer_at);
    let is_index = matches!(frames.next_frame(), Ok(Step::Frame { frame: Frame::Index, .. }));
    (is_index && frames.position() == trailer_at).then_some(offset)
}

fn truncated(valid_bytes: u64, reason: &str) -> Completeness {
    Completeness::Truncated { valid_bytes, reason: reason.to_string() }
}
