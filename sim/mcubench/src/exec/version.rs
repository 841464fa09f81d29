//! Which QEMU runs the firmware, which version it is, and which build of the TCG plugin it needs.
//!
//! The executable is `qemu-system-arm` on `PATH`, or the path in `MCUBENCH_QEMU` ([`ENV`]). Its
//! version comes from `qemu-system-arm --version` (asked once per executable and process) and
//! picks the plugin API ([`PluginApi`]): QEMU's plugin interface changed incompatibly in 9.0
//! (per-vCPU inline operations replaced v1's inline counters) and again in 9.1 (how instruction
//! bytes are read), and a plugin `.so` speaks exactly one version. Supported ([`SUPPORTED`]):
//!
//! | QEMU | plugin API (build) | tested |
//! |---|---|---|
//! | 7.2 – 8.2 | v1 (`libmcubench_qemu_plugin_v1.so`) | 7.2 (Debian 12) |
//! | 9.1 – 10.x | v3 (`libmcubench_qemu_plugin_v3.so`) | 10.0 (Debian 12 backports, Debian 13) |
//!
//! Anything else (older than 7.2, 9.0 with its short-lived API v2, or a major version this code
//! does not know) is a setup error naming the version and this range: never a run with a plugin
//! that might not load, or load and misbehave.

use std::collections::HashMap;
use std::fmt;
use std::path::{Path, PathBuf};
use std::process::{Command, Stdio};
use std::sync::{Mutex, OnceLock};

use super::qemu::QEMU;

/// Environment variable naming the QEMU executable to use (default: [`QEMU`] on `PATH`).
pub const ENV: &str = "MCUBENCH_QEMU";

/// The supported QEMU versions, for messages.
pub const SUPPORTED: &str = "QEMU 7.2 to 8.2 (plugin API v1) and 9.1 to 10.x (plugin API v3)";

/// The QEMU executable this process uses: `MCUBENCH_QEMU`, else `qemu-system-arm` (found on
/// `PATH` when run). Read once per process.
pub fn program() -> &'static Path {
    static PROGRAM: OnceLock<PathBuf> = OnceLock::new();
    PROGRAM.get_or_init(|| match std::env::var_os(ENV).filter(|v| !v.is_empty()) {
        Some(path) => PathBuf::from(path),
        None => PathBuf::from(QEMU),
    })
}

/// A QEMU release, `major.minor.micro`.
#[derive(Debug, Clone, Copy, PartialEq, Eq, PartialOrd, Ord, Hash)]
pub struct Version {
    pub major: u32,
    pub minor: u32,
    pub micro: u32,
}

impl fmt::Display for Version {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        write!(f, "{}.{}.{}", self.major, self.minor, self.micro)
    }
}

impl Version {
    /// The version in `qemu-system-arm --version`'s first line: `QEMU emulator version 7.2.22
    /// (Debian 1:7.2+dfsg-7+deb12u18+b3)`; a missing micro number reads as 0.
    pub fn from_version_output(text: &str) -> Option<Version> {
        let line = text.lines().next()?;
        let rest = line.strip_prefix("QEMU emulator version ")?;
        let number = rest.split_whitespace().next()?;
        let mut parts = number.split('.').map(|p| {
            let digits: String = p.chars().take_while(char::is_ascii_digit).collect();
            digits.parse::<u32>().ok()
        });
        let major = parts.next()??;
        let minor = parts.next()??;
        let micro = parts.next().flatten().unwrap_or(0);
        Some(Version { major, minor, micro })
    }
}

/// The QEMU plugin API a build of the plugin speaks.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Hash)]
pub enum PluginApi {
    /// QEMU 7.2 to 8.2.
    V1,
    /// QEMU 9.1 to 10.x (they report API v4 or v5 and load v2 and up).
    V3,
}

impl PluginApi {
    pub const ALL: [PluginApi; 2] = [PluginApi::V1, PluginApi::V3];

    /// The plugin API `version` needs, or why mcubench cannot run on it.
    pub fn for_version(version: Version) -> Result<PluginApi, String> {
        match (version.major, version.minor) {
            (7, 2..) | (8, _) => Ok(PluginApi::V1),
            (9, 1..) | (10, _) => Ok(PluginApi::V3),
            _ => Err(format!("QEMU {version} is not supported: mcubench runs on {SUPPORTED}")),
        }
    }

    /// The API version number (`qemu_plugin_version`).
    pub fn number(self) -> u32 {
        match self {
            PluginApi::V1 => 1,
            PluginApi::V3 => 3,
        }
    }

    /// The QEMU releases that load this build, for messages.
    pub fn qemu_range(self) -> &'static str {
        match self {
            PluginApi::V1 => "QEMU 7.2 to 8.2",
            PluginApi::V3 => "QEMU 9.1 to 10.x",
        }
    }

    /// The plugin's file name as cargo builds it.
    pub fn file_name(self) -> &'static str {
        match self {
            PluginApi::V1 => "libmcubench_qemu_plugin_v1.so",
            PluginApi::V3 => "libmcubench_qemu_plugin_v3.so",
        }
    }
}

impl fmt::Display for PluginApi {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        write!(f, "v{}", self.number())
    }
}

