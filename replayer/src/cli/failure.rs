//! Exit codes and the error messages that go with them.

use replayer::backend::BackendError;
use replayer::replay::ReplayError;
use std::process::ExitCode;

/// The exit codes scripts rely on (0 is success).
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum Exit {
    /// Replayed memory or a second trace differs.
    Mismatch = 1,
    /// The trace, a file or an argument is wrong.
    BadInput = 2,
    /// The trace's API, driver, device or a needed tool is not available on this machine.
    Unavailable = 3,
}

impl From<Exit> for ExitCode {
    fn from(exit: Exit) -> ExitCode {
        ExitCode::from(exit as u8)
    }
}

/// What went wrong, for stderr, and the exit code it leads to.
#[derive(Debug)]
pub struct Failure {
    pub exit: Exit,
    pub message: String,
}

impl Failure {
    pub fn bad_input(message: impl Into<String>) -> Self {
        Failure { exit: Exit::BadInput, message: message.into() }
    }

    pub fn unavailable(message: impl Into<String>) -> Self {
        Failure { exit: Exit::Unavailable, message: message.into() }
    }
}

impl From<BackendError> for Failure {
    fn from(error: BackendError) -> Self {
        let (exit, hint) = match error {
            BackendError::Invalid(_) => (Exit::BadInput, "the trace is damaged or was written by a faulty recorder; record it again"),
            BackendError::Unavailable(_) => {
                (Exit::Unavailable, "run it on a machine with this API's driver and device, or choose another device with --device")
            }
            BackendError::Unsupported(_) => {
                (Exit::Unavailable, "this replayer or device cannot replay what the trace holds; where the device is the reason, choose another with --device")
            }
            BackendError::Api { .. } => (Exit::Unavailable, "the driver rejected the replay; `replayer validate` checks the trace itself"),
        };
        Failure { exit, message: format!("{error}\n  hint: {hint}") }
    }
}

impl From<ReplayError> for Failure {
    fn from(error: ReplayError) -> Self {
        match error {
            ReplayError::Backend(error) => error.into(),
            other => Failure::bad_input(other.to_string()),
        }
    }
}
