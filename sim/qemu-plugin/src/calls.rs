//! Function regions: instructions and cycles per call of a named function, for ELFs that have no
//! region markers (third-party firmware that cannot be edited). Pure code, tested on the host.
//!
//! # Semantics
//!
//! The host lists the functions (ELF symbols) that open a function region in the functions file
//! (third column). The plugin's shadow call stack ([`crate::profile::Profile`], the profiler's
//! rules) decides when a call begins and ends:
//!
//! * An activation **begins** when a TB starting at a region function's first instruction
//!   begins a call ([`Profile::began`](crate::profile::Profile::began)): a BL/BLX into it (a frame
//!   is pushed), a tail call into it from another function (the top frame is replaced), or an
//!   exception whose handler it is. The activation belongs to that frame.
//! * It **ends** when its frame leaves the stack: the return to the call's return address (for
//!   a tail call: the return address of the call the tail-calling function was called with).
//! * Snapshots are taken before the first TB of the callee and before the first TB after the
//!   return, so an activation counts exactly the instructions the call executed (its own and
//!   its callees'), and their estimated cycles (a conditional return's taken refill included),
//!   and no caller instruction: `k_empty` (a lone `bx lr`) counts 1 instruction.
//! * **Inclusive**: callees, and exceptions taken during the call, are counted in it.
//! * **Recursion**: every call is its own activation, counted inclusively, so `total` counts
//!   the inner calls twice (like nested marker regions); `min`/`max` stay per call.
//! * **Tail calls**: a tail call *out of* a region function continues its activation until the
//!   tail-called function returns (that return is the region function's return). A tail call
//!   *into* a region function begins an activation that ends with the frame's return. A
//!   function that branches to its own first instruction (a self tail call, or a loop at the
//!   entry) continues the same activation: at the machine level this is a loop.
//! * A function entered by falling through from the previous code (no call) begins nothing.
//! * Activations still open when QEMU exits (e.g. `main`) are counted in `entries` only.
//!
//! Several symbols may share a region (a demangled name that several monomorphised copies
//! share): calls of any of them are activations of the region.
//!
//! # Per call and per call site
//!
//! Besides the totals, each completed activation is kept one by one (instructions, cycles and
//! its return address, in completion order) for the first [`CALLS_KEPT`] of each region, and
//! every completed activation is added to the statistics of its **call site**: its return
//! address, as the shadow stack knows it when the activation begins (the instruction after a
//! BL/BLX; for a tail call into the function, the return address of the call the tail-calling
//! function was called with; for an exception, the interrupted address, after a conditional
//! branch its fall-through; none for the bottom frame). Sites are not bounded (there are no
//! more than the firmware has call instructions), so a split by call site or caller is exact
//! however many calls there were.

use std::collections::BTreeMap;

use mcubench_wire::{CALLS_KEPT, Call, RegionStats};

use crate::regions::{At, complete};

#[derive(Debug, Clone, Copy)]
struct Open {
    id: u32,
    /// Index of the shadow-stack frame the activation belongs to.
    frame: usize,
    at: At,
    low: u32,
    /// SP when the activation began, when probing (`Some(None)`: unknown).
    sp: Option<Option<u32>>,
    /// Return address of the frame (the call site).
    ret: Option<u32>,
    /// Bytes the call processes, when read from an argument register at its entry.
    bytes: Option<u64>,
}

/// Open function-region activations and per-region statistics.
#[derive(Debug, Default)]
pub struct Calls {
    open: Vec<Open>,
    stats: BTreeMap<u32, RegionStats>,
    /// When tracing: every completed activation as (region, first snapshot, last snapshot).
    pub log: Option<Vec<(u32, u64, u64)>>,
}

impl Calls {
    /// Whether the TB about to run changes anything: an activation ends because the shadow
    /// stack is now `depth` frames deep, or `begin` is the region the TB's call begins.
    pub fn wants(&self, depth: usize, begin: Option<u32>) -> bool {
        begin.is_some() || self.open.last().is_some_and(|o| o.frame >= depth)
    }

