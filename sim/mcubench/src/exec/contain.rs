//! Runs untrusted firmware under QEMU so that semihosting cannot reach the host.
//!
//! With `-semihosting-config target=native` (what every Cortex-M QEMU guide uses, and what
//! mcubench uses), QEMU serves a firmware's SYS_OPEN/SYS_READ/SYS_WRITE from host files, runs
//! SYS_SYSTEM's command in a host shell and deletes or renames host files on SYS_REMOVE and
//! SYS_RENAME. QEMU itself is trusted; the firmware is not. So QEMU runs under a seccomp filter
//! ([`seccomp`]) that sends every system call naming a host path or starting a program to the
//! runner, which lets them through while QEMU initialises and refuses them (`EACCES`) from the
//! moment the guest starts ([`qmp`]: QEMU starts with its CPU held, and the runner starts it over
//! QMP). Each refusal of a call the firmware made through semihosting is recorded as a
//! [`SemihostingEvent`] with the path or command read from QEMU's memory, and the verdict
//! ([`crate::judge::verdict`]) fails the run naming it. QEMU's own calls after that point (glibc's
//! malloc opening `/proc/sys/vm/overcommit_memory` in the vCPU thread, ...) are refused too but
//! never blamed on the firmware: the listener tells them apart by the shape semihosting gives a
//! call (`seccomp::origin`) and keeps them apart ([`Execution::qemu_calls`]). Console output
//! (SYS_WRITE to `:tt`, SYS_WRITEC, SYS_WRITE0) and SYS_EXIT work as natively: they touch no path.
//!
//! Nothing about the guest's timing changes: semihosting is served natively, without stopping
//! the virtual CPU, so instruction counts, SysTick readings and cycle estimates are the same as
//! an uncontained run's, byte for byte (tested).
//!
//! No network either: every mcubench QEMU runs with `-nic none` ([`qemu::command_line`]); by
//! default QEMU wires the MPS2 boards' LAN9118 to its user networking, and a firmware's TCP SYN
//! to 10.0.2.2 becomes a connection to the host's loopback (tested).
//!
//! Defence in depth around that: QEMU's own seccomp sandbox (`-sandbox on,obsolete=deny,
//! elevateprivileges=deny,resourcecontrol=deny`; `spawn` stays allowed so that SYS_SYSTEM's
//! `/bin/sh` reaches our filter and is refused and named, instead of killing QEMU with SIGSYS),
//! no new privileges, a private scratch directory as the working directory (removed afterwards),
//! an environment with nothing but `PATH`, no core dumps, a 4 GiB address-space limit, death with
//! the parent, the wall-clock timeout, the output cap, and a kill of QEMU's whole process group
//! at the end.
//!
//! Known limits: SYS_TIME and SYS_CLOCK give the firmware host time (QEMU answers them itself);
//! SYS_GET_CMDLINE gives it the ELF's host path; SYS_READC waits for console input that never
//! comes (stdin is /dev/null), so the run times out. Linux only, with seccomp user notification
//! (Linux 5.5+; without it a contained run is a setup error and `--no-contain` runs trusted
//! firmware natively); tested on x86_64 hosts, the aarch64 system call table is untested.

mod qmp;
mod seccomp;

use std::fmt;
use std::os::unix::io::AsRawFd;
use std::os::unix::net::UnixStream;
use std::path::Path;
use std::process::Command;
use std::sync::Arc;
use std::sync::atomic::Ordering;
use std::time::Duration;

use serde::Serialize;

use super::scratch::ScratchDir;
use super::{Execution, Launch};
use crate::config::board::Board;
use crate::exec::qemu::{self, ChannelFds, ProcessEnd, QemuError};

/// QEMU's own seccomp filter on top of ours: no privilege changes, no obsolete system calls, no
/// scheduler/resource changes.
pub const SANDBOX: &str = "on,obsolete=deny,elevateprivileges=deny,resourcecontrol=deny";

/// Address-space limit for QEMU. QEMU 7.2 reserves a 1 GiB translation buffer and maps 16 MiB of
/// guest RAM on the MPS2 boards (about 1.3 GiB virtual in all); this leaves room for the TCG
/// plugin while bounding what a runaway can take.
pub const ADDRESS_SPACE_LIMIT: u64 = 4 << 30;

/// At most this many events are kept; later ones are only counted.
pub const MAX_EVENTS: usize = 64;

const CHARDEV_ID: &str = "mcubench-qmp";
/// Longest path or command read from QEMU's memory for an event.
const MAX_NAME: usize = 1024;

/// One thing the firmware tried through semihosting that the runner refused.
#[derive(Debug, Clone, PartialEq, Eq, Serialize)]
pub struct SemihostingEvent {
    /// The semihosting operation, e.g. `SYS_SYSTEM`, `SYS_OPEN`.
    pub call: String,
    /// What it named: the command or path (quoted, as read from QEMU's memory), the open mode.
    pub detail: String,
    /// The error the firmware got back, e.g. `EACCES`.
    pub refused_with: String,
}

