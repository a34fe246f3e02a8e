//! The `SIGSEGV` handler that sees writes to watched pages, and the program's own handler
//! behind it. Once the shim's handler is installed, the program's `sigaction` and `signal` for
//! `SIGSEGV` set and return the program's handler, which gets every fault that is not a write to
//! a watched page; with none, such a fault kills the program as it would have.
//!
//! A thread that blocks `SIGSEGV` cannot take a fault's signal: the kernel ends the process
//! instead. Helper threads of drivers and runtimes block every signal, and a host callback runs
//! on one: `pthread_sigmask` and `sigprocmask` leave `SIGSEGV` unblocked once the handler is
//! installed (blocking a synchronous signal changes nothing else: a fault kills either way).

use crate::interpose::Hook;
use std::cell::Cell;
use std::ffi::{c_int, c_void};
use std::sync::atomic::{AtomicBool, AtomicUsize, Ordering};
use std::sync::{Mutex, PoisonError};

type SigactionFn = unsafe extern "C" fn(c_int, *const libc::sigaction, *mut libc::sigaction) -> c_int;

static SIGACTION: Hook = Hook::new(c"sigaction", sigaction as *const c_void);
static SIGNAL: Hook = Hook::new(c"signal", signal as *const c_void);
static PTHREAD_SIGMASK: Hook = Hook::new(c"pthread_sigmask", pthread_sigmask as *const c_void);
static SIGPROCMASK: Hook = Hook::new(c"sigprocmask", sigprocmask as *const c_void);

/// `si_code` of a fault on a mapped page the access is not allowed to (Linux).
const SEGV_ACCERR: c_int = 2;

static INSTALLED: AtomicBool = AtomicBool::new(false);
static INSTALLING: Mutex<()> = Mutex::new(());
/// The real `sigaction`, found before the handler is installed (the handler cannot look it up).
static REAL_SIGACTION: AtomicUsize = AtomicUsize::new(0);
/// The program's handler (`sa_sigaction`) and its flags, as the handler reads them.
static PROGRAM_HANDLER: AtomicUsize = AtomicUsize::new(libc::SIG_DFL);
static PROGRAM_FLAGS: AtomicUsize = AtomicUsize::new(0);
/// The program's whole `sigaction`, for the program to read back.
static PROGRAM_ACTION: Mutex<Option<Action>> = Mutex::new(None);

/// `libc::sigaction` holds raw pointers; it is plain data here.
#[derive(Clone, Copy)]
struct Action(libc::sigaction);
// SAFETY: the pointers in it are code addresses (handlers), valid in any thread.
unsafe impl Send for Action {}

fn real_sigaction() -> Option<SigactionFn> {
    let address = match REAL_SIGACTION.load(Ordering::Acquire) {
        0 => SIGACTION.real()?,
        known => known,
    };
    REAL_SIGACTION.store(address, Ordering::Release);
    // SAFETY: the next definition of `sigaction`, glibc's.
    Some(unsafe { std::mem::transmute::<usize, SigactionFn>(address) })
}

/// Finds the real functions now (see `super::RESOLVE_AT_LOAD`).
pub fn resolve() {
    real_sigaction();
    for hook in [&SIGNAL, &PTHREAD_SIGMASK, &SIGPROCMASK] {
        hook.real();
    }
}

/// Installs the handler once; false where it cannot be.
pub fn install() -> bool {
    if INSTALLED.load(Ordering::Acquire) {
        return true;
    }
    let _installing = INSTALLING.lock().unwrap_or_else(PoisonError::into_inner);
    if INSTALLED.load(Ordering::Acquire) {
        return true;
    }
    let Some(real) = real_sigaction() else { return false };
    // SAFETY: zeroed `sigaction` structures are valid; the handler is ours.
    let mut ours: libc::sigaction = unsafe { std::mem::zeroed() };
    ours.sa_sigaction = on_fault as *const () as usize;
    ours.sa_flags = libc::SA_SIGINFO | libc::SA_ONSTACK | libc::SA_RESTART | libc::SA_NODEFER;
    let mut previous: libc::sigaction = unsafe { std::mem::zeroed() };
    // SAFETY: valid structures; `SIGSEGV` may be handled.
    if unsafe { real(libc::SIGSEGV, &ours, &mut previous) } != 0 {
        return false;
    }
    keep_program_action(previous);
    INSTALLED.store(true, Ordering::Release);
    true
}

fn keep_program_action(action: libc::sigaction) {
    PROGRAM_FLAGS.store(action.sa_flags as usize, Ordering::Release);
    PROGRAM_HANDLER.store(action.sa_sigaction, Ordering::Release);
    *PROGRAM_ACTION.lock().unwrap_or_else(PoisonError::into_inner) = Some(Action(action));
}

