//! Function regions in the report: from the plugin's per-region statistics (totals, call sites,
//! the calls kept one by one) and the scenario's `regions` entry (bytes per call, split) to a
//! [`RegionReport`] with per-call values, cycles per byte and the split by caller.

use std::collections::BTreeMap;

use mcubench_wire::RegionStats;
use serde::{Deserialize, Serialize};

use crate::config::regions::{RegionBytes, RegionSpec, Split};

/// Count, total, min and max over the calls of one function region.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Serialize, Deserialize)]
pub struct PerCall {
    pub total: u64,
    pub min: u64,
    pub max: u64,
}

/// [`PerCall`] estimated cycles at the cell's clock, in microseconds, unrounded.
#[derive(Debug, Clone, Copy, PartialEq, Serialize, Deserialize)]
pub struct PerCallTime {
    pub total: f64,
    pub min: f64,
    pub max: f64,
}

impl PerCallTime {
    /// `cycles` at `clock_hz` ([`crate::report::time_us`]); `None` without either.
    pub fn at(cycles: Option<PerCall>, clock_hz: Option<u64>) -> Option<PerCallTime> {
        let c = cycles?;
        let us = |n: u64| crate::report::time_us(Some(n), clock_hz);
        Some(PerCallTime { total: us(c.total)?, min: us(c.min)?, max: us(c.max)? })
    }
}

/// One function region (`regions:` in the scenario): every completed call of the named function,
/// measured inclusively from its first instruction to the return (semantics:
/// `sim/qemu-plugin/src/calls.rs`).
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
pub struct RegionReport {
    /// The name as the scenario gives it.
    pub name: String,
    /// Its entry in the tables, `<row>/<operation>` (the scenario's `as:`); absent: a row of
    /// its own named after the function.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub table_entry: Option<String>,
    /// Completed calls.
    pub calls: u64,
    /// Calls still running when the firmware exited (not in the numbers).
    pub open: u64,
    pub instructions: PerCall,
    /// Estimated cycles (the cell's `cycle_model`); `None` without a model.
    pub cycles: Option<PerCall>,
    /// `cycles` at the cell's clock (`clock_hz`), microseconds; absent without a clock.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub time_us: Option<PerCallTime>,
    /// Stack probe: the lowest stack address written during a completed call.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub stack_lowest: Option<u32>,
    /// Stack probe: the most bytes below its entry SP (SP at the call) that a completed call's
    /// stores reached; absent when the plugin lost track of SP at some call's entry.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub stack_probe_bytes: Option<u32>,
    /// Bytes the completed calls processed in all (`bytes:` in the scenario: bytes per call ×
    /// calls); absent without `bytes`.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub bytes: Option<u64>,
    /// `cycles.total / bytes`; absent without cycles or bytes.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub cycles_per_byte: Option<f64>,
    /// The calls the plugin kept one by one (the first [`mcubench_wire::CALLS_KEPT`]), grouped
    /// by identical values, in the order each value first occurred.
    #[serde(default, skip_serializing_if = "Vec::is_empty")]
    pub per_call: Vec<CallGroup>,
    /// Completed calls beyond the plugin's bound: in the totals and `by_caller`, not in `per_call`.
    #[serde(default, skip_serializing_if = "is_zero")]
    pub per_call_dropped: u64,
    /// Totals per distinct bytes-per-call value, when the calls processed more than one size.
    #[serde(default, skip_serializing_if = "Vec::is_empty")]
    pub by_size: Vec<SizeReport>,
    /// With `split: caller`: the calls by calling function (exact, whatever the number of calls).
    #[serde(default, skip_serializing_if = "Vec::is_empty")]
    pub by_caller: Vec<CallerReport>,
}

/// An access of the DWT cycle counter (`CYCCNT`) by the firmware, a read or a write
/// (`DWT->CYCCNT = 0`), and the read that came next: what the firmware's own counter difference
/// between the two reads, or its read after the write, would give on the board, as estimated
/// here (QEMU's counter reads 0). Counted as a marker snapshot is: the instructions after the
/// first access up to and including the read.
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
pub struct CounterInterval {
    /// The accessing instructions, as function+offset (`no symbol` outside every symbol).
    pub from: String,
    pub to: String,
    /// The same accesses as `function#n`, the n-th of the function's accesses of the counter by
    /// address (among those the run made), or the address outside every symbol: names that
    /// survive a rebuild which moves the code, so budgets, `mcubench diff` and calibration rows
    /// can use them ([`CounterInterval::name`]). Empty in reports older than these names.
    #[serde(default)]
    pub from_name: String,
    #[serde(default)]
    pub to_name: String,
    pub from_address: u32,
    pub to_address: u32,
    /// How many times the access at `from` was followed by the read at `to`.
    pub count: u64,
    pub instructions: PerCall,
    pub cycles: PerCall,
    /// `cycles` at the cell's clock, microseconds; absent without a clock.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub time_us: Option<PerCallTime>,
}

