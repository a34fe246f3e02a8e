//! Driver parameter blocks for recorded commands, shared by graph building, graph updates and
//! eager replay: kernel arguments and launch shape, 3D copies, memsets.

use super::driver::check;
use super::images::{Array, TextureObject};
use super::memory::HostBuffer;
use super::objects::Objects;
use crate::relocation::Relocation;
use crate::extent::span as host_span;
use crate::backend::{BackendError, BackendResult};
use cudarc::driver::sys::{self, CUdeviceptr, CUgraphConditionalHandle, CUmemorytype, CUDA_MEMCPY3D, CUDA_MEMSET_NODE_PARAMS};
use std::collections::HashMap;
use std::ffi::c_void;
use trace_format::{Arg, Copy, Extent, Fill, KernelLaunch, Launch, MemId, Param, Place, TextureId};

/// Where each memory object lies for the commands being built: where the replay placed it,
/// unless the partition allocates it itself (a graph's allocation node, an eager
/// `cuMemAllocAsync`), which gives it an address of its own; and the handle each condition of
/// the graph being built got (`Arg::Condition`).
#[derive(Clone, Copy)]
pub struct Addresses<'a> {
    placed: &'a [CUdeviceptr],
    allocated: &'a HashMap<MemId, CUdeviceptr>,
    conditions: Option<&'a HashMap<u32, CUgraphConditionalHandle>>,
    /// Where the command's copy to the host lands, when what it delivers is compared.
    landing: Option<&'a HostBuffer>,
    /// The replay's texture and surface objects, by `TextureId` index.
    textures: &'a [TextureObject],
    /// Moves addresses into loaded modules that arguments pass by value.
    relocation: Option<&'a Relocation>,
}

