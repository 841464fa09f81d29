//! The decoder against arm-none-eabi-objdump on every instruction of the repository's own firmware:
//! the Rust KAT firmware for all four thumb targets (built here with cargo) and every C firmware of
//! firmware/c (built with firmware/c/build.sh). Same comparison as objdump_diff.rs: address, length
//! and direct branch/call targets, and nothing in a code region may fail to decode.

// Full test tier: needs QEMU and/or the Arm GCC toolchain (bash ci/setup.sh).
#![cfg(feature = "full")]

mod common;

use std::path::{Path, PathBuf};
use std::process::Command;

use mcubench_thumb::{Arch, Decoder};

fn repo() -> PathBuf {
    Path::new(env!("CARGO_MANIFEST_DIR")).join("../..")
}

fn check(elf: &Path, arch: Arch, fpu: bool, failures: &mut Vec<String>, summary: &mut Vec<String>) {
    let dec = Decoder::new(arch, fpu).expect("decoder");
    let rep = common::compare(&dec, elf);
    let name = elf.strip_prefix(repo()).unwrap_or(elf).display().to_string();
    if rep.insns < 100 {
        failures.push(format!("{name}: only {} instructions decoded", rep.insns));
    }
    for m in rep.mismatches.iter().chain(&rep.errors).take(5) {
        failures.push(format!("{name}: {m}"));
    }
    summary.push(format!(
        "{name}: {} insns, {} branches, {} mismatches, {} errors",
        rep.insns,
        rep.branches,
        rep.mismatches.len(),
        rep.errors.len()
    ));
}

#[test]
fn decoder_agrees_with_objdump_on_the_repository_firmware() {
    let mut failures = Vec::new();
    let mut summary = Vec::new();

    // Rust KAT firmware, one build per target: the build of sim/stack/tests/stack_vs_llvm.rs
    // (same directory, command and environment, so in a full test run these builds are already
    // fresh): the release profile plus LLVM's `-Z emit-stack-sizes` and the stable toolchain's
    // (legacy) symbol mangling, whose loaded bytes are a plain stable build's; only the
    // non-alloc `.stack_sizes` section is added.
    for (triple, arch, fpu) in [
        ("thumbv6m-none-eabi", Arch::V6M, false),
        ("thumbv7m-none-eabi", Arch::V7M, false),
        ("thumbv7em-none-eabihf", Arch::V7EM, true),
        ("thumbv8m.main-none-eabihf", Arch::V8MMain, true),
    ] {
        let target_dir = repo().join("firmware/target/stack-sizes");
        let out = Command::new("cargo")
            .current_dir(repo().join("firmware"))
            .args(["build", "--release", "-p", "kat", "--bin", "kat", "--target", triple, "--target-dir"])
            .arg(&target_dir)
            .arg("--config")
            .arg(format!(
                r#"target.{triple}.rustflags=["-Z","emit-stack-sizes","-Z","unstable-options","-C","symbol-mangling-version=legacy"]"#
            ))
            .env("RUSTC_BOOTSTRAP", "1")
            // RUSTFLAGS would replace the firmware's -Tlink.x (see sim/mcubench/src/build.rs).
            .env_remove("RUSTFLAGS")
            .env_remove("CARGO_ENCODED_RUSTFLAGS")
            .env_remove("CARGO_BUILD_RUSTFLAGS")
            .env_remove("CARGO_TARGET_DIR")
            .env_remove("CARGO_BUILD_TARGET")
            .env_remove("MCUBENCH_MEMORY_X")
            .stdin(std::process::Stdio::null())
            .output()
            .expect("cargo runs");
        assert!(out.status.success(), "building kat for {triple}: {}", String::from_utf8_lossy(&out.stderr));
        check(&target_dir.join(triple).join("release/kat"), arch, fpu, &mut failures, &mut summary);
    }

    // C firmware (Cortex-M4F hard float, except the Cortex-M0 kernels).
    let c_out = Path::new(env!("CARGO_TARGET_TMPDIR")).join(format!("repo-c-fw-{}", std::process::id()));
    let status = Command::new("bash").arg(repo().join("firmware/c/build.sh")).arg(&c_out).output().expect("bash runs");
    assert!(status.status.success(), "firmware/c/build.sh: {}", String::from_utf8_lossy(&status.stderr));
    let mut elfs: Vec<PathBuf> = std::fs::read_dir(&c_out)
        .unwrap()
        .filter_map(|e| e.ok().map(|e| e.path()))
        .filter(|p| p.extension().is_some_and(|x| x == "elf"))
        .collect();
    elfs.sort();
    assert!(elfs.len() >= 5, "C firmware built: {elfs:?}");
    for elf in &elfs {
        let armv6m = elf.file_name().is_some_and(|n| n.to_string_lossy().contains("armv6m"));
        let (arch, fpu) = if armv6m { (Arch::V6M, false) } else { (Arch::V7EM, true) };
        check(elf, arch, fpu, &mut failures, &mut summary);
    }
    eprintln!("{}", summary.join("\n"));
    assert!(failures.is_empty(), "{failures:#?}");
}
