//! libshim.so: records the GPU work of unmodified programs.
