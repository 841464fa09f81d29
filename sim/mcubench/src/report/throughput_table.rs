//! The throughput table (`table: { kind: throughput }`), from report fields only: per board,
//! profile and algorithm, the cycles per byte of each message size (KAT `<alg>/<size>` with
//! `bytes=`: its `cycles_per_byte`) and the throughput at the cell's clock (`bytes / time_us`,
//! MB/s = 10^6 B/s); then, per operation of the algorithms without message sizes (signatures,
//! key exchange: `ed25519/sign`), its cycles, measured stack and time. CSV is one line per KAT
//! (long format). Guide: `docs/src/guide/throughput.md`.
//!
//! Firmware that writes no KAT records (a vendor's benchmark judged by its console) gets the
//! same table from its function regions ([`entries`]).

use std::borrow::Cow;

use crate::config::table::TableSpec;
use crate::judge::protocol::KatResult;
use crate::report::tables::{Table, clock_text};
use crate::report::{CellReport, CountSource, KatReport, RegionReport, RunReport};

/// The cells a table shows: not those that stopped on a setup error (among them, a run whose
/// table named a row or size the firmware did not measure: its KATs answer another question).
pub fn shown(report: &RunReport) -> impl Iterator<Item = &CellReport> {
    report.cells.iter().filter(|c| c.verdict.outcome != crate::judge::verdict::Outcome::SetupError)
}

/// The part of a KAT id before the first `/`: the table's row key (`sha256`, `ed25519`).
pub fn row_key(id: &str) -> &str {
    id.split_once('/').map_or(id, |(a, _)| a)
}

/// `16 B`, `1 KiB`, `16 KiB`.
pub fn size_text(bytes: u64) -> String {
    if bytes >= 1024 && bytes.is_multiple_of(1024) { format!("{} KiB", bytes / 1024) } else { format!("{bytes} B") }
}

/// What a cell's table rows are made of: its KAT records, or, when the firmware wrote none, its
/// function regions (`regions:`) in their place, each figure from the region's longest
/// completed call: a region with bytes per call (`bytes: N` or `bytes: argN`) is a sized row,
/// one entry per size (`<region>/<bytes>`, `cycles_per_byte` of that call), and a region
/// without one a per-operation row (`<region>/call`); a region with `as: <row>/<operation>`
/// takes that row (and, unsized, that entry) instead, so several functions make one row's
/// operation columns. The stack is the stack probe's bytes below the call's entry SP (0 without
/// the probe). The console verdict judged such a run, so each entry counts as passed.
pub fn entries(cell: &CellReport) -> Cow<'_, [KatReport]> {
    if !cell.kats.is_empty() {
        return Cow::Borrowed(&cell.kats);
    }
    let mut out = Vec::new();
    for r in cell.regions.iter().filter(|r| r.calls > 0) {
        let max = |c: &Option<crate::report::PerCall>| c.as_ref().map(|c| c.max);
        let (row, op) = match r.table_entry.as_deref().and_then(|e| e.split_once('/')) {
            Some((row, op)) => (row, Some(op)),
            None => (r.name.as_str(), None),
        };
        let sized = |id: String, bytes: u64, instructions: u64, cycles: Option<u64>| {
            region_entry(cell, r, id, (row, op.unwrap_or("region")), Some(bytes), (instructions, cycles))
        };
        if !r.by_size.is_empty() {
            for s in &r.by_size {
                out.push(sized(format!("{row}/{}", s.bytes), s.bytes, s.instructions.max, max(&s.cycles)));
            }
        } else if let Some(total) = r.bytes.filter(|&b| b > 0) {
            let per_call = total / r.calls;
            out.push(sized(format!("{row}/{per_call}"), per_call, r.instructions.max, max(&r.cycles)));
        } else {
            out.push(call_entry(cell, r));
        }
    }
    Cow::Owned(out)
}

