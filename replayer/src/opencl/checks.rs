//! What the device and the kernels it built accept, checked before the driver sees a call that
//! depends on it. Drivers do not all return errors for invalid input: PoCL 3.1 crashes on a
//! work-group size it cannot run when the launch is recorded into a command buffer, on an image
//! or sampler argument that holds a stale handle or a buffer, and aborts when a launch needs more local
//! memory than the device has. What the trace alone decides is `validate.rs`'s job.

use super::api::{check, Api};
use super::device::{device_text, device_value};
use super::resolve::NdRange;
use crate::backend::{BackendError, BackendResult};
use opencl_sys::*;
use std::ffi::c_void;
use std::ptr;
use trace_format::{Arg, MemId, MemKind, Memory};

/// The device's limits on memory objects and launches.
pub struct Limits {
    max_dims: u32,
    max_item_sizes: Vec<usize>,
    max_group: usize,
    local_bytes: u64,
    max_alloc: u64,
    /// `CL_DEVICE_MEM_BASE_ADDR_ALIGN` in bytes: where a sub-buffer may start.
    base_align: u64,
    /// Work-groups smaller at the edge of the range (OpenCL 2.0 and the optional 3.0 feature).
    non_uniform: bool,
}

impl Limits {
    pub fn of(api: &Api, device: cl_device_id) -> BackendResult<Limits> {
        let value = |param, name: &str| -> BackendResult<u64> {
            device_value::<cl_ulong>(api, device, param)
                .or_else(|| device_value::<cl_uint>(api, device, param).map(u64::from))
                .ok_or_else(|| BackendError::Api { call: format!("clGetDeviceInfo({name})"), detail: "no answer".into() })
        };
        let max_dims = value(CL_DEVICE_MAX_WORK_ITEM_DIMENSIONS, "CL_DEVICE_MAX_WORK_ITEM_DIMENSIONS")? as u32;
        let mut max_item_sizes = vec![0usize; max_dims as usize];
        let code = unsafe {
            (api.clGetDeviceInfo)(device, CL_DEVICE_MAX_WORK_ITEM_SIZES, std::mem::size_of_val(&max_item_sizes[..]), max_item_sizes.as_mut_ptr() as *mut c_void, ptr::null_mut())
        };
        check(code, "clGetDeviceInfo(CL_DEVICE_MAX_WORK_ITEM_SIZES)")?;
        // OpenCL 2.x devices all have it; 3.0 devices say whether they do.
        let non_uniform = match device_value::<cl_bool>(api, device, CL_DEVICE_NON_UNIFORM_WORK_GROUP_SUPPORT) {
            Some(supported) => supported == CL_TRUE,
            None => device_text(api, device, CL_DEVICE_VERSION)?.starts_with("OpenCL 2."),
        };
        Ok(Limits {
            max_dims,
            max_item_sizes,
            max_group: device_value::<usize>(api, device, CL_DEVICE_MAX_WORK_GROUP_SIZE).unwrap_or(1),
            local_bytes: value(CL_DEVICE_LOCAL_MEM_SIZE, "CL_DEVICE_LOCAL_MEM_SIZE")?,
            max_alloc: value(CL_DEVICE_MAX_MEM_ALLOC_SIZE, "CL_DEVICE_MAX_MEM_ALLOC_SIZE")?,
            base_align: (value(CL_DEVICE_MEM_BASE_ADDR_ALIGN, "CL_DEVICE_MEM_BASE_ADDR_ALIGN")? / 8).max(1),
            non_uniform,
        })
    }

