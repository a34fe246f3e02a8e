//! The host's own writes into memory the device also uses (pinned, registered and managed
//! memory), seen through page protection as gfxreconstruct's page guards see them: a watched
//! page is read-only until the host writes it; the fault marks the page written and makes it
//! writable, and the write goes on. The recorder takes the written pages (`take_written`),
//! keeps their bytes as host writes and protects them again (`rearm`). The device writes such
//! memory without the CPU's page tables, so only the host's writes fault.
//!
//! The signal handler reads fixed tables without locks or allocation: the watched ranges, and a
//! log of written pages. Calls that make the kernel write into user memory (`read`, `fread`)
//! would fail on a protected page instead of faulting: `io` makes their buffers writable first.

mod io;
mod maps;
mod signals;

use std::sync::atomic::{AtomicBool, AtomicU64, AtomicUsize, Ordering};
use std::sync::{Mutex, PoisonError};

pub const PAGE: u64 = 4096;

/// Finds the libc functions the shim interposes here when it is loaded: a first call may come
/// in a forked child or a signal handler, where looking a symbol up is not safe.
#[used]
#[link_section = ".init_array"]
static RESOLVE_AT_LOAD: extern "C" fn() = resolve_at_load;

extern "C" fn resolve_at_load() {
    io::resolve();
    signals::resolve();
}

/// The most objects watched at once; more are not watched (the recorder reads them again at
/// each window instead).
const MOST_WATCHED: usize = 1024;

/// The most pages the log holds between two looks; past that every watched object counts as
/// written whole.
const MOST_LOGGED: usize = 1 << 16;

/// A watched range of whole pages, `[start, end)`; `end == 0` when free.
struct Slot {
    start: AtomicU64,
    end: AtomicU64,
}

static SLOTS: [Slot; MOST_WATCHED] = [const { Slot { start: AtomicU64::new(0), end: AtomicU64::new(0) } }; MOST_WATCHED];
/// Serializes changes to `SLOTS` (the handler only reads them).
static SLOTS_CHANGING: Mutex<()> = Mutex::new(());
/// Whether any slot is in use: the one load `io`'s hooks make when nothing is watched.
static ANY_WATCHED: AtomicBool = AtomicBool::new(false);

/// Pages written since the last `take_written`.
struct Log {
    pages: [AtomicU64; MOST_LOGGED],
    len: AtomicUsize,
    overflowed: AtomicBool,
    /// A spin lock: the handler may run on any thread, and the recorder only holds it to copy.
    busy: AtomicBool,
}

/// What `take_written` copies the log into while it holds the log's lock: static memory, which
/// no watched page shares, so the copy cannot fault into the handler waiting for that lock.
static TAKEN: [AtomicU64; MOST_LOGGED] = [const { AtomicU64::new(0) }; MOST_LOGGED];

static LOG: Log = Log {
    pages: [const { AtomicU64::new(0) }; MOST_LOGGED],
    len: AtomicUsize::new(0),
    overflowed: AtomicBool::new(false),
    busy: AtomicBool::new(false),
};

impl Log {
    fn locked<R>(&self, f: impl FnOnce() -> R) -> R {
        while self.busy.compare_exchange_weak(false, true, Ordering::Acquire, Ordering::Relaxed).is_err() {
            std::hint::spin_loop();
        }
        let result = f();
        self.busy.store(false, Ordering::Release);
        result
    }

    fn push(&self, page: u64) {
        self.locked(|| {
            let len = self.len.load(Ordering::Relaxed);
            if len == MOST_LOGGED {
                self.overflowed.store(true, Ordering::Relaxed);
            } else {
                self.pages[len].store(page, Ordering::Relaxed);
                self.len.store(len + 1, Ordering::Release);
            }
        });
    }
}

fn page_of(address: u64) -> u64 {
    address & !(PAGE - 1)
}

fn pages_around(start: u64, len: u64) -> (u64, u64) {
    (page_of(start), page_of(start.saturating_add(len).saturating_add(PAGE - 1)))
}

/// Whether a watched range holds `address`.
fn watched(address: u64) -> bool {
    SLOTS.iter().any(|slot| {
        let end = slot.end.load(Ordering::Acquire);
        end != 0 && slot.start.load(Ordering::Acquire) <= address && address < end
    })
}

/// Makes page `page` writable again and logs it as written: the host is about to write it.
/// False where it is not watched (or cannot be made writable).
fn page_written(page: u64) -> bool {
    if !watched(page) || !protect(page, PAGE, libc::PROT_READ | libc::PROT_WRITE) {
        return false;
    }
    LOG.push(page);
    true
}