    /// The shadow stack is `depth` frames deep before the TB runs (snapshot `at`, SP `sp` when
    /// probing): ends the activations whose frame left the stack, then begins `begin`'s
    /// activation on the top frame, whose return address is `ret`.
    pub fn step(&mut self, depth: usize, begin: Option<u32>, ret: Option<u32>, at: At, sp: Option<Option<u32>>) {
        while let Some(o) = self.open.last().copied()
            && o.frame >= depth
        {
            self.open.pop();
            self.fold_low(o.low);
            let stats = self.stats.entry(o.id).or_default();
            let (insns, cycles) = complete(stats, o.at, at, o.low, o.sp);
            if let Some(log) = &mut self.log {
                log.push((o.id, o.at.snap, at.snap));
            }
            stats.sites.entry(o.ret).or_default().add(insns, cycles);
            if stats.calls.len() < CALLS_KEPT {
                stats.calls.push(Call { insns, cycles: Some(cycles), ret: o.ret, bytes: o.bytes });
            }
        }
        if let Some(id) = begin {
            self.stats.entry(id).or_default().entries += 1;
            self.open.push(Open { id, frame: depth.saturating_sub(1), at, low: u32::MAX, sp, ret, bytes: None });
        }
    }

    /// The activation [`Calls::step`] just began processes `bytes` bytes (the plugin read them
    /// from an argument register at the call's entry, `region_arg=`).
    pub fn set_bytes(&mut self, bytes: u64) {
        if let Some(o) = self.open.last_mut() {
            o.bytes = Some(bytes);
        }
    }

    /// Folds probed stores (lowest address `low`) into every open activation.
    pub fn fold_low(&mut self, low: u32) {
        for o in &mut self.open {
            o.low = o.low.min(low);
        }
    }

