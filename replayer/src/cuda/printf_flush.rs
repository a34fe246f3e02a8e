//! CUDA writes out what kernels printed as a launch starts and as a synchronization begins, so
//! lines printed while a synchronization waited (a child grid's, launched from the device) wait
//! for the next of those: after a graph's child grids, seen to take one or more later launches.
//! Empty kernels launched once the work finished write them out, as often as the replay needs
//! to get what the recording printed (`printed::flush_until`).

use super::driver::{check, own_kernel};
use crate::backend::BackendResult;
use cudarc::driver::sys::{self, CUfunction, CUstream};

pub struct PrintfFlush {
    empty: CUfunction,
}

impl PrintfFlush {
    pub fn load() -> BackendResult<PrintfFlush> {
        Ok(PrintfFlush { empty: own_kernel(include_str!("flush_printf.ptx"), c"reprise_flush_printf")? })
    }

    /// Launches the empty kernel on `stream` and waits for it, twice.
    pub fn run(&self, stream: CUstream) -> BackendResult<()> {
        for _ in 0..2 {
            // SAFETY: a kernel without parameters, one thread, on a stream of this context.
            check(unsafe { sys::cuLaunchKernel(self.empty, 1, 1, 1, 1, 1, 1, 0, stream, std::ptr::null_mut(), std::ptr::null_mut()) }, "cuLaunchKernel")?;
            // SAFETY: a stream of this context.
            check(unsafe { sys::cuStreamSynchronize(stream) }, "cuStreamSynchronize")?;
        }
        Ok(())
    }
}