    /// Whether this device can hold `memory` (a sub-buffer also needs `parent`, its parent).
    pub fn memory(&self, memory: &Memory, parent: Option<&Memory>) -> BackendResult<()> {
        let unsupported = |why: String| Err(BackendError::Unsupported(why));
        if memory.size > self.max_alloc {
            return unsupported(format!("{} bytes; this device allocates at most {} bytes at once", memory.size, self.max_alloc));
        }
        let MemKind::SubBuffer { parent: parent_id, offset } = memory.kind else { return Ok(()) };
        match parent.map(|p| &p.kind) {
            Some(MemKind::SubBuffer { .. }) => unsupported(format!("a sub-buffer of sub-buffer {parent_id} (OpenCL sub-buffers do not nest)")),
            // A buffer over memory named by pointer (`CL_MEM_USE_HOST_PTR`) starts anywhere in it.
            Some(MemKind::Shared | MemKind::Unified(_)) => Ok(()),
            _ if !offset.is_multiple_of(self.base_align) => unsupported(format!(
                "a sub-buffer at byte {offset} of memory {parent_id}; this device starts sub-buffers only at multiples of {} bytes (CL_DEVICE_MEM_BASE_ADDR_ALIGN)",
                self.base_align
            )),
            _ => Ok(()),
        }
    }

    /// Whether `kernel` can run over `range` on this device.
    pub fn launch(&self, kernel: &KernelFacts, range: &NdRange) -> BackendResult<()> {
        let unsupported = |why: String| Err(BackendError::Unsupported(why));
        let dims = range.dims as usize;
        if range.dims > self.max_dims {
            return unsupported(format!("{dims} work dimensions; this device has {}", self.max_dims));
        }
        let (global, offset) = (&range.global[..dims], &range.offset[..dims]);
        if global.iter().zip(offset).any(|(g, o)| g.checked_add(*o).is_none()) {
            return unsupported(format!("global size {global:?} at offset {offset:?} overflows the device's sizes"));
        }
        let local = match (range.local, kernel.required) {
            (Some(local), Some(required)) if local[..dims] != required[..dims] => {
                return unsupported(format!("work-group size {:?}; the kernel requires {:?} (reqd_work_group_size)", &local[..dims], &required[..dims]))
            }
            (Some(local), _) | (None, Some(local)) => local,
            (None, None) => return Ok(()),
        };
        let local = &local[..dims];
        if let Some(axis) = (0..dims).find(|&axis| local[axis] > self.max_item_sizes[axis]) {
            return unsupported(format!("work-group size {local:?}; this device takes at most {} work-items along axis {axis}", self.max_item_sizes[axis]));
        }
        let items: usize = local.iter().product();
        let most = self.max_group.min(kernel.work_group);
        if items > most {
            return unsupported(format!("work-groups of {items} work-items; this kernel runs at most {most} on this device"));
        }
        if !(self.non_uniform && kernel.non_uniform_allowed) && global.iter().zip(local).any(|(g, l)| g % l != 0) {
            return unsupported(format!(
                "global size {global:?} is not a multiple of work-group size {local:?}, which needs OpenCL C 2.0 or later and a device with non-uniform work-groups"
            ));
        }
        Ok(())
    }

    /// Whether the local memory `kernel` needs with its arguments set fits this device.
    pub fn local_memory(&self, api: &Api, kernel: cl_kernel, device: cl_device_id) -> BackendResult<()> {
        let mut needed: cl_ulong = 0;
        let code = unsafe {
            (api.clGetKernelWorkGroupInfo)(kernel, device, CL_KERNEL_LOCAL_MEM_SIZE, std::mem::size_of::<cl_ulong>(), &mut needed as *mut cl_ulong as *mut c_void, ptr::null_mut())
        };
        check(code, "clGetKernelWorkGroupInfo(CL_KERNEL_LOCAL_MEM_SIZE)")?;
        if needed > self.local_bytes {
            return Err(BackendError::Unsupported(format!("{needed} bytes of local memory; this device has {}", self.local_bytes)));
        }
        Ok(())
    }
}

/// What a kernel parameter takes, as the driver describes it.
#[derive(Clone, Debug, PartialEq)]
pub enum ParamClass {
    /// A pointer to global or constant memory: a buffer, an SVM pointer or null.
    Pointer,
    Local,
    /// Plain bytes of a type.
    Value(String),
    /// An image of this type: an image memory object.
    Image(String),
    /// A `sampler_t`: a recorded sampler.
    Sampler,
    /// A pipe or device-side queue or event: no recorded argument can stand for one (the
    /// recorder records none of them).
    Opaque(String),
    /// The driver gives no argument information (a program built from a binary).
    Unknown,
}

