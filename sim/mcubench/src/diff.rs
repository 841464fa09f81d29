//! `mcubench diff BASE HEAD`: what a change did to flash, RAM, stack, instructions and cycles,
//! per board × profile, against a baseline report (usually main's, kept as a CI artifact).
//!
//! Deltas are sorted by impact (relative change, then absolute). Regression limits come from the
//! scenario's `regressions` (relative `%` or absolute bytes/instructions, per metric and per
//! profile); HEAD's own budgets and verdicts are carried over. The outcome tells apart a failed
//! run, a budget violation and a regression, so CI can treat them differently.

use std::collections::BTreeMap;
use std::path::{Path, PathBuf};

use serde::Serialize;

use crate::config::scenario::{Limit, Regressions};
use crate::gate::BudgetStatus;
use crate::judge::verdict::Outcome;
use crate::report::MetricValue;
use crate::report::{CellReport, RunReport};

#[derive(Debug, thiserror::Error)]
pub enum DiffError {
    #[error("{path}: cannot read: {source}")]
    Read { path: PathBuf, source: std::io::Error },
    #[error("{path}: not an mcubench run report: {message}")]
    Parse { path: PathBuf, message: String },
    #[error("{path}: no *.json reports in this directory")]
    Empty { path: PathBuf },
    #[error("{path}: board {board} / profile {profile} of scenario {scenario} appears twice")]
    Duplicate { path: PathBuf, scenario: String, board: String, profile: String },
}

/// Reads a report file, or every `*.json` report in a directory (e.g. one per shard).
pub fn load_reports(path: &Path) -> Result<Vec<RunReport>, DiffError> {
    let files: Vec<PathBuf> = if path.is_dir() {
        let mut files: Vec<PathBuf> = std::fs::read_dir(path)
            .map_err(|source| DiffError::Read { path: path.to_owned(), source })?
            .filter_map(|e| e.ok().map(|e| e.path()))
            .filter(|p| p.extension().is_some_and(|e| e == "json"))
            .collect();
        files.sort();
        if files.is_empty() {
            return Err(DiffError::Empty { path: path.to_owned() });
        }
        files
    } else {
        vec![path.to_owned()]
    };
    files
        .iter()
        .map(|file| {
            let text =
                std::fs::read_to_string(file).map_err(|source| DiffError::Read { path: file.clone(), source })?;
            RunReport::from_json(&text).map_err(|message| DiffError::Parse { path: file.clone(), message })
        })
        .collect()
}

type Key = (String, String, String);

/// A top-symbol list shorter than this held every symbol of its kind, so absence means absence.
const TOP_SYMBOLS_FLOOR_MIN: usize = crate::pipeline::TOP_SYMBOLS;

fn index<'a>(path: &Path, reports: &'a [RunReport]) -> Result<BTreeMap<Key, &'a CellReport>, DiffError> {
    let mut cells = BTreeMap::new();
    for r in reports {
        for c in &r.cells {
            let key = (r.scenario.clone(), c.board.clone(), c.profile.clone());
            if cells.insert(key.clone(), c).is_some() {
                return Err(DiffError::Duplicate {
                    path: path.to_owned(),
                    scenario: key.0,
                    board: key.1,
                    profile: key.2,
                });
            }
        }
    }
    Ok(cells)
}

#[derive(Debug, Clone, Serialize, PartialEq)]
pub struct Delta {
    pub scenario: String,
    pub board: String,
    pub profile: String,
    /// `flash`, `ram`, `stack`, `heap`, `instructions total`, `cycles total`, `metric <name>`,
    /// `instructions <kat id or region>`, `cycles <kat id or region>`, `heap <kat id>` or
    /// `cycle counter <from>..<to>`.
    pub metric: String,
    pub base: u64,
    pub head: u64,
    pub change: i64,
    /// Percent of base; `None` when base is 0.
    pub percent: Option<f64>,
    /// The regression limit crossed, if one was.
    pub regression: Option<String>,
}

