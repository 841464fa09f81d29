//! mcubench firmware support: the result protocol (`docs/src/reference/protocol.md`), fault and
//! panic reporting, SysTick instruction counting, region markers for the host's QEMU plugin and
//! stack measurement.
//!
//! A firmware binary links this crate (`use mcubench_support as _;` at least), calls
//! [`Session::begin`] first, measures each operation with [`measure`], reports it with
//! [`Session::kat`] and finishes with [`Session::end`]. The crate provides the `HardFault`,
//! `DefaultHandler` and `SysTick` exception handlers and the panic handler, so a binary must
//! not define its own.
//!
//! With the `heap` feature, wrapping the global allocator in [`TrackingHeap`] adds the heap an
//! operation took to its `kat` record and the whole-run heap peak to the `end` record.

#![no_std]

use core::fmt::{self, Write as _};
use core::sync::atomic::{AtomicBool, AtomicU32, AtomicUsize, Ordering, compiler_fence};

use cortex_m::peripheral::{SCB, SYST};
use cortex_m_rt::{ExceptionFrame, exception};
use cortex_m_semihosting::{debug, syscall};

pub use cortex_m_rt::entry;

/// Prefix of every record line (protocol version 1).
pub const PREFIX: &str = "@mcubench/1 ";

/// Capacity of one record line. Enough for a `kat` record with a 200-byte `out` and
/// `expected`; a longer record is refused (reported as a panic) rather than split.
pub const LINE_CAP: usize = 1024;

/// Largest output (`out=`/`expected=`) a `kat` record may carry, in bytes.
pub const MAX_OUT: usize = 200;

// ---------------------------------------------------------------------------------------------
// Semihosting output
// ---------------------------------------------------------------------------------------------

const NO_FD: usize = usize::MAX;
static STDOUT_FD: AtomicUsize = AtomicUsize::new(NO_FD);

/// Semihosting handle of the host's stdout (":tt" opened for writing), opened once.
fn stdout_fd() -> Option<usize> {
    let fd = STDOUT_FD.load(Ordering::Relaxed);
    if fd != NO_FD {
        return Some(fd);
    }
    let name = b":tt\0";
    // SYS_OPEN mode 4 = "w"; the length excludes the NUL.
    let fd = unsafe { syscall!(OPEN, name.as_ptr(), 4usize, name.len() - 1) } as isize;
    if fd < 0 {
        return None;
    }
    STDOUT_FD.store(fd as usize, Ordering::Relaxed);
    Some(fd as usize)
}

/// Writes `bytes` with one SYS_WRITE (QEMU writes it all at once). Only if the host reports a
/// partial write is the rest written with further calls.
fn write_stdout(bytes: &[u8]) {
    let Some(fd) = stdout_fd() else { return };
    let mut rest = bytes;
    while !rest.is_empty() {
        // SYS_WRITE returns the number of bytes NOT written.
        let left = unsafe { syscall!(WRITE, fd, rest.as_ptr(), rest.len()) };
        if left == 0 || left >= rest.len() {
            return;
        }
        rest = &rest[rest.len() - left..];
    }
}

/// Writes a free-form log line (not a record). The host keeps it as firmware log.
pub fn log(text: &str) {
    let mut l = Line::raw();
    l.push_str(text);
    l.emit();
}

// ---------------------------------------------------------------------------------------------
// Record lines
// ---------------------------------------------------------------------------------------------

/// One record line, formatted into a fixed buffer on the stack and written with one
/// semihosting write by [`Line::emit`].
pub struct Line {
    buf: [u8; LINE_CAP],
    len: usize,
    overflow: bool,
    /// `panic` records may be cut short (the message is free text); others may not.
    truncatable: bool,
}

impl Line {
    fn raw() -> Self {
        Line { buf: [0; LINE_CAP], len: 0, overflow: false, truncatable: true }
    }

    /// Starts a record of `kind` (`begin`, `kat`, `end`, `fault`, `panic`).
    pub fn record(kind: &str) -> Self {
        let mut l = Line { buf: [0; LINE_CAP], len: 0, overflow: false, truncatable: false };
        l.push_str(PREFIX);
        l.push_str(kind);
        l
    }

