//! Launches that repeat. A training step launches the same kernels with the same argument bytes
//! as the step before (PyTorch's caching allocator hands out the same addresses), so what a
//! launch was recorded as is kept, per thread, by its function, queue and argument bytes, and
//! taken again while the recorder's memory, programs, kernels, textures and queues stand still
//! (`Recorder::objects_changed`): decoding the parameters and resolving their allocations was
//! half of a recorded launch. Where the launch also needs nothing read before it runs, it is
//! marked for `launch_log`, which records it without the recorder's lock.

use crate::fast_hash::HashMap;
use super::state::Layout;
use crate::recorder::{Accesses, Key};
use std::cell::RefCell;
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
    /// for launches that take no lock).
    pub layouts: HashMap<Key, Layout>,
    /// The launch looked up last: its function, its queue and its argument bytes, one after
    /// another (a function's layout is fixed, so this names one launch).
    key: Vec<u8>,
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
    /// Starts the key of a launch of `function` to `queue`; the caller appends its argument bytes.
    pub fn key_for(&mut self, function: Key, queue: Key) -> &mut Vec<u8> {
        self.key.clear();
        self.key.extend_from_slice(&function.to_ne_bytes());
        self.key.extend_from_slice(&queue.to_ne_bytes());
        &mut self.key
    }

    /// Starts the key of a launch of `function` to `queue` as `key_for`, with the layout this
    /// thread keeps for the function, which `arguments` reads the argument bytes with and
    /// appends them (false: they could not be read). False without a layout kept.
    pub fn key_with_kept_layout(&mut self, function: Key, queue: Key, arguments: impl FnOnce(&[(u32, u32)], &mut Vec<u8>) -> bool) -> bool {
        let Some(layout) = self.layouts.get(&function) else { return false };
        self.key.clear();
        self.key.extend_from_slice(&function.to_ne_bytes());
        self.key.extend_from_slice(&queue.to_ne_bytes());
        arguments(layout, &mut self.key)
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