#[derive(Debug, Clone, Serialize, PartialEq, Eq)]
pub struct SymbolMove {
    pub board: String,
    pub profile: String,
    pub symbol: String,
    pub base: Option<u64>,
    pub head: Option<u64>,
}

#[derive(Debug, Clone, Copy, PartialEq, Eq, Serialize)]
#[serde(rename_all = "kebab-case")]
pub enum DiffStatus {
    Pass,
    /// A HEAD run did not pass.
    RunFailed,
    /// A HEAD budget was crossed.
    BudgetViolated,
    /// A metric grew past its regression limit.
    Regression,
}

#[derive(Debug, Clone, Serialize)]
pub struct Diff {
    pub status: DiffStatus,
    /// Every metric that changed, biggest relative change first.
    pub deltas: Vec<Delta>,
    /// For the cells whose flash or RAM moved most: the symbols that grew, shrank, came or went.
    pub symbols: Vec<SymbolMove>,
    /// Cells only in HEAD or only in BASE (`scenario/board/profile`).
    pub added: Vec<String>,
    pub removed: Vec<String>,
    /// HEAD runs that did not pass and HEAD budgets that do not hold, as messages.
    pub problems: Vec<String>,
    /// Number of metrics compared, changed or not.
    pub compared: usize,
}

fn percent(base: u64, head: u64) -> Option<f64> {
    (base != 0).then(|| ((head as f64 - base as f64) * 100.0 / base as f64 * 100.0).round() / 100.0)
}

/// Which limit, if any, `base → head` crosses. Only growth regresses.
fn crossed(limit: Option<Limit>, base: u64, head: u64) -> Option<String> {
    let limit = limit?;
    if head <= base {
        return None;
    }
    let grew = head - base;
    match limit {
        Limit::Percent(p) => {
            let pct = percent(base, head).unwrap_or(f64::INFINITY);
            (pct > p).then(|| format!("+{pct}% > {p}%"))
        }
        Limit::Absolute(n) => (grew > n).then(|| format!("+{grew} > {n}")),
    }
}

