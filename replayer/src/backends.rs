//! Which backend replays which API. The only place outside `replayer/src/<api>/` that
//! names an API's backend: each API's module has `fn open(&BackendOptions) -> Result<Box<dyn
//! Backend>, BackendError>`, which returns `BackendError::Unavailable` with a clear message when
//! the driver or device is missing.

use crate::backend::{Backend, BackendError, BackendOptions};
use crate::devices::Listed;
use trace_format::{Api, Trace};

/// Every API, in the order `replayer devices` lists them.
pub const APIS: [Api; 3] = [Api::OpenCl, Api::Cuda, Api::LevelZero];

/// Opens the backend that replays traces of `api` on this machine.
pub fn open(api: Api, options: &BackendOptions) -> Result<Box<dyn Backend>, BackendError> {
    match api {
        Api::OpenCl => crate::opencl::open(options),
        Api::Cuda => crate::cuda::open(options),
        Api::LevelZero => crate::level_zero::open(options),
    }
}

/// The devices that would replay traces of `api` on this machine, in the order `--device`
/// indexes them; `Unavailable` says why there are none.
pub fn devices(api: Api) -> Result<Vec<Listed>, BackendError> {
    match api {
        Api::OpenCl => crate::opencl::devices(),
        Api::Cuda => crate::cuda::devices(),
        Api::LevelZero => crate::level_zero::devices(),
    }
}

/// The device a replay prefers when `--device` is not given: the one the trace's first queue
/// ran on, else its first device.
pub fn recorded_device(trace: &Trace) -> Option<&trace_format::Device> {
    let first_queue = trace.queues.iter().find_map(|queue| queue.device);
    first_queue.and_then(|device| trace.devices.get(device.index())).or_else(|| trace.devices.first())
}