    fn push_byte(&mut self, b: u8) {
        // Keep one byte for the newline.
        if self.len + 1 < LINE_CAP {
            self.buf[self.len] = b;
            self.len += 1;
        } else {
            self.overflow = true;
        }
    }

    fn push_str(&mut self, s: &str) {
        for &b in s.as_bytes() {
            // A record is one line: never let a newline through.
            self.push_byte(if b == b'\n' || b == b'\r' { b' ' } else { b });
        }
    }

    fn push_dec(&mut self, mut v: u64) {
        let mut digits = [0u8; 20];
        let mut n = 0;
        loop {
            digits[n] = b'0' + (v % 10) as u8;
            n += 1;
            v /= 10;
            if v == 0 {
                break;
            }
        }
        while n > 0 {
            n -= 1;
            self.push_byte(digits[n]);
        }
    }

    fn push_hex_nibble(&mut self, v: u8) {
        self.push_byte(b"0123456789abcdef"[(v & 0xf) as usize]);
    }

    fn key(&mut self, key: &str) {
        self.push_byte(b' ');
        self.push_str(key);
        self.push_byte(b'=');
    }

    /// ` key=value` with a text value (must not contain spaces).
    pub fn text(&mut self, key: &str, value: &str) -> &mut Self {
        self.key(key);
        self.push_str(value);
        self
    }

    /// ` key=<decimal>`.
    pub fn dec(&mut self, key: &str, value: u64) -> &mut Self {
        self.key(key);
        self.push_dec(value);
        self
    }

    /// ` key=0x<8 lowercase hex digits>` (addresses and registers).
    pub fn addr(&mut self, key: &str, value: u32) -> &mut Self {
        self.key(key);
        self.push_str("0x");
        for i in (0..8).rev() {
            self.push_hex_nibble((value >> (4 * i)) as u8);
        }
        self
    }

    /// ` key=<lowercase hex of bytes>`.
    pub fn hex(&mut self, key: &str, bytes: &[u8]) -> &mut Self {
        self.key(key);
        for &b in bytes {
            self.push_hex_nibble(b >> 4);
            self.push_hex_nibble(b);
        }
        self
    }

    /// Ends the line and writes it with one semihosting write. A record that did not fit is
    /// not written; a `panic` record about it is written instead and the firmware exits.
    pub fn emit(&mut self) {
        if self.overflow && !self.truncatable {
            fail_with("record longer than LINE_CAP; not written");
        }
        self.buf[self.len] = b'\n';
        write_stdout(&self.buf[..self.len + 1]);
    }
}

impl fmt::Write for Line {
    fn write_str(&mut self, s: &str) -> fmt::Result {
        self.push_str(s);
        Ok(())
    }
}

// ---------------------------------------------------------------------------------------------
// Exit
// ---------------------------------------------------------------------------------------------

/// SYS_EXIT with ADP_Stopped_ApplicationExit: QEMU exits 0.
pub fn exit_success() -> ! {
    debug::exit(debug::EXIT_SUCCESS);
    #[allow(clippy::empty_loop)]
    loop {}
}

/// SYS_EXIT with a run-time error: QEMU exits 1.
pub fn exit_failure() -> ! {
    debug::exit(debug::EXIT_FAILURE);
    #[allow(clippy::empty_loop)]
    loop {}
}

/// Writes a `panic` record with `msg` and exits with failure.
fn fail_with(msg: &str) -> ! {
    let mut l = Line::record("panic");
    l.truncatable = true;
    l.text("msg", msg);
    l.emit();
    exit_failure()
}

// ---------------------------------------------------------------------------------------------
// Session: begin / kat / end
// ---------------------------------------------------------------------------------------------

/// One run of a firmware: `begin`, any number of `kat` records, `end`.
pub struct Session {
    passed: u32,
    failed: u32,
}

impl Session {
    /// Starts the tick counter and writes the `begin` record.
    pub fn begin(fw: &str) -> Session {
        timer_init();
        Line::record("begin").text("fw", fw).emit();
        Session { passed: 0, failed: 0 }
    }

