//! Region bookkeeping and the results file: pure code, tested on the host without QEMU.
//!
//! # Region semantics
//!
//! Firmware marks a region by calling `mcubench_region_enter(id)` and later
//! `mcubench_region_exit(id)`; each call does one volatile store to `MCUBENCH_REGIONS[id]`, and
//! the plugin sees that store. A *snapshot* is the number of guest instructions executed up to
//! and including the marker's store instruction (exact: see the crate documentation).
//!
//! * One **activation** of a region runs from an enter store to the matching exit store. Its
//!   count is `exit snapshot - enter snapshot`: every instruction after the enter store up to and
//!   including the exit store. So it counts the operation plus a small, constant marker overhead:
//!   the rest of `mcubench_region_enter` after its store (its return), whatever the caller does
//!   between the two calls besides the operation (argument set-up, the call into
//!   `mcubench_region_exit`) and `mcubench_region_exit` up to its store.
//! * **Nesting** is allowed: activations form a stack. An exit must match the innermost open
//!   activation; anything else (an exit with no open activation, or of another id than the
//!   innermost) is recorded as an error, and the host refuses the whole results file. Counts are
//!   inclusive: an outer region's count contains the inner regions' instructions and markers.
//! * **Repeated** entries of one id are separate activations: `entries` counts enter stores,
//!   `completed` counts finished activations, `total` sums their counts and `min`/`max` are over
//!   them. A region that re-enters itself (recursion) has each activation counted inclusively, so
//!   `total` counts the inner activation's instructions twice; `min`/`max` stay per activation.
//! * Activations still open when QEMU exits are listed as `open` lines (not errors: the firmware
//!   may have faulted or exited inside a region); their instructions are in no `total`.
//!
//! Cycle estimates (when the plugin has a `core=`) are snapshotted at the same stores and follow
//! the same rules: `cycles` of an activation is `exit cycle snapshot - enter cycle snapshot`.
//!
//! **Function regions** (calls of named functions, for ELFs without markers) follow the same
//! statistics with activations delimited by the shadow call stack instead of stores: see
//! [`crate::calls`].
//!
//! **Stack probe** (`stack=`): each region and function region also records the lowest stack
//! address any (probed) store wrote during its completed activations (`stack_low`), and the
//! `probe` line gives the lowest address of the whole run. Stores are attributed when an
//! activation opens or closes (every store between two such events goes to every activation
//! open in between), so the numbers do not depend on how the stores interleave. With the SP at
//! the activation's start (the plugin follows SP from the code, see `cost::SpSteps`), it also
//! records the most bytes below that entry SP that a store reached (`stack_bytes`), and counts
//! the activations whose entry SP it did not know (`stack_unknown`).
//!
//! # Results
//!
//! At exit, [`Regions::results`] turns the statistics into `mcubench-wire`'s [`Results`] (the
//! results file's format is documented there): `region` lines per id, `open` lines for the
//! activations still open, `error` lines for unbalanced exits. `insns` is the whole run's count,
//! TB-granular (see the crate documentation for device accesses, which it counts exactly only
//! with cycles on).

use std::collections::BTreeMap;

use mcubench_wire::{Cycles, Interval, OpenRegion, RegionStats, Results, StackCost};

/// Adds one completed activation from `start` to `end` whose probed stores reached `low`
/// (`u32::MAX`: none) to `stats`, begun with SP `sp` when probing (`Some(None)`: SP unknown);
/// returns its instructions and cycles.
pub fn complete(stats: &mut RegionStats, start: At, end: At, low: u32, sp: Option<Option<u32>>) -> (u64, u64) {
    let n = end.insns.saturating_sub(start.insns);
    let c = end.cycles.saturating_sub(start.cycles);
    let first = stats.completed == 0;
    stats.min = if first { n } else { stats.min.min(n) };
    stats.max = stats.max.max(n);
    let (sum, min, max) = stats.cycles.unwrap_or_default();
    stats.cycles = Some((sum + c, if first { c } else { min.min(c) }, max.max(c)));
    stats.completed += 1;
    stats.total += n;
    if low != u32::MAX {
        stats.stack_low = Some(stats.stack_low.map_or(low, |l| l.min(low)));
    }
    match sp {
        None => {}
        // Bytes below the entry SP: a store at or above it (the caller's frame) adds nothing.
        Some(Some(sp)) => {
            let below = sp.saturating_sub(low);
            stats.stack_bytes = Some(stats.stack_bytes.map_or(below, |b| b.max(below)));
        }
        Some(None) => stats.stack_unknown += 1,
    }
    (n, c)
}

