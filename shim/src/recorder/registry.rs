//! The objects a recording names: registered as the program creates them, and written as
//! records (numbered in write order) only when a recorded command first needs one.

use super::memory::{MemDesc, MemShape};
use super::objects::{KernelEntry, ProgramEntry, QueueDesc};
use super::{Key, MemoryAccess, Recorder};
use crate::log;
use trace_format::{
    BlobId, Device, DeviceId, ImageKind, KernelId, MemId, MemKind, Memory, Param, PartialReason, Program, ProgramId,
    ProgramImage, QueueId, Record,
};

impl Recorder {
    /// A device the program uses; its record is written when a recorded object needs it.
    pub fn device_seen(&mut self, key: Key, device: Device) {
        self.objects.devices.entry(key).or_insert((device, None));
    }

    pub fn queue_created(&mut self, key: Key, desc: QueueDesc) {
        self.objects.queues.insert(key, (desc, None));
    }

    /// The program released a queue. A window using it ends first (with `call` as its end),
    /// while the queue can still be waited for.
    pub fn queue_released(&mut self, key: Key, call: &str, access: &dyn MemoryAccess) {
        if self.window.as_ref().is_some_and(|window| window.uses_queue(key)) {
            self.host_sync(call, access);
        }
    }

    pub fn memory_created(&mut self, key: Key, desc: MemDesc) {
        self.memory.insert(key, desc);
    }

    /// The program freed a memory object. A window using it ends first (with `call` as its
    /// end), while its final contents can still be read.
    pub fn memory_released(&mut self, key: Key, call: &str, access: &dyn MemoryAccess) {
        let root = self.memory.get(key).map(|entry| entry.root);
        if root.is_some_and(|root| self.window.as_ref().is_some_and(|window| window.used.contains(&root))) {
            self.host_sync(call, access);
        }
        self.memory.release(key);
    }

    /// Stream-ordered allocation, from a command's `build`: memory `key` (just created) comes
    /// into being at this point of its queue, so the window keeps no initial contents of it.
    pub fn allocated_in_order(&mut self, key: Key) -> Option<MemId> {
        let root = self.memory.get(key)?.root;
        if let Some(window) = self.window.as_mut() {
            window.used.insert(root);
        }
        self.mem_id(key)
    }

    /// Stream-ordered free, after its command was submitted: memory `key` is gone once its
    /// queue gets there, so the window expects no final contents of it and the window goes on;
    /// its address may be allocated again.
    pub fn freed_in_order(&mut self, key: Key) {
        let Some(root) = self.memory.get(key).map(|entry| entry.root) else { return };
        if let Some(window) = self.window.as_mut() {
            window.written.retain(|_, (written, _)| *written != root);
            window.used.remove(&root);
        }
        self.memory.release(key);
    }

    /// Pointers from `address` on name memory `key` too (see `MemoryTable::alias`).
    pub fn memory_alias(&mut self, key: Key, address: u64) {
        self.memory.alias(key, address);
    }

    /// The memory object holding `address` (an addressable one), and the offset into it.
    pub fn locate(&self, address: u64) -> Option<(Key, u64)> {
        self.memory.locate(address)
    }

    /// Whether `key` is a memory object the recorder knows.
    pub fn is_memory(&self, key: Key) -> bool {
        self.memory.get(key).is_some()
    }

    /// A program and the images it was created from, best first (see `Program::images`).
    pub fn program_created(&mut self, key: Key, images: Vec<(ImageKind, Vec<u8>)>) {
        self.objects.programs.insert(key, ProgramEntry { images, build_options: String::new(), id: None });
    }

    /// The program was (re)built with `options`; kernels created later use this build.
    pub fn program_built(&mut self, key: Key, options: &str) {
        if let Some(program) = self.objects.programs.get_mut(&key) {
            program.build_options = options.to_string();
            program.id = None;
        }
    }

    /// The images a program was created from, as given to `program_created`.
    pub fn program_images(&self, key: Key) -> Option<&[(ImageKind, Vec<u8>)]> {
        self.objects.programs.get(&key).map(|program| program.images.as_slice())
    }