pub fn diff(
    base_path: &Path,
    base: &[RunReport],
    head_path: &Path,
    head: &[RunReport],
    limits: &dyn Fn(&str) -> Regressions,
) -> Result<Diff, DiffError> {
    let base_cells = index(base_path, base)?;
    let head_cells = index(head_path, head)?;
    let mut deltas = Vec::new();
    let mut problems = Vec::new();
    let mut compared = 0;
    let name = |k: &Key| format!("{}/{}/{}", k.0, k.1, k.2);

    for (key, h) in &head_cells {
        if h.verdict.outcome != Outcome::Pass {
            problems.push(format!("{}: {}: {}", name(key), h.verdict.outcome.label(), h.verdict.message));
        }
        for b in h.budgets.iter().filter(|b| b.status != BudgetStatus::Ok) {
            problems.push(format!("{}: budget: {}", name(key), b.describe()));
        }
        let Some(b) = base_cells.get(key) else { continue };
        let limits = limits(&key.2);
        let mut push = |metric: String, base: Option<u64>, head: Option<u64>, limit: Option<Limit>| {
            let (Some(base), Some(head)) = (base, head) else { return };
            compared += 1;
            if base == head {
                return;
            }
            deltas.push(Delta {
                scenario: key.0.clone(),
                board: key.1.clone(),
                profile: key.2.clone(),
                metric,
                base,
                head,
                change: head as i64 - base as i64,
                percent: percent(base, head),
                regression: crossed(limit, base, head),
            });
        };
        push("flash".into(), b.flash_bytes(), h.flash_bytes(), limits.flash);
        push("ram".into(), b.ram_bytes(), h.ram_bytes(), limits.ram);
        push("stack".into(), b.stack_high_water.map(u64::from), h.stack_high_water.map(u64::from), limits.stack);
        // Only when both runs reported their heap.
        push("heap".into(), b.heap_peak.map(u64::from), h.heap_peak.map(u64::from), limits.heap);
        push("instructions total".into(), b.instructions_total, h.instructions_total, limits.total);
        push("cycles total".into(), b.cycles_total, h.cycles_total, limits.total);
        // Recorded metrics that are whole non-negative numbers in both runs.
        for (name, hv) in &h.metrics {
            let whole = |v: &MetricValue| match v {
                MetricValue::Int(i) => u64::try_from(*i).ok(),
                MetricValue::Float(_) => None,
            };
            push(format!("metric {name}"), b.metrics.get(name).and_then(whole), whole(hv), limits.metrics);
        }
        // Function regions by name, at their most expensive call (what their budgets bound).
        for hr in h.regions.iter().filter(|r| r.calls > 0) {
            if let Some(br) = b.regions.iter().find(|r| r.name == hr.name && r.calls > 0) {
                let max = |r: &crate::report::RegionReport| r.cycles.map(|c| c.max);
                push(format!("cycles {}", hr.name), max(br), max(hr), limits.cycles);
                push(
                    format!("instructions {}", hr.name),
                    Some(br.instructions.max),
                    Some(hr.instructions.max),
                    limits.instructions,
                );
            }
        }
        // The firmware's own DWT cycle-counter spans, by the accesses' names (which a rebuild that
        // moves the code keeps), at their longest interval.
        let cycle_model =
            |c: &CellReport, i: &crate::report::CounterInterval| c.cycle_model.as_ref().map(|_| i.cycles.max);
        for hi in h.cycle_counter.iter().filter(|i| !i.from_name.is_empty()) {
            let name = hi.name();
            if let Some(bi) = b.cycle_counter.iter().find(|i| i.name() == name) {
                push(format!("cycle counter {name}"), cycle_model(b, bi), cycle_model(h, hi), limits.cycle_counter);
            }
        }
        for hk in h.kats.iter().filter(|k| !h.regions.iter().any(|r| r.name == k.id)) {
            if let Some(bk) = b.kats.iter().find(|k| k.id == hk.id) {
                push(
                    format!("instructions {}", hk.id),
                    Some(bk.instructions),
                    Some(hk.instructions),
                    limits.instructions,
                );
                push(format!("cycles {}", hk.id), bk.cycles, hk.cycles, limits.cycles);
                push(format!("heap {}", hk.id), bk.heap.map(u64::from), hk.heap.map(u64::from), limits.heap);
            }
        }
    }
    // Regressions first, then by impact.
    deltas.sort_by(|a, b| {
        let impact = |d: &Delta| d.percent.map_or(f64::INFINITY, f64::abs);
        (a.regression.is_none())
            .cmp(&b.regression.is_none())
            .then(impact(b).total_cmp(&impact(a)))
            .then(b.change.unsigned_abs().cmp(&a.change.unsigned_abs()))
            .then_with(|| {
                (&a.scenario, &a.board, &a.profile, &a.metric).cmp(&(&b.scenario, &b.board, &b.profile, &b.metric))
            })
    });

    // Symbol detail for the (up to) three cells whose flash or RAM moved most.
    let mut movers: Vec<&Delta> = deltas.iter().filter(|d| d.metric == "flash" || d.metric == "ram").collect();
    movers.sort_by_key(|d| std::cmp::Reverse(d.change.unsigned_abs()));
    let mut symbols = Vec::new();
    let mut done = Vec::new();
    for d in movers {
        let key = (d.scenario.clone(), d.board.clone(), d.profile.clone());
        if done.contains(&key) || done.len() == 3 {
            continue;
        }
        done.push(key.clone());
        let (Some(bm), Some(hm)) = (base_cells[&key].memory.as_ref(), head_cells[&key].memory.as_ref()) else {
            continue;
        };
        let sizes = |m: &mcubench_elf::MemoryReport| {
            m.top_symbols.iter().map(|s| (s.name.clone(), s.size)).collect::<BTreeMap<_, _>>()
        };
        let (bs, hs) = (sizes(bm), sizes(hm));
        // Reports keep only the largest symbols: a symbol missing from one list is new (or gone)
        // only if it is larger than the smallest symbol that list kept; otherwise it may simply
        // have fallen out of the list, and nothing is said about it.
        let floor = |m: &mcubench_elf::MemoryReport, sizes: &BTreeMap<String, u64>| {
            if m.top_symbols.len() < TOP_SYMBOLS_FLOOR_MIN { 0 } else { sizes.values().copied().min().unwrap_or(0) }
        };
        let (base_floor, head_floor) = (floor(bm, &bs), floor(hm, &hs));
        let mut moves: Vec<SymbolMove> = bs
            .keys()
            .chain(hs.keys())
            .collect::<std::collections::BTreeSet<_>>()
            .into_iter()
            .filter(|n| match (bs.get(*n), hs.get(*n)) {
                (Some(b), Some(h)) => b != h,
                (None, Some(h)) => *h > base_floor,
                (Some(b), None) => *b > head_floor,
                (None, None) => false,
            })
            .map(|n| SymbolMove {
                board: key.1.clone(),
                profile: key.2.clone(),
                symbol: n.clone(),
                base: bs.get(n).copied(),
                head: hs.get(n).copied(),
            })
            .collect();
        moves.sort_by_key(|m| {
            std::cmp::Reverse((m.head.unwrap_or(0) as i64 - m.base.unwrap_or(0) as i64).unsigned_abs())
        });
        moves.truncate(5);
        symbols.extend(moves);
    }

    let added = head_cells.keys().filter(|k| !base_cells.contains_key(*k)).map(name).collect();
    let removed = base_cells.keys().filter(|k| !head_cells.contains_key(*k)).map(name).collect();
    let status = if head_cells.values().any(|c| c.verdict.outcome != Outcome::Pass) {
        DiffStatus::RunFailed
    } else if head_cells.values().any(|c| !c.budgets_hold()) {
        DiffStatus::BudgetViolated
    } else if deltas.iter().any(|d| d.regression.is_some()) {
        DiffStatus::Regression
    } else {
        DiffStatus::Pass
    };
    Ok(Diff { status, deltas, symbols, added, removed, problems, compared })
}

