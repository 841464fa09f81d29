//! Published tables as views of report fields: the scenario's `table:` (carried in the report)
//! picks the kind, clock, rows and columns; every cell is one report field, or a stated
//! arithmetic of fields, as `docs/src/guide/secure-boot.md` lists. Time is the boot KAT's
//! `time_us` when the cell has a clock (its board timing profile's), else its cycles at the
//! stated `table.clock` (0 wait states), in a column labelled with where it came from. The same
//! rows render as text, Markdown and CSV.

use std::fmt::Write as _;

use crate::config::table::{Column, TableKind, TableSpec};
use crate::judge::protocol::KatResult;
use crate::report::{CellReport, KatReport, RunReport};

/// One table, ready to render: headers (human, machine) and rows of cells ("-" when unmeasured).
#[derive(Debug, Clone, PartialEq)]
pub struct Table {
    pub title: String,
    pub headers: Vec<String>,
    /// Machine-friendly column names (CSV header).
    pub keys: Vec<String>,
    pub rows: Vec<Vec<String>>,
    /// What the numbers mean (clock, model), printed under the table.
    pub notes: Vec<String>,
    /// Leading text columns (left-aligned).
    pub text_columns: usize,
}

/// Where a cell's time comes from: its board timing profile's (or `model.clock`'s) clock, with
/// the memory system the profile describes, or else the table's stated clock at 0 wait states.
#[derive(Debug, Clone, PartialEq, Eq)]
enum TimeSource {
    /// The cell's own clock; `name` is its timing profile (`model.clock` when it has none).
    Cell { clock_hz: u64, name: String },
    /// `table.clock`, 0 wait states.
    Stated { clock_hz: u64 },
}

impl TimeSource {
    fn of(cell: &CellReport, spec: &TableSpec) -> TimeSource {
        match cell.clock_hz.filter(|&h| h > 0) {
            Some(clock_hz) => TimeSource::Cell {
                clock_hz,
                name: cell.cycle_params.get("timing").cloned().unwrap_or_else(|| "model.clock".into()),
            },
            None => TimeSource::Stated { clock_hz: spec.clock_hz.unwrap_or_default() },
        }
    }

    /// Column header and CSV key.
    fn header(&self) -> (String, String) {
        match self {
            TimeSource::Cell { clock_hz, name } => (
                format!("boot ms @{} ({name})", clock_text(*clock_hz)),
                format!("boot_ms_{}", name.replace(|c: char| !c.is_ascii_alphanumeric(), "_")),
            ),
            TimeSource::Stated { clock_hz } => {
                (format!("boot ms @{} (0 WS, stated clock)", clock_text(*clock_hz)), "boot_ms_stated_clock".into())
            }
        }
    }

    fn note(&self) -> String {
        let (h, _) = self.header();
        match self {
            TimeSource::Cell { name, .. } if name == "model.clock" => format!(
                "{h}: the boot KAT's time_us (its estimated cycles at the cell's model.clock, with the memory system \
                 of its model) / 1000"
            ),
            TimeSource::Cell { name, .. } => format!(
                "{h}: the boot KAT's time_us (its estimated cycles at the {name} board timing profile's clock, with \
                 that profile's flash wait states, prefetch and caches) / 1000"
            ),
            TimeSource::Stated { .. } => format!(
                "{h}: boot cycles at table.clock with 0 wait states, not a board timing profile (the cell has no \
                 clock of its own)"
            ),
        }
    }

    /// The boot time in ms, three decimals: the boot measurement's `time_us` when the cell has
    /// a clock, else its cycles at the stated clock (the same [`crate::report::time_us`]).
    fn millis(&self, boot: &Measured) -> Option<String> {
        let us = match self {
            TimeSource::Cell { .. } => boot.time_us,
            TimeSource::Stated { clock_hz } => crate::report::time_us(boot.cycles, Some(*clock_hz)),
        }?;
        Some(format!("{:.3}", us / 1e3))
    }
}

/// One part of a row (`boot`, `hash`, `verify`) as measured: from the firmware's KAT record
/// `<row>/<part>` when it speaks the result protocol, else from the function region
/// `sb_<part>_<row>` (`regions:` in the scenario), so firmware that only prints on a console
/// gets the same table. A region gives its longest completed call: a valid image's boot runs
/// the whole path, a rejected one may stop early.
#[derive(Debug, Default)]
struct Measured<'a> {
    kat: Option<&'a KatReport>,
    cycles: Option<u64>,
    stack: Option<u32>,
    time_us: Option<f64>,
}

