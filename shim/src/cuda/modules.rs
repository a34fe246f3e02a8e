//! Modules and libraries (each kept with its image, its extent read by `image`) and the kernels
//! taken from them.

use super::hooks::{driver, real};
use super::image::{self, image_at, image_in};
use super::mangled;
use super::state::{State, UnreadImage};
use crate::recorder::{Access, Key, MemShape, Recorder};
use super::state::{with_recorder, with_state};
use super::{key, succeeded, CUdeviceptr, CUresult, CUDA_SUCCESS, Recorded};
use crate::entry::Forward;
use std::ffi::{c_char, c_int, c_uint, c_void, CStr};
use std::os::unix::ffi::OsStrExt;
use std::sync::{Mutex, MutexGuard, PoisonError};
use trace_format::ImageKind;

fn trace_kind(kind: image::ImageKind) -> ImageKind {
    match kind {
        image::ImageKind::Fatbin => ImageKind::Fatbin,
        image::ImageKind::Cubin => ImageKind::Cubin,
        image::ImageKind::Ptx => ImageKind::Ptx,
    }
}

/// Whether `address` lies in a loaded object (the program or a library), whose data stays in
/// place while it is loaded.
fn in_loaded_object(address: *const u8) -> bool {
    let mut info: libc::Dl_info = unsafe { std::mem::zeroed() };
    // SAFETY: dladdr only fills `info`.
    unsafe { libc::dladdr(address.cast(), &mut info) != 0 }
}

/// Held around an unload, from before the driver's call to the end of its clean-up, and by the
/// hooks that learn of a program, its kernels or its variables (taken before the CUDA state): the
/// driver may hand the unloaded program's handle, kernel handles or variable addresses to another
/// thread at once, whose hook then comes after the clean-up instead of being undone by it.
fn programs_changing() -> MutexGuard<'static, ()> {
    static CHANGING: Mutex<()> = Mutex::new(());
    CHANGING.lock().unwrap_or_else(PoisonError::into_inner)
}

/// After a successful load of `image` as `program` (a module or a library): its image is kept,
/// at once if the program owns the buffer (it may free it), else when first needed.
unsafe fn loaded(call: &str, program: *mut c_void, image: *const c_void) -> Recorded {
    let _changing = programs_changing();
    // SAFETY: the driver accepted the image, so it is one `image_at` can read.
    let found = unsafe { image_at(image) };
    with_recorder(|state, recorder| match found {
        Ok(image) if in_loaded_object(image.bytes.as_ptr()) => {
            let unread = UnreadImage { kind: trace_kind(image.kind), address: image.bytes.as_ptr() as usize, len: image.bytes.len() };
            state.unread_images.insert(key(program), unread);
        }
        Ok(image) => {
            // A handle the driver hands out again names this image now, not one read later.
            state.unread_images.remove(&key(program));
            recorder.program_created(key(program), vec![(trace_kind(image.kind), image.bytes.to_vec())])
        }
        Err(error) => recorder.partial(call, &format!("its module image could not be read: {error}")),
    })
}

/// Gives the recorder the image of the program `function` comes from, if not yet read.
pub fn read_image(state: &mut State, recorder: &mut Recorder, function: Key) {
    if let Some(&(program, _)) = state.kernels.get(&function) {
        read_program_image(state, recorder, program);
    }
}

/// Gives the recorder the images of the programs whose variables `accesses` use, if not yet read.
pub fn read_variable_images(state: &mut State, recorder: &mut Recorder, accesses: &[Access]) {
    for access in accesses {
        if let Some(&program) = state.variables.get(&access.mem) {
            read_program_image(state, recorder, program);
        }
    }
}

fn read_program_image(state: &mut State, recorder: &mut Recorder, program: Key) {
    if let Some(image) = state.unread_images.remove(&program) {
        // SAFETY: the image lies in a loaded object, which stays loaded while its program is.
        let bytes = unsafe { std::slice::from_raw_parts(image.address as *const u8, image.len) }.to_vec();
        recorder.program_created(program, vec![(image.kind, bytes)]);
    }
}

