//! Budgets: hard limits on flash, static RAM, stack and heap peak per board × profile, and on the estimated
//! cycles or instructions of a function region (its most expensive call), a KAT operation or a pair
//! of the firmware's DWT cycle-counter accesses (its longest interval).
//! Crossing one fails the run. A metric that could not be measured (the run failed before its
//! `end` record, no cycle model, a name that is no region, KAT or pair of accesses) cannot be shown to
//! hold, so it is `unknown`, which fails the gate too: a budget is never passed by default.

use serde::{Deserialize, Serialize};

use crate::config::scenario::{Budgets, RegionBudgets};

#[derive(Debug, Clone, Copy, PartialEq, Eq, Serialize, Deserialize)]
#[serde(rename_all = "lowercase")]
pub enum Metric {
    Flash,
    Ram,
    Stack,
    #[serde(rename = "stack-static")]
    StackStatic,
    /// Whole-run heap peak reported by the firmware (`heap=` on `end`).
    Heap,
    /// Estimated cycles of a function region's most expensive call or of a KAT operation.
    Cycles,
    /// Instructions of a function region's most expensive call or of a KAT operation.
    Instructions,
    /// Whole-run estimated cycles.
    #[serde(rename = "cycles-total")]
    CyclesTotal,
    /// Whole-run instructions.
    #[serde(rename = "instructions-total")]
    InstructionsTotal,
    /// A metric a `verdict.record` pattern captured from the console (rounded up).
    Recorded,
    /// Time of a KAT operation or function region (its estimated cycles) at the cell's clock
    /// (board timing profile or `model.clock`), else the scenario's `table.clock`, microseconds
    /// rounded up.
    Time,
    /// Cycles per byte of a KAT that reported `bytes=` or a function region with `bytes`:
    /// estimated cycles / bytes, rounded up (the limit holds when cycles <= limit x bytes).
    Cpb,
}

impl Metric {
    pub fn label(self) -> &'static str {
        match self {
            Metric::Flash => "flash",
            Metric::Ram => "ram",
            Metric::Stack => "stack",
            Metric::StackStatic => "stack-static",
            Metric::Heap => "heap",
            Metric::Cycles => "cycles",
            Metric::Instructions => "instructions",
            Metric::CyclesTotal => "cycles-total",
            Metric::InstructionsTotal => "instructions-total",
            Metric::Recorded => "metric",
            Metric::Time => "time",
            Metric::Cpb => "cpb",
        }
    }

    fn unit(self) -> &'static str {
        match self {
            Metric::Cycles | Metric::CyclesTotal => " cycles",
            Metric::Instructions | Metric::InstructionsTotal => " instructions",
            Metric::Recorded => "",
            Metric::Time => " us",
            Metric::Cpb => " cycles/byte",
            _ => " B",
        }
    }
}

#[derive(Debug, Clone, Copy, PartialEq, Eq, Serialize, Deserialize)]
#[serde(rename_all = "lowercase")]
pub enum BudgetStatus {
    Ok,
    Exceeded,
    Unknown,
}

#[derive(Debug, Clone, PartialEq, Eq, Serialize, Deserialize)]
pub struct BudgetCheck {
    pub metric: Metric,
    /// For `cycles` and `instructions`: the function region or KAT id the limit is on.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub subject: Option<String>,
    pub limit: u64,
    pub actual: Option<u64>,
    pub status: BudgetStatus,
    /// For an `unknown` limit on a name the run does not have: what it has instead.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub hint: Option<String>,
}

impl BudgetCheck {
    /// The metric with its subject, e.g. `cycles crc32`.
    pub fn name(&self) -> String {
        match &self.subject {
            Some(s) => format!("{} {s}", self.metric.label()),
            None => self.metric.label().to_string(),
        }
    }

    pub fn describe(&self) -> String {
        match &self.hint {
            Some(hint) => format!("{}; {hint}", self.describe_limit()),
            None => self.describe_limit(),
        }
    }

