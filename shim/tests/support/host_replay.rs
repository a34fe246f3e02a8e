//! Replays the data movement of a trace on the host (a reference model, not the replayer):
//! segment by segment, memory keeps what the previous segments left, except where a segment
//! holds an initial state (memory first used, or changed by the host); applies its copies and
//! fills in node order (valid for a single in-order queue) and checks every read against the
//! data the program received and the final contents against the expected state.

use std::collections::HashMap;
use trace_format::{BlobStore, Command, Copy, MemId, MemKind, Place, Trace};

/// Checks the trace; kernels are not modelled, so it must hold none.
pub fn check_data_movement(trace: &Trace, blobs: &BlobStore) {
    let mut memory: HashMap<MemId, Vec<u8>> = HashMap::new();
    for (segment_id, segment) in trace.segments.iter().enumerate() {
        for state in &segment.initial {
            memory.insert(state.mem, blob(blobs, state.blob));
        }
        let nodes = trace.nodes.iter().enumerate().filter(|(_, node)| node.segment.index() == segment_id);
        for (id, node) in nodes {
            match &node.command {
                Command::Copy(copy) => apply_copy(trace, blobs, &mut memory, copy, id),
                Command::Fill(fill) => {
                    let (root, base) = root_of(trace, fill.mem, fill.offset);
                    let contents = memory.get_mut(&root).expect("a fill of memory with an initial state");
                    for i in 0..fill.bytes as usize {
                        contents[base as usize + i] = fill.pattern[i % fill.pattern.len()];
                    }
                }
                Command::Barrier => {}
                other => panic!("node {id}: the host model has no {}", other.kind_name()),
            }
        }
        for state in &segment.expected {
            assert_eq!(memory[&state.mem], blob(blobs, state.blob), "segment {segment_id}: final contents of memory {}", state.mem);
        }
    }
}

fn blob(blobs: &BlobStore, id: trace_format::BlobId) -> Vec<u8> {
    blobs.get(id).expect("a blob the trace names").into_owned()
}

/// The memory object holding `mem`'s contents, and `offset` in it.
fn root_of(trace: &Trace, mem: MemId, offset: u64) -> (MemId, u64) {
    match trace.memories[mem.index()].kind {
        MemKind::SubBuffer { parent, offset: start } => root_of(trace, parent, start + offset),
        _ => (mem, offset),
    }
}

fn apply_copy(trace: &Trace, blobs: &BlobStore, memory: &mut HashMap<MemId, Vec<u8>>, copy: &Copy, node: usize) {
    let mut moved = Vec::new();
    for (start, length) in copy.extent.rows(true) {
        let bytes = match &copy.src {
            Place::Memory { mem, offset } => {
                let (root, base) = root_of(trace, *mem, *offset);
                let from = (base + start) as usize;
                memory[&root][from..from + length as usize].to_vec()
            }
            Place::Host { data: Some(data) } => {
                blob(blobs, *data)[start as usize..(start + length) as usize].to_vec()
            }
            Place::Host { data: None } => panic!("node {node}: a copy from host memory without its data"),
        };
        moved.push(bytes);
    }
    for ((start, length), bytes) in copy.extent.rows(false).into_iter().zip(moved) {
        match &copy.dst {
            Place::Memory { mem, offset } => {
                let (root, base) = root_of(trace, *mem, *offset);
                let to = (base + start) as usize;
                memory.get_mut(&root).expect("a copy into memory with an initial state")[to..to + length as usize]
                    .copy_from_slice(&bytes);
            }
            Place::Host { data: Some(data) } => {
                let received = blob(blobs, *data);
                assert_eq!(&received[start as usize..(start + length) as usize], &bytes[..], "node {node}: data the program received");
            }
            Place::Host { data: None } => panic!("node {node}: a read without the data the program received"),
        }
    }
}
