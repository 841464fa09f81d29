//! Builds cargo firmware for one board and profile.
//!
//! Each memory layout (and set of profile `cfg` flags) gets one target directory under
//! `<target>/mcubench/`, shared by the profiles: their opt-levels and features are part of
//! cargo's artifact hashes, so switching between profiles never rebuilds, and the host-side
//! crates every build needs (proc macros, build scripts: about two thirds of a cold build's CPU
//! for the bundled firmware) are compiled once per directory, not once per profile. `cfg` flags
//! (target rustflags) select the directory too: cargo keeps one fingerprint per binary across
//! rustflags, so two cfg sets in one directory would relink each other's ELF every time. Two
//! boards that share a target and a layout (mps2-an386 and mps2-an500) share one ELF.
//!
//! Profiles of one directory link the same output path (`<triple>/release/<bin>`), so a build
//! holds a lock on the directory until it has copied its ELF to a path of its own
//! (`elf/<triple>/<profile>-<hash of the settings>/<bin>`); builds of other layouts run in
//! parallel.
//!
//! The environment's `RUSTFLAGS` is removed: it would replace the firmware's `.cargo/config.toml`
//! rustflags, drop `-Tlink.x`, and stable rustc would then link an empty ELF without complaint.
//! Profile `cfg` flags are passed with `--config target.<triple>.rustflags`, which cargo merges
//! with the config file's list instead of replacing it (test `a_profile_cfg_reaches_rustc_on_every_target`).

use std::path::{Path, PathBuf};
use std::process::{Command, Stdio};

use crate::config::board::Board;
use std::collections::BTreeMap;
use std::sync::Mutex;

use crate::config::scenario::{Firmware, Profile, expand};

#[derive(Debug, thiserror::Error)]
pub enum BuildError {
    #[error("`cargo` could not be started: {0}")]
    Cargo(std::io::Error),
    #[error("the build command could not be started (`sh -c` in {dir}): {source}")]
    Shell { dir: PathBuf, source: std::io::Error },
    #[error("{dir}: `cargo metadata` failed: {stderr}")]
    Metadata { dir: PathBuf, stderr: String },
    #[error("cannot write {path}: {source}")]
    Write { path: PathBuf, source: std::io::Error },
    #[error("cannot read {path}: {source}")]
    Read { path: PathBuf, source: std::io::Error },
    #[error("cannot lock {path} (held while a build links and copies its ELF): {source}")]
    Lock { path: PathBuf, source: std::io::Error },
    #[error(
        "building `{bin}` for {board} ({target}, profile {profile}) failed:\n{stderr}\nhint: is the Rust target installed? `bash ci/setup.sh` adds all four thumb targets"
    )]
    Failed { bin: String, board: String, target: String, profile: String, stderr: String },
    #[error("cargo built `{bin}` for {board} but reported no executable; is `{bin}` a [[bin]] of the crate?")]
    NoArtifact { bin: String, board: String },
    #[error("the build command `{command}` (in {dir}) failed ({status}):\n{output}")]
    Command { command: String, dir: PathBuf, status: String, output: String },
    /// A failure already described (the same build command, shared by several cells).
    #[error("{0}")]
    Reported(String),
    #[error(
        "the build command `{command}` ran, but the ELF `{elf}` it should leave does not exist; check `firmware.elf`"
    )]
    NoElf { command: String, elf: PathBuf },
    #[error(
        "`{elf}` does not exist (`firmware.elf` for this cell; paths are relative to the scenario file's directory)"
    )]
    MissingElf { elf: PathBuf },
}

/// The firmware crate to build: its directory, binary and always-on features.
#[derive(Debug, Clone)]
pub struct CargoFirmware<'a> {
    pub package_dir: &'a Path,
    pub bin: &'a str,
    pub features: &'a [String],
}

/// Where a scenario's ELF for a board × profile comes from: built with cargo, or given.
#[derive(Debug)]
pub enum ElfSource<'a> {
    Cargo {
        firmware: CargoFirmware<'a>,
        target_root: PathBuf,
    },
    Prebuilt(&'a Path),
    /// A build command and ELF path over the matrix variables; each distinct command runs once.
    Template {
        dir: &'a Path,
        command: Option<&'a str>,
        elf: &'a str,
        ran: Mutex<BTreeMap<String, Result<(), String>>>,
    },
}

