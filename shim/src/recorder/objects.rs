//! Devices, programs, kernels and queues the program created, kept until a recorded command
//! first needs one; only then is its record written (a trace holds what its work uses).

use super::Key;
use crate::fast_hash::HashMap;
use trace_format::{Device, DeviceId, ImageKind, KernelId, Param, ProgramId, QueueId, TextureId, TextureKind};

/// How a queue takes part in implicit synchronization between queues.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum QueueSync {
    /// No implicit synchronization: OpenCL queues, CUDA non-blocking streams.
    Independent,
    /// Synchronizes with the legacy default queue of its group (a blocking CUDA stream, the
    /// per-thread default stream).
    Blocking,
    /// The legacy default queue of its group: each command waits for the work of every
    /// blocking queue of the group, and their later commands wait for it.
    LegacyDefault,
}

/// A queue as the API created it.
#[derive(Clone, Debug, PartialEq)]
pub struct QueueDesc {
    pub in_order: bool,
    pub sync: QueueSync,
    /// Queues synchronize implicitly only within a group (the CUDA context).
    pub group: Key,
    pub device: Option<Key>,
    /// `Queue::flags`: the API's flags as given at creation.
    pub flags: u64,
    pub priority: i32,
    /// `Queue::label`: the API's name for it, for people.
    pub label: String,
}

#[derive(Default)]
pub(super) struct ProgramEntry {
    pub images: Vec<(ImageKind, Vec<u8>)>,
    pub build_options: String,
    /// How it was compiled, for a link that takes it in.
    pub compiled: Compiled,
    /// What it was linked from (empty for a program built whole).
    pub units: Vec<Compiled>,
    pub id: Option<ProgramId>,
}

/// One compilation: a program's images, compile options and headers by include name.
#[derive(Clone, Default)]
pub(super) struct Compiled {
    pub images: Vec<(ImageKind, Vec<u8>)>,
    pub options: String,
    pub headers: Vec<(String, Vec<u8>)>,
}

pub(super) struct KernelEntry {
    pub program: Key,
    pub name: String,
    /// Each parameter's source-level type, where the API says it (else empty).
    pub param_types: Vec<String>,
    /// One trace kernel per parameter list the kernel was launched with.
    pub ids: Vec<(Vec<Param>, KernelId)>,
    /// The attributes the program set on it (by the API's number), each with its last value.
    pub attributes: Vec<(u32, i64)>,
}

/// A texture, surface or sampler object as the API created it.
#[derive(Clone, Debug, PartialEq)]
pub struct TextureDesc {
    pub kind: TextureKind,
    /// The memory it reads or writes (by key), and the offset into it.
    pub resource: Option<(Key, u64)>,
    /// `Texture::description`: the API's own description, without memory addresses.
    pub description: Vec<u8>,
}

/// The queues of one group that synchronize implicitly, kept as queues come and go: a command
/// finds them without looking through every queue the program ever created.
#[derive(Default)]
pub(super) struct SyncGroup {
    pub legacy_default: Option<Key>,
    /// Live blocking queues, in creation order.
    pub blocking: Vec<Key>,
}

#[derive(Default)]
pub(super) struct Objects {
    pub devices: HashMap<Key, (Device, Option<DeviceId>)>,
    pub programs: HashMap<Key, ProgramEntry>,
    pub kernels: HashMap<Key, KernelEntry>,
    pub queues: HashMap<Key, (QueueDesc, Option<QueueId>)>,
    pub textures: HashMap<Key, (TextureDesc, Option<TextureId>)>,
    pub groups: HashMap<Key, SyncGroup>,
}

impl Objects {
    /// Whether a queue runs its commands in order (a queue the recorder never saw does).
    pub fn in_order(&self) -> impl Fn(Key) -> bool + '_ {
        |queue| self.queues.get(&queue).is_none_or(|(desc, _)| desc.in_order)
    }

    /// The legacy default queue of `group`, if the API registered one.
    pub fn legacy_default(&self, group: Key) -> Option<Key> {
        self.groups.get(&group)?.legacy_default
    }

    /// The live blocking queues of `group`.
    pub fn blocking_queues(&self, group: Key) -> &[Key] {
        self.groups.get(&group).map_or(&[], |members| &members.blocking)
    }

    /// Queue `key` is `desc` from now on (a handle the API reuses names the new queue).
    pub fn add_queue(&mut self, key: Key, desc: QueueDesc) {
        self.leave_group(key);
        let members = self.groups.entry(desc.group).or_default();
        match desc.sync {
            QueueSync::Independent => {}
            QueueSync::Blocking => members.blocking.push(key),
            QueueSync::LegacyDefault => members.legacy_default = Some(key),
        }
        self.queues.insert(key, (desc, None));
    }

    /// Queue `key` is gone: no later command synchronizes with it.
    pub fn leave_group(&mut self, key: Key) {
        let Some((desc, _)) = self.queues.get(&key) else { return };
        let Some(members) = self.groups.get_mut(&desc.group) else { return };
        members.blocking.retain(|&queue| queue != key);
        if members.legacy_default == Some(key) {
            members.legacy_default = None;
        }
    }
}