impl CounterInterval {
    /// The plugin's intervals in address order; `symbolize(address)` gives the symbol holding
    /// an access and the access's offset in it.
    pub fn all(
        intervals: &BTreeMap<(u32, u32), mcubench_wire::Interval>,
        symbolize: &dyn Fn(u32) -> Option<(String, u64)>,
        clock_hz: Option<u64>,
    ) -> Vec<CounterInterval> {
        let per_call = |(total, min, max): (u64, u64, u64)| PerCall { total, min, max };
        let reads = read_names(intervals.keys().flat_map(|&(a, b)| [a, b]), symbolize);
        let at = |a: u32| symbolize(a).map_or("no symbol".to_string(), |(f, off)| format!("{f}+0x{off:x}"));
        intervals
            .iter()
            .map(|(&(from, to), i)| CounterInterval {
                from: at(from),
                to: at(to),
                from_name: reads[&from].clone(),
                to_name: reads[&to].clone(),
                from_address: from,
                to_address: to,
                count: i.count,
                instructions: per_call(i.insns),
                cycles: per_call(i.cycles),
                time_us: PerCallTime::at(Some(per_call(i.cycles)), clock_hz),
            })
            .collect()
    }

    /// `from_name..to_name`, e.g. `bench_crc32#1..bench_crc32#2`: what budgets and
    /// calibration rows name the pair by, and what `mcubench diff` matches base and head by.
    pub fn name(&self) -> String {
        format!("{}..{}", self.from_name, self.to_name)
    }
}

/// Each access address named `function#n` (n counting the function's accesses from 1 by
/// address), or `0x…` when no symbol holds it. The names depend only on which accesses ran and
/// in which function, not on where the code landed.
fn read_names(
    addresses: impl IntoIterator<Item = u32>,
    symbolize: &dyn Fn(u32) -> Option<(String, u64)>,
) -> BTreeMap<u32, String> {
    let addresses: std::collections::BTreeSet<u32> = addresses.into_iter().collect();
    let mut seen: BTreeMap<String, usize> = BTreeMap::new();
    addresses
        .into_iter()
        .map(|a| {
            let name = match symbolize(a) {
                Some((f, _)) => {
                    let n = seen.entry(f.clone()).or_default();
                    *n += 1;
                    format!("{f}#{n}")
                }
                None => format!("0x{a:08x}"),
            };
            (a, name)
        })
        .collect()
}

fn is_zero(n: &u64) -> bool {
    *n == 0
}

/// Calls of a function region with identical values.
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
pub struct CallGroup {
    /// How many calls had these values.
    pub calls: u64,
    pub instructions: u64,
    /// Estimated cycles; `None` without a model.
    pub cycles: Option<u64>,
    /// Bytes each of these calls processed.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub bytes: Option<u64>,
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub cycles_per_byte: Option<f64>,
    /// The function that holds the return address (`None`: no return address, or outside every
    /// function of the ELF).
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub caller: Option<String>,
    /// Where the calls returned to: the instruction after the call (for a tail call into the
    /// function, where the tail-calling function's own call returns; for an exception, the
    /// interrupted address).
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub return_address: Option<u32>,
}

/// The calls of a function region from one calling function (`split: caller`).
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
pub struct CallerReport {
    /// The function that holds the calls' return addresses; `None`: unknown.
    pub caller: Option<String>,
    pub calls: u64,
    pub instructions: PerCall,
    pub cycles: Option<PerCall>,
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub bytes: Option<u64>,
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub cycles_per_byte: Option<f64>,
}

/// The calls of a function region that processed one number of bytes each.
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
pub struct SizeReport {
    /// Bytes per call.
    pub bytes: u64,
    pub calls: u64,
    pub instructions: PerCall,
    pub cycles: Option<PerCall>,
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub cycles_per_byte: Option<f64>,
}