impl<'a> ElfSource<'a> {
    /// For a scenario's `firmware`; asks cargo for the target directory once.
    pub fn new(firmware: &'a Firmware) -> Result<ElfSource<'a>, BuildError> {
        Ok(match firmware {
            Firmware::Elf { path } => ElfSource::Prebuilt(path),
            Firmware::Template { dir, command, elf } => {
                ElfSource::Template { dir, command: command.as_deref(), elf, ran: Mutex::new(BTreeMap::new()) }
            }
            Firmware::Cargo { package_dir, bin, features } => ElfSource::Cargo {
                firmware: CargoFirmware { package_dir, bin, features },
                target_root: target_directory(package_dir)?,
            },
        })
    }

    /// The ELF for `board` with `profile` (building it if it is built).
    pub fn elf(&self, board: &Board, profile: &Profile) -> Result<PathBuf, BuildError> {
        match self {
            ElfSource::Prebuilt(path) => Ok(path.to_path_buf()),
            ElfSource::Cargo { firmware, target_root } => build(firmware, target_root, board, profile),
            ElfSource::Template { dir, command, elf, ran } => {
                let elf = dir.join(expand(elf, &profile.vars, board.name));
                if let Some(command) = command {
                    let command = expand(command, &profile.vars, board.name);
                    // One build at a time (two `make`s in one tree would race) and each command
                    // once: the map's lock serialises them.
                    let mut ran = ran.lock().unwrap_or_else(|p| p.into_inner());
                    if !ran.contains_key(&command) {
                        let result = run_command(&command, dir).map_err(|e| e.to_string());
                        ran.insert(command.clone(), result);
                    }
                    if let Some(Err(e)) = ran.get(&command) {
                        return Err(BuildError::Reported(e.clone()));
                    }
                    if !elf.is_file() {
                        return Err(BuildError::NoElf { command, elf });
                    }
                } else if !elf.is_file() {
                    return Err(BuildError::MissingElf { elf });
                }
                Ok(elf)
            }
        }
    }
}

/// Runs a scenario's build command with `sh -c` in `dir`, stdin closed; a failure keeps the end
/// of its output, where compilers put the error.
fn run_command(command: &str, dir: &Path) -> Result<(), BuildError> {
    const KEEP: usize = 8 * 1024;
    let out = Command::new("sh")
        .arg("-c")
        .arg(command)
        .current_dir(dir)
        .stdin(Stdio::null())
        .output()
        .map_err(|source| BuildError::Shell { dir: dir.to_path_buf(), source })?;
    if out.status.success() {
        return Ok(());
    }
    let mut text = String::from_utf8_lossy(&out.stdout).into_owned();
    text.push_str(&String::from_utf8_lossy(&out.stderr));
    let mut start = text.len().saturating_sub(KEEP);
    while !text.is_char_boundary(start) {
        start += 1;
    }
    Err(BuildError::Command {
        command: command.to_string(),
        dir: dir.to_path_buf(),
        status: out.status.to_string(),
        output: text[start..].trim_end().to_string(),
    })
}

/// The directory cargo builds this crate's workspace into (respects the user's cargo config).
pub fn target_directory(package_dir: &Path) -> Result<PathBuf, BuildError> {
    let out = Command::new("cargo")
        .args(["metadata", "--no-deps", "--format-version", "1"])
        .current_dir(package_dir)
        .stdin(Stdio::null())
        .output()
        .map_err(BuildError::Cargo)?;
    let fail = |stderr: String| BuildError::Metadata { dir: package_dir.to_owned(), stderr };
    if !out.status.success() {
        return Err(fail(String::from_utf8_lossy(&out.stderr).into_owned()));
    }
    let meta: serde_json::Value =
        serde_json::from_slice(&out.stdout).map_err(|e| fail(format!("unreadable output: {e}")))?;
    meta["target_directory"]
        .as_str()
        .map(PathBuf::from)
        .ok_or_else(|| fail("no `target_directory` in its output".into()))
}

/// The `--config` arguments that select the profile's opt-level and cfg flags.
fn config_args(board: &Board, profile: &Profile) -> Vec<String> {
    let mut args = Vec::new();
    if let Some(level) = &profile.opt_level {
        let value = if level.chars().all(|c| c.is_ascii_digit()) { level.clone() } else { format!("\"{level}\"") };
        args.extend(["--config".into(), format!("profile.release.opt-level={value}")]);
    }
    if !profile.cfg.is_empty() {
        let flags: Vec<String> = profile.cfg.iter().flat_map(|c| ["\"--cfg\"".to_string(), toml_string(c)]).collect();
        // Dotted, not quoted: cargo looks a triple with a dot in it (thumbv8m.main-…) up as nested
        // keys, as `[target.thumbv8m.main-none-eabihf]` in a config file; a quoted key is silently
        // never read.
        args.extend(["--config".into(), format!("target.{}.rustflags=[{}]", board.rust_target, flags.join(","))]);
    }
    args
}

/// A TOML basic string: cfg values such as `aes_backend_soft="compact"` carry quotes.
fn toml_string(text: &str) -> String {
    format!("\"{}\"", text.replace('\\', "\\\\").replace('"', "\\\""))
}

/// Builds the firmware for `board` with `profile` and returns the ELF's path.
pub fn build(
    firmware: &CargoFirmware<'_>,
    target_root: &Path,
    board: &Board,
    profile: &Profile,
) -> Result<PathBuf, BuildError> {
    // One directory per memory layout and cfg set (see the module comment); the ELF's own path
    // names the profile and a hash of all its settings, so two builds that differ in any of them
    // (two scenarios, or two tests at once) never overwrite each other's ELF.
    let mut features: Vec<&str> = firmware.features.iter().map(String::as_str).collect();
    features.extend(profile.features.iter().map(String::as_str));
    let settings = format!("{features:?} {:?} {:?}", profile.cfg, profile.opt_level);
    let cfg = format!("{:?}", profile.cfg);
    let target_dir = target_root.join("mcubench").join(format!("{}-{:08x}", board.layout.name, fnv1a(cfg.as_bytes())));
    std::fs::create_dir_all(&target_dir).map_err(|source| BuildError::Write { path: target_dir.clone(), source })?;
    let lock_path = target_dir.join("mcubench-build.lock");
    let lock =
        std::fs::File::create(&lock_path).map_err(|source| BuildError::Write { path: lock_path.clone(), source })?;
    lock.lock().map_err(|source| BuildError::Lock { path: lock_path.clone(), source })?;
    let memory_x = target_dir.join("memory.x");
    write_if_changed(&memory_x, board.layout.memory_x().as_bytes())
        .map_err(|source| BuildError::Write { path: memory_x.clone(), source })?;

    let mut cmd = Command::new("cargo");
    cmd.current_dir(firmware.package_dir)
        .args(["build", "--release", "--message-format", "json-render-diagnostics", "--target"])
        .arg(board.rust_target)
        .args(["--bin", firmware.bin])
        .arg("--target-dir")
        .arg(&target_dir)
        .args(config_args(board, profile))
        .env("MCUBENCH_MEMORY_X", &memory_x)
        .env_remove("RUSTFLAGS")
        .env_remove("CARGO_ENCODED_RUSTFLAGS")
        .env_remove("CARGO_BUILD_RUSTFLAGS")
        .env_remove("CARGO_TARGET_DIR")
        .env_remove("CARGO_BUILD_TARGET")
        .stdin(Stdio::null());
    if !features.is_empty() {
        cmd.arg("--features").arg(features.join(","));
    }
    let out = cmd.output().map_err(BuildError::Cargo)?;
    if !out.status.success() {
        return Err(BuildError::Failed {
            bin: firmware.bin.into(),
            board: board.name.into(),
            target: board.rust_target.into(),
            profile: profile.name.clone(),
            stderr: String::from_utf8_lossy(&out.stderr).trim_end().to_owned(),
        });
    }
    let built = String::from_utf8_lossy(&out.stdout)
        .lines()
        .filter_map(|l| serde_json::from_str::<serde_json::Value>(l).ok())
        .filter(|m| m["reason"] == "compiler-artifact" && m["target"]["name"] == firmware.bin)
        .find_map(|m| m["executable"].as_str().map(PathBuf::from))
        .ok_or_else(|| BuildError::NoArtifact { bin: firmware.bin.into(), board: board.name.into() })?;
    // Still under the lock: the next profile's build of this binary links the same path.
    let elf = target_dir
        .join("elf")
        .join(board.rust_target)
        .join(format!("{}-{:08x}", profile.name, fnv1a(settings.as_bytes())))
        .join(firmware.bin);
    let bytes = std::fs::read(&built).map_err(|source| BuildError::Read { path: built.clone(), source })?;
    if std::fs::read(&elf).ok() != Some(bytes) {
        // Copied (keeps the executable bit) next to its place, then renamed: never half written.
        let tmp = elf.with_extension("tmp");
        std::fs::create_dir_all(elf.parent().expect("a file in a directory"))
            .and_then(|()| std::fs::copy(&built, &tmp))
            .and_then(|_| std::fs::rename(&tmp, &elf))
            .map_err(|source| BuildError::Write { path: elf.clone(), source })?;
    }
    drop(lock);
    Ok(elf)
}

/// A small stable hash for directory names (FNV-1a, 32 bits): the same settings always give the
/// same directory, across processes and toolchains.
fn fnv1a(bytes: &[u8]) -> u32 {
    bytes.iter().fold(0x811c_9dc5, |h, &b| (h ^ u32::from(b)).wrapping_mul(0x0100_0193))
}

/// Writing identical bytes would bump the mtime and make cargo rerun build scripts.
fn write_if_changed(path: &Path, bytes: &[u8]) -> std::io::Result<()> {
    if std::fs::read(path).ok().as_deref() == Some(bytes) {
        return Ok(());
    }
    let tmp = path.with_extension("tmp");
    std::fs::write(&tmp, bytes)?;
    std::fs::rename(&tmp, path)
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::config::scenario::Budgets;

    #[test]
    fn profile_becomes_config_overrides_with_quoted_triples() {
        let board = Board::find("mps2-an505").unwrap();
        let profile = Profile {
            name: "size".into(),
            opt_level: Some("s".into()),
            features: vec![],
            cfg: vec!["aes_backend_soft=\"compact\"".into()],
            budgets: Budgets::default(),
            regressions: Default::default(),
            vars: Default::default(),
        };
        assert_eq!(
            config_args(board, &profile),
            [
                "--config",
                "profile.release.opt-level=\"s\"",
                "--config",
                r#"target.thumbv8m.main-none-eabihf.rustflags=["--cfg","aes_backend_soft=\"compact\""]"#
            ]
        );
        let speed = Profile { opt_level: Some("3".into()), cfg: vec![], ..profile };
        assert_eq!(config_args(board, &speed), ["--config", "profile.release.opt-level=3"]);
    }
}
