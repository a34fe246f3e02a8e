//! Attributes the program set on its kernels (`cuFuncSetAttribute`, `cuKernelSetAttribute`):
//! Hopper kernels of cuDNN, cuBLAS and CUTLASS launch with cluster sizes and shared memory that
//! their functions must first be allowed, so the replay sets them as the program had them.

use super::driver::check;
use crate::backend::{BackendError, BackendResult};
use cudarc::driver::sys::{self, CUfunction_attribute};
use super::objects::LoadedFunction;
use trace_format::KernelAttribute;

/// The attributes a program can set, by the driver's number; the others are read-only.
fn settable(attribute: u32) -> Option<CUfunction_attribute> {
    use CUfunction_attribute::*;
    Some(match attribute {
        8 => CU_FUNC_ATTRIBUTE_MAX_DYNAMIC_SHARED_SIZE_BYTES,
        9 => CU_FUNC_ATTRIBUTE_PREFERRED_SHARED_MEMORY_CARVEOUT,
        11 => CU_FUNC_ATTRIBUTE_REQUIRED_CLUSTER_WIDTH,
        12 => CU_FUNC_ATTRIBUTE_REQUIRED_CLUSTER_HEIGHT,
        13 => CU_FUNC_ATTRIBUTE_REQUIRED_CLUSTER_DEPTH,
        14 => CU_FUNC_ATTRIBUTE_NON_PORTABLE_CLUSTER_SIZE_ALLOWED,
        15 => CU_FUNC_ATTRIBUTE_CLUSTER_SCHEDULING_POLICY_PREFERENCE,
        _ => return None,
    })
}

/// Sets each recorded attribute on the replay's function of its kernel, in the order the
/// program set them; one the driver refuses is named with its kernel.
pub fn apply(attributes: &[KernelAttribute], functions: &[LoadedFunction]) -> BackendResult<()> {
    for set in attributes {
        let Some(loaded) = functions.get(set.kernel.index()) else {
            return Err(BackendError::Invalid(format!("an attribute names kernel {}, which the trace does not have", set.kernel)));
        };
        let about = |detail: String| BackendError::Unsupported(format!("kernel {} ({}): {detail}", set.kernel, loaded.name));
        let attribute = settable(set.attribute).ok_or_else(|| about(format!("the program set function attribute {}, which the driver does not let a program set", set.attribute)))?;
        let value = i32::try_from(set.value).map_err(|_| about(format!("{attribute:?} = {} does not fit the driver's int", set.value)))?;
        // SAFETY: a function of a loaded module.
        check(unsafe { sys::cuFuncSetAttribute(loaded.function, attribute, value) }, &format!("cuFuncSetAttribute({attribute:?} = {value})"))
            .map_err(|error| about(error.to_string()))?;
    }
    Ok(())
}