/// Region `r`'s longest completed call as one table entry: `<region>/call` (operation `call`),
/// or its `as: <row>/<operation>`. Also the secure-boot table's figure for a row measured by its
/// region.
pub(crate) fn call_entry(cell: &CellReport, r: &RegionReport) -> KatReport {
    let (id, row, op) = match r.table_entry.as_deref().and_then(|e| Some((e, e.split_once('/')?))) {
        Some((entry, (row, op))) => (entry.to_string(), row, op),
        None => (format!("{}/call", r.name), r.name.as_str(), "call"),
    };
    region_entry(cell, r, id, (row, op), None, (r.instructions.max, r.cycles.as_ref().map(|c| c.max)))
}

/// A table entry from region `r` (see [`entries`]) for its row `alg` and operation `op`, with
/// the call's instructions and cycles; `bytes` per call for a sized entry.
fn region_entry(
    cell: &CellReport,
    r: &RegionReport,
    id: String,
    (alg, op): (&str, &str),
    bytes: Option<u64>,
    (instructions, cycles): (u64, Option<u64>),
) -> KatReport {
    KatReport {
        id,
        alg: alg.into(),
        op: op.into(),
        result: KatResult::Pass,
        instructions,
        instructions_source: CountSource::Plugin,
        cycles,
        ticks: 0,
        stack: r.stack_probe_bytes.unwrap_or(0),
        stack_lowest: r.stack_lowest,
        heap: None,
        bytes,
        cycles_per_byte: crate::report::per_byte(cycles, bytes),
        stack_probe_bytes: r.stack_probe_bytes,
        time_us: cell.time_us(cycles),
    }
}

/// The KATs of a sized measurement (`bytes=` > 0) and the rest, of one cell.
fn sized(k: &KatReport) -> bool {
    k.bytes.is_some_and(|b| b > 0)
}

/// After a run: every row and size the scenario's table names must be something the firmware
/// measured. `Err` lists what it has (a typo, or firmware built without that algorithm).
pub fn check(spec: &TableSpec, kats: &[KatReport]) -> Result<(), String> {
    let mut rows: Vec<&str> = Vec::new();
    for k in kats {
        if !rows.contains(&row_key(&k.id)) {
            rows.push(row_key(&k.id));
        }
    }
    if let Some(missing) = spec.rows.iter().find(|r| !rows.contains(&r.as_str())) {
        return Err(format!(
            "table.rows: `{missing}` is not an algorithm the firmware measured (no KAT id `{missing}/...`); it \
             measured: {}",
            if rows.is_empty() { "nothing".to_string() } else { rows.join(", ") }
        ));
    }
    let mut sizes: Vec<u64> = kats.iter().filter(|k| sized(k)).filter_map(|k| k.bytes).collect();
    sizes.sort_unstable();
    sizes.dedup();
    if let Some(missing) = spec.sizes.iter().find(|s| !sizes.contains(s)) {
        return Err(format!(
            "table.sizes: `{}` is not a message size the firmware measured (no KAT with `bytes={missing}`); it \
             measured: {}",
            size_text(*missing),
            if sizes.is_empty() {
                "no sizes".to_string()
            } else {
                sizes.iter().map(|&s| size_text(s)).collect::<Vec<_>>().join(", ")
            }
        ));
    }
    Ok(())
}

/// Where a cell's time and throughput come from: its own clock (board timing profile or
/// `model.clock`), else the table's stated clock at 0 wait states, else none.
#[derive(Debug, Clone, PartialEq)]
struct Clock {
    hz: u64,
    /// `stm32h563`, `model.clock` or `0 WS, stated clock`.
    label: String,
    /// Whether the cell's KATs carry `time_us` at this clock (else: cycles at the stated clock).
    cell: bool,
}

impl Clock {
    fn of(cell: &CellReport, spec: &TableSpec) -> Option<Clock> {
        match cell.clock_hz.filter(|&h| h > 0) {
            Some(hz) => Some(Clock {
                hz,
                label: cell.cycle_params.get("timing").cloned().unwrap_or_else(|| "model.clock".into()),
                cell: true,
            }),
            None => spec.clock_hz.map(|hz| Clock { hz, label: "0 WS, stated clock".into(), cell: false }),
        }
    }