impl Diff {
    pub fn to_table(&self) -> String {
        use std::fmt::Write as _;
        let mut out = String::new();
        let _ = writeln!(
            out,
            "{}: {} metric(s) compared, {} changed, {} regression(s)",
            match self.status {
                DiffStatus::Pass => "pass",
                DiffStatus::RunFailed => "run failed",
                DiffStatus::BudgetViolated => "budget violated",
                DiffStatus::Regression => "regression",
            },
            self.compared,
            self.deltas.len(),
            self.deltas.iter().filter(|d| d.regression.is_some()).count()
        );
        for p in &self.problems {
            let _ = writeln!(out, "  {p}");
        }
        if !self.deltas.is_empty() {
            let mut rows =
                vec![["board", "profile", "metric", "base", "head", "change", "%", "limit"].map(String::from).to_vec()];
            for d in &self.deltas {
                rows.push(vec![
                    d.board.clone(),
                    d.profile.clone(),
                    d.metric.clone(),
                    d.base.to_string(),
                    d.head.to_string(),
                    format!("{:+}", d.change),
                    d.percent.map_or("-".into(), |p| format!("{p:+.2}")),
                    d.regression.clone().unwrap_or_default(),
                ]);
            }
            out.push('\n');
            out.push_str(&crate::report::render(&rows, 3));
        }
        if !self.symbols.is_empty() {
            let _ = writeln!(out, "\nsymbols that moved (largest flash/RAM changes):");
            for s in &self.symbols {
                let size = |v: Option<u64>| v.map_or("-".into(), |v| v.to_string());
                let _ =
                    writeln!(out, "  {}/{}: {} {} -> {} B", s.board, s.profile, s.symbol, size(s.base), size(s.head));
            }
        }
        for a in &self.added {
            let _ = writeln!(out, "new cell (no baseline): {a}");
        }
        for r in &self.removed {
            let _ = writeln!(out, "cell gone from HEAD: {r}");
        }
        out
    }
}