impl<'a> Addresses<'a> {
    pub fn new(placed: &'a [CUdeviceptr], allocated: &'a HashMap<MemId, CUdeviceptr>) -> Addresses<'a> {
        Addresses { placed, allocated, conditions: None, landing: None, textures: &[], relocation: None }
    }

    /// With the addresses into loaded modules that arguments may pass by value moved.
    pub fn with_relocation(self, relocation: &'a Relocation) -> Addresses<'a> {
        Addresses { relocation: Some(relocation), ..self }
    }

    /// With the replay's texture and surface objects.
    pub fn with_textures(self, textures: &'a [TextureObject]) -> Addresses<'a> {
        Addresses { textures, ..self }
    }

    fn module_words(&self, mut bytes: Vec<u8>) -> Vec<u8> {
        if let Some(relocation) = self.relocation {
            relocation.module_words_to_replay(&mut bytes);
        }
        bytes
    }

    fn texture(&self, index: usize, texture: TextureId) -> BackendResult<u64> {
        self.textures
            .get(texture.index())
            .map(|object| object.handle)
            .ok_or_else(|| BackendError::Unsupported(format!("argument {index} names texture {texture}, which is not in the trace")))
    }

    /// With the buffer a copy to the host lands in (else the shared sink).
    pub fn landing_in(self, landing: Option<&'a HostBuffer>) -> Addresses<'a> {
        Addresses { landing, ..self }
    }

    /// With the handles of a graph's conditions.
    pub fn with_conditions(self, conditions: &'a HashMap<u32, CUgraphConditionalHandle>) -> Addresses<'a> {
        Addresses { conditions: Some(conditions), ..self }
    }

    /// The handle the graph being built gave `condition`.
    pub fn condition(&self, condition: u32) -> BackendResult<CUgraphConditionalHandle> {
        self.conditions.and_then(|conditions| conditions.get(&condition)).copied().ok_or_else(|| {
            BackendError::Unsupported(format!("condition {condition} is not one of a conditional of the graph being built"))
        })
    }

    /// The address the partition's own allocation gave `mem`, if it allocates it.
    pub fn allocated(&self, mem: MemId) -> Option<CUdeviceptr> {
        self.allocated.get(&mem).copied()
    }

    fn of(&self, mem: MemId) -> Option<CUdeviceptr> {
        self.allocated(mem).or_else(|| self.placed.get(mem.index()).copied())
    }
}

/// The dynamic shared memory a function may use before it opts in to more.
const DEFAULT_DYNAMIC_SHARED_BYTES: u32 = 48 * 1024;

/// A kernel launch ready for the driver. Owns the argument bytes `kernel_params` points into.
pub struct KernelCall {
    _values: Vec<Vec<u8>>,
    pointers: Vec<*mut c_void>,
    pub params: sys::CUDA_KERNEL_NODE_PARAMS,
    /// Cluster shape and cooperative launch, as launch attributes.
    pub attributes: Vec<sys::CUlaunchAttribute>,
    /// The kernel, its name and its launch's shape, for errors.
    launch_described: String,
}

impl KernelCall {
    pub fn new(objects: &Objects, addresses: Addresses<'_>, launch: &KernelLaunch) -> BackendResult<KernelCall> {
        let loaded = objects
            .functions
            .get(launch.kernel.index())
            .ok_or_else(|| BackendError::Unsupported(format!("kernel {} is not in the trace", launch.kernel)))?;
        let function = &loaded.function;
        let mut values = pack_args(&loaded.params, &launch.args, addresses).map_err(|error| match error {
            BackendError::Unsupported(detail) => BackendError::Unsupported(format!("kernel {}: {detail}", launch.kernel)),
            other => other,
        })?;
        let Launch::Grid { grid, block, shared_bytes, cluster, cooperative } = launch.launch else {
            return Err(BackendError::Unsupported("a CUDA kernel needs a grid launch, not an ND-range".into()));
        };
        if shared_bytes > DEFAULT_DYNAMIC_SHARED_BYTES {
            // The program opted its own function handle in (cuBLAS kernels do); this one must too.
            let attribute = sys::CUfunction_attribute::CU_FUNC_ATTRIBUTE_MAX_DYNAMIC_SHARED_SIZE_BYTES;
            // SAFETY: a function of a loaded module.
            check(unsafe { sys::cuFuncSetAttribute(*function, attribute, shared_bytes as i32) }, "cuFuncSetAttribute")
                .map_err(|error| BackendError::Unsupported(format!("kernel {} ({}) with {shared_bytes} bytes of dynamic shared memory: {error}", launch.kernel, loaded.name)))?;
        }
        let mut pointers: Vec<*mut c_void> = values.iter_mut().map(|v| v.as_mut_ptr().cast()).collect();
        let params = sys::CUDA_KERNEL_NODE_PARAMS {
            func: *function,
            gridDimX: grid[0],
            gridDimY: grid[1],
            gridDimZ: grid[2],
            blockDimX: block[0],
            blockDimY: block[1],
            blockDimZ: block[2],
            sharedMemBytes: shared_bytes,
            kernelParams: pointers.as_mut_ptr(),
            extra: std::ptr::null_mut(),
            // A function handle, so no library kernel and no context of its own.
            kern: std::ptr::null_mut(),
            ctx: std::ptr::null_mut(),
        };
        let shape = match cluster {
            Some(cluster) => format!("grid {grid:?}, block {block:?}, cluster {cluster:?}"),
            None => format!("grid {grid:?}, block {block:?}"),
        };
        let launch_described = format!("kernel {} ({}) with {shape}, {shared_bytes} bytes of shared memory{}", launch.kernel, loaded.name, if cooperative { ", cooperative" } else { "" });
        Ok(KernelCall { _values: values, pointers, params, attributes: launch_attributes(cluster, cooperative), launch_described })
    }

    /// Names the launch in a driver's refusal of it (`call`), which alone says only what was wrong.
    pub fn refused(&self, call: &str, error: BackendError) -> BackendError {
        BackendError::Unsupported(format!("{call} of {}: {error}", self.launch_described))
    }

    /// The parameters with `kernelParams` pointing at this call's own storage.
    pub fn node_params(&mut self) -> sys::CUDA_KERNEL_NODE_PARAMS {
        self.params.kernelParams = self.pointers.as_mut_ptr();
        self.params
    }
}

/// The bytes of each parameter of a launch: values as recorded (zero-padded to the parameter's
/// size), memory relocated to `addresses` (each memory object's replay address) plus its offset.
pub fn pack_args(params: &[Param], args: &[Arg], addresses: Addresses<'_>) -> BackendResult<Vec<Vec<u8>>> {
    if args.len() != params.len() {
        return Err(BackendError::Unsupported(format!("it takes {} parameters, the launch gives {}", params.len(), args.len())));
    }
    let mut values = Vec::with_capacity(params.len());
    for (index, (arg, param)) in args.iter().zip(params).enumerate() {
        let mut bytes = match arg {
            Arg::Value(bytes) => addresses.module_words(bytes.clone()),
            Arg::Memory { mem, offset } => relocated(addresses, index, *mem, *offset)?.to_le_bytes().to_vec(),
            Arg::ValueWithPointers { bytes, pointers } => {
                let mut bytes = addresses.module_words(bytes.clone());
                let length = bytes.len();
                for pointer in pointers {
                    let address = relocated(addresses, index, pointer.mem, pointer.offset)?;
                    let at = pointer.at as usize;
                    let word = bytes.get_mut(at..at + 8).ok_or_else(|| {
                        BackendError::Unsupported(format!("argument {index} has {} bytes; a pointer at byte {at} does not fit", length))
                    })?;
                    word.copy_from_slice(&address.to_le_bytes());
                }
                bytes
            }
            Arg::NullMemory => 0u64.to_le_bytes().to_vec(),
            Arg::Condition(condition) => addresses.condition(*condition)?.to_le_bytes().to_vec(),
            Arg::Texture(texture) => addresses.texture(index, *texture)?.to_le_bytes().to_vec(),
            Arg::Local(_) => return Err(BackendError::Unsupported(format!("argument {index}: CUDA kernels take no local-memory arguments"))),
        };
        if bytes.len() > param.size as usize {
            return Err(BackendError::Unsupported(format!("argument {index} has {} bytes, the parameter {}", bytes.len(), param.size)));
        }
        bytes.resize(param.size as usize, 0);
        values.push(bytes);
    }
    Ok(values)
}

/// Where `offset` bytes into memory `mem` lies on this device.
fn relocated(addresses: Addresses<'_>, index: usize, mem: MemId, offset: u64) -> BackendResult<CUdeviceptr> {
    let base = addresses
        .of(mem)
        .ok_or_else(|| BackendError::Unsupported(format!("argument {index} names memory {mem}, which is not in the trace")))?;
    Ok(base.wrapping_add(offset))
}

fn launch_attributes(cluster: Option<[u32; 3]>, cooperative: bool) -> Vec<sys::CUlaunchAttribute> {
    let mut attributes = Vec::new();
    // SAFETY (zeroed): plain C unions and structs for which all zeroes is valid.
    if let Some([x, y, z]) = cluster {
        let mut attribute: sys::CUlaunchAttribute = unsafe { std::mem::zeroed() };
        attribute.id = sys::CUlaunchAttributeID::CU_LAUNCH_ATTRIBUTE_CLUSTER_DIMENSION;
        attribute.value.clusterDim.x = x;
        attribute.value.clusterDim.y = y;
        attribute.value.clusterDim.z = z;
        attributes.push(attribute);
    }
    if cooperative {
        let mut attribute: sys::CUlaunchAttribute = unsafe { std::mem::zeroed() };
        attribute.id = sys::CUlaunchAttributeID::CU_LAUNCH_ATTRIBUTE_COOPERATIVE;
        attribute.value.cooperative = 1;
        attributes.push(attribute);
    }
    attributes
}

/// One side of a copy as the driver addresses it.
struct Side {
    memory_type: CUmemorytype,
    address: CUdeviceptr,
    /// Bytes available from `address`, for the bounds check.
    available: u64,
    /// An image's array, and the packed byte position the copy starts from.
    array: Option<(Array, u64)>,
}

fn side(objects: &Objects, addresses: Addresses<'_>, place: &Place, source: bool) -> BackendResult<Side> {
    match place {
        Place::Memory { mem, offset } => {
            let (Some(base), Some(&size)) = (addresses.of(*mem), objects.memories.sizes.get(mem.index())) else {
                return Err(BackendError::Unsupported(format!("a copy names memory {mem}, which is not in the trace")));
            };
            let available = size.saturating_sub(*offset);
            if let Some(&array) = objects.memories.arrays.get(&mem.index()) {
                return Ok(Side { memory_type: CUmemorytype::CU_MEMORYTYPE_ARRAY, address: 0, available, array: Some((array, *offset)) });
            }
            // Unified addressing: the driver finds out whether it is device, host or managed memory.
            Ok(Side { memory_type: CUmemorytype::CU_MEMORYTYPE_UNIFIED, address: base + offset, available, array: None })
        }
        Place::Host { data } if source => {
            let blob = data.ok_or_else(|| BackendError::Unsupported("a copy from host memory has no recorded data".into()))?;
            let buffer = objects.sources.get(&blob).ok_or_else(|| BackendError::Unsupported(format!("blob {blob} was not loaded")))?;
            Ok(Side { memory_type: CUmemorytype::CU_MEMORYTYPE_HOST, address: buffer.ptr as CUdeviceptr, available: buffer.len as u64, array: None })
        }
        Place::Host { .. } => {
            let landing = addresses.landing.unwrap_or(&objects.sink);
            Ok(Side { memory_type: CUmemorytype::CU_MEMORYTYPE_HOST, address: landing.ptr as CUdeviceptr, available: landing.len as u64, array: None })
        }
    }
}

/// A copy as one 3D copy description (linear copies are one row). An image's side starts at
/// the texel its packed byte position names; a linear copy with one becomes the rows or slices
/// it covers.
pub fn copy_params(objects: &Objects, addresses: Addresses<'_>, copy: &Copy) -> BackendResult<CUDA_MEMCPY3D> {
    let src = side(objects, addresses, &copy.src, true)?;
    let dst = side(objects, addresses, &copy.dst, false)?;
    for (which, side) in [("source", &src), ("destination", &dst)] {
        let span = host_span(&copy.extent, which == "source");
        if span > side.available {
            return Err(BackendError::Unsupported(format!("a copy's {which} spans {span} bytes, only {} are there", side.available)));
        }
    }
    let mut params = empty_memcpy3d(src.memory_type, dst.memory_type);
    set_address(&mut params.srcHost, &mut params.srcDevice, &src);
    let mut dst_host = std::ptr::null();
    set_address(&mut dst_host, &mut params.dstDevice, &dst);
    params.dstHost = dst_host as *mut c_void;
    match copy.extent {
        Extent::Linear { bytes } => {
            let array_side = src.array.or(dst.array);
            let [width, height, depth] = match array_side {
                Some((array, at)) => array.linear_region(at, bytes)?,
                None => [bytes as usize, 1, 1],
            };
            // Pitches at least the width, as the driver checks them.
            params.WidthInBytes = width;
            params.srcPitch = width;
            params.dstPitch = width;
            params.srcHeight = height;
            params.dstHeight = height;
            params.Height = height;
            params.Depth = depth;
            for (source, side) in [(true, &src), (false, &dst)] {
                if let Some((array, at)) = side.array {
                    array.set_side(&mut params, source, at);
                }
            }
        }
        Extent::Rect { src_origin, dst_origin, region, src_row_pitch, src_slice_pitch, dst_row_pitch, dst_slice_pitch } => {
            let [width, height, depth] = region.map(|r| r as usize);
            params.srcXInBytes = src_origin[0] as usize;
            params.srcY = src_origin[1] as usize;
            params.srcZ = src_origin[2] as usize;
            params.dstXInBytes = dst_origin[0] as usize;
            params.dstY = dst_origin[1] as usize;
            params.dstZ = dst_origin[2] as usize;
            params.srcPitch = src_row_pitch.max(region[0]) as usize;
            params.dstPitch = dst_row_pitch.max(region[0]) as usize;
            params.srcHeight = rows_per_slice(src_slice_pitch, params.srcPitch, height);
            params.dstHeight = rows_per_slice(dst_slice_pitch, params.dstPitch, height);
            params.WidthInBytes = width;
            params.Height = height.max(1);
            params.Depth = depth.max(1);
            // An image side's origin and pitches are its packed layout's: together one position.
            let packed = |origin: [u64; 3], row: u64, slice: u64| origin[0].saturating_add(origin[1].saturating_mul(row)).saturating_add(origin[2].saturating_mul(slice));
            if let Some((array, at)) = src.array {
                array.set_side(&mut params, true, at.saturating_add(packed(src_origin, src_row_pitch, src_slice_pitch)));
            }
            if let Some((array, at)) = dst.array {
                array.set_side(&mut params, false, at.saturating_add(packed(dst_origin, dst_row_pitch, dst_slice_pitch)));
            }
        }
    }
    Ok(params)
}

/// A copy description with nothing set but the memory types (`mem::zeroed` would be undefined
/// behaviour: `CUmemorytype` has no zero value).
pub fn empty_memcpy3d(src: CUmemorytype, dst: CUmemorytype) -> CUDA_MEMCPY3D {
    CUDA_MEMCPY3D {
        srcXInBytes: 0,
        srcY: 0,
        srcZ: 0,
        srcLOD: 0,
        srcMemoryType: src,
        srcHost: std::ptr::null(),
        srcDevice: 0,
        srcArray: std::ptr::null_mut(),
        reserved0: std::ptr::null_mut(),
        srcPitch: 0,
        srcHeight: 0,
        dstXInBytes: 0,
        dstY: 0,
        dstZ: 0,
        dstLOD: 0,
        dstMemoryType: dst,
        dstHost: std::ptr::null_mut(),
        dstDevice: 0,
        dstArray: std::ptr::null_mut(),
        reserved1: std::ptr::null_mut(),
        dstPitch: 0,
        dstHeight: 0,
        WidthInBytes: 0,
        Height: 0,
        Depth: 0,
    }
}

fn set_address(host: &mut *const c_void, device: &mut CUdeviceptr, side: &Side) {
    if side.memory_type == CUmemorytype::CU_MEMORYTYPE_HOST {
        *host = side.address as *const c_void;
    } else if side.array.is_none() {
        *device = side.address;
    }
}

fn rows_per_slice(slice_pitch: u64, row_pitch: usize, height: usize) -> usize {
    if slice_pitch == 0 || row_pitch == 0 {
        height.max(1)
    } else {
        (slice_pitch as usize / row_pitch).max(1)
    }
}

/// A fill as a memset: 1, 2 or 4-byte elements, linear or 2D.
pub fn memset_params(objects: &Objects, addresses: Addresses<'_>, fill: &Fill) -> BackendResult<CUDA_MEMSET_NODE_PARAMS> {
    let element = fill.pattern.len();
    if !matches!(element, 1 | 2 | 4) {
        return Err(BackendError::Unsupported(format!("a CUDA memset has a 1, 2 or 4-byte pattern, not {element} bytes")));
    }
    let mut value = [0u8; 4];
    value[..element].copy_from_slice(&fill.pattern);
    let (Some(base), Some(&size)) = (addresses.of(fill.mem), objects.memories.sizes.get(fill.mem.index())) else {
        return Err(BackendError::Unsupported(format!("a fill names memory {}, which is not in the trace", fill.mem)));
    };
    if objects.memories.arrays.contains_key(&fill.mem.index()) {
        return Err(BackendError::Unsupported(format!("a fill names memory {}, an image, which CUDA memsets cannot fill", fill.mem)));
    }
    let (pitch, width, height) = match fill.rows {
        Some([pitch, width, height]) => (pitch, width, height),
        None if fill.bytes.is_multiple_of(element as u64) => (fill.bytes, fill.bytes / element as u64, 1),
        None => return Err(BackendError::Unsupported(format!("a fill of {} bytes is not whole {element}-byte elements", fill.bytes))),
    };
    // In u128: a trace's numbers cannot overflow it, so the bounds check cannot wrap.
    let end = u128::from(fill.offset) + u128::from(pitch) * u128::from(height.saturating_sub(1)) + u128::from(width) * element as u128;
    if end > u128::from(size) {
        return Err(BackendError::Unsupported(format!("a fill reaches byte {end} of memory {} of {size} bytes", fill.mem)));
    }
    Ok(CUDA_MEMSET_NODE_PARAMS {
        dst: base + fill.offset,
        pitch: pitch as usize,
        value: u32::from_le_bytes(value),
        elementSize: element as u32,
        width: width as usize,
        height: height as usize,
    })
}
