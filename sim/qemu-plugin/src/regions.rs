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
//! # Results file (version 2)
//!
//! Line-oriented text, written once at QEMU exit (to `<out>.tmp`, then renamed to `<out>`):
//!
//! ```text
//! mcubench-qemu-plugin/2
//! insns <n>
//! cycles <n>                      (with core=, when every executed block could be priced)
//! cycles-unavailable <reason>     (with core=, instead of `cycles`: e.g. an undecodable instruction ran)
//! model <free text>               (with core=: the cycle model's description)
//! region id=<id> entries=<n> completed=<n> total=<n> min=<n> max=<n>[ cycles=<n> cycles_min=<n> cycles_max=<n>]
//! open id=<id> at=<snapshot>
//! stack cycles=<n> insns=<n> frames=<i;j;...>   (with functions=: one per call-tree node)
//! error <free text to end of line>
//! end
//! ```
//!
//! `insns` is the whole run's count, TB-granular (see the crate documentation for why it may be
//! slightly above the truth when firmware reads device registers mid-block; region counts are not
//! affected). `region` lines come in ascending id order; `min` and `max` are 0 when `completed=0`.
//! Region lines carry the three cycle fields exactly when a `cycles` line is present.
//! The final `end` line tells the host the file is complete.

use std::collections::BTreeMap;
use std::fmt::Write as _;

/// First line of the results file.
pub const HEADER: &str = "mcubench-qemu-plugin/2";

/// Statistics of one region id.
#[derive(Debug, Clone, Default, PartialEq, Eq)]
pub struct RegionStats {
    pub entries: u64,
    pub completed: u64,
    pub total: u64,
    pub min: u64,
    pub max: u64,
    /// Cycle estimates of the completed activations (sum, min, max), like the counts above.
    pub cycles: u64,
    pub cycles_min: u64,
    pub cycles_max: u64,
}

/// A snapshot at a marker store: instructions and estimated cycles up to and including it.
#[derive(Debug, Clone, Copy, Default, PartialEq, Eq)]
pub struct At {
    pub insns: u64,
    pub cycles: u64,
}

/// What the results file says about cycles.
#[derive(Debug, Clone, PartialEq, Eq)]
pub enum CycleSummary {
    /// No `core=`: no cycle lines.
    Off,
    Total {
        cycles: u64,
        model: String,
    },
    Unavailable {
        reason: String,
        model: String,
    },
}

/// Open activations and per-id statistics.
#[derive(Debug, Default)]
pub struct Regions {
    open: Vec<(u32, At)>,
    stats: BTreeMap<u32, RegionStats>,
    errors: Vec<String>,
}

impl Regions {
    pub fn enter(&mut self, id: u32, at: At) {
        self.stats.entry(id).or_default().entries += 1;
        self.open.push((id, at));
    }

