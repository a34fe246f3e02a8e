//! The objects a recording names: registered as the program creates them, and written as
//! records (numbered in write order) only when a recorded command first needs one.

use super::memory::{MemDesc, MemShape};
use super::objects::{Compiled, KernelEntry, ProgramEntry, QueueDesc, TextureDesc};
use super::{Key, MemoryAccess, Recorder, SyncScope};
use crate::log;
use trace_format::{
    BlobId, CompiledUnit, KernelAttribute, Device, MemState, DeviceId, ImageKind, KernelId, MemId, MemKind, Memory, Param, ParamTypes, PartialReason, Program,
    ProgramHeader, ProgramId, ProgramImage, ProgramLink, QueueId, Record, Texture, TextureId, TextureResource,
};

impl Recorder {
    /// A device the program uses; its record is written when a recorded object needs it.
    pub fn device_seen(&mut self, key: Key, device: Device) {
        self.objects.devices.entry(key).or_insert((device, None));
    }

    /// A fact about device `key` (see `Device::properties`); false where its record was written
    /// already and no longer changes.
    pub fn device_property(&mut self, key: Key, name: &str, value: &str) -> bool {
        match self.objects.devices.get_mut(&key) {
            Some((device, None)) => {
                device.properties.insert(name.to_string(), value.to_string());
                true
            }
            _ => false,
        }
    }

    pub fn queue_created(&mut self, key: Key, desc: QueueDesc) {
        self.objects_changed += 1;
        self.objects.add_queue(key, desc);
    }

    /// The program released a queue, after the API module waited for its work (see
    /// `queue_busy`): that work closes as a window, ended by `call`.
    pub fn queue_released(&mut self, key: Key, call: &str, access: &dyn MemoryAccess) {
        self.objects_changed += 1;
        if self.pending.queue_busy(key) {
            self.host_sync(call, SyncScope::Queues(&[key]), access);
        }
        self.pending.forget_queue(key);
        self.objects.leave_group(key);
    }

    pub fn memory_created(&mut self, key: Key, desc: MemDesc) {
        log::debug!("memory {key:#x}: {} bytes created", desc.size);
        self.objects_changed += 1;
        self.memory.insert(key, desc);
    }

    /// The program freed a memory object. Its initial state stays with the pending work that
    /// still uses it, if any.
    pub fn memory_released(&mut self, key: Key) {
        log::debug!("memory {key:#x} released");
        self.objects_changed += 1;
        if let Some(entry) = self.memory.get_mut(key).filter(|entry| entry.root == key) {
            if let (Some(blob), Some(mem)) = (entry.capture.unwritten_initial.take(), entry.id) {
                self.orphaned_initials.insert((key, entry.generation), MemState { mem, blob });
            }
            if std::mem::take(&mut entry.capture.watched) {
                crate::host_writes::unwatch(entry.desc.address, entry.desc.size);
            }
        }
        self.memory.release(key);
    }

    /// Stream-ordered allocation, from a command's `build`: memory `key` (just created) comes
    /// into being at this point of its queue, so the capture keeps no initial contents of it.
    pub fn allocated_in_order(&mut self, key: Key) -> Option<MemId> {
        let root = self.memory.get(key)?.root;
        if let Some(entry) = self.memory.get_mut(root) {
            entry.capture.used = true;
        }
        self.mem_id(key)
    }

    /// Stream-ordered free, after its command was submitted: memory `key` is gone once its
    /// queue gets there, so no final contents of it are expected; its address may be
    /// allocated again.
    pub fn freed_in_order(&mut self, key: Key) {
        if let Some(entry) = self.memory.get_mut(key) {
            entry.capture.written = false;
        }
        self.memory_released(key);
    }

    /// Pointers from `address` on name memory `key` too (see `MemoryTable::alias`).
    pub fn memory_alias(&mut self, key: Key, address: u64) {
        self.objects_changed += 1;
        self.memory.alias(key, address);
    }

    /// Counts the changes to the memory, programs, kernels, textures and queues the recorder knows: a
    /// description of a command worked out while it stood still (addresses located, handles
    /// resolved) holds for as long as it does.
    pub fn objects_changed(&self) -> u64 {
        self.objects_changed
    }

    /// The size of memory object `key`, if it is tracked.
    pub fn memory_size(&self, key: Key) -> Option<u64> {
        self.memory.get(key).map(|entry| entry.desc.size)
    }

