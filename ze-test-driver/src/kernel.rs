//! Kernels: OpenCL kernels with Level Zero's argument rules (pointers are USM pointers given by
//! address, local memory by size), group sizes and global offsets kept for the next append.

use crate::common::*;
use crate::module::Module;
use crate::opencl::{check, cl, runtime, Runtime};
use crate::spirv::ArgKind;
use opencl_sys::*;
use std::ffi::{c_char, c_void, CStr, CString};
use std::ptr;
use std::sync::Mutex;
use ze_sys::*;

/// Intel USM: kernels may reach allocations they are not passed (`zeKernelSetIndirectAccess`).
const INDIRECT_ACCESS: [cl_kernel_exec_info; 3] = [0x4200, 0x4201, 0x4202];

#[derive(Clone, Copy)]
pub struct Dispatch {
    pub group_size: [u32; 3],
    pub offset: [u32; 3],
}

pub struct Kernel {
    pub kernel: cl_kernel,
    pub args: Vec<ArgKind>,
    name: CString,
    /// Group size and global offset for the next append.
    dispatch: Mutex<Dispatch>,
    indirect: Mutex<ze_kernel_indirect_access_flags_t>,
}

// The kernel is the runtime's; the driver serializes what it changes on it.
unsafe impl Send for Kernel {}
unsafe impl Sync for Kernel {}

impl Handle for Kernel {
    type Raw = _ze_kernel_handle_t;
}

impl Drop for Kernel {
    fn drop(&mut self) {
        if let Ok(rt) = runtime() {
            // SAFETY: the kernel's own OpenCL kernel.
            unsafe { cl!(rt, clReleaseKernel(self.kernel)) };
        }
    }
}

/// Binds argument `index` of `kernel` as Level Zero passes it.
///
/// # Safety
/// `value` is null or holds `size` bytes.
pub unsafe fn bind_argument(rt: &Runtime, kernel: cl_kernel, kinds: &[ArgKind], index: u32, size: usize, value: *const c_void) -> ZeResult<()> {
    let kind = *kinds.get(index as usize).ok_or(ZE_RESULT_ERROR_INVALID_KERNEL_ARGUMENT_INDEX)?;
    // SAFETY (whole block): the caller's value, the runtime's kernel.
    unsafe {
        match kind {
            ArgKind::Global => {
                if size != std::mem::size_of::<*const c_void>() {
                    return Err(ZE_RESULT_ERROR_INVALID_KERNEL_ARGUMENT_SIZE);
                }
                let pointer = if value.is_null() { ptr::null() } else { *value.cast::<*const c_void>() };
                check((rt.usm.set_arg_pointer)(kernel, index, pointer))
            }
            ArgKind::Local => check(cl!(rt, clSetKernelArg(kernel, index, size, ptr::null()))),
            ArgKind::Value => check(cl!(rt, clSetKernelArg(kernel, index, size, value))),
        }
    }
}

fn kernel_info<T: Copy + Default>(rt: &Runtime, kernel: cl_kernel, param: cl_kernel_work_group_info) -> T {
    let mut value = T::default();
    // SAFETY: the value is written with at most its size.
    unsafe { cl!(rt, clGetKernelWorkGroupInfo(kernel, rt.device, param, std::mem::size_of::<T>(), (&raw mut value).cast(), ptr::null_mut())) };
    value
}

impl Kernel {
    pub fn dispatch(&self) -> Dispatch {
        *self.dispatch.lock().unwrap_or_else(|p| p.into_inner())
    }

    fn set_dispatch(&self, change: impl FnOnce(&mut Dispatch)) {
        change(&mut self.dispatch.lock().unwrap_or_else(|p| p.into_inner()));
    }

    /// The group size the kernel declares (`reqd_work_group_size`), if any.
    fn required_group_size(&self, rt: &Runtime) -> Option<[u32; 3]> {
        let required: [usize; 3] = kernel_info(rt, self.kernel, CL_KERNEL_COMPILE_WORK_GROUP_SIZE);
        (required != [0; 3]).then(|| required.map(|size| size as u32))
    }
}

