//! Memory objects the program created: by key, and by address range for pointer relocation.

use super::Key;
use std::collections::BTreeMap;
use crate::fast_hash::HashMap;
use trace_format::{MemId, MemKind};

/// How a memory object relates to others.
#[derive(Clone, Debug, PartialEq)]
pub enum MemShape {
    /// An allocation of its own, of this kind (any kind but `MemKind::SubBuffer`).
    Whole(MemKind),
    /// A window `offset` bytes into memory `parent` (`clCreateSubBuffer`).
    Within { parent: Key, offset: u64 },
    /// The variable `name` of `program` (a `__device__` global): `MemKind::Global` once the
    /// program has its trace id.
    Variable { program: Key, name: String },
}

/// A memory object as the API created it.
#[derive(Clone, Debug, PartialEq)]
pub struct MemDesc {
    pub shape: MemShape,
    pub size: u64,
    /// The address or handle the program sees (`Memory::address`).
    pub address: u64,
    /// The API's creation flags (`Memory::flags`).
    pub flags: u64,
    pub device: Option<Key>,
    /// Whether pointers into `[address, address + size)` name this object (device pointers,
    /// SVM); false for handles such as `cl_mem`.
    pub addressable: bool,
    /// How the host changes its contents without a command.
    pub host_writes: HostWrites,
}

/// How the host changes a memory object's contents without a command.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum HostWrites {
    /// It does not (device memory, handles): only commands change it.
    None,
    /// Directly, unseen (mapped or shared memory, a CPU device's host pointers), or through work
    /// the shim does not see (device memory a library allocated out of its sight): the memory
    /// is read again at its first use after a host synchronization.
    Unseen,
    /// Directly at its address, and page protection sees where: the device writes it without
    /// the CPU's page tables (pinned, registered and managed memory of a GPU). Only the pages
    /// the host wrote are kept (`crate::host_writes`).
    Watchable,
}

/// What the current capture knows of a root memory object's contents.
#[derive(Clone, Debug, Default)]
pub(super) struct CaptureUse {
    /// Used by recorded work in this capture: from here on the replay produces its contents.
    pub used: bool,
    /// A snapshot not yet written as the initial state of a segment.
    pub unwritten_initial: Option<trace_format::BlobId>,
    /// Its pages the host writes are watched (`HostWrites::Watchable`).
    pub watched: bool,
    /// What the host wrote into it (offset, bytes, while pending commands wrote it), not yet
    /// written with a segment.
    pub host_writes: Vec<(u64, trace_format::BlobId, bool)>,
    /// The host synchronization count when it was last read (see `HostWrites::Unseen`).
    pub read_at_sync: u64,
    /// Pending nodes that use it, and those that write it.
    pub pending_uses: u32,
    pub pending_writes: u32,
    /// Written by recorded work in this capture: its final contents are expected at the end.
    pub written: bool,
    /// Data the program receives was last delivered into it by a copy (`Recorder::received_into`).
    pub received_into: bool,
    /// The last pending command that wrote it, with its queue, and the last pending command of
    /// each queue that used it since (see `EdgeKind::Memory`).
    pub last_writer: Option<(u64, Option<Key>)>,
    pub readers: Vec<(u64, Option<Key>)>,
}

pub(super) struct Entry {
    pub desc: MemDesc,
    /// The object whose contents hold this one's (itself unless a sub-buffer).
    pub root: Key,
    pub id: Option<MemId>,
    /// Unique among every object the table ever held: a key reused after a free names a new one.
    pub generation: u64,
    pub capture: CaptureUse,
    /// Other addresses that name this object from its start (a host allocation's device pointer).
    aliases: Vec<u64>,
    children: u32,
    released: bool,
}

#[derive(Default)]
pub(super) struct MemoryTable {
    entries: HashMap<Key, Entry>,
    by_address: BTreeMap<u64, Key>,
    generations: u64,
}