pub unsafe fn load_data(forward: &mut Forward<'_, CUresult>, call: &str, module: *mut *mut c_void, image: *const c_void) -> Recorded {
    if !succeeded(forward) {
        return Ok(());
    }
    // SAFETY: the call succeeded, so it wrote the module.
    unsafe { loaded(call, *module, image) }
}

pub unsafe fn load_data_ex(
    forward: &mut Forward<'_, CUresult>,
    call: &str,
    module: *mut *mut c_void,
    image: *const c_void,
    _count: c_uint,
    _options: *mut c_int,
    _values: *mut *mut c_void,
) -> Recorded {
    unsafe { load_data(forward, call, module, image) }
}

pub unsafe fn library_load_data(
    forward: &mut Forward<'_, CUresult>,
    call: &str,
    library: *mut *mut c_void,
    code: *const c_void,
    _jit_options: *mut c_int,
    _jit_values: *mut *mut c_void,
    _jit_count: c_uint,
    _library_options: *mut c_int,
    _library_values: *mut *mut c_void,
    _library_count: c_uint,
) -> Recorded {
    unsafe { load_data(forward, call, library, code) }
}

/// After a successful load from the file `path`: its image is read from the file.
unsafe fn loaded_from_file(call: &str, program: *mut c_void, path: *const c_char) -> Recorded {
    // SAFETY: the driver opened the file by this name, so it is a C string.
    let path = std::path::PathBuf::from(std::ffi::OsStr::from_bytes(unsafe { CStr::from_ptr(path) }.to_bytes()));
    let image = std::fs::read(&path).map_err(|error| format!("cannot read {}: {error}", path.display())).and_then(|mut bytes| {
        // A PTX file has no terminating NUL.
        bytes.push(0);
        let image = image_in(&bytes).map_err(|error| error.to_string())?;
        Ok((trace_kind(image.kind), image.bytes.to_vec()))
    });
    with_recorder(|_, recorder| match image {
        Ok(image) => recorder.program_created(key(program), vec![image]),
        Err(error) => recorder.partial(call, &format!("its module image could not be read: {error}")),
    })
}

pub unsafe fn load_file(forward: &mut Forward<'_, CUresult>, call: &str, module: *mut *mut c_void, path: *const c_char) -> Recorded {
    if !succeeded(forward) {
        return Ok(());
    }
    // SAFETY: the call succeeded, so it wrote the module.
    unsafe { loaded_from_file(call, *module, path) }
}

pub unsafe fn library_load_file(
    forward: &mut Forward<'_, CUresult>,
    call: &str,
    library: *mut *mut c_void,
    path: *const c_char,
    _jit_options: *mut c_int,
    _jit_values: *mut *mut c_void,
    _jit_count: c_uint,
    _library_options: *mut c_int,
    _library_values: *mut *mut c_void,
    _library_count: c_uint,
) -> Recorded {
    unsafe { load_file(forward, call, library, path) }
}

/// `cuModuleGetFunction` and `cuLibraryGetKernel`: a kernel of `program` by its mangled name.
pub unsafe fn get_function(
    forward: &mut Forward<'_, CUresult>,
    _call: &str,
    function: *mut *mut c_void,
    program: *mut c_void,
    name: *const c_char,
) -> Recorded {
    if !succeeded(forward) {
        return Ok(());
    }
    let _changing = programs_changing();
    // SAFETY: the call succeeded, so the name is a C string and the handle was written.
    let (function, name) = unsafe { (key(*function), CStr::from_ptr(name).to_string_lossy().into_owned()) };
    with_recorder(|state, recorder| kernel_known(state, recorder, function, key(program), name))
}

/// `function` is the kernel `name` of `program`; its parameter types come from its mangled name.
/// A handle handed out before (its module unloaded and another loaded in its place, or the same
/// kernel asked for again) has its parameters asked for again: the layout kept may be another
/// kernel's, and every thread's copy of it is dropped where it changed.
fn kernel_known(state: &mut State, recorder: &mut Recorder, function: Key, program: Key, name: String) {
    recorder.kernel_created(function, program, &name, mangled::param_types(&name));
    if state.kernels.insert(function, (program, name)).is_some() && state.layouts.contains_key(&function) {
        let layout = super::params::layout(function as *mut c_void);
        if state.layouts.insert(function, layout.clone()) != Some(layout) {
            super::launch_memo::layouts_changed();
        }
    }
}