/// Cycles per byte, when both are known and there are bytes.
pub fn per_byte(cycles: Option<u64>, bytes: Option<u64>) -> Option<f64> {
    match (cycles, bytes) {
        (Some(c), Some(b)) if b > 0 => Some(c as f64 / b as f64),
        _ => None,
    }
}

/// Sum, min and max of values.
fn fold(values: impl IntoIterator<Item = u64>) -> Option<PerCall> {
    values.into_iter().fold(None, |acc, v| {
        Some(match acc {
            None => PerCall { total: v, min: v, max: v },
            Some(p) => PerCall { total: p.total + v, min: p.min.min(v), max: p.max.max(v) },
        })
    })
}

/// Merges two statistics of disjoint sets of calls.
fn merge(a: Option<PerCall>, b: PerCall) -> PerCall {
    match a {
        None => b,
        Some(a) => PerCall { total: a.total + b.total, min: a.min.min(b.min), max: a.max.max(b.max) },
    }
}

impl RegionReport {
    /// A region of `calls` completed calls with these totals and stack, nothing split or kept per
    /// call: for the table tests.
    #[cfg(test)]
    pub(crate) fn of_calls(
        name: &str,
        calls: u64,
        instructions: PerCall,
        cycles: PerCall,
        stack_probe_bytes: Option<u32>,
    ) -> RegionReport {
        RegionReport {
            name: name.into(),
            table_entry: None,
            calls,
            open: 0,
            instructions,
            cycles: Some(cycles),
            time_us: None,
            stack_lowest: None,
            stack_probe_bytes,
            bytes: None,
            cycles_per_byte: None,
            per_call: Vec::new(),
            per_call_dropped: 0,
            by_size: Vec::new(),
            by_caller: Vec::new(),
        }
    }

    /// The report of the function region `spec` from its statistics `s` (default: never
    /// called); `caller_of` names the function that holds a return address.
    pub fn new(spec: &RegionSpec, s: &RegionStats, caller_of: &dyn Fn(u32) -> Option<String>) -> RegionReport {
        let constant = match spec.bytes {
            Some(RegionBytes::PerCall(n)) => Some(n),
            _ => None,
        };
        // Bytes of one call: the scenario's constant, else what the plugin read at entry.
        let call_bytes = |b: Option<u64>| constant.or(b);
        let cycles = s.cycles.map(|(total, min, max)| PerCall { total, min, max });
        let bytes = match constant {
            Some(n) => Some(n * s.completed),
            // From a plugin that reads registers: the calls it kept (all, below the bound).
            None if s.calls.iter().any(|c| c.bytes.is_some()) => Some(s.calls.iter().filter_map(|c| c.bytes).sum()),
            None => None,
        };

        let mut per_call: Vec<CallGroup> = Vec::new();
        let mut index = BTreeMap::new();
        for c in &s.calls {
            let b = call_bytes(c.bytes);
            let key = (c.insns, c.cycles, b, c.ret);
            let i = *index.entry(key).or_insert_with(|| {
                per_call.push(CallGroup {
                    calls: 0,
                    instructions: c.insns,
                    cycles: c.cycles,
                    bytes: b,
                    cycles_per_byte: per_byte(c.cycles, b),
                    caller: c.ret.and_then(caller_of),
                    return_address: c.ret,
                });
                per_call.len() - 1
            });
            per_call[i].calls += 1;
        }

        // Per size: only when the calls processed more than one size.
        let mut sizes: BTreeMap<u64, Vec<&mcubench_wire::Call>> = BTreeMap::new();
        for c in &s.calls {
            if let Some(b) = call_bytes(c.bytes) {
                sizes.entry(b).or_default().push(c);
            }
        }
        let by_size = if sizes.len() > 1 {
            sizes
                .into_iter()
                .map(|(b, calls)| {
                    let cycles = if calls.iter().all(|c| c.cycles.is_some()) {
                        fold(calls.iter().filter_map(|c| c.cycles))
                    } else {
                        None
                    };
                    SizeReport {
                        bytes: b,
                        calls: calls.len() as u64,
                        instructions: fold(calls.iter().map(|c| c.insns)).expect("not empty"),
                        cycles_per_byte: per_byte(cycles.map(|c| c.total), Some(b * calls.len() as u64)),
                        cycles,
                    }
                })
                .collect()
        } else {
            Vec::new()
        };

        // By caller: the call sites (exact), merged per calling function in address order.
        let mut by_caller: Vec<CallerReport> = Vec::new();
        if spec.split == Some(Split::Caller) {
            for (ret, site) in &s.sites {
                let caller = ret.and_then(caller_of);
                let insns = PerCall { total: site.total, min: site.min, max: site.max };
                let cyc = site.cycles.map(|(total, min, max)| PerCall { total, min, max });
                match by_caller.iter_mut().find(|r| r.caller == caller) {
                    Some(r) => {
                        r.calls += site.completed;
                        r.instructions = merge(Some(r.instructions), insns);
                        r.cycles = match (r.cycles, cyc) {
                            (a, Some(b)) => Some(merge(a, b)),
                            _ => None,
                        };
                    }
                    None => by_caller.push(CallerReport {
                        caller,
                        calls: site.completed,
                        instructions: insns,
                        cycles: cyc,
                        bytes: None,
                        cycles_per_byte: None,
                    }),
                }
            }
            for r in &mut by_caller {
                r.bytes = constant.map(|n| n * r.calls);
                r.cycles_per_byte = per_byte(r.cycles.map(|c| c.total), r.bytes);
            }
        }

        RegionReport {
            name: spec.name.clone(),
            table_entry: spec.table_entry.clone(),
            calls: s.completed,
            open: s.entries.saturating_sub(s.completed),
            instructions: PerCall { total: s.total, min: s.min, max: s.max },
            cycles,
            time_us: None,
            stack_lowest: s.stack_low,
            stack_probe_bytes: crate::pipeline::probe_bytes(s),
            bytes,
            cycles_per_byte: per_byte(cycles.map(|c| c.total), bytes),
            per_call_dropped: s.completed.saturating_sub(s.calls.len() as u64),
            per_call,
            by_size,
            by_caller,
        }
    }
}