thread_local! {
    /// The page of this thread's last fault that was tried again without being the shim's.
    static RETRIED_PAGE: Cell<u64> = const { Cell::new(u64::MAX) };
}

extern "C" fn on_fault(signal: c_int, info: *mut libc::siginfo_t, context: *mut c_void) {
    // SAFETY: the kernel passes a valid `siginfo_t` to an `SA_SIGINFO` handler.
    let (address, code) = unsafe { ((*info).si_addr() as u64, (*info).si_code) };
    if code == SEGV_ACCERR {
        let page = super::page_of(address);
        if super::page_written(page) {
            RETRIED_PAGE.set(u64::MAX);
            return;
        }
        // The page may have stopped being watched (and become writable) between the fault and
        // this look: the write goes on at a second try, and a second fault there is not ours.
        if RETRIED_PAGE.replace(page) != page {
            return;
        }
    }
    RETRIED_PAGE.set(u64::MAX);
    hand_on(signal, info, context, address, code);
}

/// The instruction that faulted, from the handler's context (0 where not known).
#[cfg(target_arch = "x86_64")]
fn instruction(context: *mut c_void) -> u64 {
    // SAFETY: the kernel passes a valid `ucontext_t` to an `SA_SIGINFO` handler.
    unsafe { (*context.cast::<libc::ucontext_t>()).uc_mcontext.gregs[libc::REG_RIP as usize] as u64 }
}

#[cfg(not(target_arch = "x86_64"))]
fn instruction(_context: *mut c_void) -> u64 {
    0
}

/// A fault that is not the shim's: the program's handler takes it; with none, the default
/// action does (the faulting instruction runs again and the kernel ends the program).
fn hand_on(signal: c_int, info: *mut libc::siginfo_t, context: *mut c_void, address: u64, code: c_int) {
    let handler = PROGRAM_HANDLER.load(Ordering::Acquire);
    let flags = PROGRAM_FLAGS.load(Ordering::Acquire) as c_int;
    if handler == libc::SIG_DFL || handler == libc::SIG_IGN {
        say_fatal_fault(address, code, instruction(context));
        if let Some(real) = known_real_sigaction() {
            // SAFETY: a zeroed `sigaction` is `SIG_DFL` with no flags.
            let default: libc::sigaction = unsafe { std::mem::zeroed() };
            // SAFETY: glibc's `sigaction` is async-signal-safe.
            unsafe { real(signal, &default, std::ptr::null_mut()) };
        }
        return;
    }
    if flags & libc::SA_SIGINFO != 0 {
        // SAFETY: the program installed this three-argument handler for `SIGSEGV`.
        let handler = unsafe { std::mem::transmute::<usize, extern "C" fn(c_int, *mut libc::siginfo_t, *mut c_void)>(handler) };
        handler(signal, info, context);
    } else {
        // SAFETY: the program installed this one-argument handler for `SIGSEGV`.
        let handler = unsafe { std::mem::transmute::<usize, extern "C" fn(c_int)>(handler) };
        handler(signal);
    }
}

/// Tells, before the program ends by a fault while the shim watches pages, where it faulted and
/// whether the page was one the shim watched: with `write(2)` only, as a handler may.
fn say_fatal_fault(address: u64, code: c_int, instruction: u64) {
    let mut line = Line::default();
    line.push(b"reprise: the program faults at 0x");
    line.push_hex(address);
    line.push(b" (SIGSEGV, si_code ");
    line.push_hex(code as u64);
    line.push(b", instruction 0x");
    line.push_hex(instruction);
    line.push(if super::watched(address) { b"), a page the shim watches\n" } else { b"), not a page the shim watches\n" });
    // SAFETY: a buffer of `len` bytes; `write` is async-signal-safe.
    unsafe { libc::write(libc::STDERR_FILENO, line.bytes.as_ptr().cast(), line.len) };
}

/// A fixed buffer a signal handler can format into.
struct Line {
    bytes: [u8; 128],
    len: usize,
}

impl Default for Line {
    fn default() -> Self {
        Line { bytes: [0; 128], len: 0 }
    }
}

impl Line {
    fn push(&mut self, text: &[u8]) {
        let taken = text.len().min(self.bytes.len() - self.len);
        self.bytes[self.len..self.len + taken].copy_from_slice(&text[..taken]);
        self.len += taken;
    }

    fn push_hex(&mut self, value: u64) {
        let digits = (64 - value.leading_zeros()).div_ceil(4).max(1);
        for shift in (0..digits).rev() {
            self.push(&[b"0123456789abcdef"[(value >> (shift * 4)) as usize & 15]]);
        }
    }
}

