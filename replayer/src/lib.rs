//! The replayer: validation, planning, families and the replay driver, which only talk to
//! the `Backend` trait; one module per API implements it.

pub mod backend;
pub mod backends;
pub mod cuda;
pub mod describe;
pub mod devices;
pub mod diff;
pub mod dot;
pub mod extent;
pub mod families;
pub mod graph;
pub mod hazards;
pub mod info;
pub mod inline;
pub mod lifetimes;
pub mod level_zero;
pub mod memory_diff;
pub mod opencl;
pub mod overrides;
pub mod plan;
pub mod profile;
pub mod relocation;
pub mod replay;
pub mod segments;
pub mod validate;

#[cfg(test)]
mod test_traces;
