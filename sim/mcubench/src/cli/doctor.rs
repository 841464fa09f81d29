//! `mcubench doctor`: what this machine has for mcubench, and what to install when something is
//! missing. One line per check; exit 0 when everything `mcubench run` needs is there (QEMU of a
//! supported version, the TCG plugin for it, containment), 1 otherwise. The cross compilers are
//! reported too, but only building firmware from source needs them (a prebuilt ELF does not),
//! so their absence does not fail the check.
//!
//! The plugin and containment checks are not guesses: a tiny guest (a vector table and a
//! semihosting exit, 20 bytes) runs on the QEMU found, contained, with the plugin loaded, and
//! must exit 0 with the plugin's results counting its instructions.

use std::path::{Path, PathBuf};
use std::process::{Command, Stdio};
use std::time::Duration;

use clap::Args;
use mcubench_wire::PluginArgs;

use super::{Error, Exit};
use crate::config::board::Board;
use crate::exec::plugin::{self, Source};
use crate::exec::scratch::ScratchDir;
use crate::exec::version::{self, QemuInfo, SUPPORTED};
use crate::exec::{self, Launch, contain};

#[derive(Args)]
pub struct DoctorArgs {
    /// The qemu-system-arm to check (default: $MCUBENCH_QEMU, else qemu-system-arm on PATH).
    #[arg(long, value_name = "PATH")]
    qemu: Option<PathBuf>,
}

/// How a check came out.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
enum Status {
    Ok,
    /// Missing, but only some uses need it.
    Optional,
    /// Missing or broken, and `mcubench run` needs it.
    Missing,
}

struct Check {
    name: &'static str,
    status: Status,
    /// What was found, or what is wrong.
    detail: String,
    /// What to do about it (empty when nothing).
    fix: String,
}

/// The Rust targets of the built-in boards.
const THUMB_TARGETS: [&str; 4] =
    ["thumbv6m-none-eabi", "thumbv7m-none-eabi", "thumbv7em-none-eabihf", "thumbv8m.main-none-eabihf"];

pub fn run(a: DoctorArgs) -> Result<Exit, Error> {
    let qemu_path = a.qemu.unwrap_or_else(|| version::program().to_path_buf());
    let mut checks = Vec::new();
    let qemu = version::probe(&qemu_path);
    checks.push(qemu_check(&qemu_path, &qemu));
    let (plugin_check, so) = plugin_check(qemu.as_ref().ok());
    checks.push(plugin_check);
    checks.push(containment_check(qemu.as_ref().ok(), so.as_deref()));
    checks.push(gcc_check());
    checks.push(rust_check());

    let width = checks.iter().map(|c| c.name.len()).max().unwrap_or(0);
    let mut text = String::new();
    for c in &checks {
        let status = match c.status {
            Status::Ok => "ok",
            Status::Optional => "optional",
            Status::Missing => "MISSING",
        };
        text.push_str(&format!("{:<width$}  {status:<8}  {}\n", c.name, c.detail));
        if !c.fix.is_empty() {
            text.push_str(&format!("{:<width$}  {:<8}  fix: {}\n", "", "", c.fix));
        }
    }
    let missing = checks.iter().filter(|c| c.status == Status::Missing).count();
    text.push_str(&match missing {
        0 => "mcubench can run firmware here.\n".to_string(),
        n => format!("mcubench cannot run firmware here: {n} check(s) failed.\n"),
    });
    super::args::print(&text);
    Ok(if missing == 0 { Exit::Pass } else { Exit::RunFailed })
}

fn qemu_check(path: &Path, qemu: &Result<QemuInfo, String>) -> Check {
    match qemu {
        Ok(q) => Check {
            name: "qemu",
            status: Status::Ok,
            detail: format!("{} ({}), plugin API {}", resolved(path).display(), q.description, q.api),
            fix: String::new(),
        },
        Err(e) => Check {
            name: "qemu",
            status: Status::Missing,
            detail: e.clone(),
            fix: format!(
                "install qemu-system-arm ({SUPPORTED}): `apt-get install qemu-system-arm` (Debian 12: 7.2; \
                 bookworm-backports or Debian 13: 10.0), or set {} to one",
                version::ENV
            ),
        },
    }
}

