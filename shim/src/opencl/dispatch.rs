//! The ICD dispatch table every OpenCL object starts with (`cl_icd_dispatch` of cl_icd.h):
//! how the shim reaches the driver when no loader is in sight, and how it makes its own
//! calls on objects it knows are valid.

use opencl_sys::cl_icd::cl_icd_dispatch;

/// The dispatch table of `object`, an OpenCL object (or null).
///
/// # Safety
/// `object` is null or a live OpenCL object from an ICD driver.
pub unsafe fn table<T>(object: *mut T) -> Option<&'static cl_icd_dispatch> {
    if object.is_null() {
        return None;
    }
    // SAFETY: ICD objects start with a pointer to their driver's table, which lives as long as
    // the driver stays loaded.
    unsafe { (*object.cast::<*const cl_icd_dispatch>()).as_ref() }
}

/// Calls `$function` of `$object`'s dispatch table with `$object` and the other arguments;
/// `CL_INVALID_OPERATION` (or null) when the driver lacks it.
macro_rules! call {
    ($function:ident($object:expr $(, $arg:expr)* $(,)?)) => {{
        let object = $object;
        // SAFETY: the caller passes a live object with the arguments the function takes.
        match unsafe { $crate::opencl::dispatch::table(object) }.and_then(|table| table.$function) {
            Some(function) => unsafe { function(object $(, $arg)*) },
            None => $crate::opencl::NotFound::not_found(),
        }
    }};
}
pub(crate) use call;

#[cfg(test)]
mod tests {
    use opencl_sys::cl_icd::cl_icd_dispatch;
    use std::mem::offset_of;
    use std::process::Command;

    /// The Rust layout of the dispatch table matches the system's cl_icd.h.
    #[test]
    fn the_table_layout_matches_the_header() {
        let dir = std::env::temp_dir().join(format!("reprise-icd-layout-{}", std::process::id()));
        std::fs::create_dir_all(&dir).unwrap();
        let fields = [
            ("clGetPlatformIDs", offset_of!(cl_icd_dispatch, clGetPlatformIDs)),
            ("clEnqueueNDRangeKernel", offset_of!(cl_icd_dispatch, clEnqueueNDRangeKernel)),
            ("clSetEventCallback", offset_of!(cl_icd_dispatch, clSetEventCallback)),
            ("clEnqueueFillBuffer", offset_of!(cl_icd_dispatch, clEnqueueFillBuffer)),
            ("clCreateCommandQueueWithProperties", offset_of!(cl_icd_dispatch, clCreateCommandQueueWithProperties)),
            ("clSVMAlloc", offset_of!(cl_icd_dispatch, clSVMAlloc)),
            ("clCloneKernel", offset_of!(cl_icd_dispatch, clCloneKernel)),
            ("clCreateBufferWithProperties", offset_of!(cl_icd_dispatch, clCreateBufferWithProperties)),
            ("clSetContextDestructorCallback", offset_of!(cl_icd_dispatch, clSetContextDestructorCallback)),
        ];
        let prints: String = fields
            .iter()
            .map(|(name, _)| format!("printf(\"%zu\\n\", offsetof(struct _cl_icd_dispatch, {name}));\n"))
            .collect();
        let source = format!(
            "#define CL_TARGET_OPENCL_VERSION 300\n#include <CL/cl_icd.h>\n#include <stddef.h>\n#include <stdio.h>\nint main(void) {{\n{prints}return 0;\n}}\n"
        );
        std::fs::write(dir.join("layout.c"), source).unwrap();
        let built = Command::new("cc").arg("-o").arg(dir.join("layout")).arg(dir.join("layout.c")).status().unwrap();
        assert!(built.success(), "cc could not build the layout probe against CL/cl_icd.h");
        let output = Command::new(dir.join("layout")).output().unwrap();
        let offsets: Vec<usize> = String::from_utf8(output.stdout).unwrap().lines().map(|l| l.parse().unwrap()).collect();
        let expected: Vec<usize> = fields.iter().map(|(_, offset)| *offset).collect();
        assert_eq!(offsets, expected, "fields {:?}", fields.map(|(name, _)| name));
        std::fs::remove_dir_all(&dir).unwrap();
    }
}