/// What the driver says about one kernel built for the device.
pub struct KernelFacts {
    pub params: Vec<ParamClass>,
    /// `CL_KERNEL_WORK_GROUP_SIZE`: the most work-items per group for this kernel.
    work_group: usize,
    /// `reqd_work_group_size`, when the kernel has one.
    required: Option<[usize; 3]>,
    /// Whether the program's OpenCL C version allows non-uniform work-groups.
    non_uniform_allowed: bool,
}

/// Types passed by handle that replay cannot recreate.
const OPAQUE_TYPES: [&str; 4] = ["pipe", "queue_t", "clk_event_t", "reserve_id_t"];

impl KernelFacts {
    pub fn of(api: &Api, kernel: cl_kernel, device: cl_device_id, build_options: &str) -> BackendResult<KernelFacts> {
        let mut count: cl_uint = 0;
        let code = unsafe {
            (api.clGetKernelInfo)(kernel, CL_KERNEL_NUM_ARGS, std::mem::size_of::<cl_uint>(), &mut count as *mut cl_uint as *mut c_void, ptr::null_mut())
        };
        check(code, "clGetKernelInfo(CL_KERNEL_NUM_ARGS)")?;
        let params = (0..count).map(|index| param_class(api, kernel, index)).collect::<BackendResult<Vec<_>>>()?;
        let group_info = |param, out: *mut c_void, size| unsafe { (api.clGetKernelWorkGroupInfo)(kernel, device, param, size, out, ptr::null_mut()) };
        let mut work_group: usize = 0;
        check(group_info(CL_KERNEL_WORK_GROUP_SIZE, &mut work_group as *mut usize as *mut c_void, std::mem::size_of::<usize>()), "clGetKernelWorkGroupInfo")?;
        let mut required = [0usize; 3];
        check(group_info(CL_KERNEL_COMPILE_WORK_GROUP_SIZE, required.as_mut_ptr() as *mut c_void, std::mem::size_of_val(&required)), "clGetKernelWorkGroupInfo")?;
        // Without -cl-std, OpenCL C 1.x is compiled, whose work-groups are uniform.
        let non_uniform_allowed = ["-cl-std=CL2.", "-cl-std=CL3.", "-cl-std=CLC++"].iter().any(|std| build_options.contains(std))
            && !build_options.contains("-cl-uniform-work-group-size");
        Ok(KernelFacts { params, work_group, required: (required != [0; 3]).then_some(required), non_uniform_allowed })
    }
}

fn param_class(api: &Api, kernel: cl_kernel, index: cl_uint) -> BackendResult<ParamClass> {
    let mut address: cl_kernel_arg_address_qualifier = 0;
    let code = unsafe {
        (api.clGetKernelArgInfo)(kernel, index, CL_KERNEL_ARG_ADDRESS_QUALIFIER, std::mem::size_of_val(&address), &mut address as *mut _ as *mut c_void, ptr::null_mut())
    };
    if code == CL_KERNEL_ARG_INFO_NOT_AVAILABLE {
        return Ok(ParamClass::Unknown);
    }
    check(code, "clGetKernelArgInfo(CL_KERNEL_ARG_ADDRESS_QUALIFIER)")?;
    let mut access: cl_kernel_arg_access_qualifier = 0;
    let code = unsafe {
        (api.clGetKernelArgInfo)(kernel, index, CL_KERNEL_ARG_ACCESS_QUALIFIER, std::mem::size_of_val(&access), &mut access as *mut _ as *mut c_void, ptr::null_mut())
    };
    check(code, "clGetKernelArgInfo(CL_KERNEL_ARG_ACCESS_QUALIFIER)")?;
    let type_name = super::device::text(|size, value, returned| unsafe { (api.clGetKernelArgInfo)(kernel, index, CL_KERNEL_ARG_TYPE_NAME, size, value, returned) })?;
    if type_name.starts_with("image") {
        return Ok(ParamClass::Image(type_name));
    }
    if type_name.starts_with("sampler_t") {
        return Ok(ParamClass::Sampler);
    }
    // Pipes have an access qualifier; device-side types are private.
    if access != CL_KERNEL_ARG_ACCESS_NONE || OPAQUE_TYPES.iter().any(|opaque| type_name.starts_with(opaque)) {
        return Ok(ParamClass::Opaque(type_name));
    }
    Ok(match address {
        CL_KERNEL_ARG_ADDRESS_GLOBAL | CL_KERNEL_ARG_ADDRESS_CONSTANT => ParamClass::Pointer,
        CL_KERNEL_ARG_ADDRESS_LOCAL => ParamClass::Local,
        _ => ParamClass::Value(type_name),
    })
}