/// A snapshot at a marker store: instructions and estimated cycles up to and including it.
#[derive(Debug, Clone, Copy, Default, PartialEq, Eq)]
pub struct At {
    pub insns: u64,
    pub cycles: u64,
    /// Its number in the run trace (`trace=`; 0 when not tracing): a replay prices the
    /// snapshot again and pairs it with the activation log.
    pub snap: u64,
}

/// Everything besides the marker regions that goes into the results file.
#[derive(Debug, Clone, Default)]
pub struct Extra<'a> {
    /// Function regions (`function` lines).
    pub functions: Option<&'a BTreeMap<u32, RegionStats>>,
    /// `Some(low)` when probing: the whole run's lowest probed address (`u32::MAX`: none).
    pub probe: Option<u32>,
    /// The profile's `stack` lines.
    pub stacks: Vec<StackCost>,
    /// DWT cycle-counter read intervals (`interval` lines, written with a cycle total only).
    pub intervals: BTreeMap<(u32, u32), Interval>,
}

/// Open activations and per-id statistics.
#[derive(Debug, Default)]
pub struct Regions {
    /// (id, start, lowest probed address so far, SP at the start when probing)
    open: Vec<(u32, At, u32, Option<Option<u32>>)>,
    stats: BTreeMap<u32, RegionStats>,
    errors: Vec<String>,
    /// When tracing: every completed activation as (id, first snapshot, last snapshot).
    pub log: Option<Vec<(u32, u64, u64)>>,
}

impl Regions {
    /// Opens an activation of `id` at `at`; `sp`: SP then, when probing (`Some(None)`: unknown).
    pub fn enter(&mut self, id: u32, at: At, sp: Option<Option<u32>>) {
        self.stats.entry(id).or_default().entries += 1;
        self.open.push((id, at, u32::MAX, sp));
    }

    /// Folds probed stores (lowest address `low`) into every open activation.
    pub fn fold_low(&mut self, low: u32) {
        for o in &mut self.open {
            o.2 = o.2.min(low);
        }
    }

    pub fn exit(&mut self, id: u32, at: At) {
        match self.open.last() {
            Some(&(top, start, low, sp)) if top == id => {
                self.open.pop();
                // The outer activations contain this one's stores.
                self.fold_low(low);
                complete(self.stats.entry(id).or_default(), start, at, low, sp);
                if let Some(log) = &mut self.log {
                    log.push((id, start.snap, at.snap));
                }
            }
            Some(&(top, ..)) => self.error(format!("exit of region {id} while region {top} is the innermost open one")),
            None => self.error(format!("exit of region {id} with no open region")),
        }
    }

    pub fn error(&mut self, message: String) {
        // Bounded: a firmware that misuses markers in a loop must not grow this without limit.
        if self.errors.len() < 16 {
            self.errors.push(message);
        }
    }

    pub fn stats(&self) -> &BTreeMap<u32, RegionStats> {
        &self.stats
    }

