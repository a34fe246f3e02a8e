//! The replayer: validation, planning and backends.

pub mod backend;
