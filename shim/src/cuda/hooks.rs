//! Every CUDA driver function the shim exports, with its C signature and the function that
//! records it, and the driver functions the shim only calls itself (`driver`). Each hook forwards
//! to the function the program would have called: the one its `dlsym` or `cuGetProcAddress`
//! lookup found, else the next definition, else one from any loaded library (a private libcuda).
//! A recording function gets the hook's name, which tells a per-thread-stream variant apart.

#![allow(non_snake_case, clippy::too_many_arguments)]

use super::graph_hooks::{self, CUgraphExec, NodeParams};
use super::graph_read::{AllocNodeParams, CUgraph, CUgraphNode, KernelNodeParams, MemsetNodeParams};
use super::{arrays, commands, contexts, copies, launches, memory, modules, procaddress, rect, streams, sync, textures, CUdeviceptr, CUresult, CUstream};
use crate::interpose::Hook;
use std::ffi::{c_char, c_int, c_uint, c_void};

pub type HostFn = Option<unsafe extern "C" fn(*mut c_void)>;
pub type StreamCallback = Option<unsafe extern "C" fn(CUstream, CUresult, *mut c_void)>;

/// The address of the real function behind `hook`, wherever the process has it.
pub fn real_address(hook: &Hook) -> Option<usize> {
    hook.real().or_else(|| hook.real_in_loaded_libraries())
}

/// Calls the function at `$hook`'s real address as `$real`, or answers `CUDA_ERROR_NOT_FOUND`.
macro_rules! call_real {
    ($hook:expr, $real:ty, $($arg:ident),*) => {
        match $crate::cuda::hooks::real_address($hook) {
            // SAFETY: an address found under this function's name has its type.
            Some(address) => unsafe { std::mem::transmute::<usize, $real>(address)($($arg),*) },
            None => $crate::cuda::CUDA_ERROR_NOT_FOUND,
        }
    };
}

/// A static `Hook` named after `$name`, pointing at `$address`.
macro_rules! hook_slot {
    ($name:ident, $address:expr) => {
        pub static $name: crate::interpose::Hook = crate::interpose::Hook::new(
            match std::ffi::CStr::from_bytes_with_nul(concat!(stringify!($name), "\0").as_bytes()) {
                Ok(name) => name,
                Err(_) => panic!("hook names are C identifiers"),
            },
            $address,
        );
    };
}

/// `unrecorded`: the call goes through and the trace is marked partial; otherwise the function
/// that records the call.
macro_rules! record {
    (unrecorded, $forward:ident, $call:expr, $($arg:ident),*) => {{
        $forward.call();
        super::sync::unrecorded($call)
    }};
    ($($record:ident)::+, $forward:ident, $call:expr, $($arg:ident),*) => {
        // SAFETY: the hook's arguments, as the program passed them to the C function.
        unsafe { $($record)::+($forward, $call, $($arg),*) }
    };
}

macro_rules! hooks {
    ($( $name:ident($($arg:ident: $ty:ty),* $(,)?) => $($record:ident)::+; )*) => {
        /// The real functions, for the hooks and for the shim's own calls.
        pub mod real {
            use super::*;
            $(
                pub unsafe fn $name($($arg: $ty),*) -> CUresult {
                    call_real!(&super::slots::$name, unsafe extern "C" fn($($ty),*) -> CUresult, $($arg),*)
                }
            )*
        }

        $(
            /// # Safety
            /// As the CUDA driver function of this name.
            #[no_mangle]
            pub unsafe extern "C" fn $name($($arg: $ty),*) -> CUresult {
                let real = || unsafe { real::$name($($arg),*) };
                crate::entry::intercept(stringify!($name), &real, |forward| {
                    crate::device_output::driver_call(|| record!($($record)::+, forward, stringify!($name), $($arg),*))
                })
            }
        )*

        #[allow(non_upper_case_globals)]
        pub mod slots {
            $( hook_slot!($name, super::$name as *const std::ffi::c_void); )*
        }

        /// Every CUDA hook, for the exported `dlsym` and `cuGetProcAddress`.
        pub static HOOKS: &[&Hook] = &[$(&slots::$name),*];
    };
}

