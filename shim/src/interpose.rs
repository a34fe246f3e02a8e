//! How calls reach the shim and how the shim reaches the real functions: the exported `dlsym`
//! hands out hooks for names the shim hooks, and each hook finds its real function once.

use std::ffi::{c_char, c_int, c_void, CStr};
use std::sync::atomic::{AtomicBool, AtomicUsize, Ordering};

/// One exported hook: its name, its own address, and the real function it forwards to.
pub struct Hook {
    pub name: &'static CStr,
    address: *const c_void,
    /// The real function's address once known; 0 until then.
    real: AtomicUsize,
    /// `dlsym(RTLD_NEXT)` found nothing (a private library): not asked again on every call.
    no_next: AtomicBool,
    /// `dlsym` hands the hook out only from a library that also defines this symbol (an API's
    /// loader, not the drivers and layers that export functions of the same name to it).
    beside: Option<&'static CStr>,
}

// The address is a function's, immutable and valid for the whole process.
unsafe impl Sync for Hook {}

impl Hook {
    pub const fn new(name: &'static CStr, address: *const c_void) -> Hook {
        Hook { name, address, real: AtomicUsize::new(0), no_next: AtomicBool::new(false), beside: None }
    }

    /// A hook that `dlsym` hands out only from a library that also defines `companion`.
    pub const fn beside(self, companion: &'static CStr) -> Hook {
        Hook { beside: Some(companion), ..self }
    }

    /// A hook whose real function only `forward_to` gives (a dispatch table's entry, an
    /// extension function's address): never looked up by name.
    pub const fn forwarding(name: &'static CStr, address: *const c_void) -> Hook {
        Hook { name, address, real: AtomicUsize::new(0), no_next: AtomicBool::new(true), beside: None }
    }

    /// Forwards to `address` unless a real function is known already (or `address` is null or
    /// the hook itself); whether the hook now has a real function.
    pub fn forward_to(&self, address: *const c_void) -> bool {
        if let Some(found) = self.accept(address.cast_mut()) {
            self.remember(found);
        }
        self.real.load(Ordering::Acquire) != 0
    }

    /// The hook's own address, what `dlsym` hands out instead of the real function.
    pub fn address(&self) -> *mut c_void {
        self.address.cast_mut()
    }

    /// The real function: the one a library handle gave for this name, else the next
    /// definition after the shim (`dlsym(RTLD_NEXT)`). Cached once found.
    pub fn real(&self) -> Option<usize> {
        match self.real.load(Ordering::Acquire) {
            0 if self.no_next.load(Ordering::Relaxed) => None,
            0 => match self.accept(real_dlsym(libc::RTLD_NEXT, self.name.as_ptr())) {
                Some(found) => Some(self.remember(found)),
                None => {
                    self.no_next.store(true, Ordering::Relaxed);
                    None
                }
            },
            known => Some(known),
        }
    }

    /// The real function from any library loaded in the process, for programs whose API
    /// library is private (loaded `RTLD_LOCAL` where `RTLD_NEXT` cannot see it).
    pub fn real_in_loaded_libraries(&self) -> Option<usize> {
        let found = loaded_library_names().into_iter().find_map(|library| {
            // SAFETY: RTLD_NOLOAD only takes a new reference to an already loaded library.
            let handle = unsafe { libc::dlopen(library.as_ptr(), libc::RTLD_NOLOAD | libc::RTLD_LAZY) };
            if handle.is_null() {
                return None;
            }
            let found = self.accept(real_dlsym(handle, self.name.as_ptr()));
            // SAFETY: balances the reference taken above; the library stays loaded.
            unsafe { libc::dlclose(handle) };
            found
        })?;
        Some(self.remember(found))
    }

    /// Keeps `address` as the real function unless one is known already; returns the one kept.
    fn remember(&self, address: usize) -> usize {
        match self.real.compare_exchange(0, address, Ordering::AcqRel, Ordering::Acquire) {
            Ok(_) => address,
            Err(known) => known,
        }
    }

    /// A found address is a real function unless it is null or the hook itself.
    fn accept(&self, address: *mut c_void) -> Option<usize> {
        (!address.is_null() && address.cast_const() != self.address).then_some(address as usize)
    }
}

/// The hook named `name`, in any API's table.
pub fn lookup(name: &CStr) -> Option<&'static Hook> {
    crate::hook_tables().iter().flat_map(|table| table.iter()).copied().find(|hook| hook.name == name)
}

type DlsymFn = unsafe extern "C" fn(*mut c_void, *const c_char) -> *mut c_void;

/// glibc's `dlsym`, which the shim's own `dlsym` shadows.
fn real_dlsym(handle: *mut c_void, symbol: *const c_char) -> *mut c_void {
    match real_dlsym_address() {
        0 => std::ptr::null_mut(),
        // SAFETY: the address is glibc's dlsym, whose signature this is.
        address => unsafe { std::mem::transmute::<usize, DlsymFn>(address)(handle, symbol) },
    }
}

fn real_dlsym_address() -> usize {
    static REAL: AtomicUsize = AtomicUsize::new(0);
    let mut address = REAL.load(Ordering::Acquire);
    if address == 0 {
        // SAFETY: dlvsym with constant, NUL-terminated names.
        address = unsafe { libc::dlvsym(libc::RTLD_NEXT, c"dlsym".as_ptr(), c"GLIBC_2.2.5".as_ptr()) } as usize;
        REAL.store(address, Ordering::Release);
    }
    address
}

