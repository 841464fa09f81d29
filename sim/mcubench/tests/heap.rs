//! Heap measurement on real firmware under QEMU: firmware/c/heap-test (built with
//! `-DMCUBENCH_HEAP`) mallocs known sizes; the reported per-operation heap and whole-run peak are
//! those sizes plus newlib-nano malloc's chunk overhead, and a `heap` budget gates the peak.
//!
//! The overhead bound: newlib-nano's `malloc(n)` takes a chunk of `align4(n) + 4` (padding that
//! keeps the returned pointer 8-byte aligned) `+ 4` (the chunk's size header) bytes from `_sbrk`,
//! plus up to 7 bytes once to align the first chunk. So a block of `n` (a multiple of 4) moves the
//! break by `n + 8` to `n + 15`: we assert `n <= heap < n + 16` per block.

// Full test tier: needs QEMU and/or the Arm GCC toolchain (bash ci/setup.sh).
#![cfg(feature = "full")]

mod common;

use std::process::Output;

use mcubench::judge::verdict::Outcome;
use mcubench::report::{CellReport, RunReport};

const PER_BLOCK_OVERHEAD: u32 = 16;

fn text(out: &Output) -> String {
    format!("{}{}", String::from_utf8_lossy(&out.stdout), String::from_utf8_lossy(&out.stderr))
}

fn heap_run() -> RunReport {
    let yaml = format!(
        "name: heap\nfirmware: {{ elf: {} }}\nboards: [mps2-an386]\n",
        common::c_firmware("heap-test").display()
    );
    common::run(&common::scenario(&yaml))
}

fn heap_cell() -> (CellReport, String) {
    let report = heap_run();
    let table = report.to_table();
    (common::only_cell(report), table)
}

fn kat_heap(cell: &CellReport, id: &str) -> Option<u32> {
    cell.kats.iter().find(|k| k.id == id).unwrap_or_else(|| panic!("no KAT {id}")).heap
}

#[test]
fn c_heap_per_operation_and_peak_are_the_mallocs_plus_chunk_overhead() {
    let (cell, table) = heap_cell();
    assert_eq!(cell.verdict.outcome, Outcome::Pass, "{}", cell.verdict.message);
    // Before the first malloc the firmware has no heap to report.
    assert_eq!(kat_heap(&cell, "heap/none"), None);
    let one = kat_heap(&cell, "heap/3000").expect("heap reported");
    assert!((3000..3000 + PER_BLOCK_OVERHEAD).contains(&one), "malloc(3000) took {one} B");
    // Served from the chunk freed by heap/3000: the break does not move.
    assert_eq!(kat_heap(&cell, "heap/1000-reuse"), Some(0));
    let two = kat_heap(&cell, "heap/2x4000").expect("heap reported");
    assert!((8000..8000 + 2 * PER_BLOCK_OVERHEAD).contains(&two), "2 x malloc(4000) took {two} B");
    // Refused by _sbrk (more than the room below the stack reserve): malloc returned NULL (the
    // KAT's `out` says so, or it fails) and nothing was taken.
    assert_eq!(kat_heap(&cell, "heap/refused"), Some(0));
    // newlib-nano never gives memory back to _sbrk, so the peak is the sum of the growths.
    let peak = cell.heap_peak.expect("end record carries heap");
    assert_eq!(peak, one + two, "whole-run peak vs per-operation growths");
    assert!((11000..11000 + 3 * PER_BLOCK_OVERHEAD).contains(&peak), "peak {peak} B");
    eprintln!("heap-test: heap/3000 {one} B, heap/2x4000 {two} B, peak {peak} B\n{table}");

    // The heap shows in the table (a column and a per-KAT table) because this cell has it.
    assert!(table.lines().next().unwrap().contains("heap B"), "{table}");
    assert!(table.contains("heap B per KAT operation"), "{table}");
    let json = RunReport {
        schema: "mcubench-run/1".into(),
        tool_version: "x".into(),
        scenario: "heap".into(),
        table: None,
        cells: vec![cell],
    }
    .to_json();
    assert!(json.contains(&format!("\"heap_peak\": {peak}")), "{json}");
    assert!(json.contains(&format!("\"heap\": {one}")), "{json}");
}