/// Driver functions the shim calls but does not hook: found like a hook's real function.
macro_rules! driver {
    ($( $name:ident($($arg:ident: $ty:ty),* $(,)?); )*) => {
        pub mod driver {
            use super::*;
            #[allow(non_upper_case_globals)]
            mod slots {
                $( hook_slot!($name, std::ptr::null()); )*
            }
            $(
                pub unsafe fn $name($($arg: $ty),*) -> CUresult {
                    call_real!(&slots::$name, unsafe extern "C" fn($($ty),*) -> CUresult, $($arg),*)
                }
            )*
        }
    };
}

pub type CUcontext = *mut c_void;
pub type CUdevice = c_int;

driver! {
    cuCtxGetCurrent(context: *mut CUcontext);
    cuCtxGetDevice(device: *mut CUdevice);
    cuCtxGetDevice_v2(device: *mut CUdevice, context: CUcontext);
    cuDeviceGetName(name: *mut c_char, len: c_int, device: CUdevice);
    cuDeviceGetAttribute(value: *mut c_int, attribute: c_int, device: CUdevice);
    cuDriverGetVersion(version: *mut c_int);
    cuFuncGetParamInfo(function: *mut c_void, index: usize, offset: *mut usize, size: *mut usize);
    cuKernelGetParamInfo(kernel: *mut c_void, index: usize, offset: *mut usize, size: *mut usize);
    cuPointerGetAttribute(data: *mut c_void, attribute: c_int, pointer: CUdeviceptr);
    cuFuncGetName(name: *mut *const c_char, function: *mut c_void);
    cuFuncGetModule(module: *mut *mut c_void, function: *mut c_void);
    cuKernelGetName(name: *mut *const c_char, kernel: *mut c_void);
    cuKernelGetLibrary(library: *mut *mut c_void, kernel: *mut c_void);
    cuGraphGetNodes(graph: CUgraph, nodes: *mut CUgraphNode, count: *mut usize);
    cuGraphGetEdges_v2(graph: CUgraph, from: *mut CUgraphNode, to: *mut CUgraphNode, edge_data: *mut c_void,
        count: *mut usize);
    cuGraphNodeGetType(node: CUgraphNode, kind: *mut c_int);
    cuGraphKernelNodeGetParams_v2(node: CUgraphNode, params: *mut KernelNodeParams);
    cuGraphMemsetNodeGetParams(node: CUgraphNode, params: *mut MemsetNodeParams);
    cuGraphMemcpyNodeGetParams(node: CUgraphNode, params: *mut rect::Memcpy3D);
    cuGraphChildGraphNodeGetGraph(node: CUgraphNode, graph: *mut CUgraph);
    cuGraphEventRecordNodeGetEvent(node: CUgraphNode, event: *mut *mut c_void);
    cuGraphEventWaitNodeGetEvent(node: CUgraphNode, event: *mut *mut c_void);
    cuGraphMemAllocNodeGetParams(node: CUgraphNode, params: *mut AllocNodeParams);
    cuGraphMemFreeNodeGetParams(node: CUgraphNode, address: *mut u64);
    cuThreadExchangeStreamCaptureMode(mode: *mut c_int);
    cuStreamGetCaptureInfo_v3(stream: CUstream, status: *mut c_int, id: *mut u64, graph: *mut CUgraph,
        dependencies: *mut *const CUgraphNode, edge_data: *mut *const c_void, count: *mut usize);
    cuCtxPushCurrent_v2(context: CUcontext);
    cuCtxPopCurrent_v2(context: *mut CUcontext);
    cuEventCreate(event: *mut *mut c_void, flags: c_uint);
    cuEventDestroy_v2(event: *mut c_void);
    cuStreamGetCtx(stream: CUstream, context: *mut CUcontext);
}

