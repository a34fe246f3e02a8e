//! Copies between device memory and the replay's pinned host memory, as kernel nodes of CUDA
//! graphs. A memcpy node with a host end costs a graph about 5 µs, more than the graph wins
//! on a few kernels, while a kernel reads and writes pinned memory directly (unified addressing
//! gives it the host address). `scripts/bench/cuda_graph_latency.cu` on an H200, µs per
//! iteration against the same work on a stream: a kernel between two 16 KB copies 11.1-11.7
//! (1.48-1.60x faster) against 17.4-20.4 with memcpy nodes and 13.9-15.5 with the copies on the
//! stream between graphs; a memset, 3 kernels and a 16 KB copy out 10.3-11.7 (2.56-2.62x).

use super::driver::{check, own_kernel};
use crate::backend::BackendResult;
use cudarc::driver::sys::{self, CUdeviceptr, CUfunction, CUgraph, CUgraphNode, CUmemorytype, CUDA_MEMCPY3D};
use std::ffi::c_void;
use trace_format::{Copy, Extent, Place};

/// Larger copies stay DMA transfers: a kernel reads host memory over the bus in small pieces.
const KERNEL_COPY_MAX: u64 = 1 << 20;
/// Threads per block, and the most blocks a copy gets (each thread copies 16 bytes a step).
const THREADS: u32 = 256;
const MAX_BLOCKS: u64 = 64;

/// Whether a graph copies `copy` with a kernel: one end in host memory, a linear extent of at
/// most `KERNEL_COPY_MAX` bytes. (An image on the device end, known only with the replay's
/// objects, still gets a memcpy node: see `HostCopier::add_node`.)
pub fn by_kernel(copy: &Copy) -> bool {
    let host_end = matches!((&copy.src, &copy.dst), (Place::Host { .. }, Place::Memory { .. }) | (Place::Memory { .. }, Place::Host { .. }));
    host_end && matches!(copy.extent, Extent::Linear { bytes } if bytes <= KERNEL_COPY_MAX)
}

pub struct HostCopier {
    function: CUfunction,
}

impl HostCopier {
    pub fn load() -> BackendResult<HostCopier> {
        Ok(HostCopier { function: own_kernel(include_str!("host_copy.ptx"), c"reprise_copy")? })
    }

    /// A kernel node doing the copy `params` describes, if it is a linear one between device
    /// memory and host memory (not an image); `None` otherwise.
    ///
    /// # Safety
    /// `graph` is a graph of this context; `params` names memory that lives as long as it.
    pub unsafe fn add_node(&self, graph: CUgraph, params: &CUDA_MEMCPY3D) -> BackendResult<Option<CUgraphNode>> {
        use CUmemorytype::{CU_MEMORYTYPE_DEVICE as DEVICE, CU_MEMORYTYPE_HOST as HOST};
        let (mut dst, mut src) = match (params.dstMemoryType, params.srcMemoryType) {
            (HOST, DEVICE) => (params.dstHost as CUdeviceptr, params.srcDevice),
            (DEVICE, HOST) => (params.dstDevice, params.srcHost as CUdeviceptr),
            _ => return Ok(None),
        };
        if params.Height > 1 || params.Depth > 1 || params.srcXInBytes != 0 || params.dstXInBytes != 0 {
            return Ok(None);
        }
        let mut bytes = params.WidthInBytes as u64;
        let blocks = bytes.div_ceil(16 * u64::from(THREADS)).clamp(1, MAX_BLOCKS) as u32;
        let mut arguments: [*mut c_void; 3] = [(&raw mut dst).cast(), (&raw mut src).cast(), (&raw mut bytes).cast()];
        let node_params = sys::CUDA_KERNEL_NODE_PARAMS {
            func: self.function,
            gridDimX: blocks,
            gridDimY: 1,
            gridDimZ: 1,
            blockDimX: THREADS,
            blockDimY: 1,
            blockDimZ: 1,
            sharedMemBytes: 0,
            kernelParams: arguments.as_mut_ptr(),
            extra: std::ptr::null_mut(),
            kern: std::ptr::null_mut(),
            ctx: std::ptr::null_mut(),
        };
        let mut node = std::ptr::null_mut();
        // SAFETY: the parameters live across the call, which copies them.
        check(unsafe { sys::cuGraphAddKernelNode_v2(&mut node, graph, std::ptr::null(), 0, &node_params) }, "cuGraphAddKernelNode")?;
        Ok(Some(node))
    }
}