fn protect(start: u64, len: u64, protection: libc::c_int) -> bool {
    // SAFETY: changes only the protection of pages the program gave the device; every caller
    // keeps them readable, and writable whenever nothing watches them.
    unsafe { libc::mprotect(start as *mut libc::c_void, len as usize, protection) == 0 }
}

/// Watches the host's writes to `len` bytes at `start` (whole pages around them) from now on;
/// false where that cannot be done (see `maps::watchable`; too many watched). Pages are
/// protected before the caller reads the contents, so no write between the two goes unseen.
pub fn watch(start: u64, len: u64) -> bool {
    if len == 0 || !signals::install() {
        return false;
    }
    let (first, end) = pages_around(start, len);
    let _changing = SLOTS_CHANGING.lock().unwrap_or_else(PoisonError::into_inner);
    if !maps::watchable(first, end) {
        return false;
    }
    let Some(slot) = SLOTS.iter().find(|slot| slot.end.load(Ordering::Relaxed) == 0) else { return false };
    slot.start.store(first, Ordering::Release);
    slot.end.store(end, Ordering::Release);
    ANY_WATCHED.store(true, Ordering::Release);
    if !protect(first, end - first, libc::PROT_READ) {
        slot.end.store(0, Ordering::Release);
        return false;
    }
    true
}

/// Stops watching what `watch(start, len)` watched: its pages are writable again, except those
/// another watched range shares. The range stays watched until then: a write another thread
/// makes meanwhile still faults into a page the handler knows.
pub fn unwatch(start: u64, len: u64) {
    let (first, end) = pages_around(start, len);
    let _changing = SLOTS_CHANGING.lock().unwrap_or_else(PoisonError::into_inner);
    let Some(index) = SLOTS.iter().position(|slot| slot.start.load(Ordering::Relaxed) == first && slot.end.load(Ordering::Relaxed) == end) else {
        return;
    };
    let shared = |page: u64| {
        SLOTS.iter().enumerate().any(|(other, slot)| {
            other != index && slot.end.load(Ordering::Relaxed) > page && slot.start.load(Ordering::Relaxed) <= page
        })
    };
    let mut page = first;
    while page < end {
        if !shared(page) {
            protect(page, PAGE, libc::PROT_READ | libc::PROT_WRITE);
        }
        page += PAGE;
    }
    SLOTS[index].end.store(0, Ordering::Release);
    ANY_WATCHED.store(SLOTS.iter().any(|slot| slot.end.load(Ordering::Relaxed) != 0), Ordering::Release);
}

/// Whether the host wrote a watched page since the last `take_written`: one load.
pub fn any_written() -> bool {
    LOG.len.load(Ordering::Acquire) != 0 || LOG.overflowed.load(Ordering::Relaxed)
}

/// The pages written since the last call, appended to `pages` (each once); `false` when more
/// were written than the log holds, so that any watched page may have been.
pub fn take_written(pages: &mut Vec<u64>) -> bool {
    let start = pages.len();
    let (len, complete) = LOG.locked(|| {
        let len = LOG.len.swap(0, Ordering::AcqRel);
        for (taken, page) in TAKEN.iter().zip(&LOG.pages[..len]) {
            taken.store(page.load(Ordering::Relaxed), Ordering::Relaxed);
        }
        (len, !LOG.overflowed.swap(false, Ordering::Relaxed))
    });
    pages.extend(TAKEN[..len].iter().map(|page| page.load(Ordering::Relaxed)));
    pages[start..].sort_unstable();
    let mut kept = start;
    for index in start..pages.len() {
        if kept == start || pages[kept - 1] != pages[index] {
            pages[kept] = pages[index];
            kept += 1;
        }
    }
    pages.truncate(kept);
    complete
}

/// Protects the written pages from `start` on (`len` bytes) again, before their bytes are
/// read: a write after this faults again and is seen at the next look.
pub fn rearm(start: u64, len: u64) {
    let (first, end) = pages_around(start, len);
    let mut page = first;
    while page < end {
        if watched(page) {
            protect(page, PAGE, libc::PROT_READ);
        }
        page += PAGE;
    }
}

/// `len` bytes from `start` on are about to be written by the kernel on the program's behalf:
/// the watched pages among them become writable and count as written.
fn unguard(start: u64, len: u64) {
    if !ANY_WATCHED.load(Ordering::Acquire) || len == 0 {
        return;
    }
    let (first, end) = pages_around(start, len);
    let mut page = first;
    while page < end {
        page_written(page);
        page += PAGE;
    }
}

#[cfg(test)]
pub mod tests;