/// `cuModuleUnload` and `cuLibraryUnload`: the program's variables go as freed memory goes (what
/// the capture wrote into them is read first), and its kernels' handles are forgotten, with
/// their layouts and its image if not read yet: the driver may hand them out again for another
/// program's kernels, which a launch then finds out anew (`identify`, or the lookup's hook).
pub unsafe fn unload(forward: &mut Forward<'_, CUresult>, call: &str, program: *mut c_void) -> Recorded {
    let _changing = programs_changing();
    let program = key(program);
    let variables = with_state(|state| state.program_variables.get(&program).cloned().unwrap_or_default());
    // Read while they exist; forgotten only once they are gone (a failed unload leaves them).
    for &variable in &variables {
        super::memory::final_contents_before_free(call, variable)?;
    }
    forward.call();
    if succeeded(forward) {
        for variable in variables {
            super::memory::releasing(variable)?;
        }
        with_recorder(|state, recorder| {
            forget_kernels_of(state, program);
            recorder.program_released(program);
            // Its image may lie in an object unloaded with it: never read once the handle goes.
            state.unread_images.remove(&program);
        })?;
    }
    Ok(())
}

fn forget_kernels_of(state: &mut State, program: Key) {
    let gone: Vec<Key> = state.kernels.iter().filter(|(_, (of, _))| *of == program).map(|(&function, _)| function).collect();
    let mut layouts_gone = false;
    for function in gone {
        state.kernels.remove(&function);
        layouts_gone |= state.layouts.remove(&function).is_some();
    }
    if layouts_gone {
        super::launch_memo::layouts_changed();
    }
}

/// The tracked variables of the program `function` comes from: a launch may use any of them.
pub fn variables_of(state: &State, function: Key) -> Vec<Key> {
    let program = state.kernels.get(&function).map(|(program, _)| program);
    program.and_then(|program| state.program_variables.get(program)).cloned().unwrap_or_default()
}

/// The function of a library kernel launches the same kernel.
pub unsafe fn kernel_function(forward: &mut Forward<'_, CUresult>, _call: &str, function: *mut *mut c_void, kernel: *mut c_void) -> Recorded {
    if !succeeded(forward) {
        return Ok(());
    }
    let _changing = programs_changing();
    let Some((program, name)) = with_state(|state| state.kernels.get(&key(kernel)).cloned()) else { return Ok(()) };
    // SAFETY: the call succeeded, so it wrote the function.
    let function = key(unsafe { *function });
    with_recorder(|state, recorder| kernel_known(state, recorder, function, program, name))
}

/// The program set an attribute of a function (a cluster size it allows, its dynamic shared
/// memory): the replay sets it too.
pub unsafe fn function_attribute(forward: &mut Forward<'_, CUresult>, _call: &str, function: *mut c_void, attribute: c_int, value: c_int) -> Recorded {
    if !succeeded(forward) {
        return Ok(());
    }
    let _changing = programs_changing();
    with_recorder(|state, recorder| {
        identify(state, recorder, function);
        recorder.kernel_attribute_set(key(function), attribute as u32, value.into());
    })
}

/// `cuKernelSetAttribute`, the runtime's `cudaFuncSetAttribute` on a library kernel, which it
/// launches as a function: recorded as `function_attribute`. The device is the replay's own.
pub unsafe fn kernel_attribute(forward: &mut Forward<'_, CUresult>, call: &str, attribute: c_int, value: c_int, kernel: *mut c_void, _device: c_int) -> Recorded {
    unsafe { function_attribute(forward, call, kernel, attribute, value) }
}

/// How the driver finds a variable: `cuModuleGetGlobal`, `cuLibraryGetGlobal`, `cuLibraryGetManaged`.
type Lookup = unsafe fn(*mut CUdeviceptr, *mut usize, *mut c_void, *const c_char) -> CUresult;

