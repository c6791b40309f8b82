//! kueuesim's global allocator: mimalloc, with the word-aligned requests sent to its plain
//! `mi_malloc` family instead of the aligned family.
//!
//! Why not `mimalloc::MiMalloc`: from 0.1.52 it sends every request through
//! `mi_malloc_aligned(size, align)`. mimalloc 3's aligned entry has a fast path only for
//! blocks of at most 1,024 bytes whose next free block happens to be aligned; everything
//! else goes to `mi_theap_malloc_zero_aligned_at_generic`, which over-allocates `size +
//! align - 1` for any size that is not a power of two and marks the page as holding
//! interior pointers (so its frees take a slower path). Over the million-workload scenario
//! that generic path ran 7.1 M times at ~228 instructions each (docs/performance.md).
//!
//! Every mimalloc block is a multiple of the word size from a word-aligned start, so a
//! request whose alignment is at most a word is met by `mi_malloc` itself: that is the rule
//! Rust's own `System` allocator follows for `malloc` (with glibc's 16), here with the
//! alignment mimalloc guarantees for every size. Wider alignments keep the aligned calls.

use core::alloc::{GlobalAlloc, Layout};
use core::ffi::c_void;

use libmimalloc_sys as mi;

/// The widest alignment every `mi_malloc` block has, whatever its size: a word.
const WORD_ALIGN: usize = core::mem::size_of::<usize>();

/// The allocator: `#[global_allocator] static GLOBAL: Allocator = Allocator;`.
pub struct Allocator;

// SAFETY: every method forwards to mimalloc, which returns null on failure and otherwise
// a block of at least the requested size; the alignment is either at most a word (which
// every mimalloc block has) or requested explicitly from the aligned family. `dealloc`
// and `realloc` receive pointers this allocator returned, which mimalloc's `mi_free` and
// `mi_realloc*` accept whichever family allocated them.
unsafe impl GlobalAlloc for Allocator {
    #[inline]
    unsafe fn alloc(&self, layout: Layout) -> *mut u8 {
        if layout.align() <= WORD_ALIGN {
            // SAFETY: plain allocation; `layout.size()` is non-zero per GlobalAlloc's contract.
            unsafe { mi::mi_malloc(layout.size()) as *mut u8 }
        } else {
            // SAFETY: `layout.align()` is a power of two per Layout's invariant.
            unsafe { mi::mi_malloc_aligned(layout.size(), layout.align()) as *mut u8 }
        }
    }

    #[inline]
    unsafe fn alloc_zeroed(&self, layout: Layout) -> *mut u8 {
        if layout.align() <= WORD_ALIGN {
            // SAFETY: as in `alloc`, zeroed.
            unsafe { mi::mi_zalloc(layout.size()) as *mut u8 }
        } else {
            // SAFETY: as in `alloc`, zeroed.
            unsafe { mi::mi_zalloc_aligned(layout.size(), layout.align()) as *mut u8 }
        }
    }

    #[inline]
    unsafe fn dealloc(&self, ptr: *mut u8, _layout: Layout) {
        // SAFETY: `ptr` came from this allocator (GlobalAlloc's contract).
        unsafe { mi::mi_free(ptr as *mut c_void) }
    }

    #[inline]
    unsafe fn realloc(&self, ptr: *mut u8, layout: Layout, new_size: usize) -> *mut u8 {
        if layout.align() <= WORD_ALIGN {
            // SAFETY: `ptr` came from this allocator; the new block keeps word alignment.
            unsafe { mi::mi_realloc(ptr as *mut c_void, new_size) as *mut u8 }
        } else {
            // SAFETY: `ptr` came from this allocator with `layout.align()`.
            unsafe {
                mi::mi_realloc_aligned(ptr as *mut c_void, new_size, layout.align()) as *mut u8
            }
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    /// Every size class up to a few pages, at every alignment up to 4 KiB: the block is
    /// aligned as asked, writable over its whole size, and survives a realloc both ways.
    #[test]
    fn blocks_are_aligned_writable_and_reallocatable() {
        let allocator = Allocator;
        for align_log in 0..=12 {
            let align = 1usize << align_log;
            for size in (1..=64).chain([100, 1000, 1024, 1025, 4000, 70_000, 1 << 20]) {
                let layout = Layout::from_size_align(size, align).unwrap();
                // SAFETY: the layout has a non-zero size; the block is freed below.
                unsafe {
                    let p = allocator.alloc(layout);
                    assert!(!p.is_null());
                    assert_eq!(p as usize % align, 0, "size {size} align {align}");
                    core::ptr::write_bytes(p, 0xA5, size);
                    let grown = allocator.realloc(p, layout, size * 3);
                    assert_eq!(grown as usize % align, 0, "grown {size} align {align}");
                    assert_eq!(*grown.add(size - 1), 0xA5);
                    let grown_layout = Layout::from_size_align(size * 3, align).unwrap();
                    let shrunk = allocator.realloc(grown, grown_layout, size);
                    assert_eq!(shrunk as usize % align, 0, "shrunk {size} align {align}");
                    assert_eq!(*shrunk, 0xA5);
                    allocator.dealloc(shrunk, layout);
                    let z = allocator.alloc_zeroed(layout);
                    assert_eq!(z as usize % align, 0, "zeroed {size} align {align}");
                    assert!((0..size).all(|i| *z.add(i) == 0));
                    allocator.dealloc(z, layout);
                }
            }
        }
    }
}