/// Whether `arg` can be bound to parameter `index` of class `class` (`is_image` tells which
/// memory objects are images).
pub fn argument(index: usize, class: &ParamClass, arg: &Arg, is_image: &dyn Fn(MemId) -> bool) -> BackendResult<()> {
    let invalid = |what: String| Err(BackendError::Invalid(format!("argument {index} is {what}")));
    match (class, arg) {
        (ParamClass::Opaque(type_name), _) => Err(BackendError::Unsupported(format!(
            "argument {index} has type {type_name}, which the trace cannot hold (the recorder records no pipes or device-side queues and events)"
        ))),
        (ParamClass::Image(_), Arg::Memory { mem, offset: 0 }) if is_image(*mem) => Ok(()),
        (ParamClass::Sampler, Arg::Texture(_)) => Ok(()),
        (ParamClass::Image(type_name), Arg::Value(_)) => stale_handle(index, type_name),
        (ParamClass::Sampler, Arg::Value(_)) => stale_handle(index, "sampler_t"),
        (ParamClass::Image(type_name), _) => invalid(format!("{}; the kernel takes an {type_name}", describe(arg))),
        (ParamClass::Sampler, _) => invalid(format!("{}; the kernel takes a sampler", describe(arg))),
        (ParamClass::Pointer, Arg::Memory { mem, .. }) if is_image(*mem) => invalid(format!("image {mem}; the kernel takes a pointer to global memory")),
        (ParamClass::Pointer, Arg::Memory { .. } | Arg::NullMemory) | (ParamClass::Local, Arg::Local(_)) | (ParamClass::Unknown, _) => Ok(()),
        (ParamClass::Value(_), Arg::Value(_) | Arg::ValueWithPointers { .. }) => Ok(()),
        // A null `cl_mem` passed by address is recorded as its bytes; passed as a null value, a
        // recorder without the kernel's argument information takes it for local memory. Either
        // binds as the program bound it.
        (ParamClass::Pointer, Arg::Value(bytes)) if bytes.len() == std::mem::size_of::<cl_mem>() && bytes.iter().all(|&b| b == 0) => Ok(()),
        (ParamClass::Pointer, Arg::Local(bytes)) if *bytes == std::mem::size_of::<cl_mem>() as u64 => Ok(()),
        (ParamClass::Pointer, Arg::Value(bytes)) if bytes.len() == std::mem::size_of::<cl_mem>() => Err(BackendError::Unsupported(format!(
            "argument {index} is a pointer to global memory, but the trace holds the address {:#x} for it, which is no memory object it recorded",
            u64::from_ne_bytes(bytes[..8].try_into().expect("eight bytes"))
        ))),
        (ParamClass::Pointer, _) => invalid(format!("{}; the kernel takes a pointer to global memory", describe(arg))),
        (ParamClass::Local, _) => invalid(format!("{}; the kernel takes local memory", describe(arg))),
        (ParamClass::Value(type_name), _) => invalid(format!("{}; the kernel takes a {type_name} by value", describe(arg))),
    }
}

/// An image or sampler the trace holds as the recording process's handle.
fn stale_handle(index: usize, type_name: &str) -> BackendResult<()> {
    Err(BackendError::Unsupported(format!(
        "argument {index} has type {type_name}, but the trace holds a plain value for it (recorded by a shim that recorded no images or samplers)"
    )))
}