impl<'a> Measured<'a> {
    fn of(cell: &'a CellReport, row: &str, part: &str) -> Measured<'a> {
        if let Some(k) = kat(cell, row, part) {
            return Measured { kat: Some(k), cycles: k.cycles, stack: Some(k.stack), time_us: k.time_us };
        }
        let name = format!("sb_{part}_{row}");
        match cell.regions.iter().find(|r| r.name == name && r.calls > 0) {
            Some(r) => {
                let e = crate::report::throughput_table::call_entry(cell, r);
                Measured { kat: None, cycles: e.cycles, stack: e.stack_probe_bytes, time_us: e.time_us }
            }
            None => Measured::default(),
        }
    }
}

/// Header and CSV key of a column that is one report field (`None` for the time column, which
/// has one per [`TimeSource`]).
fn header(c: Column) -> Option<(String, &'static str)> {
    Some(match c {
        Column::FirmwareFlash => ("firmware flash B".into(), "firmware_flash_bytes"),
        Column::VerifyCode => ("verify code B".into(), "verify_code_bytes"),
        Column::StackStatic => ("stack static B".into(), "stack_static_bytes"),
        Column::StackStaticExclPanic => ("stack static excl. panic B".into(), "stack_static_excl_panic_bytes"),
        Column::StackMeasured => ("stack measured B".into(), "stack_measured_bytes"),
        Column::Header => ("header B".into(), "header_bytes"),
        Column::Signature => ("signature B".into(), "signature_bytes"),
        Column::PublicKey => ("public key B".into(), "public_key_bytes"),
        Column::HashCycles => ("hash cycles".into(), "hash_cycles"),
        Column::VerifyCycles => ("verify cycles".into(), "verify_cycles"),
        Column::BootCycles => ("boot cycles".into(), "boot_cycles"),
        Column::BootTime => return None,
        Column::Kats => ("KATs".into(), "kats"),
    })
}

/// `320 MHz`, `32.768 kHz`, `12 Hz`.
pub fn clock_text(hz: u64) -> String {
    let (div, unit) = match hz {
        h if h >= 1_000_000_000 && h % 1_000_000 == 0 => (1e9, "GHz"),
        h if h >= 1_000_000 => (1e6, "MHz"),
        h if h >= 1_000 => (1e3, "kHz"),
        _ => (1.0, "Hz"),
    };
    let v = hz as f64 / div;
    if v.fract() == 0.0 { format!("{v:.0} {unit}") } else { format!("{v} {unit}") }
}

fn kat<'a>(cell: &'a CellReport, row: &str, what: &str) -> Option<&'a KatReport> {
    let id = format!("{row}/{what}");
    cell.kats.iter().find(|k| k.id == id)
}

fn opt<T: ToString>(v: Option<T>) -> String {
    v.map_or("-".to_string(), |v| v.to_string())
}

/// The table the report's scenario declared, as CSV has it; `None` when it declared none.
pub fn build(report: &RunReport) -> Option<Table> {
    let spec = report.table.as_ref()?;
    Some(match spec.kind {
        TableKind::SecureBoot => secure_boot(report, spec),
        TableKind::Throughput => crate::report::throughput_table::long(report, spec),
        TableKind::Profiles => crate::report::profile_table::build(report, spec),
    })
}

/// The tables text and Markdown show: the declared one, or for the throughput table two (per
/// byte, per operation); `None` when the scenario declared none.
fn sections(report: &RunReport) -> Option<Vec<Table>> {
    let spec = report.table.as_ref()?;
    match spec.kind {
        TableKind::Throughput => Some(crate::report::throughput_table::sections(report, spec)),
        _ => build(report).map(|t| vec![t]),
    }
}

