//! The results of a scenario run and how they are shown: a terminal table and JSON.
//! Everything here is a pure function of the run's records and the ELFs, so the same ELF and
//! scenario give byte-identical reports: no host time, no absolute paths.

use std::fmt::Write as _;

use mcubench_elf::MemoryReport;
use serde::{Deserialize, Serialize};

use crate::board::Core;
use crate::gate::{BudgetCheck, BudgetStatus};
use crate::protocol::KatResult;
use crate::verdict::{Outcome, Verdict};

pub const SCHEMA: &str = "mcubench-run/1";

/// Where an instruction count came from.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Serialize, Deserialize)]
#[serde(rename_all = "lowercase")]
pub enum CountSource {
    /// Exact: the QEMU plugin's count between the operation's region markers (the operation plus
    /// a constant marker overhead of a few instructions; see `firmware/PROTOCOL.md`).
    Plugin,
    /// SysTick ticks × instructions per tick under `-icount shift=0`: resolution one tick.
    Systick,
}

#[derive(Debug, Clone, Serialize, Deserialize)]
#[serde(deny_unknown_fields)]
pub struct KatReport {
    pub id: String,
    pub alg: String,
    pub op: String,
    pub result: KatResult,
    /// Instructions executed by the operation; exact or tick-derived, see `instructions_source`.
    pub instructions: u64,
    pub instructions_source: CountSource,
    /// Estimated cycles (the cell's `cycle_model` names the model); `None` without a model.
    pub cycles: Option<u64>,
    /// SysTick ticks around the operation, as the firmware reported them (kept beside exact counts).
    pub ticks: u64,
    /// Stack the operation used below its caller's SP (painted, a lower bound of the excursion).
    pub stack: u32,
    /// Stack probe (`stack-probe: true`): the lowest stack address a store wrote during the
    /// operation (between its region markers); absent without the probe or without a store.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub stack_lowest: Option<u32>,
    /// Heap bytes the operation took above what was in use when it started (`heap=` on its `kat`
    /// record); absent when the firmware does not report its heap.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub heap: Option<u32>,
}

/// Count, total, min and max over the calls of one function region.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Serialize, Deserialize)]
#[serde(deny_unknown_fields)]
pub struct PerCall {
    pub total: u64,
    pub min: u64,
    pub max: u64,
}

/// One function region (`regions:` in the scenario): every completed call of the named function,
/// measured inclusively from its first instruction to the return (semantics:
/// `sim/qemu-plugin/src/calls.rs`).
#[derive(Debug, Clone, PartialEq, Eq, Serialize, Deserialize)]
#[serde(deny_unknown_fields)]
pub struct RegionReport {
    /// The name as the scenario gives it.
    pub name: String,
    /// Completed calls.
    pub calls: u64,
    /// Calls still running when the firmware exited (not in the numbers).
    pub open: u64,
    pub instructions: PerCall,
    /// Estimated cycles (the cell's `cycle_model`); `None` without a model.
    pub cycles: Option<PerCall>,
    /// Stack probe: the lowest stack address written during a completed call.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub stack_lowest: Option<u32>,
}

/// The stack probe's whole-run result (`stack-probe: true`): store callbacks, not painting.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Serialize, Deserialize)]
#[serde(deny_unknown_fields)]
pub struct StackProbe {
    /// Lowest stack address written by a store (stores by the reset handler and the firmware's
    /// stack-painting helpers excluded); `None` when nothing was written.
    pub lowest: Option<u32>,
    /// Initial SP (vector table word 0) minus `lowest`.
    pub bytes: u32,
}

