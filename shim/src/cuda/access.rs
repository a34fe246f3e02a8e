//! The shim's own device work: reading memory back for the recorder and waiting for the
//! program's streams, with driver calls made inside a hook (so unrecorded) and only between
//! the program's calls.
//!
//! None of it may disturb a program that captures streams into graphs of its own (in this or
//! any other thread): every call runs under the relaxed capture mode (the thread's mode is
//! restored after), copies go on a non-blocking stream of the shim's own in the memory's
//! context (never the legacy stream, whose implicit synchronization with a capturing blocking
//! stream would invalidate the capture), and while any stream captures nothing synchronizes the
//! device or the legacy stream.

use super::arrays::packed_read;
use super::hooks::{driver, real, CUcontext};
use super::state::State;
use super::streams::{driver_stream, DriverStream, LEGACY, PER_THREAD};
use super::sync::quiet;
use super::CUDA_SUCCESS;
use crate::fast_hash::HashMap;
use crate::recorder::{Key, MemoryAccess};
use std::ffi::{c_int, c_uint, c_void};
use std::sync::{Mutex, PoisonError};

/// `CU_STREAM_CAPTURE_MODE_RELAXED`: the thread's calls are not checked against captures.
const CAPTURE_MODE_RELAXED: c_int = 2;
/// `CU_STREAM_NON_BLOCKING`.
const NON_BLOCKING: c_uint = 1;
/// `CU_EVENT_DISABLE_TIMING`.
const NO_TIMING: c_uint = 2;
/// `CU_EVENT_BLOCKING_SYNC | CU_EVENT_DISABLE_TIMING`: a wait on it sleeps instead of spinning a core.
const BLOCKING_NO_TIMING: c_uint = 3;

/// The shim's own stream of a context, and an event it orders that stream with.
#[derive(Clone, Copy)]
struct OwnStream {
    stream: usize,
    event: usize,
}

/// By context key. Locked inside the CUDA state lock (innermost).
static OWN_STREAMS: Mutex<Option<HashMap<Key, OwnStream>>> = Mutex::new(None);

/// The thread's stream capture mode set to relaxed until dropped, then restored: the shim's
/// calls neither fail nor invalidate a capture of the program's because of their kind.
struct RelaxedCapture(c_int);

impl RelaxedCapture {
    fn enter() -> RelaxedCapture {
        let mut mode = CAPTURE_MODE_RELAXED;
        // SAFETY: an in-out parameter of the right type.
        let status = unsafe { driver::cuThreadExchangeStreamCaptureMode(&mut mode) };
        RelaxedCapture(if status == CUDA_SUCCESS { mode } else { CAPTURE_MODE_RELAXED })
    }
}

impl Drop for RelaxedCapture {
    fn drop(&mut self) {
        if self.0 != CAPTURE_MODE_RELAXED {
            // SAFETY: as in `enter`; puts back the mode the thread had.
            unsafe { driver::cuThreadExchangeStreamCaptureMode(&mut self.0) };
        }
    }
}

/// Runs `work` with `context` current (when it is not already), and the previous one after.
fn in_context<R>(context: Option<Key>, work: impl FnOnce() -> R) -> R {
    let mut current: CUcontext = std::ptr::null_mut();
    // SAFETY: an out-parameter of the right type.
    unsafe { driver::cuCtxGetCurrent(&mut current) };
    let Some(context) = context.filter(|&context| context != current as Key) else { return work() };
    // SAFETY: a context the program created and has not destroyed (its memory is forgotten
    // when it is, see `contexts`).
    if unsafe { driver::cuCtxPushCurrent_v2(context as usize as CUcontext) } != CUDA_SUCCESS {
        return work();
    }
    let result = work();
    let mut popped: CUcontext = std::ptr::null_mut();
    // SAFETY: pops what was pushed above.
    unsafe { driver::cuCtxPopCurrent_v2(&mut popped) };
    result
}

/// The shim's stream of the current context (`context` names it), created on first use.
fn own_stream(context: Key) -> Option<OwnStream> {
    let mut streams = OWN_STREAMS.lock().unwrap_or_else(PoisonError::into_inner);
    let streams = streams.get_or_insert_with(HashMap::default);
    if let Some(&own) = streams.get(&context) {
        return Some(own);
    }
    let (mut stream, mut event): (*mut c_void, *mut c_void) = (std::ptr::null_mut(), std::ptr::null_mut());
    // SAFETY: out-parameters of the right types; the stream and event live as long as the context.
    let created = unsafe { real::cuStreamCreate(&mut stream, NON_BLOCKING) == CUDA_SUCCESS && driver::cuEventCreate(&mut event, NO_TIMING) == CUDA_SUCCESS };
    if !created {
        crate::log::warning!("cannot create the shim's own stream (memory is not read back)");
        return None;
    }
    let own = OwnStream { stream: stream as usize, event: event as usize };
    streams.insert(context, own);
    Some(own)
}

