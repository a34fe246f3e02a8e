//! The shim's exported `dlsym` must not disturb other interposers.

mod support;

use support::{shim_library, Scratch};

/// `dlsym(RTLD_NEXT)` means "after the caller's library": a wrapper preloaded after the shim
/// must find libc's `puts`, not its own (which would recurse until the stack overflows).
#[test]
fn rtld_next_lookups_stay_relative_to_their_caller() {
    let scratch = Scratch::new("rtld-next");
    let wrapper = scratch.cc("puts_wrapper", "libputs_wrapper.so", &["-shared", "-fPIC", "-ldl"]);
    let hello = scratch.cc("hello", "hello", &[]);
    let preload = format!("{} {}", shim_library().display(), wrapper.display());
    let output = std::process::Command::new(&hello).env("LD_PRELOAD", preload).output().expect("run hello");
    assert!(output.status.success(), "{}: {}", output.status, String::from_utf8_lossy(&output.stderr));
    assert_eq!(String::from_utf8_lossy(&output.stdout), "wrapped: hello\n");
}
