//! Kernel parameters: their layout as the driver reports it, and their values decoded from the
//! launch, pointers into tracked allocations as (allocation, offset).

use super::hooks::driver;
use super::state::Layout;
use super::CUDA_SUCCESS;
use crate::recorder::Key;
use std::ffi::c_void;
use trace_format::ParamKind;

/// `CUDA_ERROR_INVALID_VALUE`: what the driver answers for an index past the last parameter.
const CUDA_ERROR_INVALID_VALUE: u32 = 1;
/// More parameters than a kernel can take (4 KiB of 1-byte ones, with room for 32 KiB).
const MAX_PARAMS: usize = 32 * 1024;

type ParamInfo = unsafe fn(*mut c_void, usize, *mut usize, *mut usize) -> u32;

/// Every parameter's (offset, size) through one query; `None` if it does not take the handle.
fn layout_through(query: ParamInfo, function: *mut c_void) -> Option<Layout> {
    let mut layout = Vec::new();
    for index in 0..MAX_PARAMS {
        let (mut offset, mut size) = (0usize, 0usize);
        // SAFETY: out-parameters of the right types; the handle came from the driver.
        match unsafe { query(function, index, &mut offset, &mut size) } {
            CUDA_SUCCESS => layout.push((u32::try_from(offset).ok()?, u32::try_from(size).ok()?)),
            CUDA_ERROR_INVALID_VALUE => return Some(layout.into()),
            _ => return None,
        }
    }
    None
}

/// A launched handle's parameters: as a `CUfunction`, else as the `CUkernel` the CUDA runtime
/// passes in its place.
pub fn layout(function: *mut c_void) -> Option<Layout> {
    let as_function = layout_through(|f, i, o, s| unsafe { driver::cuFuncGetParamInfo(f, i, o, s) }, function);
    if as_function.as_ref().is_some_and(|layout| !layout.is_empty()) {
        return as_function;
    }
    // An empty answer may be a refusal in disguise: the kernel's own query decides then.
    layout_through(|f, i, o, s| unsafe { driver::cuKernelGetParamInfo(f, i, o, s) }, function).or(as_function)
}

/// A device address inside a by-value parameter: at byte `at`, `offset` bytes into `mem`.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub struct Embedded {
    pub at: u32,
    pub mem: Key,
    pub offset: u64,
}

/// A parameter as the trace binds it.
#[derive(Clone, Debug, PartialEq, Eq)]
pub enum Value {
    /// A pointer `offset` bytes into tracked allocation `mem`.
    Memory { mem: Key, offset: u64 },
    Bytes(Vec<u8>),
    /// A structure whose aligned 8-byte words include addresses in tracked allocations
    /// (PyTorch's and cuBLAS's kernels take their pointers this way).
    BytesWithPointers { bytes: Vec<u8>, pointers: Vec<Embedded> },
    /// The handle of a conditional of the kernel's graph, by the number the trace gives it.
    Condition(u32),
    /// A texture or surface object (its handle) and the memory it reads or writes, if tracked.
    Texture { handle: Key, resource: Option<Key> },
}

impl Value {
    pub fn kind(&self) -> ParamKind {
        match self {
            Value::Memory { .. } => ParamKind::Memory,
            Value::Bytes(_) | Value::BytesWithPointers { .. } | Value::Condition(_) | Value::Texture { .. } => ParamKind::Value,
        }
    }

    /// The allocations the parameter points into.
    pub fn memories(&self) -> impl Iterator<Item = Key> + '_ {
        let (single, pointers) = match self {
            Value::Memory { mem, .. } => (Some(*mem), &[][..]),
            Value::Bytes(_) | Value::Condition(_) => (None, &[][..]),
            Value::Texture { resource, .. } => (*resource, &[][..]),
            Value::BytesWithPointers { pointers, .. } => (None, pointers.as_slice()),
        };
        single.into_iter().chain(pointers.iter().map(|pointer| pointer.mem))
    }
}