    pub fn exit(&mut self, id: u32, at: At) {
        match self.open.last() {
            Some(&(top, start)) if top == id => {
                self.open.pop();
                let n = at.insns.saturating_sub(start.insns);
                let c = at.cycles.saturating_sub(start.cycles);
                let s = self.stats.entry(id).or_default();
                s.min = if s.completed == 0 { n } else { s.min.min(n) };
                s.max = s.max.max(n);
                s.cycles_min = if s.completed == 0 { c } else { s.cycles_min.min(c) };
                s.cycles_max = s.cycles_max.max(c);
                s.completed += 1;
                s.total += n;
                s.cycles += c;
            }
            Some(&(top, _)) => self.error(format!("exit of region {id} while region {top} is the innermost open one")),
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

    /// The results file's contents.
    /// The results file's contents; `stacks` are the profile's `stack` lines (may be empty).
    pub fn render(&self, insns: u64, cycles: &CycleSummary, stacks: &str) -> String {
        let mut out = format!("{HEADER}\ninsns {insns}\n");
        let one_line = |s: &str| s.replace(['\n', '\r'], " ");
        match cycles {
            CycleSummary::Off => {}
            CycleSummary::Total { cycles, model } => {
                let _ = writeln!(out, "cycles {cycles}\nmodel {}", one_line(model));
            }
            CycleSummary::Unavailable { reason, model } => {
                let _ = writeln!(out, "cycles-unavailable {}\nmodel {}", one_line(reason), one_line(model));
            }
        }
        let with_cycles = matches!(cycles, CycleSummary::Total { .. });
        for (id, s) in &self.stats {
            let _ = write!(
                out,
                "region id={id} entries={} completed={} total={} min={} max={}",
                s.entries, s.completed, s.total, s.min, s.max
            );
            if with_cycles {
                let _ = write!(out, " cycles={} cycles_min={} cycles_max={}", s.cycles, s.cycles_min, s.cycles_max);
            }
            out.push('\n');
        }
        for (id, at) in &self.open {
            let _ = writeln!(out, "open id={id} at={}", at.insns);
        }
        out.push_str(stacks);
        for e in &self.errors {
            let _ = writeln!(out, "error {}", e.replace(['\n', '\r'], " "));
        }
        out.push_str("end\n");
        out
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    fn at(insns: u64) -> At {
        At { insns, cycles: insns * 2 }
    }

    #[test]
    fn repeated_and_nested_activations() {
        let mut r = Regions::default();
        r.enter(1, at(100));
        r.exit(1, at(150));
        r.enter(1, at(200));
        r.enter(2, at(210));
        r.exit(2, at(215));
        r.exit(1, at(300));
        let s = &r.stats()[&1];
        assert_eq!((s.entries, s.completed, s.total, s.min, s.max), (2, 2, 150, 50, 100));
        assert_eq!((s.cycles, s.cycles_min, s.cycles_max), (300, 100, 200));
        assert_eq!(r.stats()[&2].total, 5);
        assert_eq!(
            r.render(7, &CycleSummary::Off, ""),
            "mcubench-qemu-plugin/2\ninsns 7\n\
             region id=1 entries=2 completed=2 total=150 min=50 max=100\n\
             region id=2 entries=1 completed=1 total=5 min=5 max=5\nend\n"
        );
        assert_eq!(
            r.render(7, &CycleSummary::Total { cycles: 20, model: "m4".into() }, "stack cycles=1 insns=1 frames=0\n"),
            "mcubench-qemu-plugin/2\ninsns 7\ncycles 20\nmodel m4\n\
             region id=1 entries=2 completed=2 total=150 min=50 max=100 cycles=300 cycles_min=100 cycles_max=200\n\
             region id=2 entries=1 completed=1 total=5 min=5 max=5 cycles=10 cycles_min=10 cycles_max=10\n\
             stack cycles=1 insns=1 frames=0\nend\n"
        );
        let unavailable = CycleSummary::Unavailable { reason: "bad\ninsn".into(), model: "m0".into() };
        let text = r.render(7, &unavailable, "");
        assert!(text.contains("cycles-unavailable bad insn\nmodel m0\n") && !text.contains(" cycles="), "{text}");
    }

    #[test]
    fn recursion_counts_each_activation_inclusively() {
        let mut r = Regions::default();
        r.enter(3, at(0));
        r.enter(3, at(10));
        r.exit(3, at(20));
        r.exit(3, at(40));
        let s = &r.stats()[&3];
        assert_eq!((s.completed, s.total, s.min, s.max), (2, 50, 10, 40));
    }

    #[test]
    fn unbalanced_exits_are_errors_and_open_regions_are_listed() {
        let mut r = Regions::default();
        r.exit(4, at(5));
        r.enter(1, at(10));
        r.exit(2, at(20));
        let text = r.render(30, &CycleSummary::Off, "");
        assert!(text.contains("error exit of region 4 with no open region\n"), "{text}");
        assert!(text.contains("error exit of region 2 while region 1 is the innermost open one\n"), "{text}");
        assert!(text.contains("open id=1 at=10\n"), "{text}");
        assert!(text.ends_with("end\n"));
    }
}