impl fmt::Display for SemihostingEvent {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        write!(f, "firmware attempted {}({}): refused ({})", self.call, self.detail, self.refused_with)
    }
}

/// Whether this kernel can contain QEMU (seccomp user notification, Linux 5.5+).
pub fn available() -> bool {
    seccomp::available()
}

/// The QEMU command line for a contained run: [`qemu::command_line`] with the CPU held at
/// reset (`-S`), a QMP monitor on the inherited socket `qmp_fd`, and QEMU's seccomp sandbox.
pub fn command_line(board: &Board, elf: &Path, plugin: Option<&str>, channels: ChannelFds, qmp_fd: i32) -> Vec<String> {
    let mut args = qemu::command_line(board, elf, plugin, Some(channels));
    args.extend([
        "-S".to_string(),
        "-chardev".into(),
        format!("socket,id={CHARDEV_ID},fd={qmp_fd}"),
        "-mon".into(),
        format!("chardev={CHARDEV_ID},mode=control"),
        "-sandbox".into(),
        SANDBOX.into(),
    ]);
    args
}

/// Runs `launch` contained (see the module documentation).
pub(crate) fn run_contained(launch: &Launch<'_>) -> Result<Execution, QemuError> {
    use std::os::unix::process::CommandExt;

    if !seccomp::available() {
        return Err(QemuError::Containment(
            "this kernel lacks seccomp user notification (Linux 5.5+; `user_notif` missing from \
             /proc/sys/kernel/seccomp/actions_avail)"
                .into(),
        ));
    }
    // The ELF path must not depend on the working directory we give QEMU.
    let elf = std::path::absolute(launch.elf).map_err(QemuError::Spawn)?;
    let scratch = ScratchDir::new().map_err(QemuError::Spawn)?;
    let (qmp_ours, qmp_theirs) = UnixStream::pair().map_err(QemuError::Spawn)?;
    let (listener_ours, listener_theirs) = UnixStream::pair().map_err(QemuError::Spawn)?;
    let channels = qemu::Channels::new().map_err(QemuError::Spawn)?;
    let qmp_fd = qmp_theirs.as_raw_fd();
    let listener_fd = listener_theirs.as_raw_fd();
    let channel_fds = channels.fds();
    let args = command_line(launch.board, &elf, launch.plugin, channel_fds, qmp_fd);
    let filter = seccomp::filter();
    // The live cycle counter: QEMU's gdbstub on an inherited socket (see [`super::counter`]).
    let gdb = launch.counter.map(|_| super::counter::GdbLink::new()).transpose().map_err(QemuError::Spawn)?;
    let gdb_fd = gdb.as_ref().map(|g| g.fd());

    let mut cmd = Command::new(launch.qemu);
    cmd.args(&args).args(gdb.iter().flat_map(|g| g.args())).current_dir(scratch.path()).env_clear();
    if let Some(path) = std::env::var_os("PATH") {
        cmd.env("PATH", path);
    }
    // SAFETY: only async-signal-safe system calls between fork and exec; `filter` is built above.
    unsafe {
        cmd.pre_exec(move || {
            // The QMP and output-channel ends are close-on-exec (so no other child inherits
            // them); QEMU keeps its ends.
            if libc::fcntl(qmp_fd, libc::F_SETFD, 0) != 0 {
                return Err(std::io::Error::last_os_error());
            }
            if let Some(fd) = gdb_fd
                && libc::fcntl(fd, libc::F_SETFD, 0) != 0
            {
                return Err(std::io::Error::last_os_error());
            }
            channel_fds.inherit()?;
            let no_core = libc::rlimit { rlim_cur: 0, rlim_max: 0 };
            let space = libc::rlimit { rlim_cur: ADDRESS_SPACE_LIMIT, rlim_max: ADDRESS_SPACE_LIMIT };
            if libc::setrlimit(libc::RLIMIT_CORE, &no_core) != 0 || libc::setrlimit(libc::RLIMIT_AS, &space) != 0 {
                return Err(std::io::Error::last_os_error());
            }
            libc::prctl(libc::PR_SET_PDEATHSIG, libc::SIGKILL);
            // Last: from here on, exec itself waits for the listener thread's answer.
            seccomp::install_and_send(&filter, listener_fd)
        });
    }
    // Both threads run before QEMU exists: spawning waits for the exec, which is a supervised
    // call the listener must answer; the QMP thread waits for QEMU's greeting.
    let progress = Arc::new(qmp::Progress::default());
    let listener = {
        let progress = progress.clone();
        std::thread::spawn(move || {
            let listener = seccomp::Listener::receive(&listener_ours)?;
            drop(listener_ours);
            Some(listener.serve(&progress.guest_started, MAX_EVENTS))
        })
    };
    // At the timeout, QEMU is asked to quit over QMP, not by a signal: QEMU's signal handler
    // reads the sender's /proc/<pid>/cmdline.
    let quit = match launch.quit_grace() {
        Some(grace) => {
            let monitor = qmp_ours.try_clone().map_err(QemuError::Spawn)?;
            Some(qemu::Quit { ask: Box::new(move |_| qmp::quit(monitor)), grace })
        }
        None => None,
    };
    // The gdbstub link is set up before the guest starts, and starts it once the QMP thread says
    // so (see [`qmp::start_guest`]).
    let halt = super::counter::Halt::default();
    let (ready, ready_in) = std::sync::mpsc::channel();
    let (go, go_in) = std::sync::mpsc::channel::<()>();
    let server = match (gdb, launch.counter) {
        (Some(gdb), Some(live)) => Some(super::counter::spawn(gdb, live, halt.clone(), Some(ready), Some(go_in))),
        _ => None,
    };
    // At the timeout, first the monitor's view of the core (where it hangs, which exception),
    // once the guest runs (a timeout shorter than QEMU's start-up has no core to look at).
    let (replies, replies_in) = std::sync::mpsc::channel();
    let probe: qemu::Probe = {
        let monitor = qmp_ours.try_clone().map_err(QemuError::Spawn)?;
        let progress = progress.clone();
        let halt = halt.clone();
        Box::new(move || {
            // The counter's server leaves the guest stopped from here on.
            *halt.lock().unwrap_or_else(|p| p.into_inner()) = true;
            progress.running.load(Ordering::SeqCst).then(|| qmp::core_state(monitor, &replies_in)).flatten()
        })
    };
    let starter = {
        let progress = progress.clone();
        let link = server.is_some().then_some((ready_in, go));
        std::thread::spawn(move || qmp::start_guest(qmp_ours, &progress, &replies, link))
    };
    // Short polls: a contained run is also how hostile firmware is timed.
    let run = qemu::execute(cmd, launch.timeout, (quit, Some(probe)), Duration::from_millis(20), channels);
    // Only QEMU's copies may stay open, so that the threads see it go (or never start).
    drop(qmp_theirs);
    drop(listener_theirs);
    let refusals = listener.join().unwrap_or_else(|_| panic!("the seccomp listener thread panicked"));
    let start = starter.join().unwrap_or_else(|_| panic!("the QMP thread panicked"));
    let counter = super::counter::join(server);
    drop(scratch);
    let mut run = run?;
    if run.end == ProcessEnd::Exited(0) && progress.reset.load(Ordering::SeqCst) {
        run.end = ProcessEnd::Reset;
    }

    let Some(refusals) = refusals else {
        return Err(QemuError::Containment("QEMU started without the runner's seccomp listener".into()));
    };
    let start_error = match (start, progress.guest_started.load(Ordering::SeqCst), &run.end) {
        (Err(e), false, ProcessEnd::TimedOut) => Some(e),
        _ => None,
    };
    Ok(Execution {
        run,
        events: refusals.events,
        events_dropped: refusals.dropped,
        qemu_calls: refusals.qemu_calls,
        start_error,
        counter,
    })
}

