//! The profile table (`table: { kind: profiles }`), from report fields only: per board, build
//! profile and scheme (the KAT id before `/`, e.g. `ed25519`), the estimated Mcycles of each
//! operation (`ed25519/keygen`, `/sign`, `/verify`: the KAT's `cycles` / 10^6), the stack each
//! operation used (the KAT's painted `stack`), the cell's static RAM (.data + .bss) and flash,
//! and the heap the scheme's operations took (the KATs' `heap`, when the firmware reports it).
//! The profiles are the scenario's build profiles: real implementation choices (opt-level, a
//! crate's cfg that trades tables for code, another backend). Guide: `docs/src/guide/profiles.md`.
//! Firmware without KAT records gets a row per function region instead (operation `call`; see
//! [`entries`]).

use crate::config::table::TableSpec;
use crate::report::tables::Table;
use crate::report::throughput_table::{entries, row_key, shown};
use crate::report::{KatReport, RunReport};

fn op_key(id: &str) -> &str {
    id.split_once('/').map_or("", |(_, op)| op)
}

fn kib(bytes: u64) -> String {
    format!("{:.1}", bytes as f64 / 1024.0)
}

/// Schemes in KAT order (sized rows, i.e. throughput measurements, left out unless named).
fn schemes<'a>(kats: &'a [KatReport], spec: &TableSpec) -> Vec<&'a str> {
    let mut seen: Vec<&str> = Vec::new();
    for k in kats {
        let r = row_key(&k.id);
        if !seen.contains(&r) {
            seen.push(r);
        }
    }
    if spec.rows.is_empty() {
        let sized = |r: &str| kats.iter().any(|k| row_key(&k.id) == r && k.bytes.is_some_and(|b| b > 0));
        seen.into_iter().filter(|r| !sized(r)).collect()
    } else {
        spec.rows.iter().filter_map(|r| seen.iter().find(|s| **s == r.as_str()).copied()).collect()
    }
}

pub fn build(report: &RunReport, spec: &TableSpec) -> Table {
    // The operation columns: every operation of a shown scheme, in first-seen order.
    let mut ops: Vec<String> = Vec::new();
    for cell in shown(report) {
        let kats = entries(cell);
        for scheme in schemes(&kats, spec) {
            for k in kats.iter().filter(|k| row_key(&k.id) == scheme) {
                if !ops.iter().any(|o| o == op_key(&k.id)) {
                    ops.push(op_key(&k.id).to_string());
                }
            }
        }
    }
    let mut headers: Vec<String> = ["board", "profile", "scheme"].map(String::from).to_vec();
    let mut keys = headers.clone();
    headers.extend(ops.iter().map(|o| format!("{o} Mcycles")));
    keys.extend(ops.iter().map(|o| format!("{o}_mcycles")));
    headers.extend(ops.iter().map(|o| format!("{o} stack KiB")));
    keys.extend(ops.iter().map(|o| format!("{o}_stack_kib")));
    headers.extend(["static RAM KiB", "heap KiB", "flash KiB"].map(String::from));
    keys.extend(["static_ram_kib", "heap_kib", "flash_kib"].map(String::from));
    let mut rows = Vec::new();
    let mut heap_reported = false;
    for cell in shown(report) {
        let kats = entries(cell);
        for scheme in schemes(&kats, spec) {
            let kat = |op: &str| kats.iter().find(|k| row_key(&k.id) == scheme && op_key(&k.id) == op);
            let name = kat(op_key(kats.iter().find(|k| row_key(&k.id) == scheme).map_or("", |k| k.id.as_str())))
                .map_or(scheme, |k| k.alg.as_str());
            let mut r = vec![cell.board.clone(), cell.profile.clone(), name.to_string()];
            r.extend(
                ops.iter()
                    .map(|o| kat(o).and_then(|k| k.cycles).map_or("-".into(), |c| format!("{:.3}", c as f64 / 1e6))),
            );
            r.extend(ops.iter().map(|o| kat(o).map_or("-".into(), |k| kib(u64::from(k.stack)))));
            r.push(cell.ram_bytes().map_or("-".into(), kib));
            let heap = kats.iter().filter(|k| row_key(&k.id) == scheme).filter_map(|k| k.heap).max();
            heap_reported |= heap.is_some();
            r.push(heap.map_or("-".into(), |h| kib(u64::from(h))));
            r.push(cell.flash_bytes().map_or("-".into(), kib));
            rows.push(r);
        }
    }
    let mut notes = vec![
        "Mcycles: the operation KAT's estimated cycles / 10^6; stack: its painted stack (a lower bound of its \
         excursion, the measurement's trampoline and closure frames included); static RAM: .data + .bss of the \
         cell's ELF; flash: the whole firmware; KiB = 1024 B"
            .to_string(),
    ];
    notes.extend(crate::report::throughput_table::regions_note(report));
    if !heap_reported {
        notes.push("heap: `-`, the firmware reports no heap (it has no allocator, or does not measure it)".into());
    }
    let mut models: Vec<String> = Vec::new();
    for c in &report.cells {
        let m = format!("cycles are estimates, {}: {}", c.board, c.cycle_model.as_deref().unwrap_or("no cycle model"));
        if !models.contains(&m) {
            models.push(m);
        }
    }
    notes.extend(models);
    Table { title: "profile table (per build profile and scheme)".into(), headers, keys, rows, notes, text_columns: 3 }
}

