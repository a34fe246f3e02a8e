//! Launches, and the synchronizations between them, recorded off the program's thread. A launch
//! that `launch_memo` kept as settled at the current epoch needs neither its parameters decoded
//! nor memory read before it runs, so its hook passes it to the driver and appends it here,
//! without the recorder's lock. Its node and edges are made under that lock by whoever takes it
//! next: any CUDA hook (`with_recorder` records the log first, so the recorder sees commands in
//! the order their calls returned, as when each hook recorded its own), or meanwhile a thread of
//! the shim's that polls the log. The program's thread pays for the lookup and the append, the
//! shim's thread for the rest.
//!
//! A synchronization logs where its wait began, and, where closing its window reads nothing
//! (`Recorder::closes_unread`), the window's closing too: its nodes become records on the
//! shim's thread as well (closing a window of 100 launches cost the program 800 instructions a
//! launch).

use super::access::DeviceAccess;
use super::launch_memo::Described;
use super::launches::Grid;
use super::state::{with_recorder, State};
use super::Failure;
use crate::session;
use crate::recorder::{Key, Order, Recorder, Submission, SyncScope};
use std::sync::atomic::{AtomicBool, AtomicU32, AtomicU64, Ordering};
use std::sync::{Arc, Mutex, Once, OnceLock, PoisonError};
use std::thread::Thread;
use std::time::Duration;
use trace_format::{Api, Command, KernelLaunch};

/// A launch the driver accepted, to be recorded.
pub struct Logged {
    pub queue: Key,
    pub call: &'static str,
    pub described: Arc<Described>,
    pub grid: Grid,
}

/// What a synchronization waited for.
#[derive(Clone, Copy)]
pub enum Waited {
    Everything,
    Queue(Key),
    Event(Key),
}

impl Waited {
    pub fn scope(&self) -> SyncScope<'_> {
        match self {
            Waited::Everything => SyncScope::Everything,
            Waited::Queue(queue) => SyncScope::Queues(std::slice::from_ref(queue)),
            Waited::Event(event) => SyncScope::Events(std::slice::from_ref(event)),
        }
    }
}