#[test]
fn firmware_without_heap_measurement_reports_none_and_shows_no_heap() {
    let elf = common::c_firmware("kat-crc32");
    let out = common::mcubench()
        .args(["run", "--board", "mps2-an386", "--format", "json", "--elf"])
        .arg(&elf)
        .output()
        .unwrap();
    assert_eq!(out.status.code(), Some(0), "{}", text(&out));
    let report = RunReport::from_json(&String::from_utf8_lossy(&out.stdout)).unwrap();
    let cell = &report.cells[0];
    assert_eq!(cell.heap_peak, None);
    assert!(cell.kats.iter().all(|k| k.heap.is_none()));
    assert!(!String::from_utf8_lossy(&out.stdout).contains("heap"));
    assert!(!report.to_table().contains("heap"), "{}", report.to_table());
}

#[test]
fn a_heap_budget_gates_the_peak() {
    let elf = common::c_firmware("heap-test");
    let run = |budget: &str| {
        common::mcubench()
            .args(["run", "--quiet", "--board", "mps2-an386", "--heap-budget", budget, "--elf"])
            .arg(&elf)
            .output()
            .unwrap()
    };
    let ok = run("16 KiB");
    assert_eq!(ok.status.code(), Some(0), "{}", text(&ok));
    let over = run("4 KiB");
    assert_eq!(over.status.code(), Some(3), "{}", text(&over));
    assert!(text(&over).contains("budget: heap 11"), "{}", text(&over));
    assert!(text(&over).contains("exceeds the budget of 4096 B"), "{}", text(&over));
}

#[test]
fn a_heap_budget_on_firmware_that_reports_no_heap_is_unknown() {
    let out = common::mcubench()
        .args(["run", "--quiet", "--board", "mps2-an386", "--heap-budget", "1 MiB", "--elf"])
        .arg(common::c_firmware("kat-crc32"))
        .output()
        .unwrap();
    assert_eq!(out.status.code(), Some(3), "{}", text(&out));
    assert!(text(&out).contains("budget: heap unknown (the firmware reported no heap peak"), "{}", text(&out));
}

#[test]
fn diff_shows_heap_when_both_reports_have_it() {
    let dir = tempfile::tempdir().unwrap();
    let head = dir.path().join("head.json");
    let out = common::mcubench()
        .args(["run", "--quiet", "--board", "mps2-an386", "--format", "json", "--json-output"])
        .arg(&head)
        .arg("--elf")
        .arg(common::c_firmware("heap-test"))
        .output()
        .unwrap();
    assert_eq!(out.status.code(), Some(0), "{}", text(&out));
    // A base whose peak and one KAT's heap were 1000 B smaller.
    let mut base = RunReport::from_json(&std::fs::read_to_string(&head).unwrap()).unwrap();
    let cell = &mut base.cells[0];
    cell.heap_peak = cell.heap_peak.map(|h| h - 1000);
    let kat = cell.kats.iter_mut().find(|k| k.id == "heap/3000").unwrap();
    kat.heap = kat.heap.map(|h| h - 1000);
    let base_path = dir.path().join("base.json");
    std::fs::write(&base_path, base.to_json()).unwrap();

    let out = common::mcubench().args(["diff", "--format", "json"]).arg(&base_path).arg(&head).output().unwrap();
    assert_eq!(out.status.code(), Some(0), "{}", text(&out));
    let d: serde_json::Value = serde_json::from_slice(&out.stdout).unwrap();
    let deltas = d["deltas"].as_array().unwrap();
    for metric in ["heap", "heap heap/3000"] {
        let delta = deltas.iter().find(|x| x["metric"] == metric).unwrap_or_else(|| panic!("no {metric} delta: {d}"));
        assert_eq!(delta["change"], 1000, "{delta}");
    }

    // With `regressions: { heap: 512 B }` both growths are regressions: exit 4.
    let limits = dir.path().join("limits.yaml");
    std::fs::write(
        &limits,
        "name: heap-test\nfirmware: { elf: x.elf }\nboards: [mps2-an386]\nregressions: { heap: 512 B }\n",
    )
    .unwrap();
    std::fs::write(dir.path().join("x.elf"), b"").unwrap();
    let out = common::mcubench()
        .args(["diff", "--format", "json", "--scenario"])
        .arg(&limits)
        .arg(&base_path)
        .arg(&head)
        .output()
        .unwrap();
    assert_eq!(out.status.code(), Some(4), "{}", text(&out));
    let d: serde_json::Value = serde_json::from_slice(&out.stdout).unwrap();
    for metric in ["heap", "heap heap/3000"] {
        let delta = d["deltas"].as_array().unwrap().iter().find(|x| x["metric"] == metric).unwrap();
        assert!(delta["regression"].is_string(), "{metric} not a regression: {delta}");
    }
}