/// A path or command as the event shows it: printable, quoted, bounded.
fn quote(bytes: &[u8]) -> String {
    let end = bytes.iter().position(|&b| b == 0).unwrap_or(bytes.len());
    let text = String::from_utf8_lossy(&bytes[..end]);
    let mut out = String::from("`");
    for (i, c) in text.chars().enumerate() {
        if i == 200 {
            out.push('…');
            break;
        }
        if c.is_control() { out.extend(c.escape_default()) } else { out.push(c) }
    }
    out.push('`');
    out
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn names_are_quoted_printable_and_bounded() {
        assert_eq!(quote(b"touch /tmp/x\0"), "`touch /tmp/x`");
        assert_eq!(quote(b"a\nb\x1b"), "`a\\nb\\u{1b}`");
        assert_eq!(quote(&[b'a'; 300]).chars().count(), 203);
    }

    #[test]
    fn an_event_reads_as_a_sentence() {
        let e =
            SemihostingEvent { call: "SYS_SYSTEM".into(), detail: "`touch /x`".into(), refused_with: "EACCES".into() };
        assert_eq!(e.to_string(), "firmware attempted SYS_SYSTEM(`touch /x`): refused (EACCES)");
    }

    #[test]
    fn the_command_line_is_the_native_one_plus_containment() {
        let board = Board::find("mps2-an386").unwrap();
        let fds = ChannelFds { console: 5, uarts: [10, 11, 12, 13, 14, 15] };
        let native = qemu::command_line(board, Path::new("/fw.elf"), None, Some(fds));
        let contained = command_line(board, Path::new("/fw.elf"), None, fds, 7);
        assert_eq!(contained[..native.len()], native[..]);
        assert_eq!(
            contained[native.len()..].join(" "),
            format!(
                "-S -chardev socket,id=mcubench-qmp,fd=7 -mon chardev=mcubench-qmp,mode=control -sandbox {SANDBOX}"
            )
        );
    }

    #[test]
    fn a_scratch_dir_is_private_and_removed() {
        use std::os::unix::fs::PermissionsExt;
        let dir = ScratchDir::new().unwrap();
        let path = dir.path().to_path_buf();
        assert_eq!(std::fs::metadata(&path).unwrap().permissions().mode() & 0o777, 0o700);
        std::fs::write(path.join("core"), b"x").unwrap();
        drop(dir);
        assert!(!path.exists());
    }
}