#[cfg(test)]
mod tests {
    use mcubench_wire::{Call, Site};

    use super::*;

    /// Reads are named by function and by order of address within it, so the names do not
    /// change when code before or inside the function moves the reads.
    #[test]
    fn counter_reads_are_named_by_function_and_order_not_address() {
        let names = |base: u32| {
            let symbolize = move |a: u32| match a {
                a if (base..base + 0x40).contains(&a) => Some(("bench".to_string(), u64::from(a - base))),
                a if (0x400..0x440).contains(&a) => Some(("poll".to_string(), u64::from(a - 0x400))),
                _ => None,
            };
            let mut intervals = BTreeMap::new();
            for pair in [(base + 0x12, base + 0x18), (base + 0x18, base + 0x12), (base + 0x18, 0x40c), (0x40c, 0x40c)] {
                let mut i = mcubench_wire::Interval::default();
                i.add(6, 8);
                intervals.insert(pair, i);
            }
            intervals.insert((0x40c, 0x9000), mcubench_wire::Interval::default());
            CounterInterval::all(&intervals, &symbolize, None)
                .iter()
                .map(|i| (i.name(), i.from.clone()))
                .collect::<Vec<_>>()
        };
        let at_0x100 = names(0x100);
        assert_eq!(
            at_0x100,
            [
                ("bench#1..bench#2".to_string(), "bench+0x12".to_string()),
                ("bench#2..bench#1".to_string(), "bench+0x18".to_string()),
                ("bench#2..poll#1".to_string(), "bench+0x18".to_string()),
                ("poll#1..poll#1".to_string(), "poll+0xc".to_string()),
                ("poll#1..0x00009000".to_string(), "poll+0xc".to_string()),
            ]
        );
        // The same reads with `bench` moved by a rebuild: other offsets, the same names.
        let moved: Vec<String> = names(0x180).into_iter().map(|(n, _)| n).collect();
        assert_eq!(moved, at_0x100.iter().map(|(n, _)| n.clone()).collect::<Vec<_>>());
    }

    fn call(insns: u64, ret: u32) -> Call {
        Call { insns, cycles: Some(2 * insns), ret: Some(ret), bytes: None }
    }

    /// crc32 called 16-, 64- and 256-byte style: three sizes from `main` (returns to 0x104,
    /// 0x108, 0x10c), the 64-byte one twice, plus one call from `other` (0x204).
    fn stats() -> RegionStats {
        let calls = vec![call(100, 0x104), call(400, 0x108), call(400, 0x108), call(1600, 0x10c), call(400, 0x204)];
        let mut sites: BTreeMap<Option<u32>, Site> = BTreeMap::new();
        for c in &calls {
            sites.entry(c.ret).or_default().add(c.insns, c.cycles.unwrap());
        }
        RegionStats {
            entries: 6,
            completed: 5,
            total: 2900,
            min: 100,
            max: 1600,
            cycles: Some((5800, 200, 3200)),
            stack_low: None,
            sites,
            calls,
            ..RegionStats::default()
        }
    }

