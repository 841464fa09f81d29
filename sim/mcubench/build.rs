//! Builds mcubench's QEMU TCG plugin for both plugin APIs and hands the two `.so` files to the
//! crate, which embeds them (`include_bytes!` in `src/exec/plugin.rs`) and writes the one the
//! QEMU in use needs to a per-user cache at run time. So `cargo install` (from the repository,
//! `--git` or `--path`) installs a complete mcubench: no second step, no plugin that can go stale
//! or be missing, no source tree needed at run time.
//!
//! The plugin cannot be an ordinary dependency: it is a `cdylib` (cargo's artifact dependencies
//! are unstable), and its two builds enable features of the `qemu-plugin` crate that exclude each
//! other (`plugin-api-v1`, `plugin-api-v3`), which is why the v3 build is its own workspace. So
//! this script runs cargo on both, with the lock files committed (`--locked`), into
//! `<outer target directory>/qemu-plugin/` (or `MCUBENCH_PLUGIN_TARGET_DIR`): a directory of its
//! own, whose lock the outer cargo does not hold, shared by the outer build's profiles and
//! feature sets (they all embed the same release builds). The two builds share that directory
//! too: the dependencies they resolve alike (above all `capstone-sys`, whose C library is most of
//! a cold plugin build) are compiled once, not once per API (cold, the second build went from
//! 42 s to 10 s). Cargo reruns this script only when a source of the plugin changes, and the
//! nested builds are incremental.

use std::path::{Path, PathBuf};
use std::process::Command;

use sha2::{Digest, Sha256};

/// (package directory under `sim/`, library file, environment variable with the built file's
/// SHA-256 for the crate).
const BUILDS: [(&str, &str, &str); 2] = [
    ("qemu-plugin", "libmcubench_qemu_plugin_v1.so", "MCUBENCH_PLUGIN_V1_SHA256"),
    ("qemu-plugin/api-v3", "libmcubench_qemu_plugin_v3.so", "MCUBENCH_PLUGIN_V3_SHA256"),
];

fn main() {
    let manifest = PathBuf::from(std::env::var_os("CARGO_MANIFEST_DIR").expect("cargo sets CARGO_MANIFEST_DIR"));
    let sim = manifest.join("..");
    let out = PathBuf::from(std::env::var_os("OUT_DIR").expect("cargo sets OUT_DIR"));
    if !sim.join("qemu-plugin/Cargo.toml").is_file() {
        fail(&format!(
            "the QEMU plugin's source ({}) is missing: mcubench builds its TCG plugin from its repository; \
             install it with `cargo install --locked --git <mcubench repository> mcubench` or \
             `cargo install --locked --path sim/mcubench` in a checkout",
            sim.join("qemu-plugin").display()
        ));
    }
    // What the plugin is built from: its source and the crates it shares with the host.
    for dir in
        ["qemu-plugin/src", "qemu-plugin/Cargo.toml", "qemu-plugin/api-v3/Cargo.toml", "qemu-plugin/api-v3/Cargo.lock"]
            .iter()
            .chain(&["thumb", "timing", "wire"])
    {
        println!("cargo::rerun-if-changed={}", sim.join(dir).display());
    }
    println!("cargo::rerun-if-changed={}", sim.join("../Cargo.lock").display());
    println!("cargo::rerun-if-env-changed=MCUBENCH_PLUGIN_CARGO");
    println!("cargo::rerun-if-env-changed=MCUBENCH_PLUGIN_TARGET_DIR");

    let target = match std::env::var_os("MCUBENCH_PLUGIN_TARGET_DIR").filter(|v| !v.is_empty()) {
        Some(dir) => PathBuf::from(dir),
        // OUT_DIR is <target dir>/[<triple>/]<profile>/build/<package>-<hash>/out.
        None => out.ancestors().nth(4).map_or_else(|| out.join("qemu-plugin"), |t| t.join("qemu-plugin")),
    };
    for (dir, file, env) in BUILDS {
        let so = build(&sim.join(dir).join("Cargo.toml"), &target, file);
        let bytes = std::fs::read(&so).unwrap_or_else(|e| fail(&format!("cannot read {}: {e}", so.display())));
        let embedded = out.join(file);
        std::fs::write(&embedded, &bytes)
            .unwrap_or_else(|e| fail(&format!("cannot write {}: {e}", embedded.display())));
        let hash: String = Sha256::digest(&bytes).iter().map(|b| format!("{b:02x}")).collect();
        println!("cargo::rustc-env={env}={hash}");
    }
}

/// `cargo build --release --locked` of the plugin package at `manifest` into `target`; the
/// built library `file`.
fn build(manifest: &Path, target: &Path, file: &str) -> PathBuf {
    // The cargo that runs this script (the same toolchain as the outer build).
    let cargo = std::env::var_os("MCUBENCH_PLUGIN_CARGO")
        .or_else(|| std::env::var_os("CARGO"))
        .unwrap_or_else(|| "cargo".into());
    let mut command = Command::new(&cargo);
    command
        .args(["build", "--release", "--locked", "--quiet", "--manifest-path"])
        .arg(manifest)
        .arg("--target-dir")
        .arg(target)
        // The outer build's settings are for mcubench, not for a host cdylib built elsewhere.
        .env_remove("CARGO_TARGET_DIR")
        .env_remove("CARGO_BUILD_TARGET")
        .env_remove("CARGO_BUILD_TARGET_DIR")
        .env_remove("CARGO_ENCODED_RUSTFLAGS")
        .env_remove("RUSTFLAGS")
        .env_remove("CARGO_PRIMARY_PACKAGE")
        .env_remove("RUSTC_WORKSPACE_WRAPPER");
    // Profile overrides (`CARGO_PROFILE_RELEASE_OPT_LEVEL=0 cargo install ...`) are for mcubench
    // too: the plugin is always the release build the outer build's other profiles share.
    for (key, _) in std::env::vars_os() {
        if key.to_str().is_some_and(|k| k.starts_with("CARGO_PROFILE_")) {
            command.env_remove(key);
        }
    }
    let output = command
        .output()
        .unwrap_or_else(|e| fail(&format!("cannot run `{}` to build the QEMU plugin: {e}", cargo.to_string_lossy())));
    if !output.status.success() {
        fail(&format!(
            "building the QEMU plugin (`cargo build --release --locked --manifest-path {}`) failed:\n{}",
            manifest.display(),
            String::from_utf8_lossy(&output.stderr).trim_end()
        ));
    }
    let so = target.join("release").join(file);
    if !so.is_file() {
        fail(&format!("cargo built {} but {} is missing", manifest.display(), so.display()));
    }
    so
}

fn fail(message: &str) -> ! {
    eprintln!("error: {message}");
    std::process::exit(1);
}
