//! Large copies to the host delivered twice by the device: where the program asked, and into
//! registered host memory of the shim's, by a copy the shim enqueues just before the program's
//! on the same stream (so both read the same contents). The data the program received is then
//! kept without a CPU copy on the program's thread: simpleStreams reads 64 MB back per step,
//! 1.3 ms of DMA against about 6 ms of copying with 4 cores. A preparing thread of the writer
//! copies it out of the staging buffer, which then serves the next copy.

use super::access::RelaxedCapture;
use super::hooks::real;
use super::streams::{driver_stream, DriverStream};
use super::{CUdeviceptr, CUstream, CUDA_SUCCESS};
use crate::blob_bytes::Lent;
use crate::recorder::Key;
use std::ffi::c_void;
use std::sync::{Mutex, PoisonError};

/// Copies of fewer bytes are taken from the program's memory: a CPU copy is quicker there.
pub const STAGED_FROM: usize = 4 << 20;
/// Registered host memory the staging buffers may hold in all; a copy finding none free while
/// this much is lent is taken from the program's memory as before.
const STAGING_BYTES: usize = 512 << 20;
/// Buffers are allocated in multiples of this, so that one serves copies of nearby sizes.
const GRAIN: usize = 2 << 20;
/// `CU_MEMHOSTREGISTER_PORTABLE`: pinned for every context, not only the current one.
const PORTABLE: u32 = 1;

/// Anonymous memory of the shim's, registered with the driver: it stays readable whatever the
/// program does with its contexts (a context gone only makes a later copy into it slower).
struct Buffer {
    address: usize,
    len: usize,
}

#[derive(Default)]
struct Pool {
    free: Vec<Buffer>,
    /// Bytes of all buffers, free and lent.
    total: usize,
    /// Registration failed once: staging is not tried again.
    unavailable: bool,
}

static POOL: Mutex<Pool> = Mutex::new(Pool { free: Vec::new(), total: 0, unavailable: false });

/// A copy the device makes into a staging buffer, lent to the writer once the host waited for it.
pub struct Staged {
    buffer: Option<Buffer>,
    len: usize,
    stream: usize,
}

/// Enqueues a copy of `len` bytes from `source` into a staging buffer on the stream of `queue`,
/// ahead of the program's copy from there; `None` where it is not worth it or not possible (the
/// caller takes the program's memory then).
pub fn stage(queue: Key, source: CUdeviceptr, len: usize) -> Option<Staged> {
    if len < STAGED_FROM {
        return None;
    }
    let DriverStream::Handle(stream) = driver_stream(queue) else { return None };
    let buffer = take(len)?;
    let _relaxed = RelaxedCapture::enter();
    // SAFETY: `len` bytes of the shim's registered memory; the program names `source`.
    let status = unsafe { real::cuMemcpyDtoHAsync_v2(buffer.address as *mut c_void, source, len, stream) };
    // Dropped where the copy could not be enqueued: the buffer goes back to the pool.
    let staged = Staged { buffer: Some(buffer), len, stream: stream as usize };
    (status == CUDA_SUCCESS).then_some(staged)
}

impl Staged {
    /// Ends the loan before any host wait covered the copy (the program's own call failed):
    /// the stream is waited for first, so that the buffer is not reused while the device writes it.
    pub fn settle(self) {
        let _relaxed = RelaxedCapture::enter();
        // SAFETY: the stream the copy went to, which the program's call just named.
        unsafe { real::cuStreamSynchronize(self.stream as CUstream) };
    }
}

impl Lent for Staged {
    fn bytes(&self) -> &[u8] {
        match &self.buffer {
            // SAFETY: the buffer's first `len` bytes, which the device wrote before the host wait
            // that lends them (see `Received`), and nothing writes while lent.
            Some(buffer) => unsafe { std::slice::from_raw_parts(buffer.address as *const u8, self.len) },
            None => &[],
        }
    }
}

impl Drop for Staged {
    fn drop(&mut self) {
        if let Some(buffer) = self.buffer.take() {
            POOL.lock().unwrap_or_else(PoisonError::into_inner).free.push(buffer);
        }
    }
}

/// The smallest free buffer of at least `len` bytes, or a new one while the pool has room.
fn take(len: usize) -> Option<Buffer> {
    let mut pool = POOL.lock().unwrap_or_else(PoisonError::into_inner);
    if pool.unavailable {
        return None;
    }
    let fitting = pool.free.iter().enumerate().filter(|(_, buffer)| buffer.len >= len).min_by_key(|(_, buffer)| buffer.len).map(|(index, _)| index);
    if let Some(index) = fitting {
        return Some(pool.free.swap_remove(index));
    }
    let len = len.div_ceil(GRAIN) * GRAIN;
    if pool.total + len > STAGING_BYTES {
        return None;
    }
    match allocate(len) {
        Some(buffer) => {
            pool.total += len;
            Some(buffer)
        }
        None => {
            crate::log::info!("staging memory could not be registered; received data is copied on the program's threads");
            pool.unavailable = true;
            None
        }
    }
}

/// `len` bytes of anonymous memory, registered with the driver for every context.
fn allocate(len: usize) -> Option<Buffer> {
    // SAFETY: a new private anonymous mapping; nothing else refers to it.
    let address = unsafe { libc::mmap(std::ptr::null_mut(), len, libc::PROT_READ | libc::PROT_WRITE, libc::MAP_PRIVATE | libc::MAP_ANONYMOUS, -1, 0) };
    if address == libc::MAP_FAILED {
        return None;
    }
    // SAFETY: the mapping just made, `len` bytes long.
    if unsafe { real::cuMemHostRegister_v2(address, len, PORTABLE) } != CUDA_SUCCESS {
        // SAFETY: the same mapping, not registered and not used.
        unsafe { libc::munmap(address, len) };
        return None;
    }
    Some(Buffer { address: address as usize, len })
}