fn secure_boot(report: &RunReport, spec: &TableSpec) -> Table {
    let columns = spec.columns();
    // One time column per time source, in the order of the cells that have rows: a column's
    // figures always mean one thing (a profile's clock and memory system, or the stated clock).
    let mut sources: Vec<TimeSource> = Vec::new();
    for cell in report.cells.iter().filter(|c| !c.table_rows.is_empty()) {
        let s = TimeSource::of(cell, spec);
        if !sources.contains(&s) {
            sources.push(s);
        }
    }
    if sources.is_empty() {
        sources.push(TimeSource::Stated { clock_hz: spec.clock_hz.unwrap_or_default() });
    }
    let mut headers: Vec<String> = ["board", "profile", "algorithm"].map(String::from).to_vec();
    let mut keys = headers.clone();
    for &c in &columns {
        match header(c) {
            Some((h, k)) => {
                headers.push(h);
                keys.push(k.into());
            }
            None => {
                for s in &sources {
                    let (h, k) = s.header();
                    headers.push(h);
                    keys.push(k);
                }
            }
        }
    }
    let mut rows = Vec::new();
    let mut by_region = false;
    let mut any_measured = false;
    for cell in &report.cells {
        let source = TimeSource::of(cell, spec);
        for facts in &cell.table_rows {
            let row = facts.row.as_str();
            let boot = Measured::of(cell, row, "boot");
            by_region |= boot.kat.is_none() && boot.cycles.is_some();
            any_measured |= boot.cycles.is_some() || boot.stack.is_some();
            let mut r = vec![
                cell.board.clone(),
                cell.profile.clone(),
                boot.kat.map_or_else(|| row.to_string(), |k| k.alg.clone()),
            ];
            for &c in &columns {
                r.push(match c {
                    Column::FirmwareFlash => opt(cell.flash_bytes()),
                    Column::VerifyCode => opt(facts.verify_code),
                    Column::StackStatic => match facts.stack_static {
                        Some(b) => b.to_string(),
                        None if facts.stack_static_kind.starts_with("unbounded") => "unbounded".into(),
                        None => "-".into(),
                    },
                    Column::StackStaticExclPanic => opt(facts.stack_static_excl_panic),
                    Column::StackMeasured => opt(boot.stack),
                    Column::Header => facts.header.to_string(),
                    Column::Signature => opt(facts.signature),
                    Column::PublicKey => opt(facts.public_key),
                    Column::HashCycles => opt(Measured::of(cell, row, "hash").cycles),
                    Column::VerifyCycles => opt(Measured::of(cell, row, "verify").cycles),
                    Column::BootCycles => opt(boot.cycles),
                    Column::BootTime => {
                        // Its own source's column; "-" in the others.
                        for s in &sources {
                            r.push(if *s == source { opt(source.millis(&boot)) } else { "-".into() });
                        }
                        continue;
                    }
                    Column::Kats => {
                        let prefix = format!("{row}/");
                        let mine: Vec<_> = cell.kats.iter().filter(|k| k.id.starts_with(&prefix)).collect();
                        let passed = mine.iter().filter(|k| k.result == KatResult::Pass).count();
                        // No KAT records: the firmware's console verdict judged the row.
                        if mine.is_empty() { "-".into() } else { format!("{passed}/{}", mine.len()) }
                    }
                });
            }
            rows.push(r);
        }
    }
    let mut notes: Vec<String> =
        if columns.contains(&Column::BootTime) { sources.iter().map(TimeSource::note).collect() } else { Vec::new() };
    let mut models: Vec<String> = Vec::new();
    for c in &report.cells {
        let m = format!("{}: {}", c.board, c.cycle_model.as_deref().unwrap_or("no cycle model"));
        if !models.contains(&m) {
            models.push(m);
        }
    }
    notes.extend(models.into_iter().map(|m| format!("cycles are estimates, {m}")));
    notes.push(
        "verify code: the boot function and every function it reaches by direct calls; stack static: its call-graph \
         bound (`unbounded`: see table_rows[].stack_static_kind); stack static excl. panic: that bound with the \
         panic/abort paths cut, informative, not a sound bound; stack measured: painted, its boot KAT (the measurement's trampoline and closure frames included); header: fixed fields, key hint or digest, signature"
            .into(),
    );
    if !any_measured && !rows.is_empty() {
        notes.insert(
            0,
            "no measured cells: no row has a KAT record `<row>/boot` or a called function region `sb_boot_<row>`; \
             the columns above come from the ELF alone. Firmware without the result protocol: list its sb_boot_<row> \
             functions under `regions:`"
                .into(),
        );
    }
    if by_region {
        notes.push(
            "rows without KAT records: cycles, time and stack measured from the function regions sb_boot_<row>, \
             sb_hash_<row>, sb_verify_<row> (regions[]: the longest completed call; stack: the stack probe's bytes \
             below the call's entry SP); KATs `-`: the console verdict judged the run"
                .into(),
        );
    }
    Table {
        title: format!("secure-boot table ({} B image per algorithm)", 100 * 1024),
        headers,
        keys,
        rows,
        notes,
        text_columns: 3,
    }
}

