//! A bump allocator for the merger room.
//!
//! Every room call runs in a fresh instance that is thrown away afterwards, so
//! freeing memory buys nothing: allocation is a pointer increment and `dealloc`
//! does nothing. The merger lowers tens of thousands of strings per call (every
//! file of every PR), so this halves the cost of crossing into the room. The
//! host's memory cap still bounds the total; growing past it traps, and hall
//! reports it as a memory failure.

use std::alloc::{GlobalAlloc, Layout};
use std::sync::atomic::{AtomicUsize, Ordering};

const PAGE: usize = 64 * 1024;

pub struct Bump {
    next: AtomicUsize,
    end: AtomicUsize,
}

impl Bump {
    pub const fn new() -> Self {
        Self {
            next: AtomicUsize::new(0),
            end: AtomicUsize::new(0),
        }
    }
}

// SAFETY: wasm32-wasip2 rooms are single-threaded, so the relaxed loads and
// stores below never race. `alloc` returns either null or a block of at least
// `layout.size()` bytes aligned to `layout.align()` inside memory obtained from
// `memory.grow`, which no other code hands out; blocks never overlap because
// `next` only moves forward.
#[allow(unsafe_code)]
unsafe impl GlobalAlloc for Bump {
    unsafe fn alloc(&self, layout: Layout) -> *mut u8 {
        let align = layout.align();
        let size = layout.size();
        let mut start = (self.next.load(Ordering::Relaxed) + align - 1) & !(align - 1);
        let mut end = self.end.load(Ordering::Relaxed);
        if start + size > end || end == 0 {
            let wanted = (size + align).max(16 * PAGE);
            let pages = wanted.div_ceil(PAGE);
            let previous = core::arch::wasm32::memory_grow(0, pages);
            if previous == usize::MAX {
                return std::ptr::null_mut();
            }
            let base = previous * PAGE;
            if base != end {
                // Memory grown by someone else in between: start afresh.
                start = (base + align - 1) & !(align - 1);
            }
            end = base + pages * PAGE;
            self.end.store(end, Ordering::Relaxed);
        }
        self.next.store(start + size, Ordering::Relaxed);
        start as *mut u8
    }

    unsafe fn dealloc(&self, _ptr: *mut u8, _layout: Layout) {}
}
