//! Kernel launches (`cuLaunchKernel`, `cuLaunchKernelEx`): the grid, and the parameters decoded
//! with the kernel's layout, memory ones relocated.

use super::commands::{enqueue_described, untracked, Enqueued, UNTRACKED_MEMORY};
use super::launch_log::{self, Logged};
use super::launch_memo::{with_memo, Described, Kept};
use super::streams::stream_key;
use super::params::{self, Embedded, Value};
use super::state::{Layout, State};
use super::textures;
use super::{key, succeeded, CUresult, CUstream, Recorded};
use crate::entry::Forward;
use crate::session;
use crate::recorder::{Access, Accesses, Key, Recorder};
use std::ffi::{c_uint, c_void};
use std::sync::atomic::{AtomicU64, Ordering};
use std::sync::Arc;
use trace_format::{Arg, Command, EmbeddedPointer, KernelId, KernelLaunch, Launch, Param};

/// `CUlaunchConfig` of cuda.h.
#[repr(C)]
pub struct LaunchConfig {
    grid: [c_uint; 3],
    block: [c_uint; 3],
    shared_bytes: c_uint,
    stream: CUstream,
    attributes: *const LaunchAttribute,
    attribute_count: c_uint,
}

/// `CUlaunchAttribute` of cuda.h: an id and a 64-byte value.
#[repr(C)]
struct LaunchAttribute {
    id: c_uint,
    pad: [u8; 4],
    value: [u8; 64],
}

const CU_LAUNCH_ATTRIBUTE_COOPERATIVE: c_uint = 2;
const CU_LAUNCH_ATTRIBUTE_CLUSTER_DIMENSION: c_uint = 4;

/// A kernel launch's shape as the program passed it: what the launch log keeps of each launch
/// (a `Launch` is nearly twice as large, and every logged launch is written by the program's
/// thread and read by the shim's).
#[derive(Clone, Copy)]
pub struct Grid {
    grid: [c_uint; 3],
    block: [c_uint; 3],
    shared_bytes: c_uint,
    cluster: Option<[c_uint; 3]>,
    cooperative: bool,
}

impl Grid {
    pub fn launch(self) -> Launch {
        let Grid { grid, block, shared_bytes, cluster, cooperative } = self;
        Launch::Grid { grid, block, shared_bytes, cluster, cooperative }
    }
}

/// The launch's parameters, decoded.
#[derive(Clone)]
pub struct Decoded {
    pub layout: Layout,
    pub values: Vec<Value>,
    /// Tracked variables of the kernel's program, which it may use by name with no pointer passed.
    pub variables: Vec<Key>,
}

/// The kernel launch a recorder records for `function` (a key it knows) with these parameters.
pub fn kernel_command(recorder: &mut Recorder, function: Key, decoded: Decoded, launch: Launch) -> Result<Command, &'static str> {
    kernel_binding(recorder, function, decoded).map(|(kernel, args)| Command::Kernel(KernelLaunch { kernel, args, launch }))
}

/// A launch's trace kernel and the arguments its parameters bind, or why it cannot be recorded.
type Bound = Result<(KernelId, Vec<Arg>), &'static str>;

/// The trace kernel for `function` and the arguments these parameters bind.
fn kernel_binding(recorder: &mut Recorder, function: Key, decoded: Decoded) -> Bound {
    let params = decoded.layout.iter().zip(&decoded.values).map(|(&(offset, size), value)| Param { offset, size, kind: value.kind() });
    let kernel = recorder.kernel_id(function, params).ok_or("a kernel the shim did not see loaded")?;
    let mut args = Vec::with_capacity(decoded.values.len());
    for value in decoded.values {
        args.push(match value {
            Value::Memory { mem, offset } => Arg::Memory { mem: recorder.mem_id(mem).ok_or_else(|| untracked(mem))?, offset },
            Value::Bytes(bytes) => Arg::Value(bytes),
            Value::Condition(condition) => Arg::Condition(condition),
            Value::Texture { handle, .. } => Arg::Texture(recorder.texture_id(handle).ok_or("a texture or surface object the shim did not see created")?),
            Value::BytesWithPointers { bytes, pointers } => {
                let relocated = |pointer: &Embedded| Some(EmbeddedPointer { at: pointer.at, mem: recorder.mem_id(pointer.mem)?, offset: pointer.offset });
                let pointers = pointers.iter().map(relocated).collect::<Option<Vec<_>>>().ok_or(UNTRACKED_MEMORY)?;
                Arg::ValueWithPointers { bytes, pointers }
            }
        });
    }
    Ok((kernel, args))
}