    /// Compares `out` with `expected` and writes the `kat` record. Returns whether it passed.
    pub fn kat(&mut self, id: &str, alg: &str, op: &str, out: &[u8], expected: &[u8], m: Measurement) -> bool {
        self.record_kat(id, alg, op, out, expected, m, None)
    }

    /// [`Session::kat`] for an operation that processed `bytes` message bytes: the record carries
    /// `bytes=`, and the host reports the operation's cycles per byte.
    #[allow(clippy::too_many_arguments)]
    pub fn kat_bytes(
        &mut self,
        id: &str,
        alg: &str,
        op: &str,
        out: &[u8],
        expected: &[u8],
        m: Measurement,
        bytes: u64,
    ) -> bool {
        self.record_kat(id, alg, op, out, expected, m, Some(bytes))
    }

    // Always inlined: `kat` (bytes `None`) compiles to exactly its former code, so existing
    // firmware keeps its sizes and counts.
    #[inline(always)]
    #[allow(clippy::too_many_arguments)]
    fn record_kat(
        &mut self,
        id: &str,
        alg: &str,
        op: &str,
        out: &[u8],
        expected: &[u8],
        m: Measurement,
        bytes: Option<u64>,
    ) -> bool {
        let pass = out == expected;
        if out.len() > MAX_OUT || expected.len() > MAX_OUT {
            fail_with("kat output longer than MAX_OUT");
        }
        let mut l = Line::record("kat");
        l.text("id", id).text("alg", alg).text("op", op);
        l.text("result", if pass { "pass" } else { "fail" });
        l.dec("ticks", m.ticks).dec("stack", u64::from(m.stack));
        #[cfg(feature = "heap")]
        if let Some(heap) = m.heap {
            l.dec("heap", u64::from(heap));
        }
        if let Some(region) = m.region {
            l.dec("region", u64::from(region));
        }
        if let Some(bytes) = bytes {
            l.dec("bytes", bytes);
        }
        l.hex("out", out);
        if !pass {
            l.hex("expected", expected);
        }
        l.emit();
        if pass {
            self.passed += 1;
        } else {
            self.failed += 1;
        }
        pass
    }

    /// Writes the `end` record (with the whole-run stack high-water mark) and exits 0. The
    /// verdict is the host's: it reads `failed=` and every `kat` record.
    pub fn end(self) -> ! {
        let stack = whole_run_stack();
        // Without the heap feature, exactly the former code (existing firmware keeps its numbers).
        #[cfg(not(feature = "heap"))]
        Line::record("end")
            .dec("passed", u64::from(self.passed))
            .dec("failed", u64::from(self.failed))
            .dec("stack", u64::from(stack))
            .emit();
        #[cfg(feature = "heap")]
        {
            let mut l = Line::record("end");
            l.dec("passed", u64::from(self.passed))
                .dec("failed", u64::from(self.failed))
                .dec("stack", u64::from(stack));
            if let Some(peak) = heap::peak() {
                l.dec("heap", peak as u64);
            }
            l.emit();
        }
        exit_success()
    }
}

// ---------------------------------------------------------------------------------------------
// SysTick tick counter
// ---------------------------------------------------------------------------------------------

const SYST_RELOAD: u32 = 0x00ff_ffff;
static WRAPS: AtomicU32 = AtomicU32::new(0);

/// Starts SysTick on the processor clock, reload 0xFFFFFF, with its exception counting wraps.
pub fn timer_init() {
    unsafe {
        let syst = &*SYST::PTR;
        syst.csr.write(0);
        syst.rvr.write(SYST_RELOAD);
        syst.cvr.write(0); // any write clears the counter and COUNTFLAG
        WRAPS.store(0, Ordering::Relaxed);
        // ENABLE | TICKINT | CLKSOURCE (processor clock)
        syst.csr.write(0b111);
    }
}

#[exception]
fn SysTick() {
    // Only this handler writes WRAPS, and it cannot preempt itself: load + store is enough
    // (ARMv6-M has no atomic read-modify-write).
    WRAPS.store(WRAPS.load(Ordering::Relaxed).wrapping_add(1), Ordering::Relaxed);
}