/// After a successful lookup, the variable `name` of `program` (asked again with the shim's own
/// out-parameters: the program may pass null for either) is tracked as memory of the program,
/// so that pointers to it relocate and its contents are kept. The program must be one the shim
/// saw loaded; the same variable asked for again stays one memory object.
fn variable(forward: &mut Forward<'_, CUresult>, program: *mut c_void, name: *const c_char, lookup: Lookup) -> Recorded {
    let _changing = programs_changing();
    let (mut address, mut size) = (0, 0);
    // SAFETY: the program and name the driver just accepted; out-parameters of the right types.
    if !succeeded(forward) || unsafe { lookup(&mut address, &mut size, program, name) } != CUDA_SUCCESS {
        return Ok(());
    }
    // SAFETY: the driver found the variable by this name, so it is a C string.
    let name = unsafe { CStr::from_ptr(name) }.to_string_lossy().into_owned();
    let program = key(program);
    let untracked_of_known_program = with_recorder(|state, recorder| {
        let known = recorder.program_images(program).is_some() || state.unread_images.contains_key(&program);
        known && !recorder.is_memory(address)
    })?;
    if !untracked_of_known_program {
        return Ok(());
    }
    super::memory::track(address, size as u64, None, MemShape::Variable { program, name }, 0)?;
    with_state(|state| {
        state.variables.insert(address, program);
        state.program_variables.entry(program).or_default().push(address);
    });
    Ok(())
}

pub unsafe fn module_global(forward: &mut Forward<'_, CUresult>, _call: &str, _: *mut CUdeviceptr, _: *mut usize, module: *mut c_void, name: *const c_char) -> Recorded {
    variable(forward, module, name, real::cuModuleGetGlobal_v2)
}

pub unsafe fn library_global(forward: &mut Forward<'_, CUresult>, _call: &str, _: *mut CUdeviceptr, _: *mut usize, library: *mut c_void, name: *const c_char) -> Recorded {
    variable(forward, library, name, real::cuLibraryGetGlobal)
}

/// A `__managed__` variable, which replay finds by name as any other.
pub unsafe fn library_managed(forward: &mut Forward<'_, CUresult>, _call: &str, _: *mut CUdeviceptr, _: *mut usize, library: *mut c_void, name: *const c_char) -> Recorded {
    variable(forward, library, name, real::cuLibraryGetManaged)
}

/// The name and program of a launched handle the shim did not see taken from its program
/// (a kernel the CUDA runtime got some other way): asked of the driver, as a `CUfunction` and
/// else as a `CUkernel`. Registered when its program is known.
pub fn identify(state: &mut State, recorder: &mut Recorder, function: *mut c_void) {
    if state.kernels.contains_key(&key(function)) {
        return;
    }
    let ask = |name_of: unsafe fn(*mut *const c_char, *mut c_void) -> CUresult,
               program_of: unsafe fn(*mut *mut c_void, *mut c_void) -> CUresult|
     -> Option<(Key, String)> {
        let (mut name, mut program) = (std::ptr::null::<c_char>(), std::ptr::null_mut::<c_void>());
        // SAFETY: out-parameters of the right types; the driver refuses handles it does not know.
        let found = unsafe { name_of(&mut name, function) == CUDA_SUCCESS && program_of(&mut program, function) == CUDA_SUCCESS };
        // SAFETY: the driver answered a C string it owns.
        (found && !name.is_null()).then(|| (key(program), unsafe { CStr::from_ptr(name) }.to_string_lossy().into_owned()))
    };
    let known = |(program, _): &(Key, String)| recorder.program_images(*program).is_some() || state.unread_images.contains_key(program);
    let found = ask(|n, f| unsafe { driver::cuFuncGetName(n, f) }, |p, f| unsafe { driver::cuFuncGetModule(p, f) })
        .filter(known)
        .or_else(|| ask(|n, f| unsafe { driver::cuKernelGetName(n, f) }, |p, f| unsafe { driver::cuKernelGetLibrary(p, f) }).filter(known));
    if let Some((program, name)) = found {
        kernel_known(state, recorder, key(function), program, name);
    }
}
