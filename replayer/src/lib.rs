//! The replayer: validation, planning, families and the replay driver, which only talk to
//! the `Backend` trait; one module per API implements it.

pub mod backend;
pub mod backends;
pub mod describe;
pub mod dot;
pub mod families;
pub mod graph;
pub mod memory_diff;
pub mod overrides;
pub mod plan;
pub mod profile;
pub mod segments;
