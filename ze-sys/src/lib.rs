//! Level Zero (oneAPI) for Reprise: the types of the specification's 1.4 headers that the project
//! uses (Debian's `libze-dev`), the experimental types of later specifications written by hand
//! (`mutable`), and the API described once (`api`): each function with its name, its slot in the
//! loader's dispatch tables and its signature. Everything that lists functions is derived from
//! that description, as apitrace derives its wrappers from one description per API: the dispatch
//! table structs (`tables`), the driver side (`driver`: a trait with one method per function and
//! the `zeGet*ProcAddrTable` exports a driver library gives the loader), and the caller side
//! (`functions`: the loader's exported functions, looked up by name).

#![allow(non_camel_case_types, non_snake_case, non_upper_case_globals, clippy::missing_safety_doc, clippy::too_many_arguments)]

#[macro_use]
mod api;
mod constants;
pub mod driver;
pub mod functions;
mod mutable;
mod structs;
mod tables;
mod types;

pub use constants::*;
pub use mutable::*;
pub use structs::*;
pub use tables::*;
pub use types::*;

#[cfg(test)]
mod layout_tests;