    /// The memory object holding `address` (an addressable one), and the offset into it.
    pub fn locate(&self, address: u64) -> Option<(Key, u64)> {
        self.memory.locate(address)
    }

    /// Whether `bytes` from `offset` cover all of memory object `key` (a command writing them
    /// `overwrites` it, see `Access`).
    pub fn covers_whole(&self, key: Key, offset: u64, bytes: u64) -> bool {
        offset == 0 && self.memory.get(key).is_some_and(|entry| entry.desc.size == bytes)
    }

    /// Whether `key` is a memory object the recorder knows.
    pub fn is_memory(&self, key: Key) -> bool {
        self.memory.get(key).is_some()
    }

    /// A program and the images it was created from, best first (see `Program::images`).
    pub fn program_created(&mut self, key: Key, images: Vec<(ImageKind, Vec<u8>)>) {
        self.objects_changed += 1;
        self.objects.programs.insert(key, ProgramEntry { images, ..ProgramEntry::default() });
    }

    /// Program `key` and its kernels went (CUDA's unloading): handles the API hands out again
    /// for a program or kernels the recorder is not told of are no longer taken for them.
    pub fn program_released(&mut self, key: Key) {
        self.objects_changed += 1;
        self.objects.programs.remove(&key);
        self.objects.kernels.retain(|_, kernel| kernel.program != key);
    }

    /// The images a program was created from, as given to `program_created`.
    pub fn program_images(&self, key: Key) -> Option<&[(ImageKind, Vec<u8>)]> {
        self.objects.programs.get(&key).map(|program| program.images.as_slice())
    }

    /// The program was compiled (not built) with `options` and `headers` (include name, program
    /// key), for a link to take in.
    pub fn program_compiled(&mut self, key: Key, options: &str, headers: &[(String, Key)]) {
        let headers: Vec<(String, Vec<u8>)> = headers
            .iter()
            .filter_map(|(name, header)| {
                let program = self.objects.programs.get(header)?;
                let source = program.images.iter().find(|(kind, _)| *kind == ImageKind::OpenClSource)?;
                Some((name.clone(), source.1.clone()))
            })
            .collect();
        if let Some(program) = self.objects.programs.get_mut(&key) {
            program.compiled = Compiled { images: program.images.clone(), options: options.to_string(), headers };
        }
    }

    /// Program `key` was linked from `inputs` with `options` by `call`: each input's compilation,
    /// or the compilations a linked input (a library) was made from.
    pub fn program_linked(&mut self, call: &str, key: Key, inputs: &[Key], options: &str) {
        let mut units = Vec::new();
        for input in inputs {
            match self.objects.programs.get(input) {
                Some(program) if !program.units.is_empty() => units.extend(program.units.iter().cloned()),
                // Not compiled here: a compiled object created from its binary.
                Some(program) if program.compiled.images.is_empty() => units.push(Compiled { images: program.images.clone(), ..Compiled::default() }),
                Some(program) => units.push(program.compiled.clone()),
                None => self.partial(call, "it takes in a program the shim did not see created"),
            }
        }
        self.objects.programs.insert(key, ProgramEntry { build_options: options.to_string(), units, ..ProgramEntry::default() });
    }

    /// The program was (re)built with `options`; kernels created later use this build.
    pub fn program_built(&mut self, key: Key, options: &str) {
        if let Some(program) = self.objects.programs.get_mut(&key) {
            program.build_options = options.to_string();
            program.id = None;
        }
    }

    /// A kernel `key` of `program`; `param_types` as its API spells them, where it says them.
    pub fn kernel_created(&mut self, key: Key, program: Key, name: &str, param_types: Vec<String>) {
        self.objects_changed += 1;
        self.objects.kernels.insert(key, KernelEntry { program, name: name.to_string(), param_types, ids: Vec::new(), attributes: Vec::new() });
    }

    /// The program set `attribute` of kernel `key` to `value`: written for each trace kernel it
    /// has, and for those it gets later. A kernel the recorder does not know is not recorded.
    pub fn kernel_attribute_set(&mut self, key: Key, attribute: u32, value: i64) {
        let Some(kernel) = self.objects.kernels.get_mut(&key) else { return };
        match kernel.attributes.iter_mut().find(|(known, _)| *known == attribute) {
            Some(held) if held.1 == value => return,
            Some(held) => held.1 = value,
            None => kernel.attributes.push((attribute, value)),
        }
        for &(_, id) in &kernel.ids {
            self.sink.record(Record::KernelAttribute(KernelAttribute { kernel: id, attribute, value }));
        }
    }

