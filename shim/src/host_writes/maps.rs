//! Which pages may be watched, from the process's mappings (`/proc/self/maps`): only pages of
//! readable and writable mappings, so that making them writable again never grants the program a
//! write it did not have; and never a thread's stack: the kernel pushes a signal's frame onto the
//! stack, and a fault whose frame lands on a protected page ends the process before any handler
//! runs (the CUDA runtime registers a local variable as pinned memory, for one).

/// Whether every page of `[start, end)` lies in readable and writable mappings, none of them the
/// main thread's stack or the calling thread's.
pub fn watchable(start: u64, end: u64) -> bool {
    let Ok(maps) = std::fs::read_to_string("/proc/self/maps") else { return false };
    if this_thread_s_stack().is_some_and(|(low, high)| start < high && low < end) {
        return false;
    }
    let mut covered = start;
    let mut mappings: Vec<(u64, u64)> = maps.lines().filter_map(watchable_mapping).collect();
    mappings.sort_unstable();
    for (from, to) in mappings {
        if from <= covered && covered < to {
            covered = to;
        }
        if covered >= end {
            return true;
        }
    }
    false
}

/// A `maps` line's range, if the mapping is readable and writable and not the main stack.
fn watchable_mapping(line: &str) -> Option<(u64, u64)> {
    let mut fields = line.split_whitespace();
    let (from, to) = fields.next()?.split_once('-')?;
    let permissions = fields.next()?;
    permissions.starts_with("rw").then_some(())?;
    (fields.nth(3) != Some("[stack]")).then_some(())?;
    Some((u64::from_str_radix(from, 16).ok()?, u64::from_str_radix(to, 16).ok()?))
}

/// The calling thread's stack, `[low, high)`.
fn this_thread_s_stack() -> Option<(u64, u64)> {
    // SAFETY: a zeroed attribute object is filled by `pthread_getattr_np` and destroyed after.
    unsafe {
        let mut attributes: libc::pthread_attr_t = std::mem::zeroed();
        if libc::pthread_getattr_np(libc::pthread_self(), &mut attributes) != 0 {
            return None;
        }
        let (mut low, mut size) = (std::ptr::null_mut(), 0usize);
        let found = libc::pthread_attr_getstack(&attributes, &mut low, &mut size) == 0;
        libc::pthread_attr_destroy(&mut attributes);
        found.then(|| (low as u64, low as u64 + size as u64))
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn only_mappings_that_are_readable_and_writable_and_no_stack_count() {
        assert_eq!(watchable_mapping("7f00-7f10 rw-p 00000000 00:00 0"), Some((0x7f00, 0x7f10)));
        assert_eq!(watchable_mapping("7f00-7f10 r--p 00000000 00:00 0 /lib/x.so"), None);
        assert_eq!(watchable_mapping("7ffe0-7fff0 rw-p 00000000 00:00 0                          [stack]"), None);
        let page = crate::host_writes::PAGE as usize;
        let memory = vec![0u8; 4 * page];
        let start = (memory.as_ptr() as u64).next_multiple_of(page as u64);
        assert!(watchable(start, start + 2 * page as u64));
        let code = watchable as *const () as u64 & !(page as u64 - 1);
        assert!(!watchable(code, code + page as u64));
    }

    #[test]
    fn a_variable_on_a_thread_s_stack_is_never_watchable() {
        let on_stack = |local: &u32| {
            let page = (local as *const u32 as u64) & !(crate::host_writes::PAGE - 1);
            watchable(page, page + crate::host_writes::PAGE)
        };
        assert!(!on_stack(&0), "the test's thread");
        assert!(!std::thread::spawn(move || on_stack(&0)).join().expect("a spawned thread"));
    }
}
