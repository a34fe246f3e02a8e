//! Which backend replays which API. The only place outside `replayer/src/<api>/` that
//! names an API's backend: each API's module has `fn open(&BackendOptions) -> Result<Box<dyn
//! Backend>, BackendError>`, which returns `BackendError::Unavailable` with a clear message when
//! the driver or device is missing.

use crate::backend::{Backend, BackendError, BackendOptions};
use trace_format::Api;

/// Opens the backend that replays traces of `api` on this machine.
pub fn open(api: Api, options: &BackendOptions) -> Result<Box<dyn Backend>, BackendError> {
    match api {
        Api::OpenCl => crate::opencl::open(options),
        Api::Cuda => crate::cuda::open(options),
        Api::LevelZero => crate::level_zero::open(options),
    }
}