hooks! {
    // Entry points.
    cuGetProcAddress(symbol: *const c_char, pfn: *mut *mut c_void, version: c_int, flags: u64)
        => procaddress::get_proc_address;
    cuGetProcAddress_v2(symbol: *const c_char, pfn: *mut *mut c_void, version: c_int, flags: u64,
        status: *mut c_int) => procaddress::get_proc_address_v2;

    // Modules, libraries and kernels.
    cuModuleLoadData(module: *mut *mut c_void, image: *const c_void) => modules::load_data;
    cuModuleLoadDataEx(module: *mut *mut c_void, image: *const c_void, count: c_uint, options: *mut c_int,
        values: *mut *mut c_void) => modules::load_data_ex;
    cuModuleLoad(module: *mut *mut c_void, path: *const c_char) => modules::load_file;
    cuLibraryLoadFromFile(library: *mut *mut c_void, path: *const c_char, jit_options: *mut c_int,
        jit_values: *mut *mut c_void, jit_count: c_uint, library_options: *mut c_int,
        library_values: *mut *mut c_void, library_count: c_uint) => modules::library_load_file;
    cuModuleLoadFatBinary(module: *mut *mut c_void, fatbin: *const c_void) => modules::load_data;
    cuLibraryLoadData(library: *mut *mut c_void, code: *const c_void, jit_options: *mut c_int,
        jit_values: *mut *mut c_void, jit_count: c_uint, library_options: *mut c_int,
        library_values: *mut *mut c_void, library_count: c_uint) => modules::library_load_data;
    cuModuleGetFunction(function: *mut *mut c_void, module: *mut c_void, name: *const c_char)
        => modules::get_function;
    cuLibraryGetKernel(kernel: *mut *mut c_void, library: *mut c_void, name: *const c_char)
        => modules::get_function;
    cuKernelGetFunction(function: *mut *mut c_void, kernel: *mut c_void) => modules::kernel_function;
    cuFuncSetAttribute(function: *mut c_void, attribute: c_int, value: c_int) => modules::function_attribute;
    cuKernelSetAttribute(attribute: c_int, value: c_int, kernel: *mut c_void, device: c_int) => modules::kernel_attribute;
    cuModuleUnload(module: *mut c_void) => modules::unload;
    cuLibraryUnload(library: *mut c_void) => modules::unload;
    cuModuleGetGlobal_v2(pointer: *mut CUdeviceptr, bytes: *mut usize, module: *mut c_void, name: *const c_char)
        => modules::module_global;
    cuLibraryGetGlobal(pointer: *mut CUdeviceptr, bytes: *mut usize, library: *mut c_void, name: *const c_char)
        => modules::library_global;
    cuLibraryGetManaged(pointer: *mut CUdeviceptr, bytes: *mut usize, library: *mut c_void, name: *const c_char)
        => modules::library_managed;

    // Contexts whose destruction frees memory.
    cuCtxDestroy_v2(context: CUcontext) => contexts::destroy;
    cuDevicePrimaryCtxRetain(context: *mut CUcontext, device: CUdevice) => contexts::primary_retain;
    cuCtxSetLimit(limit: c_int, value: usize) => contexts::set_limit;
    cuDevicePrimaryCtxRelease_v2(device: CUdevice) => contexts::primary_release;
    cuDevicePrimaryCtxReset_v2(device: CUdevice) => contexts::primary_reset;

    // Memory.
    cuMemAlloc_v2(pointer: *mut CUdeviceptr, size: usize) => memory::alloc;
    cuArrayCreate_v2(array: *mut *mut c_void, descriptor: *const arrays::ArrayDescriptor) => arrays::create;
    cuArray3DCreate_v2(array: *mut *mut c_void, descriptor: *const arrays::Array3DDescriptor) => arrays::create_3d;
    cuArrayDestroy(array: *mut c_void) => arrays::destroy;
    cuMipmappedArrayCreate(array: *mut *mut c_void, descriptor: *const arrays::Array3DDescriptor, levels: c_uint) => unrecorded;
    cuTexObjectCreate(texture: *mut u64, resource: *const textures::ResourceDesc, texture_desc: *const textures::TextureDescBytes,
        view: *const textures::ViewDescBytes) => textures::create_texture;
    cuTexObjectDestroy(texture: u64) => textures::destroy;
    cuSurfObjectCreate(surface: *mut u64, resource: *const textures::ResourceDesc) => textures::create_surface;
    cuSurfObjectDestroy(surface: u64) => textures::destroy;
    cuMemAllocAsync(pointer: *mut CUdeviceptr, size: usize, stream: CUstream) => memory::alloc_async;
    cuMemAllocAsync_ptsz(pointer: *mut CUdeviceptr, size: usize, stream: CUstream) => memory::alloc_async;
    cuMemAllocFromPoolAsync(pointer: *mut CUdeviceptr, size: usize, pool: *mut c_void, stream: CUstream)
        => memory::alloc_from_pool_async;
    cuMemAllocFromPoolAsync_ptsz(pointer: *mut CUdeviceptr, size: usize, pool: *mut c_void, stream: CUstream)
        => memory::alloc_from_pool_async;
    cuMemAllocPitch_v2(pointer: *mut CUdeviceptr, pitch: *mut usize, width: usize, height: usize, element_size: c_uint)
        => memory::alloc_pitch;
    cuMemAllocManaged(pointer: *mut CUdeviceptr, size: usize, flags: c_uint) => memory::alloc_managed;
    cuMemFree_v2(pointer: CUdeviceptr) => memory::free;
    cuMemFreeAsync(pointer: CUdeviceptr, stream: CUstream) => memory::free_async;
    cuMemFreeAsync_ptsz(pointer: CUdeviceptr, stream: CUstream) => memory::free_async;
    cuMemAllocHost_v2(pointer: *mut *mut c_void, size: usize) => memory::alloc_host;
    cuMemHostAlloc(pointer: *mut *mut c_void, size: usize, flags: c_uint) => memory::host_alloc;
    cuMemFreeHost(pointer: *mut c_void) => memory::free_host;
    cuMemHostRegister_v2(pointer: *mut c_void, size: usize, flags: c_uint) => memory::host_register;
    cuMemHostUnregister(pointer: *mut c_void) => memory::free_host;
    cuMemHostGetDevicePointer_v2(device_pointer: *mut CUdeviceptr, pointer: *mut c_void, flags: c_uint)
        => memory::host_device_pointer;
    cuMemMap(pointer: CUdeviceptr, size: usize, offset: usize, handle: u64, flags: u64) => memory::map;
    cuMemUnmap(pointer: CUdeviceptr, size: usize) => memory::unmap;

    // Streams, events and synchronization.
    cuStreamCreate(stream: *mut CUstream, flags: c_uint) => streams::create;
    cuStreamCreateWithPriority(stream: *mut CUstream, flags: c_uint, priority: c_int)
        => streams::create_with_priority;
    cuStreamDestroy_v2(stream: CUstream) => streams::destroy;
    cuEventRecord(event: *mut c_void, stream: CUstream) => streams::record_event;
    cuEventRecord_ptsz(event: *mut c_void, stream: CUstream) => streams::record_event;
    cuEventRecordWithFlags(event: *mut c_void, stream: CUstream, flags: c_uint) => streams::record_event_with_flags;
    cuEventRecordWithFlags_ptsz(event: *mut c_void, stream: CUstream, flags: c_uint)
        => streams::record_event_with_flags;
    cuStreamWaitEvent(stream: CUstream, event: *mut c_void, flags: c_uint) => streams::wait_event;
    cuStreamWaitEvent_ptsz(stream: CUstream, event: *mut c_void, flags: c_uint) => streams::wait_event;
    cuStreamSynchronize(stream: CUstream) => sync::synchronize_stream;
    cuStreamSynchronize_ptsz(stream: CUstream) => sync::synchronize_stream;
    cuCtxSynchronize() => sync::synchronize;
    cuCtxSynchronize_v2(context: CUcontext) => sync::synchronize_context;
    cuEventSynchronize(event: *mut c_void) => sync::synchronize_event;
    cuEventQuery(event: *mut c_void) => sync::synchronize_event;
    cuStreamQuery(stream: CUstream) => sync::synchronize_stream;
    cuStreamQuery_ptsz(stream: CUstream) => sync::synchronize_stream;
    cuStreamBeginCapture_v2(stream: CUstream, mode: c_int) => sync::begin_capture;
    cuStreamBeginCapture_v2_ptsz(stream: CUstream, mode: c_int) => sync::begin_capture;
    cuStreamBeginCaptureToGraph(stream: CUstream, graph: CUgraph, dependencies: *const CUgraphNode,
        dependency_data: *const c_void, count: usize, mode: c_int) => sync::begin_capture_to_graph;
    cuStreamBeginCaptureToGraph_ptsz(stream: CUstream, graph: CUgraph, dependencies: *const CUgraphNode,
        dependency_data: *const c_void, count: usize, mode: c_int) => sync::begin_capture_to_graph;
    cuStreamEndCapture(stream: CUstream, graph: *mut *mut c_void) => sync::end_capture;
    cuStreamEndCapture_ptsz(stream: CUstream, graph: *mut *mut c_void) => sync::end_capture;
    cuProfilerStart() => sync::profiler_start;
    cuProfilerStop() => sync::profiler_stop;
    cuLaunchHostFunc(stream: CUstream, function: HostFn, data: *mut c_void) => commands::host_function;
    cuStreamAddCallback(stream: CUstream, callback: StreamCallback, data: *mut c_void, flags: c_uint)
        => commands::stream_callback;
    cuStreamAddCallback_ptsz(stream: CUstream, callback: StreamCallback, data: *mut c_void, flags: c_uint)
        => commands::stream_callback;
    cuLaunchHostFunc_ptsz(stream: CUstream, function: HostFn, data: *mut c_void) => commands::host_function;

    // The program's own graphs.
    cuGraphInstantiateWithFlags(exec: *mut CUgraphExec, graph: CUgraph, flags: u64)
        => graph_hooks::instantiate_with_flags;
    cuGraphInstantiateWithParams(exec: *mut CUgraphExec, graph: CUgraph, params: *mut c_void)
        => graph_hooks::instantiate_with_params;
    cuGraphInstantiateWithParams_ptsz(exec: *mut CUgraphExec, graph: CUgraph, params: *mut c_void)
        => graph_hooks::instantiate_with_params;
    cuGraphConditionalHandleCreate(handle: *mut u64, graph: CUgraph, context: CUcontext, default: c_uint, flags: c_uint)
        => graph_hooks::condition_created;
    cuGraphAddNode(node: *mut CUgraphNode, graph: CUgraph, dependencies: *const CUgraphNode, count: usize,
        params: *mut NodeParams) => graph_hooks::add_node;
    cuGraphAddNode_v2(node: *mut CUgraphNode, graph: CUgraph, dependencies: *const CUgraphNode,
        dependency_data: *const c_void, count: usize, params: *mut NodeParams) => graph_hooks::add_node_v2;
    cuGraphExecKernelNodeSetParams_v2(exec: CUgraphExec, node: CUgraphNode, params: *const KernelNodeParams)
        => graph_hooks::exec_kernel_node_set_params;
    cuGraphExecDestroy(exec: CUgraphExec) => graph_hooks::exec_destroy;
    cuGraphExecUpdate_v2(exec: CUgraphExec, graph: CUgraph, result: *mut c_void) => graph_hooks::exec_update;
    cuGraphExecMemsetNodeSetParams(exec: CUgraphExec, node: CUgraphNode, params: *const MemsetNodeParams,
        context: CUcontext) => graph_hooks::exec_memset_node_set_params;
    cuGraphExecMemcpyNodeSetParams(exec: CUgraphExec, node: CUgraphNode, params: *const rect::Memcpy3D,
        context: CUcontext) => graph_hooks::exec_memcpy_node_set_params;
    cuGraphExecChildGraphNodeSetParams(exec: CUgraphExec, node: CUgraphNode, child: CUgraph)
        => graph_hooks::exec_child_graph_node_set_params;
    cuGraphExecEventRecordNodeSetEvent(exec: CUgraphExec, node: CUgraphNode, event: *mut c_void)
        => graph_hooks::exec_event_node_set_event;
    cuGraphExecEventWaitNodeSetEvent(exec: CUgraphExec, node: CUgraphNode, event: *mut c_void)
        => graph_hooks::exec_event_node_set_event;
    cuGraphExecNodeSetParams(exec: CUgraphExec, node: CUgraphNode, params: *mut NodeParams)
        => graph_hooks::exec_node_set_params;
    cuGraphNodeSetEnabled(exec: CUgraphExec, node: CUgraphNode, enabled: c_uint) => graph_hooks::node_set_enabled;

    // Launches.
    cuGraphLaunch(exec: CUgraphExec, stream: CUstream) => graph_hooks::launch;
    cuGraphLaunch_ptsz(exec: CUgraphExec, stream: CUstream) => graph_hooks::launch;
    cuLaunchKernel(function: *mut c_void, grid_x: c_uint, grid_y: c_uint, grid_z: c_uint, block_x: c_uint,
        block_y: c_uint, block_z: c_uint, shared_bytes: c_uint, stream: CUstream, params: *mut *mut c_void,
        extra: *mut *mut c_void) => launches::launch_kernel;
    cuLaunchKernel_ptsz(function: *mut c_void, grid_x: c_uint, grid_y: c_uint, grid_z: c_uint, block_x: c_uint,
        block_y: c_uint, block_z: c_uint, shared_bytes: c_uint, stream: CUstream, params: *mut *mut c_void,
        extra: *mut *mut c_void) => launches::launch_kernel;
    cuLaunchCooperativeKernel(function: *mut c_void, grid_x: c_uint, grid_y: c_uint, grid_z: c_uint,
        block_x: c_uint, block_y: c_uint, block_z: c_uint, shared_bytes: c_uint, stream: CUstream,
        params: *mut *mut c_void) => launches::launch_cooperative_kernel;
    cuLaunchCooperativeKernel_ptsz(function: *mut c_void, grid_x: c_uint, grid_y: c_uint, grid_z: c_uint,
        block_x: c_uint, block_y: c_uint, block_z: c_uint, shared_bytes: c_uint, stream: CUstream,
        params: *mut *mut c_void) => launches::launch_cooperative_kernel;
    cuLaunchKernelEx(config: *const launches::LaunchConfig, function: *mut c_void, params: *mut *mut c_void,
        extra: *mut *mut c_void) => launches::launch_kernel_ex;
    cuLaunchKernelEx_ptsz(config: *const launches::LaunchConfig, function: *mut c_void, params: *mut *mut c_void,
        extra: *mut *mut c_void) => launches::launch_kernel_ex;

    // Copies and memsets.
    cuMemcpyHtoD_v2(dst: CUdeviceptr, src: *const c_void, bytes: usize) => copies::host_to_device;
    cuMemcpyHtoD_v2_ptds(dst: CUdeviceptr, src: *const c_void, bytes: usize) => copies::host_to_device;
    cuMemcpyDtoH_v2(dst: *mut c_void, src: CUdeviceptr, bytes: usize) => copies::device_to_host;
    cuMemcpyDtoH_v2_ptds(dst: *mut c_void, src: CUdeviceptr, bytes: usize) => copies::device_to_host;
    cuMemcpyDtoD_v2(dst: CUdeviceptr, src: CUdeviceptr, bytes: usize) => copies::device_to_device;
    cuMemcpyDtoD_v2_ptds(dst: CUdeviceptr, src: CUdeviceptr, bytes: usize) => copies::device_to_device;
    cuMemcpyHtoDAsync_v2(dst: CUdeviceptr, src: *const c_void, bytes: usize, stream: CUstream)
        => copies::host_to_device_async;
    cuMemcpyHtoDAsync_v2_ptsz(dst: CUdeviceptr, src: *const c_void, bytes: usize, stream: CUstream)
        => copies::host_to_device_async;
    cuMemcpyDtoHAsync_v2(dst: *mut c_void, src: CUdeviceptr, bytes: usize, stream: CUstream)
        => copies::device_to_host_async;
    cuMemcpyDtoHAsync_v2_ptsz(dst: *mut c_void, src: CUdeviceptr, bytes: usize, stream: CUstream)
        => copies::device_to_host_async;
    cuMemcpyDtoDAsync_v2(dst: CUdeviceptr, src: CUdeviceptr, bytes: usize, stream: CUstream)
        => copies::device_to_device_async;
    cuMemcpyDtoDAsync_v2_ptsz(dst: CUdeviceptr, src: CUdeviceptr, bytes: usize, stream: CUstream)
        => copies::device_to_device_async;
    cuMemcpy(dst: CUdeviceptr, src: CUdeviceptr, bytes: usize) => copies::copy;
    cuMemcpy_ptds(dst: CUdeviceptr, src: CUdeviceptr, bytes: usize) => copies::copy;
    cuMemcpyHtoA_v2(dst: *mut c_void, dst_offset: usize, src: *const c_void, bytes: usize) => arrays::host_to_array;
    cuMemcpyHtoA_v2_ptds(dst: *mut c_void, dst_offset: usize, src: *const c_void, bytes: usize) => arrays::host_to_array;
    cuMemcpyAtoH_v2(dst: *mut c_void, src: *mut c_void, src_offset: usize, bytes: usize) => arrays::array_to_host;
    cuMemcpyAtoH_v2_ptds(dst: *mut c_void, src: *mut c_void, src_offset: usize, bytes: usize) => arrays::array_to_host;
    cuMemcpyDtoA_v2(dst: *mut c_void, dst_offset: usize, src: CUdeviceptr, bytes: usize) => arrays::device_to_array;
    cuMemcpyDtoA_v2_ptds(dst: *mut c_void, dst_offset: usize, src: CUdeviceptr, bytes: usize) => arrays::device_to_array;
    cuMemcpyAtoD_v2(dst: CUdeviceptr, src: *mut c_void, src_offset: usize, bytes: usize) => arrays::array_to_device;
    cuMemcpyAtoD_v2_ptds(dst: CUdeviceptr, src: *mut c_void, src_offset: usize, bytes: usize) => arrays::array_to_device;
    cuMemcpyAtoA_v2(dst: *mut c_void, dst_offset: usize, src: *mut c_void, src_offset: usize, bytes: usize) => arrays::array_to_array;
    cuMemcpyAtoA_v2_ptds(dst: *mut c_void, dst_offset: usize, src: *mut c_void, src_offset: usize, bytes: usize) => arrays::array_to_array;
    cuMemcpyHtoAAsync_v2(dst: *mut c_void, dst_offset: usize, src: *const c_void, bytes: usize, stream: CUstream) => arrays::host_to_array_async;
    cuMemcpyHtoAAsync_v2_ptsz(dst: *mut c_void, dst_offset: usize, src: *const c_void, bytes: usize, stream: CUstream)
        => arrays::host_to_array_async;
    cuMemcpyAtoHAsync_v2(dst: *mut c_void, src: *mut c_void, src_offset: usize, bytes: usize, stream: CUstream) => arrays::array_to_host_async;
    cuMemcpyAtoHAsync_v2_ptsz(dst: *mut c_void, src: *mut c_void, src_offset: usize, bytes: usize, stream: CUstream)
        => arrays::array_to_host_async;
    cuMemcpy3D_v2(copy: *const rect::Memcpy3D) => rect::copy_3d_sync;
    cuMemcpy3D_v2_ptds(copy: *const rect::Memcpy3D) => rect::copy_3d_sync;
    cuMemcpy3DAsync_v2(copy: *const rect::Memcpy3D, stream: CUstream) => rect::copy_3d_async;
    cuMemcpy3DAsync_v2_ptsz(copy: *const rect::Memcpy3D, stream: CUstream) => rect::copy_3d_async;
    cuMemcpyPeer(dst: CUdeviceptr, dst_context: CUcontext, src: CUdeviceptr, src_context: CUcontext, bytes: usize)
        => copies::copy_peer;
    cuMemcpyPeer_ptds(dst: CUdeviceptr, dst_context: CUcontext, src: CUdeviceptr, src_context: CUcontext,
        bytes: usize) => copies::copy_peer;
    cuMemcpyPeerAsync(dst: CUdeviceptr, dst_context: CUcontext, src: CUdeviceptr, src_context: CUcontext,
        bytes: usize, stream: CUstream) => copies::copy_peer_async;
    cuMemcpyPeerAsync_ptsz(dst: CUdeviceptr, dst_context: CUcontext, src: CUdeviceptr, src_context: CUcontext,
        bytes: usize, stream: CUstream) => copies::copy_peer_async;
    cuMemcpyAsync(dst: CUdeviceptr, src: CUdeviceptr, bytes: usize, stream: CUstream) => copies::copy_async;
    cuMemcpyAsync_ptsz(dst: CUdeviceptr, src: CUdeviceptr, bytes: usize, stream: CUstream) => copies::copy_async;
    cuMemsetD8_v2(dst: CUdeviceptr, value: u8, count: usize) => copies::memset_d8;
    cuMemsetD8_v2_ptds(dst: CUdeviceptr, value: u8, count: usize) => copies::memset_d8;
    cuMemsetD16_v2(dst: CUdeviceptr, value: u16, count: usize) => copies::memset_d16;
    cuMemsetD16_v2_ptds(dst: CUdeviceptr, value: u16, count: usize) => copies::memset_d16;
    cuMemsetD32_v2(dst: CUdeviceptr, value: u32, count: usize) => copies::memset_d32;
    cuMemsetD32_v2_ptds(dst: CUdeviceptr, value: u32, count: usize) => copies::memset_d32;
    cuMemsetD8Async(dst: CUdeviceptr, value: u8, count: usize, stream: CUstream) => copies::memset_d8_async;
    cuMemsetD8Async_ptsz(dst: CUdeviceptr, value: u8, count: usize, stream: CUstream) => copies::memset_d8_async;
    cuMemsetD16Async(dst: CUdeviceptr, value: u16, count: usize, stream: CUstream) => copies::memset_d16_async;
    cuMemsetD16Async_ptsz(dst: CUdeviceptr, value: u16, count: usize, stream: CUstream) => copies::memset_d16_async;
    cuMemsetD32Async(dst: CUdeviceptr, value: u32, count: usize, stream: CUstream) => copies::memset_d32_async;
    cuMemsetD32Async_ptsz(dst: CUdeviceptr, value: u32, count: usize, stream: CUstream) => copies::memset_d32_async;
    cuMemcpy2D_v2(copy: *const rect::Memcpy2D) => rect::copy_2d_sync;
    cuMemcpy2D_v2_ptds(copy: *const rect::Memcpy2D) => rect::copy_2d_sync;
    cuMemcpy2DUnaligned_v2(copy: *const rect::Memcpy2D) => rect::copy_2d_sync;
    cuMemcpy2DUnaligned_v2_ptds(copy: *const rect::Memcpy2D) => rect::copy_2d_sync;
    cuMemcpy2DAsync_v2(copy: *const rect::Memcpy2D, stream: CUstream) => rect::copy_2d_async;
    cuMemcpy2DAsync_v2_ptsz(copy: *const rect::Memcpy2D, stream: CUstream) => rect::copy_2d_async;
    cuMemsetD2D8_v2(dst: CUdeviceptr, pitch: usize, value: u8, width: usize, height: usize)
        => rect::memset_2d_d8;
    cuMemsetD2D8_v2_ptds(dst: CUdeviceptr, pitch: usize, value: u8, width: usize, height: usize)
        => rect::memset_2d_d8;
    cuMemsetD2D8Async(dst: CUdeviceptr, pitch: usize, value: u8, width: usize, height: usize,
        stream: CUstream) => rect::memset_2d_d8_async;
    cuMemsetD2D8Async_ptsz(dst: CUdeviceptr, pitch: usize, value: u8, width: usize, height: usize,
        stream: CUstream) => rect::memset_2d_d8_async;
    cuMemsetD2D16_v2(dst: CUdeviceptr, pitch: usize, value: u16, width: usize, height: usize)
        => rect::memset_2d_d16;
    cuMemsetD2D16_v2_ptds(dst: CUdeviceptr, pitch: usize, value: u16, width: usize, height: usize)
        => rect::memset_2d_d16;
    cuMemsetD2D16Async(dst: CUdeviceptr, pitch: usize, value: u16, width: usize, height: usize,
        stream: CUstream) => rect::memset_2d_d16_async;
    cuMemsetD2D16Async_ptsz(dst: CUdeviceptr, pitch: usize, value: u16, width: usize, height: usize,
        stream: CUstream) => rect::memset_2d_d16_async;
    cuMemsetD2D32_v2(dst: CUdeviceptr, pitch: usize, value: u32, width: usize, height: usize)
        => rect::memset_2d_d32;
    cuMemsetD2D32_v2_ptds(dst: CUdeviceptr, pitch: usize, value: u32, width: usize, height: usize)
        => rect::memset_2d_d32;
    cuMemsetD2D32Async(dst: CUdeviceptr, pitch: usize, value: u32, width: usize, height: usize,
        stream: CUstream) => rect::memset_2d_d32_async;
    cuMemsetD2D32Async_ptsz(dst: CUdeviceptr, pitch: usize, value: u32, width: usize, height: usize,
        stream: CUstream) => rect::memset_2d_d32_async;
}