/// The plugin for the QEMU found: where QEMU loads it from, which build (mcubench version and
/// the embedded file's SHA-256) and which API.
fn plugin_check(qemu: Option<&QemuInfo>) -> (Check, Option<PathBuf>) {
    let Some(q) = qemu else {
        let detail = "not checked: no supported QEMU".to_string();
        return (Check { name: "plugin", status: Status::Missing, detail, fix: String::new() }, None);
    };
    let from = match plugin::source(q.api) {
        Source::Off => {
            let detail =
                format!("disabled ({}=off): instruction counts from SysTick ticks, no cycle estimates", plugin::ENV);
            let fix = format!("unset {} for exact counts and cycles", plugin::ENV);
            return (Check { name: "plugin", status: Status::Optional, detail, fix }, None);
        }
        Source::Given(_) => format!("from {}", plugin::ENV),
        Source::Embedded(_) => format!(
            "mcubench {}'s embedded build, sha256 {}",
            env!("CARGO_PKG_VERSION"),
            &plugin::embedded_sha256(q.api)[..16]
        ),
    };
    match plugin::locate_for(q.api) {
        Ok(Some(so)) => {
            let detail = format!("{} (plugin API {}, {}; {from})", so.display(), q.api, q.api.qemu_range());
            (Check { name: "plugin", status: Status::Ok, detail, fix: String::new() }, Some(so))
        }
        Ok(None) => unreachable!("the plugin is disabled only by {}=off", plugin::ENV),
        Err(e) => {
            let fix = format!(
                "unset {} to use the plugin built into mcubench, or point it at a {} built for plugin API {}",
                plugin::ENV,
                q.api.file_name(),
                q.api
            );
            (Check { name: "plugin", status: Status::Missing, detail: e, fix }, None)
        }
    }
}

/// Seccomp user notification, and a contained self-test run with the plugin (if any): QEMU's
/// start-up system calls pass the runner's filter, the guest runs, the plugin loads and counts.
fn containment_check(qemu: Option<&QemuInfo>, so: Option<&Path>) -> Check {
    let name = "containment";
    if !contain::available() {
        return Check {
            name,
            status: Status::Missing,
            detail: "this kernel lacks seccomp user notification (`user_notif` not in \
                     /proc/sys/kernel/seccomp/actions_avail)"
                .into(),
            fix: "use Linux 5.5 or later (containers: allow seccomp), or run only trusted firmware with \
                  `mcubench run --no-contain`"
                .into(),
        };
    }
    let Some(q) = qemu else {
        return Check {
            name,
            status: Status::Missing,
            detail: "seccomp user notification available; self-test not run: no supported QEMU".into(),
            fix: String::new(),
        };
    };
    match self_test(q, so) {
        Ok(Some(insns)) => Check {
            name,
            status: Status::Ok,
            detail: format!(
                "seccomp user notification available; a contained self-test run on QEMU {} passed, \
                 the plugin counted its {insns} instructions",
                q.version
            ),
            fix: String::new(),
        },
        Ok(None) => Check {
            name,
            status: Status::Ok,
            detail: format!(
                "seccomp user notification available; a contained self-test run on QEMU {} passed (without the plugin)",
                q.version
            ),
            fix: String::new(),
        },
        Err(e) => Check {
            name,
            status: Status::Missing,
            detail: format!("the contained self-test run failed: {e}"),
            fix: "report this with the output of `mcubench doctor`; trusted firmware can run with `--no-contain`"
                .into(),
        },
    }
}

/// The self-test guest for the MPS2 boards, loaded as a raw image at 0: initial SP, reset vector,
/// then `movs r0, #0x18; ldr r1, =0x20026; bkpt 0xab` (semihosting SYS_EXIT,
/// ADP_Stopped_ApplicationExit: exit 0) and `b .`. Three instructions run.
const SELF_TEST: [u8; 20] = [
    0x00, 0x10, 0x00, 0x20, // initial SP 0x20001000
    0x09, 0x00, 0x00, 0x00, // reset: 0x8, Thumb
    0x18, 0x20, // movs r0, #0x18
    0x01, 0x49, // ldr r1, [pc, #4]
    0xab, 0xbe, // bkpt 0xab
    0xfe, 0xe7, // b .
    0x26, 0x00, 0x02, 0x00, // 0x20026
];