pub unsafe fn create(module: ze_module_handle_t, desc: *const ze_kernel_desc_t, out: *mut ze_kernel_handle_t) -> ZeResult<()> {
    let module = unsafe { Module::from_handle(module) }?;
    let rt = runtime()?;
    let desc = unsafe { desc.as_ref() }.ok_or(ZE_RESULT_ERROR_INVALID_NULL_POINTER)?;
    if desc.pKernelName.is_null() || out.is_null() {
        return Err(ZE_RESULT_ERROR_INVALID_NULL_POINTER);
    }
    let name = unsafe { CStr::from_ptr(desc.pKernelName) };
    let args = module.kernels.get(name.to_str().map_err(|_| ZE_RESULT_ERROR_INVALID_KERNEL_NAME)?).ok_or(ZE_RESULT_ERROR_INVALID_KERNEL_NAME)?;
    let mut code = CL_SUCCESS;
    let cl_kernel = unsafe { cl!(rt, clCreateKernel(module.program, name.as_ptr(), &mut code)) };
    check(code)?;
    let enabled: cl_bool = CL_TRUE;
    for info in INDIRECT_ACCESS {
        // Best effort: without it a kernel reaches only what it is passed, as Level Zero's default.
        unsafe { cl!(rt, clSetKernelExecInfo(cl_kernel, info, std::mem::size_of::<cl_bool>(), (&raw const enabled).cast())) };
    }
    let kernel = Kernel {
        kernel: cl_kernel,
        args: args.clone(),
        name: name.to_owned(),
        dispatch: Mutex::new(Dispatch { group_size: [1; 3], offset: [0; 3] }),
        indirect: Mutex::new(0),
    };
    if let Some(required) = kernel.required_group_size(rt) {
        kernel.set_dispatch(|dispatch| dispatch.group_size = required);
    }
    unsafe { put(out, kernel.into_handle()) }
}

pub unsafe fn destroy(kernel: ze_kernel_handle_t) -> ZeResult<()> {
    unsafe { Kernel::destroy(kernel) }
}

pub unsafe fn set_argument(kernel: ze_kernel_handle_t, index: u32, size: usize, value: *const c_void) -> ZeResult<()> {
    let kernel = unsafe { Kernel::from_handle(kernel) }?;
    unsafe { bind_argument(runtime()?, kernel.kernel, &kernel.args, index, size, value) }
}

pub unsafe fn set_group_size(kernel: ze_kernel_handle_t, x: u32, y: u32, z: u32) -> ZeResult<()> {
    let kernel = unsafe { Kernel::from_handle(kernel) }?;
    let rt = runtime()?;
    let most: usize = kernel_info(rt, kernel.kernel, CL_KERNEL_WORK_GROUP_SIZE);
    if [x, y, z].contains(&0) || (x as usize) * (y as usize) * (z as usize) > most {
        return Err(ZE_RESULT_ERROR_INVALID_GROUP_SIZE_DIMENSION);
    }
    kernel.set_dispatch(|dispatch| dispatch.group_size = [x, y, z]);
    Ok(())
}

pub unsafe fn set_global_offset(kernel: ze_kernel_handle_t, x: u32, y: u32, z: u32) -> ZeResult<()> {
    let kernel = unsafe { Kernel::from_handle(kernel) }?;
    kernel.set_dispatch(|dispatch| dispatch.offset = [x, y, z]);
    Ok(())
}

/// The largest divisor of `global` that is at most `limit`.
fn largest_divisor(global: u32, limit: usize) -> u32 {
    (1..=global.min(limit.max(1) as u32)).rev().find(|size| global.is_multiple_of(*size)).unwrap_or(1)
}

/// Group sizes that divide the global sizes, as large as the kernel allows, X first.
pub fn suggest(global: [u32; 3], most: usize, per_dimension: [usize; 3]) -> [u32; 3] {
    let x = largest_divisor(global[0], most.min(per_dimension[0]));
    let y = largest_divisor(global[1], (most / x as usize).min(per_dimension[1]));
    let z = largest_divisor(global[2], (most / (x as usize * y as usize)).min(per_dimension[2]));
    [x, y, z]
}

pub unsafe fn suggest_group_size(kernel: ze_kernel_handle_t, x: u32, y: u32, z: u32, out_x: *mut u32, out_y: *mut u32, out_z: *mut u32) -> ZeResult<()> {
    let kernel = unsafe { Kernel::from_handle(kernel) }?;
    let rt = runtime()?;
    if [x, y, z].contains(&0) {
        return Err(ZE_RESULT_ERROR_INVALID_GLOBAL_WIDTH_DIMENSION);
    }
    let sizes = match kernel.required_group_size(rt) {
        Some(required) => required,
        None => suggest([x, y, z], kernel_info(rt, kernel.kernel, CL_KERNEL_WORK_GROUP_SIZE), rt.device_value(CL_DEVICE_MAX_WORK_ITEM_SIZES)),
    };
    unsafe {
        put(out_x, sizes[0])?;
        put(out_y, sizes[1])?;
        put(out_z, sizes[2])
    }
}

