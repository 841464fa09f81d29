//! The terminal tables: the run table (one row per board × profile, then per-KAT matrices) and
//! the `mcubench size` memory table.

use std::fmt::Write as _;

use mcubench_elf::MemoryReport;

use super::*;

impl RunReport {
    /// The terminal table: one row per board × profile, then instructions per KAT operation.
    pub fn to_table(&self) -> String {
        self.to_table_colored(false)
    }

    /// [`RunReport::to_table`] with verdicts and budget problems in colour (for a terminal).
    pub fn to_table_colored(&self, color: bool) -> String {
        let mut rows = vec![
            [
                "board",
                "core",
                "profile",
                "verdict",
                "KATs",
                "flash B",
                "RAM B",
                "stack B",
                "static B",
                "insns",
                "est. cycles",
                "budget",
            ]
            .map(String::from)
            .to_vec(),
        ];
        // The static bound excluding panic/abort paths beside the sound one, when it differs
        // for any cell (informative: "static B" stays the bound).
        let excl = |c: &CellReport| c.stack_static.as_ref().and_then(|s| s.excluding_panic.as_ref().map(|x| x.reset));
        let excluding =
            self.cells.iter().any(|c| excl(c).is_some_and(|x| x != c.stack_static.as_ref().and_then(|s| s.reset)));
        if excluding {
            rows[0].insert(9, "excl. panic B".into());
        }
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
                opt(c.instructions_total),
                opt(c.cycles_total),
                budget,
            ];
            if excluding {
                row.insert(
                    9,
                    excl(c).map_or("-".to_string(), |x| x.map_or("unbounded".to_string(), |b| b.to_string())),
                );
            }
            if probed {
                // Without a stack region the probe has no number: say so ("no region"; the note says why).
                row.insert(
                    8,
                    match &c.stack_probe {
                        Some(p) if p.bytes.is_none() && p.region.is_none() => "no region".to_string(),
                        p => opt(p.as_ref().and_then(|p| p.bytes).map(u64::from)),
                    },
                );
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
            out.push_str(&self.per_byte_table(&ids));
            out.push_str(&self.heap_table(&ids));
        }
        out.push_str(&self.regions_table());
        out.push_str(&self.cycle_counter_table());
        // Without KATs (whose time table lists the clocks), the whole run at each clock.
        if ids.is_empty() && self.cells.iter().any(|c| c.clock_hz.is_some()) {
            out.push_str("\nest. time of the whole run at each cell's clock (est. cycles / clock)\n");
            out.push_str(&self.clocks());
        }
        out.push_str(&self.metrics_table());
        out
    }

    /// Metrics the `verdict.record` patterns captured, one row per name, one column per cell.
    fn metrics_table(&self) -> String {
        let mut names: Vec<&str> = Vec::new();
        for c in &self.cells {
            for n in c.metrics.keys() {
                if !names.contains(&n.as_str()) {
                    names.push(n);
                }
            }
        }
        if names.is_empty() {
            return String::new();
        }
        let mut rows = vec![
            std::iter::once("metric".to_string())
                .chain(self.cells.iter().map(|c| format!("{}/{}", c.board, c.profile)))
                .collect::<Vec<_>>(),
        ];
        for n in names {
            rows.push(
                std::iter::once(n.to_string())
                    .chain(self.cells.iter().map(|c| c.metrics.get(n).map_or("-".to_string(), |v| v.to_string())))
                    .collect(),
            );
        }
        format!("\nrecorded metrics (captured from the console by `verdict.record`)\n{}", render(&rows, 1))
    }

    /// The console of every cell that did not pass (every cell with `all`), each stream under
    /// its name; a failing cell shows the last lines of each stream.
    pub fn console_text(&self, all: bool) -> String {
        const FAILURE_LINES: usize = 20;
        let mut out = String::new();
        for c in self.cells.iter().filter(|c| all || c.verdict.outcome != Outcome::Pass) {
            for stream in &c.console {
                let lines: Vec<&str> = stream.text.lines().collect();
                let skip = if all { 0 } else { lines.len().saturating_sub(FAILURE_LINES) };
                let cut = if skip > 0 || stream.dropped_bytes > 0 { " (its end)" } else { "" };
                let _ = writeln!(out, "\n{} / {}: console {}{cut}:", c.board, c.profile, stream.source);
                for line in &lines[skip..] {
                    let _ = writeln!(out, "  {line}");
                }
            }
        }
        out
    }

    /// Function regions: calls and per-call instructions and estimated cycles (total, min, max),
    /// one row per region and cell that measured it, with cycles per byte where the scenario
    /// gives bytes per call and a row per caller with `split: caller`; then the distinct per-call
    /// values of regions whose calls differ. With a clock, the longest call's time.
    fn regions_table(&self) -> String {
        if self.cells.iter().all(|c| c.regions.is_empty()) {
            return String::new();
        }
        let mut out = String::from(
            "\nfunction regions (per call, inclusive: first instruction to the return; exact instructions, est. cycles)\n",
        );
        let all = || self.cells.iter().flat_map(|c| &c.regions);
        let probed = all().any(|r| r.stack_lowest.is_some());
        let with_bytes = all().any(|r| r.bytes.is_some());
        let clocked = self.cells.iter().any(|c| c.clock_hz.is_some() && !c.regions.is_empty());
        let mut header: Vec<String> =
            ["region", "board/profile", "calls", "insns total", "min", "max", "cycles total", "min", "max"]
                .map(String::from)
                .to_vec();
        if clocked {
            header.push("time max".to_string());
        }
        if with_bytes {
            header.extend(["bytes".to_string(), "cycles/B".to_string()]);
        }
        if probed {
            header.extend(["stack lowest".to_string(), "probe B".to_string()]);
        }
        let mut rows = vec![header];
        for c in &self.cells {
            let cell = format!("{}/{}", c.board.trim_start_matches("mps2-"), c.profile);
            for r in &c.regions {
                let calls = if r.open > 0 { format!("{} (+{} open)", r.calls, r.open) } else { r.calls.to_string() };
                let time_max = |cycles: Option<&PerCall>| {
                    super::time_us(cycles.map(|p| p.max), c.clock_hz).map_or("-".to_string(), super::format_time)
                };
                let mut row = call_columns(r.name.clone(), cell.clone(), calls, &r.instructions, r.cycles.as_ref());
                if clocked {
                    row.push(time_max(r.cycles.as_ref()));
                }
                if with_bytes {
                    row.push(opt(r.bytes));
                    row.push(fmt_per_byte(r.cycles_per_byte));
                }
                if probed {
                    row.push(r.stack_lowest.map_or("-".to_string(), |a| format!("0x{a:08x}")));
                    row.push(opt(r.stack_probe_bytes.map(u64::from)));
                }
                rows.push(row);
                for s in &r.by_caller {
                    let caller = format!("  ← {}", s.caller.as_deref().unwrap_or("?"));
                    let mut row =
                        call_columns(caller, cell.clone(), s.calls.to_string(), &s.instructions, s.cycles.as_ref());
                    if clocked {
                        row.push(time_max(s.cycles.as_ref()));
                    }
                    if with_bytes {
                        row.push(opt(s.bytes));
                        row.push(fmt_per_byte(s.cycles_per_byte));
                    }
                    if probed {
                        row.extend([String::new(), String::new()]);
                    }
                    rows.push(row);
                }
            }
        }
        out.push_str(&render(&rows, 2));
        if clocked {
            out.push_str("  time max: the longest call's est. cycles at the cell's clock\n");
        }
        if all().any(|r| !r.by_caller.is_empty()) {
            out.push_str("  ← f: the calls from function f (`split: caller`: the function that holds each call's return address)\n");
        }
        out.push_str(&self.per_call_table());
        out
    }

    /// The firmware's own DWT cycle-counter accesses: per access and the read after it, what
    /// the firmware would have read on the board (QEMU's counter reads 0).
    fn cycle_counter_table(&self) -> String {
        if self.cells.iter().all(|c| c.cycle_counter.is_empty()) {
            return String::new();
        }
        let reads = if self.cells.iter().any(|c| c.cycle_counter_served.is_some()) {
            "live: its loads read the estimated cycles"
        } else {
            "CYCCNT reads 0 under QEMU"
        };
        let mut out = format!(
            "\nDWT cycle counter ({reads}): est. cycles from each read or write of it to the next read, what the \
             firmware would read on the board (f#n: the n-th access in function f, by address)\n",
        );
        let clocked = self.cells.iter().any(|c| c.clock_hz.is_some() && !c.cycle_counter.is_empty());
        let mut header: Vec<String> =
            ["accesses", "at", "board/profile", "times", "insns total", "min", "max", "cycles total", "min", "max"]
                .map(String::from)
                .to_vec();
        if clocked {
            header.push("time max".to_string());
        }
        let mut rows = vec![header];
        for c in &self.cells {
            let cell = format!("{}/{}", c.board.trim_start_matches("mps2-"), c.profile);
            for i in &c.cycle_counter {
                let mut row =
                    call_columns(i.name(), cell.clone(), i.count.to_string(), &i.instructions, Some(&i.cycles));
                row.insert(1, format!("{:#x} → {:#x}", i.from_address, i.to_address));
                if clocked {
                    row.push(
                        super::time_us(Some(i.cycles.max), c.clock_hz).map_or("-".to_string(), super::format_time),
                    );
                }
                rows.push(row);
            }
        }
        out.push_str(&render(&rows, 2));
        out
    }

    /// The distinct per-call values of every region whose calls were not all alike, at most
    /// [`PER_CALL_ROWS`] per region and cell.
    fn per_call_table(&self) -> String {
        let differ = |r: &RegionReport| r.per_call.len() > 1;
        if !self.cells.iter().flat_map(|c| &c.regions).any(differ) {
            return String::new();
        }
        let with_bytes = self.cells.iter().flat_map(|c| &c.regions).filter(|r| differ(r)).any(|r| r.bytes.is_some());
        let mut header: Vec<String> =
            ["region", "board/profile", "caller", "returns to", "calls", "insns", "cycles"].map(String::from).to_vec();
        if with_bytes {
            header.extend(["bytes".to_string(), "cycles/B".to_string()]);
        }
        let mut rows = vec![header];
        let mut notes = String::new();
        for c in &self.cells {
            let cell = format!("{}/{}", c.board.trim_start_matches("mps2-"), c.profile);
            for r in c.regions.iter().filter(|r| differ(r)) {
                for g in r.per_call.iter().take(PER_CALL_ROWS) {
                    let mut row = vec![
                        r.name.clone(),
                        cell.clone(),
                        g.caller.clone().unwrap_or_else(|| "?".into()),
                        g.return_address.map_or("-".to_string(), |a| format!("0x{a:08x}")),
                        g.calls.to_string(),
                        g.instructions.to_string(),
                        opt(g.cycles),
                    ];
                    if with_bytes {
                        row.push(opt(g.bytes));
                        row.push(fmt_per_byte(g.cycles_per_byte));
                    }
                    rows.push(row);
                }
                if r.per_call.len() > PER_CALL_ROWS {
                    let _ = writeln!(
                        notes,
                        "  {} {cell}: {} more distinct values in the JSON report (`regions[].per_call`)",
                        r.name,
                        r.per_call.len() - PER_CALL_ROWS
                    );
                }
                if r.per_call_dropped > 0 {
                    let _ = writeln!(
                        notes,
                        "  {} {cell}: {} later calls are in the totals only (the first {} are kept one by one)",
                        r.name,
                        r.per_call_dropped,
                        mcubench_wire::CALLS_KEPT
                    );
                }
            }
        }
        let mut out = String::from(
            "\nfunction region calls by distinct value (calls with equal values together, first seen first)\n",
        );
        out.push_str(&render(&rows, 4));
        out.push_str(&notes);
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
        let mut models: Vec<(String, &str, String)> = Vec::new();
        for c in &self.cells {
            if let Some(m) = &c.cycle_model {
                let params = super::params_text(c);
                if !models.iter().any(|(b, mm, p)| b == &c.board && *mm == m.as_str() && *p == params) {
                    models.push((c.board.clone(), m, params));
                }
            }
        }
        for (board, model, params) in models {
            let _ = writeln!(out, "  {board}: {model}");
            if !params.is_empty() {
                let _ = writeln!(out, "    parameters: {params}");
            }
        }
        out.push_str(&self.kat_matrix(ids, |k| k.cycles.map(|n| n.to_string())));
        if self.cells.iter().any(|c| c.clock_hz.is_some()) {
            let _ = writeln!(out, "\nest. time per KAT operation at each cell's clock (est. cycles / clock)");
            out.push_str(&self.clocks());
            out.push_str(&self.kat_matrix(ids, |k| k.time_us.map(super::format_time)));
        }
        out
    }

    /// One line per cell with a clock: the clock and the whole run's estimated time.
    fn clocks(&self) -> String {
        let mut out = String::new();
        for c in self.cells.iter().filter(|c| c.clock_hz.is_some()) {
            let clock = crate::config::timing::clock_text(c.clock_hz.unwrap_or(0));
            let total = c.time_total_us.map_or(String::new(), |t| format!(", whole run {}", super::format_time(t)));
            let _ = writeln!(out, "  {}/{}: {clock}{total}", c.board, c.profile);
        }
        out
    }

    /// Estimated cycles per byte per KAT (same rows and columns as the instruction table), when
    /// any KAT reported the bytes it processed (`bytes=`).
    fn per_byte_table(&self, ids: &[&str]) -> String {
        let mut out = String::new();
        if !self.cells.iter().flat_map(|c| &c.kats).any(|k| k.bytes.is_some()) {
            return out;
        }
        let _ = writeln!(out, "\nest. cycles per byte per KAT operation (cycles / `bytes=` of its record)");
        out.push_str(&self.kat_matrix(ids, |k| {
            k.bytes?;
            Some(fmt_per_byte(k.cycles_per_byte))
        }));
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

/// Distinct per-call values listed per region and cell in the table (the JSON report has all).
const PER_CALL_ROWS: usize = 10;

/// A number or `-`.
fn opt(v: Option<u64>) -> String {
    v.map_or("-".to_string(), |v| v.to_string())
}

/// Cycles per byte with two decimals, or `-`.
fn fmt_per_byte(v: Option<f64>) -> String {
    v.map_or("-".to_string(), |v| format!("{v:.2}"))
}

/// Left-aligns the first `text_columns` columns and right-aligns the rest (numbers).
pub fn render(rows: &[Vec<String>], text_columns: usize) -> String {
    render_styled(rows, text_columns, &|_, _, padded| padded.to_string())
}

/// [`render`] with `style(row, column, padded cell)` applied after padding, so escape codes
/// never upset the alignment.
pub fn render_styled(
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

/// The name, cell, calls, instructions (total, min, max) and cycles (total, min, max) columns of
/// a function region row or of one caller's row under it.
fn call_columns(name: String, cell: String, calls: String, insns: &PerCall, cycles: Option<&PerCall>) -> Vec<String> {
    let c = |f: fn(&PerCall) -> u64| cycles.map_or("-".to_string(), |p| f(p).to_string());
    vec![
        name,
        cell,
        calls,
        insns.total.to_string(),
        insns.min.to_string(),
        insns.max.to_string(),
        c(|p| p.total),
        c(|p| p.min),
        c(|p| p.max),
    ]
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::judge::verdict::Verdict;

    /// A passing cell on mps2-an386 at 168 MHz that ran 1 680 000 cycles.
    fn clocked_cell() -> CellReport {
        let board = crate::config::board::Board::find("mps2-an386").unwrap();
        let mut c = CellReport::unrun(0, board, "O2");
        c.verdict = Verdict { outcome: Outcome::Pass, message: String::new() };
        c.clock_hz = Some(168_000_000);
        c.cycles_total = Some(1_680_000);
        c.time_total_us = c.time_us(c.cycles_total);
        c
    }

    fn run(cells: Vec<CellReport>) -> RunReport {
        RunReport { schema: SCHEMA.into(), tool_version: "0".into(), scenario: "t".into(), table: None, cells }
    }

    /// Firmware without KATs gets time at the cell's clock: per region its longest call, and
    /// the whole run, with or without regions.
    #[test]
    fn time_at_the_clock_without_kats() {
        let mut c = clocked_cell();
        let insns = PerCall { total: 300, min: 100, max: 200 };
        c.regions = vec![RegionReport::of_calls("boot", 2, insns, PerCall { total: 504, min: 168, max: 336 }, None)];
        let text = run(vec![c.clone()]).to_table();
        let header = text.lines().find(|l| l.starts_with("region")).unwrap();
        assert!(header.contains("time max"), "{text}");
        let row = text.lines().find(|l| l.starts_with("boot")).unwrap();
        assert!(row.contains("2.0 µs"), "{text}");
        assert!(text.contains("mps2-an386/O2: 168 MHz, whole run 10.00 ms"), "{text}");

        c.regions.clear();
        let text = run(vec![c]).to_table();
        assert!(text.contains("est. time of the whole run") && text.contains("whole run 10.00 ms"), "{text}");
    }

    /// Without a clock, no time column and no time lines.
    #[test]
    fn no_time_without_a_clock() {
        let mut c = clocked_cell();
        (c.clock_hz, c.time_total_us) = (None, None);
        let insns = PerCall { total: 300, min: 100, max: 200 };
        c.regions = vec![RegionReport::of_calls("boot", 2, insns, PerCall { total: 504, min: 168, max: 336 }, None)];
        let text = run(vec![c]).to_table();
        assert!(!text.contains("time max") && !text.contains("whole run"), "{text}");
    }
}