/// SysTick ticks since [`timer_init`], 64-bit. Wrap-safe: the wrap count and the pending bit
/// are read on both sides of the counter; a wrap that happened but whose exception has not
/// run yet (pending, e.g. with interrupts masked) is accounted for.
#[inline(always)]
pub fn ticks() -> u64 {
    const PENDSTSET: u32 = 1 << 26;
    loop {
        compiler_fence(Ordering::SeqCst);
        let w1 = WRAPS.load(Ordering::Relaxed);
        let p1 = unsafe { (*SCB::PTR).icsr.read() } & PENDSTSET != 0;
        let cvr = unsafe { (*SYST::PTR).cvr.read() } & SYST_RELOAD;
        let p2 = unsafe { (*SCB::PTR).icsr.read() } & PENDSTSET != 0;
        let w2 = WRAPS.load(Ordering::Relaxed);
        compiler_fence(Ordering::SeqCst);
        if w1 == w2 && p1 == p2 {
            let wraps = u64::from(w1) + u64::from(p1);
            return (wraps << 24) | u64::from(SYST_RELOAD - cvr);
        }
    }
}

// ---------------------------------------------------------------------------------------------
// Region markers
// ---------------------------------------------------------------------------------------------

/// Number of region ids (size of [`MCUBENCH_REGIONS`]).
pub const REGION_COUNT: usize = 256;

/// One word per region id: 1 while the region is open, 0 otherwise. The host's QEMU plugin
/// finds this array and the two marker functions by symbol name and watches the marker
/// functions' stores into it: the store address gives the region id (plugin API v1 sees neither
/// registers nor stored values). Nothing in the firmware reads it.
#[unsafe(no_mangle)]
pub static MCUBENCH_REGIONS: [AtomicU32; REGION_COUNT] = [const { AtomicU32::new(0) }; REGION_COUNT];

/// The region id the next [`measure`] uses.
static NEXT_REGION: AtomicU32 = AtomicU32::new(0);

/// Marks the start of region `id` (`id < REGION_COUNT`; other ids store nothing). Out of line
/// and unmangled so the host can find it in the ELF; its store differs from
/// [`mcubench_region_exit`]'s (1 vs 0) so the two are never merged into one function.
#[unsafe(no_mangle)]
#[inline(never)]
pub extern "C" fn mcubench_region_enter(id: u32) {
    if let Some(slot) = MCUBENCH_REGIONS.get(id as usize) {
        unsafe { core::ptr::write_volatile(slot.as_ptr(), 1) };
    }
    compiler_fence(Ordering::SeqCst);
}

/// Marks the end of region `id`; pairs with [`mcubench_region_enter`].
#[unsafe(no_mangle)]
#[inline(never)]
pub extern "C" fn mcubench_region_exit(id: u32) {
    compiler_fence(Ordering::SeqCst);
    if let Some(slot) = MCUBENCH_REGIONS.get(id as usize) {
        unsafe { core::ptr::write_volatile(slot.as_ptr(), 0) };
    }
}

// ---------------------------------------------------------------------------------------------
// Stack measurement
// ---------------------------------------------------------------------------------------------

/// The value cortex-m-rt's `paint-stack` feature paints the stack with at reset.
pub const PAINT: u32 = 0xcccc_cccc;

/// Largest window [`measure`] paints below its own stack pointer. An operation that uses more
/// reports exactly this much (a saturated lower bound).
#[cfg(not(any(feature = "large-stack-window", feature = "xl-stack-window")))]
pub const WINDOW: usize = 32 * 1024;
/// With feature `large-stack-window` (ML-DSA verification uses over 100 KiB of stack): 256 KiB.
#[cfg(all(feature = "large-stack-window", not(feature = "xl-stack-window")))]
pub const WINDOW: usize = 256 * 1024;
/// With feature `xl-stack-window` (RustCrypto ML-DSA-87 key generation and signing use over
/// 400 KiB): 512 KiB.
#[cfg(feature = "xl-stack-window")]
pub const WINDOW: usize = 512 * 1024;

unsafe extern "C" {
    // cortex-m-rt link.x: the stack grows down from _stack_start to _stack_end (end of .bss).
    static _stack_start: u32;
    static _stack_end: u32;
}

fn stack_top() -> usize {
    (&raw const _stack_start) as usize & !7
}