    pub fn stats(&self) -> &BTreeMap<u32, RegionStats> {
        &self.stats
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::cost::End;
    use crate::profile::{Functions, Profile, TbShape};

    /// Runs TBs `(start, fall, end, insns)` through the shadow stack and the tracker, the way the
    /// plugin's exec callback does, with `At { insns, cycles: 2 × insns }`.
    fn run(functions: &str, tbs: &[(u32, u32, End, u64)]) -> BTreeMap<u32, RegionStats> {
        let f = Functions::parse(functions).unwrap();
        let mut p = Profile::default();
        let mut c = Calls::default();
        let mut insns = 0;
        for &(start, fall, end, n) in tbs {
            let (func, func_entry) = f.lookup(start);
            p.enter(&TbShape { start, fall, end, func, func_entry });
            let begin = if p.began() && func_entry { f.region(func) } else { None };
            if c.wants(p.depth(), begin) {
                c.step(p.depth(), begin, p.top_return(), At { insns, cycles: 2 * insns, snap: 0 }, None);
            }
            insns += n;
        }
        c.stats().clone()
    }

    // 0: main 0x100.., 1: crc 0x200.. (region 0), 2: helper 0x300.., 3: isr 0x400.. (region 1)
    const FUNCS: &str = "0x101 256\n0x201 256 0\n0x301 256\n0x401 256 1\n";

    #[test]
    fn calls_count_exactly_what_the_callee_runs() {
        let s = run(
            FUNCS,
            &[
                (0x100, 0x104, End::Call { ret: 0x104 }, 2),      // main calls crc
                (0x200, 0x208, End::Branch { target: 0x200 }, 4), // crc: entry block loops to its entry
                (0x200, 0x208, End::Branch { target: 0x200 }, 4), // (same activation)
                (0x208, 0x20c, End::Call { ret: 0x20c }, 1),      // crc calls helper
                (0x300, 0x302, End::Return, 3),                   // helper returns into crc
                (0x20c, 0x20e, End::Return, 2),                   // crc returns to main
                (0x104, 0x108, End::Call { ret: 0x108 }, 1),      // main calls crc again
                (0x200, 0x202, End::Return, 1),                   // lone bx lr
                (0x108, 0x10c, End::Next, 1),
            ],
        );
        let crc = &s[&0];
        assert_eq!((crc.entries, crc.completed, crc.total, crc.min, crc.max), (2, 2, 15, 1, 14));
        assert_eq!(crc.cycles, Some((30, 2, 28)));
        // Per call, in order, with the call sites (return addresses in main).
        let calls: Vec<_> = crc.calls.iter().map(|c| (c.insns, c.cycles, c.ret, c.bytes)).collect();
        assert_eq!(calls, [(14, Some(28), Some(0x104), None), (1, Some(2), Some(0x108), None)]);
        let sites: Vec<_> = crc.sites.iter().map(|(r, s)| (*r, s.completed, s.total)).collect();
        assert_eq!(sites, [(Some(0x104), 1, 14), (Some(0x108), 1, 1)]);
    }

    #[test]
    fn calls_are_kept_up_to_the_bound_and_sites_count_them_all() {
        // main calls crc from one site CALLS_KEPT + 10 times, then from another site once.
        let mut tbs = Vec::new();
        for _ in 0..CALLS_KEPT + 10 {
            tbs.push((0x100, 0x104, End::Call { ret: 0x104 }, 1));
            tbs.push((0x200, 0x202, End::Return, 3));
            tbs.push((0x104, 0x106, End::Branch { target: 0x100 }, 1));
        }
        tbs.push((0x100, 0x104, End::Jump, 0));
        tbs.push((0x104, 0x10c, End::Call { ret: 0x10c }, 1));
        tbs.push((0x200, 0x202, End::Return, 5));
        tbs.push((0x10c, 0x110, End::Next, 1));
        let crc = &run(FUNCS, &tbs)[&0];
        assert_eq!(crc.completed, CALLS_KEPT as u64 + 11);
        assert_eq!(crc.calls.len(), CALLS_KEPT, "bounded");
        assert!(crc.calls.iter().all(|c| c.insns == 3 && c.ret == Some(0x104)), "the first ones");
        assert_eq!(crc.sites[&Some(0x104)].completed, CALLS_KEPT as u64 + 10);
        assert_eq!((crc.sites[&Some(0x10c)].completed, crc.sites[&Some(0x10c)].total), (1, 5));
    }

    #[test]
    fn tail_calls_recursion_and_exceptions() {
        let s = run(
            FUNCS,
            &[
                (0x100, 0x104, End::Call { ret: 0x104 }, 1),      // main calls helper
                (0x300, 0x304, End::Branch { target: 0x200 }, 2), // helper tail-calls crc
                (0x200, 0x204, End::Call { ret: 0x204 }, 3),      // crc calls crc (recursion)
                (0x200, 0x204, End::Next, 5),                     // inner crc ... interrupted
                (0x400, 0x404, End::Return, 7),                   // isr (region 1) returns to crc
                (0x204, 0x208, End::Return, 1),                   // inner crc returns to outer
                (0x204, 0x208, End::Branch { target: 0x300 }, 1), // outer crc tail-calls helper
                (0x300, 0x304, End::Return, 2),                   // helper returns to main: crc ends
                (0x104, 0x108, End::Next, 1),
            ],
        );
        let crc = &s[&0];
        // Outer: 3 + 5 + 7 + 1 + 1 + 2 = 19; inner: 5 + 7 + 1 = 13.
        assert_eq!((crc.entries, crc.completed, crc.total, crc.min, crc.max), (2, 2, 32, 13, 19));
        assert_eq!((s[&1].completed, s[&1].total), (1, 7));
        // Completion order: the inner call (returns into crc, 0x204) first; the outer one was
        // tail-called by helper, so it returns where helper's call does (0x104).
        let calls: Vec<_> = crc.calls.iter().map(|c| (c.insns, c.ret)).collect();
        assert_eq!(calls, [(13, Some(0x204)), (19, Some(0x104))]);
        // The exception's activation returns to the interrupted address.
        assert_eq!(s[&1].calls[0].ret, Some(0x204));
    }

    #[test]
    fn open_activations_count_only_as_entries() {
        let s = run(FUNCS, &[(0x100, 0x104, End::Call { ret: 0x104 }, 1), (0x200, 0x204, End::Next, 3)]);
        assert_eq!((s[&0].entries, s[&0].completed, s[&0].total), (1, 0, 0));
    }

    #[test]
    fn probed_stores_reach_open_calls() {
        let mut c = Calls::default();
        c.step(2, Some(0), Some(0x104), At::default(), Some(Some(0x2000_0100)));
        c.set_bytes(64);
        c.fold_low(0x2000_0040);
        c.step(3, Some(1), Some(0x204), At::default(), Some(None));
        c.fold_low(0x2000_0020);
        c.step(2, None, None, At::default(), None);
        c.step(1, None, None, At::default(), None);
        assert_eq!(c.stats()[&1].stack_low, Some(0x2000_0020));
        assert_eq!(c.stats()[&0].stack_low, Some(0x2000_0020));
        // Bytes below the entry SP, where it was known.
        assert_eq!((c.stats()[&0].stack_bytes, c.stats()[&0].stack_unknown), (Some(0xe0), 0));
        assert_eq!((c.stats()[&1].stack_bytes, c.stats()[&1].stack_unknown), (None, 1));
        // Bytes read at entry belong to the call that began, not to the one it called.
        assert_eq!(c.stats()[&0].calls[0].bytes, Some(64));
        assert_eq!(c.stats()[&1].calls[0].bytes, None);
    }
}
