//! The command line on real ELFs: `size` on a GCC and a rustc ELF, `run --elf` on a prebuilt C
//! firmware, JSON output, and clear errors (exit 2) for bad input.

// Full test tier: needs QEMU and/or the Arm GCC toolchain (bash ci/setup.sh).
#![cfg(feature = "full")]

mod common;

use mcubench::Scenario;

fn stdout(out: &std::process::Output) -> String {
    String::from_utf8_lossy(&out.stdout).into_owned()
}

#[test]
fn size_reports_a_gcc_elf_as_table_and_json() {
    let elf = common::c_firmware("kat-crc32");
    let out = common::mcubench().args(["size", "--board", "mps2-an386"]).arg(&elf).output().unwrap();
    assert!(out.status.success(), "{}", String::from_utf8_lossy(&out.stderr));
    let text = stdout(&out);
    for needle in ["FLASH", "RAM", ".text", ".bss", "symbol"] {
        assert!(text.contains(needle), "`{needle}` missing from:\n{text}");
    }

    let out = common::mcubench().args(["size", "--format", "json"]).arg(&elf).output().unwrap();
    assert!(out.status.success());
    let json: serde_json::Value = serde_json::from_slice(&out.stdout).unwrap();
    assert!(json["flash"]["used"].as_u64().unwrap() > 0, "{json}");
    assert!(json["sections"].as_array().unwrap().iter().any(|s| s["name"] == ".text"), "{json}");
}

#[test]
fn size_reports_a_rust_elf_with_demangled_symbols() {
    let mut scenario = Scenario::load(&common::repo().join("scenarios/kat.yaml")).unwrap();
    scenario.boards.retain(|b| b.name == "mps2-an385");
    scenario.profiles.retain(|p| p.name == "size");
    let mcubench::config::scenario::Firmware::Cargo { package_dir, bin, features } = &scenario.firmware else {
        panic!("kat.yaml builds with cargo")
    };
    let root = mcubench::build::target_directory(package_dir).unwrap();
    let elf = mcubench::build::build(
        &mcubench::build::CargoFirmware { package_dir, bin, features },
        &root,
        scenario.boards[0],
        &scenario.profiles[0],
    )
    .unwrap();
    let out = common::mcubench().args(["size", "--format", "json", "--top", "20"]).arg(&elf).output().unwrap();
    assert!(out.status.success(), "{}", String::from_utf8_lossy(&out.stderr));
    let json: serde_json::Value = serde_json::from_slice(&out.stdout).unwrap();
    let names: Vec<&str> = json["top_symbols"].as_array().unwrap().iter().filter_map(|s| s["name"].as_str()).collect();
    assert!(names.iter().any(|n| n.contains("::")), "Rust paths demangled: {names:?}");
    assert!(names.iter().all(|n| !n.starts_with("_ZN") && !n.starts_with("_R")), "{names:?}");
    assert!(json["stack_available"]["available"].as_u64().unwrap() > 0, "{json}");
}

#[test]
fn run_elf_passes_a_prebuilt_gcc_firmware_and_prints_json() {
    let elf = common::c_firmware("kat-crc32");
    let out = common::mcubench()
        .args(["run", "--quiet", "--board", "mps2-an386", "--format", "json", "--elf"])
        .arg(&elf)
        .output()
        .unwrap();
    assert_eq!(out.status.code(), Some(0), "{}", stdout(&out));
    let json: serde_json::Value = serde_json::from_slice(&out.stdout).unwrap();
    assert_eq!(json["schema"], "mcubench-run/1");
    let cell = &json["cells"][0];
    assert_eq!(cell["board"], "mps2-an386");
    assert_eq!(cell["profile"], "prebuilt");
    assert_eq!(cell["verdict"]["outcome"], "pass");
    assert!(!cell["kats"].as_array().unwrap().is_empty());
    assert!(cell["stack_high_water"].as_u64().is_some());
}

#[test]
fn the_same_elf_gives_byte_identical_reports() {
    let elf = common::c_firmware("kat-crc32");
    let report = || {
        let out = common::mcubench()
            .args(["run", "--quiet", "--board", "mps2-an386", "--format", "json", "--elf"])
            .arg(&elf)
            .output()
            .unwrap();
        out.stdout
    };
    assert_eq!(report(), report());
}

