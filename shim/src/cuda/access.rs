//! How the recorder reads device memory and waits for streams: the shim's own driver calls,
//! made inside a hook (so unrecorded) and only between the program's calls.

use super::hooks::real;
use super::state::State;
use super::streams::{driver_stream, DriverStream};
use super::sync::quiet;
use super::CUDA_SUCCESS;
use crate::recorder::{Key, MemoryAccess};

pub struct DeviceAccess<'a> {
    state: &'a State,
}

impl<'a> DeviceAccess<'a> {
    pub fn new(state: &'a State) -> DeviceAccess<'a> {
        DeviceAccess { state }
    }
}

/// Waits for all work submitted to the stream behind `queue`.
pub fn wait_for(queue: Key) {
    // SAFETY: the streams named are the program's live streams or the default ones.
    let status = unsafe {
        match driver_stream(queue) {
            DriverStream::Handle(stream) => real::cuStreamSynchronize(stream),
            DriverStream::OtherThreadsDefault => real::cuCtxSynchronize(),
        }
    };
    if status != CUDA_SUCCESS {
        crate::log::warning!("cannot wait for stream {queue:#x} (error {status})");
    }
}

impl MemoryAccess for DeviceAccess<'_> {
    fn drain(&self) {
        if !quiet(self.state) {
            // SAFETY: no arguments; waits for the current context's work.
            let status = unsafe { real::cuCtxSynchronize() };
            if status != CUDA_SUCCESS {
                crate::log::warning!("cannot wait for the device before the capture (error {status})");
            }
        }
    }

    fn read(&self, mem: Key, size: u64) -> Option<Vec<u8>> {
        if quiet(self.state) {
            crate::log::debug!("memory {mem:#x} is not read while the program captures a stream");
            return None;
        }
        if let Some(&stream) = self.state.ordered_allocations.get(&mem) {
            // The allocation exists for the legacy stream's copy only once its stream got there.
            wait_for(stream);
        }
        let mut contents = vec![0u8; usize::try_from(size).ok()?];
        // SAFETY: `mem` is a live allocation of `size` bytes; the buffer holds as many.
        let status = unsafe { real::cuMemcpyDtoH_v2(contents.as_mut_ptr().cast(), mem, contents.len()) };
        if status != CUDA_SUCCESS {
            crate::log::warning!("cannot read memory {mem:#x} back (error {status})");
            return None;
        }
        Some(contents)
    }
}