    pub fn kernel_created(&mut self, key: Key, program: Key, name: &str) {
        self.objects.kernels.insert(key, KernelEntry { program, name: name.to_string(), ids: Vec::new() });
    }

    pub fn device_id(&mut self, key: Key) -> Option<DeviceId> {
        let (device, id) = self.objects.devices.get_mut(&key)?;
        if id.is_none() {
            self.sink.record(Record::Device(device.clone()));
            *id = Some(DeviceId(self.counts.devices));
            self.counts.devices += 1;
        }
        *id
    }

    pub fn mem_id(&mut self, key: Key) -> Option<MemId> {
        let entry = self.memory.get(key)?;
        if let Some(id) = entry.id {
            return Some(id);
        }
        let desc = entry.desc.clone();
        let kind = match desc.shape {
            MemShape::Whole(kind) => kind,
            MemShape::Within { parent, offset } => MemKind::SubBuffer { parent: self.mem_id(parent)?, offset },
            MemShape::Variable { program, name } => MemKind::Global { program: self.program_id(program)?, name },
        };
        let device = desc.device.and_then(|device| self.device_id(device));
        self.sink.record(Record::Memory(Memory { kind, size: desc.size, address: desc.address, flags: desc.flags, device }));
        let id = MemId(self.counts.memories);
        self.counts.memories += 1;
        self.memory.get_mut(key)?.id = Some(id);
        Some(id)
    }

    pub fn queue_id(&mut self, key: Key) -> Option<QueueId> {
        let (desc, id) = self.objects.queues.get(&key)?;
        if let Some(id) = id {
            return Some(*id);
        }
        let desc = desc.clone();
        let device = desc.device.and_then(|device| self.device_id(device));
        self.sink.record(Record::Queue(trace_format::Queue {
            in_order: desc.in_order,
            device,
            flags: desc.flags,
            priority: desc.priority,
            label: desc.label,
        }));
        let id = QueueId(self.counts.queues);
        self.counts.queues += 1;
        self.objects.queues.get_mut(&key)?.1 = Some(id);
        Some(id)
    }

    pub fn program_id(&mut self, key: Key) -> Option<ProgramId> {
        let program = self.objects.programs.get(&key)?;
        if let Some(id) = program.id {
            return Some(id);
        }
        let images = program.images.clone();
        let build_options = program.build_options.clone();
        let images = images.into_iter().map(|(kind, bytes)| ProgramImage { kind, blob: self.blob(bytes) }).collect();
        self.sink.record(Record::Program(Program { images, build_options }));
        let id = ProgramId(self.counts.programs);
        self.counts.programs += 1;
        self.objects.programs.get_mut(&key)?.id = Some(id);
        Some(id)
    }

    /// The trace kernel for `key` launched with these parameters (a kernel launched with
    /// different parameter kinds gets one trace kernel per list).
    pub fn kernel_id(&mut self, key: Key, params: &[Param]) -> Option<KernelId> {
        let kernel = self.objects.kernels.get(&key)?;
        if let Some((_, id)) = kernel.ids.iter().find(|(known, _)| known == params) {
            return Some(*id);
        }
        let (program, name) = (kernel.program, kernel.name.clone());
        let program = self.program_id(program)?;
        self.sink.record(Record::Kernel(trace_format::Kernel { program, name, params: params.to_vec() }));
        let id = KernelId(self.counts.kernels);
        self.counts.kernels += 1;
        self.objects.kernels.get_mut(&key)?.ids.push((params.to_vec(), id));
        Some(id)
    }

    /// Stores `bytes` as a blob (once per content) and returns its id.
    pub fn blob(&mut self, bytes: Vec<u8>) -> BlobId {
        let id = BlobId::of(&bytes);
        if self.sent_blobs.insert(id) {
            self.sink.blob(id, bytes);
        }
        id
    }

    /// Marks the trace incomplete: `call` could not be recorded faithfully, for `reason`.
    /// Each (call, reason) is written once.
    pub fn partial(&mut self, call: &str, reason: &str) {
        if self.partial_reported.insert((call.to_string(), reason.to_string())) {
            log::warning!("{call}: {reason}; the trace is marked partial");
            self.sink.record(Record::Partial(PartialReason { call: call.to_string(), reason: reason.to_string() }));
        }
    }
}