impl Entry {
    /// Whether the host may change it where the shim does not see: it is read again at its first
    /// use after a host synchronization (`HostWrites::Unseen`, and watchable memory not watched).
    pub fn host_writes_unseen(&self) -> bool {
        self.desc.host_writes == HostWrites::Unseen || (self.desc.host_writes == HostWrites::Watchable && !self.capture.watched)
    }

    /// Pinned memory whose host writes are watched: the host reads what the device wrote there
    /// without a command, so what a window wrote is output the program received (managed
    /// memory is left to the end: reading it would move its pages to the host).
    pub fn host_reads_directly(&self) -> bool {
        self.capture.watched && self.desc.shape == MemShape::Whole(MemKind::Host)
    }
}

impl MemoryTable {
    pub fn insert(&mut self, key: Key, desc: MemDesc) {
        self.remove_entry(key);
        let root = match &desc.shape {
            MemShape::Within { parent, .. } => match self.entries.get_mut(parent) {
                Some(parent_entry) => {
                    parent_entry.children += 1;
                    parent_entry.root
                }
                None => key,
            },
            MemShape::Whole(_) | MemShape::Variable { .. } => key,
        };
        if desc.addressable {
            self.by_address.insert(desc.address, key);
        }
        self.generations += 1;
        let generation = self.generations;
        let entry = Entry { desc, root, id: None, generation, capture: CaptureUse::default(), aliases: Vec::new(), children: 0, released: false };
        self.entries.insert(key, entry);
    }

    /// Pointers from `address` on name the addressable object `key` too, from its start.
    pub fn alias(&mut self, key: Key, address: u64) {
        if let Some(entry) = self.entries.get_mut(&key).filter(|entry| entry.desc.addressable && entry.desc.address != address) {
            entry.aliases.push(address);
            self.by_address.insert(address, key);
        }
    }

    /// The program released `key`; it is forgotten once no sub-buffer needs it.
    pub fn release(&mut self, key: Key) {
        if let Some(entry) = self.entries.get_mut(&key) {
            entry.released = true;
            if entry.desc.addressable {
                for address in std::iter::once(entry.desc.address).chain(entry.aliases.drain(..)) {
                    if self.by_address.get(&address) == Some(&key) {
                        self.by_address.remove(&address);
                    }
                }
            }
            if entry.children == 0 {
                self.remove_entry(key);
            }
        }
    }

    fn remove_entry(&mut self, key: Key) {
        let Some(entry) = self.entries.remove(&key) else { return };
        if let MemShape::Within { parent, .. } = entry.desc.shape {
            if let Some(parent_entry) = self.entries.get_mut(&parent) {
                parent_entry.children -= 1;
                if parent_entry.released && parent_entry.children == 0 {
                    self.remove_entry(parent);
                }
            }
        }
    }

    pub fn get(&self, key: Key) -> Option<&Entry> {
        self.entries.get(&key)
    }

    pub fn get_mut(&mut self, key: Key) -> Option<&mut Entry> {
        self.entries.get_mut(&key)
    }

    /// The entry `key` if it is still the object of `generation`.
    pub fn generation_mut(&mut self, key: Key, generation: u64) -> Option<&mut Entry> {
        self.entries.get_mut(&key).filter(|entry| entry.generation == generation)
    }

    /// Every object the table holds, with its key.
    pub fn entries_mut(&mut self) -> impl Iterator<Item = (Key, &mut Entry)> {
        self.entries.iter_mut().map(|(&key, entry)| (key, entry))
    }

    /// The addressable object holding `address`, and the offset into it.
    pub fn locate(&self, address: u64) -> Option<(Key, u64)> {
        let (&start, &key) = self.by_address.range(..=address).next_back()?;
        let size = self.entries.get(&key)?.desc.size;
        let offset = address - start;
        // An address one past the end still belongs to the object (end pointers).
        (offset <= size).then_some((key, offset))
    }
}