fn stack_bottom() -> usize {
    ((&raw const _stack_end) as usize + 3) & !3
}

/// Lowest address in `[lo, hi)` whose word is not the paint value, scanning upward.
#[inline(always)]
fn first_dirty(lo: usize, hi: usize) -> Option<usize> {
    let mut a = lo;
    while a < hi {
        if unsafe { core::ptr::read_volatile(a as *const u32) } != PAINT {
            return Some(a);
        }
        a += 4;
    }
    None
}

/// Lowest stack address seen dirty before [`measure`] repainted it (so repainting does not
/// erase the whole-run high-water mark).
static LOW_WATER: AtomicUsize = AtomicUsize::new(usize::MAX);

/// Whole-run stack high-water mark in bytes below the initial SP.
pub fn whole_run_stack() -> u32 {
    let top = stack_top();
    let low = first_dirty(stack_bottom(), top).unwrap_or(top);
    let low = low.min(LOW_WATER.load(Ordering::Relaxed));
    (top - low) as u32
}

/// What [`measure`] found for one operation.
#[derive(Clone, Copy, Debug)]
pub struct Measurement {
    /// SysTick ticks around the operation alone.
    pub ticks: u64,
    /// Bytes of stack the operation used below the caller's stack pointer (a lower bound:
    /// painted window).
    pub stack: u32,
    /// The region id the operation ran in (see [`mcubench_region_enter`]); `None` once all
    /// [`REGION_COUNT`] ids are used.
    pub region: Option<u32>,
    /// Bytes of heap the operation took above what was allocated when it started (peak during
    /// the operation minus in use at its start); `None` until something was allocated through
    /// [`TrackingHeap`].
    #[cfg(feature = "heap")]
    pub heap: Option<u32>,
}

#[inline(never)]
fn run<F: FnOnce()>(region: u32, op: F) {
    mcubench_region_enter(region);
    op();
    mcubench_region_exit(region);
    // Keep this a real call frame (no tail call).
    compiler_fence(Ordering::SeqCst);
}

/// Runs `op` and returns its tick count, the stack it used and the region it ran in.
///
/// With interrupts masked, the window below the current SP (at most [`WINDOW`] bytes, never
/// below `_stack_end`) is painted by an inline-assembly loop that runs in this function's
/// frame and only writes below its own SP, so no live frame is touched. Then `op` runs through
/// an out-of-line trampoline between two tick reads, and the window is scanned upward for the
/// first word that is no longer paint. Inside the trampoline, `op` is wrapped in region markers
/// with the next region id (0, 1, 2, ... in call order), for the host's exact instruction count.
#[inline(never)]
pub fn measure<F: FnOnce()>(op: F) -> Measurement {
    let primask = cortex_m::register::primask::read();
    cortex_m::interrupt::disable();

    let sp: usize;
    unsafe { core::arch::asm!("mov {}, sp", out(reg) sp, options(nomem, nostack, preserves_flags)) };
    let lo = sp.saturating_sub(WINDOW).max(stack_bottom()) & !3;

    // Remember what earlier code left in the window before it is repainted.
    if let Some(a) = first_dirty(lo, sp) {
        if a < LOW_WATER.load(Ordering::Relaxed) {
            LOW_WATER.store(a, Ordering::Relaxed);
        }
    }

    // Paint [lo, SP) with registers only. `top` is the SP the loop painted up to.
    let top: usize;
    unsafe {
        core::arch::asm!(
            "mov r1, sp",
            "2:",
            "cmp r0, r1",
            "bhs 3f",
            "str r2, [r0]",
            "adds r0, #4",
            "b 2b",
            "3:",
            out("r1") top,
            inout("r0") lo => _,
            in("r2") PAINT,
            options(nostack),
        );
    }

    if primask.is_active() {
        unsafe { cortex_m::interrupt::enable() };
    }

    let region = NEXT_REGION.load(Ordering::Relaxed);
    NEXT_REGION.store(region.saturating_add(1), Ordering::Relaxed);

    #[cfg(feature = "heap")]
    let heap0 = heap::start_operation();
    let t0 = ticks();
    run(region, op);
    let t1 = ticks();
    #[cfg(feature = "heap")]
    let heap = heap::operation_peak(heap0);

    let used = match first_dirty(lo, top) {
        Some(a) => top - a,
        None => 0,
    };
    Measurement {
        ticks: t1.wrapping_sub(t0),
        stack: used as u32,
        region: ((region as usize) < REGION_COUNT).then_some(region),
        #[cfg(feature = "heap")]
        heap,
    }
}

