//! mimalloc as Rust's global allocator, for the shim and the replayer. The `mimalloc` crate asks
//! `mi_malloc_aligned` for every allocation, whose fast path takes only blocks of at most 1 KB
//! that happen to be aligned: larger ones (a window's records, a launch's batch) went through
//! the generic path, which over-allocates and adjusts, about 250 instructions each, two per
//! recorded CUDA launch (callgrind, `scripts/bench-launch-instructions.sh`). mimalloc's plain
//! `mi_malloc` aligns every block of 16 bytes or more to 16 (`MI_MAX_ALIGN_SIZE`) and smaller
//! ones to 8, which covers any layout whose alignment is at most 16 and at most its size; only
//! larger alignments need the aligned calls. Rust's own `System` allocator decides the same way.

#![no_std]

use core::alloc::{GlobalAlloc, Layout};
use core::ffi::c_void;
use libmimalloc_sys::{mi_free, mi_malloc, mi_malloc_aligned, mi_realloc, mi_realloc_aligned, mi_zalloc, mi_zalloc_aligned};

/// What `mi_malloc` aligns every block to, of 16 bytes or more.
const MI_MAX_ALIGN_SIZE: usize = 16;

pub struct MiAlloc;

/// Whether a block from `mi_malloc` of `size` bytes is aligned enough for `align`.
fn plain_is_aligned(size: usize, align: usize) -> bool {
    align <= MI_MAX_ALIGN_SIZE && align <= size
}

// SAFETY: each call forwards to mimalloc with a size and an alignment it honours (see
// `plain_is_aligned`); blocks from either family are freed by `mi_free` and grown by `mi_realloc`
// or `mi_realloc_aligned`, which keep the alignment asked for.
unsafe impl GlobalAlloc for MiAlloc {
    #[inline]
    unsafe fn alloc(&self, layout: Layout) -> *mut u8 {
        match plain_is_aligned(layout.size(), layout.align()) {
            // SAFETY: `layout.size()` is not zero (GlobalAlloc's contract).
            true => unsafe { mi_malloc(layout.size()) }.cast(),
            false => unsafe { mi_malloc_aligned(layout.size(), layout.align()) }.cast(),
        }
    }

    #[inline]
    unsafe fn alloc_zeroed(&self, layout: Layout) -> *mut u8 {
        match plain_is_aligned(layout.size(), layout.align()) {
            true => unsafe { mi_zalloc(layout.size()) }.cast(),
            false => unsafe { mi_zalloc_aligned(layout.size(), layout.align()) }.cast(),
        }
    }

    #[inline]
    unsafe fn dealloc(&self, ptr: *mut u8, _layout: Layout) {
        // SAFETY: a block this allocator handed out.
        unsafe { mi_free(ptr.cast::<c_void>()) }
    }

    #[inline]
    unsafe fn realloc(&self, ptr: *mut u8, layout: Layout, new_size: usize) -> *mut u8 {
        match plain_is_aligned(new_size, layout.align()) {
            // SAFETY: a block this allocator handed out, and a non-zero new size.
            true => unsafe { mi_realloc(ptr.cast::<c_void>(), new_size) }.cast(),
            false => unsafe { mi_realloc_aligned(ptr.cast::<c_void>(), new_size, layout.align()) }.cast(),
        }
    }
}

#[cfg(test)]
mod tests {
    extern crate std;
    use super::*;
    use std::vec::Vec;

    #[test]
    fn blocks_are_aligned_as_asked_across_sizes_and_growth() {
        for align in [1, 2, 4, 8, 16, 32, 64, 4096] {
            for size in [align, 8, 16, 24, 40, 1000, 1025, 5000, 100_000, 3 << 20] {
                let Ok(layout) = Layout::from_size_align(size.max(align), align) else { continue };
                // SAFETY: a non-zero layout; the block is freed below with the same allocator.
                unsafe {
                    let block = MiAlloc.alloc(layout);
                    assert!(!block.is_null() && block as usize % align == 0, "size {size}, align {align}");
                    block.write_bytes(7, layout.size());
                    let grown = MiAlloc.realloc(block, layout, layout.size() * 2 + 8);
                    assert!(!grown.is_null() && grown as usize % align == 0, "grown from size {size}, align {align}");
                    assert_eq!(*grown.add(layout.size() - 1), 7);
                    MiAlloc.dealloc(grown, Layout::from_size_align_unchecked(layout.size() * 2 + 8, align));
                    let zeroed = MiAlloc.alloc_zeroed(layout);
                    assert!(zeroed as usize % align == 0 && (0..layout.size()).all(|at| *zeroed.add(at) == 0));
                    MiAlloc.dealloc(zeroed, layout);
                }
            }
        }
        let values: Vec<u128> = (0..1000).collect();
        assert_eq!(values.iter().sum::<u128>(), 499_500);
    }
}
