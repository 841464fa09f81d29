//! The host checks KAT outputs against its own copy of the vectors (`firmware.vectors`), with real
//! firmware under real QEMU: a firmware that claims `result=pass` with a wrong output fails, a KAT
//! id the vectors lack fails, a vector that never ran fails; the real KAT firmware passes, and a
//! build with a corrupted built-in vector fails and says which copy is wrong.

// Full test tier: needs QEMU and/or the Arm GCC toolchain (bash ci/setup.sh).
#![cfg(feature = "full")]

mod common;

use std::path::Path;

use mcubench::judge::verdict::Outcome;
use mcubench::report::CellReport;
use mcubench::{RunOptions, Scenario, run_scenario};

fn run_yaml(dir: &Path, yaml: &str, contain: bool) -> CellReport {
    let path = dir.join("s.yaml");
    std::fs::write(&path, yaml).unwrap();
    let scenario = Scenario::load(&path).unwrap_or_else(|e| panic!("{e}"));
    common::only_cell(run_scenario(&scenario, &RunOptions { jobs: 1, contain, ..RunOptions::default() }))
}

fn elf_scenario(elf: &Path, vectors: Option<&Path>) -> String {
    let vectors = vectors.map(|v| format!(", vectors: {}", v.display())).unwrap_or_default();
    format!("name: v\nfirmware: {{ elf: {}{vectors} }}\nboards: [mps2-an386]\ntimeout: 10 s\n", elf.display())
}

#[test]
fn a_forged_pass_fails_against_the_hosts_vectors_natively_and_contained() {
    let dir = tempfile::tempdir().unwrap();
    let elf = common::c_firmware("hostile-forged-kat");
    // Without vectors the host can only believe the firmware.
    let cell = run_yaml(dir.path(), &elf_scenario(&elf, None), false);
    assert_eq!(cell.verdict.outcome, Outcome::Pass, "{}", cell.verdict.message);

    let vectors = common::repo().join("firmware/c/hostile/vectors.txt");
    for contain in [false, true] {
        let cell = run_yaml(dir.path(), &elf_scenario(&elf, Some(&vectors)), contain);
        assert_eq!(cell.verdict.outcome, Outcome::Fail, "contain={contain}: {}", cell.verdict.message);
        assert_eq!(
            cell.verdict.message,
            "firmware reported pass but its output for crc32/check-123456789 differs from the vector \
             (vectors.txt:5): expected cbf43926 got 00000000",
            "contain={contain}"
        );
    }
}

#[test]
fn the_c_kat_passes_and_forged_or_missing_ids_fail() {
    let dir = tempfile::tempdir().unwrap();
    let elf = common::c_firmware("kat-crc32");
    let real = common::repo().join("firmware/c/kat-crc32/vectors.txt");
    let cell = run_yaml(dir.path(), &elf_scenario(&elf, Some(&real)), false);
    assert_eq!(cell.verdict.outcome, Outcome::Pass, "{}", cell.verdict.message);

    // The firmware reports an id the vectors do not have, and one vector never runs.
    let text = std::fs::read_to_string(&real).unwrap();
    let edited = text.replace("crc32/a CRC-32", "crc32/b CRC-32");
    let v = dir.path().join("edited.txt");
    std::fs::write(&v, edited).unwrap();
    let cell = run_yaml(dir.path(), &elf_scenario(&elf, Some(&v)), false);
    assert_eq!(cell.verdict.outcome, Outcome::Fail, "{}", cell.verdict.message);
    let m = &cell.verdict.message;
    assert!(m.contains("the firmware reported KAT `crc32/a`, which is not in the scenario's vectors"), "{m}");
    assert!(m.contains("a forged or stale id"), "{m}");
    assert!(m.contains("missing KAT(s): 1 of 4 vector(s) in"), "{m}");
    assert!(m.ends_with("never ran: crc32/b"), "{m}");
}

fn kat_yaml(features: &str) -> String {
    let repo = common::repo();
    format!(
        "name: kat\nfirmware: {{ cargo: {}, features: [{features}], vectors: {} }}\nboards: [mps2-an386]\n\
         profiles: {{ speed: {{ opt-level: 3 }} }}\ntimeout: 30 s\n",
        repo.join("firmware/kat").display(),
        repo.join("firmware/kat/vectors").display()
    )
}

#[test]
fn the_rust_kat_passes_against_the_vector_directory() {
    // scenarios/kat.yaml names the directory; its loading is what users get.
    let kat = Scenario::load(&common::repo().join("scenarios/kat.yaml")).unwrap();
    assert_eq!(kat.vectors.as_ref().map(|v| v.len()), Some(61));
    let dir = tempfile::tempdir().unwrap();
    let cell = run_yaml(dir.path(), &kat_yaml(""), false);
    assert_eq!(cell.verdict.outcome, Outcome::Pass, "{}", cell.verdict.message);
    assert_eq!(cell.kats.len(), 61);
}

#[test]
fn a_wrong_vector_build_fails_and_the_host_names_the_wrong_copy() {
    let dir = tempfile::tempdir().unwrap();
    let cell = run_yaml(dir.path(), &kat_yaml("wrong-vector"), false);
    assert_eq!(cell.verdict.outcome, Outcome::Fail, "{}", cell.verdict.message);
    let m = &cell.verdict.message;
    assert!(m.starts_with("1 KAT(s) failed: aes-128/fips197-c1-enc: expected 68c4e0d8"), "{m}");
    assert!(
        m.contains(
            "against the vectors: KAT aes-128/fips197-c1-enc: the firmware's expected value 68c4e0d86a7b0430d8cdb78070b4c55a \
             differs from the vector (aes.txt:16) 69c4e0d86a7b0430d8cdb78070b4c55a: its output is right, its copy of the vector is wrong"
        ),
        "{m}"
    );
}

#[test]
fn run_elf_takes_the_vectors_from_the_command_line() {
    let elf = common::c_firmware("hostile-forged-kat");
    let vectors = common::repo().join("firmware/c/hostile/vectors.txt");
    let out = common::mcubench()
        .args(["run", "--quiet", "--board", "mps2-an386", "--elf"])
        .arg(&elf)
        .arg("--vectors")
        .arg(&vectors)
        .output()
        .unwrap();
    let stdout = String::from_utf8_lossy(&out.stdout);
    assert_eq!(out.status.code(), Some(1), "{stdout}");
    assert!(stdout.contains("firmware reported pass but its output for crc32/check-123456789 differs"), "{stdout}");
    // A bad vector file is bad input: exit 2, naming it.
    let out = common::mcubench()
        .args(["run", "--quiet", "--board", "mps2-an386", "--elf"])
        .arg(&elf)
        .args(["--vectors", "/nonexistent/vectors.txt"])
        .output()
        .unwrap();
    let stderr = String::from_utf8_lossy(&out.stderr);
    assert_eq!(out.status.code(), Some(2), "{stderr}");
    assert!(stderr.contains("/nonexistent/vectors.txt"), "{stderr}");
}
