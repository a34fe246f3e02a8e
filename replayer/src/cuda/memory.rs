//! The trace's memory objects on the device. Device buffers go where the program had them
//! wherever that range is free here: data that holds addresses then needs no rewriting, and
//! rewriting guesses which words are addresses (`relocation`; sorted integers near 0x7fd0 look like
//! them). The rest is allocated anywhere, and `--exact-addresses` insists on every recorded range.

use super::driver::check;
use crate::backend::{BackendError, BackendResult, PartitionNodes};
use super::images::Array;
use cudarc::driver::sys::{self, CUarray, CUdevice, CUdeviceptr, CUmemGenericAllocationHandle};
use std::collections::HashMap;
use std::collections::BTreeSet;
use std::ffi::c_void;
use std::rc::Rc;
use trace_format::{MemId, MemKind, Memory, ProgramId};

/// What this backend must give back to the driver.
enum Owned {
    Device(CUdeviceptr),
    Host(*mut c_void),
    /// A reserved range of addresses.
    Reserved { start: CUdeviceptr, size: usize },
    /// Physical memory mapped into part of a reserved range.
    Mapped { start: CUdeviceptr, size: usize, handle: CUmemGenericAllocationHandle },
    Array(CUarray),
}

/// Where each memory object lives, by `MemId` index.
pub struct Memories {
    pub addresses: Vec<CUdeviceptr>,
    pub sizes: Vec<u64>,
    /// Placed at the recorded addresses (`--exact-addresses`): no memory may move, not even
    /// what a partition allocates itself.
    pub at_recorded_addresses: bool,
    /// Images, as arrays, by `MemId` index (their address is 0: kernels reach them only
    /// through texture and surface objects).
    pub arrays: HashMap<usize, Array>,
    /// Pinned host memory, by `MemId` index: the host side of every copy.
    pub on_host: BTreeSet<usize>,
    owned: Vec<Owned>,
}

impl Memories {
    /// No memory yet.
    pub fn none() -> Memories {
        Memories { addresses: Vec::new(), sizes: Vec::new(), at_recorded_addresses: false, arrays: HashMap::new(), on_host: BTreeSet::new(), owned: Vec::new() }
    }

    /// Places every memory object; a program's variable (`MemKind::Global`) is where `variable`
    /// finds it (address and size) in its loaded program.
    pub fn allocate(
        memories: &[Memory],
        device: CUdevice,
        exact: bool,
        variable: impl Fn(ProgramId, &str) -> BackendResult<(CUdeviceptr, u64)>,
    ) -> BackendResult<Memories> {
        let mut placed = Memories::none();
        placed.at_recorded_addresses = exact;
        let unshared: BTreeSet<(u64, u64)> = unshared_buffer_ranges(memories).collect();
        let where_recorded = match exact {
            true => {
                let ranges = memories.iter().filter(|memory| device_resident(&memory.kind)).map(recorded_range);
                placed.map_recorded_ranges(ranges, device, true)?
            }
            false => placed.map_recorded_ranges(unshared.iter().copied(), device, false)?,
        };
        // A buffer whose range another's overlaps stays off its recorded address even where a
        // neighbour's granule mapped it.
        let mapped = |memory: &Memory| {
            let (start, end) = recorded_range(memory);
            // The mapped ranges are sorted and apart: the last one starting at or before `start`.
            let holder = where_recorded.partition_point(|&(from, _)| from <= start).checked_sub(1).map(|index| where_recorded[index]);
            unshared.contains(&(start, end)) && holder.is_some_and(|(_, to)| end <= to)
        };
        for (index, memory) in memories.iter().enumerate() {
            let address = match &memory.kind {
                MemKind::SubBuffer { parent, offset } => match placed.addresses.get(parent.index()) {
                    Some(base) => base + *offset,
                    None => return Err(BackendError::Unsupported(format!("memory {index} is inside memory {parent}, which comes after it"))),
                },
                MemKind::Global { program, name } => {
                    let (address, size) = variable(*program, name)?;
                    if size != memory.size {
                        return Err(BackendError::Unsupported(format!(
                            "memory {index} is the variable {name} of program {program}, of {} bytes, not {size} as loaded here",
                            memory.size
                        )));
                    }
                    address
                }
                MemKind::Image(layout) => {
                    if layout.bytes() != memory.size {
                        return Err(BackendError::Unsupported(format!("memory {index} is an image of {} bytes packed, not {}", layout.bytes(), memory.size)));
                    }
                    let array = Array::create(index, layout)?;
                    placed.owned.push(Owned::Array(array.handle));
                    placed.arrays.insert(index, array);
                    0
                }
                _ if exact && device_resident(&memory.kind) => memory.address,
                MemKind::Buffer | MemKind::Pitched { .. } if mapped(memory) => memory.address,
                _ => placed.allocate_one(memory)?,
            };
            if memory.kind == MemKind::Host {
                placed.on_host.insert(index);
            }
            placed.addresses.push(address);
            placed.sizes.push(memory.size);
        }
        Ok(placed)
    }

