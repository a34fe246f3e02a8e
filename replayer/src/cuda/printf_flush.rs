//! CUDA writes out what kernels printed as a launch starts and as a synchronization begins, so
//! lines printed while a synchronization waited (a child grid's, launched from the device) wait
//! for the next of those: after a graph's child grids, seen to take one or more later launches.
//! Empty kernels launched once the work finished write them out, as often as the replay needs
//! to get what the recording printed (`printed::flush_until`).

use super::driver::check;
use crate::backend::BackendResult;
use cudarc::driver::sys::{self, CUfunction, CUstream};

/// The empty kernel, in PTX (assembled by `tests/tests/cuda_compile.rs`).
const EMPTY_KERNEL: &std::ffi::CStr = match std::ffi::CStr::from_bytes_with_nul(concat!(include_str!("flush_printf.ptx"), "\0").as_bytes()) {
    Ok(ptx) => ptx,
    Err(_) => panic!("flush_printf.ptx holds a NUL byte"),
};

pub struct PrintfFlush {
    empty: CUfunction,
}

impl PrintfFlush {
    pub fn load() -> BackendResult<PrintfFlush> {
        let (mut module, mut empty) = (std::ptr::null_mut(), std::ptr::null_mut());
        // SAFETY: a NUL-terminated PTX image and valid out-pointers; the context is current.
        check(unsafe { sys::cuModuleLoadData(&mut module, EMPTY_KERNEL.as_ptr().cast()) }, "cuModuleLoadData")?;
        // SAFETY: the module just loaded defines the entry.
        check(unsafe { sys::cuModuleGetFunction(&mut empty, module, c"reprise_flush_printf".as_ptr()) }, "cuModuleGetFunction")?;
        Ok(PrintfFlush { empty })
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
