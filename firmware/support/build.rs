//! Picks the memory layout (memory.x) that cortex-m-rt's link.x includes.
//!
//! `MCUBENCH_MEMORY_X` = absolute path of a memory.x, or, if unset, a default per target:
//! thumbv6m -> linker/microbit, thumbv8m.main -> linker/mps2-an505, others -> linker/mps2.
//! The file is copied to OUT_DIR/memory.x and OUT_DIR is put on the linker search path
//! (dependents inherit it), so `-Tlink.x` finds it.

use std::{env, fs, path::PathBuf};

fn main() {
    println!("cargo:rerun-if-env-changed=MCUBENCH_MEMORY_X");
    println!("cargo:rerun-if-changed=build.rs");
    let target = env::var("TARGET").unwrap_or_default();
    let manifest = PathBuf::from(env::var("CARGO_MANIFEST_DIR").expect("CARGO_MANIFEST_DIR"));

    let memory_x = match env::var_os("MCUBENCH_MEMORY_X") {
        Some(p) if !p.is_empty() => {
            let p = PathBuf::from(p);
            if !p.is_absolute() {
                panic!("MCUBENCH_MEMORY_X must be an absolute path, got {}", p.display());
            }
            p
        }
        _ => {
            let layout = if target.starts_with("thumbv6m") {
                "microbit"
            } else if target.starts_with("thumbv8m.main") {
                "mps2-an505"
            } else {
                "mps2"
            };
            manifest.join("../../linker").join(layout).join("memory.x")
        }
    };
    println!("cargo:rerun-if-changed={}", memory_x.display());
    let text = fs::read(&memory_x).unwrap_or_else(|e| panic!("cannot read memory layout {}: {e}", memory_x.display()));
    let out = PathBuf::from(env::var("OUT_DIR").expect("OUT_DIR"));
    fs::write(out.join("memory.x"), text).expect("write OUT_DIR/memory.x");
    println!("cargo:rustc-link-search={}", out.display());

    // ARMv6-M has no CFSR/HFSR (and no FAULTMASK).
    println!("cargo::rustc-check-cfg=cfg(armv6m)");
    if target.starts_with("thumbv6m") {
        println!("cargo:rustc-cfg=armv6m");
    }
}