/// A QEMU executable that mcubench can run on.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct QemuInfo {
    /// As given (a bare name is looked up on `PATH` when run).
    pub path: PathBuf,
    pub version: Version,
    /// `--version`'s first line, e.g. `QEMU emulator version 10.0.2 (Debian 1:10.0.2+ds-2+deb13u1~bpo12+1)`.
    pub description: String,
    pub api: PluginApi,
}

/// Asks `qemu` for its version (once per executable and process) and picks the plugin API for
/// it. Errors say what to do: a missing QEMU, one that does not answer, an unsupported version.
pub fn probe(qemu: &Path) -> Result<QemuInfo, String> {
    static SEEN: OnceLock<Mutex<HashMap<PathBuf, Result<QemuInfo, String>>>> = OnceLock::new();
    let seen = SEEN.get_or_init(Default::default);
    if let Some(known) = seen.lock().unwrap_or_else(|p| p.into_inner()).get(qemu) {
        return known.clone();
    }
    let answer = ask(qemu);
    seen.lock().unwrap_or_else(|p| p.into_inner()).insert(qemu.to_path_buf(), answer.clone());
    answer
}

fn ask(qemu: &Path) -> Result<QemuInfo, String> {
    let out = Command::new(qemu).arg("--version").stdin(Stdio::null()).output().map_err(|e| match e.kind() {
        std::io::ErrorKind::NotFound if qemu.components().count() == 1 => format!(
            "`{}` was not found on PATH; install QEMU with `apt-get install qemu-system-arm` (or \
                 `bash ci/setup.sh` in mcubench's checkout), or set {ENV} to a qemu-system-arm ({SUPPORTED})",
            qemu.display()
        ),
        std::io::ErrorKind::NotFound => format!("{ENV}={}: no such file", qemu.display()),
        _ => format!("cannot run `{} --version`: {e}", qemu.display()),
    })?;
    let text = String::from_utf8_lossy(&out.stdout);
    let description = text.lines().next().unwrap_or_default().trim().to_string();
    let version = Version::from_version_output(&text).filter(|_| out.status.success()).ok_or_else(|| {
        format!(
            "`{} --version` did not say which QEMU it is (exit {:?}, output `{}`); mcubench needs a qemu-system-arm ({SUPPORTED})",
            qemu.display(),
            out.status.code(),
            text.trim()
        )
    })?;
    let api = PluginApi::for_version(version).map_err(|e| format!("{e} (`{}`: {description})", qemu.display()))?;
    Ok(QemuInfo { path: qemu.to_path_buf(), version, description, api })
}

#[cfg(test)]
mod tests {
    use super::*;

    fn v(major: u32, minor: u32, micro: u32) -> Version {
        Version { major, minor, micro }
    }

    #[test]
    fn versions_are_read_from_the_first_line() {
        let debian =
            "QEMU emulator version 7.2.22 (Debian 1:7.2+dfsg-7+deb12u18+b3)\nCopyright (c) 2003-2022 Fabrice Bellard\n";
        assert_eq!(Version::from_version_output(debian), Some(v(7, 2, 22)));
        let backports = "QEMU emulator version 10.0.2 (Debian 1:10.0.2+ds-2+deb13u1~bpo12+1)\n";
        assert_eq!(Version::from_version_output(backports), Some(v(10, 0, 2)));
        assert_eq!(Version::from_version_output("QEMU emulator version 9.2.0\n"), Some(v(9, 2, 0)));
        assert_eq!(Version::from_version_output("QEMU emulator version 6.2\n"), Some(v(6, 2, 0)));
        assert_eq!(Version::from_version_output("qemu-system-arm: unknown option\n"), None);
        assert_eq!(Version::from_version_output(""), None);
        assert_eq!(v(10, 0, 2).to_string(), "10.0.2");
    }

    #[test]
    fn each_supported_version_has_its_api_and_others_are_refused_with_the_range() {
        assert_eq!(PluginApi::for_version(v(7, 2, 22)), Ok(PluginApi::V1));
        assert_eq!(PluginApi::for_version(v(8, 2, 2)), Ok(PluginApi::V1));
        assert_eq!(PluginApi::for_version(v(9, 1, 0)), Ok(PluginApi::V3));
        assert_eq!(PluginApi::for_version(v(9, 2, 3)), Ok(PluginApi::V3));
        assert_eq!(PluginApi::for_version(v(10, 0, 2)), Ok(PluginApi::V3));
        assert_eq!(PluginApi::for_version(v(10, 1, 0)), Ok(PluginApi::V3));
        for old_or_new in [v(6, 2, 0), v(7, 1, 0), v(9, 0, 2), v(11, 0, 0)] {
            let e = PluginApi::for_version(old_or_new).unwrap_err();
            assert_eq!(e, format!("QEMU {old_or_new} is not supported: mcubench runs on {SUPPORTED}"));
        }
    }

    #[test]
    fn a_missing_qemu_says_what_to_install() {
        let e = probe(Path::new("/nonexistent/qemu-system-arm")).unwrap_err();
        assert_eq!(e, format!("{ENV}=/nonexistent/qemu-system-arm: no such file"));
        let e = probe(Path::new("no-such-qemu-system-arm")).unwrap_err();
        assert!(e.contains("was not found on PATH; install QEMU"), "{e}");
    }

    #[test]
    fn an_executable_that_is_not_qemu_is_refused() {
        let e = probe(Path::new("/bin/true")).unwrap_err();
        assert!(e.starts_with("`/bin/true --version` did not say which QEMU it is"), "{e}");
    }
}
