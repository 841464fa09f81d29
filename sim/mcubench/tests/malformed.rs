//! Bad input at the command line: every malformed ELF, scenario, vector file or annotation file
//! is one clear error that names the file (and the line where there is one), exit code 2, no
//! panic, and no report file (`--json-output` is written whole or not at all, and a bad input is
//! found before the run starts). Malformed protocol streams are unit-tested in `protocol.rs` and
//! `verdict.rs` (they come from the firmware, and fail the run instead).

// Full test tier: needs QEMU and/or the Arm GCC toolchain (bash ci/setup.sh).
#![cfg(feature = "full")]

mod common;

use std::path::{Path, PathBuf};
use std::process::Output;

/// Runs `mcubench args...` with `--json-output` pointing into `dir` when `json` is set; checks
/// exit 2, no panic, no report file; returns stderr.
fn refused(args: &[&std::ffi::OsStr], dir: &Path, json: bool) -> String {
    let report = dir.join("report.json");
    let mut cmd = common::mcubench();
    cmd.args(args);
    if json {
        cmd.arg("--json-output").arg(&report);
    }
    let out: Output = cmd.output().unwrap();
    let stderr = String::from_utf8_lossy(&out.stderr).into_owned();
    assert_eq!(
        out.status.code(),
        Some(2),
        "{args:?}: stdout {}\nstderr {stderr}",
        String::from_utf8_lossy(&out.stdout)
    );
    assert!(!stderr.contains("panicked"), "{stderr}");
    assert!(stderr.starts_with("mcubench: error: "), "{stderr}");
    assert!(!report.exists(), "{args:?}: a report was written for bad input");
    let leftovers: Vec<_> = std::fs::read_dir(dir)
        .unwrap()
        .filter_map(|e| e.ok())
        .filter(|e| e.file_name().to_string_lossy().contains("report.json"))
        .collect();
    assert!(leftovers.is_empty(), "partial report files: {leftovers:?}");
    stderr
}

fn os<'a>(items: &'a [&'a str]) -> Vec<&'a std::ffi::OsStr> {
    items.iter().map(std::ffi::OsStr::new).collect()
}

fn u16_at(b: &mut [u8], at: usize, v: u16) {
    b[at..at + 2].copy_from_slice(&v.to_le_bytes());
}

fn u32_at(b: &mut [u8], at: usize, v: u32) {
    b[at..at + 4].copy_from_slice(&v.to_le_bytes());
}

fn read_u32(b: &[u8], at: usize) -> u32 {
    u32::from_le_bytes(b[at..at + 4].try_into().unwrap())
}

/// A damaged copy of a real GCC ELF, and what the error must say.
fn damaged(name: &str, dir: &Path) -> (PathBuf, &'static str) {
    let mut b = std::fs::read(common::c_firmware("kat-crc32")).unwrap();
    let expected = match name {
        "truncated" => {
            b.truncate(100);
            "is truncated"
        }
        "empty-file" => {
            b.clear();
            "is not an ELF file"
        }
        "not-elf" => {
            b[..4].copy_from_slice(b"MZ\x90\x00");
            "is not an ELF file"
        }
        "x86" => {
            u16_at(&mut b, 18, 3); // EM_386
            "built for another architecture (e_machine 3)"
        }
        "big-endian" => {
            b[5] = 2; // ELFDATA2MSB
            "is a big-endian ELF"
        }
        "64-bit" => {
            b[4] = 2; // ELFCLASS64
            "is a 64-bit ELF"
        }
        "relocatable" => {
            u16_at(&mut b, 16, 1); // ET_REL
            "is not a linked executable"
        }
        "no-sections" => {
            // What `sstrip` does: no section header table.
            u32_at(&mut b, 32, 0);
            u16_at(&mut b, 48, 0);
            u16_at(&mut b, 50, 0);
            "has no section headers"
        }
        "section-table-past-end" => {
            let len = b.len() as u32;
            u32_at(&mut b, 32, len - 8);
            "is truncated"
        }
        "section-contents-past-end" => {
            // Section 1's sh_offset (header at e_shoff + 40, field at +16) far past the file.
            let shoff = read_u32(&b, 32) as usize;
            u32_at(&mut b, shoff + 40 + 16, 0x7fff_0000);
            "is corrupted: section"
        }
        "bad-shstrndx" => {
            u16_at(&mut b, 50, 0x7fff);
            "malformed"
        }
        other => panic!("no damage `{other}`"),
    };
    let path = dir.join(format!("{name}.elf"));
    std::fs::write(&path, b).unwrap();
    (path, expected)
}

#[rstest::rstest]
fn a_malformed_elf_is_refused_by_every_command(
    #[values(
        "truncated",
        "empty-file",
        "not-elf",
        "x86",
        "big-endian",
        "64-bit",
        "relocatable",
        "no-sections",
        "section-table-past-end",
        "section-contents-past-end",
        "bad-shstrndx"
    )]
    name: &str,
) {
    let dir = tempfile::tempdir().unwrap();
    let (elf, expected) = damaged(name, dir.path());
    let e = elf.as_os_str();
    let says = |stderr: &str| {
        assert!(stderr.contains(&elf.display().to_string()), "{name}: the file is not named: {stderr}");
        assert!(stderr.contains(expected), "{name}: expected `{expected}` in {stderr}");
    };
    says(&refused(&[os(&["size"]), vec![e]].concat(), dir.path(), false));
    says(&refused(&[os(&["stack", "--board", "mps2-an386"]), vec![e]].concat(), dir.path(), false));
    says(&refused(&[os(&["run", "--quiet", "--board", "mps2-an386", "--elf"]), vec![e]].concat(), dir.path(), true));
    // The same ELF named by a scenario.
    let scenario = dir.path().join("s.yaml");
    std::fs::write(&scenario, format!("name: s\nfirmware: {{ elf: {name}.elf }}\nboards: [mps2-an386]\n")).unwrap();
    says(&refused(&[os(&["run", "--quiet"]), vec![scenario.as_os_str()]].concat(), dir.path(), true));
}

