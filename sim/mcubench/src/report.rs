//! The results of a scenario run and how they are shown: a terminal table and JSON.
//! Everything here is a pure function of the run's records and the ELFs, so the same ELF and
//! scenario give byte-identical reports: no host time, no absolute paths.

use std::fmt::Write as _;

use mcubench_elf::MemoryReport;
use serde::Serialize;

use crate::board::Core;
use crate::gate::{BudgetCheck, BudgetStatus};
use crate::protocol::KatResult;
use crate::verdict::{Outcome, Verdict};

pub const SCHEMA: &str = "mcubench-run/1";

#[derive(Debug, Clone, Serialize)]
pub struct KatReport {
    pub id: String,
    pub alg: String,
    pub op: String,
    pub result: KatResult,
    /// Instructions executed by the operation alone: SysTick ticks × instructions per tick.
    pub instructions: u64,
    pub ticks: u64,
    /// Stack the operation used below its caller's SP (painted, a lower bound of the excursion).
    pub stack: u32,
}

#[derive(Debug, Clone, Serialize)]
pub struct CellReport {
    pub board: String,
    pub core: Core,
    pub profile: String,
    /// File name of the ELF that ran.
    pub elf: Option<String>,
    pub verdict: Verdict,
    /// Resolution of every instruction count in this cell (one SysTick tick).
    pub instructions_per_tick: f64,
    pub kats: Vec<KatReport>,
    /// Whole-run stack high-water mark from the painted stack, bytes.
    pub stack_high_water: Option<u32>,
    pub memory: Option<MemoryReport>,
    pub budgets: Vec<BudgetCheck>,
}

impl CellReport {
    pub fn flash_bytes(&self) -> Option<u64> {
        self.memory.as_ref().map(|m| m.flash.used)
    }

    pub fn ram_bytes(&self) -> Option<u64> {
        self.memory.as_ref().map(|m| m.ram.used)
    }

    pub fn budgets_hold(&self) -> bool {
        self.budgets.iter().all(|b| b.status == BudgetStatus::Ok)
    }

    pub fn kats_passed(&self) -> usize {
        self.kats.iter().filter(|k| k.result == KatResult::Pass).count()
    }
}

#[derive(Debug, Clone, Serialize)]
pub struct RunReport {
    pub schema: &'static str,
    pub tool_version: &'static str,
    pub scenario: String,
    pub cells: Vec<CellReport>,
}

/// How a whole run ends, for the process exit code.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum Status {
    /// Every cell passed and every budget holds.
    Pass,
    /// Some run did not pass.
    RunFailed,
    /// Every run passed, but a budget was crossed (or could not be checked).
    BudgetViolated,
}

impl RunReport {
    pub fn status(&self) -> Status {
        if self.cells.iter().any(|c| c.verdict.outcome != Outcome::Pass) {
            Status::RunFailed
        } else if self.cells.iter().any(|c| !c.budgets_hold()) {
            Status::BudgetViolated
        } else {
            Status::Pass
        }
    }

    pub fn to_json(&self) -> String {
        let mut s = serde_json::to_string_pretty(self).expect("report types serialize");
        s.push('\n');
        s
    }

    /// The terminal table: one row per board × profile, then instructions per KAT operation.
    pub fn to_table(&self) -> String {
        let mut rows = vec![
            ["board", "core", "profile", "verdict", "KATs", "flash B", "RAM B", "stack B", "budget"]
                .map(String::from)
                .to_vec(),
        ];
        for c in &self.cells {
            let opt = |v: Option<u64>| v.map_or("-".to_string(), |v| v.to_string());
            let budget = if c.budgets.is_empty() {
                "-".to_string()
            } else if c.budgets_hold() {
                "ok".to_string()
            } else {
                let over: Vec<_> = c
                    .budgets
                    .iter()
                    .filter(|b| b.status != BudgetStatus::Ok)
                    .map(|b| {
                        format!(
                            "{} {}",
                            b.metric.label(),
                            if b.status == BudgetStatus::Exceeded { "over" } else { "unknown" }
                        )
                    })
                    .collect();
                over.join(", ")
            };
            rows.push(vec![
                c.board.clone(),
                c.core.label().to_string(),
                c.profile.clone(),
                c.verdict.outcome.label().to_string(),
                format!("{}/{}", c.kats_passed(), c.kats.len()),
                opt(c.flash_bytes()),
                opt(c.ram_bytes()),
                opt(c.stack_high_water.map(u64::from)),
                budget,
            ]);
        }
        let mut out = render(&rows, 4);

        // Anything that is not a pass gets its message under the table.
        for c in &self.cells {
            if c.verdict.outcome != Outcome::Pass {
                let _ =
                    writeln!(out, "{} / {}: {}: {}", c.board, c.profile, c.verdict.outcome.label(), c.verdict.message);
            }
            for b in c.budgets.iter().filter(|b| b.status != BudgetStatus::Ok) {
                let _ = writeln!(out, "{} / {}: budget: {}", c.board, c.profile, b.describe());
            }
        }

        // Instructions per KAT: rows are KAT ids in first-seen order, columns are cells.
        let mut ids: Vec<&str> = Vec::new();
        for c in &self.cells {
            for k in &c.kats {
                if !ids.contains(&k.id.as_str()) {
                    ids.push(&k.id);
                }
            }
        }
        if !ids.is_empty() {
            let _ = writeln!(
                out,
                "\ninstructions per KAT operation (from SysTick under -icount shift=0; resolution one tick: {})",
                self.tick_resolutions()
            );
            let mut header = vec!["KAT".to_string()];
            header.extend(self.cells.iter().map(|c| format!("{}/{}", c.board.trim_start_matches("mps2-"), c.profile)));
            let mut rows = vec![header];
            for id in ids {
                let mut row = vec![id.to_string()];
                for c in &self.cells {
                    row.push(c.kats.iter().find(|k| k.id == id).map_or("-".into(), |k| k.instructions.to_string()));
                }
                rows.push(row);
            }
            out.push_str(&render(&rows, 1));
        }
        out
    }