    /// The memory `part` allocates and frees itself that the replay allocates there too (none
    /// at the recorded addresses, where nothing moves).
    pub fn allocated_by(&self, part: &PartitionNodes<'_>) -> BTreeSet<MemId> {
        if self.at_recorded_addresses {
            return BTreeSet::new();
        }
        part.allocated_and_freed()
    }

    fn allocate_one(&mut self, memory: &Memory) -> BackendResult<CUdeviceptr> {
        // Zero-sized objects still need an address of their own.
        let size = memory.size.max(1) as usize;
        // SAFETY: allocation calls with valid out-pointers; each result is freed in Drop.
        unsafe {
            match memory.kind {
                MemKind::Host => {
                    let mut host = std::ptr::null_mut();
                    check(sys::cuMemHostAlloc(&mut host, size, sys::CU_MEMHOSTALLOC_DEVICEMAP | sys::CU_MEMHOSTALLOC_PORTABLE), "cuMemHostAlloc")?;
                    self.owned.push(Owned::Host(host));
                    Ok(host as CUdeviceptr)
                }
                MemKind::Managed | MemKind::Shared => {
                    let mut address = 0;
                    check(sys::cuMemAllocManaged(&mut address, size, sys::CUmemAttach_flags::CU_MEM_ATTACH_GLOBAL as u32), "cuMemAllocManaged")?;
                    self.owned.push(Owned::Device(address));
                    Ok(address)
                }
                _ => {
                    let mut address = 0;
                    check(sys::cuMemAlloc_v2(&mut address, size), "cuMemAlloc")?;
                    self.owned.push(Owned::Device(address));
                    Ok(address)
                }
            }
        }
    }

    /// Maps device memory over the granules of `ranges` at their recorded addresses (small
    /// allocations of the CUDA runtime share a granule, so ranges are merged first); returns the
    /// ranges mapped. A range not free here is an error where `all` must be, else left out.
    fn map_recorded_ranges(&mut self, ranges: impl Iterator<Item = (u64, u64)>, device: CUdevice, all: bool) -> BackendResult<Vec<(u64, u64)>> {
        let ranges: Vec<(u64, u64)> = ranges.collect();
        if ranges.is_empty() {
            return Ok(Vec::new());
        }
        let prop = allocation_properties(device);
        let mut granularity = 0usize;
        // SAFETY: valid out-pointer and properties.
        check(unsafe { sys::cuMemGetAllocationGranularity(&mut granularity, &prop, sys::CUmemAllocationGranularity_flags::CU_MEM_ALLOC_GRANULARITY_MINIMUM) }, "cuMemGetAllocationGranularity")?;
        let granules = granule_ranges(ranges.into_iter(), granularity.max(1) as u64);
        let groups = reservations(granules, DRIVER_CHUNK);
        // The driver honours the first request for new addresses, and later ones only where they
        // lie above all it has: one reservation over every group where the span is free.
        let whole = Reservation::spanning(&groups);
        if groups.len() > 1 && self.reserve(whole.start, whole.end)? {
            self.map_parts(&whole.parts, &prop)?;
            return Ok(whole.parts);
        }
        let mut mapped = Vec::new();
        for reservation in groups {
            if !self.reserve(reservation.start, reservation.end)? {
                if all {
                    let (start, end) = (reservation.parts[0].0, reservation.end);
                    return Err(BackendError::Unsupported(format!("--exact-addresses: the recorded range 0x{start:x}..0x{end:x} is not free on this machine")));
                }
                continue;
            }
            self.map_parts(&reservation.parts, &prop)?;
            mapped.extend(reservation.parts);
        }
        Ok(mapped)
    }

    /// Backs each reserved range of `parts` with device memory.
    fn map_parts(&mut self, parts: &[(u64, u64)], prop: &sys::CUmemAllocationProp) -> BackendResult<()> {
        parts.iter().try_for_each(|&(start, end)| self.map_part(start, (end - start) as usize, prop))
    }

    /// Reserves the addresses `[start, end)`; false where the driver gives others.
    fn reserve(&mut self, start: u64, end: u64) -> BackendResult<bool> {
        let size = (end - start) as usize;
        let mut reserved = 0;
        // SAFETY: valid out-pointer; what is reserved is freed in Drop or here.
        unsafe {
            if sys::cuMemAddressReserve(&mut reserved, size, 0, start, 0) != sys::CUresult::CUDA_SUCCESS {
                return Ok(false);
            }
            if reserved != start {
                sys::cuMemAddressFree(reserved, size);
                return Ok(false);
            }
        }
        self.owned.push(Owned::Reserved { start, size });
        Ok(true)
    }

