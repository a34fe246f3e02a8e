//! Kernel launches: each argument as the program last set it, memory ones (buffers and images)
//! relocated, samplers as texture objects.

use super::{prepare, record, Enqueued, UNKNOWN_MEMORY};
use crate::entry::Forward;
use crate::opencl::state::{ArgValue, State};
use crate::opencl::{key, succeeded, Recorded};
use crate::recorder::{Access, Key, Recorder};
use libc::size_t;
use opencl_sys::*;
use std::borrow::Cow;
use trace_format::{Arg, Command, EmbeddedPointer, KernelLaunch, Launch, Param, ParamKind};

/// A kernel argument as the trace binds it.
enum Decoded<'a> {
    Memory(Key, u64),
    Null,
    Local(u64),
    /// Bytes passed by value, borrowed from the argument where it holds them.
    Value(Cow<'a, [u8]>),
    /// Bytes passed by value that hold pointers into memory named by pointer (a SYCL kernel's
    /// structure of USM pointers, such as dpnp's strided indexers): (byte, memory, offset) each.
    ValueWithPointers(&'a [u8], Vec<(u32, Key, u64)>),
    /// A sampler.
    Texture(Key),
}

fn decode<'a>(state: &State, recorder: &Recorder, value: &'a ArgValue) -> Decoded<'a> {
    match value {
        ArgValue::Local(size) => Decoded::Local(*size),
        ArgValue::Svm(0) | ArgValue::NullMemory => Decoded::Null,
        ArgValue::Svm(pointer) => match recorder.locate(*pointer) {
            Some((mem, offset)) => Decoded::Memory(mem, offset),
            None => Decoded::Value(Cow::Owned(pointer.to_ne_bytes().to_vec())),
        },
        ArgValue::Bytes(bytes) => {
            let handle = <[u8; 8]>::try_from(bytes.as_slice()).map(u64::from_ne_bytes);
            match handle {
                Ok(handle) if state.memories.objects.get(&handle).is_some_and(|object| !object.addressing.by_pointer()) => Decoded::Memory(handle, 0),
                Ok(handle) if recorder.texture(handle).is_some() => Decoded::Texture(handle),
                _ => match embedded_pointers(recorder, bytes) {
                    pointers if pointers.is_empty() => Decoded::Value(Cow::Borrowed(bytes)),
                    pointers => Decoded::ValueWithPointers(bytes, pointers),
                },
            }
        }
    }
}

/// The aligned words of a value that point inside memory named by pointer (SVM, USM), which the
/// kernel then reaches through them. Only such memory has addresses: a value cannot name a buffer.
fn embedded_pointers(recorder: &Recorder, bytes: &[u8]) -> Vec<(u32, Key, u64)> {
    let words = bytes.chunks_exact(8).enumerate().map(|(index, word)| (index * 8, u64::from_ne_bytes(word.try_into().unwrap_or_default())));
    words
        .filter(|&(_, word)| word != 0)
        .filter_map(|(at, word)| {
            let (mem, offset) = recorder.locate(word)?;
            (recorder.memory_size(mem) > Some(offset)).then_some((at as u32, mem, offset))
        })
        .collect()
}

/// Every memory argument, read and written (what a kernel does with it is not known).
pub(in crate::opencl) fn kernel_accesses(state: &State, recorder: &Recorder, kernel: cl_kernel) -> Vec<Access> {
    let arguments = state.kernels.get(&key(kernel)).map(|kernel| kernel.values.as_slice()).unwrap_or_default();
    argument_accesses(state, recorder, arguments)
}

/// The memory `arguments` bind, as `kernel_accesses`.
pub(in crate::opencl) fn argument_accesses(state: &State, recorder: &Recorder, arguments: &[Option<ArgValue>]) -> Vec<Access> {
    let mut accesses = Vec::new();
    let access = |mem| Access { mem, write: true, overwrites: false };
    for value in arguments.iter().flatten() {
        match decode(state, recorder, value) {
            Decoded::Memory(mem, _) => accesses.push(access(mem)),
            Decoded::ValueWithPointers(_, pointers) => accesses.extend(pointers.into_iter().map(|(_, mem, _)| access(mem))),
            _ => {}
        }
    }
    accesses
}

/// A launch of `kernel` with its arguments as the program last set them.
pub(in crate::opencl) fn kernel_command(recorder: &mut Recorder, state: &State, kernel: cl_kernel, launch: Launch) -> Result<Command, &'static str> {
    let arguments = &state.kernels.get(&key(kernel)).ok_or("the shim did not see the kernel created")?.values;
    launch_command(recorder, state, key(kernel), arguments, launch)
}