fn describe(arg: &Arg) -> String {
    match arg {
        Arg::Value(bytes) | Arg::ValueWithPointers { bytes, .. } => format!("a {}-byte value", bytes.len()),
        Arg::Memory { mem, .. } => format!("memory {mem}"),
        Arg::NullMemory => "a null memory object".into(),
        Arg::Local(bytes) => format!("{bytes} bytes of local memory"),
        Arg::Condition(_) => "a CUDA graph conditional's handle".into(),
        Arg::Texture(texture) => format!("texture {texture}"),
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use trace_format::TextureId;

    fn argument(index: usize, class: &ParamClass, arg: &Arg) -> BackendResult<()> {
        super::argument(index, class, arg, &|mem| mem == MemId(9))
    }

    #[test]
    fn arguments_must_be_of_the_parameter_s_kind() {
        let pointer = ParamClass::Pointer;
        let uint = ParamClass::Value("uint".into());
        assert!(argument(0, &pointer, &Arg::Memory { mem: MemId(1), offset: 0 }).is_ok());
        assert!(argument(0, &pointer, &Arg::Value(vec![0; 8])).is_ok(), "a null cl_mem");
        assert!(argument(0, &pointer, &Arg::Local(8)).is_ok(), "a null value for a buffer");
        assert!(argument(0, &pointer, &Arg::Local(64)).is_err(), "local memory for a buffer");
        let stale = argument(2, &pointer, &Arg::Value(0x55d0_1234_5678u64.to_ne_bytes().to_vec())).expect_err("a handle of the recording process");
        assert!(matches!(&stale, BackendError::Unsupported(m) if m.contains("argument 2") && m.contains("0x55d012345678")), "{stale}");
        let error = argument(1, &uint, &Arg::Memory { mem: MemId(3), offset: 0 }).expect_err("memory for a uint");
        assert_eq!(error.to_string(), "invalid trace: argument 1 is memory 3; the kernel takes a uint by value");
        let error = argument(0, &ParamClass::Local, &Arg::Value(vec![0; 4])).expect_err("a value for local memory");
        assert_eq!(error.to_string(), "invalid trace: argument 0 is a 4-byte value; the kernel takes local memory");
        let pipe = argument(1, &ParamClass::Opaque("pipe int".into()), &Arg::Value(vec![1; 8])).expect_err("a pipe");
        assert!(matches!(&pipe, BackendError::Unsupported(m) if m.starts_with("argument 1 has type pipe int")), "{pipe}");
        assert!(argument(0, &ParamClass::Unknown, &Arg::Value(vec![1; 8])).is_ok(), "nothing to check against");
    }

    #[test]
    fn images_and_samplers_bind_only_what_the_trace_recorded_as_such() {
        let image = ParamClass::Image("image2d_t".into());
        assert!(argument(0, &image, &Arg::Memory { mem: MemId(9), offset: 0 }).is_ok());
        let buffer = argument(0, &image, &Arg::Memory { mem: MemId(1), offset: 0 }).expect_err("a buffer for an image");
        assert_eq!(buffer.to_string(), "invalid trace: argument 0 is memory 1; the kernel takes an image2d_t");
        let stale = argument(1, &image, &Arg::Value(vec![1; 8])).expect_err("a handle of the recording process");
        assert!(matches!(&stale, BackendError::Unsupported(m) if m.starts_with("argument 1 has type image2d_t")), "{stale}");
        assert!(argument(2, &ParamClass::Pointer, &Arg::Memory { mem: MemId(9), offset: 0 }).is_err(), "an image for a pointer");
        assert!(argument(1, &ParamClass::Sampler, &Arg::Texture(TextureId(0))).is_ok());
        assert!(argument(1, &ParamClass::Sampler, &Arg::Value(vec![1; 8])).is_err(), "a stale sampler");
        assert!(argument(1, &ParamClass::Sampler, &Arg::Memory { mem: MemId(9), offset: 0 }).is_err(), "an image for a sampler");
    }
}
