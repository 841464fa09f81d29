//! Per call and per byte, end to end under QEMU with the plugin: `firmware/c/percall` calls
//! `crc32` with 16, 64 and 256 bytes from `by_size`, twice with 64 bytes from `twice`, once from
//! `run` (a KAT, 9 bytes) and once from `main` (a marked KAT, 256 bytes); `crc32_64` processes 64
//! bytes per call. Function regions keep each call's values (one group per distinct value and
//! call site), `split: caller` separates the callers exactly, `bytes: 64` gives cycles per byte
//! = cycles / 64, and KATs with `bytes=` report cycles per byte.

// Full test tier: needs QEMU and the Arm GCC toolchain (bash ci/setup.sh).
#![cfg(feature = "full")]

mod common;

use mcubench::judge::verdict::Outcome;
use mcubench::report::{CellReport, RegionReport, RunReport};

const SCENARIO: &str = "name: percall
firmware: { elf: ELF }
boards: [mps2-an386]
regions: [{ name: crc32, split: caller }, { name: crc32_64, bytes: 64 }, twice]
";

fn percall() -> (CellReport, String) {
    let elf = common::c_firmware("percall");
    let report = common::run(&common::scenario(&SCENARIO.replace("ELF", &elf.display().to_string())));
    let table = report.to_table();
    // The JSON report reads back with every new field.
    let back = RunReport::from_json(&report.to_json()).unwrap();
    assert_eq!(back.cells[0].regions, report.cells[0].regions);
    (common::only_cell(report), table)
}

fn region<'a>(cell: &'a CellReport, name: &str) -> &'a RegionReport {
    cell.regions.iter().find(|r| r.name == name).unwrap_or_else(|| panic!("no region {name}"))
}

#[test]
fn per_call_values_grow_with_size_and_split_by_caller() {
    let (cell, table) = percall();
    eprintln!("{table}");
    assert_eq!(cell.verdict.outcome, Outcome::Pass, "{}", cell.verdict.message);
    let crc = region(&cell, "crc32");
    assert_eq!((crc.calls, crc.open, crc.per_call_dropped), (7, 0, 0));

    // by_size's three calls, in call order: one group each (distinct call sites and sizes), the
    // count growing with the size, exactly linearly (the loop is branch-free per bit).
    let by_size: Vec<_> = crc.per_call.iter().filter(|g| g.caller.as_deref() == Some("by_size")).collect();
    assert_eq!(by_size.len(), 3, "{:#?}", crc.per_call);
    let insns: Vec<u64> = by_size.iter().map(|g| g.instructions).collect();
    let cycles: Vec<u64> = by_size.iter().map(|g| g.cycles.expect("cycles")).collect();
    assert!(insns[0] < insns[1] && insns[1] < insns[2], "{insns:?}");
    assert!(cycles[0] < cycles[1] && cycles[1] < cycles[2], "{cycles:?}");
    let per_byte = (insns[1] - insns[0]) / 48;
    assert_eq!(insns[1] - insns[0], 48 * per_byte, "16 -> 64 bytes: {insns:?}");
    assert_eq!(insns[2] - insns[1], 192 * per_byte, "64 -> 256 bytes: {insns:?}");
    assert!(by_size.iter().all(|g| g.calls == 1 && g.bytes.is_none() && g.cycles_per_byte.is_none()));

    // twice: two call sites, 64 bytes each: the same values as by_size's 64-byte call.
    let twice: Vec<_> = crc.per_call.iter().filter(|g| g.caller.as_deref() == Some("twice")).collect();
    assert_eq!(twice.len(), 2, "{:#?}", crc.per_call);
    assert!(twice.iter().all(|g| g.instructions == insns[1] && g.cycles == Some(cycles[1])), "{twice:#?}");
    assert_ne!(twice[0].return_address, twice[1].return_address);

    // split: caller: every call in exactly one caller, with its own totals.
    let split: Vec<(Option<&str>, u64)> = crc.by_caller.iter().map(|c| (c.caller.as_deref(), c.calls)).collect();
    for expected in [(Some("by_size"), 3), (Some("twice"), 2), (Some("run"), 1), (Some("main"), 1)] {
        assert!(split.contains(&expected), "{split:?}");
    }
    assert_eq!(split.len(), 4, "{split:?}");
    let b = crc.by_caller.iter().find(|c| c.caller.as_deref() == Some("by_size")).unwrap();
    assert_eq!(
        (b.instructions.total, b.instructions.min, b.instructions.max),
        (insns.iter().sum(), insns[0], insns[2])
    );
    assert_eq!(b.cycles.unwrap().total, cycles.iter().sum::<u64>());
    let t = crc.by_caller.iter().find(|c| c.caller.as_deref() == Some("twice")).unwrap();
    assert_eq!((t.instructions.total, t.cycles.unwrap().total), (2 * insns[1], 2 * cycles[1]));
    assert_eq!(crc.by_caller.iter().map(|c| c.instructions.total).sum::<u64>(), crc.instructions.total);

    // Without `split`, no by_caller; a region called once has one group.
    let tw = region(&cell, "twice");
    assert!(tw.by_caller.is_empty() && tw.per_call.len() == 1 && tw.per_call[0].caller.as_deref() == Some("main"));

    assert!(table.contains("  ← by_size") && table.contains("  ← twice"), "{table}");
    assert!(table.contains("function region calls by distinct value"), "{table}");
}