#[test]
fn rust_tracking_heap_reports_exact_requested_bytes() {
    // firmware/heap: a bump arena wrapped in mcubench_support::TrackingHeap (feature `heap`);
    // counts are of requested bytes, so they are exact. ARMv7E-M and ARMv6-M (no atomic RMW).
    let yaml = format!(
        "name: heap-rust\nfirmware: {{ cargo: {} }}\nboards: [mps2-an386, microbit]\nprofiles: {{ speed: {{ opt-level: 3 }} }}\n",
        common::repo().join("firmware/heap").display()
    );
    let report = common::run(&common::scenario(&yaml));
    assert_eq!(report.cells.len(), 2);
    for cell in &report.cells {
        let at = format!("{} / {}", cell.board, cell.profile);
        assert_eq!(cell.verdict.outcome, Outcome::Pass, "{at}: {}", cell.verdict.message);
        assert_eq!(kat_heap(cell, "heap/none"), None, "{at}");
        assert_eq!(kat_heap(cell, "heap/vec-3000"), Some(3000), "{at}");
        // Not 3000: the peak-since marker starts again at each operation.
        assert_eq!(kat_heap(cell, "heap/vec-1000"), Some(1000), "{at}");
        // 500 B were in use when the operation started: only the 4000 it took count.
        assert_eq!(kat_heap(cell, "heap/held-500-take-4000"), Some(4000), "{at}");
        assert_eq!(cell.heap_peak, Some(4500), "{at}");
    }
}

#[test]
fn heap_is_in_the_markdown_summary_and_the_openmetrics_only_when_reported() {
    let report = heap_run();
    let peak = report.cells[0].heap_peak.expect("heap reported");
    let markdown = mcubench::report::markdown::to_markdown(&report, None);
    assert!(markdown.contains("| stack B | heap B | budget |"), "{markdown}");
    assert!(markdown.contains(&format!(" | {peak} | ")), "{markdown}");
    let metrics = mcubench::report::openmetrics::to_openmetrics(&report);
    assert!(
        metrics.contains(&format!(
            "mcubench_heap_peak_bytes{{scenario=\"heap\",board=\"mps2-an386\",profile=\"prebuilt\"}} {peak}\n"
        )),
        "{metrics}"
    );
    let kat_heap = |id: &str| {
        metrics.lines().any(|l| l.starts_with("mcubench_kat_heap_bytes{") && l.contains(&format!("kat=\"{id}\"")))
    };
    // The operation before the first malloc has no heap figure; the 3000 B one has.
    assert!(kat_heap("heap/3000") && !kat_heap("heap/none"), "{metrics}");
    // A firmware without heap: neither has it.
    let failing = RunReport::from_json(include_str!("data/failing-report.json")).unwrap();
    assert!(!mcubench::report::markdown::to_markdown(&failing, None).contains("heap B"));
    assert!(!mcubench::report::openmetrics::to_openmetrics(&failing).contains("heap"));
}
