//! Launches that repeat. A training step launches the same kernels with the same argument bytes
//! as the step before (PyTorch's caching allocator hands out the same addresses), so what a
//! launch was recorded as is kept, per thread, by its function, queue and argument bytes, and
//! taken again while the recorder's memory, programs, kernels, textures and queues stand still
//! (`Recorder::objects_changed`): decoding the parameters and resolving their allocations was
//! half of a recorded launch. Where the launch also needs nothing read before it runs, it is
//! marked for `launch_log`, which records it without the recorder's lock.

use crate::fast_hash::HashMap;
use super::params;
use std::sync::atomic::{AtomicU64, Ordering};
use super::state::Layout;
use crate::recorder::{Accesses, Key};
use std::cell::RefCell;
use std::ffi::c_void;
use std::sync::Arc;
use trace_format::{Arg, KernelId};

/// A launch as recorded, apart from its grid.
pub struct Described {
    pub accesses: Accesses,
    pub kernel: KernelId,
    pub args: Vec<Arg>,
}

/// A kept launch, and the `launch_log::epoch` at which it needed nothing read first, if it did not.
pub struct Kept {
    pub described: Arc<Described>,
    pub settled_at: Option<u64>,
}

/// How many launches, and how many of their argument bytes, a thread keeps before it starts
/// again (a program launching ever new argument bytes gains nothing from it, and must not grow it).
const KEPT: usize = 4096;
const KEPT_BYTES: usize = 16 << 20;

#[derive(Default)]
pub struct LaunchMemo {
    /// The recorder's `objects_changed` the entries hold for.
    objects_changed: u64,
    entries: HashMap<Box<[u8]>, Kept>,
    /// Argument bytes the entries hold (in their keys and their arguments).
    bytes: usize,
    /// Parameter layouts of the functions this thread launched (the CUDA state's, copied here
    /// for launches that take no lock), as of `LAYOUTS_CHANGED`'s count `layouts_as_of`.
    layouts: HashMap<Key, Layout>,
    layouts_as_of: u64,
    /// The launch looked up last: its function, its queue and its argument bytes, one after
    /// another (a function's layout is fixed, so this names one launch).
    key: Vec<u8>,
}

/// Counts the times a function's layout changed (`layouts_changed`): each thread drops the
/// layouts it copied when it sees the count move.
static LAYOUTS_CHANGED: AtomicU64 = AtomicU64::new(0);

/// A function handle now names a kernel with other parameters than the layout copied for it.
pub fn layouts_changed() {
    LAYOUTS_CHANGED.fetch_add(1, Ordering::Relaxed);
}

thread_local! {
    static MEMO: RefCell<LaunchMemo> = RefCell::new(LaunchMemo::default());
}

/// Runs `work` with this thread's memo; `None` while a hook of this thread already has it (a
/// driver calling back into a hook).
pub fn with_memo<R>(work: impl FnOnce(&mut LaunchMemo) -> R) -> Option<R> {
    MEMO.try_with(|memo| memo.try_borrow_mut().ok().map(|mut memo| work(&mut memo))).ok().flatten()
}

impl LaunchMemo {
    /// Builds the key of a launch of `function` to `queue` from its argument bytes, read with the
    /// layout this thread keeps for the function: false without one, or where the launch does
    /// not hold them all.
    ///
    /// # Safety
    /// The program's launch arguments for `function`, as `params::each_argument` reads them.
    pub unsafe fn key_launch(&mut self, function: Key, queue: Key, params: *mut *mut c_void, extra: *mut *mut c_void) -> bool {
        self.drop_stale_layouts();
        let Some(layout) = self.layouts.get(&function) else { return false };
        let key = &mut self.key;
        key.clear();
        key.extend_from_slice(&function.to_ne_bytes());
        key.extend_from_slice(&queue.to_ne_bytes());
        // SAFETY: as the caller promises; the layout is this function's.
        unsafe { params::each_argument(layout, params, extra, |bytes| key.extend_from_slice(bytes)) }
    }

    /// The layouts this thread copied (none kept from before a function's layout changed).
    pub fn layouts(&mut self) -> &mut HashMap<Key, Layout> {
        self.drop_stale_layouts();
        &mut self.layouts
    }

    fn drop_stale_layouts(&mut self) {
        let changed = LAYOUTS_CHANGED.load(Ordering::Relaxed);
        if changed != self.layouts_as_of {
            self.layouts.clear();
            self.layouts_as_of = changed;
        }
    }

    /// The launch whose key was built last, if one like it was kept, whatever happened since.
    pub fn peek(&self) -> Option<&Kept> {
        self.entries.get(self.key.as_slice())
    }

    /// The launch whose key was built last, if one like it was kept since the objects last changed.
    pub fn find(&mut self, objects_changed: u64) -> Option<&mut Kept> {
        self.holding_for(objects_changed);
        self.entries.get_mut(self.key.as_slice())
    }

    /// Keeps `kept` for the launch whose key was built last.
    pub fn keep(&mut self, objects_changed: u64, kept: Kept) {
        self.holding_for(objects_changed);
        if self.entries.len() >= KEPT || self.bytes >= KEPT_BYTES {
            self.forget();
        }
        self.bytes += 2 * self.key.len();
        self.entries.insert(self.key.as_slice().into(), kept);
    }

    fn holding_for(&mut self, objects_changed: u64) {
        if self.objects_changed != objects_changed {
            self.forget();
            self.objects_changed = objects_changed;
        }
    }

    fn forget(&mut self) {
        self.entries.clear();
        self.bytes = 0;
    }
}