    fn describe_limit(&self) -> String {
        let (name, u) = (self.name(), self.metric.unit());
        match (self.status, self.actual) {
            (BudgetStatus::Ok, Some(a)) => format!("{name} {a}{u} within {}{u}", self.limit),
            (BudgetStatus::Exceeded, Some(a)) => {
                format!("{name} {a}{u} exceeds the budget of {}{u} by {}{u}", self.limit, a - self.limit)
            }
            _ if self.metric == Metric::Time => format!(
                "{name} unknown (no function region, KAT or pair of DWT cycle-counter accesses with that name ran \
                 with a cycle model): cannot show it is within {}{u}",
                self.limit
            ),
            _ if self.metric == Metric::Cpb => format!(
                "{name} unknown (no KAT with that id reported `bytes=` and ran with a cycle model, and no function \
                 region with that name has `bytes`): cannot show it is within {}{u}",
                self.limit
            ),
            _ if matches!(self.metric, Metric::Cycles | Metric::Instructions) => format!(
                "{name} unknown (no function region in `regions`, KAT or pair of DWT cycle-counter accesses with that \
                 name ran with a count{}): cannot show it is within {}{u}",
                if self.metric == Metric::Cycles { " and a cycle model" } else { "" },
                self.limit
            ),
            _ if matches!(self.metric, Metric::CyclesTotal | Metric::InstructionsTotal) => format!(
                "{name} unknown (the run did not end, or ran without the QEMU plugin{}): cannot show it is within {}{u}",
                if self.metric == Metric::CyclesTotal { " or a cycle model" } else { "" },
                self.limit
            ),
            _ if self.metric == Metric::Recorded => format!(
                "{name} unknown (no console line matched its `verdict.record` pattern): cannot show it is within {}",
                self.limit
            ),
            _ if self.metric == Metric::StackStatic => format!(
                "stack-static unbounded (see `mcubench stack`): cannot show it is within {} B; annotate the unresolved sites",
                self.limit
            ),
            _ if self.metric == Metric::Heap => format!(
                "heap unknown (the firmware reported no heap peak: it never allocated, or does not measure \
                 its heap; see docs/src/guide/heap.md): cannot show it is within {} B",
                self.limit
            ),
            _ => format!("{} unknown (not measured): cannot show it is within {} B", self.metric.label(), self.limit),
        }
    }
}

/// The measured values of one board × profile.
#[derive(Debug, Clone, Copy, Default)]
pub struct Measured {
    pub flash: Option<u64>,
    pub ram: Option<u64>,
    pub stack: Option<u64>,
    /// Static bound of the reset path; `None` when unbounded.
    pub stack_static: Option<u64>,
    /// Whole-run heap peak; `None` when the firmware reported none.
    pub heap: Option<u64>,
}

/// Unmeasured is `unknown`, never a pass.
fn status(limit: u64, actual: Option<u64>) -> BudgetStatus {
    match actual {
        None => BudgetStatus::Unknown,
        Some(a) if a <= limit => BudgetStatus::Ok,
        Some(_) => BudgetStatus::Exceeded,
    }
}

pub fn check(budgets: &Budgets, measured: Measured) -> Vec<BudgetCheck> {
    [
        (Metric::Flash, budgets.flash, measured.flash),
        (Metric::Ram, budgets.ram, measured.ram),
        (Metric::Stack, budgets.stack, measured.stack),
        (Metric::StackStatic, budgets.stack_static, measured.stack_static),
        (Metric::Heap, budgets.heap, measured.heap),
    ]
    .into_iter()
    .filter_map(|(metric, limit, actual)| {
        let limit = limit?.0;
        Some(BudgetCheck { metric, subject: None, limit, actual, status: status(limit, actual), hint: None })
    })
    .collect()
}

/// What a region budget's key can measure: `(cycles, instructions)` of a function region's most
/// expensive call, of a KAT operation or of a pair of DWT cycle-counter accesses' longest interval,
/// each `None` when not measured.
pub type Counts = (Option<u64>, Option<u64>);