#[derive(Debug, Clone, Serialize, Deserialize)]
#[serde(deny_unknown_fields)]
pub struct CellReport {
    /// Position in the scenario's board × profile matrix (board-major); `merge` restores the
    /// scenario's order from it.
    pub index: usize,
    pub board: String,
    pub core: Core,
    pub profile: String,
    /// File name of the ELF that ran.
    pub elf: Option<String>,
    /// SHA-256 of the ELF file, hex: the same hash means the same firmware.
    pub elf_sha256: Option<String>,
    /// Compilers and linkers named in the ELF's `.comment` section (`rustc version …`,
    /// `GCC: (…) 12.2.1 …`, `Linker: LLD …`), in order.
    pub toolchain: Vec<String>,
    pub verdict: Verdict,
    /// Instructions per SysTick tick: the resolution of tick-derived instruction counts.
    pub instructions_per_tick: f64,
    /// The cycle model behind `cycles`, e.g. `cortex-m4 model: Cortex-M4 TRM table, P=1, 0 WS`.
    pub cycle_model: Option<String>,
    pub kats: Vec<KatReport>,
    /// Whole-run stack high-water mark from the painted stack, bytes.
    pub stack_high_water: Option<u32>,
    /// Whole-run heap peak, bytes (`heap=` on the `end` record); absent when the firmware does
    /// not report its heap.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub heap_peak: Option<u32>,
    /// Whole-run stack probe (`stack-probe: true` in the scenario).
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub stack_probe: Option<StackProbe>,
    /// Static worst-case stack bound from the call graph (`mcubench stack`).
    pub stack_static: Option<StaticStack>,
    pub memory: Option<MemoryReport>,
    pub budgets: Vec<BudgetCheck>,
    /// Function regions (`regions:` in the scenario), in the scenario's order.
    #[serde(default, skip_serializing_if = "Vec::is_empty")]
    pub regions: Vec<RegionReport>,
    /// Entries of the scenario's annotation file this cell's ELF has no function for (not in
    /// the report: the CLI refuses entries that no cell has; see `mcubench_stack::annotations`).
    #[serde(skip)]
    pub annotations_ignored: Vec<mcubench_stack::annotations::Ignored>,
}

/// The static stack bound of a cell's ELF: the reset path, and the main stack with every exception
/// handler nested on top of it.
#[derive(Debug, Clone, PartialEq, Eq, Serialize, Deserialize)]
#[serde(deny_unknown_fields)]
pub struct StaticStack {
    /// `exact`, `bounded` (assumptions listed by `mcubench stack`) or `unbounded`.
    pub kind: String,
    /// Bytes of the reset path; `None` when unbounded.
    pub reset: Option<u32>,
    /// Bytes of the main stack including nested handlers; `None` when unbounded.
    pub msp: Option<u32>,
    /// Why it is unbounded, or how many assumptions a bounded result rests on.
    pub note: String,
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

/// One run of a scenario: the document `--format json` prints and `mcubench diff`/`merge` read.
/// Documented field by field in `sim/mcubench/REPORT.md`; `schema` changes when a field changes
/// meaning or goes away.
#[derive(Debug, Clone, Serialize, Deserialize)]
#[serde(deny_unknown_fields)]
pub struct RunReport {
    pub schema: String,
    pub tool_version: String,
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

    /// Reads a report written by [`RunReport::to_json`]; the message says what is wrong.
    pub fn from_json(text: &str) -> Result<RunReport, String> {
        let value: serde_json::Value = serde_json::from_str(text).map_err(|e| e.to_string())?;
        match value.get("schema").and_then(|s| s.as_str()) {
            Some(SCHEMA) => {}
            Some(other) => {
                return Err(format!(
                    "schema `{other}`; this mcubench reads `{SCHEMA}` (use the mcubench that wrote it)"
                ));
            }
            None => return Err("no `schema` field: not an mcubench run report".into()),
        }
        serde_json::from_value(value).map_err(|e| e.to_string())
    }

    pub fn to_json(&self) -> String {
        let mut s = serde_json::to_string_pretty(self).expect("report types serialize");
        s.push('\n');
        s
    }

    /// The terminal table: one row per board × profile, then instructions per KAT operation.
    pub fn to_table(&self) -> String {
        self.to_table_colored(false)
    }