/// Every allocation a parameter points into and every variable of the kernel's program, read
/// and written (what a kernel does with them is not known).
pub fn kernel_accesses(decoded: &Decoded) -> Vec<Access> {
    let parameters = decoded.values.iter().flat_map(Value::memories);
    parameters.chain(decoded.variables.iter().copied()).map(|mem| Access { mem, write: true, overwrites: false }).collect()
}

/// Parameters the kernel declares as pointers that name device memory the shim did not see
/// allocated: adopted (`memory::adopt`) so that they decode as memory. Only untracked words the
/// kernel declares as pointers are asked about: tracked pointers cost a lookup, values no driver call.
/// Returns whether the driver placed one in no allocation.
fn adopt_pointer_parameters(recorder: &mut Recorder, function: Key, arguments: &[&[u8]]) -> bool {
    let mut unknown = false;
    for (index, bytes) in arguments.iter().enumerate() {
        let Ok(word) = <[u8; 8]>::try_from(*bytes).map(u64::from_ne_bytes) else { continue };
        let untracked = word != 0 && recorder.locate(word).is_none();
        if untracked && recorder.param_type(function, index).is_some_and(|declared| declared.ends_with('*')) {
            unknown |= super::memory::adopt(recorder, word).is_none();
        }
    }
    unknown
}

/// How many words `State::not_allocations` keeps before it starts again.
const NOT_ALLOCATIONS_KEPT: usize = 1 << 16;

/// Words of structures passed by value that may be device addresses and lie in no tracked
/// allocation, or just past the end of one (where one the shim did not see may start): the
/// driver is asked for the allocation holding them (nvJPEG passes the image its JPEG engine
/// decoded inside a structure). A word the driver places in no allocation is not asked again.
/// Returns whether the driver placed one in no allocation this time.
fn adopt_embedded_pointers(state: &mut State, recorder: &mut Recorder, arguments: &[&[u8]]) -> bool {
    let mut unknown = false;
    for bytes in arguments.iter().filter(|bytes| bytes.len() > 8) {
        for word in bytes.chunks_exact(8).map(|word| u64::from_ne_bytes(word.try_into().expect("8 bytes"))) {
            if !(1 << 32..1 << 48).contains(&word) || state.not_allocations.contains(&word) {
                continue;
            }
            let untracked = recorder.locate(word).is_none_or(|(mem, offset)| recorder.memory_size(mem) == Some(offset));
            if untracked && super::memory::adopt(recorder, word).is_none() {
                if state.not_allocations.len() >= NOT_ALLOCATIONS_KEPT {
                    state.not_allocations.clear();
                }
                state.not_allocations.insert(word);
                unknown = true;
            }
        }
    }
    unknown
}

const NO_PARAMETERS: &str = "the driver did not report the kernel's parameters";

