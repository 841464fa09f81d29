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

/// The C firmware ELFs, built with arm-none-eabi-gcc once per change of their sources: into a
/// directory of the target's tmp dir named by a hash of every file under firmware/c, the linker
/// files, the timing kernels and the compiler's version, under a file lock (test binaries of one run share it; the
/// first builds into a temporary directory and renames it into place, so a half-built one is
/// never used). Older builds are removed.
pub fn c_firmware(name: &str) -> PathBuf {
    static DIR: OnceLock<PathBuf> = OnceLock::new();
    let dir = DIR.get_or_init(build_c_firmware);
    let elf = dir.join(format!("{name}.elf"));
    assert!(elf.is_file(), "{} was not built by firmware/c/build.sh", elf.display());
    elf
}

fn build_c_firmware() -> PathBuf {
    use std::hash::{Hash, Hasher};
    let root = repo();
    let mut files = Vec::new();
    // build.sh also assembles the timing kernels of sim/timing/kernels.
    for dir in ["firmware/c", "linker", "sim/timing/kernels"] {
        collect_files(&root.join(dir), &mut files);
    }
    files.sort();
    // A stable hash (std's SipHash with fixed keys): the same sources give the same directory.
    let mut hasher = std::hash::DefaultHasher::new();
    for f in &files {
        f.strip_prefix(&root).unwrap_or(f).hash(&mut hasher);
        std::fs::read(f).unwrap_or_default().hash(&mut hasher);
    }
    let gcc = Command::new("arm-none-eabi-gcc").arg("--version").output().map(|o| o.stdout).unwrap_or_default();
    gcc.hash(&mut hasher);
    let tmp = Path::new(env!("CARGO_TARGET_TMPDIR"));
    let out = tmp.join(format!("c-fw-{:016x}", hasher.finish()));
    let lock = std::fs::File::create(tmp.join("c-fw.lock")).expect("lock file");
    lock.lock().expect("lock the C firmware build");
    if !out.is_dir() {
        let staging = tmp.join(format!("c-fw-staging-{}", std::process::id()));
        let _ = std::fs::remove_dir_all(&staging);
        let status =
            Command::new("bash").arg(root.join("firmware/c/build.sh")).arg(&staging).status().expect("bash runs");
        assert!(status.success(), "firmware/c/build.sh failed; is arm-none-eabi-gcc installed? run `bash ci/setup.sh`");
        std::fs::rename(&staging, &out).expect("move the C firmware build into place");
        // Builds of older sources are of no use any more.
        for entry in std::fs::read_dir(tmp).into_iter().flatten().flatten() {
            let p = entry.path();
            let name = p.file_name().and_then(|n| n.to_str()).unwrap_or_default().to_string();
            if name.starts_with("c-fw-") && p.is_dir() && p != out {
                let _ = std::fs::remove_dir_all(&p);
            }
        }
    }
    drop(lock);
    out
}

fn collect_files(dir: &Path, out: &mut Vec<PathBuf>) {
    for entry in std::fs::read_dir(dir).into_iter().flatten().flatten() {
        let p = entry.path();
        // Build outputs inside the tree (make's build/ directories) are not sources.
        if p.is_dir() && p.file_name().is_some_and(|n| n != "build") {
            collect_files(&p, out);
        } else if p.is_file() {
            out.push(p);
        }
    }
}

pub fn mcubench() -> Command {
    Command::new(env!("CARGO_BIN_EXE_mcubench"))
}

/// The KAT firmware's speed build on mps2-an386 priced as an STM32F407 (`timing: stm32f407`: 5
/// wait states behind the ART accelerator): a memory system on real firmware.
pub fn kat_speed_as_stm32f407() -> mcubench::Scenario {
    let text = "name: kat-stm32f407\n\
                firmware: { cargo: ../firmware/kat, vectors: ../firmware/kat/vectors }\n\
                boards: [mps2-an386]\n\
                timing: stm32f407\n\
                profiles: { speed: { opt-level: 3 } }\n\
                timeout: 20 s\n";
    // Paths are relative to the scenario's directory.
    mcubench::Scenario::from_yaml(&repo().join("scenarios/kat-stm32f407.yaml"), text).unwrap()
}