    fn tick_resolutions(&self) -> String {
        let mut seen: Vec<String> = Vec::new();
        for c in &self.cells {
            let s = format!("{} = {} insns", c.board, c.instructions_per_tick);
            if !seen.contains(&s) {
                seen.push(s);
            }
        }
        seen.join(", ")
    }
}

/// Left-aligns the first `text_columns` columns and right-aligns the rest (numbers).
fn render(rows: &[Vec<String>], text_columns: usize) -> String {
    let columns = rows.iter().map(Vec::len).max().unwrap_or(0);
    let widths: Vec<usize> = (0..columns)
        .map(|i| rows.iter().filter_map(|r| r.get(i)).map(|s| s.chars().count()).max().unwrap_or(0))
        .collect();
    let mut out = String::new();
    for (n, row) in rows.iter().enumerate() {
        let cells: Vec<String> = row
            .iter()
            .enumerate()
            .map(|(i, s)| {
                if i < text_columns || n == 0 {
                    format!("{s:<w$}", w = widths[i])
                } else {
                    format!("{s:>w$}", w = widths[i])
                }
            })
            .collect();
        out.push_str(cells.join("  ").trim_end());
        out.push('\n');
    }
    out
}

/// The `mcubench size` table: regions, sections, top symbols.
pub fn memory_table(elf: &str, m: &MemoryReport) -> String {
    let mut out = format!("{elf}\n\n");
    let mut rows = vec![
        ["region", "used B", "capacity B", "use %", "code", "rodata", "data", "bss", "uninit", "reserved"]
            .map(String::from)
            .to_vec(),
    ];
    for r in [&m.flash, &m.ram] {
        let b = &r.breakdown;
        rows.push(vec![
            r.name.clone(),
            r.used.to_string(),
            r.capacity.map_or("-".into(), |c| c.to_string()),
            r.percent_used.map_or("-".into(), |p| format!("{p:.2}")),
            b.code.to_string(),
            b.rodata.to_string(),
            b.data.to_string(),
            b.bss.to_string(),
            b.uninit.to_string(),
            b.reservation.to_string(),
        ]);
    }
    out.push_str(&render(&rows, 1));
    if let Some(s) = &m.stack_available {
        let _ = writeln!(out, "stack: {} B available (0x{:08x}..0x{:08x})", s.available, s.low, s.high);
    }

    let mut rows = vec![["section", "kind", "vma", "lma", "size B", "region"].map(String::from).to_vec()];
    for s in &m.sections {
        rows.push(vec![
            s.name.clone(),
            format!("{:?}", s.kind).to_lowercase(),
            format!("0x{:08x}", s.vma),
            format!("0x{:08x}", s.lma),
            s.size.to_string(),
            s.region.clone().unwrap_or_else(|| "-".into()),
        ]);
    }
    out.push('\n');
    out.push_str(&render(&rows, 4));

    let mut rows = vec![["symbol", "section", "size B"].map(String::from).to_vec()];
    for s in &m.top_symbols {
        rows.push(vec![s.name.clone(), s.section.clone().unwrap_or_else(|| "-".into()), s.size.to_string()]);
    }
    out.push('\n');
    out.push_str(&render(&rows, 2));
    for w in &m.warnings {
        let _ = writeln!(out, "warning: {w}");
    }
    out
}