// ---------------------------------------------------------------------------------------------
// Heap measurement (feature `heap`)
// ---------------------------------------------------------------------------------------------

#[cfg(feature = "heap")]
pub use heap::TrackingHeap;

#[cfg(feature = "heap")]
mod heap {
    use core::alloc::{GlobalAlloc, Layout};
    use core::sync::atomic::{AtomicBool, AtomicUsize, Ordering};

    /// Bytes allocated now, the run's peak and the peak since [`start_operation`]. One set for
    /// the program: there is one global allocator.
    static IN_USE: AtomicUsize = AtomicUsize::new(0);
    static PEAK: AtomicUsize = AtomicUsize::new(0);
    static OP_PEAK: AtomicUsize = AtomicUsize::new(0);
    /// Whether anything was ever allocated: only then do records carry `heap=`.
    static USED: AtomicBool = AtomicBool::new(false);

    /// A [`GlobalAlloc`] wrapper that counts the bytes of live allocations (the layouts' sizes)
    /// and their peaks, for [`measure`](crate::measure) and [`Session::end`](crate::Session::end):
    ///
    /// ```ignore
    /// #[global_allocator]
    /// static HEAP: TrackingHeap<MyAllocator> = TrackingHeap::new(MyAllocator::new());
    /// ```
    ///
    /// The counts are of requested bytes: the backing allocator's headers, alignment padding and
    /// fragmentation are not included (the C header's `_sbrk` tracking does include them). A
    /// `realloc` counts as the size change; the moment both the old and the new block exist is
    /// not counted.
    pub struct TrackingHeap<A> {
        inner: A,
    }

    impl<A> TrackingHeap<A> {
        pub const fn new(inner: A) -> Self {
            TrackingHeap { inner }
        }

        /// The wrapped allocator.
        pub fn inner(&self) -> &A {
            &self.inner
        }
    }

    /// Counters are updated with interrupts masked: ARMv6-M has no atomic read-modify-write, and
    /// an allocation in an interrupt handler must not lose an update.
    fn grow(bytes: usize) {
        cortex_m::interrupt::free(|_| {
            let now = IN_USE.load(Ordering::Relaxed).saturating_add(bytes);
            IN_USE.store(now, Ordering::Relaxed);
            if now > PEAK.load(Ordering::Relaxed) {
                PEAK.store(now, Ordering::Relaxed);
            }
            if now > OP_PEAK.load(Ordering::Relaxed) {
                OP_PEAK.store(now, Ordering::Relaxed);
            }
            USED.store(true, Ordering::Relaxed);
        });
    }

    fn shrink(bytes: usize) {
        cortex_m::interrupt::free(|_| {
            IN_USE.store(IN_USE.load(Ordering::Relaxed).saturating_sub(bytes), Ordering::Relaxed);
        });
    }

    unsafe impl<A: GlobalAlloc> GlobalAlloc for TrackingHeap<A> {
        unsafe fn alloc(&self, layout: Layout) -> *mut u8 {
            let p = unsafe { self.inner.alloc(layout) };
            if !p.is_null() {
                grow(layout.size());
            }
            p
        }

        unsafe fn alloc_zeroed(&self, layout: Layout) -> *mut u8 {
            let p = unsafe { self.inner.alloc_zeroed(layout) };
            if !p.is_null() {
                grow(layout.size());
            }
            p
        }

        unsafe fn dealloc(&self, ptr: *mut u8, layout: Layout) {
            unsafe { self.inner.dealloc(ptr, layout) };
            shrink(layout.size());
        }

        unsafe fn realloc(&self, ptr: *mut u8, layout: Layout, new_size: usize) -> *mut u8 {
            let p = unsafe { self.inner.realloc(ptr, layout, new_size) };
            if !p.is_null() {
                if new_size >= layout.size() {
                    grow(new_size - layout.size());
                } else {
                    shrink(layout.size() - new_size);
                }
            }
            p
        }
    }

