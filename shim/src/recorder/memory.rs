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
}

pub(super) struct Entry {
    pub desc: MemDesc,
    /// The object whose contents hold this one's (itself unless a sub-buffer).
    pub root: Key,
    pub id: Option<MemId>,
    /// Other addresses that name this object from its start (a host allocation's device pointer).
    aliases: Vec<u64>,
    children: u32,
    released: bool,
}

#[derive(Default)]
pub(super) struct MemoryTable {
    entries: HashMap<Key, Entry>,
    by_address: BTreeMap<u64, Key>,
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
        self.entries.insert(key, Entry { desc, root, id: None, aliases: Vec::new(), children: 0, released: false });
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

    /// The addressable object holding `address`, and the offset into it.
    pub fn locate(&self, address: u64) -> Option<(Key, u64)> {
        let (&start, &key) = self.by_address.range(..=address).next_back()?;
        let size = self.entries.get(&key)?.desc.size;
        let offset = address - start;
        // An address one past the end still belongs to the object (end pointers).
        (offset <= size).then_some((key, offset))
    }
}