/// The context `context` is gone (destroyed or reset): so is the shim's stream in it.
pub fn context_gone(context: Key) {
    if let Some(streams) = OWN_STREAMS.lock().unwrap_or_else(PoisonError::into_inner).as_mut() {
        streams.remove(&context);
    }
}

/// Where a stream's work stood at `mark_streams`: an event of the shim's recorded on it; a default
/// stream of this thread, which nobody can destroy, waited for itself; or the whole context where
/// only a device-wide wait reaches the stream (another thread's default stream).
pub enum StreamMark {
    Event(usize),
    Default(usize),
    Context,
}

/// Marks where the streams behind `queues` stand, under the recorder's lock, which a stream's
/// destruction takes before the driver sees it: a stream is named to the driver only while it
/// lives. `wait_for_marks` then waits without the lock, naming the shim's events only (waiting
/// on the streams themselves crashed inside libcuda where another thread destroyed one meanwhile).
/// Each event is made in its stream's context, which need not be the current one.
pub fn mark_streams(queues: &[Key]) -> Vec<StreamMark> {
    let _relaxed = RelaxedCapture::enter();
    let mark = |queue: Key| {
        let DriverStream::Handle(stream) = driver_stream(queue) else { return StreamMark::Context };
        if queue == LEGACY || queue & 0xf == PER_THREAD {
            return StreamMark::Default(stream as usize);
        }
        let mut context: CUcontext = std::ptr::null_mut();
        // SAFETY: a live stream of the program (above) and an out-parameter of the right type.
        if unsafe { driver::cuStreamGetCtx(stream, &mut context) } != CUDA_SUCCESS {
            return StreamMark::Context;
        }
        in_context(Some(context as Key), || {
            let mut event: *mut c_void = std::ptr::null_mut();
            // SAFETY: as above; the event belongs to the stream's context, current here.
            unsafe {
                if driver::cuEventCreate(&mut event, BLOCKING_NO_TIMING) != CUDA_SUCCESS {
                    return StreamMark::Context;
                }
                if real::cuEventRecord(event, stream) != CUDA_SUCCESS {
                    driver::cuEventDestroy_v2(event);
                    return StreamMark::Context;
                }
            }
            StreamMark::Event(event as usize)
        })
    };
    queues.iter().map(|&queue| mark(queue)).collect()
}

/// Waits until the work marked by `mark_streams` has finished.
pub fn wait_for_marks(marks: Vec<StreamMark>) {
    let _relaxed = RelaxedCapture::enter();
    for mark in marks {
        // SAFETY: events the shim created and recorded, destroyed once waited for; default
        // streams of this thread.
        let status = unsafe {
            match mark {
                StreamMark::Event(event) => {
                    let status = real::cuEventSynchronize(event as *mut c_void);
                    driver::cuEventDestroy_v2(event as *mut c_void);
                    status
                }
                StreamMark::Default(stream) => real::cuStreamSynchronize(stream as *mut c_void),
                StreamMark::Context => real::cuCtxSynchronize(),
            }
        };
        if status != CUDA_SUCCESS {
            crate::log::warning!("cannot wait for the program's streams (error {status})");
        }
    }
}

/// Waits for all work submitted to the stream behind `queue`. While any stream captures
/// (`capture_active`), the legacy stream and other threads' default streams (only a
/// device-wide wait reaches those) are not waited for.
pub fn wait_for(queue: Key, capture_active: bool) {
    let _relaxed = RelaxedCapture::enter();
    // SAFETY: the streams named are the program's live streams or the default ones.
    let status = unsafe {
        match driver_stream(queue) {
            DriverStream::Handle(_) if capture_active && queue == LEGACY => return,
            DriverStream::OtherThreadsDefault if capture_active => return,
            DriverStream::Handle(stream) => real::cuStreamSynchronize(stream),
            DriverStream::OtherThreadsDefault => real::cuCtxSynchronize(),
        }
    };
    if status != CUDA_SUCCESS {
        crate::log::warning!("cannot wait for stream {queue:#x} (error {status})");
    }
}

pub struct DeviceAccess<'a> {
    state: &'a State,
    /// The stream of the command whose first uses are read, if any.
    submitting: Option<Key>,
}