#[test]
fn constant_bytes_per_call_give_cycles_per_byte_exactly() {
    let (cell, table) = percall();
    let r = region(&cell, "crc32_64");
    assert_eq!(r.calls, 3);
    let cycles = r.cycles.expect("cycles");
    // Same code path, same cost, from main (GCC unrolls main's loop: one group per call site).
    let g = &r.per_call[0];
    assert_eq!(r.per_call.iter().map(|g| g.calls).sum::<u64>(), 3);
    for other in &r.per_call {
        assert_eq!((other.instructions, other.cycles), (g.instructions, g.cycles), "{:#?}", r.per_call);
        assert_eq!((other.bytes, other.caller.as_deref()), (Some(64), Some("main")));
        assert_eq!(other.cycles_per_byte, Some(g.cycles.unwrap() as f64 / 64.0));
    }
    assert_eq!(cycles.total, 3 * g.cycles.unwrap());
    assert_eq!(r.bytes, Some(3 * 64));
    assert_eq!(r.cycles_per_byte, Some(cycles.total as f64 / 192.0));
    assert_eq!(r.cycles_per_byte, Some(cycles.min as f64 / 64.0), "cycles/64 exactly");
    // Its own CRC loop costs what crc32's 64-byte call costs, minus crc32's zero-length check.
    let crc64 = region(&cell, "crc32").per_call.iter().find(|g| g.caller.as_deref() == Some("twice")).unwrap();
    assert!(g.instructions.abs_diff(crc64.instructions) <= 4, "{} vs {}", g.instructions, crc64.instructions);
    assert!(table.contains("cycles/B"), "{table}");
    assert!(table.contains(&format!("{:.2}", r.cycles_per_byte.unwrap())), "{table}");
}

#[test]
fn kats_with_bytes_report_cycles_per_byte() {
    let (cell, table) = percall();
    assert_eq!(cell.verdict.outcome, Outcome::Pass, "{}", cell.verdict.message);
    let kat = |id: &str| cell.kats.iter().find(|k| k.id == id).unwrap_or_else(|| panic!("no KAT {id}"));
    // In region markers: exact counts, cycles, and cycles / 256.
    let marked = kat("crc32/256-marked");
    let cycles = marked.cycles.expect("a marked KAT has cycles");
    assert_eq!(marked.bytes, Some(256));
    assert_eq!(marked.cycles_per_byte, Some(cycles as f64 / 256.0));
    // The marked KAT's crc32 call is main's call in the function region: the KAT adds only the
    // marker overhead around it.
    let main_call = region(&cell, "crc32").per_call.iter().find(|g| g.caller.as_deref() == Some("main")).unwrap();
    assert!(marked.instructions > main_call.instructions && marked.instructions < main_call.instructions + 20);
    // mb_kat with m.bytes = 9: mb_measure's own region markers give cycles, and cycles / 9.
    let check = kat("crc32/check-123456789");
    let check_cycles = check.cycles.expect("mb_measure marks its operation");
    assert_eq!((check.bytes, check.cycles_per_byte), (Some(9), Some(check_cycles as f64 / 9.0)));
    // mb_kat with m.bytes = 0 writes no `bytes=`.
    assert_eq!(kat("percall/workload").bytes, None);
    assert!(table.contains("est. cycles per byte per KAT operation"), "{table}");
    assert!(table.contains(&format!("{:.2}", cycles as f64 / 256.0)), "{table}");
}