#[cfg(test)]
mod tests {
    use crate::config::table::{TableKind, TableSpec};
    use crate::judge::protocol::KatResult;
    use crate::report::{CellReport, CountSource, KatReport, RunReport, SCHEMA, tables};

    /// A run report of `cells` with a profile table of every scheme.
    fn profiles_report(cells: Vec<CellReport>) -> RunReport {
        RunReport {
            schema: SCHEMA.into(),
            tool_version: "0".into(),
            scenario: "profiles".into(),
            table: Some(TableSpec {
                kind: TableKind::Profiles,
                clock_hz: None,
                rows: vec![],
                sizes: vec![],
                columns: vec![],
            }),
            cells,
        }
    }

    fn kat(id: &str, cycles: u64, stack: u32) -> KatReport {
        KatReport {
            id: id.into(),
            alg: "Ed25519".into(),
            op: id.rsplit('/').next().unwrap().into(),
            result: KatResult::Pass,
            instructions: cycles,
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

    #[test]
    fn one_row_per_profile_and_scheme_from_kat_fields() {
        let board = crate::config::board::Board::find("mps2-an386").unwrap();
        let mut cells = Vec::new();
        for (i, (profile, sign)) in [("speed", 1_500_000u64), ("size", 2_250_000)].into_iter().enumerate() {
            let mut c = CellReport::unrun(i, board, profile);
            c.verdict = crate::judge::verdict::Verdict {
                outcome: crate::judge::verdict::Outcome::Pass,
                message: String::new(),
            };
            c.kats = vec![
                kat("ed25519/keygen", 1_000_000, 2048),
                kat("ed25519/sign", sign, 3072),
                kat("ed25519/verify", 2_000_000, 4096),
                kat("sha256/1KiB", 1, 1),
            ];
            c.kats[3].bytes = Some(1024);
            cells.push(c);
        }
        let report = profiles_report(cells);
        let csv = tables::to_csv(&report).unwrap();
        assert_eq!(
            csv,
            "board,profile,scheme,keygen_mcycles,sign_mcycles,verify_mcycles,keygen_stack_kib,sign_stack_kib,\
             verify_stack_kib,static_ram_kib,heap_kib,flash_kib\n\
             mps2-an386,speed,Ed25519,1.000,1.500,2.000,2.0,3.0,4.0,-,-,-\n\
             mps2-an386,size,Ed25519,1.000,2.250,2.000,2.0,3.0,4.0,-,-,-\n"
        );
        let text = tables::to_text(&report).unwrap();
        assert!(text.contains("heap: `-`, the firmware reports no heap"), "{text}");
    }

    /// Firmware without KAT records, measured by function regions: those with `as:
    /// <row>/<operation>` make one row with operation columns, the others a row each (`call`).
    #[test]
    fn regions_with_a_table_entry_fill_one_row_per_scheme() {
        use crate::report::regions::{PerCall, RegionReport};
        let region = |name: &str, entry: Option<&str>, cycles: u64, stack: u32| RegionReport {
            table_entry: entry.map(String::from),
            ..RegionReport::of_calls(
                name,
                1,
                PerCall { total: cycles / 2, min: cycles / 2, max: cycles / 2 },
                PerCall { total: cycles, min: cycles, max: cycles },
                Some(stack),
            )
        };
        let board = crate::config::board::Board::find("mps2-an505").unwrap();
        let mut c = CellReport::unrun(0, board, "speed");
        c.verdict =
            crate::judge::verdict::Verdict { outcome: crate::judge::verdict::Outcome::Pass, message: String::new() };
        c.regions = vec![
            region("pqcrystals_dilithium3_ref_keypair", Some("ml-dsa-65/keygen"), 4_000_000, 40_960),
            region("pqcrystals_dilithium3_ref_signature", Some("ml-dsa-65/sign"), 9_000_000, 61_440),
            region("pqcrystals_dilithium3_ref_verify", Some("ml-dsa-65/verify"), 4_500_000, 43_008),
            region("randombytes", None, 5_000, 64),
        ];
        let report = profiles_report(vec![c]);
        assert_eq!(
            tables::to_csv(&report).unwrap(),
            "board,profile,scheme,keygen_mcycles,sign_mcycles,verify_mcycles,call_mcycles,keygen_stack_kib,\
             sign_stack_kib,verify_stack_kib,call_stack_kib,static_ram_kib,heap_kib,flash_kib\n\
             mps2-an505,speed,ml-dsa-65,4.000,9.000,4.500,-,40.0,60.0,42.0,-,-,-,-\n\
             mps2-an505,speed,randombytes,-,-,-,0.005,-,-,-,0.1,-,-,-\n"
        );
    }
}
