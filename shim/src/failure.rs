//! Why recording a call failed. The call itself still goes through; the hook logs this and
//! stops recording.

use crate::session::SessionError;

#[derive(Debug)]
pub struct Failure(pub String);

impl std::fmt::Display for Failure {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.write_str(&self.0)
    }
}

impl From<SessionError> for Failure {
    fn from(error: SessionError) -> Failure {
        Failure(error.to_string())
    }
}

/// What a hook's recording part returns.
pub type Recorded = Result<(), Failure>;
