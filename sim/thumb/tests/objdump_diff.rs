//! Differential test against arm-none-eabi-objdump: tests/data/varied.c is built with
//! arm-none-eabi-gcc for Cortex-M0, M3, M4F, M7 (FPv5-D16) and M33 (FPv5-SP) at -O2 and -Os, linked
//! with libgcc; every instruction of every function symbol's code (`$d` data skipped via mapping
//! symbols) is decoded and compared with objdump for address, length and direct branch/call target.
//! Nothing in a code region may fail to decode.

// Full test tier: needs QEMU and/or the Arm GCC toolchain (bash ci/setup.sh).
#![cfg(feature = "full")]

mod common;

use std::path::PathBuf;
use std::process::Command;

use mcubench_thumb::{Arch, Decoder, Flow};

struct Cfg {
    name: &'static str,
    flags: &'static [&'static str],
    arch: Arch,
    fpu: bool,
}

const CFGS: &[Cfg] = &[
    Cfg { name: "m0", flags: &["-mcpu=cortex-m0"], arch: Arch::V6M, fpu: false },
    Cfg { name: "m3", flags: &["-mcpu=cortex-m3"], arch: Arch::V7M, fpu: false },
    Cfg {
        name: "m4f",
        flags: &["-mcpu=cortex-m4", "-mfloat-abi=hard", "-mfpu=fpv4-sp-d16"],
        arch: Arch::V7EM,
        fpu: true,
    },
    Cfg { name: "m7", flags: &["-mcpu=cortex-m7", "-mfloat-abi=hard", "-mfpu=fpv5-d16"], arch: Arch::V7EM, fpu: true },
    Cfg {
        name: "m33",
        flags: &["-mcpu=cortex-m33", "-mfloat-abi=hard", "-mfpu=fpv5-sp-d16"],
        arch: Arch::V8MMain,
        fpu: true,
    },
];

fn tmpdir() -> PathBuf {
    let d = std::env::temp_dir().join(format!("mcubench-thumb-diff-{}", std::process::id()));
    std::fs::create_dir_all(&d).expect("temp dir");
    d
}

#[test]
fn decoder_agrees_with_objdump_on_gcc_output() {
    let src = PathBuf::from(env!("CARGO_MANIFEST_DIR")).join("tests/data/varied.c");
    let dir = tmpdir();
    let mut summary = Vec::new();
    let mut failures = Vec::new();
    for cfg in CFGS {
        for opt in ["-O2", "-Os"] {
            let elf = dir.join(format!("{}{}.elf", cfg.name, opt));
            let out = Command::new("arm-none-eabi-gcc")
                .arg("-mthumb")
                .args(cfg.flags)
                .args([opt, "-nostdlib", "-nostartfiles", "-Wl,-e,entry", "-o"])
                .arg(&elf)
                .arg(&src)
                .arg("-lgcc")
                .output()
                .expect("run arm-none-eabi-gcc (is the arm-none-eabi toolchain installed?)");
            assert!(out.status.success(), "gcc {} {opt}: {}", cfg.name, String::from_utf8_lossy(&out.stderr));
            let dec = Decoder::new(cfg.arch, cfg.fpu).expect("decoder");
            let rep = common::compare(&dec, &elf);
            // The comparison must have had something to compare.
            assert!(rep.insns > 500, "{} {opt}: only {} instructions decoded", cfg.name, rep.insns);
            assert!(rep.branches > 50, "{} {opt}: only {} direct branches", cfg.name, rep.branches);
            let bytes = std::fs::read(&elf).expect("read ELF");
            let regions = common::code_regions(&bytes);
            let tables = regions
                .iter()
                .flat_map(|r| dec.decode_block(r.addr, &r.bytes).0)
                .filter(|i| matches!(i.flow, Flow::TableBranch { table: Some(_), .. }))
                .count();
            if cfg.arch != Arch::V6M {
                assert!(tables > 0, "{} {opt}: no TBB/TBH decoded", cfg.name);
            }
            summary.push(format!(
                "{}{opt}: {} insns, {} branches, {} table branches, {} mismatches, {} errors",
                cfg.name,
                rep.insns,
                rep.branches,
                tables,
                rep.mismatches.len(),
                rep.errors.len()
            ));
            for m in rep.mismatches.iter().chain(&rep.errors).take(20) {
                failures.push(format!("{}{opt}: {m}", cfg.name));
            }
            if rep.mismatches.len() + rep.errors.len() > 20 {
                failures.push(format!("{}{opt}: …", cfg.name));
            }
        }
    }
    let _ = std::fs::remove_dir_all(&dir);
    println!("{}", summary.join("\n"));
    assert!(failures.is_empty(), "{}\n{}", summary.join("\n"), failures.join("\n"));
}
