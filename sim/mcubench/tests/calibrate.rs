//! `mcubench calibrate` end to end: "measured" rows are generated under QEMU from a known
//! parameter set of the STM32F407 profile (branch-refill 2, flash wait states 3) for real C
//! firmware (the CRC-32 KATs, bitwise and table-driven: loops, flash table loads), written as a
//! CSV file, and calibrating the profile from them recovers that set exactly, prints the fitted
//! profile as YAML and the leave-one-out error. Bad input exits 2 naming the file.

// Full test tier: needs QEMU and/or the Arm GCC toolchain (bash ci/setup.sh).
#![cfg(feature = "full")]

mod common;

/// KAT cycles of `elf` on mps2-an386 with the STM32F407 profile and `model`.
fn measured(elf: &str, model: &str) -> Vec<(String, u64)> {
    let yaml = format!(
        "name: t\nfirmware: {{ elf: {} }}\nboards: [mps2-an386]\ntiming: stm32f407\nmodel: {model}\n",
        common::c_firmware(elf).display()
    );
    let cell = common::only_cell(common::run(&common::scenario(&yaml)));
    cell.kats.iter().map(|k| (k.id.clone(), k.cycles.unwrap())).collect()
}

/// One `elf` row per function region of `cell` (its mean cycles per call), each with `extra`
/// keys (`exit: loop, `).
fn region_rows(cell: &mcubench::report::CellReport, elf: &std::path::Path, board: &str, extra: &str) -> String {
    let mut rows = String::new();
    for r in &cell.regions {
        assert!(r.calls > 0, "{} was called", r.name);
        let mean = r.cycles.as_ref().unwrap().total / r.calls;
        rows.push_str(&format!(
            "  - {{ elf: {}, {extra}board: {board}, region: {}, cycles: {mean} }}\n",
            elf.display(),
            r.name
        ));
    }
    rows
}

/// `mcubench calibrate --jobs 2` on `rows` (a YAML file's text): its output, which must be a
/// success.
fn calibrate(rows: &str) -> String {
    let dir = tempfile::tempdir().unwrap();
    let path = dir.path().join("rows.yaml");
    std::fs::write(&path, rows).unwrap();
    let out = common::mcubench().args(["calibrate", "--jobs", "2"]).arg(&path).output().unwrap();
    let text = String::from_utf8_lossy(&out.stdout).into_owned();
    assert!(out.status.success(), "{rows}\n{text}\n{}", String::from_utf8_lossy(&out.stderr));
    text
}

