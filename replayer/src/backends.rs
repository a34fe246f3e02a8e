//! Which backend replays which API. The only place outside `replayer/src/<api>/` that
//! names an API's backend.
//!
//! Wiring a backend in (for the backend helpers): add `pub mod <api>;` to `lib.rs` and
//! replace that API's arm below with `crate::<api>::open(options)`, a function
//! `fn open(&BackendOptions) -> Result<Box<dyn Backend>, BackendError>` that returns
//! `BackendError::Unavailable` with a clear message when the driver or device is missing.

use crate::backend::{Backend, BackendError, BackendOptions};
use trace_format::Api;

/// Opens the backend that replays traces of `api` on this machine.
pub fn open(api: Api, options: &BackendOptions) -> Result<Box<dyn Backend>, BackendError> {
    match api {
        Api::OpenCl => crate::opencl::open(options),
        Api::Cuda => crate::cuda::open(options),
        Api::LevelZero => Err(not_built(api)),
    }
}

fn not_built(api: Api) -> BackendError {
    BackendError::Unavailable(format!(
        "the {api} backend is not built into this replayer yet, so {api} traces cannot be replayed here; \
         `info`, `dot`, `validate` and `diff` still work"
    ))
}