    /// The results: the run's `insns`, the cycle estimate (`None` without a core), and `extra`.
    /// Region statistics carry cycles exactly when the run has a cycle total.
    pub fn results(&self, insns: u64, cycles: Option<Cycles>, extra: Extra<'_>) -> Results {
        let with_cycles = matches!(cycles, Some(Cycles { total: Ok(_), .. }));
        let stats = |map: &BTreeMap<u32, RegionStats>| -> BTreeMap<u32, RegionStats> {
            map.iter().map(|(&id, s)| (id, s.with_cycles(with_cycles))).collect()
        };
        Results {
            insns,
            cycles,
            regions: stats(&self.stats),
            functions: extra.functions.map(stats).unwrap_or_default(),
            open: self.open.iter().map(|&(id, at, ..)| OpenRegion { id, at: at.insns }).collect(),
            probe: extra.probe.map(|low| (low != u32::MAX).then_some(low)),
            stacks: extra.stacks,
            intervals: if with_cycles { extra.intervals } else { BTreeMap::new() },
            errors: self.errors.clone(),
            loop_end: None,
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    fn at(insns: u64) -> At {
        At { insns, cycles: insns * 2, snap: 0 }
    }

    #[test]
    fn repeated_and_nested_activations() {
        let mut r = Regions::default();
        r.enter(1, at(100), None);
        r.exit(1, at(150));
        r.enter(1, at(200), None);
        r.enter(2, at(210), None);
        r.exit(2, at(215));
        r.exit(1, at(300));
        let s = &r.stats()[&1];
        assert_eq!((s.entries, s.completed, s.total, s.min, s.max), (2, 2, 150, 50, 100));
        assert_eq!(s.cycles, Some((300, 100, 200)));
        assert_eq!(r.stats()[&2].total, 5);
        assert_eq!(
            r.results(7, None, Extra::default()).write(),
            "mcubench-qemu-plugin/5\ninsns 7\n\
             region id=1 entries=2 completed=2 total=150 min=50 max=100\n\
             region id=2 entries=1 completed=1 total=5 min=5 max=5\nend\n"
        );
        assert_eq!(
            r.results(
                7,
                Some(Cycles { model: "m4".into(), total: Ok(20) }),
                Extra { stacks: vec![StackCost { frames: vec![Some(0)], cycles: 1, insns: 1 }], ..Extra::default() }
            )
            .write(),
            "mcubench-qemu-plugin/5\ninsns 7\ncycles 20\nmodel m4\n\
             region id=1 entries=2 completed=2 total=150 min=50 max=100 cycles=300 cycles_min=100 cycles_max=200\n\
             region id=2 entries=1 completed=1 total=5 min=5 max=5 cycles=10 cycles_min=10 cycles_max=10\n\
             stack cycles=1 insns=1 frames=0\nend\n"
        );
        let unavailable = Cycles { model: "m0".into(), total: Err("bad\ninsn".into()) };
        let text = r.results(7, Some(unavailable), Extra::default()).write();
        assert!(text.contains("cycles-unavailable bad insn\nmodel m0\n") && !text.contains(" cycles="), "{text}");
    }

    #[test]
    fn recursion_counts_each_activation_inclusively() {
        let mut r = Regions::default();
        r.enter(3, at(0), None);
        r.enter(3, at(10), None);
        r.exit(3, at(20));
        r.exit(3, at(40));
        let s = &r.stats()[&3];
        assert_eq!((s.completed, s.total, s.min, s.max), (2, 50, 10, 40));
    }

    #[test]
    fn probed_stores_go_to_every_open_activation_and_the_probe_line() {
        let mut r = Regions::default();
        r.enter(1, at(0), Some(Some(0x2000_0200)));
        r.fold_low(0x2000_0100);
        r.enter(2, at(10), Some(Some(0x2000_00f0)));
        r.fold_low(0x2000_00f0);
        r.exit(2, at(20));
        r.fold_low(0x2000_00e0);
        r.exit(1, at(30));
        r.enter(3, at(40), None);
        r.exit(3, at(50));
        assert_eq!(r.stats()[&2].stack_low, Some(0x2000_00f0));
        assert_eq!(r.stats()[&1].stack_low, Some(0x2000_00e0));
        assert_eq!(r.stats()[&3].stack_low, None);
        // Entry SP 0x2000_0200, lowest store 0x2000_00e0; region 2's stores were all at or
        // above its entry SP.
        assert_eq!(r.stats()[&1].stack_bytes, Some(0x120));
        assert_eq!(r.stats()[&2].stack_bytes, Some(0));
        let mut functions = BTreeMap::new();
        functions
            .insert(0, RegionStats { entries: 1, completed: 1, total: 3, min: 3, max: 3, ..RegionStats::default() });
        let text = r
            .results(60, None, Extra { functions: Some(&functions), probe: Some(0x2000_00e0), ..Extra::default() })
            .write();
        assert!(
            text.contains(
                "region id=1 entries=1 completed=1 total=30 min=30 max=30 stack_low=536871136 stack_bytes=288\n"
            ),
            "{text}"
        );
        assert!(text.contains("region id=3 entries=1 completed=1 total=10 min=10 max=10\n"), "{text}");
        assert!(
            text.contains("function id=0 entries=1 completed=1 total=3 min=3 max=3\nprobe low=536871136\n"),
            "{text}"
        );
        let none = r.results(60, None, Extra { probe: Some(u32::MAX), ..Extra::default() }).write();
        assert!(none.contains("probe low=none\n"), "{none}");
    }

    #[test]
    fn unbalanced_exits_are_errors_and_open_regions_are_listed() {
        let mut r = Regions::default();
        r.exit(4, at(5));
        r.enter(1, at(10), None);
        r.exit(2, at(20));
        let text = r.results(30, None, Extra::default()).write();
        assert!(text.contains("error exit of region 4 with no open region\n"), "{text}");
        assert!(text.contains("error exit of region 2 while region 1 is the innermost open one\n"), "{text}");
        assert!(text.contains("open id=1 at=10\n"), "{text}");
        assert!(text.ends_with("end\n"));
    }
}