#[rstest::rstest]
#[case(&["size", "/nonexistent.elf"], "/nonexistent.elf")]
#[case(&["size", "--board", "stm32", "Cargo.toml"], "unknown board `stm32`")]
#[case(&["run", "--elf", "/nonexistent.elf", "--board", "microbit"], "/nonexistent.elf: no such file")]
#[case(&["run", "/nonexistent.yaml"], "/nonexistent.yaml: cannot read the scenario file")]
#[case(&["run", "--elf", "Cargo.toml", "--board", "microbit", "--timeout", "soon"], "`soon` is not a duration")]
#[case(&["run", "--elf", "Cargo.toml", "--board", "microbit", "--flash-budget", "lots"], "`lots` is not a size")]
#[case(&["run", "--shard", "3/2", "x.yaml"], "`3/2` is not a shard")]
fn bad_input_is_a_clear_error_with_exit_2(#[case] args: &[&str], #[case] expected: &str) {
    let out = common::mcubench().args(args).current_dir(env!("CARGO_MANIFEST_DIR")).output().unwrap();
    let stderr = String::from_utf8_lossy(&out.stderr);
    assert_eq!(out.status.code(), Some(2), "{stderr}");
    assert!(stderr.contains(expected), "{stderr}");
    assert!(!stderr.contains("panicked"), "{stderr}");
}

#[test]
fn a_non_arm_elf_is_refused_by_size() {
    let out = common::mcubench().arg("size").arg(env!("CARGO_BIN_EXE_mcubench")).output().unwrap();
    let stderr = String::from_utf8_lossy(&out.stderr);
    assert_eq!(out.status.code(), Some(2), "{stderr}");
    assert!(stderr.contains("64-bit") || stderr.contains("not ARM") || stderr.contains("ARM"), "{stderr}");
}

/// The C KAT firmware linked for netduinoplus2 (STM32F405: flash at 0x08000000) with
/// `firmware/c/link.ld` and the board's generated `linker/netduinoplus2/memory.x`.
fn c_kat_for_netduinoplus2(dir: &std::path::Path) -> std::path::PathBuf {
    let repo = common::repo();
    let c = repo.join("firmware/c");
    let elf = dir.join("kat-crc32-netduinoplus2.elf");
    let out = std::process::Command::new("arm-none-eabi-gcc")
        .args(["-mcpu=cortex-m4", "-mthumb", "-O2", "-std=c11", "-ffunction-sections", "-fdata-sections"])
        .args(["-ffreestanding", "-nostartfiles", "--specs=nano.specs", "-Wl,--gc-sections", "-I"])
        .arg(c.join("include"))
        .arg("-T")
        .arg(c.join("link.ld"))
        .arg("-L")
        .arg(repo.join("linker/netduinoplus2"))
        .arg(c.join("kat-crc32/startup.c"))
        .arg(c.join("kat-crc32/main.c"))
        .arg("-o")
        .arg(&elf)
        .output()
        .expect("arm-none-eabi-gcc runs (bash ci/setup.sh installs it)");
    assert!(out.status.success(), "{}", String::from_utf8_lossy(&out.stderr));
    elf
}

#[test]
fn an_elf_outside_the_boards_memory_map_is_an_error_naming_board_and_addresses() {
    let dir = tempfile::tempdir().unwrap();
    let elf = c_kat_for_netduinoplus2(dir.path());

    // `size --board` another board: the report (which shows where the sections are), then an
    // error naming each section outside the map, instead of FLASH 0.
    let out = common::mcubench().args(["size", "--board", "mps2-an386"]).arg(&elf).output().unwrap();
    let stderr = String::from_utf8_lossy(&out.stderr);
    assert_eq!(out.status.code(), Some(2), "{stderr}");
    assert!(stdout(&out).contains(".text"), "{}", stdout(&out));
    assert!(
        stderr.contains("outside mps2-an386's memory map (FLASH 0x00000000..0x00400000, RAM 0x20000000..0x20400000)"),
        "{stderr}"
    );
    assert!(stderr.contains("section .vector_table at 0x08000000 (64 bytes)"), "{stderr}");
    assert!(stderr.contains("section .text at 0x080000"), "{stderr}");
    // .data runs in the board's RAM, but its initial values are loaded from 0x080…
    assert!(stderr.contains("the load image of section .data at 0x080"), "{stderr}");
    assert!(!stderr.contains(".bss"), "NOBITS .bss has no load image and runs in RAM: {stderr}");
    let json =
        common::mcubench().args(["size", "--format", "json", "--board", "mps2-an386"]).arg(&elf).output().unwrap();
    assert_eq!(json.status.code(), Some(2));
    let report: serde_json::Value = serde_json::from_slice(&json.stdout).unwrap();
    assert_eq!(report["flash"]["used"], 0, "{report}");
    assert!(report["warnings"][0].as_str().unwrap().contains("lies outside every memory region"), "{report}");

    // Its own board, or no board (sections placed by their flags): a report, no error.
    let out =
        common::mcubench().args(["size", "--format", "json", "--board", "netduinoplus2"]).arg(&elf).output().unwrap();
    assert!(out.status.success(), "{}", String::from_utf8_lossy(&out.stderr));
    let report: serde_json::Value = serde_json::from_slice(&out.stdout).unwrap();
    assert_eq!(report["flash"]["origin"], 0x0800_0000, "{report}");
    assert!(report["flash"]["used"].as_u64().unwrap() > 2000, "{report}");
    assert_eq!(report["warnings"], serde_json::json!([]), "{report}");
    let out = common::mcubench().arg("size").arg(&elf).output().unwrap();
    assert!(out.status.success(), "{}", String::from_utf8_lossy(&out.stderr));

    // `run` on another board: refused before QEMU starts, naming the board and the address.
    let out = common::mcubench().args(["run", "--quiet", "--board", "mps2-an386", "--elf"]).arg(&elf).output().unwrap();
    assert_eq!(out.status.code(), Some(1), "{}", stdout(&out));
    assert!(stdout(&out).contains("setup-error"), "{}", stdout(&out));
    assert!(stdout(&out).contains("the vector table is at 0x08000000, outside mps2-an386's flash"), "{}", stdout(&out));
    // On its own board it runs and passes.
    let out =
        common::mcubench().args(["run", "--quiet", "--board", "netduinoplus2", "--elf"]).arg(&elf).output().unwrap();
    assert_eq!(out.status.code(), Some(0), "{}", stdout(&out));
    assert!(stdout(&out).contains("4/4"), "{}", stdout(&out));
}

