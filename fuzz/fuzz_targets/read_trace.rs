//! Any bytes given to the trace reader yield a trace or an error, never a panic, hang or
//! unbounded allocation; every blob of a trace that reads decodes or errors likewise.
#![no_main]

use libfuzzer_sys::fuzz_target;

fuzz_target!(|data: &[u8]| {
    if let Ok(file) = trace_format::read_trace_bytes(data) {
        let _ = file.blobs.verify();
    }
});
