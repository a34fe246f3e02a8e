//! Helpers shared by the end-to-end tests: where the built binaries are, which OpenCL devices
//! to test on, the Level Zero test double, building and running the test programs natively and
//! under the shim, and running the replayer on their traces.

pub mod binaries;
pub mod device;
pub mod dot;
pub mod level_zero;
pub mod program;
pub mod replay;