    /// [`RunReport::to_table`] with verdicts and budget problems in colour (for a terminal).
    pub fn to_table_colored(&self, color: bool) -> String {
        let mut rows = vec![
            ["board", "core", "profile", "verdict", "KATs", "flash B", "RAM B", "stack B", "static B", "budget"]
                .map(String::from)
                .to_vec(),
        ];
        // The stack probe's whole-run bytes beside the painted mark, when any cell probed.
        let probed = self.cells.iter().any(|c| c.stack_probe.is_some());
        if probed {
            rows[0].insert(8, "probe B".into());
        }
        // The heap peak beside the stack, when any cell reported one.
        let heaped = self.cells.iter().any(|c| c.heap_peak.is_some());
        if heaped {
            rows[0].insert(8, "heap B".into());
        }
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
                        format!("{} {}", b.name(), if b.status == BudgetStatus::Exceeded { "over" } else { "unknown" })
                    })
                    .collect();
                over.join(", ")
            };
            let mut row = vec![
                c.board.clone(),
                c.core.label().to_string(),
                c.profile.clone(),
                c.verdict.outcome.label().to_string(),
                format!("{}/{}", c.kats_passed(), c.kats.len()),
                opt(c.flash_bytes()),
                opt(c.ram_bytes()),
                opt(c.stack_high_water.map(u64::from)),
                match &c.stack_static {
                    None => "-".to_string(),
                    Some(s) => s.reset.map_or("unbounded".to_string(), |b| b.to_string()),
                },
                budget,
            ];
            if probed {
                row.insert(8, opt(c.stack_probe.map(|p| u64::from(p.bytes))));
            }
            if heaped {
                row.insert(8, opt(c.heap_peak.map(u64::from)));
            }
            rows.push(row);
        }
        let verdict_column = 3;
        let budget_column = rows[0].len() - 1;
        let paint = |row: usize, column: usize, padded: &str| -> String {
            if !color || row == 0 {
                return padded.to_string();
            }
            let text = padded.trim();
            let styled = match column {
                c if c == verdict_column && text == "pass" => {
                    console::style(text).green().force_styling(true).to_string()
                }
                c if c == verdict_column => console::style(text).red().bold().force_styling(true).to_string(),
                c if c == budget_column && (text == "ok" || text == "-") => text.to_string(),
                c if c == budget_column => console::style(text).red().force_styling(true).to_string(),
                _ => return padded.to_string(),
            };
            padded.replacen(text, &styled, 1)
        };
        let mut out = render_styled(&rows, 4, &paint);

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
            let all = || self.cells.iter().flat_map(|c| &c.kats);
            let _ = writeln!(out, "\ninstructions per KAT operation");
            if all().any(|k| k.instructions_source == CountSource::Plugin) {
                let _ = writeln!(
                    out,
                    "  exact: QEMU plugin, between the operation's region markers (includes a few marker instructions)"
                );
            }
            if all().any(|k| k.instructions_source == CountSource::Systick) {
                let _ = writeln!(
                    out,
                    "  ~N: from SysTick under -icount shift=0, resolution one tick ({})",
                    self.tick_resolutions()
                );
            }
            out.push_str(&self.kat_matrix(&ids, |k| {
                Some(match k.instructions_source {
                    CountSource::Plugin => k.instructions.to_string(),
                    CountSource::Systick => format!("~{}", k.instructions),
                })
            }));
            out.push_str(&self.cycles_table(&ids));
            out.push_str(&self.heap_table(&ids));
        }
        out.push_str(&self.regions_table());
        out
    }

    /// Function regions: calls and per-call instructions and estimated cycles (total, min, max),
    /// one row per region and cell that measured it.
    fn regions_table(&self) -> String {
        if self.cells.iter().all(|c| c.regions.is_empty()) {
            return String::new();
        }
        let mut out = String::from(
            "\nfunction regions (per call, inclusive: first instruction to the return; exact instructions, est. cycles)\n",
        );
        let probed = self.cells.iter().any(|c| c.regions.iter().any(|r| r.stack_lowest.is_some()));
        let mut header: Vec<String> =
            ["region", "board/profile", "calls", "insns total", "min", "max", "cycles total", "min", "max"]
                .map(String::from)
                .to_vec();
        if probed {
            header.push("stack lowest".into());
        }
        let mut rows = vec![header];
        for c in &self.cells {
            for r in &c.regions {
                let cycles = |f: fn(&PerCall) -> u64| r.cycles.as_ref().map_or("-".to_string(), |p| f(p).to_string());
                let mut row = vec![
                    r.name.clone(),
                    format!("{}/{}", c.board.trim_start_matches("mps2-"), c.profile),
                    if r.open > 0 { format!("{} (+{} open)", r.calls, r.open) } else { r.calls.to_string() },
                    r.instructions.total.to_string(),
                    r.instructions.min.to_string(),
                    r.instructions.max.to_string(),
                    cycles(|p| p.total),
                    cycles(|p| p.min),
                    cycles(|p| p.max),
                ];
                if probed {
                    row.push(r.stack_lowest.map_or("-".to_string(), |a| format!("0x{a:08x}")));
                }
                rows.push(row);
            }
        }
        out.push_str(&render(&rows, 2));
        out
    }

    /// Estimated cycles per KAT (same rows and columns as the instruction table), with each
    /// cell's model; a cell whose cycles are unavailable says why.
    fn cycles_table(&self, ids: &[&str]) -> String {
        let mut out = String::new();
        if !self.cells.iter().any(|c| c.cycle_model.is_some()) {
            return out;
        }
        let _ = writeln!(out, "\nest. cycles (model) per KAT operation, same span as the exact instruction count");
        let mut models: Vec<(String, &str)> = Vec::new();
        for c in &self.cells {
            if let Some(m) = &c.cycle_model
                && !models.iter().any(|(b, mm)| b == &c.board && *mm == m.as_str())
            {
                models.push((c.board.clone(), m));
            }
        }
        for (board, model) in models {
            let _ = writeln!(out, "  {board}: {model}");
        }
        out.push_str(&self.kat_matrix(ids, |k| k.cycles.map(|n| n.to_string())));
        out
    }

    /// Heap bytes per KAT (same rows and columns as the instruction table), when any KAT
    /// reported its heap.
    fn heap_table(&self, ids: &[&str]) -> String {
        let mut out = String::new();
        if !self.cells.iter().flat_map(|c| &c.kats).any(|k| k.heap.is_some()) {
            return out;
        }
        let _ = writeln!(out, "\nheap B per KAT operation (taken above the heap in use at its start; sbrk break)");
        out.push_str(&self.kat_matrix(ids, |k| k.heap.map(|n| n.to_string())));
        out
    }

    /// One row per KAT id, one column per cell: `value` of that cell's KAT, `-` where the cell
    /// has no such KAT or no value.
    fn kat_matrix(&self, ids: &[&str], value: impl Fn(&KatReport) -> Option<String>) -> String {
        let mut header = vec!["KAT".to_string()];
        header.extend(self.cells.iter().map(|c| format!("{}/{}", c.board.trim_start_matches("mps2-"), c.profile)));
        let mut rows = vec![header];
        for &id in ids {
            let mut row = vec![id.to_string()];
            for c in &self.cells {
                row.push(c.kats.iter().find(|k| k.id == id).and_then(&value).unwrap_or_else(|| "-".into()));
            }
            rows.push(row);
        }
        render(&rows, 1)
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
pub(crate) fn render(rows: &[Vec<String>], text_columns: usize) -> String {
    render_styled(rows, text_columns, &|_, _, padded| padded.to_string())
}

/// [`render`] with `style(row, column, padded cell)` applied after padding, so escape codes
/// never upset the alignment.
pub(crate) fn render_styled(
    rows: &[Vec<String>],
    text_columns: usize,
    style: &dyn Fn(usize, usize, &str) -> String,
) -> String {
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
                let padded = if i < text_columns || n == 0 {
                    format!("{s:<w$}", w = widths[i])
                } else {
                    format!("{s:>w$}", w = widths[i])
                };
                style(n, i, &padded)
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

impl RunReport {
    /// Joins reports of one scenario (e.g. the shards of `run --shard I/N`) into one, cells in
    /// the scenario's matrix order. Refuses reports of different scenarios or schemas and cells
    /// that appear twice.
    pub fn merge(reports: Vec<RunReport>) -> Result<RunReport, String> {
        let mut reports = reports.into_iter();
        let mut merged = reports.next().ok_or("no reports to merge")?;
        for r in reports {
            if r.scenario != merged.scenario {
                return Err(format!("cannot merge scenario `{}` into `{}`", r.scenario, merged.scenario));
            }
            if r.tool_version != merged.tool_version {
                return Err(format!(
                    "reports from mcubench {} and {} do not merge; rerun the shards with one version",
                    r.tool_version, merged.tool_version
                ));
            }
            merged.cells.extend(r.cells);
        }
        merged.cells.sort_by_key(|c| c.index);
        if let Some(w) = merged.cells.windows(2).find(|w| w[0].index == w[1].index) {
            return Err(format!("{} / {} appears in two reports", w[1].board, w[1].profile));
        }
        Ok(merged)
    }
}