    fn caller_of(a: u32) -> Option<String> {
        match a {
            0x100..0x200 => Some("main".into()),
            0x200..0x300 => Some("other".into()),
            _ => None,
        }
    }

    #[test]
    fn per_call_values_are_grouped_in_first_seen_order() {
        let r = RegionReport::new(&RegionSpec::named("crc32"), &stats(), &caller_of);
        assert_eq!((r.calls, r.open, r.per_call_dropped), (5, 1, 0));
        let groups: Vec<_> = r
            .per_call
            .iter()
            .map(|g| (g.calls, g.instructions, g.cycles, g.caller.as_deref(), g.return_address))
            .collect();
        assert_eq!(
            groups,
            [
                (1, 100, Some(200), Some("main"), Some(0x104)),
                (2, 400, Some(800), Some("main"), Some(0x108)),
                (1, 1600, Some(3200), Some("main"), Some(0x10c)),
                (1, 400, Some(800), Some("other"), Some(0x204)),
            ]
        );
        assert!(r.bytes.is_none() && r.cycles_per_byte.is_none() && r.by_caller.is_empty() && r.by_size.is_empty());
    }

    #[test]
    fn split_by_caller_merges_the_call_sites_of_one_function() {
        let spec = RegionSpec { split: Some(Split::Caller), ..RegionSpec::named("crc32") };
        let r = RegionReport::new(&spec, &stats(), &caller_of);
        let split: Vec<_> =
            r.by_caller.iter().map(|c| (c.caller.as_deref(), c.calls, c.instructions, c.cycles)).collect();
        assert_eq!(
            split,
            [
                (
                    Some("main"),
                    4,
                    PerCall { total: 2500, min: 100, max: 1600 },
                    Some(PerCall { total: 5000, min: 200, max: 3200 })
                ),
                (
                    Some("other"),
                    1,
                    PerCall { total: 400, min: 400, max: 400 },
                    Some(PerCall { total: 800, min: 800, max: 800 })
                ),
            ]
        );
    }

    #[test]
    fn constant_bytes_give_cycles_per_byte_in_total_per_group_and_per_caller() {
        let spec =
            RegionSpec { bytes: Some(RegionBytes::PerCall(64)), split: Some(Split::Caller), ..RegionSpec::named("f") };
        let r = RegionReport::new(&spec, &stats(), &caller_of);
        assert_eq!(r.bytes, Some(5 * 64));
        assert_eq!(r.cycles_per_byte, Some(5800.0 / 320.0));
        assert_eq!(r.per_call[0].bytes, Some(64));
        assert_eq!(r.per_call[0].cycles_per_byte, Some(200.0 / 64.0));
        assert_eq!(r.by_caller[1].bytes, Some(64));
        assert_eq!(r.by_caller[1].cycles_per_byte, Some(12.5));
        assert!(r.by_size.is_empty(), "one size");
    }

    #[test]
    fn bytes_from_the_plugin_give_totals_per_size() {
        // What a plugin that reads argument registers reports: bytes per call.
        let mut s = stats();
        for (c, b) in s.calls.iter_mut().zip([16, 64, 64, 256, 64]) {
            c.bytes = Some(b);
        }
        let r = RegionReport::new(&RegionSpec::named("crc32"), &s, &caller_of);
        assert_eq!(r.bytes, Some(16 + 64 * 3 + 256));
        let sizes: Vec<_> =
            r.by_size.iter().map(|z| (z.bytes, z.calls, z.cycles.unwrap().total, z.cycles_per_byte)).collect();
        assert_eq!(sizes, [(16, 1, 200, Some(12.5)), (64, 3, 2400, Some(12.5)), (256, 1, 3200, Some(12.5))]);
    }

    #[test]
    fn calls_beyond_the_bound_are_counted_as_dropped_and_no_calls_is_empty() {
        let mut s = stats();
        s.completed += 3;
        let r = RegionReport::new(&RegionSpec::named("crc32"), &s, &caller_of);
        assert_eq!(r.per_call_dropped, 3);
        let never = RegionReport::new(&RegionSpec::named("g"), &RegionStats::default(), &caller_of);
        assert_eq!((never.calls, never.per_call.len(), never.cycles), (0, 0, None));
        assert_eq!(per_byte(Some(10), Some(0)), None);
    }
}