#[test]
fn the_rust_support_crate_reports_bytes_with_kat_bytes() {
    // firmware/heap's `heap/none` checksums 16 bytes and says so with Session::kat_bytes.
    let yaml = format!(
        "name: heap-rust\nfirmware: {{ cargo: {} }}\nboards: [mps2-an386]\nprofiles: {{ speed: {{ opt-level: 3 }} }}\n",
        common::repo().join("firmware/heap").display()
    );
    let cell = common::only_cell(common::run(&common::scenario(&yaml)));
    assert_eq!(cell.verdict.outcome, Outcome::Pass, "{}", cell.verdict.message);
    let k = cell.kats.iter().find(|k| k.id == "heap/none").unwrap();
    let cycles = k.cycles.expect("Rust KATs are marked");
    assert_eq!((k.bytes, k.cycles_per_byte), (Some(16), Some(cycles as f64 / 16.0)));
    assert!(cell.kats.iter().filter(|k| k.id != "heap/none").all(|k| k.bytes.is_none()));
}

/// `bytes: arg1` (crc32's length argument, r1 at entry) on QEMU 10, whose plugin reads
/// registers: each call's bytes are the length it was called with, cycles per byte follow, and
/// the counts are those of the same run without it. On QEMU 7.2 (plugin API v1, no register
/// reads) the cell is a setup error naming the QEMU version and what it needs.
#[test]
fn bytes_from_an_argument_register_on_qemu_10_and_a_setup_error_on_qemu_7_2() {
    let elf = common::c_firmware("percall");
    let yaml = |regions: &str| {
        format!("name: s\nfirmware: {{ elf: {} }}\nboards: [mps2-an386]\nregions: [{regions}]\n", elf.display())
    };
    let qemu10 = std::env::var_os("MCUBENCH_TEST_QEMU10")
        .map_or_else(|| std::path::PathBuf::from("/opt/qemu-10/usr/bin/qemu-system-arm"), Into::into);
    let on = |qemu: &std::path::Path, regions: &str| {
        let options = mcubench::RunOptions { jobs: 1, qemu: qemu.to_path_buf(), ..mcubench::RunOptions::default() };
        common::only_cell(mcubench::run_scenario(&common::scenario(&yaml(regions)), &options))
    };
    let cell = on(&qemu10, "{ name: crc32, bytes: arg1 }");
    assert_eq!(cell.verdict.outcome, Outcome::Pass, "{}", cell.verdict.message);
    let crc = region(&cell, "crc32");
    assert_eq!(crc.calls, 7);
    // by_size 16, 64, 256; twice 64, 64; the KAT 9; the marked KAT 256.
    assert_eq!(crc.bytes, Some(16 + 64 + 256 + 64 + 64 + 9 + 256), "{crc:#?}");
    let cycles = crc.cycles.as_ref().expect("cycles").total;
    assert_eq!(crc.cycles_per_byte, Some(cycles as f64 / 729.0));
    let mut sizes: Vec<u64> = crc.per_call.iter().map(|g| g.bytes.expect("bytes of every call")).collect();
    sizes.sort_unstable();
    sizes.dedup();
    assert_eq!(sizes, [9, 16, 64, 256], "{:#?}", crc.per_call);
    let by_size: Vec<(u64, u64)> = crc.by_size.iter().map(|z| (z.bytes, z.calls)).collect();
    assert_eq!(by_size, [(9, 1), (16, 1), (64, 3), (256, 2)]);
    for g in &crc.per_call {
        assert_eq!(g.cycles_per_byte, Some(g.cycles.unwrap() as f64 / g.bytes.unwrap() as f64), "{g:#?}");
    }
    // Reading registers changes no count.
    let plain = on(&qemu10, "crc32");
    let plain = region(&plain, "crc32");
    assert_eq!((plain.instructions, plain.cycles.as_ref().map(|c| c.total)), (crc.instructions, Some(cycles)));

    let old = on(std::path::Path::new("qemu-system-arm"), "crc32, { name: crc32_64, bytes: arg0 }");
    assert_eq!(old.verdict.outcome, Outcome::SetupError, "{}", old.verdict.message);
    let m = &old.verdict.message;
    assert!(m.contains("regions: `crc32_64`: `bytes: arg0` reads the byte count from register r0"), "{m}");
    assert!(m.contains("needs QEMU 9.1 or later") && m.contains("this is QEMU 7.2."), "{m}");
}