impl<'a> DeviceAccess<'a> {
    pub fn new(state: &'a State) -> DeviceAccess<'a> {
        DeviceAccess { state, submitting: None }
    }

    /// For the first uses of a command submitted to `queue`: memory that work may write out of
    /// the shim's sight is read after the work the program submitted there before (nvJPEG's JPEG
    /// engine decodes into memory a kernel on that stream then reads). Only that memory: a
    /// kernel submitted before may spin on a flag the host sets after this call.
    pub fn before_submission(state: &'a State, queue: Key) -> DeviceAccess<'a> {
        DeviceAccess { state, submitting: Some(queue) }
    }

    /// Makes the shim's stream wait until the stream that allocated `mem` in stream order got
    /// there; `false` when that cannot be done without touching a stream a capture forbids.
    fn after_allocation(&self, mem: Key, own: OwnStream) -> bool {
        self.state.ordered_allocations.get(&mem).is_none_or(|&queue| self.after_stream(queue, own))
    }

    /// Makes the shim's stream wait until `queue` got where the program's submissions reached;
    /// `false` when that cannot be done without touching a stream a capture forbids.
    fn after_stream(&self, queue: Key, own: OwnStream) -> bool {
        let stream = match driver_stream(queue) {
            DriverStream::Handle(_) if quiet(self.state) && queue == LEGACY => return false,
            DriverStream::Handle(stream) => stream,
            // Only that thread can name its default stream; what it submitted was long reached.
            DriverStream::OtherThreadsDefault => return true,
        };
        let event = own.event as *mut c_void;
        // SAFETY: the shim's event and stream, and a live stream of the program.
        unsafe { real::cuEventRecord(event, stream) == CUDA_SUCCESS && real::cuStreamWaitEvent(own.stream as *mut c_void, event, 0) == CUDA_SUCCESS }
    }
}

impl MemoryAccess for DeviceAccess<'_> {
    fn drain(&self) {
        if !quiet(self.state) {
            // SAFETY: no arguments; waits for the current context's work.
            let status = unsafe { real::cuCtxSynchronize() };
            if status != CUDA_SUCCESS {
                crate::log::warning!("cannot wait for the device before the capture (error {status})");
            }
        }
    }

    fn read(&self, mem: Key, size: u64) -> Option<Vec<u8>> {
        self.read_ordered(mem, size, false)
    }

    fn read_after_submitted(&self, mem: Key, size: u64) -> Option<Vec<u8>> {
        self.read_ordered(mem, size, true)
    }
}

impl DeviceAccess<'_> {
    /// `mem` read on the shim's stream, after its stream-ordered allocation and, with
    /// `after_submitted`, after the submitting stream's earlier work.
    fn read_ordered(&self, mem: Key, size: u64, after_submitted: bool) -> Option<Vec<u8>> {
        let mut contents = crate::large_buffers::of_len(usize::try_from(size).ok()?);
        let _relaxed = RelaxedCapture::enter();
        let context = self.state.memory_contexts.get(&mem).copied();
        let status = in_context(context, || {
            let mut current: CUcontext = std::ptr::null_mut();
            // SAFETY: an out-parameter of the right type.
            unsafe { driver::cuCtxGetCurrent(&mut current) };
            let own = own_stream(current as Key)?;
            if !self.after_allocation(mem, own) {
                crate::log::debug!("memory {mem:#x} is not read: its allocation is ordered on the legacy stream while a stream captures");
                return None;
            }
            // Where that cannot be ordered, read as things stand.
            if let Some(queue) = self.submitting.filter(|_| after_submitted) {
                self.after_stream(queue, own);
            }
            let stream = own.stream as *mut c_void;
            // SAFETY: `mem` is a live allocation (or array) of `size` bytes (packed); the buffer
            // holds as many and outlives the copy, which the stream synchronization completes.
            Some(unsafe {
                let copied = match self.state.array_at.get(&mem).and_then(|handle| self.state.arrays.get(handle)) {
                    Some(array) => real::cuMemcpy3DAsync_v2(&packed_read(array, contents.as_mut_ptr().cast()), stream),
                    None => real::cuMemcpyDtoHAsync_v2(contents.as_mut_ptr().cast(), mem, contents.len(), stream),
                };
                match copied {
                    CUDA_SUCCESS => real::cuStreamSynchronize(stream),
                    failed => failed,
                }
            })
        })?;
        if status != CUDA_SUCCESS {
            crate::log::warning!("cannot read memory {mem:#x} back (error {status})");
            return None;
        }
        Some(contents)
    }
}