    fn key(&self) -> String {
        self.label.replace(|c: char| !c.is_ascii_alphanumeric(), "_").trim_matches('_').to_string()
    }

    fn micros(&self, k: &KatReport) -> Option<f64> {
        if self.cell { k.time_us } else { crate::report::time_us(k.cycles, Some(self.hz)) }
    }

    fn note(&self) -> String {
        if self.cell {
            format!(
                "@{} ({}): time_us of the KAT (estimated cycles at that clock, with the memory system of the \
                 cell's model)",
                clock_text(self.hz),
                self.label
            )
        } else {
            format!(
                "@{} (0 WS, stated clock): cycles at table.clock with 0 wait states, not a board timing profile",
                clock_text(self.hz)
            )
        }
    }
}

fn clocks(report: &RunReport, spec: &TableSpec) -> Vec<Clock> {
    let mut out: Vec<Clock> = Vec::new();
    for c in shown(report) {
        if let Some(k) = Clock::of(c, spec)
            && !out.contains(&k)
        {
            out.push(k);
        }
    }
    out
}

/// Row keys of a cell in KAT order, filtered by `table.rows` (and in its order when given).
fn rows_of<'a>(kats: &'a [KatReport], spec: &TableSpec, want: impl Fn(&str) -> bool) -> Vec<&'a str> {
    let mut seen: Vec<&str> = Vec::new();
    for k in kats {
        let r = row_key(&k.id);
        if !seen.contains(&r) && want(r) {
            seen.push(r);
        }
    }
    if spec.rows.is_empty() {
        seen
    } else {
        spec.rows.iter().filter_map(|r| seen.iter().find(|s| **s == r.as_str()).copied()).collect()
    }
}

fn has_sizes(kats: &[KatReport], row: &str) -> bool {
    kats.iter().any(|k| row_key(&k.id) == row && sized(k))
}

fn one(v: f64) -> String {
    format!("{v:.1}")
}

/// The note for cells whose rows are function regions ([`entries`]), if any cell's are.
pub(crate) fn regions_note(report: &RunReport) -> Option<String> {
    shown(report).any(|c| c.kats.is_empty() && c.regions.iter().any(|r| r.calls > 0)).then(|| {
        "cells without KAT records: rows from their function regions (regions[]; `<region>/<bytes per call>` \
         sized, `<region>/call` per operation, or the region's `as: <row>/<operation>`), each figure the region's \
         longest completed call, stack B the stack probe's bytes below the call's entry SP; the console verdict \
         judged the run"
            .to_string()
    })
}

fn models(report: &RunReport) -> Vec<String> {
    let mut models: Vec<String> = Vec::new();
    for c in &report.cells {
        let m = format!("cycles are estimates, {}: {}", c.board, c.cycle_model.as_deref().unwrap_or("no cycle model"));
        if !models.contains(&m) {
            models.push(m);
        }
    }
    models
}

/// The sizes shown: `table.sizes`, else every size any cell measured, ascending.
fn sizes(report: &RunReport, spec: &TableSpec) -> Vec<u64> {
    if !spec.sizes.is_empty() {
        return spec.sizes.clone();
    }
    let mut s: Vec<u64> = shown(report)
        .flat_map(|c| entries(c).iter().filter(|k| sized(k)).filter_map(|k| k.bytes).collect::<Vec<_>>())
        .collect();
    s.sort_unstable();
    s.dedup();
    s
}

/// Text and Markdown: the cycles-per-byte table, then the per-operation table.
pub fn sections(report: &RunReport, spec: &TableSpec) -> Vec<Table> {
    vec![per_byte(report, spec), per_operation(report, spec)]
}