    /// Resets the "peak since" marker to what is in use now, and returns that.
    pub(crate) fn start_operation() -> usize {
        cortex_m::interrupt::free(|_| {
            let now = IN_USE.load(Ordering::Relaxed);
            OP_PEAK.store(now, Ordering::Relaxed);
            now
        })
    }

    /// Peak since [`start_operation`] minus `start`; `None` while nothing was ever allocated.
    pub(crate) fn operation_peak(start: usize) -> Option<u32> {
        USED.load(Ordering::Relaxed)
            .then(|| OP_PEAK.load(Ordering::Relaxed).saturating_sub(start).min(u32::MAX as usize) as u32)
    }

    /// Whole-run peak; `None` while nothing was ever allocated.
    pub(crate) fn peak() -> Option<usize> {
        USED.load(Ordering::Relaxed).then(|| PEAK.load(Ordering::Relaxed))
    }
}

// ---------------------------------------------------------------------------------------------
// Fault, unexpected exception and panic reporting
// ---------------------------------------------------------------------------------------------

#[cfg(not(armv6m))]
fn fault_status() -> (u32, u32) {
    const CFSR: *const u32 = 0xE000_ED28 as *const u32;
    const HFSR: *const u32 = 0xE000_ED2C as *const u32;
    unsafe { (core::ptr::read_volatile(CFSR), core::ptr::read_volatile(HFSR)) }
}

/// ARMv6-M has neither CFSR nor HFSR: report zeros.
#[cfg(armv6m)]
fn fault_status() -> (u32, u32) {
    (0, 0)
}

#[exception]
unsafe fn HardFault(ef: &ExceptionFrame) -> ! {
    let (cfsr, hfsr) = fault_status();
    Line::record("fault")
        .text("kind", "hardfault")
        .addr("pc", ef.pc())
        .addr("lr", ef.lr())
        .addr("xpsr", ef.xpsr())
        .addr("cfsr", cfsr)
        .addr("hfsr", hfsr)
        .emit();
    exit_failure()
}

#[exception]
unsafe fn DefaultHandler(irqn: i16) {
    let mut l = Line::record("panic");
    l.truncatable = true;
    l.push_str(" msg=unexpected exception or interrupt irqn=");
    if irqn < 0 {
        l.push_byte(b'-');
    }
    l.push_dec(u64::from(irqn.unsigned_abs()));
    l.emit();
    exit_failure()
}

static PANICKING: AtomicBool = AtomicBool::new(false);

#[panic_handler]
fn panic(info: &core::panic::PanicInfo) -> ! {
    cortex_m::interrupt::disable();
    if PANICKING.load(Ordering::Relaxed) {
        exit_failure();
    }
    PANICKING.store(true, Ordering::Relaxed);
    let mut l = Line::record("panic");
    l.truncatable = true;
    l.push_str(" msg=");
    panic_text(&mut l, info);
    l.emit();
    exit_failure()
}

/// The panic message and location, formatted by `core::fmt`.
#[cfg(not(feature = "panic-without-formatting"))]
#[inline(always)]
fn panic_text(l: &mut Line, info: &core::panic::PanicInfo) {
    let _ = write!(l, "{}", info.message());
    if let Some(loc) = info.location() {
        let _ = write!(l, " at {}:{}:{}", loc.file(), loc.line(), loc.column());
    }
}

/// The panic message when it is a literal, and the location, without `core::fmt`: no panic
/// path reaches its nested `Debug` output, a recursion that a static stack bound cannot see the
/// end of (a production bootloader's panic handler does not format either).
#[cfg(feature = "panic-without-formatting")]
#[inline(always)]
fn panic_text(l: &mut Line, info: &core::panic::PanicInfo) {
    l.push_str(info.message().as_str().unwrap_or("(formatted message; not formatted by this firmware's panic handler)"));
    if let Some(loc) = info.location() {
        l.push_str(" at ");
        l.push_str(loc.file());
        l.push_byte(b':');
        l.push_dec(loc.line().into());
        l.push_byte(b':');
        l.push_dec(loc.column().into());
    }
}
