//! Launches that repeat. A training step launches the same kernels with the same argument bytes
//! as the step before (PyTorch's caching allocator hands out the same addresses), so what a
//! launch was recorded as is kept by its function and argument bytes, and taken again while the
//! recorder's memory, programs, kernels and textures stand still (`Recorder::objects_changed`):
//! decoding the parameters and resolving their allocations was half of a recorded launch.

use crate::fast_hash::HashMap;
use crate::recorder::{Accesses, Key};
use trace_format::{Arg, KernelId};

/// A launch as recorded, apart from its grid.
pub struct Described {
    pub accesses: Accesses,
    pub kernel: KernelId,
    pub args: Vec<Arg>,
}

/// How many launches are kept before the memo starts again (a program launching ever new
/// argument bytes gains nothing from it, and must not grow it).
const KEPT: usize = 4096;

#[derive(Default)]
pub struct LaunchMemo {
    /// The recorder's `objects_changed` the entries hold for.
    objects_changed: u64,
    entries: HashMap<Box<[u8]>, Described>,
    /// The launch looked up last: its function and its argument bytes, one after another (a
    /// function's layout is fixed, so this names one launch).
    key: Vec<u8>,
}

impl LaunchMemo {
    /// Starts the key of a launch of `function`; the caller appends its argument bytes.
    pub fn key_for(&mut self, function: Key) -> &mut Vec<u8> {
        self.key.clear();
        self.key.extend_from_slice(&function.to_ne_bytes());
        &mut self.key
    }

    /// The launch whose key was built last, if one like it was kept since the objects last changed.
    pub fn find(&mut self, objects_changed: u64) -> Option<&Described> {
        self.holding_for(objects_changed);
        self.entries.get(self.key.as_slice())
    }

    /// Keeps `described` for the launch whose key was built last.
    pub fn keep(&mut self, objects_changed: u64, described: Described) {
        self.holding_for(objects_changed);
        if self.entries.len() >= KEPT {
            self.entries.clear();
        }
        self.entries.insert(self.key.as_slice().into(), described);
    }

    fn holding_for(&mut self, objects_changed: u64) {
        if self.objects_changed != objects_changed {
            self.entries.clear();
            self.objects_changed = objects_changed;
        }
    }
}
