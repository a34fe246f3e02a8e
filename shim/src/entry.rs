//! What every hook goes through: the recording switch, the reentrancy guard and the panic
//! barrier. When recording is off a hook costs one atomic load before the real call.

use crate::log;
use std::cell::Cell;
use std::panic::{catch_unwind, AssertUnwindSafe};
use std::sync::atomic::{AtomicBool, Ordering};
use std::sync::{Mutex, Once, PoisonError};

static RECORDING: AtomicBool = AtomicBool::new(true);

/// Why recording stopped before the end, if it did.
static STOPPED_BECAUSE: Mutex<Option<String>> = Mutex::new(None);

thread_local! {
    /// Set while this thread runs shim code, so calls the shim (or the driver under it) makes
    /// are passed through unrecorded.
    static INSIDE: Cell<bool> = const { Cell::new(false) };
}

pub fn recording() -> bool {
    RECORDING.load(Ordering::Relaxed)
}

/// Stops recording for the rest of the process; every hook passes through from now on.
pub fn stop_recording(why: std::fmt::Arguments<'_>) {
    if RECORDING.swap(false, Ordering::Relaxed) {
        log::error!("recording stopped: {why}");
        *STOPPED_BECAUSE.lock().unwrap_or_else(PoisonError::into_inner) = Some(why.to_string());
    }
}

/// Ends recording once there is nothing left to record (the capture range is over).
pub fn end_recording() {
    if RECORDING.swap(false, Ordering::Relaxed) {
        log::info!("the capture range is over; the shim only passes calls through from here on");
    }
}

/// Stops recording as the process exits; returns why it had stopped before, if it had.
pub fn stop_for_exit() -> Option<String> {
    RECORDING.store(false, Ordering::Relaxed);
    STOPPED_BECAUSE.lock().unwrap_or_else(PoisonError::into_inner).take()
}

/// The real function of a hook, called at most once; the program gets its first result.
pub struct Forward<'a, R> {
    real: &'a dyn Fn() -> R,
    result: Option<R>,
}

impl<R: Copy> Forward<'_, R> {
    /// Runs the real function the first time; later calls return that result again.
    pub fn call(&mut self) -> R {
        let real = self.real;
        *self.result.get_or_insert_with(real)
    }

    /// Runs the real function, then gives the program `result` instead of its result (the
    /// shim's wrapper in place of an extension function's address).
    pub fn substitute(&mut self, result: R) {
        self.call();
        self.result = Some(result);
    }
}

/// Runs a hook: `record` observes the call and runs the real function through `Forward::call`
/// when it wants (before, after or around its own work). The real function runs exactly once
/// whatever `record` does: if it fails or panics, recording stops and the call goes through.
pub fn intercept<R: Copy, E: std::fmt::Display>(
    call: &str,
    real: &dyn Fn() -> R,
    record: impl FnOnce(&mut Forward<'_, R>) -> Result<(), E>,
) -> R {
    if !recording() || INSIDE.get() {
        return real();
    }
    quiet_panics();
    INSIDE.set(true);
    let mut forward = Forward { real, result: None };
    contain(call, || record(&mut forward));
    let result = forward.call();
    INSIDE.set(false);
    result
}

/// Runs a hook whose recorder only notes what the real function did, calling no API itself
/// (tracking state): the real function runs first, then `note` gets its result. Lighter than
/// `intercept` (no `Forward`, no reentrancy guard), for calls as frequent as setting a kernel's
/// argument: `note` makes no API call, and must not wait for what this thread may hold inside
/// another hook (a driver calling back in): it asks `inside` when a lock is taken.
#[inline(always)]
pub fn observe<R: Copy, E: std::fmt::Display>(call: &str, real: impl FnOnce() -> R, note: impl FnOnce(R) -> Result<(), E>) -> R {
    if !recording() {
        return real();
    }
    quiet_panics();
    let result = real();
    contain(call, || note(result));
    result
}

/// Whether this thread is inside a hook (or the shim's own work), where it may hold the
/// shim's locks.
pub fn inside() -> bool {
    INSIDE.get()
}

/// Runs a recorder's `work`; a failure or panic stops recording (the call goes through anyway).
#[inline(always)]
fn contain<E: std::fmt::Display>(call: &str, work: impl FnOnce() -> Result<(), E>) {
    match catch_unwind(AssertUnwindSafe(work)) {
        Ok(Ok(())) => {}
        Ok(Err(error)) => stop_recording(format_args!("{call}: {error}")),
        Err(panic) => stop_recording(format_args!("{call}: internal error: {}", panic_message(&*panic))),
    }
}

/// Runs shim work outside any hook (exit handlers) with the guard set, so that API calls it
/// makes are not recorded, and with panics contained; returns what went wrong, if anything.
pub fn guarded(what: &str, work: impl FnOnce()) -> Option<String> {
    quiet_panics();
    let was_inside = INSIDE.replace(true);
    let failed = catch_unwind(AssertUnwindSafe(work)).err().map(|panic| format!("{what}: internal error: {}", panic_message(&*panic)));
    if let Some(failure) = &failed {
        stop_recording(format_args!("{failure}"));
    }
    INSIDE.set(was_inside);
    failed
}

/// A panic inside the shim is reported through the shim's log, not on the program's stderr.
fn quiet_panics() {
    static ONCE: Once = Once::new();
    ONCE.call_once(|| std::panic::set_hook(Box::new(|info| log::debug!("panic: {info}"))));
}

fn panic_message(panic: &(dyn std::any::Any + Send)) -> String {
    match (panic.downcast_ref::<&str>(), panic.downcast_ref::<String>()) {
        (Some(text), _) => text.to_string(),
        (_, Some(text)) => text.clone(),
        _ => "unknown panic".to_string(),
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use std::cell::Cell;

    #[test]
    fn the_real_function_runs_once_whatever_the_recorder_does() {
        let calls = Cell::new(0);
        let real = || {
            calls.set(calls.get() + 1);
            7
        };
        assert_eq!(intercept("twice", &real, |f| { f.call(); f.call(); Ok::<(), String>(()) }), 7);
        assert_eq!(calls.get(), 1);
        assert_eq!(intercept("never", &real, |_| Ok::<(), String>(())), 7);
        assert_eq!(calls.get(), 2);
        // A failure stops recording for the process: the real function still runs, once.
        assert_eq!(intercept("fails", &real, |_| -> Result<(), String> { panic!("boom") }), 7);
        assert_eq!(calls.get(), 3);
        assert!(!recording());
        assert_eq!(intercept("off", &real, |_| -> Result<(), String> { panic!("not reached") }), 7);
        assert_eq!(calls.get(), 4);
    }
}