    /// Backs `size` reserved bytes at `start` with device memory.
    fn map_part(&mut self, start: u64, size: usize, prop: &sys::CUmemAllocationProp) -> BackendResult<()> {
        // SAFETY: VMM calls with valid out-pointers inside a range `reserve` holds; what succeeds
        // is released in Drop.
        unsafe {
            let mut handle = 0;
            check(sys::cuMemCreate(&mut handle, size, prop, 0), "cuMemCreate")?;
            if let Err(error) = check(sys::cuMemMap(start, size, 0, handle, 0), "cuMemMap") {
                sys::cuMemRelease(handle);
                return Err(error);
            }
            self.owned.push(Owned::Mapped { start, size, handle });
            let access = sys::CUmemAccessDesc { location: prop.location, flags: sys::CUmemAccess_flags::CU_MEM_ACCESS_FLAGS_PROT_READWRITE };
            check(sys::cuMemSetAccess(start, size, &access, 1), "cuMemSetAccess")
        }
    }
}

/// Where the driver starts a range of addresses it has not handed out before: it honours a
/// reservation's requested address only at this alignment, and only above the requested
/// addresses it honoured before (measured, driver 580: a request 8 MB past such a boundary got
/// the next boundary; one below an earlier honoured request got an address of its own choosing).
const DRIVER_CHUNK: u64 = 32 << 20;

/// One reservation: from a chunk boundary to the end of the last granule range it covers.
#[derive(Debug, PartialEq)]
pub struct Reservation {
    pub start: u64,
    pub end: u64,
    /// The granule ranges inside it that get memory.
    pub parts: Vec<(u64, u64)>,
}

impl Reservation {
    /// One reservation from the first of `groups` to the end of the last, with all their parts.
    fn spanning(groups: &[Reservation]) -> Reservation {
        Reservation {
            start: groups.first().map_or(0, |first| first.start),
            end: groups.last().map_or(0, |last| last.end),
            parts: groups.iter().flat_map(|group| group.parts.iter().copied()).collect(),
        }
    }
}

/// Sorted, apart granule ranges grouped into reservations that start at a `chunk` boundary, in
/// ascending order (the order the driver honours them in); ranges whose boundaries fall inside
/// the previous reservation join it.
pub fn reservations(granules: Vec<(u64, u64)>, chunk: u64) -> Vec<Reservation> {
    let mut grouped: Vec<Reservation> = Vec::new();
    for (start, end) in granules {
        match grouped.last_mut() {
            Some(last) if start / chunk * chunk < last.end => {
                last.end = end;
                last.parts.push((start, end));
            }
            _ => grouped.push(Reservation { start: start / chunk * chunk, end, parts: vec![(start, end)] }),
        }
    }
    grouped
}

/// The bytes `memory` had, `[start, end)` (one for an empty object, which still has an address).
pub fn recorded_range(memory: &Memory) -> (u64, u64) {
    (memory.address, memory.address + memory.size.max(1))
}

/// The recorded ranges of device buffers that no other object's range overlaps: an overlap is an
/// address the program freed and allocated again, and objects placed there would share storage.
pub fn unshared_buffer_ranges(memories: &[Memory]) -> impl Iterator<Item = (u64, u64)> {
    let mut ranges: Vec<(u64, u64)> = memories
        .iter()
        .filter(|memory| matches!(memory.kind, MemKind::Buffer | MemKind::Pitched { .. }) && memory.address != 0)
        .map(recorded_range)
        .collect();
    ranges.sort_unstable();
    // By start: a range overlaps an earlier one that ends after it starts, or the next one.
    let mut alone = Vec::with_capacity(ranges.len());
    let mut earlier_end = 0;
    for (index, &(start, end)) in ranges.iter().enumerate() {
        if earlier_end <= start && ranges.get(index + 1).is_none_or(|next| end <= next.0) {
            alone.push((start, end));
        }
        earlier_end = earlier_end.max(end);
    }
    alone.into_iter()
}

/// The granule-aligned ranges that cover `ranges`, with overlapping and touching ones merged
/// (one mapping each).
pub fn granule_ranges(ranges: impl Iterator<Item = (u64, u64)>, granule: u64) -> Vec<(u64, u64)> {
    let mut ranges: Vec<(u64, u64)> = ranges.map(|(start, end)| (start / granule * granule, end.div_ceil(granule) * granule)).collect();
    ranges.sort_unstable();
    let mut merged: Vec<(u64, u64)> = Vec::new();
    for (start, end) in ranges {
        match merged.last_mut() {
            Some(last) if start <= last.1 => last.1 = last.1.max(end),
            _ => merged.push((start, end)),
        }
    }
    merged
}