/// An ELF without symbols (`strip --strip-all`) is not malformed: it runs and its memory report
/// works; the static stack analysis says why it has no bound instead of failing.
#[test]
fn an_elf_without_symbols_still_runs() {
    let dir = tempfile::tempdir().unwrap();
    let elf = dir.path().join("nosym.elf");
    let status = std::process::Command::new("arm-none-eabi-strip")
        .arg("--strip-all")
        .arg("-o")
        .arg(&elf)
        .arg(common::c_firmware("kat-crc32"))
        .status()
        .expect("arm-none-eabi-strip runs (bash ci/setup.sh)");
    assert!(status.success());
    let out = common::mcubench().arg("size").arg(&elf).output().unwrap();
    assert_eq!(out.status.code(), Some(0), "{}", String::from_utf8_lossy(&out.stderr));
    let out = common::mcubench().args(["stack", "--board", "mps2-an386"]).arg(&elf).output().unwrap();
    let stdout = String::from_utf8_lossy(&out.stdout);
    assert_eq!(out.status.code(), Some(0), "{}", String::from_utf8_lossy(&out.stderr));
    assert!(stdout.contains("unbounded"), "{stdout}");
    let out = common::mcubench().args(["run", "--quiet", "--board", "mps2-an386", "--elf"]).arg(&elf).output().unwrap();
    let stdout = String::from_utf8_lossy(&out.stdout);
    assert_eq!(out.status.code(), Some(0), "{stdout}");
    assert!(stdout.contains(" pass "), "{stdout}");
}

