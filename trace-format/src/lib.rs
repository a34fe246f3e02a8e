//! Reprise traces: the data model (`model`) and the framed, versioned container that stores it.

pub mod model;

pub use model::*;

/// Placeholder until the container lands: blob contents by id.
#[derive(Clone, Debug, Default)]
pub struct BlobStore;
