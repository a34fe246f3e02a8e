//! The process's recording session: the recorder and the trace file behind it, created when an
//! API module first has something to record (processes that never use a GPU API write
//! nothing) and completed when the process exits.

use crate::entry;
use crate::recorder::{Recorder, SyncScope};
use crate::writer::WriterSink;
use crate::{config, log};
use crate::config::Capture;
use std::sync::atomic::{AtomicBool, AtomicU8, Ordering};
use std::sync::{Mutex, MutexGuard, Once, PoisonError};
use std::time::{SystemTime, UNIX_EPOCH};
use trace_format::{Api, Header};

struct Session {
    /// The process that created it: a forked child starts its own.
    pid: u32,
    api: Api,
    recorder: Recorder,
    writer: WriterSink,
}

static SESSION: Mutex<Option<Session>> = Mutex::new(None);

/// Whether a command submitted now would be recorded (`Recorder::capturing`), for hooks to
/// check with one atomic load before taking any lock: `UNKNOWN` until the configuration or the
/// recorder said.
static COMMANDS_CAPTURED: AtomicU8 = AtomicU8::new(UNKNOWN);
const UNKNOWN: u8 = 0;
const CAPTURED: u8 = 1;
const NOT_CAPTURED: u8 = 2;

/// Commands were submitted outside the capture since the recorder last heard of it.
static UNCAPTURED_COMMANDS: AtomicBool = AtomicBool::new(false);

/// Whether a command submitted now is recorded. When not, the hook only calls
/// `uncaptured_command` and passes the call through.
pub fn commands_captured() -> bool {
    match COMMANDS_CAPTURED.load(Ordering::Relaxed) {
        CAPTURED => true,
        NOT_CAPTURED => false,
        _ => {
            let captured = match config::get().capture {
                Capture::All => true,
                Capture::Markers => false,
                Capture::Segments { first, .. } => first == 0,
            };
            COMMANDS_CAPTURED.store(if captured { CAPTURED } else { NOT_CAPTURED }, Ordering::Relaxed);
            captured
        }
    }
}

/// What a host wait about to begin covers (`Recorder::wait_begins`), to be closed once it returns.
/// Outside the capture nothing is pending: the scope stays as it is and no lock is taken (a
/// program polling a stream or event pays no more than before).
pub fn wait_begins(api: Api, scope: SyncScope<'_>) -> Result<SyncScope<'_>, SessionError> {
    match commands_captured() {
        true => with(api, |recorder| recorder.wait_begins(scope)),
        false => Ok(scope),
    }
}

/// A command was submitted while `commands_captured` said no (it counts for the windows).
pub fn uncaptured_command() {
    UNCAPTURED_COMMANDS.store(true, Ordering::Relaxed);
}

/// Set in a forked child (by a `pthread_atfork` handler), so hooks need not ask for the
/// process id on every call.
static FORKED: AtomicBool = AtomicBool::new(false);

extern "C" fn forked_child() {
    FORKED.store(true, Ordering::Relaxed);
}

#[derive(Debug)]
pub enum SessionError {
    /// The process records another API; one trace holds one.
    OtherApi(Api),
    CannotCreate(String),
}

impl std::fmt::Display for SessionError {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        match self {
            SessionError::OtherApi(api) => write!(f, "this process already records {api}; a trace holds one API"),
            SessionError::CannotCreate(why) => f.write_str(why),
        }
    }
}

fn lock() -> MutexGuard<'static, Option<Session>> {
    SESSION.lock().unwrap_or_else(PoisonError::into_inner)
}

/// Runs `work` on the process's recorder for `api`, creating the session (and the trace file)
/// on first use. Lock order: an API module's own state first, then the session.
pub fn with<R>(api: Api, work: impl FnOnce(&mut Recorder) -> R) -> Result<R, SessionError> {
    let mut session = lock();
    let forked = FORKED.load(Ordering::Relaxed) && FORKED.swap(false, Ordering::Relaxed);
    if forked && session.as_ref().is_some_and(|session| session.pid != std::process::id()) {
        // A forked child: the parent's writer thread does not exist here.
        std::mem::forget(session.take());
    }
    let session = match &mut *session {
        Some(session) => session,
        empty => empty.insert(start(api, std::process::id())?),
    };
    if session.api != api {
        return Err(SessionError::OtherApi(session.api));
    }
    // Read before it is swapped: a swap is a locked instruction on every call, a load is not.
    if UNCAPTURED_COMMANDS.load(Ordering::Relaxed) && UNCAPTURED_COMMANDS.swap(false, Ordering::Relaxed) {
        session.recorder.uncaptured_command();
    }
    let result = work(&mut session.recorder);
    let captured = if session.recorder.capturing() { CAPTURED } else { NOT_CAPTURED };
    // Stored only when it changes: every thread's hooks read it, and a store takes their copies of the line.
    if COMMANDS_CAPTURED.load(Ordering::Relaxed) != captured {
        COMMANDS_CAPTURED.store(captured, Ordering::Relaxed);
    }
    if session.recorder.capture_over() {
        // Hooks need not track anything any more: from here on they cost an atomic load.
        entry::end_recording();
        session.writer.flush();
    }
    Ok(result)
}