/// Decodes each parameter's bytes: a pointer-sized one inside a tracked allocation (`locate`)
/// becomes `Value::Memory`, else one that `texture` (given its index) takes for a live texture
/// or surface object becomes that; a larger one keeps its bytes with the tracked addresses
/// found at its 8-byte-aligned offsets (parameters start aligned to their own alignment, so a
/// pointer member sits at a multiple of 8).
pub fn decode(arguments: &[impl AsRef<[u8]>], locate: impl Fn(u64) -> Option<(Key, u64)>, texture: impl Fn(usize, u64) -> Option<Value>) -> Vec<Value> {
    let tracked = |word: u64| if word == 0 { None } else { locate(word) };
    arguments
        .iter()
        .map(AsRef::as_ref)
        .enumerate()
        .map(|(index, bytes)| match <[u8; 8]>::try_from(bytes) {
            Ok(word) => {
                let word = u64::from_ne_bytes(word);
                match tracked(word) {
                    Some((mem, offset)) => Value::Memory { mem, offset },
                    None => texture(index, word).unwrap_or_else(|| Value::Bytes(bytes.to_vec())),
                }
            }
            Err(_) => {
                let words = bytes.chunks_exact(8).enumerate().filter_map(|(index, word)| Some((index, u64::from_ne_bytes(word.try_into().ok()?))));
                let pointers: Vec<Embedded> =
                    words.filter_map(|(index, word)| tracked(word).map(|(mem, offset)| Embedded { at: index as u32 * 8, mem, offset })).collect();
                match pointers.is_empty() {
                    true => Value::Bytes(bytes.to_vec()),
                    false => Value::BytesWithPointers { bytes: bytes.to_vec(), pointers },
                }
            }
        })
        .collect()
}

/// `CU_LAUNCH_PARAM_BUFFER_POINTER`, `CU_LAUNCH_PARAM_BUFFER_SIZE`, `CU_LAUNCH_PARAM_END`.
const BUFFER_POINTER: usize = 1;
const BUFFER_SIZE: usize = 2;
const END: usize = 0;

/// Each parameter's bytes as the launch passes them: `params[i]` points at parameter i, or
/// `extra` names one packed buffer. `None` when neither holds them all.
///
/// # Safety
/// As `each_argument`.
pub unsafe fn arguments<'a>(layout: &[(u32, u32)], params: *mut *mut c_void, extra: *mut *mut c_void) -> Option<Vec<&'a [u8]>> {
    let mut arguments = Vec::with_capacity(layout.len());
    // SAFETY: as the caller promises.
    unsafe { each_argument(layout, params, extra, |bytes| arguments.push(bytes)) }.then_some(arguments)
}

/// Hands `visit` each parameter's bytes in order (see `arguments`); false when the launch does
/// not hold them all.
///
/// # Safety
/// The arguments of a launch the driver accepted, with `layout` the kernel's; the bytes are
/// the program's, valid while its call lasts (`'a`).
pub unsafe fn each_argument<'a>(layout: &[(u32, u32)], params: *mut *mut c_void, extra: *mut *mut c_void, mut visit: impl FnMut(&'a [u8])) -> bool {
    if layout.is_empty() {
        return true;
    }
    if !params.is_null() {
        for (index, &(_, size)) in layout.iter().enumerate() {
            // SAFETY: the driver read `size` bytes at each parameter's pointer.
            let pointer = unsafe { *params.add(index) };
            if pointer.is_null() {
                return false;
            }
            visit(unsafe { std::slice::from_raw_parts(pointer.cast::<u8>(), size as usize) });
        }
        return true;
    }
    let (mut buffer, mut length) = (std::ptr::null::<u8>(), 0usize);
    let mut entry = extra;
    // SAFETY: `extra` is a list of (name, value) pairs ending with CU_LAUNCH_PARAM_END.
    while !entry.is_null() && unsafe { *entry } as usize != END {
        let (name, value) = unsafe { (*entry as usize, *entry.add(1)) };
        match name {
            BUFFER_POINTER => buffer = value.cast_const().cast(),
            BUFFER_SIZE if !value.is_null() => length = unsafe { *value.cast::<usize>() },
            _ => {}
        }
        entry = unsafe { entry.add(2) };
    }
    if buffer.is_null() {
        return false;
    }
    // SAFETY: the driver read `length` bytes of the packed buffer.
    let packed = unsafe { std::slice::from_raw_parts(buffer, length) };
    for &(offset, size) in layout {
        match packed.get(offset as usize..(offset + size) as usize) {
            Some(bytes) => visit(bytes),
            None => return false,
        }
    }
    true
}
