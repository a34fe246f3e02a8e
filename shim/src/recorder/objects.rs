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

#[derive(Default)]
pub(super) struct Objects {
    pub devices: HashMap<Key, (Device, Option<DeviceId>)>,
    pub programs: HashMap<Key, ProgramEntry>,
    pub kernels: HashMap<Key, KernelEntry>,
    pub queues: HashMap<Key, (QueueDesc, Option<QueueId>)>,
    pub textures: HashMap<Key, (TextureDesc, Option<TextureId>)>,
}

impl Objects {
    /// The legacy default queue of `group`, if the API registered one.
    pub fn legacy_default(&self, group: Key) -> Option<Key> {
        self.queues
            .iter()
            .find(|(_, (desc, _))| desc.group == group && desc.sync == QueueSync::LegacyDefault)
            .map(|(&key, _)| key)
    }
}