/// Scenario files: each mistake names the file, and the line and column or the key.
#[rstest::rstest]
#[case::wrong_type("name: s\nfirmware: { elf: a.elf }\nboards: mps2-an386\n", "s.yaml:3:9: boards: invalid type")]
// Sizes and durations name the value's own place and key path.
#[case::wrong_type_nested(
    "name: s\nfirmware: { elf: a.elf }\nboards: [mps2-an386]\nbudgets: { flash: [1] }\n",
    "s.yaml:4:19: budgets.flash: invalid type: sequence, expected a size"
)]
#[case::wrong_type_timeout(
    "name: s\nfirmware: { elf: a.elf }\nboards: [mps2-an386]\ntimeout: { s: 1 }\n",
    "s.yaml:4:10: timeout: invalid type: map, expected a duration such as `20 s`"
)]
#[case::unknown_key(
    "name: s\nfirmware: { elf: a.elf, vector: v.txt }\nboards: [mps2-an386]\n",
    "unknown field `vector`"
)]
#[case::unknown_top_key(
    "name: s\nfirmware: { elf: a.elf }\nboards: [mps2-an386]\nbudget: {}\n",
    "s.yaml:4:1: unknown field `budget`"
)]
#[case::missing_firmware("name: s\nboards: [mps2-an386]\n", "missing field `firmware`")]
#[case::empty_firmware("name: s\nfirmware: {}\nboards: [mps2-an386]\n", "firmware: give exactly one of")]
#[case::firmware_file_missing(
    "name: s\nfirmware: { elf: gone.elf }\nboards: [mps2-an386]\n",
    "gone.elf` does not exist"
)]
#[case::empty_file("", "s.yaml")]
#[case::not_yaml("name: [s\n", "s.yaml:")]
#[case::not_a_mapping("- a\n- b\n", "s.yaml:")]
#[case::zero_flash_budget(
    "name: s\nfirmware: { elf: a.elf }\nboards: [mps2-an386]\nbudgets: { flash: 0 B }\n",
    "budgets.flash is 0 B, which no firmware can meet"
)]
#[case::zero_stack_budget_in_profile_override(
    "name: s\nfirmware: { elf: a.elf }\nboards: [mps2-an386]\nbudgets: { stack: 0 }\n",
    "budgets.stack is 0 B"
)]
#[case::huge_budget(
    "name: s\nfirmware: { elf: a.elf }\nboards: [mps2-an386]\nbudgets: { flash: 99999999999999999999 }\n",
    "expected a size"
)]
#[case::huge_size_unit(
    "name: s\nfirmware: { elf: a.elf }\nboards: [mps2-an386]\nbudgets: { flash: 18446744073709551615 MiB }\n",
    "is too large"
)]
#[case::vectors_missing(
    "name: s\nfirmware: { elf: a.elf, vectors: nowhere }\nboards: [mps2-an386]\n",
    "firmware.vectors: "
)]
#[case::vectors_malformed(
    "name: s\nfirmware: { elf: a.elf, vectors: bad.txt }\nboards: [mps2-an386]\n",
    "firmware.vectors: "
)]
#[case::unknown_verdict_key(
    "name: s\nfirmware: { elf: a.elf }\nboards: [mps2-an386]\nverdict: { expects: [ok] }\n",
    "s.yaml:4:12: verdict: unknown field `expects`"
)]
#[case::invalid_regex(
    "name: s\nfirmware: { elf: a.elf }\nboards: [mps2-an386]\nverdict: { expect: ['(unclosed'] }\n",
    "s.yaml:4:20: verdict.expect: `(unclosed` is not a valid regular expression"
)]
#[case::record_without_a_name(
    "name: s\nfirmware: { elf: a.elf }\nboards: [mps2-an386]\nverdict: { record: ['cycles: [0-9]+'] }\n",
    "has no named capture group"
)]
#[case::matrix_variable_undefined(
    "name: s\nfirmware: { command: 'make ALG={alg}', elf: 'b/{alg}-{opt}.elf' }\nmatrix: { alg: [a] }\nboards: [mps2-an386]\n",
    "firmware.elf: `{opt}` is not a matrix variable; known: alg, board"
)]
#[case::matrix_variable_unused(
    "name: s\nfirmware: { command: make, elf: b.elf }\nmatrix: { alg: [a, b] }\nboards: [mps2-an386]\n",
    "matrix.alg: the variable is used by neither"
)]
#[case::command_without_elf(
    "name: s\nfirmware: { command: make }\nboards: [mps2-an386]\n",
    "firmware.command: give the ELF it builds"
)]
#[case::user_board_overlap(
    "name: s\nfirmware: { elf: a.elf }\nboards:\n  - name: mine\n    core: cortex-m3\n    qemu: { machine: lm3s6965evb, cpu: cortex-m3 }\n    memory: { flash: { origin: 0, length: 256 KiB }, ram: { origin: 0x10000, length: 64 KiB } }\n",
    "s.yaml:7:13: boards[0].memory: flash 0x00000000..0x00040000 and ram 0x00010000..0x00020000 overlap"
)]
#[case::user_board_unknown_core(
    "name: s\nfirmware: { elf: a.elf }\nboards:\n  - name: mine\n    core: cortex-m5\n    qemu: { machine: lm3s6965evb, cpu: cortex-m3 }\n    memory: { flash: { origin: 0, length: 256 KiB }, ram: { origin: 0x20000000, length: 64 KiB } }\n",
    "s.yaml:5:11: boards[0].core: unknown core `cortex-m5` (cortex-m0, cortex-m0+,"
)]
#[case::user_board_zero_size_region(
    "name: s\nfirmware: { elf: a.elf }\nboards:\n  - name: mine\n    core: cortex-m3\n    qemu: { machine: lm3s6965evb, cpu: cortex-m3 }\n    memory: { flash: { origin: 0, length: 0 KiB }, ram: { origin: 0x20000000, length: 64 KiB } }\n",
    "s.yaml:7:22: boards[0].memory.flash: length is 0"
)]
#[case::user_board_past_32_bits(
    "name: s\nfirmware: { elf: a.elf }\nboards:\n  - name: mine\n    core: cortex-m3\n    qemu: { machine: lm3s6965evb, cpu: cortex-m3 }\n    memory: { flash: { origin: 0, length: 256 KiB }, ram: { origin: 0xfffff000, length: 64 KiB } }\n",
    "boards[0].memory.ram: origin 0xfffff000 + length 0x10000 ends past 0xffffffff"
)]
#[case::user_board_named_like_a_built_in(
    "name: s\nfirmware: { elf: a.elf }\nboards:\n  - name: netduinoplus2\n    core: cortex-m3\n    qemu: { machine: lm3s6965evb, cpu: cortex-m3 }\n    memory: { flash: { origin: 0, length: 256 KiB }, ram: { origin: 0x20000000, length: 64 KiB } }\n",
    "s.yaml:4:11: boards[0].name: `netduinoplus2` is a built-in board"
)]
#[case::user_board_named_like_a_layout(
    "name: s\nfirmware: { elf: a.elf }\nboards:\n  - name: mps2\n    core: cortex-m3\n    qemu: { machine: lm3s6965evb, cpu: cortex-m3 }\n    memory: { flash: { origin: 0, length: 256 KiB }, ram: { origin: 0x20000000, length: 64 KiB } }\n",
    "boards[0].name: `mps2` names a built-in memory layout"
)]
#[case::user_board_listed_twice(
    "name: s\nfirmware: { elf: a.elf }\nboards:\n  - name: mine\n    core: cortex-m3\n    qemu: { machine: lm3s6965evb, cpu: cortex-m3 }\n    memory: { flash: { origin: 0, length: 256 KiB }, ram: { origin: 0x20000000, length: 64 KiB } }\n  - { name: mine, core: cortex-m3, qemu: { machine: lm3s6965evb }, memory: { flash: { origin: 0, length: 1 KiB }, ram: { origin: 0x20000000, length: 1 KiB } } }\n",
    "boards: `mine` is listed twice"
)]
#[case::user_board_unknown_machine(
    "name: s\nfirmware: { elf: a.elf }\nboards:\n  - name: mine\n    core: cortex-m3\n    qemu: { machine: lm3s6965, cpu: cortex-m3 }\n    memory: { flash: { origin: 0, length: 256 KiB }, ram: { origin: 0x20000000, length: 64 KiB } }\n",
    "s.yaml:6:22: boards[0].qemu.machine: unknown QEMU machine `lm3s6965`; mcubench runs on: lm3s6965evb,"
)]
#[case::user_board_wrong_cpu(
    "name: s\nfirmware: { elf: a.elf }\nboards:\n  - name: mine\n    core: cortex-m3\n    qemu: { machine: lm3s6965evb, cpu: cortex-m4 }\n    memory: { flash: { origin: 0, length: 256 KiB }, ram: { origin: 0x20000000, length: 64 KiB } }\n",
    "s.yaml:6:11: boards[0].qemu: QEMU's lm3s6965evb takes only -cpu cortex-m3"
)]
#[case::user_board_core_the_cpu_cannot_run(
    "name: s\nfirmware: { elf: a.elf }\nboards:\n  - name: mine\n    core: cortex-m4f\n    qemu: { machine: lm3s6965evb, cpu: cortex-m3 }\n    memory: { flash: { origin: 0, length: 256 KiB }, ram: { origin: 0x20000000, length: 64 KiB } }\n",
    "s.yaml:4:5: boards[0]: board `mine`: core cortex-m4f does not run on QEMU's lm3s6965evb"
)]
#[case::user_board_flash_the_machine_lacks(
    "name: s\nfirmware: { elf: a.elf }\nboards:\n  - name: mine\n    core: cortex-m3\n    qemu: { machine: lm3s6965evb, cpu: cortex-m3 }\n    memory: { flash: { origin: 0x08000000, length: 256 KiB }, ram: { origin: 0x20000000, length: 64 KiB } }\n",
    "boards[0]: board `mine`: memory: flash 0x08000000..0x08040000 is not memory QEMU's lm3s6965evb maps"
)]
#[case::user_board_ram_larger_than_the_machines(
    "name: s\nfirmware: { elf: a.elf }\nboards:\n  - name: mine\n    core: cortex-m3\n    qemu: { machine: lm3s6965evb, cpu: cortex-m3 }\n    memory: { flash: { origin: 0, length: 256 KiB }, ram: { origin: 0x20000000, length: 128 KiB } }\n",
    "memory: ram 0x20000000..0x20020000 is not RAM QEMU's lm3s6965evb maps"
)]
#[case::user_board_non_secure_flash(
    "name: s\nfirmware: { elf: a.elf }\nboards:\n  - name: mine\n    core: cortex-m33\n    qemu: { machine: mps2-an505 }\n    memory: { flash: { origin: 0, length: 256 KiB }, ram: { origin: 0x38000000, length: 64 KiB } }\n",
    "flash at 0x00000000 is Non-secure on mps2-an505"
)]
#[case::user_board_wrong_rust_target(
    "name: s\nfirmware: { elf: a.elf }\nboards:\n  - name: mine\n    core: cortex-m3\n    qemu: { machine: lm3s6965evb, cpu: cortex-m3 }\n    memory: { flash: { origin: 0, length: 256 KiB }, ram: { origin: 0x20000000, length: 64 KiB } }\n    rust-target: thumbv7em-none-eabihf\n",
    "rust-target `thumbv7em-none-eabihf` does not build code for a cortex-m3; use one of: thumbv7m-none-eabi, thumbv6m-none-eabi"
)]
#[case::user_board_zero_systick(
    "name: s\nfirmware: { elf: a.elf }\nboards:\n  - name: mine\n    core: cortex-m3\n    qemu: { machine: lm3s6965evb, cpu: cortex-m3 }\n    memory: { flash: { origin: 0, length: 256 KiB }, ram: { origin: 0x20000000, length: 64 KiB } }\n    systick-hz: 0\n",
    "s.yaml:8:17: boards[0].systick-hz: a SysTick clock of 0 Hz"
)]
#[case::user_board_unknown_key(
    "name: s\nfirmware: { elf: a.elf }\nboards:\n  - name: mine\n    core: cortex-m3\n    qemu: { machine: lm3s6965evb, cpu: cortex-m3 }\n    memory: { flash: { origin: 0, length: 256 KiB }, ram: { origin: 0x20000000, length: 64 KiB } }\n    clock: 1\n",
    "s.yaml:8:5: boards[0]: unknown field `clock`, expected one of `name`, `core`, `qemu`, `memory`, `systick-hz`, `rust-target`"
)]
#[case::user_board_missing_memory(
    "name: s\nfirmware: { elf: a.elf }\nboards:\n  - name: mine\n    core: cortex-m3\n    qemu: { machine: lm3s6965evb, cpu: cortex-m3 }\n",
    "boards[0]: missing field `memory`"
)]
#[case::unknown_board_name(
    "name: s\nfirmware: { elf: a.elf }\nboards: [lm3s6965]\n",
    "s.yaml:3:10: boards[0]: unknown board `lm3s6965`; known boards: "
)]
fn a_bad_scenario_is_refused(#[case] yaml: &str, #[case] expected: &str) {
    let dir = tempfile::tempdir().unwrap();
    std::fs::copy(common::c_firmware("kat-crc32"), dir.path().join("a.elf")).unwrap();
    std::fs::write(dir.path().join("bad.txt"), "# ok\ncrc32/a CRC-32 hash msg=61 out=e8b7be4\n").unwrap();
    let path = dir.path().join("s.yaml");
    std::fs::write(&path, yaml).unwrap();
    let stderr = refused(&[os(&["run", "--quiet"]), vec![path.as_os_str()]].concat(), dir.path(), true);
    assert!(stderr.contains(&path.display().to_string()), "the file is not named: {stderr}");
    assert!(stderr.contains(expected), "expected `{expected}` in {stderr}");
    if yaml.contains("bad.txt") {
        assert!(stderr.contains("bad.txt:2: field `out`: `e8b7be4` is not lowercase hex bytes"), "{stderr}");
    }
}

