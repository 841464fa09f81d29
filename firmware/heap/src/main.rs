//! Heap measurement test (asserted by sim/mcubench/tests/heap.rs): the global allocator is a
//! small bump arena wrapped in `TrackingHeap`, and each KAT allocates known sizes:
//!
//! - `heap/none`: before any allocation, so its record has no `heap=`; it checksums 16 bytes and
//!   says so with `bytes=16` (`Session::kat_bytes`, for cycles per byte).
//! - `heap/vec-3000`: a 3000-byte Vec, filled and dropped: `heap=3000`.
//! - `heap/vec-1000`: then a 1000-byte one: `heap=1000` (the "peak since" marker is reset at each
//!   operation's start, so the earlier 3000 does not leak into it).
//! - `heap/held-500-take-4000`: 500 bytes are allocated before the operation and kept; the operation
//!   allocates 4000 more: `heap=4000` (only what it took above the 500 in use at its start).
//!
//! Whole-run peak: 500 + 4000 = 4500 (`heap=4500` on `end`). Each KAT's output is a checksum of
//! the bytes written, so a block that was not really allocated fails it.
#![no_std]
#![no_main]

extern crate alloc;

use alloc::vec::Vec;
use core::alloc::{GlobalAlloc, Layout};
use core::cell::UnsafeCell;
use core::sync::atomic::{AtomicUsize, Ordering};

use mcubench_support::{Session, TrackingHeap, entry, measure};

const ARENA: usize = 8 * 1024;

/// Bump allocator over a static arena; freeing the most recent block gives it back, anything
/// else is leaked (enough for this test, which frees in reverse order).
struct Bump {
    arena: UnsafeCell<[u8; ARENA]>,
    next: AtomicUsize,
}

// Single core, and the test allocates only from thread mode.
unsafe impl Sync for Bump {}

unsafe impl GlobalAlloc for Bump {
    unsafe fn alloc(&self, layout: Layout) -> *mut u8 {
        let base = self.arena.get() as usize;
        let start = (base + self.next.load(Ordering::Relaxed)).next_multiple_of(layout.align()) - base;
        match start.checked_add(layout.size()) {
            Some(end) if end <= ARENA => {
                self.next.store(end, Ordering::Relaxed);
                (base + start) as *mut u8
            }
            _ => core::ptr::null_mut(),
        }
    }

    unsafe fn dealloc(&self, ptr: *mut u8, layout: Layout) {
        let offset = ptr as usize - self.arena.get() as usize;
        if offset + layout.size() == self.next.load(Ordering::Relaxed) {
            self.next.store(offset, Ordering::Relaxed);
        }
    }
}

#[global_allocator]
static HEAP: TrackingHeap<Bump> =
    TrackingHeap::new(Bump { arena: UnsafeCell::new([0; ARENA]), next: AtomicUsize::new(0) });

fn checksum(n: usize, seed: u8) -> [u8; 4] {
    let mut s = 0u32;
    for i in 0..n {
        s = s.wrapping_mul(31).wrapping_add(u32::from((i as u8).wrapping_mul(7).wrapping_add(seed)));
    }
    s.to_be_bytes()
}

/// A Vec of `n` bytes filled like `checksum` expects; returns the checksum of what it holds.
fn vec_sum(n: usize, seed: u8) -> [u8; 4] {
    let mut v = Vec::with_capacity(n);
    for i in 0..n {
        v.push((i as u8).wrapping_mul(7).wrapping_add(seed));
    }
    let v = core::hint::black_box(v);
    let mut s = 0u32;
    for &b in &v {
        s = s.wrapping_mul(31).wrapping_add(u32::from(b));
    }
    s.to_be_bytes()
}

#[entry]
fn main() -> ! {
    let mut s = Session::begin("heap-rust");
    let mut out = [0u8; 4];

    // The checksum of 16 bytes: the record says so (`bytes=16`, `Session::kat_bytes`).
    let m = measure(|| out = checksum(16, 1));
    s.kat_bytes("heap/none", "heap-test", "compute", &out, &checksum(16, 1), m, 16);

    let m = measure(|| out = vec_sum(3000, 3));
    s.kat("heap/vec-3000", "heap-test", "compute", &out, &checksum(3000, 3), m);

    let m = measure(|| out = vec_sum(1000, 4));
    s.kat("heap/vec-1000", "heap-test", "compute", &out, &checksum(1000, 4), m);

    let held = core::hint::black_box(alloc::vec![0u8; 500]);
    let m = measure(|| out = vec_sum(4000, 5));
    s.kat("heap/held-500-take-4000", "heap-test", "compute", &out, &checksum(4000, 5), m);
    drop(held);

    s.end()
}
