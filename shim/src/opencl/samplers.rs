//! Samplers: texture objects of kind `Sampler` whose description is their property list
//! (`[name, value, ...]` as little-endian `u64`s, without the terminating 0), which replay
//! passes to `clCreateSamplerWithProperties`.

use super::state::{with_recorder, with_state};
use super::{created, key, succeeded, Recorded};
use crate::entry::Forward;
use crate::recorder::TextureDesc;
use opencl_sys::*;
use trace_format::TextureKind;

/// More properties than any sampler has: a list without its 0 within them is not read further.
const MOST_PROPERTIES: usize = 32;

pub unsafe fn create_sampler(
    forward: &mut Forward<'_, cl_sampler>,
    _context: cl_context,
    normalized_coords: cl_bool,
    addressing_mode: cl_addressing_mode,
    filter_mode: cl_filter_mode,
    errcode_ret: *mut cl_int,
) -> Recorded {
    let Some(sampler) = (unsafe { created(forward, errcode_ret) }) else { return Ok(()) };
    let properties = [
        CL_SAMPLER_NORMALIZED_COORDS.into(),
        normalized_coords.into(),
        CL_SAMPLER_ADDRESSING_MODE.into(),
        addressing_mode.into(),
        CL_SAMPLER_FILTER_MODE.into(),
        filter_mode.into(),
    ];
    sampler_created(sampler, &properties)
}

pub unsafe fn create_sampler_with_properties(
    forward: &mut Forward<'_, cl_sampler>,
    _context: cl_context,
    properties: *const cl_sampler_properties,
    errcode_ret: *mut cl_int,
) -> Recorded {
    let Some(sampler) = (unsafe { created(forward, errcode_ret) }) else { return Ok(()) };
    let mut listed = Vec::new();
    // SAFETY: the call succeeded, so a non-null list is 0-terminated name-value pairs.
    while !properties.is_null() && listed.len() < 2 * MOST_PROPERTIES {
        let name = unsafe { *properties.add(listed.len()) };
        if name == 0 {
            break;
        }
        listed.extend([name, unsafe { *properties.add(listed.len() + 1) }]);
    }
    sampler_created(sampler, &listed)
}

fn sampler_created(sampler: cl_sampler, properties: &[u64]) -> Recorded {
    let description = properties.iter().flat_map(|value| value.to_le_bytes()).collect();
    with_recorder(|state, recorder| {
        state.references.created(key(sampler));
        recorder.texture_created(key(sampler), TextureDesc { kind: TextureKind::Sampler, resource: None, description });
    })
}

pub unsafe fn retain_sampler(forward: &mut Forward<'_, cl_int>, sampler: cl_sampler) -> Recorded {
    if succeeded(forward) {
        with_state(|state| state.references.retained(key(sampler)));
    }
    Ok(())
}

pub unsafe fn release_sampler(forward: &mut Forward<'_, cl_int>, sampler: cl_sampler) -> Recorded {
    if succeeded(forward) && with_state(|state| state.references.released(key(sampler))) {
        with_recorder(|_, recorder| recorder.texture_released(key(sampler)))?;
    }
    Ok(())
}
