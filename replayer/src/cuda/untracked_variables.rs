//! Module variables the trace does not hold (`image_variables`), put back before each run to the
//! values their module loaded with, which the recorded program's run began with too: else a
//! kernel counting in one (cdpSimplePrint's block numbers) starts each later run where the one
//! before ended. Variables the trace holds are written from their recorded contents instead.

use super::driver::check;
use crate::backend::BackendResult;
use cudarc::driver::sys::{self, CUdeviceptr, CUmodule, CUstream};
use std::ffi::CString;

/// Larger variables are left alone: their copy would hold as much device memory again.
const LARGEST_SAVED: usize = 64 << 20;

#[derive(Default)]
pub struct UntrackedVariables {
    saved: Vec<Saved>,
}

struct Saved {
    variable: CUdeviceptr,
    copy: CUdeviceptr,
    size: usize,
}

impl UntrackedVariables {
    /// Copies the contents `module` loaded with of its variables `names`, those `tracked` left out.
    /// A name the driver does not find (a variable the linker dropped) is skipped, and so, with a
    /// note, is a variable whose copy finds no device memory: only runs after the first can tell.
    pub fn save(&mut self, module: CUmodule, names: &[String], tracked: impl Fn(&str) -> bool) -> BackendResult<()> {
        for name in names.iter().filter(|name| !tracked(name)) {
            let Ok(c_name) = CString::new(name.as_str()) else { continue };
            let (mut variable, mut size) = (0, 0);
            // SAFETY: a loaded module, a valid C string and out-pointers of the right types.
            if unsafe { sys::cuModuleGetGlobal_v2(&mut variable, &mut size, module, c_name.as_ptr()) } != sys::CUresult::CUDA_SUCCESS || size == 0 || size > LARGEST_SAVED {
                continue;
            }
            let mut copy = 0;
            // SAFETY: an out-pointer of the right type.
            if unsafe { sys::cuMemAlloc_v2(&mut copy, size) } != sys::CUresult::CUDA_SUCCESS {
                eprintln!("replayer: note: module variable {name} ({size} bytes) is not put back before each run: no device memory for its copy");
                continue;
            }
            self.saved.push(Saved { variable, copy, size });
            // SAFETY: a copy between two allocations of `size` bytes.
            check(unsafe { sys::cuMemcpyDtoD_v2(copy, variable, size) }, "cuMemcpyDtoD")?;
        }
        Ok(())
    }

    /// Puts every saved variable back on `stream`, and waits for it.
    pub fn restore(&self, stream: CUstream) -> BackendResult<()> {
        if self.saved.is_empty() {
            return Ok(());
        }
        for saved in &self.saved {
            // SAFETY: both allocations hold `size` bytes; the stream is of this context.
            check(unsafe { sys::cuMemcpyDtoDAsync_v2(saved.variable, saved.copy, saved.size, stream) }, "cuMemcpyDtoDAsync")?;
        }
        // SAFETY: a stream of this context.
        check(unsafe { sys::cuStreamSynchronize(stream) }, "cuStreamSynchronize")
    }
}

impl Drop for UntrackedVariables {
    fn drop(&mut self) {
        for saved in &self.saved {
            // SAFETY: allocated by `save`; an error cannot be reported from Drop.
            unsafe { sys::cuMemFree_v2(saved.copy) };
        }
    }
}