/// Runs [`SELF_TEST`] contained on `qemu`, with the plugin `so` when given; the instructions the
/// plugin counted.
fn self_test(qemu: &QemuInfo, so: Option<&Path>) -> Result<Option<u64>, String> {
    let board = Board::find("mps2-an385").expect("a built-in board");
    let scratch = ScratchDir::new().map_err(|e| format!("cannot create a scratch directory: {e}"))?;
    let image = scratch.path().join("self-test.bin");
    std::fs::write(&image, SELF_TEST).map_err(|e| format!("cannot write {}: {e}", image.display()))?;
    let out = scratch.path().join("results.txt");
    let option = so.map(|so| PluginArgs::new(out.clone()).to_option(so));
    let launch =
        Launch::new(board, &image, Duration::from_secs(10)).with_qemu(&qemu.path).with_plugin(option.as_deref());
    let execution = exec::execute(&launch).map_err(|e| e.to_string())?;
    let run = &execution.run;
    if run.end != exec::ProcessEnd::Exited(0) {
        return Err(format!("QEMU ended with {:?}: {}", run.end, run.stderr.trim()));
    }
    if let Some(e) = &execution.start_error {
        return Err(e.clone());
    }
    match so {
        None => Ok(None),
        Some(_) => plugin::read_results(&out).map(|r| Some(r.insns)),
    }
}

fn gcc_check() -> Check {
    match first_line("arm-none-eabi-gcc", &["--version"]) {
        Some(line) => Check { name: "arm-gcc", status: Status::Ok, detail: line, fix: String::new() },
        None => Check {
            name: "arm-gcc",
            status: Status::Optional,
            detail: "arm-none-eabi-gcc not found (needed only to build C firmware)".into(),
            fix: "`apt-get install gcc-arm-none-eabi libnewlib-arm-none-eabi`".into(),
        },
    }
}

fn rust_check() -> Check {
    let name = "rust";
    let Some(rustc) = first_line("rustc", &["--version"]) else {
        return Check {
            name,
            status: Status::Optional,
            detail: "rustc not found (needed only to build Rust firmware)".into(),
            fix: "install Rust with rustup (https://rustup.rs), then the thumb targets below".into(),
        };
    };
    // The toolchain of the current directory (a rust-toolchain.toml applies), as cargo will use it.
    let sysroot = first_line("rustc", &["--print", "sysroot"]).map(PathBuf::from);
    let (have, lack): (Vec<&str>, Vec<&str>) = THUMB_TARGETS
        .iter()
        .partition(|t| sysroot.as_ref().is_some_and(|s| s.join("lib/rustlib").join(t).join("lib").is_dir()));
    if lack.is_empty() {
        return Check {
            name,
            status: Status::Ok,
            detail: format!("{rustc}; targets {}", have.join(", ")),
            fix: String::new(),
        };
    }
    Check {
        name,
        status: Status::Optional,
        detail: format!(
            "{rustc}; thumb targets missing: {} (needed only to build Rust firmware for those boards)",
            lack.join(", ")
        ),
        fix: format!("`rustup target add {}`", lack.join(" ")),
    }
}

/// The first line a program prints on stdout, if it runs and succeeds.
fn first_line(program: &str, args: &[&str]) -> Option<String> {
    let out = Command::new(program).args(args).stdin(Stdio::null()).stderr(Stdio::null()).output().ok()?;
    if !out.status.success() {
        return None;
    }
    String::from_utf8_lossy(&out.stdout).lines().next().map(|l| l.trim().to_string()).filter(|l| !l.is_empty())
}

/// `qemu` with a bare name resolved on PATH, for display.
fn resolved(qemu: &Path) -> PathBuf {
    if qemu.components().count() == 1
        && let Some(found) = crate::exec::qemu::which(&qemu.to_string_lossy())
    {
        return found;
    }
    qemu.to_path_buf()
}
