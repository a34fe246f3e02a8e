//! Texture and surface objects (`cuTexObjectCreate`, `cuSurfObjectCreate`): kernels take them
//! as 64-bit handles, which the replay's own objects replace. The trace keeps each object's
//! descriptions as the driver took them, with the memory they read or write named as memory.

use super::params::Value;
use super::state::with_recorder;
use super::{succeeded, CUdeviceptr, CUresult, Recorded};
use crate::entry::Forward;
use crate::recorder::{Key, Recorder, TextureDesc};
use std::ffi::c_uint;
use trace_format::TextureKind;

/// `CUDA_RESOURCE_DESC` of cuda.h: a type, a 128-byte union and flags.
#[repr(C)]
pub struct ResourceDesc {
    kind: c_uint,
    /// Array and mipmapped-array handles, and linear and pitched memory's address, come first.
    handle_or_address: u64,
    rest: [u8; 120],
    flags: c_uint,
}

/// `CUDA_TEXTURE_DESC` and `CUDA_RESOURCE_VIEW_DESC` of cuda.h, taken as bytes.
pub type TextureDescBytes = [u8; 104];
pub type ViewDescBytes = [u8; 112];

const CU_RESOURCE_TYPE_ARRAY: c_uint = 0;
const CU_RESOURCE_TYPE_LINEAR: c_uint = 2;
const CU_RESOURCE_TYPE_PITCH2D: c_uint = 3;

/// The parameter type a kernel declares a texture or surface object with (both are
/// `unsigned long long` handles).
const HANDLE_TYPE: &str = "unsigned long long";

/// `value`'s bytes.
fn bytes_of<T>(value: &T) -> &[u8] {
    // SAFETY: a plain C struct read as the bytes it occupies.
    unsafe { std::slice::from_raw_parts((value as *const T).cast::<u8>(), std::mem::size_of::<T>()) }
}

/// What the resource names: a tracked array or allocation (key, offset); `Err` with the reason
/// it cannot be recorded.
fn resource(arrays: &super::arrays::Arrays, recorder: &Recorder, desc: &ResourceDesc) -> Result<(Key, u64), &'static str> {
    match desc.kind {
        CU_RESOURCE_TYPE_ARRAY => arrays.get(&(desc.handle_or_address as usize)).map(|array| (array.address, 0)).ok_or("it reads an array the shim did not see created"),
        CU_RESOURCE_TYPE_LINEAR | CU_RESOURCE_TYPE_PITCH2D => {
            recorder.locate(desc.handle_or_address as CUdeviceptr).ok_or(super::commands::UNTRACKED_MEMORY)
        }
        _ => Err("textures over mipmapped arrays are not recorded"),
    }
}

/// Registers object `handle`: its resource description without the address, then the texture
/// and view descriptions where given.
fn created(call: &str, handle: u64, kind: TextureKind, desc: &ResourceDesc, rest: &[&[u8]]) -> Recorded {
    with_recorder(|state, recorder| match resource(&state.arrays, recorder, desc) {
        Ok(resource) => {
            let mut description = bytes_of(desc).to_vec();
            description[8..16].fill(0);
            rest.iter().for_each(|bytes| description.extend_from_slice(bytes));
            recorder.texture_created(handle, TextureDesc { kind, resource: Some(resource), description });
        }
        Err(reason) => {
            recorder.texture_released(handle);
            recorder.partial(call, reason);
        }
    })
}

pub unsafe fn create_texture(
    forward: &mut Forward<'_, CUresult>,
    call: &str,
    texture: *mut u64,
    resource: *const ResourceDesc,
    texture_desc: *const TextureDescBytes,
    view: *const ViewDescBytes,
) -> Recorded {
    // SAFETY: the driver read the descriptions and, having succeeded, wrote the handle.
    let (Some(resource), Some(texture_desc)) = (unsafe { resource.as_ref() }, unsafe { texture_desc.as_ref() }) else { return Ok(()) };
    if !succeeded(forward) {
        return Ok(());
    }
    let mut rest: Vec<&[u8]> = vec![texture_desc];
    rest.extend(unsafe { view.as_ref() }.map(|view| &view[..]));
    created(call, unsafe { *texture }, TextureKind::Sampled, resource, &rest)
}

pub unsafe fn create_surface(forward: &mut Forward<'_, CUresult>, call: &str, surface: *mut u64, resource: *const ResourceDesc) -> Recorded {
    // SAFETY: as in `create_texture`.
    match (succeeded(forward), unsafe { resource.as_ref() }) {
        (true, Some(resource)) => created(call, unsafe { *surface }, TextureKind::Surface, resource, &[]),
        _ => Ok(()),
    }
}

pub unsafe fn destroy(forward: &mut Forward<'_, CUresult>, _call: &str, object: u64) -> Recorded {
    with_recorder(|_, recorder| recorder.texture_released(object))?;
    forward.call();
    Ok(())
}

/// Parameter `index` of kernel `kernel` holding `word`, as a texture or surface object: when
/// `word` is a live object's handle and the kernel does not declare the parameter otherwise.
pub fn parameter(recorder: &Recorder, kernel: Key, index: usize, word: u64) -> Option<Value> {
    let desc = recorder.texture(word)?;
    if recorder.param_type(kernel, index).is_some_and(|declared| declared != HANDLE_TYPE) {
        return None;
    }
    Some(Value::Texture { handle: word, resource: desc.resource.map(|(mem, _)| mem) })
}