#[test]
fn impossible_budgets_on_the_command_line_are_refused_and_useless_ones_warned_about() {
    let dir = tempfile::tempdir().unwrap();
    let elf = common::c_firmware("kat-crc32");
    let stderr = refused(
        &[os(&["run", "--quiet", "--board", "mps2-an386", "--flash-budget", "0", "--elf"]), vec![elf.as_os_str()]]
            .concat(),
        dir.path(),
        true,
    );
    assert!(stderr.contains("budgets.flash is 0 B, which no firmware can meet"), "{stderr}");

    let out = common::mcubench()
        .args(["run", "--quiet", "--board", "microbit", "--ram-budget", "1MiB", "--elf"])
        .arg(&elf)
        .output()
        .unwrap();
    let stderr = String::from_utf8_lossy(&out.stderr);
    assert!(
        stderr.contains("mcubench: warning: ")
            && stderr
                .contains("budgets.ram is 1048576 B, more than the RAM of every board (microbit: at most 16384 B)"),
        "{stderr}"
    );
}

#[test]
fn a_bad_annotation_file_is_refused_and_unknown_names_are_reported() {
    let dir = tempfile::tempdir().unwrap();
    let elf = common::c_firmware("stack-test");
    let ann = dir.path().join("a.stack.yaml");
    std::fs::write(&ann, "recursion:\n  main: 2\nrecursoin: {}\n").unwrap();
    let stderr = refused(
        &[os(&["stack", "--board", "mps2-an386", "--annotations"]), vec![ann.as_os_str(), elf.as_os_str()]].concat(),
        dir.path(),
        false,
    );
    assert!(stderr.contains(&ann.display().to_string()), "{stderr}");
    assert!(stderr.contains("recursoin"), "{stderr}");

    // A name this ELF has no function for: a typo or a stale entry, refused naming file and name.
    std::fs::write(&ann, "recursion:\n  no_such_function_anywhere: 2\n").unwrap();
    let stderr = refused(
        &[os(&["stack", "--board", "mps2-an386", "--annotations"]), vec![ann.as_os_str(), elf.as_os_str()]].concat(),
        dir.path(),
        false,
    );
    let expected = format!("{}: recursion function `no_such_function_anywhere` is not a function of", ann.display());
    assert!(stderr.contains(&expected), "{stderr}");
    assert!(stderr.contains("fix the name or remove the entry"), "{stderr}");

    // The same through a scenario, whose own `NAME.stack.yaml` is used: no build has the name.
    let scenario = dir.path().join("s.yaml");
    std::fs::write(&scenario, format!("name: s\nfirmware: {{ elf: {} }}\nboards: [mps2-an386]\n", elf.display()))
        .unwrap();
    std::fs::copy(&ann, dir.path().join("s.stack.yaml")).unwrap();
    let stderr = refused(&[os(&["stack"]), vec![scenario.as_os_str()]].concat(), dir.path(), false);
    assert!(stderr.contains("s.stack.yaml: recursion function `no_such_function_anywhere`"), "{stderr}");
    assert!(stderr.contains("not in this build"), "{stderr}");
}