/// The real `sigaction` as found before, without looking it up (not safe in a handler).
fn known_real_sigaction() -> Option<SigactionFn> {
    match REAL_SIGACTION.load(Ordering::Acquire) {
        0 => None,
        // SAFETY: stored by `real_sigaction`, glibc's `sigaction`.
        address => Some(unsafe { std::mem::transmute::<usize, SigactionFn>(address) }),
    }
}

/// # Safety
/// As POSIX `sigaction`.
#[no_mangle]
pub unsafe extern "C" fn sigaction(signal: c_int, action: *const libc::sigaction, previous: *mut libc::sigaction) -> c_int {
    if signal == libc::SIGSEGV && INSTALLED.load(Ordering::Acquire) {
        let mut kept = PROGRAM_ACTION.lock().unwrap_or_else(PoisonError::into_inner);
        if !previous.is_null() {
            // SAFETY: the caller's out-pointer; the program's action, or a zeroed (default) one.
            unsafe { *previous = kept.map_or_else(|| std::mem::zeroed(), |action| action.0) };
        }
        if !action.is_null() {
            // SAFETY: the caller's action.
            let action = unsafe { *action };
            *kept = Some(Action(action));
            PROGRAM_FLAGS.store(action.sa_flags as usize, Ordering::Release);
            PROGRAM_HANDLER.store(action.sa_sigaction, Ordering::Release);
        }
        return 0;
    }
    match real_sigaction() {
        // SAFETY: forwards the caller's arguments.
        Some(real) => unsafe { real(signal, action, previous) },
        None => -1,
    }
}

/// # Safety
/// As C's `signal`.
#[no_mangle]
pub unsafe extern "C" fn signal(signal: c_int, handler: libc::sighandler_t) -> libc::sighandler_t {
    if signal == libc::SIGSEGV && INSTALLED.load(Ordering::Acquire) {
        // SAFETY: a zeroed `sigaction` with the handler set is what `signal` installs (BSD semantics).
        let mut action: libc::sigaction = unsafe { std::mem::zeroed() };
        action.sa_sigaction = handler;
        action.sa_flags = libc::SA_RESTART;
        let mut previous: libc::sigaction = unsafe { std::mem::zeroed() };
        // SAFETY: valid structures.
        unsafe { sigaction(signal, &action, &mut previous) };
        return previous.sa_sigaction;
    }
    let Some(real) = SIGNAL.real() else { return libc::SIG_ERR };
    // SAFETY: the next definition of `signal`, with the caller's arguments.
    unsafe { std::mem::transmute::<usize, unsafe extern "C" fn(c_int, libc::sighandler_t) -> libc::sighandler_t>(real)(signal, handler) }
}

type SigmaskFn = unsafe extern "C" fn(c_int, *const libc::sigset_t, *mut libc::sigset_t) -> c_int;

/// `set` as it may be blocked: without `SIGSEGV` once the handler is installed.
fn deliverable(how: c_int, set: *const libc::sigset_t, copy: &mut libc::sigset_t) -> *const libc::sigset_t {
    if set.is_null() || how == libc::SIG_UNBLOCK || !INSTALLED.load(Ordering::Acquire) {
        return set;
    }
    // SAFETY: the caller's signal set.
    *copy = unsafe { *set };
    // SAFETY: a valid set and signal number.
    unsafe { libc::sigdelset(copy, libc::SIGSEGV) };
    copy
}

fn forward_sigmask(hook: &Hook, how: c_int, set: *const libc::sigset_t, previous: *mut libc::sigset_t) -> c_int {
    // SAFETY: a zeroed `sigset_t` is an empty set.
    let mut copy: libc::sigset_t = unsafe { std::mem::zeroed() };
    let set = deliverable(how, set, &mut copy);
    match hook.real() {
        // SAFETY: the next definition of the hooked function, with the caller's arguments.
        Some(real) => unsafe { std::mem::transmute::<usize, SigmaskFn>(real)(how, set, previous) },
        None => libc::EINVAL,
    }
}

/// # Safety
/// As POSIX `pthread_sigmask`.
#[no_mangle]
pub unsafe extern "C" fn pthread_sigmask(how: c_int, set: *const libc::sigset_t, previous: *mut libc::sigset_t) -> c_int {
    forward_sigmask(&PTHREAD_SIGMASK, how, set, previous)
}

/// # Safety
/// As POSIX `sigprocmask`.
#[no_mangle]
pub unsafe extern "C" fn sigprocmask(how: c_int, set: *const libc::sigset_t, previous: *mut libc::sigset_t) -> c_int {
    forward_sigmask(&SIGPROCMASK, how, set, previous)
}