    /// The source-level type of parameter `index` of kernel `key`, where its API says it.
    pub fn param_type(&self, key: Key, index: usize) -> Option<&str> {
        self.objects.kernels.get(&key)?.param_types.get(index).map(String::as_str)
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
        let (images, build_options, units) = (program.images.clone(), program.build_options.clone(), program.units.clone());
        let images = self.image_blobs(images);
        self.sink.record(Record::Program(Program { images, build_options }));
        let id = ProgramId(self.counts.programs);
        self.counts.programs += 1;
        if !units.is_empty() {
            let units = units
                .into_iter()
                .map(|unit| CompiledUnit {
                    images: self.image_blobs(unit.images),
                    options: unit.options,
                    headers: unit.headers.into_iter().map(|(name, source)| ProgramHeader { name, blob: self.blob(source) }).collect(),
                })
                .collect();
            self.sink.record(Record::ProgramLink(ProgramLink { program: id, units }));
        }
        self.objects.programs.get_mut(&key)?.id = Some(id);
        Some(id)
    }

    fn image_blobs(&mut self, images: Vec<(ImageKind, Vec<u8>)>) -> Vec<ProgramImage> {
        images.into_iter().map(|(kind, bytes)| ProgramImage { kind, blob: self.blob(bytes) }).collect()
    }

    /// The trace kernel for `key` launched with these parameters (a kernel launched with
    /// different parameter kinds gets one trace kernel per list). Compared lazily: a launch of
    /// a kernel already seen with these kinds collects nothing.
    pub fn kernel_id(&mut self, key: Key, params: impl Iterator<Item = Param> + Clone) -> Option<KernelId> {
        let kernel = self.objects.kernels.get(&key)?;
        if let Some((_, id)) = kernel.ids.iter().find(|(known, _)| known.iter().cloned().eq(params.clone())) {
            return Some(*id);
        }
        let params: Vec<Param> = params.collect();
        let (program, name, types, attributes) = (kernel.program, kernel.name.clone(), kernel.param_types.clone(), kernel.attributes.clone());
        let program = self.program_id(program)?;
        self.sink.record(Record::Kernel(trace_format::Kernel { program, name, params: params.clone() }));
        let id = KernelId(self.counts.kernels);
        self.counts.kernels += 1;
        if !types.is_empty() {
            self.sink.record(Record::ParamTypes(ParamTypes { kernel: id, types }));
        }
        for (attribute, value) in attributes {
            self.sink.record(Record::KernelAttribute(KernelAttribute { kernel: id, attribute, value }));
        }
        self.objects.kernels.get_mut(&key)?.ids.push((params, id));
        Some(id)
    }

    /// A texture, surface or sampler object `key`; its record is written when a launch first
    /// passes it. A key the API reuses names the new object.
    pub fn texture_created(&mut self, key: Key, desc: TextureDesc) {
        self.objects_changed += 1;
        self.objects.textures.insert(key, (desc, None));
    }

    pub fn texture_released(&mut self, key: Key) {
        self.objects_changed += 1;
        self.objects.textures.remove(&key);
    }

    /// The object `key`, if it is a live texture, surface or sampler.
    pub fn texture(&self, key: Key) -> Option<&TextureDesc> {
        self.objects.textures.get(&key).map(|(desc, _)| desc)
    }

    pub fn texture_id(&mut self, key: Key) -> Option<TextureId> {
        let (desc, id) = self.objects.textures.get(&key)?;
        if let Some(id) = id {
            return Some(*id);
        }
        let desc = desc.clone();
        let resource = match desc.resource {
            Some((mem, offset)) => Some(TextureResource { mem: self.mem_id(mem)?, offset }),
            None => None,
        };
        self.sink.record(Record::Texture(Texture { kind: desc.kind, resource, description: desc.description }));
        let id = TextureId(self.counts.textures);
        self.counts.textures += 1;
        self.objects.textures.get_mut(&key)?.1 = Some(id);
        Some(id)
    }

    /// Stores `bytes` as a blob (the writer keeps one per content) and returns its id.
    pub fn blob(&mut self, bytes: Vec<u8>) -> BlobId {
        self.repeats.owned_blob(bytes, &mut *self.sink)
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