#[test]
fn run_refuses_a_bad_annotation_file_without_writing_a_report() {
    let dir = tempfile::tempdir().unwrap();
    let elf = common::c_firmware("kat-crc32");
    let scenario = dir.path().join("s.yaml");
    std::fs::write(&scenario, format!("name: s\nfirmware: {{ elf: {} }}\nboards: [mps2-an386]\n", elf.display()))
        .unwrap();
    let ann = dir.path().join("s.stack.yaml");
    // Malformed: refused before anything runs.
    std::fs::write(&ann, "recursoin: {}\n").unwrap();
    let stderr = refused(&[os(&["run", "--quiet"]), vec![scenario.as_os_str()]].concat(), dir.path(), true);
    assert!(stderr.contains(&ann.display().to_string()) && stderr.contains("recursoin"), "{stderr}");
    // A name no cell's ELF has: refused after the run, before any report is written.
    std::fs::write(&ann, "recursion:\n  no_such_function_anywhere: 2\n").unwrap();
    let stderr = refused(&[os(&["run", "--quiet"]), vec![scenario.as_os_str()]].concat(), dir.path(), true);
    assert!(stderr.contains("recursion function `no_such_function_anywhere` is not a function of"), "{stderr}");
    // A real name is fine.
    std::fs::write(&ann, "recursion:\n  main: 1\n").unwrap();
    let out = common::mcubench().args(["run", "--quiet"]).arg(&scenario).output().unwrap();
    assert_eq!(out.status.code(), Some(0), "{}", String::from_utf8_lossy(&out.stderr));
}