fn per_byte(report: &RunReport, spec: &TableSpec) -> Table {
    let sizes = sizes(report, spec);
    let clocks = clocks(report, spec);
    let largest = sizes.iter().copied().max();
    let mut headers: Vec<String> = ["board", "profile", "algorithm"].map(String::from).to_vec();
    headers.extend(sizes.iter().map(|&s| size_text(s)));
    if let Some(l) = largest {
        headers.extend(clocks.iter().map(|c| format!("MB/s @{} ({}), {}", clock_text(c.hz), c.label, size_text(l))));
    }
    let mut keys: Vec<String> = ["board", "profile", "algorithm"].map(String::from).to_vec();
    keys.extend(sizes.iter().map(|s| format!("cpb_{s}")));
    keys.extend(clocks.iter().map(|c| format!("mb_per_s_{}", c.key())));
    let mut rows = Vec::new();
    for cell in shown(report) {
        let clock = Clock::of(cell, spec);
        let kats = entries(cell);
        for row in rows_of(&kats, spec, |r| has_sizes(&kats, r)) {
            let kat = |n: u64| kats.iter().find(|k| row_key(&k.id) == row && k.bytes == Some(n) && sized(k));
            let name = kats.iter().find(|k| row_key(&k.id) == row && sized(k)).map_or(row, |k| k.alg.as_str());
            let mut r = vec![cell.board.clone(), cell.profile.clone(), name.to_string()];
            r.extend(sizes.iter().map(|&n| kat(n).and_then(|k| k.cycles_per_byte).map_or("-".into(), one)));
            if let Some(l) = largest {
                for c in &clocks {
                    let v = (Some(c) == clock.as_ref())
                        .then(|| kat(l))
                        .flatten()
                        .and_then(|k| c.micros(k).filter(|&us| us > 0.0).map(|us| l as f64 / us));
                    r.push(v.map_or("-".into(), |v| format!("{v:.2}")));
                }
            }
            rows.push(r);
        }
    }
    let mut notes = vec![
        "cells: cycles per byte (cycles_per_byte of KAT `<alg>/<size>`: its estimated cycles / bytes), one call \
         over a message in RAM, key setup not included"
            .to_string(),
    ];
    notes.extend(clocks.iter().map(|c| format!("MB/s {}: bytes / time_us of the largest size", c.note())));
    notes.extend(regions_note(report));
    notes.extend(models(report));
    Table {
        title: "throughput table (cycles per byte by message size)".into(),
        headers,
        keys,
        rows,
        notes,
        text_columns: 3,
    }
}

fn per_operation(report: &RunReport, spec: &TableSpec) -> Table {
    let clocks = clocks(report, spec);
    let mut headers: Vec<String> =
        ["board", "profile", "algorithm", "operation", "cycles", "stack B"].map(String::from).to_vec();
    headers.extend(clocks.iter().map(|c| format!("ms @{} ({})", clock_text(c.hz), c.label)));
    let mut keys: Vec<String> =
        ["board", "profile", "algorithm", "operation", "cycles", "stack_bytes"].map(String::from).to_vec();
    keys.extend(clocks.iter().map(|c| format!("ms_{}", c.key())));
    let mut rows = Vec::new();
    for cell in shown(report) {
        let clock = Clock::of(cell, spec);
        let kats = entries(cell);
        for row in rows_of(&kats, spec, |r| !has_sizes(&kats, r)) {
            for k in kats.iter().filter(|k| row_key(&k.id) == row) {
                let mut r = vec![
                    cell.board.clone(),
                    cell.profile.clone(),
                    k.alg.clone(),
                    k.op.clone(),
                    k.cycles.map_or("-".into(), |c| c.to_string()),
                    k.stack.to_string(),
                ];
                for c in &clocks {
                    let v = (Some(c) == clock.as_ref()).then(|| c.micros(k)).flatten();
                    r.push(v.map_or("-".into(), |us| format!("{:.3}", us / 1e3)));
                }
                rows.push(r);
            }
        }
    }
    let mut notes = vec![
        "per operation: the KAT's estimated cycles and painted stack (stack B, the measurement's trampoline and \
         closure frames included); every operation is checked against its vector"
            .to_string(),
    ];
    notes.extend(clocks.iter().map(|c| format!("ms {}", c.note())));
    notes.extend(regions_note(report));
    notes.extend(models(report));
    Table {
        title: "per-operation cycles (signatures, key exchange)".into(),
        headers,
        keys,
        rows,
        notes,
        text_columns: 4,
    }
}