/// Whether any cell of the table holds a measurement (cycles or measured stack).
fn measured(t: &Table) -> bool {
    !t.rows.is_empty()
}

fn empty_text(report: &RunReport) -> String {
    let why: Vec<String> =
        report.cells.iter().map(|c| format!("{} / {}: {}", c.board, c.profile, c.verdict.outcome.label())).collect();
    format!(
        "no measured cells: no run got as far as the table's rows ({})",
        if why.is_empty() { "no runs".to_string() } else { why.join(", ") }
    )
}

/// The table as terminal text (after the run table), or `None` when the scenario has none.
pub fn to_text(report: &RunReport) -> Option<String> {
    let tables = sections(report)?;
    let mut out = String::new();
    if !tables.iter().any(measured) {
        let _ = writeln!(out, "{}\n  {}", tables[0].title, empty_text(report));
        return Some(out);
    }
    for t in tables.iter().filter(|t| measured(t)) {
        if !out.is_empty() {
            out.push('\n');
        }
        let _ = writeln!(out, "{}", t.title);
        let mut rows = vec![t.headers.clone()];
        rows.extend(t.rows.iter().cloned());
        out.push_str(&crate::report::render(&rows, t.text_columns));
        for n in &t.notes {
            let _ = writeln!(out, "  {n}");
        }
    }
    Some(out)
}

/// The table as a GitHub Markdown section (for the job summary), or `None`.
pub fn to_markdown(report: &RunReport) -> Option<String> {
    let tables = sections(report)?;
    let esc = |s: &str| s.replace('|', "\\|").replace(['\n', '\r'], " ");
    if !tables.iter().any(measured) {
        return Some(format!("#### {}\n\n{}\n", tables[0].title, esc(&empty_text(report))));
    }
    let mut out = String::new();
    for t in tables.iter().filter(|t| measured(t)) {
        if !out.is_empty() {
            out.push('\n');
        }
        table_markdown(t, &mut out);
    }
    Some(out)
}

fn table_markdown(t: &Table, out: &mut String) {
    let esc = |s: &str| s.replace('|', "\\|").replace(['\n', '\r'], " ");
    let _ = writeln!(out, "#### {}\n", t.title);
    let _ = writeln!(out, "| {} |", t.headers.iter().map(|h| esc(h)).collect::<Vec<_>>().join(" | "));
    let align: Vec<&str> = (0..t.headers.len()).map(|i| if i < t.text_columns { "---" } else { "---:" }).collect();
    let _ = writeln!(out, "|{}|", align.join("|"));
    for r in &t.rows {
        let _ = writeln!(out, "| {} |", r.iter().map(|c| esc(c)).collect::<Vec<_>>().join(" | "));
    }
    out.push('\n');
    for n in &t.notes {
        let _ = writeln!(out, "- {}", esc(n));
    }
}