/// What the count budgets measure beyond regions and KATs.
#[derive(Debug, Clone, Copy, Default)]
pub struct Totals<'a> {
    pub cycles: Option<u64>,
    pub instructions: Option<u64>,
    pub metrics: Option<&'a std::collections::BTreeMap<String, crate::report::MetricValue>>,
    /// The clock time budgets convert cycles at (the cell's, else `table.clock`), Hz.
    pub clock_hz: Option<u64>,
}

/// Microseconds of `cycles` at `clock_hz`, rounded up (a budget is never passed by rounding).
pub fn micros(cycles: u64, clock_hz: u64) -> u64 {
    (u128::from(cycles) * 1_000_000).div_ceil(u128::from(clock_hz.max(1))) as u64
}

/// Checks the cycle and instruction limits; `lookup(name)` finds the counts of the function
/// region or KAT of that name (`None`: no such region or KAT); whole-run totals and recorded
/// metrics come from `totals`.
pub fn check_regions(
    budgets: &RegionBudgets,
    lookup: &dyn Fn(&str) -> Option<Counts>,
    totals: Totals<'_>,
) -> Vec<BudgetCheck> {
    let mut out = Vec::new();
    for (metric, limit, actual) in [
        (Metric::CyclesTotal, budgets.cycles_total, totals.cycles),
        (Metric::InstructionsTotal, budgets.instructions_total, totals.instructions),
    ] {
        if let Some(limit) = limit {
            out.push(BudgetCheck { metric, subject: None, limit, actual, status: status(limit, actual), hint: None });
        }
    }
    for (name, &limit) in &budgets.metrics {
        let actual = totals.metrics.and_then(|m| m.get(name)).map(|v| v.as_f64().max(0.0).ceil() as u64);
        out.push(BudgetCheck {
            metric: Metric::Recorded,
            subject: Some(name.clone()),
            limit,
            actual,
            status: status(limit, actual),
            hint: None,
        });
    }
    for (metric, limits) in [(Metric::Cycles, &budgets.cycles), (Metric::Instructions, &budgets.instructions)] {
        for (name, &limit) in limits {
            let actual = lookup(name).and_then(|(c, i)| if metric == Metric::Cycles { c } else { i });
            out.push(BudgetCheck {
                metric,
                subject: Some(name.clone()),
                limit,
                actual,
                status: status(limit, actual),
                hint: None,
            });
        }
    }
    for (name, limit) in &budgets.time {
        let actual = lookup(name).and_then(|(c, _)| c).zip(totals.clock_hz).map(|(c, hz)| micros(c, hz));
        out.push(BudgetCheck {
            metric: Metric::Time,
            subject: Some(name.clone()),
            limit: limit.0,
            actual,
            status: status(limit.0, actual),
            hint: None,
        });
    }
    out
}

/// What a cycles-per-byte budget measures: `(cycles, bytes)` of a KAT or function region, each
/// `None` when not measured.
pub type PerByte = (Option<u64>, Option<u64>);