fn start(api: Api, pid: u32) -> Result<Session, SessionError> {
    let path = config::get().output_path(pid);
    let writer = WriterSink::start(&path)
        .map_err(|error| SessionError::CannotCreate(format!("cannot create the trace {}: {error}", path.display())))?;
    log::info!("recording {api} into {}", path.display());
    let header = Header {
        api,
        producer: format!("reprise shim {}", env!("CARGO_PKG_VERSION")),
        command_line: command_line(),
        process_id: pid,
        started_unix_s: SystemTime::now().duration_since(UNIX_EPOCH).map_or(0, |since| since.as_secs()),
    };
    let mut recorder = Recorder::new(header, config::get().capture, config::get().verify, Box::new(writer.clone()));
    recorder.watch_host_writes(config::get().host_writes == config::HostWriteTracking::Watch);
    static HANDLERS: Once = Once::new();
    // SAFETY: registers plain functions with no arguments; forked children inherit them.
    HANDLERS.call_once(|| unsafe {
        libc::atexit(finish_at_exit);
        libc::pthread_atfork(None, None, Some(forked_child));
    });
    Ok(Session { pid, api, recorder, writer })
}

fn command_line() -> Vec<String> {
    std::fs::read("/proc/self/cmdline")
        .map(|bytes| {
            bytes.split(|&byte| byte == 0).filter(|arg| !arg.is_empty()).map(|arg| String::from_utf8_lossy(arg).into_owned()).collect()
        })
        .unwrap_or_default()
}

/// At exit: the API module reads the final contents of what the capture wrote and work never
/// waited for is left out (see `Recorder::end_of_program`); the trace gets its index. Hooks of
/// threads still running pass through from here on.
extern "C" fn finish_at_exit() {
    entry::guarded("exit", || {
        let stopped = entry::stop_for_exit();
        let ours = |session: &Session| session.pid == std::process::id();
        let Some(api) = lock().as_ref().filter(|session| ours(session)).map(|session| session.api) else { return };
        // A failure taking the final contents marks the trace partial, and never costs its index
        // (recording has stopped for exit, so the failure is said here, not by `stop_recording`).
        let stopped = stopped.or_else(|| {
            // The API module takes its own lock before the session's (the lock order).
            let failed = entry::guarded("taking the final contents", || match api {
                Api::OpenCl => crate::opencl::end_of_program(),
                Api::Cuda => crate::cuda::end_of_program(),
                Api::LevelZero => crate::level_zero::end_of_program(),
            });
            if let Some(failure) = &failed {
                crate::log::error!("{failure}; the trace is marked partial");
            }
            failed
        });
        let mut session = lock();
        let Some(session) = session.as_mut().filter(|session| ours(session)) else { return };
        let ended = entry::guarded("ending the trace", || match &stopped {
            Some(why) => session.recorder.partial("shim", &format!("recording stopped early: {why}")),
            None => session.recorder.end_of_program(None),
        });
        if let Some(failure) = ended {
            crate::log::error!("{failure}; the trace is complete up to its last window");
        }
        session.writer.finish();
        let (bytes, took) = crate::large_buffers::copied();
        let (buffers, fresh) = crate::large_buffers::taken();
        let (prepared, preparing) = crate::blob_preparers::prepared();
        crate::log::info!("preparing threads hashed and compressed {} MB of large blobs in {} ms of their time", prepared >> 20, preparing.as_millis());
        let (fingerprinted, fingerprinting) = crate::in_pieces::fingerprinted();
        let (compressed, compressing) = crate::in_pieces::compressed();
        crate::log::info!(
            "the program's threads copied {} MB of host memory in {} ms, compressed {} MB where it lay in {} ms, and fingerprinted {} MB in {} ms (to find contents kept before); {fresh} of {buffers} large buffers were new (none kept fitted)",
            bytes >> 20,
            took.as_millis(),
            compressed >> 20,
            compressing.as_millis(),
            fingerprinted >> 20,
            fingerprinting.as_millis()
        );
    });
}