/// The table as CSV (RFC 4180, machine column names), or `None`. An empty table is its header.
pub fn to_csv(report: &RunReport) -> Option<String> {
    let t = build(report)?;
    let field = |s: &str| {
        if s.contains([',', '"', '\n', '\r']) { format!("\"{}\"", s.replace('"', "\"\"")) } else { s.to_string() }
    };
    let mut out = String::new();
    for r in std::iter::once(&t.keys).chain(&t.rows) {
        let _ = writeln!(out, "{}", r.iter().map(|c| field(c)).collect::<Vec<_>>().join(","));
    }
    Some(out)
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::analyze::table::RowFacts;
    use crate::config::table::TableSpec;
    use crate::report::{CountSource, SCHEMA};

    fn kat(id: &str, alg: &str, op: &str, cycles: u64, stack: u32, pass: bool) -> KatReport {
        KatReport {
            id: id.into(),
            alg: alg.into(),
            op: op.into(),
            result: if pass { KatResult::Pass } else { KatResult::Fail },
            instructions: cycles / 2,
            instructions_source: CountSource::Plugin,
            cycles: Some(cycles),
            ticks: 0,
            stack,
            stack_lowest: None,
            heap: None,
            bytes: None,
            cycles_per_byte: None,
            stack_probe_bytes: None,
            time_us: None,
        }
    }

    fn report(columns: Vec<Column>) -> RunReport {
        let board = crate::config::board::Board::find("mps2-an505").unwrap();
        let mut cell = CellReport::unrun(0, board, "release");
        cell.cycle_model = Some("cortex-m33 model".into());
        cell.kats = vec![
            kat("ed25519/hash", "Ed25519", "hash", 1_000_000, 200, true),
            kat("ed25519/verify", "Ed25519", "verify", 2_200_000, 1500, true),
            kat("ed25519/boot", "Ed25519", "boot", 3_200_000, 1700, true),
            kat("ed25519/tampered", "Ed25519", "reject", 3_200_000, 1700, false),
        ];
        cell.table_rows = vec![RowFacts {
            row: "ed25519".into(),
            entry: "sb_boot_ed25519".into(),
            verify_code: Some(12345),
            verify_functions: Some(40),
            indirect_calls: Some(0),
            stack_static: Some(2048),
            stack_static_kind: "exact".into(),
            stack_static_excl_panic: Some(1024),
            header: 112,
            signature: Some(64),
            public_key: Some(32),
        }];
        RunReport {
            schema: SCHEMA.into(),
            tool_version: "0".into(),
            scenario: "secure-boot".into(),
            table: Some(TableSpec {
                kind: TableKind::SecureBoot,
                clock_hz: Some(320_000_000),
                rows: vec!["ed25519".into()],
                sizes: vec![],
                columns,
            }),
            cells: vec![cell],
        }
    }

    #[test]
    fn every_cell_comes_from_its_report_field_and_time_is_cycles_over_the_clock() {
        let csv = to_csv(&report(vec![])).unwrap();
        assert_eq!(
            csv,
            "board,profile,algorithm,firmware_flash_bytes,verify_code_bytes,stack_static_bytes,\
             stack_static_excl_panic_bytes,stack_measured_bytes,header_bytes,signature_bytes,public_key_bytes,hash_cycles,\
             verify_cycles,boot_cycles,boot_ms_stated_clock,kats\n\
             mps2-an505,release,Ed25519,-,12345,2048,1024,1700,112,64,32,1000000,2200000,3200000,10.000,3/4\n"
        );
        let md = to_markdown(&report(vec![])).unwrap();
        assert!(md.contains("| boot ms @320 MHz (0 WS, stated clock) |"), "{md}");
        assert!(md.contains("boot cycles at table.clock with 0 wait states"), "{md}");
        assert!(md.contains("cycles are estimates, mps2-an505: cortex-m33 model"), "{md}");
    }

    #[test]
    fn columns_are_the_ones_asked_for_in_order() {
        let csv = to_csv(&report(vec![Column::BootTime, Column::Signature])).unwrap();
        assert_eq!(
            csv,
            "board,profile,algorithm,boot_ms_stated_clock,signature_bytes\nmps2-an505,release,Ed25519,10.000,64\n"
        );
    }

    #[test]
    fn a_cell_with_a_timing_profile_takes_its_time_from_the_profile() {
        // The boot KAT's time_us is what the report says (cycles at 250 MHz plus nothing else
        // here); the table must show it, not cycles at table.clock.
        let mut r = report(vec![Column::BootCycles, Column::BootTime]);
        let mut profiled = r.cells[0].clone();
        profiled.clock_hz = Some(250_000_000);
        profiled.cycle_params.insert("timing".into(), "stm32h563".into());
        for k in &mut profiled.kats {
            k.time_us = profiled.clock_hz.and_then(|h| crate::report::time_us(k.cycles, Some(h)));
        }
        r.cells.insert(0, profiled);
        r.cells[1].profile = "plain".into();
        let csv = to_csv(&r).unwrap();
        assert_eq!(
            csv,
            "board,profile,algorithm,boot_cycles,boot_ms_stm32h563,boot_ms_stated_clock\n\
             mps2-an505,release,Ed25519,3200000,12.800,-\n\
             mps2-an505,plain,Ed25519,3200000,-,10.000\n"
        );
        let md = to_markdown(&r).unwrap();
        assert!(md.contains("| boot ms @250 MHz (stm32h563) | boot ms @320 MHz (0 WS, stated clock) |"), "{md}");
        assert!(md.contains("stm32h563 board timing profile's clock"), "{md}");
        // Only profiled cells: no stated-clock column at all.
        r.cells.truncate(1);
        assert_eq!(to_csv(&r).unwrap().lines().next(), Some("board,profile,algorithm,boot_cycles,boot_ms_stm32h563"));
    }

    /// Firmware without the result protocol: the table reads the function regions
    /// `sb_<part>_<row>` (the longest call), and the KATs column says the console judged it.
    #[test]
    fn rows_without_kat_records_are_measured_by_their_function_regions() {
        use crate::report::regions::{PerCall, RegionReport};
        let region = |name: &str, calls: u64, min: u64, max: u64, stack: Option<u32>| {
            let instructions = PerCall { total: max, min: max / 2, max: max / 2 };
            RegionReport::of_calls(name, calls, instructions, PerCall { total: min + max, min, max }, stack)
        };
        let mut r = report(vec![
            Column::StackMeasured,
            Column::HashCycles,
            Column::VerifyCycles,
            Column::BootCycles,
            Column::BootTime,
            Column::Kats,
        ]);
        r.cells[0].kats.clear();
        r.cells[0].clock_hz = Some(168_000_000);
        r.cells[0].cycle_params.insert("timing".into(), "stm32f407".into());
        r.cells[0].regions = vec![
            // A valid image's boot (the longest call) and a tampered one's.
            region("sb_boot_ed25519", 2, 1_000_000, 3_360_000, Some(1800)),
            region("sb_hash_ed25519", 2, 900_000, 900_000, Some(300)),
            // Never called: no figure, not a zero.
            region("sb_verify_ed25519", 0, 0, 0, None),
        ];
        let csv = to_csv(&r).unwrap();
        assert_eq!(
            csv,
            "board,profile,algorithm,stack_measured_bytes,hash_cycles,verify_cycles,boot_cycles,boot_ms_stm32f407,kats\n\
             mps2-an505,release,ed25519,1800,900000,-,3360000,20.000,-\n"
        );
        let md = to_markdown(&r).unwrap();
        assert!(
            md.contains("rows without KAT records: cycles, time and stack measured from the function regions"),
            "{md}"
        );
        // A KAT record wins over a region of the same part.
        r.cells[0].kats = vec![kat("ed25519/boot", "Ed25519", "boot", 3_200_000, 1700, true)];
        let csv = to_csv(&r).unwrap();
        assert!(csv.ends_with("mps2-an505,release,Ed25519,1700,900000,-,3200000,-,1/1\n"), "{csv}");
    }

    #[test]
    fn a_table_with_no_measured_cells_says_so() {
        // Rows from the ELF, but nothing measured (no KATs, no regions): the table says so.
        let mut unmeasured = report(vec![]);
        unmeasured.cells[0].kats.clear();
        let text = to_text(&unmeasured).unwrap();
        assert!(text.contains("no measured cells: no row has a KAT record"), "{text}");
        assert!(!to_text(&report(vec![])).unwrap().contains("no measured cells"));
        let mut r = report(vec![]);
        r.cells[0].table_rows.clear();
        let text = to_text(&r).unwrap();
        assert!(text.contains("no measured cells"), "{text}");
        assert!(text.contains("mps2-an505 / release: setup-error"), "{text}");
        let mut none = r.clone();
        none.table = None;
        assert_eq!(to_text(&none), None);
        assert_eq!(to_csv(&none), None);
    }

    #[test]
    fn clocks_print_in_their_unit() {
        assert_eq!(clock_text(320_000_000), "320 MHz");
        assert_eq!(clock_text(32_768), "32.768 kHz");
        assert_eq!(clock_text(1_000_000_000), "1 GHz");
    }
}