/// The exported `dlsym`. `RTLD_NEXT` means "after the caller's library", which glibc finds from
/// its return address, so those lookups jump straight into glibc's `dlsym` with the caller's
/// frame untouched; all others go through `dlsym_on_handle`, which is told the return address.
///
/// # Safety
/// As for glibc's `dlsym`.
#[cfg(target_arch = "x86_64")]
#[no_mangle]
#[unsafe(naked)]
pub unsafe extern "C" fn dlsym(handle: *mut c_void, symbol: *const c_char) -> *mut c_void {
    std::arch::naked_asm!(
        "cmp rdi, -1",
        "mov rdx, [rsp]",
        "jne {on_handle}",
        // Keep the arguments (and a 16-byte aligned stack) across the lookup of glibc's dlsym.
        "push rdi",
        "push rsi",
        "sub rsp, 8",
        "call {glibc_dlsym}",
        "add rsp, 8",
        "pop rsi",
        "pop rdi",
        "jmp rax",
        on_handle = sym dlsym_on_handle,
        glibc_dlsym = sym glibc_dlsym,
    )
}

#[cfg(not(target_arch = "x86_64"))]
compile_error!("the shim's exported dlsym is written for x86-64");

/// glibc's `dlsym` (a stand-in returning null if it cannot be found).
extern "C" fn glibc_dlsym() -> DlsymFn {
    extern "C" fn not_found(_: *mut c_void, _: *const c_char) -> *mut c_void {
        std::ptr::null_mut()
    }
    match real_dlsym_address() {
        0 => not_found,
        // SAFETY: the address is glibc's dlsym, whose signature this is.
        address => unsafe { std::mem::transmute::<usize, DlsymFn>(address) },
    }
}

/// Looks `symbol` up in `handle` as glibc does; a function the shim hooks comes back as its
/// hook, and the library's definition is remembered for forwarding. A caller that defines the
/// function itself is an implementation of the API (a loader resolving each of its drivers, a
/// layer): it gets the definition it asked for, since one hook cannot stand for several drivers'
/// functions of one name (an OpenCL loader with two ICDs would otherwise reach the first ICD's
/// `clGetExtensionFunctionAddress` for both, and list its platform twice or once).
extern "C" fn dlsym_on_handle(handle: *mut c_void, symbol: *const c_char, caller: *const c_void) -> *mut c_void {
    let found = real_dlsym(handle, symbol);
    if found.is_null() || symbol.is_null() {
        return found;
    }
    // SAFETY: dlsym found a symbol under this name, so it is a valid C string.
    let Some(hook) = lookup(unsafe { CStr::from_ptr(symbol) }) else { return found };
    if hook.beside.is_some_and(|companion| real_dlsym(handle, companion.as_ptr()).is_null()) {
        return found;
    }
    if library_defines(caller, symbol) {
        return found;
    }
    match hook.accept(found) {
        Some(real) => {
            hook.remember(real);
            hook.address()
        }
        None => found,
    }
}

/// Whether the library holding `address` defines `symbol` itself (not only through the
/// libraries it depends on, which `dlsym` on its handle would search too).
fn library_defines(address: *const c_void, symbol: *const c_char) -> bool {
    let Some((base, name)) = library_of(address) else { return false };
    // SAFETY: RTLD_NOLOAD only takes a new reference to the already loaded caller.
    let handle = unsafe { libc::dlopen(name, libc::RTLD_NOLOAD | libc::RTLD_LAZY) };
    if handle.is_null() {
        return false;
    }
    let definition = real_dlsym(handle, symbol);
    // SAFETY: balances the reference taken above.
    unsafe { libc::dlclose(handle) };
    !definition.is_null() && library_of(definition).is_some_and(|(defining, _)| defining == base)
}

/// The load address and file name of the library holding `address`.
fn library_of(address: *const c_void) -> Option<(*mut c_void, *const c_char)> {
    let mut info: libc::Dl_info = unsafe { std::mem::zeroed() };
    // SAFETY: dladdr only reads the loader's tables for any address.
    let found = unsafe { libc::dladdr(address, &mut info) };
    (found != 0 && !info.dli_fname.is_null()).then_some((info.dli_fbase, info.dli_fname))
}

/// File names of the libraries loaded in the process, except the program and the shim.
fn loaded_library_names() -> Vec<std::ffi::CString> {
    unsafe extern "C" fn collect(info: *mut libc::dl_phdr_info, _size: usize, names: *mut c_void) -> c_int {
        // SAFETY: dl_iterate_phdr passes a valid entry and our vector.
        let (info, names) = unsafe { (&*info, &mut *names.cast::<Vec<std::ffi::CString>>()) };
        if !info.dlpi_name.is_null() {
            // SAFETY: the loader's names are C strings.
            let name = unsafe { CStr::from_ptr(info.dlpi_name) };
            if !name.is_empty() {
                names.push(name.to_owned());
            }
        }
        0
    }
    let mut names: Vec<std::ffi::CString> = Vec::new();
    // SAFETY: the callback only reads the entries it is given.
    unsafe { libc::dl_iterate_phdr(Some(collect), (&raw mut names).cast()) };
    let own = own_library_name();
    names.retain(|name| Some(name) != own.as_ref());
    names
}

fn own_library_name() -> Option<std::ffi::CString> {
    // SAFETY: dli_fname is the loader's C string.
    library_of(real_dlsym as *const c_void).map(|(_, name)| unsafe { CStr::from_ptr(name) }.to_owned())
}
