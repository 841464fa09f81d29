//! Shared by the QEMU-backed integration tests. They build real firmware and run real QEMU: a
//! machine without `qemu-system-arm`, the thumb targets or arm-none-eabi-gcc fails them with the
//! message that says what to install (`bash ci/setup.sh`); nothing is skipped.
#![allow(dead_code)]

use std::path::{Path, PathBuf};
use std::process::Command;
use std::sync::OnceLock;

use mcubench::report::{CellReport, RunReport};
use mcubench::{RunOptions, Scenario, run_scenario};

pub fn repo() -> PathBuf {
    Path::new(env!("CARGO_MANIFEST_DIR")).join("../..").canonicalize().expect("repo root")
}

/// A scenario from YAML text, anchored in the repo's `scenarios/` directory.
pub fn scenario(yaml: &str) -> Scenario {
    Scenario::from_yaml(&repo().join("scenarios/test.yaml"), yaml).unwrap_or_else(|e| panic!("{e}"))
}

pub fn run(s: &Scenario) -> RunReport {
    run_scenario(s, &RunOptions { jobs: 2, ..RunOptions::default() })
}

pub fn only_cell(report: RunReport) -> CellReport {
    assert_eq!(report.cells.len(), 1, "one board × profile expected");
    report.cells.into_iter().next().unwrap()
}

/// The C firmware ELFs, built once per test binary with arm-none-eabi-gcc.
pub fn c_firmware(name: &str) -> PathBuf {
    static DIR: OnceLock<PathBuf> = OnceLock::new();
    let dir = DIR.get_or_init(|| {
        // Per test binary: binaries run one after another, but a stale half-built dir must not be reused.
        let out = std::path::Path::new(env!("CARGO_TARGET_TMPDIR")).join(format!("c-fw-{}", std::process::id()));
        let status =
            Command::new("bash").arg(repo().join("firmware/c/build.sh")).arg(&out).status().expect("bash runs");
        assert!(status.success(), "firmware/c/build.sh failed; is arm-none-eabi-gcc installed? run `bash ci/setup.sh`");
        out
    });
    let elf = dir.join(format!("{name}.elf"));
    assert!(elf.is_file(), "{} was not built by firmware/c/build.sh", elf.display());
    elf
}

pub fn mcubench() -> Command {
    Command::new(env!("CARGO_BIN_EXE_mcubench"))
}
