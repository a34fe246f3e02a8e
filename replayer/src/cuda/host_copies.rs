//! Copies between device memory and the replay's pinned host memory, as kernel nodes of CUDA
//! graphs (`--host-copies kernels`, the default). A memcpy node with a host end costs a graph
//! about 5 µs, more than the graph wins on a few kernels, while a kernel reads and writes pinned
//! memory directly (unified addressing gives it the host address). The whole GPU check with
//! them (H200, 2026-11-27 09:10): every row passes, eager / graph 1.00-12.27 but callback_frees
//! 0.89 (1.07 in the same run's regression table), where copies on the stream gave 0.95-0.99 to
//! cublas_sgemm, host_function and two others.
//! `scripts/bench/cuda_graph_latency.cu` on an H200, µs per iteration against the same work on a
//! stream: a kernel between two 16 KB copies 11.1-11.7 (1.48-1.60x faster) against 17.4-20.4 with
//! memcpy nodes and 13.9-15.5 with the copies on the stream between graphs; a memset, 3 kernels
//! and a 16 KB copy out 10.3-11.7 (2.56-2.62x).

use super::driver::{check, own_kernel};
use crate::backend::BackendResult;
use cudarc::driver::sys::{self, CUdeviceptr, CUfunction, CUgraph, CUgraphNode, CUmemorytype, CUDA_MEMCPY3D};
use std::ffi::c_void;
use trace_format::{Copy, Extent, Place};

/// Larger copies stay DMA transfers, as memcpy nodes: a kernel reads host memory over the bus in
/// small pieces, and takes the SMs from concurrent work. `cuda_graph_latency BYTES` on an H200, a
/// kernel between copies in and out, faster than on a stream by 1.46x at 16 KB, 1.73x at 256 KB,
/// 1.04x at 1 MB (the copies on the stream between graphs: 1.15x, 1.29x, 1.01x); callback_frees'
/// twelve concurrent 1 MB copies replayed slower by kernels than eagerly (eager / graph
/// 0.80-0.89), and on the stream between graphs too (0.96-0.98: each copy split the graph, and
/// the partitions ran one after another), but 1.12x faster as memcpy nodes (2026-11-27 15:10).
const KERNEL_COPY_MAX: u64 = 256 << 10;
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

/// Destination, source and length of the copy `params` describes, where a kernel can make it:
/// one row between host memory and memory the device reaches at its address (device, managed or
/// the replay's pinned allocations, which `copy_params` names as unified), not an image.
pub fn kernel_copy(params: &CUDA_MEMCPY3D) -> Option<(CUdeviceptr, CUdeviceptr, u64)> {
    use CUmemorytype::{CU_MEMORYTYPE_DEVICE as DEVICE, CU_MEMORYTYPE_HOST as HOST, CU_MEMORYTYPE_UNIFIED as UNIFIED};
    let (dst, src) = match (params.dstMemoryType, params.srcMemoryType) {
        (HOST, DEVICE | UNIFIED) => (params.dstHost as CUdeviceptr, params.srcDevice),
        (DEVICE | UNIFIED, HOST) => (params.dstDevice, params.srcHost as CUdeviceptr),
        _ => return None,
    };
    let one_row = params.Height <= 1 && params.Depth <= 1 && params.srcXInBytes == 0 && params.dstXInBytes == 0 && params.srcY == 0 && params.dstY == 0 && params.srcZ == 0 && params.dstZ == 0;
    one_row.then_some((dst, src, params.WidthInBytes as u64))
}

pub struct HostCopier {
    function: CUfunction,
}

impl HostCopier {
    pub fn load() -> BackendResult<HostCopier> {
        Ok(HostCopier { function: own_kernel(include_str!("host_copy.ptx"), c"reprise_copy")? })
    }

    /// A kernel node doing the copy `params` describes, if a kernel can (`kernel_copy`); `None`
    /// otherwise.
    ///
    /// # Safety
    /// `graph` is a graph of this context; `params` names memory that lives as long as it.
    pub unsafe fn add_node(&self, graph: CUgraph, params: &CUDA_MEMCPY3D) -> BackendResult<Option<CUgraphNode>> {
        let Some((mut dst, mut src, mut bytes)) = kernel_copy(params) else { return Ok(None) };
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

#[cfg(test)]
mod tests {
    use super::*;

    fn params(dst: CUmemorytype, src: CUmemorytype) -> CUDA_MEMCPY3D {
        let mut params = super::super::commands::empty_memcpy3d(src, dst);
        (params.dstHost, params.dstDevice, params.srcHost, params.srcDevice) = (0x1000 as *mut c_void, 0x2000, 0x3000 as *const c_void, 0x4000);
        (params.WidthInBytes, params.Height, params.Depth) = (64, 1, 1);
        params
    }

    /// `copy_params` names a memory object's side as unified memory: a kernel copies it as
    /// device memory; images (arrays), host to host, and rows stay other nodes.
    #[test]
    fn kernels_copy_one_row_between_host_and_device_or_unified_memory() {
        use CUmemorytype::{CU_MEMORYTYPE_ARRAY as ARRAY, CU_MEMORYTYPE_DEVICE as DEVICE, CU_MEMORYTYPE_HOST as HOST, CU_MEMORYTYPE_UNIFIED as UNIFIED};
        assert_eq!(kernel_copy(&params(HOST, UNIFIED)), Some((0x1000, 0x4000, 64)));
        assert_eq!(kernel_copy(&params(HOST, DEVICE)), Some((0x1000, 0x4000, 64)));
        assert_eq!(kernel_copy(&params(UNIFIED, HOST)), Some((0x2000, 0x3000, 64)));
        for (dst, src) in [(HOST, ARRAY), (ARRAY, HOST), (HOST, HOST), (UNIFIED, UNIFIED)] {
            assert_eq!(kernel_copy(&params(dst, src)), None, "{dst:?} <- {src:?}");
        }
        let mut rows = params(HOST, UNIFIED);
        rows.Height = 4;
        assert_eq!(kernel_copy(&rows), None);
    }
}