/// A launch of `kernel` with `arguments`.
pub(in crate::opencl) fn launch_command(
    recorder: &mut Recorder,
    state: &State,
    kernel: Key,
    arguments: &[Option<ArgValue>],
    launch: Launch,
) -> Result<Command, &'static str> {
    let mut params = Vec::with_capacity(arguments.len());
    let mut args = Vec::with_capacity(arguments.len());
    for value in arguments {
        let value = value.as_ref().ok_or("an argument the shim did not see set")?;
        let (kind, size, arg) = match decode(state, recorder, value) {
            Decoded::Memory(mem, offset) => {
                let mem = recorder.mem_id(mem).ok_or(UNKNOWN_MEMORY)?;
                (ParamKind::Memory, size_of::<cl_mem>(), Arg::Memory { mem, offset })
            }
            Decoded::Null => (ParamKind::Memory, size_of::<cl_mem>(), Arg::NullMemory),
            Decoded::Local(size) => (ParamKind::Local, size as usize, Arg::Local(size)),
            Decoded::Value(bytes) => (ParamKind::Value, bytes.len(), Arg::Value(bytes.into_owned())),
            Decoded::ValueWithPointers(bytes, pointers) => {
                let relocated = |&(at, mem, offset): &(u32, Key, u64)| Some(EmbeddedPointer { at, mem: recorder.mem_id(mem)?, offset });
                let pointers = pointers.iter().map(relocated).collect::<Option<Vec<_>>>().ok_or(UNKNOWN_MEMORY)?;
                (ParamKind::Value, bytes.len(), Arg::ValueWithPointers { bytes: bytes.to_vec(), pointers })
            }
            Decoded::Texture(sampler) => {
                let texture = recorder.texture_id(sampler).ok_or("it names a sampler the shim did not see created")?;
                (ParamKind::Handle, size_of::<cl_sampler>(), Arg::Texture(texture))
            }
        };
        params.push(Param { offset: 0, size: size as u32, kind });
        args.push(arg);
    }
    let kernel = recorder.kernel_id(kernel, params.into_iter()).ok_or("the shim did not see the kernel created")?;
    Ok(Command::Kernel(KernelLaunch { kernel, args, launch }))
}

unsafe fn launch_kernel(
    forward: &mut Forward<'_, cl_int>,
    enqueued: Enqueued,
    kernel: cl_kernel,
    launch: Launch,
) -> Recorded {
    let prepared = prepare(|state, recorder| kernel_accesses(state, recorder, kernel))?;
    if !succeeded(forward) {
        return Ok(());
    }
    unsafe { record(prepared, enqueued, |recorder, state| kernel_command(recorder, state, kernel, launch)) }
}

/// An ND-range as the API gives it: `work_dim` sizes in each non-null array.
pub(in crate::opencl) unsafe fn nd_range(work_dim: cl_uint, offset: *const size_t, global: *const size_t, local: *const size_t) -> Launch {
    unsafe {
        Launch::NdRange {
            dims: work_dim,
            offset: work_sizes(work_dim, offset, 0).unwrap_or([0; 3]),
            global: work_sizes(work_dim, global, 1).unwrap_or([0; 3]),
            local: work_sizes(work_dim, local, 1),
        }
    }
}

/// The `work_dim` sizes of a non-null array, the dimensions beyond them `missing`.
pub(in crate::opencl) unsafe fn work_sizes(work_dim: cl_uint, array: *const size_t, missing: u64) -> Option<[u64; 3]> {
    let dims = (work_dim as usize).min(3);
    // SAFETY: the call succeeded, so each non-null array holds `work_dim` sizes.
    (!array.is_null()).then(|| std::array::from_fn(|i| if i < dims { unsafe { *array.add(i) as u64 } } else { missing }))
}

pub unsafe fn nd_range_kernel(
    forward: &mut Forward<'_, cl_int>,
    queue: cl_command_queue,
    kernel: cl_kernel,
    work_dim: cl_uint,
    global_work_offset: *const size_t,
    global_work_size: *const size_t,
    local_work_size: *const size_t,
    wait_count: cl_uint,
    waits: *const cl_event,
    event: *mut cl_event,
) -> Recorded {
    let launch = unsafe { nd_range(work_dim, global_work_offset, global_work_size, local_work_size) };
    let enqueued = Enqueued::new("clEnqueueNDRangeKernel", queue, wait_count, waits, event);
    unsafe { launch_kernel(forward, enqueued, kernel, launch) }
}

pub unsafe fn task(
    forward: &mut Forward<'_, cl_int>,
    queue: cl_command_queue,
    kernel: cl_kernel,
    wait_count: cl_uint,
    waits: *const cl_event,
    event: *mut cl_event,
) -> Recorded {
    let launch = Launch::NdRange { dims: 1, offset: [0; 3], global: [1; 3], local: Some([1; 3]) };
    let enqueued = Enqueued::new("clEnqueueTask", queue, wait_count, waits, event);
    unsafe { launch_kernel(forward, enqueued, kernel, launch) }
}