/// What a synchronization covers, taken as its wait began (`Recorder::wait_begins`): at once,
/// or where the log reached then.
pub enum WaitStart {
    Known(SyncScope<'static>),
    Logged(Waited, Arc<Mutex<Option<SyncScope<'static>>>>),
}

impl WaitStart {
    /// The scope, once the log was recorded past the wait's start (the caller records it
    /// first). Had the log been dropped since (a fork), what was waited for, taken now.
    pub fn scope(self, recorder: &Recorder) -> SyncScope<'static> {
        match self {
            WaitStart::Known(scope) => scope,
            WaitStart::Logged(waited, taken) => {
                let taken = taken.lock().unwrap_or_else(PoisonError::into_inner).take();
                taken.unwrap_or_else(|| recorder.wait_begins(waited.scope()))
            }
        }
    }
}

enum Entry {
    Launch(Logged),
    /// A synchronization's wait began: its scope is taken here.
    WaitBegins(Waited, Arc<Mutex<Option<SyncScope<'static>>>>),
    /// A synchronization returned, and its window closes here (`Recorder::host_sync_later`).
    Closes(&'static str, WaitStart),
}

/// What is not recorded yet.
struct Log {
    /// The process that logged it (a forked child drops its parent's: its recorder is another).
    pid: u32,
    entries: Vec<Entry>,
    /// The list recorded last, emptied: the next batch is appended to it without growing it.
    spare: Vec<Entry>,
}

static LOG: Mutex<Log> = Mutex::new(Log { pid: 0, entries: Vec::new(), spare: Vec::new() });

/// This process's id, kept (asking costs a system call per launch) and renewed in a forked child.
static PID: AtomicU32 = AtomicU32::new(0);

/// Counts what may unsettle a kept launch: the recorder's objects, the capture, the streams the
/// program captures, a fork (see `invalidate`).
static EPOCH: AtomicU64 = AtomicU64::new(0);

/// How often the shim's thread looks at the log while launches come; after this many empty
/// looks it sleeps until a launch is logged (`PARKED`). Each look moves the log's lock and
/// entries to that thread's core and back (on the H200's 16-core VM, a recorded launch cost 389
/// ns looking every 50 µs and 248 ns every 1 ms, in one call), and the log is bounded anyway
/// (`MOST_UNRECORDED`).
const POLL: Duration = Duration::from_millis(1);
const EMPTY_POLLS_BEFORE_PARKING: u32 = 20;

/// The shim's thread, and whether it sleeps until the next launch is logged.
static RECORDING_THREAD: OnceLock<Thread> = OnceLock::new();
static PARKED: AtomicBool = AtomicBool::new(false);

pub fn epoch() -> u64 {
    EPOCH.load(Ordering::Acquire)
}

/// Something a kept launch's being settled depends on changed: each is looked at again.
pub fn invalidate() {
    EPOCH.fetch_add(1, Ordering::Release);
}

/// A fork is under way (`FORKING`), and the shim's thread is recording (`DRAINING`): a fork waits
/// until that thread holds none of the locks, which in the child no thread would release.
static FORKING: AtomicBool = AtomicBool::new(false);
static DRAINING: AtomicBool = AtomicBool::new(false);

extern "C" fn before_fork() {
    FORKING.store(true, Ordering::SeqCst);
    while DRAINING.load(Ordering::SeqCst) {
        std::thread::yield_now();
    }
}

extern "C" fn forked_parent() {
    FORKING.store(false, Ordering::SeqCst);
}

extern "C" fn forked_child() {
    FORKING.store(false, Ordering::SeqCst);
    PID.store(std::process::id(), Ordering::Relaxed);
    invalidate();
}

/// Registers for forks, before a launch can be kept as settled: a forked child's recorder is
/// another, and a launch settled in its parent is not settled there.
pub fn watch_forks() {
    static REGISTERED: Once = Once::new();
    REGISTERED.call_once(|| {
        PID.store(std::process::id(), Ordering::Relaxed);
        // SAFETY: handlers that only ask for the process id, yield and touch atomics.
        unsafe { libc::pthread_atfork(Some(before_fork), Some(forked_parent), Some(forked_child)) };
    });
}

/// Appends a launch the driver accepted. Where the shim's thread falls behind (threads launching
/// faster than it records), the launching thread records the log itself: it holds at most
/// `MOST_UNRECORDED` entries.
pub fn log(logged: Logged) -> Result<(), Failure> {
    if append(Entry::Launch(logged)) >= MOST_UNRECORDED {
        with_recorder(|_, _| ())?;
    }
    Ok(())
}

/// See `log`: about 330 KB of entries, 1.5 ms of the shim's thread's work.
const MOST_UNRECORDED: usize = 4096;

/// Windows whose closing was logged (reported at the end).
static CLOSED_LATER: AtomicU64 = AtomicU64::new(0);

/// Launches recorded from the log, counted as they are recorded (reported at the end).
static RECORDED_FROM_LOG: AtomicU64 = AtomicU64::new(0);

/// How many windows the shim's thread was left to close, and how many launches were recorded
/// from the log (on whichever thread).
pub fn recorded_later() -> (u64, u64) {
    (CLOSED_LATER.load(Ordering::Relaxed), RECORDED_FROM_LOG.load(Ordering::Relaxed))
}

/// A synchronization waiting for `waited` begins: where it begins among the commands recorded,
/// logged behind the launches not recorded yet (recording them would hold the program's
/// thread), or taken at once with none.
pub fn wait_begins(waited: Waited) -> Result<WaitStart, Failure> {
    {
        let mut log = LOG.lock().unwrap_or_else(PoisonError::into_inner);
        // A program polling `cuStreamQuery` logs a start per poll: past the bound, as with none.
        if log.pid == PID.load(Ordering::Relaxed) && !log.entries.is_empty() && log.entries.len() < MOST_UNRECORDED {
            let taken = Arc::new(Mutex::new(None));
            log.entries.push(Entry::WaitBegins(waited, Arc::clone(&taken)));
            return Ok(WaitStart::Logged(waited, taken));
        }
    }
    with_recorder(|_, recorder| WaitStart::Known(recorder.wait_begins(waited.scope())))
}

/// A synchronization that began at `start` returned: its window closes, on the shim's thread
/// where that reads nothing (no page the host wrote waits to be read, the device printed
/// nothing to keep with it, `Recorder::closes_unread`), else now.
pub fn closes(call: &'static str, start: WaitStart) -> Result<(), Failure> {
    let start = match crate::host_writes::any_written() || crate::device_output::printed() {
        true => start,
        // Under the recorder's lock: no hook changes what `closes_unread` says before it is logged.
        false => match session::with(Api::Cuda, |recorder| if recorder.closes_unread() { append(Entry::Closes(call, start)); None } else { Some(start) })? {
            Some(start) => start,
            None => {
                CLOSED_LATER.fetch_add(1, Ordering::Relaxed);
                return Ok(());
            }
        },
    };
    with_recorder(|state, recorder| {
        let scope = start.scope(recorder);
        super::sync::close_window(state, recorder, call, scope);
    })
}

/// Appends `entry`; returns how many entries the log holds.
fn append(entry: Entry) -> usize {
    // Before the shim's thread starts: a fork must wait until it holds none of the locks.
    watch_forks();
    static STARTED: Once = Once::new();
    STARTED.call_once(|| {
        if let Ok(thread) = std::thread::Builder::new().name("reprise-launches".into()).spawn(record_meanwhile) {
            let _ = RECORDING_THREAD.set(thread.thread().clone());
        }
    });
    let held = {
        let mut log = LOG.lock().unwrap_or_else(PoisonError::into_inner);
        let pid = PID.load(Ordering::Relaxed);
        if log.pid != pid {
            log.pid = pid;
            log.entries.clear();
        }
        log.entries.push(entry);
        log.entries.len()
    };
    // Loaded before it is swapped: the swap, a locked instruction, only once the thread sleeps.
    if PARKED.load(Ordering::SeqCst) && PARKED.swap(false, Ordering::SeqCst) {
        if let Some(thread) = RECORDING_THREAD.get() {
            thread.unpark();
        }
    }
    held
}

/// Records what the log holds, in order; the caller holds the CUDA state, so no hook records
/// anything in between.
pub fn record_logged(state: &State, recorder: &mut Recorder) {
    let mut logged = {
        let mut log = LOG.lock().unwrap_or_else(PoisonError::into_inner);
        if log.entries.is_empty() {
            return;
        }
        if log.pid != PID.load(Ordering::Relaxed) {
            log.entries.clear();
            return;
        }
        let spare = std::mem::take(&mut log.spare);
        std::mem::replace(&mut log.entries, spare)
    };
    for entry in logged.drain(..) {
        match entry {
            Entry::Launch(Logged { queue, call, described, grid }) => {
                RECORDED_FROM_LOG.fetch_add(1, Ordering::Relaxed);
                let prepared = recorder.prepared_settled(described.accesses.clone());
                let submission = Submission { call, queue: Some(queue), order: Order::Command, waits: &[], signals: None, received: None, host_ordered: false };
                recorder.submit(prepared, submission, |_| Command::Kernel(KernelLaunch { kernel: described.kernel, args: described.args.clone(), launch: grid.launch() }));
            }
            Entry::WaitBegins(waited, taken) => {
                *taken.lock().unwrap_or_else(PoisonError::into_inner) = Some(recorder.wait_begins(waited.scope()));
            }
            Entry::Closes(call, start) => {
                let scope = start.scope(recorder);
                recorder.host_sync_later(call, scope, &DeviceAccess::new(state));
            }
        }
    }
    LOG.lock().unwrap_or_else(PoisonError::into_inner).spare = logged;
}

/// Runs `work` (which takes the shim's locks) unless a fork is under way, which then waits
/// until it is done; `None` during a fork.
fn unless_forking<R>(work: impl FnOnce() -> R) -> Option<R> {
    DRAINING.store(true, Ordering::SeqCst);
    let result = (!FORKING.load(Ordering::SeqCst)).then(work);
    DRAINING.store(false, Ordering::SeqCst);
    result
}

/// The shim's thread: records what the log holds while the program launches.
fn record_meanwhile() {
    let waiting = || !LOG.lock().unwrap_or_else(PoisonError::into_inner).entries.is_empty();
    let mut empty_polls = 0u32;
    loop {
        std::thread::sleep(POLL);
        // Once the hooks pass calls through (the capture range is over, or the process exits,
        // whose last hook records what is left) nothing more is logged.
        if !crate::entry::recording() {
            return;
        }
        let recorded = unless_forking(|| {
            waiting() && {
                // As a hook's work: a panic stops recording, and the trace says so.
                crate::entry::guarded("recording logged launches", || {
                    let _ = super::state::with_recorder(|_, _| ());
                });
                true
            }
        });
        if recorded != Some(false) {
            empty_polls = 0;
            continue;
        }
        empty_polls += 1;
        if empty_polls >= EMPTY_POLLS_BEFORE_PARKING {
            // Marked before the last look: a launch logged after it finds the mark and wakes us.
            PARKED.store(true, Ordering::SeqCst);
            if unless_forking(|| !waiting()) == Some(true) {
                std::thread::park();
            }
            PARKED.store(false, Ordering::SeqCst);
            empty_polls = 0;
        }
    }
}