/// Reads the launch's parameters with the kernel's layout (asked of the driver once); also
/// says whether the driver placed an address the kernel may use in no allocation (the
/// description then holds only until the driver is asked again).
unsafe fn decode(state: &mut State, recorder: &mut Recorder, function: *mut c_void, params: *mut *mut c_void, extra: *mut *mut c_void) -> Option<(Decoded, bool)> {
    let layout = state.layouts.entry(key(function)).or_insert_with(|| params::layout(function)).clone()?;
    // SAFETY: the program's launch arguments, for this kernel.
    let arguments = unsafe { params::arguments(&layout, params, extra) }?;
    super::modules::identify(state, recorder, function);
    super::modules::read_image(state, recorder, key(function));
    let unknown = adopt_pointer_parameters(recorder, key(function), &arguments) | adopt_embedded_pointers(state, recorder, &arguments);
    let values = params::decode(&arguments, |address| recorder.locate(address), |index, word| textures::parameter(recorder, key(function), index, word));
    Some((Decoded { layout, values, variables: super::modules::variables_of(state, key(function)) }, !unknown))
}

/// Launches described in their hooks, under the lock (reported at the end).
static DESCRIBED: AtomicU64 = AtomicU64::new(0);

/// How many launches were described in their hooks so far (the others were logged).
pub fn described() -> u64 {
    DESCRIBED.load(Ordering::Relaxed)
}

/// What the launch uses, and its kernel and arguments: as a launch with the same bytes was
/// recorded (`launch_memo`), else decoded, and kept for the next one, marked settled where its
/// memory needs no read before later launches (which `launch_log` then records).
unsafe fn describe(
    state: &mut State,
    recorder: &mut Recorder,
    function: *mut c_void,
    queue: Key,
    params: *mut *mut c_void,
    extra: *mut *mut c_void,
) -> (Accesses, Bound) {
    DESCRIBED.fetch_add(1, Ordering::Relaxed);
    let Some(layout) = state.layouts.entry(key(function)).or_insert_with(|| params::layout(function)).clone() else { return (Accesses::new(), Err(NO_PARAMETERS)) };
    let objects_changed = recorder.objects_changed();
    let known = with_memo(|memo| {
        memo.layouts().entry(key(function)).or_insert_with(|| layout.clone());
        // SAFETY: the program's launch arguments, for this kernel.
        if !unsafe { memo.key_launch(key(function), queue, params, extra) } {
            return Some((Accesses::new(), Err(NO_PARAMETERS)));
        }
        let kept = memo.find(objects_changed)?;
        kept.settled_at = recorder.settled(&kept.described.accesses).then(launch_log::epoch);
        let described = &kept.described;
        Some((described.accesses.clone(), Ok((described.kernel, described.args.clone()))))
    });
    if let Some(Some(known)) = known {
        return known;
    }
    // SAFETY: as above.
    let Some((decoded, lasting)) = (unsafe { decode(state, recorder, function, params, extra) }) else { return (Accesses::new(), Err(NO_PARAMETERS)) };
    let accesses = Accesses::from_vec(kernel_accesses(&decoded));
    let bound = kernel_binding(recorder, key(function), decoded);
    if let (true, Ok((kernel, args))) = (lasting, &bound) {
        let described = Arc::new(Described { accesses: accesses.clone(), kernel: *kernel, args: args.clone() });
        launch_log::watch_forks();
        let settled_at = recorder.settled(&accesses).then(launch_log::epoch);
        with_memo(|memo| memo.keep(recorder.objects_changed(), Kept { described, settled_at }));
    }
    (accesses, bound)
}

/// The launch as kept, if it was settled at the current epoch (see `launch_log`) and no page
/// the shim watches was written since the recorder last looked.
///
/// # Safety
/// The program's launch, as it passes it to the driver.
unsafe fn settled(function: *mut c_void, queue: Key, params: *mut *mut c_void, extra: *mut *mut c_void) -> Option<Arc<Described>> {
    if crate::host_writes::any_written() {
        return None;
    }
    with_memo(|memo| {
        // SAFETY: as the caller promises.
        if !unsafe { memo.key_launch(key(function), queue, params, extra) } {
            return None;
        }
        let kept = memo.peek()?;
        (kept.settled_at == Some(launch_log::epoch())).then(|| kept.described.clone())
    })
    .flatten()
}