/// Objects that `--exact-addresses` places at their recorded address (host and managed memory
/// come from allocators that choose their own).
fn device_resident(kind: &MemKind) -> bool {
    matches!(kind, MemKind::Buffer | MemKind::Pitched { .. } | MemKind::StreamOrdered)
}

fn allocation_properties(device: CUdevice) -> sys::CUmemAllocationProp {
    // SAFETY: a plain C struct for which all zeroes is a valid value.
    let mut prop: sys::CUmemAllocationProp = unsafe { std::mem::zeroed() };
    prop.type_ = sys::CUmemAllocationType::CU_MEM_ALLOCATION_TYPE_PINNED;
    prop.location.type_ = sys::CUmemLocationType::CU_MEM_LOCATION_TYPE_DEVICE;
    prop.location.id = device;
    prop
}

impl Drop for Memories {
    fn drop(&mut self) {
        // SAFETY: each handle came from the matching allocation call; errors cannot be reported here.
        unsafe {
            // Last acquired first: mappings before the reservations that hold them.
            for owned in self.owned.drain(..).rev() {
                match owned {
                    Owned::Device(address) => {
                        sys::cuMemFree_v2(address);
                    }
                    Owned::Host(host) => {
                        sys::cuMemFreeHost(host);
                    }
                    Owned::Array(array) => {
                        sys::cuArrayDestroy(array);
                    }
                    Owned::Mapped { start, size, handle } => {
                        sys::cuMemUnmap(start, size);
                        sys::cuMemRelease(handle);
                    }
                    Owned::Reserved { start, size } => {
                        sys::cuMemAddressFree(start, size);
                    }
                }
            }
        }
    }
}

/// Pinned host memory the backend copies from (recorded host data) or into (reads).
pub struct HostBuffer {
    pub ptr: *mut c_void,
    pub len: usize,
}

impl HostBuffer {
    pub fn zeroed(len: usize) -> BackendResult<HostBuffer> {
        let mut ptr = std::ptr::null_mut();
        // SAFETY: valid out-pointer; freed in Drop.
        check(unsafe { sys::cuMemHostAlloc(&mut ptr, len.max(1), 0) }, "cuMemHostAlloc")?;
        // SAFETY: freshly allocated, `len.max(1)` bytes.
        unsafe { std::ptr::write_bytes(ptr as *mut u8, 0, len.max(1)) };
        Ok(HostBuffer { ptr, len })
    }
}

/// Pinned buffers no command uses now, kept for the next: pinned memory takes milliseconds to
/// allocate and free at megabytes, and a segment's received copies and recorded host data
/// each need some (simpleStreams' 500 received copies, and UnifiedMemoryPerf's uploads of new
/// data in each of 1,500 segments, spent most of a replay there).
#[derive(Default)]
pub struct PinnedPool {
    /// By length, shortest first.
    spare: Vec<Rc<HostBuffer>>,
    spare_bytes: usize,
}

/// What the pool keeps at most; the shortest spares go first beyond it.
const SPARE_LIMIT: usize = 1 << 30;

impl PinnedPool {
    /// A buffer of at least `len` bytes: the shortest spare that holds them, else a new one.
    pub fn take(&mut self, len: usize) -> BackendResult<Rc<HostBuffer>> {
        let fitting = self.spare.partition_point(|buffer| buffer.len < len);
        if fitting == self.spare.len() {
            return Ok(Rc::new(HostBuffer::zeroed(len)?));
        }
        let buffer = self.spare.remove(fitting);
        self.spare_bytes -= buffer.len;
        Ok(buffer)
    }

    /// A buffer of at least `bytes.len()` bytes that starts with `bytes`.
    pub fn take_with(&mut self, bytes: &[u8]) -> BackendResult<Rc<HostBuffer>> {
        let buffer = self.take(bytes.len())?;
        // SAFETY: the buffer holds at least `bytes.len()` bytes, and nothing else uses it.
        unsafe { std::ptr::copy_nonoverlapping(bytes.as_ptr(), buffer.ptr as *mut u8, bytes.len()) };
        Ok(buffer)
    }

    /// Keeps `buffer` for a later `take`, unless something else (a built graph) still holds it.
    pub fn give(&mut self, buffer: Rc<HostBuffer>) {
        if Rc::strong_count(&buffer) != 1 {
            return;
        }
        self.spare_bytes += buffer.len;
        let at = self.spare.partition_point(|spare| spare.len < buffer.len);
        self.spare.insert(at, buffer);
        while self.spare_bytes > SPARE_LIMIT {
            let shortest = self.spare.remove(0);
            self.spare_bytes -= shortest.len;
        }
    }
}

impl Drop for HostBuffer {
    fn drop(&mut self) {
        // SAFETY: allocated by cuMemHostAlloc.
        unsafe { sys::cuMemFreeHost(self.ptr) };
    }
}
