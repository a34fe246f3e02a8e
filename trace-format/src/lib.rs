//! Reprise traces: the data model (`model`) and the framed, versioned container that stores it
//! (`container`).

pub mod container;
pub mod model;

pub use container::*;
pub use model::*;