/// A build command that fails is the cell's setup error with the command's own output, never a
/// panic or "bad input"; the other cells still run.
#[test]
fn a_failing_build_command_is_a_setup_error_with_its_output() {
    let dir = tempfile::tempdir().unwrap();
    std::fs::copy(common::c_firmware("kat-crc32"), dir.path().join("good.elf")).unwrap();
    let path = dir.path().join("s.yaml");
    std::fs::write(
        &path,
        "name: s\nfirmware: { command: 'test {v} = good || { echo \"no rule to make {v}\" >&2; exit 2; }', elf: '{v}.elf' }\n\
         matrix: { v: [good, bad] }\nboards: [mps2-an386]\n",
    )
    .unwrap();
    let out = common::mcubench().args(["run", "--quiet", "--format", "json"]).arg(&path).output().unwrap();
    let stderr = String::from_utf8_lossy(&out.stderr);
    assert_eq!(out.status.code(), Some(1), "{stderr}");
    let json: serde_json::Value = serde_json::from_slice(&out.stdout).unwrap();
    let cells = json["cells"].as_array().unwrap();
    assert_eq!(cells[1]["profile"], "bad");
    assert_eq!(cells[1]["verdict"]["outcome"], "setup-error");
    let message = cells[1]["verdict"]["message"].as_str().unwrap();
    assert!(message.contains("no rule to make bad") && message.contains("exit status: 2"), "{message}");
    assert_ne!(cells[0]["verdict"]["outcome"], "setup-error", "{}", cells[0]);
}