#[test]
fn a_scenario_typo_exits_2_with_line_and_column() {
    let dir = tempfile::tempdir().unwrap();
    let path = dir.path().join("typo.yaml");
    std::fs::write(&path, "name: x\nfirmware: { elf: a.elf }\nbords: [microbit]\n").unwrap();
    let out = common::mcubench().arg("run").arg(&path).output().unwrap();
    let stderr = String::from_utf8_lossy(&out.stderr);
    assert_eq!(out.status.code(), Some(2), "{stderr}");
    assert!(stderr.contains("typo.yaml:3:1: unknown field `bords`"), "{stderr}");
}

#[test]
fn every_run_is_contained_unless_told_otherwise() {
    let elf = common::c_firmware("hostile-system");
    let out = common::mcubench().args(["run", "--quiet", "--board", "mps2-an386", "--elf"]).arg(&elf).output().unwrap();
    let text = stdout(&out);
    assert_eq!(out.status.code(), Some(1), "{text}");
    assert!(text.contains("firmware attempted SYS_SYSTEM(`@@MCUBENCH-HOSTILE-ARG@@`): refused (EACCES)"), "{text}");
    // Uncontained, QEMU hands the (unpatched, harmless) command to a host shell: no refusal.
    let out = common::mcubench()
        .args(["run", "--quiet", "--no-contain", "--board", "mps2-an386", "--elf"])
        .arg(&elf)
        .output()
        .unwrap();
    let text = stdout(&out);
    assert!(!text.contains("firmware attempted"), "{text}");
}

/// A firmware that does not build, or a run that times out, is the machine's or the firmware's
/// problem, never "bad input": exit 1 from every command that builds or runs, with the cause shown.
#[test]
fn build_failures_and_timeouts_exit_1_not_2() {
    let dir = tempfile::tempdir().unwrap();
    let fw = dir.path().join("broken");
    std::fs::create_dir_all(fw.join("src")).unwrap();
    std::fs::write(
        fw.join("Cargo.toml"),
        "[package]\nname = \"broken\"\nversion = \"0.1.0\"\nedition = \"2021\"\n\n[workspace]\n",
    )
    .unwrap();
    std::fs::write(fw.join("src/main.rs"), "compile_error!(\"broken on purpose\");\n").unwrap();
    let scenario = dir.path().join("s.yaml");
    std::fs::write(&scenario, "name: s\nfirmware: { cargo: broken }\nboards: [mps2-an386]\n").unwrap();
    let out_dir = dir.path().join("prof");
    for args in [vec!["stack"], vec!["profile", "--out", out_dir.to_str().unwrap()]] {
        let out = common::mcubench().args(&args).arg(&scenario).output().unwrap();
        let stderr = String::from_utf8_lossy(&out.stderr);
        assert_eq!(out.status.code(), Some(1), "{args:?}: {stderr}");
        assert!(stderr.contains("broken on purpose"), "{args:?}: {stderr}");
    }
    let hang = common::c_firmware("hostile-silent-hang");
    let out = common::mcubench()
        .args(["profile", "--board", "mps2-an386", "--timeout", "1s", "--out"])
        .arg(&out_dir)
        .arg("--elf")
        .arg(&hang)
        .output()
        .unwrap();
    let stderr = String::from_utf8_lossy(&out.stderr);
    assert_eq!(out.status.code(), Some(1), "{stderr}");
    // A timed-out profile is printed, marked partial (tests/contain_profile.rs), and exits 1.
    assert!(stderr.contains("partial: the run timed out after 1 s"), "{stderr}");
}