/// Checks the cycles-per-byte limits (`budgets.cpb`); `lookup(name)` finds the KAT or function
/// region of that name. Exact in integers: the limit holds when cycles <= limit x bytes, and the
/// reported actual is cycles / bytes rounded up.
pub fn check_cpb(
    limits: &indexmap::IndexMap<String, u64>,
    lookup: &dyn Fn(&str) -> Option<PerByte>,
) -> Vec<BudgetCheck> {
    limits
        .iter()
        .map(|(name, &limit)| {
            let measured = lookup(name).and_then(|(c, b)| c.zip(b.filter(|&b| b > 0)));
            let status = match measured {
                None => BudgetStatus::Unknown,
                Some((c, b)) if u128::from(c) <= u128::from(limit) * u128::from(b) => BudgetStatus::Ok,
                Some(_) => BudgetStatus::Exceeded,
            };
            BudgetCheck {
                metric: Metric::Cpb,
                subject: Some(name.clone()),
                limit,
                actual: measured.map(|(c, b)| c.div_ceil(b)),
                status,
                hint: None,
            }
        })
        .collect()
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::config::scenario::Bytes;

    #[test]
    fn limits_are_inclusive_and_unmeasured_is_unknown() {
        let budgets = Budgets {
            flash: Some(Bytes(100)),
            ram: Some(Bytes(10)),
            stack: Some(Bytes(50)),
            stack_static: None,
            heap: None,
        };
        let checks =
            check(&budgets, Measured { flash: Some(100), ram: Some(11), stack: None, stack_static: None, heap: None });
        let statuses: Vec<_> = checks.iter().map(|c| (c.metric, c.status)).collect();
        assert_eq!(
            statuses,
            [
                (Metric::Flash, BudgetStatus::Ok),
                (Metric::Ram, BudgetStatus::Exceeded),
                (Metric::Stack, BudgetStatus::Unknown)
            ]
        );
        assert_eq!(checks[1].describe(), "ram 11 B exceeds the budget of 10 B by 1 B");
    }

    #[test]
    fn heap_budgets_check_the_reported_peak_and_unreported_is_unknown() {
        let budgets = Budgets { heap: Some(Bytes(4096)), ..Budgets::default() };
        let at = |heap| check(&budgets, Measured { heap, ..Measured::default() });
        assert_eq!(at(Some(4096))[0].status, BudgetStatus::Ok);
        let over = &at(Some(11024))[0];
        assert_eq!((over.metric, over.status), (Metric::Heap, BudgetStatus::Exceeded));
        assert_eq!(over.describe(), "heap 11024 B exceeds the budget of 4096 B by 6928 B");
        let unknown = &at(None)[0];
        assert_eq!(unknown.status, BudgetStatus::Unknown);
        assert!(
            unknown.describe().starts_with("heap unknown (the firmware reported no heap peak"),
            "{}",
            unknown.describe()
        );
    }

    #[test]
    fn region_budgets_bound_regions_and_kats() {
        let mut b = RegionBudgets::default();
        b.cycles.insert("crc32".into(), 5000);
        b.cycles.insert("kat/a".into(), 100);
        b.cycles.insert("nowhere".into(), 1);
        b.instructions.insert("crc32".into(), 10);
        let lookup = |name: &str| match name {
            "crc32" => Some((Some(5000), Some(11))),
            "kat/a" => Some((None, Some(50))),
            _ => None,
        };
        let checks = check_regions(&b, &lookup, Totals::default());
        let got: Vec<_> = checks.iter().map(|c| (c.name(), c.status)).collect();
        assert_eq!(
            got,
            [
                ("cycles crc32".to_string(), BudgetStatus::Ok),
                ("cycles kat/a".to_string(), BudgetStatus::Unknown),
                ("cycles nowhere".to_string(), BudgetStatus::Unknown),
                ("instructions crc32".to_string(), BudgetStatus::Exceeded),
            ]
        );
        assert_eq!(checks[0].describe(), "cycles crc32 5000 cycles within 5000 cycles");
        assert_eq!(
            checks[3].describe(),
            "instructions crc32 11 instructions exceeds the budget of 10 instructions by 1 instructions"
        );
        assert!(checks[2].describe().contains("cannot show it is within 1 cycles"), "{}", checks[2].describe());
    }

    #[test]
    fn cpb_budgets_are_exact_in_integers_and_unmeasured_is_unknown() {
        let mut limits = indexmap::IndexMap::new();
        for (k, v) in [("sha256/1KiB", 20u64), ("aes/1KiB", 20), ("ed25519/sign", 5), ("nowhere", 1)] {
            limits.insert(k.to_string(), v);
        }
        let lookup = |name: &str| match name {
            "sha256/1KiB" => Some((Some(20 * 1024), Some(1024))),
            "aes/1KiB" => Some((Some(20 * 1024 + 1), Some(1024))),
            "ed25519/sign" => Some((Some(100), None)),
            _ => None,
        };
        let got: Vec<_> = check_cpb(&limits, &lookup).iter().map(|c| (c.name(), c.actual, c.status)).collect();
        assert_eq!(
            got,
            [
                ("cpb sha256/1KiB".to_string(), Some(20), BudgetStatus::Ok),
                // One cycle over: 21 rounded up, and exceeded (never passed by rounding).
                ("cpb aes/1KiB".to_string(), Some(21), BudgetStatus::Exceeded),
                ("cpb ed25519/sign".to_string(), None, BudgetStatus::Unknown),
                ("cpb nowhere".to_string(), None, BudgetStatus::Unknown),
            ]
        );
        let c = check_cpb(&limits, &lookup);
        assert_eq!(
            c[1].describe(),
            "cpb aes/1KiB 21 cycles/byte exceeds the budget of 20 cycles/byte by 1 cycles/byte"
        );
        assert!(c[2].describe().contains("reported `bytes=`"), "{}", c[2].describe());
    }

    #[test]
    fn no_budget_no_check() {
        assert!(check(&Budgets::default(), Measured::default()).is_empty());
    }

    #[test]
    fn totals_and_recorded_metrics_are_budgeted_and_unmeasured_is_unknown() {
        use crate::report::MetricValue;
        let mut b =
            RegionBudgets { cycles_total: Some(1000), instructions_total: Some(10), ..RegionBudgets::default() };
        b.metrics.insert("sig_bytes".into(), 2420);
        b.metrics.insert("ratio".into(), 1);
        b.metrics.insert("missing".into(), 5);
        let mut metrics = std::collections::BTreeMap::new();
        metrics.insert("sig_bytes".to_string(), MetricValue::Int(2420));
        metrics.insert("ratio".to_string(), MetricValue::Float(1.25));
        let totals = Totals { cycles: Some(999), instructions: None, metrics: Some(&metrics), clock_hz: None };
        let checks = check_regions(&b, &|_| None, totals);
        let got: Vec<_> = checks.iter().map(|c| (c.name(), c.actual, c.status)).collect();
        assert_eq!(
            got,
            [
                ("cycles-total".to_string(), Some(999), BudgetStatus::Ok),
                ("instructions-total".to_string(), None, BudgetStatus::Unknown),
                ("metric sig_bytes".to_string(), Some(2420), BudgetStatus::Ok),
                ("metric ratio".to_string(), Some(2), BudgetStatus::Exceeded),
                ("metric missing".to_string(), None, BudgetStatus::Unknown),
            ]
        );
        assert!(checks[4].describe().contains("no console line matched"), "{}", checks[4].describe());
    }

    #[test]
    fn time_budgets_are_cycles_at_the_table_clock_rounded_up() {
        use crate::config::units::Micros;
        let mut b = RegionBudgets::default();
        b.time.insert("ed25519/boot".into(), Micros(1000));
        b.time.insert("ml_dsa_44/boot".into(), Micros(1000));
        b.time.insert("nowhere".into(), Micros(1));
        let lookup = |name: &str| match name {
            // 320 000 cycles at 320 MHz is exactly 1000 us; one more cycle is 1001 us.
            "ed25519/boot" => Some((Some(320_000), Some(1))),
            "ml_dsa_44/boot" => Some((Some(320_001), Some(1))),
            _ => None,
        };
        let totals = Totals { clock_hz: Some(320_000_000), ..Totals::default() };
        let got: Vec<_> = check_regions(&b, &lookup, totals).iter().map(|c| (c.name(), c.actual, c.status)).collect();
        assert_eq!(
            got,
            [
                ("time ed25519/boot".to_string(), Some(1000), BudgetStatus::Ok),
                ("time ml_dsa_44/boot".to_string(), Some(1001), BudgetStatus::Exceeded),
                ("time nowhere".to_string(), None, BudgetStatus::Unknown),
            ]
        );
    }
}