/// CSV: one line per KAT of the table's rows (sized and per operation), every number a report
/// field: `bytes`, `cycles`, `cycles_per_byte`, `time_us`, `stack`.
pub fn long(report: &RunReport, spec: &TableSpec) -> Table {
    let keys: Vec<String> = [
        "board",
        "profile",
        "algorithm",
        "id",
        "op",
        "bytes",
        "cycles",
        "cycles_per_byte",
        "time_us",
        "clock",
        "stack_bytes",
        "result",
    ]
    .map(String::from)
    .to_vec();
    let sizes = sizes(report, spec);
    let mut rows = Vec::new();
    for cell in shown(report) {
        let clock = Clock::of(cell, spec);
        let kats = entries(cell);
        for row in rows_of(&kats, spec, |_| true) {
            let sized_row = has_sizes(&kats, row);
            for k in kats.iter().filter(|k| row_key(&k.id) == row) {
                // A sized row shows its sized KATs of the chosen sizes (not its official vectors).
                if sized_row && !(sized(k) && k.bytes.is_some_and(|b| sizes.contains(&b))) {
                    continue;
                }
                rows.push(vec![
                    cell.board.clone(),
                    cell.profile.clone(),
                    k.alg.clone(),
                    k.id.clone(),
                    k.op.clone(),
                    k.bytes.map_or(String::new(), |b| b.to_string()),
                    k.cycles.map_or(String::new(), |c| c.to_string()),
                    k.cycles_per_byte.map_or(String::new(), |c| format!("{c:.3}")),
                    clock.as_ref().and_then(|c| c.micros(k)).map_or(String::new(), |us| format!("{us:.3}")),
                    clock.as_ref().map_or(String::new(), |c| format!("{} {}", c.hz, c.label)),
                    k.stack.to_string(),
                    format!("{:?}", k.result).to_lowercase(),
                ]);
            }
        }
    }
    Table { title: "throughput".into(), headers: keys.clone(), keys, rows, notes: vec![], text_columns: 5 }
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::config::table::TableKind;
    use crate::judge::protocol::KatResult;
    use crate::judge::verdict::{Outcome, Verdict};
    use crate::report::{CountSource, SCHEMA, tables};

    fn kat(id: &str, alg: &str, op: &str, cycles: u64, bytes: Option<u64>) -> KatReport {
        KatReport {
            id: id.into(),
            alg: alg.into(),
            op: op.into(),
            result: KatResult::Pass,
            instructions: cycles / 2,
            instructions_source: CountSource::Plugin,
            cycles: Some(cycles),
            ticks: 0,
            stack: 100,
            stack_lowest: None,
            heap: None,
            bytes,
            cycles_per_byte: bytes.map(|b| cycles as f64 / b as f64),
            stack_probe_bytes: None,
            time_us: None,
        }
    }

    fn report(clock: Option<u64>) -> RunReport {
        let board = crate::config::board::Board::find("mps2-an505").unwrap();
        let mut cell = CellReport::unrun(0, board, "release");
        cell.verdict = Verdict { outcome: Outcome::Pass, message: String::new() };
        cell.cycle_model = Some("cortex-m33 model".into());
        cell.kats = vec![
            kat("sha256/16B", "SHA-256", "hash", 1600, Some(16)),
            kat("sha256/1KiB", "SHA-256", "hash", 20480, Some(1024)),
            kat("sha256/fips180-abc", "SHA-256", "hash", 1500, None),
            kat("ed25519/sign", "Ed25519", "sign", 500_000, None),
        ];
        if let Some(hz) = clock {
            cell.clock_hz = Some(hz);
            cell.cycle_params.insert("timing".into(), "stm32h563".into());
            for k in &mut cell.kats {
                k.time_us = crate::report::time_us(k.cycles, Some(hz));
            }
        }
        RunReport {
            schema: SCHEMA.into(),
            tool_version: "0".into(),
            scenario: "throughput".into(),
            table: Some(TableSpec {
                kind: TableKind::Throughput,
                clock_hz: None,
                rows: vec![],
                sizes: vec![],
                columns: vec![],
            }),
            cells: vec![cell],
        }
    }

    #[test]
    fn cycles_per_byte_and_throughput_come_from_kat_fields() {
        let text = tables::to_text(&report(Some(250_000_000))).unwrap();
        // 20480 cycles / 1024 B = 20.0 cpb; 1024 B in 81.92 us = 12.50 MB/s.
        assert!(text.contains("throughput table (cycles per byte by message size)"), "{text}");
        let line = text.lines().find(|l| l.contains("SHA-256")).unwrap();
        assert_eq!(
            line.split_whitespace().collect::<Vec<_>>(),
            ["mps2-an505", "release", "SHA-256", "100.0", "20.0", "12.50"]
        );
        assert!(text.contains("MB/s @250 MHz (stm32h563), 1 KiB"), "{text}");
        let op = text.lines().find(|l| l.contains("Ed25519")).unwrap();
        assert_eq!(
            op.split_whitespace().collect::<Vec<_>>(),
            ["mps2-an505", "release", "Ed25519", "sign", "500000", "100", "2.000"]
        );
        // The official vector of a sized row is in neither table.
        assert!(!text.contains("1500"), "{text}");
    }

    #[test]
    fn without_a_clock_there_is_no_time_column_and_csv_is_long() {
        let r = report(None);
        let md = tables::to_markdown(&r).unwrap();
        assert!(!md.contains("MB/s"), "{md}");
        assert!(md.contains("| mps2-an505 | release | SHA-256 | 100.0 | 20.0 |"), "{md}");
        let csv = tables::to_csv(&r).unwrap();
        assert_eq!(
            csv,
            "board,profile,algorithm,id,op,bytes,cycles,cycles_per_byte,time_us,clock,stack_bytes,result\n\
             mps2-an505,release,SHA-256,sha256/16B,hash,16,1600,100.000,,,100,pass\n\
             mps2-an505,release,SHA-256,sha256/1KiB,hash,1024,20480,20.000,,,100,pass\n\
             mps2-an505,release,Ed25519,ed25519/sign,sign,,500000,,,,100,pass\n"
        );
    }

    #[test]
    fn rows_and_sizes_not_measured_are_errors_listing_what_was() {
        let r = report(None);
        let mut spec = r.table.clone().unwrap();
        assert_eq!(check(&spec, &r.cells[0].kats), Ok(()));
        spec.rows = vec!["sha384".into()];
        let err = check(&spec, &r.cells[0].kats).unwrap_err();
        assert_eq!(
            err,
            "table.rows: `sha384` is not an algorithm the firmware measured (no KAT id `sha384/...`); it measured: \
             sha256, ed25519"
        );
        spec.rows.clear();
        spec.sizes = vec![16, 4096];
        let err = check(&spec, &r.cells[0].kats).unwrap_err();
        assert!(err.contains("`4 KiB` is not a message size the firmware measured"), "{err}");
        assert!(err.ends_with("it measured: 16 B, 1 KiB"), "{err}");
    }

    #[test]
    fn chosen_sizes_and_rows_in_their_order_and_no_cells_says_so() {
        let mut r = report(None);
        let spec = r.table.as_mut().unwrap();
        spec.sizes = vec![1024];
        spec.rows = vec!["ed25519".into(), "sha256".into()];
        let text = tables::to_text(&r).unwrap();
        let line = text.lines().find(|l| l.contains("SHA-256")).unwrap();
        assert_eq!(line.split_whitespace().collect::<Vec<_>>(), ["mps2-an505", "release", "SHA-256", "20.0"]);
        r.cells[0].kats.clear();
        let text = tables::to_text(&r).unwrap();
        assert!(text.contains("no measured cells"), "{text}");
        assert!(!text.contains("board"), "{text}");
        // A cell that stopped on a setup error (e.g. a row its firmware lacks) shows nothing.
        let mut r = report(None);
        r.cells[0].verdict.outcome = Outcome::SetupError;
        assert!(tables::to_text(&r).unwrap().contains("no measured cells"));
    }
}
