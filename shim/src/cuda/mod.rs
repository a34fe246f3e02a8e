//! CUDA: so far, reading a module image's size from its own headers (`image`), which the hooks of
//! `cuModuleLoadData` and `cuLibraryLoadData` need because they receive an image with no size.

pub mod image;