pub unsafe fn properties(kernel: ze_kernel_handle_t, properties: *mut ze_kernel_properties_t) -> ZeResult<()> {
    let kernel = unsafe { Kernel::from_handle(kernel) }?;
    let rt = runtime()?;
    let properties = unsafe { properties.as_mut() }.ok_or(ZE_RESULT_ERROR_INVALID_NULL_POINTER)?;
    properties.numKernelArgs = kernel.args.len() as u32;
    [properties.requiredGroupSizeX, properties.requiredGroupSizeY, properties.requiredGroupSizeZ] = kernel.required_group_size(rt).unwrap_or([0; 3]);
    properties.requiredNumSubGroups = 0;
    properties.requiredSubgroupSize = 0;
    properties.maxSubgroupSize = 16;
    properties.maxNumSubgroups = (kernel_info::<usize>(rt, kernel.kernel, CL_KERNEL_WORK_GROUP_SIZE) / 16).max(1) as u32;
    properties.localMemSize = kernel_info::<cl_ulong>(rt, kernel.kernel, CL_KERNEL_LOCAL_MEM_SIZE) as u32;
    properties.privateMemSize = kernel_info::<cl_ulong>(rt, kernel.kernel, CL_KERNEL_PRIVATE_MEM_SIZE) as u32;
    properties.spillMemSize = 0;
    properties.uuid = ze_kernel_uuid_t::new();
    Ok(())
}

pub unsafe fn name(kernel: ze_kernel_handle_t, size: *mut usize, name: *mut c_char) -> ZeResult<()> {
    let kernel = unsafe { Kernel::from_handle(kernel) }?;
    unsafe { give_string(&kernel.name, size, name) }
}

pub unsafe fn set_indirect_access(kernel: ze_kernel_handle_t, flags: ze_kernel_indirect_access_flags_t) -> ZeResult<()> {
    let kernel = unsafe { Kernel::from_handle(kernel) }?;
    *kernel.indirect.lock().unwrap_or_else(|p| p.into_inner()) = flags;
    Ok(())
}

pub unsafe fn indirect_access(kernel: ze_kernel_handle_t, flags: *mut ze_kernel_indirect_access_flags_t) -> ZeResult<()> {
    let kernel = unsafe { Kernel::from_handle(kernel) }?;
    unsafe { put(flags, *kernel.indirect.lock().unwrap_or_else(|p| p.into_inner())) }
}

/// The kernel's attributes as OpenCL reports them (`CL_KERNEL_ATTRIBUTES`); `*string` is the
/// caller's buffer of `*size` bytes.
pub unsafe fn source_attributes(kernel: ze_kernel_handle_t, size: *mut u32, string: *mut *mut c_char) -> ZeResult<()> {
    let kernel = unsafe { Kernel::from_handle(kernel) }?;
    let rt = runtime()?;
    let mut length = 0;
    unsafe {
        cl!(rt, clGetKernelInfo(kernel.kernel, CL_KERNEL_ATTRIBUTES, 0, ptr::null_mut(), &mut length));
        let mut bytes = vec![0u8; length.max(1)];
        cl!(rt, clGetKernelInfo(kernel.kernel, CL_KERNEL_ATTRIBUTES, length, bytes.as_mut_ptr().cast(), ptr::null_mut()));
        let text = CStr::from_bytes_until_nul(&bytes).map(CStr::to_owned).unwrap_or_default();
        let buffer = if string.is_null() || size.is_null() { ptr::null_mut() } else { *string };
        let mut room = if buffer.is_null() { 0 } else { *size as usize };
        give_string(&text, &mut room, buffer)?;
        put(size, room as u32)
    }
}

#[cfg(test)]
mod tests {
    use super::suggest;

    #[test]
    fn suggested_group_sizes_divide_the_global_size_within_the_limits() {
        assert_eq!(suggest([1024, 1, 1], 256, [256, 256, 256]), [256, 1, 1]);
        assert_eq!(suggest([100, 1, 1], 64, [64, 64, 64]), [50, 1, 1]);
        assert_eq!(suggest([97, 1, 1], 64, [64, 64, 64]), [1, 1, 1], "a prime above the limit");
        assert_eq!(suggest([16, 16, 4], 64, [64, 64, 64]), [16, 4, 1]);
        assert_eq!(suggest([8, 8, 8], 8192, [4, 4, 4]), [4, 4, 4], "per-dimension limits");
    }
}