unsafe fn launch(
    forward: &mut Forward<'_, CUresult>,
    call: &'static str,
    stream: CUstream,
    function: *mut c_void,
    params: *mut *mut c_void,
    extra: *mut *mut c_void,
    grid: Grid,
) -> Recorded {
    // Outside the capture, `enqueue_described` passes the launch through before anything is asked.
    if session::commands_captured() {
        let queue = stream_key(stream, call);
        // SAFETY: the program's launch, as it passes it to the driver.
        if let Some(described) = unsafe { settled(function, queue, params, extra) } {
            if succeeded(forward) {
                return launch_log::log(Logged { queue, call, described, grid });
            }
            return Ok(());
        }
    }
    // Described under the lock that prepares the launch: one lock per launch before the call.
    // SAFETY: as above.
    let describe = |state: &mut State, recorder: &mut Recorder| unsafe { describe(state, recorder, function, stream_key(stream, call), params, extra) };
    let build = move |_: &mut Recorder, bound: Bound| {
        bound.map(|(kernel, args)| Command::Kernel(KernelLaunch { kernel, args, launch: grid.launch() }))
    };
    enqueue_described(forward, Enqueued::new(call, stream), describe, build)
}

pub unsafe fn launch_kernel(
    forward: &mut Forward<'_, CUresult>,
    call: &'static str,
    function: *mut c_void,
    grid_x: c_uint,
    grid_y: c_uint,
    grid_z: c_uint,
    block_x: c_uint,
    block_y: c_uint,
    block_z: c_uint,
    shared_bytes: c_uint,
    stream: CUstream,
    params: *mut *mut c_void,
    extra: *mut *mut c_void,
) -> Recorded {
    let grid = Grid { grid: [grid_x, grid_y, grid_z], block: [block_x, block_y, block_z], shared_bytes, cluster: None, cooperative: false };
    unsafe { launch(forward, call, stream, function, params, extra, grid) }
}

pub unsafe fn launch_kernel_ex(
    forward: &mut Forward<'_, CUresult>,
    call: &'static str,
    config: *const LaunchConfig,
    function: *mut c_void,
    params: *mut *mut c_void,
    extra: *mut *mut c_void,
) -> Recorded {
    // SAFETY: the driver reads the configuration and its attributes; a null one it refuses.
    let Some(config) = (unsafe { config.as_ref() }) else {
        forward.call();
        return Ok(());
    };
    let attributes = match config.attributes.is_null() {
        true => &[][..],
        false => unsafe { std::slice::from_raw_parts(config.attributes, config.attribute_count as usize) },
    };
    let (mut cluster, mut cooperative) = (None, false);
    for attribute in attributes {
        let word = |index: usize| u32::from_ne_bytes([0, 1, 2, 3].map(|byte| attribute.value[index * 4 + byte]));
        match attribute.id {
            CU_LAUNCH_ATTRIBUTE_CLUSTER_DIMENSION => cluster = Some([word(0), word(1), word(2)]),
            CU_LAUNCH_ATTRIBUTE_COOPERATIVE => cooperative = word(0) != 0,
            _ => {}
        }
    }
    let grid = Grid { grid: config.grid, block: config.block, shared_bytes: config.shared_bytes, cluster, cooperative };
    unsafe { launch(forward, call, config.stream, function, params, extra, grid) }
}

pub unsafe fn launch_cooperative_kernel(
    forward: &mut Forward<'_, CUresult>,
    call: &'static str,
    function: *mut c_void,
    grid_x: c_uint,
    grid_y: c_uint,
    grid_z: c_uint,
    block_x: c_uint,
    block_y: c_uint,
    block_z: c_uint,
    shared_bytes: c_uint,
    stream: CUstream,
    params: *mut *mut c_void,
) -> Recorded {
    let grid = Grid { grid: [grid_x, grid_y, grid_z], block: [block_x, block_y, block_z], shared_bytes, cluster: None, cooperative: true };
    unsafe { launch(forward, call, stream, function, params, std::ptr::null_mut(), grid) }
}