#[test]
fn calibrate_recovers_the_parameters_the_rows_were_made_with() {
    let dir = tempfile::tempdir().unwrap();
    let mut csv = String::from(
        "# generated: stm32f407 with branch-refill 2, flash wait-states 3\nsource,board,profile,measure,cycles\n",
    );
    for elf in ["kat-crc32-table", "kat-crc32"] {
        let path = dir.path().join(format!("{elf}.elf"));
        std::fs::copy(common::c_firmware(elf), &path).unwrap();
        for (id, cycles) in measured(elf, "{ branch-refill: 2, flash: { wait-states: 3 } }") {
            csv.push_str(&format!("{elf}.elf,mps2-an386,,kat:{id},{cycles}\n"));
        }
    }
    let rows = dir.path().join("rows.csv");
    std::fs::write(&rows, &csv).unwrap();
    let out =
        common::mcubench().args(["calibrate", "--timing", "stm32f407", "--jobs", "2"]).arg(&rows).output().unwrap();
    let text = String::from_utf8_lossy(&out.stdout);
    assert!(out.status.success(), "{text}\n{}", String::from_utf8_lossy(&out.stderr));
    eprintln!("{text}");
    assert!(text.contains("base:   branch-refill=1, flash.wait-states=5"), "{text}");
    assert!(text.contains("fitted: branch-refill=2, flash.wait-states=3"), "{text}");
    assert!(text.contains("timing: stm32f407\nmodel:\n  branch-refill: 2\n  flash: { wait-states: 3 }\n"), "{text}");
    assert!(text.contains("|error| fitted: median 0.00 %, max 0.00 %"), "{text}");
    assert!(text.contains("|error| leave-one-out: median"), "{text}");

    // Bad input: fewer rows than free parameters; an ELF that does not exist.
    let one = dir.path().join("one.csv");
    std::fs::write(&one, "source,board,profile,measure,cycles\nkat-crc32.elf,mps2-an386,,kat:crc32/a,100\n").unwrap();
    let out = common::mcubench().args(["calibrate", "--timing", "stm32f407"]).arg(&one).output().unwrap();
    let err = String::from_utf8_lossy(&out.stderr);
    assert_eq!(out.status.code(), Some(2), "{err}");
    assert!(err.contains("one.csv") && err.contains("give at least 2 rows"), "{err}");
    std::fs::write(&one, "source,board,profile,measure,cycles\nnone.elf,mps2-an386,,kat:crc32/a,100\n").unwrap();
    let out = common::mcubench().args(["calibrate", "--free", "branch-refill"]).arg(&one).output().unwrap();
    let err = String::from_utf8_lossy(&out.stderr);
    assert_eq!(out.status.code(), Some(2), "{err}");
    assert!(err.contains("one.csv:2") && err.contains("none.elf"), "{err}");
}

/// A row that names a plain C firmware's ELF (newlib, printf and malloc, no result protocol):
/// the run is judged by its exit code, and its function regions calibrate the core model: the
/// Cortex-M4's taken-branch refill, and the Cortex-M7's misprediction penalty and predictor
/// history (the same ELF on QEMU's Cortex-M7 board).
#[rstest::rstest]
#[case("mps2-an386", "branch-refill", 2)]
#[case("mps2-an500", "m7-mispredict", 5)]
#[case("mps2-an500", "m7-history", 4)]
fn an_elf_row_of_firmware_without_the_protocol_calibrates_from_its_function_regions(
    #[case] board: &str,
    #[case] param: &str,
    #[case] value: u32,
) {
    let elf = common::c_firmware("newlib-selftest");
    let yaml = format!(
        "name: t\nfirmware: {{ elf: {} }}\nboards: [{board}]\nverdict: {{ exit: 0 }}\n\
         model: {{ {param}: {value} }}\nregions: [printf, malloc]\n",
        elf.display()
    );
    let cell = common::only_cell(common::run(&common::scenario(&yaml)));
    let text = calibrate(&format!("free: [{param}]\nrows:\n{}", region_rows(&cell, &elf, board, "")));
    assert!(text.contains(&format!("fitted: {param}={value}")), "{text}");
}

/// An `elf` row of firmware built for a board, which ends in a loop on itself (libnosys's
/// `_exit`), says so with `exit: loop`: the run ends there instead of timing out. The rows are
/// its function regions on the "board" (refill 2), and the fit recovers the refill. `exit` on a
/// scenario row is refused: the scenario's `verdict.exit` says it.
#[test]
fn an_elf_row_of_board_firmware_ends_at_its_loop() {
    let elf = common::c_firmware("newlib-board-mps2");
    let yaml = format!(
        "name: t\nfirmware: {{ elf: {} }}\nboards: [mps2-an386]\nverdict: {{ exit: loop }}\n\
         model: {{ branch-refill: 2 }}\nregions: [crc32, check]\n",
        elf.display()
    );
    let cell = common::only_cell(common::run(&common::scenario(&yaml)));
    assert!(cell.loop_end.is_some(), "{}", cell.verdict.message);
    let rows = region_rows(&cell, &elf, "mps2-an386", "exit: loop, ");
    let text = calibrate(&format!("free: [branch-refill]\nrows:\n{rows}"));
    assert!(text.contains("fitted: branch-refill=2"), "{text}");
    let dir = tempfile::tempdir().unwrap();
    let path = dir.path().join("rows.yaml");
    std::fs::write(&path, "rows:\n  - { scenario: s.yaml, exit: loop, board: mps2-an386, region: crc32, cycles: 9 }\n")
        .unwrap();
    let out = common::mcubench().arg("calibrate").arg(&path).output().unwrap();
    let err = String::from_utf8_lossy(&out.stderr);
    assert_eq!(out.status.code(), Some(2), "{err}");
    assert!(
        err.contains("rows[0]: `exit` is for `elf` rows; a scenario says how its run ends in `verdict.exit`"),
        "{err}"
    );
}

/// A board benchmark that times its code with the DWT cycle counter (firmware/c/cyccnt): the
/// figures it would print on the board are the rows, named by the reads as the run report names
/// them (`reads: [bench_crc32+0x12, bench_crc32+0x18]`), and calibrating recovers the refill the
/// "board" ran with. The fit's first parameter set is checked against its live run, so the
/// replayed reads agree with the live ones.
#[test]
fn a_board_benchmark_calibrates_from_its_own_dwt_counts() {
    // Rows name the reads either way: by function+offset, or (unquoted: `#` inside a word is no
    // YAML comment) by the names a rebuild keeps. `cyccnt-reset` zeroes the counter before the
    // call it times (a write, then a read), which the replay must price as the live run did.
    let mut rows = String::from("free: [branch-refill]\nrows:\n");
    for firmware in ["cyccnt", "cyccnt-reset"] {
        let elf = common::c_firmware(firmware);
        let yaml = format!(
            "name: t\nfirmware: {{ elf: {} }}\nboards: [mps2-an386]\nverdict: {{ exit: 0 }}\nmodel: {{ branch-refill: 2 }}\n",
            elf.display()
        );
        let cell = common::only_cell(common::run(&common::scenario(&yaml)));
        assert!(cell.cycle_counter.len() >= 3, "{:?}", cell.cycle_counter);
        for (n, i) in cell.cycle_counter.iter().enumerate() {
            let (from, to) = if n % 2 == 0 {
                (format!("'{}'", i.from), format!("'{}'", i.to))
            } else {
                (i.from_name.clone(), i.to_name.clone())
            };
            rows.push_str(&format!(
                "  - {{ elf: {}, board: mps2-an386, reads: [{from}, {to}], cycles: {} }}\n",
                elf.display(),
                i.cycles.total / i.count
            ));
        }
    }
    let text = calibrate(&rows);
    assert!(text.contains("fitted: branch-refill=2") && text.contains("reads bench_crc32+0x"), "{text}");
    assert!(text.contains("reads bench_crc32#2 → bench_crc32#1"), "{text}");
    // A scenario whose counter is live is refused: what its firmware runs depends on the cycles.
    let dir = tempfile::tempdir().unwrap();
    std::fs::write(
        dir.path().join("s.yaml"),
        format!(
            "name: t\nfirmware: {{ elf: {} }}\nboards: [mps2-an386]\nverdict: {{ exit: 0 }}\ncycle-counter: estimated\n",
            common::c_firmware("cyccnt").display()
        ),
    )
    .unwrap();
    let path = dir.path().join("rows.yaml");
    std::fs::write(
        &path,
        "free: [branch-refill]\nrows:\n  - { scenario: s.yaml, board: mps2-an386, reads: [bench_crc32#1, bench_crc32#2], \
         cycles: 3473 }\n",
    )
    .unwrap();
    let out = common::mcubench().arg("calibrate").arg(&path).output().unwrap();
    let err = String::from_utf8_lossy(&out.stderr);
    assert_eq!(out.status.code(), Some(2), "{err}");
    assert!(err.contains("s.yaml: `cycle-counter: estimated` makes what the firmware runs depend on"), "{err}");
}
