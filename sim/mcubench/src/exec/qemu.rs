//! Runs one ELF under `qemu-system-arm` and collects what happened, without judging it.
//!
//! Why each flag: `-icount shift=0` makes one guest instruction one nanosecond of virtual time, so
//! SysTick counts instructions and runs are deterministic; `-no-reboot` turns a reset loop into an
//! exit (which the verdict then refuses as a pass); `-nic none` because the MPS2 boards' LAN9118
//! is otherwise wired to QEMU's user networking, through which firmware reaches the host's
//! loopback and the internet; stdin is /dev/null so QEMU never waits on a terminal. The wall-clock timeout kills QEMU's whole process group, so nothing it spawned survives.
//! With the TCG plugin, `-plugin <so>,out=<file>,...` is appended (QEMU 7.2 takes the plugin's
//! arguments as `key=value` options after the path; see [`crate::exec::plugin`]).

use std::io::Read;
use std::os::unix::io::AsRawFd;
use std::os::unix::net::UnixStream;
use std::path::{Path, PathBuf};
use std::process::{Command, Stdio};
use std::sync::Arc;
use std::sync::atomic::{AtomicBool, Ordering};
use std::time::{Duration, Instant};

use wait_timeout::ChildExt;

use crate::config::board::Board;

pub const QEMU: &str = "qemu-system-arm";

/// Output kept per stream. A firmware that writes more is stopped: its verdict cannot depend on
/// megabytes of log, and an unbounded stream would fill CI disks.
pub const OUTPUT_LIMIT: usize = 4 * 1024 * 1024;

#[derive(Debug, Clone, PartialEq, Eq)]
pub enum ProcessEnd {
    Exited(i32),
    Signalled(i32),
    /// Killed by us after the wall-clock timeout.
    TimedOut,
    /// Killed by us because it wrote more than [`OUTPUT_LIMIT`].
    OutputLimit,
    /// QEMU exited (status 0) because the firmware asked for a system reset (AIRCR.SYSRESETREQ,
    /// `NVIC_SystemReset()`): `-no-reboot` turns it into an exit. Known from the QMP monitor's
    /// `SHUTDOWN` event (reason `guest-reset`), so only in contained runs; uncontained, such a
    /// run is `Exited(0)`.
    Reset,
}

#[derive(Debug, Clone)]
pub struct QemuRun {
    pub end: ProcessEnd,
    /// Semihosting stdout (SYS_WRITE to `:tt`), UART output and QEMU's monitor.
    pub stdout: String,
    /// QEMU's own messages (and the TCG plugin's): never the firmware's.
    pub stderr: String,
    /// The firmware's SYS_WRITEC/SYS_WRITE0 output (QEMU's semihosting console chardev).
    pub console: String,
    /// What the firmware wrote on each UART (serial port 0, 1, ...); empty when not captured.
    pub uarts: Vec<String>,
    pub command: String,
    /// At a timeout of a contained run: QEMU's monitor's view of the stopped core (its
    /// registers, the fault status registers, the words at SP), for [`crate::judge::stopped`].
    pub at_timeout: Option<String>,
}

#[derive(Debug, thiserror::Error)]
pub enum QemuError {
    #[error(
        "`{QEMU}` was not found (on PATH, or at the path in MCUBENCH_QEMU); install it with \
         `apt-get install qemu-system-arm` (or `bash ci/setup.sh` in mcubench's checkout)"
    )]
    NotFound,
    #[error("cannot start `{QEMU}`: {0}")]
    Spawn(std::io::Error),
    #[error("waiting for `{QEMU}` failed: {0}")]
    Wait(std::io::Error),
    #[error("cannot contain `{QEMU}`: {0}; run only trusted firmware, with `--no-contain`")]
    Containment(String),
}

/// The chardev that carries the firmware's semihosting console writes (SYS_WRITEC, SYS_WRITE0)
/// to the runner, apart from QEMU's own stderr: what QEMU says about the run (a lockup, a plugin
/// refusing to load, a bad command line) can then never be written by the firmware.
pub const CONSOLE_CHARDEV: &str = "mcubench-console";

/// Serial ports given a socket of their own: QEMU connects the board's UARTs to its serial
/// ports in order (the MPS2 boards have 5 CMSDK UARTs, the STM32F405 6 USARTs, the micro:bit
/// 1); ports a board does not have stay unused.
pub const UARTS: usize = 6;

/// The inherited descriptors of the firmware's output channels in QEMU: the semihosting console
/// and one per UART.
#[derive(Debug, Clone, Copy)]
pub struct ChannelFds {
    pub console: i32,
    pub uarts: [i32; UARTS],
}

/// QEMU's arguments for one run of `elf` on `board`: with an optional `-plugin` value (see
/// [`crate::exec::plugin`]) and, when given, inherited sockets for the semihosting console and
/// the UARTs (without them, SYS_WRITEC/SYS_WRITE0 go to QEMU's stderr and UART0 to its stdout).
pub fn command_line(board: &Board, elf: &Path, plugin: Option<&str>, channels: Option<ChannelFds>) -> Vec<String> {
    let mut args: Vec<String> =
        ["-machine", board.qemu_machine, "-cpu", board.qemu_cpu, "-nographic"].iter().map(|s| s.to_string()).collect();
    let semihosting = match channels {
        Some(fds) => {
            args.extend(["-chardev".into(), format!("socket,id={CONSOLE_CHARDEV},fd={}", fds.console)]);
            for (i, fd) in fds.uarts.iter().enumerate() {
                args.extend([
                    "-chardev".into(),
                    format!("socket,id=mcubench-uart{i},fd={fd}"),
                    "-serial".into(),
                    format!("chardev:mcubench-uart{i}"),
                ]);
            }
            // The UARTs have their own sockets: no human monitor on stdout either.
            args.extend(["-monitor".into(), "none".into()]);
            format!("enable=on,target=native,chardev={CONSOLE_CHARDEV}")
        }
        None => "enable=on,target=native".to_string(),
    };
    args.extend(["-semihosting-config".into(), semihosting]);
    args.extend(["-icount", "shift=0", "-no-reboot", "-nic", "none", "-kernel"].iter().map(|s| s.to_string()));
    args.push(elf.display().to_string());
    if let Some(p) = plugin {
        args.extend(["-plugin".into(), p.to_string()]);
    }
    args
}

/// The sockets of one run's output channels: the runner reads its ends; QEMU inherits the others,
/// which the runner closes once QEMU has them so that each channel ends when QEMU does.
pub(crate) struct Channels {
    console: (UnixStream, UnixStream),
    uarts: Vec<(UnixStream, UnixStream)>,
}

impl Channels {
    pub(crate) fn new() -> std::io::Result<Channels> {
        let console = UnixStream::pair()?;
        let uarts = (0..UARTS).map(|_| UnixStream::pair()).collect::<std::io::Result<Vec<_>>>()?;
        Ok(Channels { console, uarts })
    }

    pub(crate) fn fds(&self) -> ChannelFds {
        let mut uarts = [0; UARTS];
        for (fd, (_, theirs)) in uarts.iter_mut().zip(&self.uarts) {
            *fd = theirs.as_raw_fd();
        }
        ChannelFds { console: self.console.1.as_raw_fd(), uarts }
    }
}

impl ChannelFds {
    /// Clears close-on-exec on QEMU's ends (between fork and exec: async-signal-safe only).
    pub(crate) fn inherit(&self) -> std::io::Result<()> {
        for fd in std::iter::once(self.console).chain(self.uarts) {
            // SAFETY: fcntl on a descriptor we own; no allocation.
            if unsafe { libc::fcntl(fd, libc::F_SETFD, 0) } != 0 {
                return Err(std::io::Error::last_os_error());
            }
        }
        Ok(())
    }
}

/// Reads a stream to the end, keeping at most [`OUTPUT_LIMIT`] bytes and raising `overflow` past it.
fn collect(mut stream: impl Read + Send + 'static, overflow: Arc<AtomicBool>) -> std::thread::JoinHandle<Vec<u8>> {
    std::thread::spawn(move || {
        let mut kept = Vec::new();
        let mut buf = [0u8; 64 * 1024];
        loop {
            match stream.read(&mut buf) {
                Ok(0) | Err(_) => break,
                Ok(n) => {
                    let room = OUTPUT_LIMIT.saturating_sub(kept.len());
                    kept.extend_from_slice(&buf[..n.min(room)]);
                    if n > room {
                        overflow.store(true, Ordering::Relaxed);
                        break;
                    }
                }
            }
        }
        kept
    })
}

/// How to end QEMU at the timeout so that its exit handlers run (the TCG plugin writes its
/// results in one): `ask` asks QEMU (its process id given) to quit; the runner waits `grace` for
/// it before killing its process group.
pub(crate) struct Quit {
    pub(crate) ask: Box<dyn FnOnce(u32) + Send>,
    pub(crate) grace: Duration,
}

/// Asked at the timeout, before QEMU is told to quit or killed: what the core was doing.
pub(crate) type Probe = Box<dyn FnOnce() -> Option<String> + Send>;

impl Quit {
    /// SIGTERM, which QEMU turns into an orderly shutdown (and a line on stderr).
    pub(crate) fn by_signal(grace: Duration) -> Quit {
        Quit {
            // SAFETY: plain syscall on the child the runner spawned and has not reaped.
            ask: Box::new(|pid| unsafe {
                libc::kill(pid as i32, libc::SIGTERM);
            }),
            grace,
        }
    }
}

/// Waits for `child` (a process-group leader) until it exits, `timeout` passes or `overflow` is
/// raised, polling every `poll`; kills the whole group in the last two cases. With `quit`, the
/// timeout first asks QEMU to quit and kills the group only if QEMU is still there after the
/// grace.
fn supervise(
    child: &mut std::process::Child,
    timeout: Duration,
    (quit, probe): (Option<Quit>, Option<Probe>),
    overflow: &AtomicBool,
    poll: Duration,
) -> Result<(ProcessEnd, Option<String>), QemuError> {
    let deadline = Instant::now() + timeout;
    let mut quit = quit;
    loop {
        let now = Instant::now();
        if now >= deadline {
            let state = probe.and_then(|p| p());
            if let Some(Quit { ask, grace }) = quit.take() {
                ask(child.id());
                let _ = child.wait_timeout(grace).map_err(QemuError::Wait)?;
            }
            kill_group(child.id());
            let _ = child.wait();
            return Ok((ProcessEnd::TimedOut, state));
        }
        if let Some(status) = child.wait_timeout((deadline - now).min(poll)).map_err(QemuError::Wait)? {
            let end = match (status.code(), std::os::unix::process::ExitStatusExt::signal(&status)) {
                (Some(code), _) => ProcessEnd::Exited(code),
                (None, Some(sig)) => ProcessEnd::Signalled(sig),
                (None, None) => ProcessEnd::Signalled(0),
            };
            return Ok((end, None));
        }
        if overflow.load(Ordering::Relaxed) {
            kill_group(child.id());
            let _ = child.wait();
            return Ok((ProcessEnd::OutputLimit, None));
        }
    }
}

/// Kills the process group `pid` leads (QEMU is spawned as a group leader).
fn kill_group(pid: u32) {
    // SAFETY: plain syscall; a negative pid addresses the process group we created at spawn.
    unsafe {
        libc::kill(-(pid as i32), libc::SIGKILL);
    }
}

/// Runs `launch` without containment (trusted firmware only): semihosting reaches the host.
/// With the live cycle counter, QEMU is held at reset until the gdbstub link is set up, and the
/// link's server starts the guest.
pub(crate) fn run_uncontained(
    launch: &super::Launch<'_>,
) -> Result<(QemuRun, Option<super::counter::Service>), QemuError> {
    use std::os::unix::process::CommandExt;
    let channels = Channels::new().map_err(QemuError::Spawn)?;
    let fds = channels.fds();
    let mut cmd = Command::new(launch.qemu);
    cmd.args(command_line(launch.board, launch.elf, launch.plugin, Some(fds)));
    let gdb = launch.counter.map(|_| super::counter::GdbLink::new()).transpose().map_err(QemuError::Spawn)?;
    let gdb_fd = gdb.as_ref().map(|g| g.fd());
    if let Some(g) = &gdb {
        cmd.arg("-S").args(g.args());
    }
    // SAFETY: only fcntl between fork and exec.
    unsafe {
        cmd.pre_exec(move || {
            if let Some(fd) = gdb_fd
                && libc::fcntl(fd, libc::F_SETFD, 0) != 0
            {
                return Err(std::io::Error::last_os_error());
            }
            fds.inherit()
        });
    }
    let server = match (gdb, launch.counter) {
        (Some(gdb), Some(live)) => Some(super::counter::spawn(gdb, live, Default::default(), None, None)),
        _ => None,
    };
    let quit = launch.quit_grace().map(Quit::by_signal);
    let run = execute(cmd, launch.timeout, (quit, None), Duration::from_millis(50), channels);
    let counter = super::counter::join(server);
    Ok((run?, counter))
}

/// The one way QEMU is run, contained or not: `cmd` (QEMU with its arguments and any set-up)
/// gets stdin from /dev/null, piped output capped at [`OUTPUT_LIMIT`] per stream, its own
/// process group, and the wall-clock `timeout` (checked every `poll`; with `quit`, QEMU is asked
/// to quit at the timeout first, see [`supervise`]); its whole group is killed at the end, even
/// after a normal exit, so nothing it started survives.
pub(crate) fn execute(
    mut cmd: Command,
    timeout: Duration,
    at_timeout: (Option<Quit>, Option<Probe>),
    poll: Duration,
    channels: Channels,
) -> Result<QemuRun, QemuError> {
    use std::os::unix::process::CommandExt;

    let program = cmd.get_program().to_string_lossy().into_owned();
    let command = std::iter::once(program)
        .chain(cmd.get_args().map(|a| a.to_string_lossy().into_owned()))
        .collect::<Vec<_>>()
        .join(" ");
    let mut child =
        cmd.stdin(Stdio::null()).stdout(Stdio::piped()).stderr(Stdio::piped()).process_group(0).spawn().map_err(
            |e| if e.kind() == std::io::ErrorKind::NotFound { QemuError::NotFound } else { QemuError::Spawn(e) },
        )?;
    let Channels { console: (console, console_theirs), uarts } = channels;
    drop(console_theirs);
    let overflow = Arc::new(AtomicBool::new(false));
    let out = collect(child.stdout.take().expect("piped"), overflow.clone());
    let err = collect(child.stderr.take().expect("piped"), overflow.clone());
    let con = collect(console, overflow.clone());
    let uarts: Vec<_> = uarts
        .into_iter()
        .map(|(ours, theirs)| {
            drop(theirs);
            collect(ours, overflow.clone())
        })
        .collect();
    let (end, at_timeout) = supervise(&mut child, timeout, at_timeout, &overflow, poll)?;
    kill_group(child.id());
    let text = |bytes: Vec<u8>| String::from_utf8_lossy(&bytes).into_owned();
    let stdout = text(out.join().unwrap_or_default());
    let stderr = without_start_up_notes(text(err.join().unwrap_or_default()));
    let console = text(con.join().unwrap_or_default());
    let uarts = uarts.into_iter().map(|u| text(u.join().unwrap_or_default())).collect();
    Ok(QemuRun { end, stdout, stderr, console, uarts, command, at_timeout })
}

/// `stderr` without the harmless lines QEMU prints while it builds the machine, before the guest
/// runs, so that they never reach a verdict (one that quotes QEMU's last words, for one): the
/// warning for an on-board Ethernet controller that `-nic none` leaves unconnected (`nic
/// lan9118.0` on the MPS2 boards, `nic stellaris_enet.0` on lm3s6965evb, `nic msf2-emac.0` on
/// emcraft-sf2), the Stellaris boards' `Timer with period zero, disabling` (a timer QEMU
/// creates with no clock yet), and QEMU's notes on optional modules (display, audio) of another
/// QEMU build that it found in its module directory and skipped (`failed to initialize module`,
/// `Only modules from the same build can be loaded.`, `failed to open module`): what a second
/// QEMU unpacked beside the system's prints on lm3s6965evb, whose OLED display and audio QEMU
/// 10 probes at start-up (ci/setup.sh's QEMU 10 under /opt/qemu-10 beside Debian 12's 7.2).
/// Only leading lines go: nothing the guest causes is dropped.
pub(crate) fn without_start_up_notes(stderr: String) -> String {
    fn harmless(line: &str) -> bool {
        line == "Timer with period zero, disabling"
            || line == "Only modules from the same build can be loaded."
            || line.strip_prefix("qemu-system-arm: failed to initialize module: ").is_some_and(|m| m.ends_with(".so"))
            || line.strip_prefix("qemu-system-arm: failed to open module: ").is_some_and(|m| m.contains(".so: "))
            || line
                .strip_prefix("qemu-system-arm: warning: nic ")
                .and_then(|rest| rest.strip_suffix(" has no peer"))
                .is_some_and(|nic| !nic.is_empty() && !nic.contains(' '))
    }
    let mut start = 0;
    for line in stderr.split_inclusive('\n') {
        if !line.ends_with('\n') || !harmless(line.trim_end_matches('\n')) {
            break;
        }
        start += line.len();
    }
    stderr[start..].to_string()
}

/// The program counter QEMU prints when it aborts on a lockup (`R15=xxxxxxxx` in its register
/// dump, the last thing it writes).
pub fn lockup_pc(stderr: &str) -> Option<u32> {
    let at = stderr.rfind("R15=")?;
    u32::from_str_radix(stderr.get(at + 4..at + 12)?, 16).ok()
}

/// Where a file would be found on PATH, for messages.
pub fn which(program: &str) -> Option<PathBuf> {
    std::env::var_os("PATH")?.to_str()?.split(':').map(|d| Path::new(d).join(program)).find(|p| p.is_file())
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn only_the_leading_start_up_notes_are_dropped() {
        let warning = "qemu-system-arm: warning: nic lan9118.0 has no peer\n";
        assert_eq!(without_start_up_notes(format!("{warning}Cwrite0\n")), "Cwrite0\n");
        assert_eq!(without_start_up_notes(format!("Cwrite0\n{warning}")), format!("Cwrite0\n{warning}"));
        // lm3s6965evb, as QEMU 7.2 prints it before the guest starts.
        let lm3s = "qemu-system-arm: warning: nic stellaris_enet.0 has no peer\nTimer with period zero, disabling\n";
        assert_eq!(without_start_up_notes(lm3s.to_string()), "");
        let lockup = "qemu: fatal: Lockup: can't escalate 3 to HardFault\n";
        assert_eq!(without_start_up_notes(format!("{lm3s}{lockup}")), lockup);
        assert_eq!(without_start_up_notes(format!("{lockup}Timer with period zero, disabling\n")).lines().count(), 2);
        // QEMU 10 beside 7.2, skipping 7.2's optional modules (lm3s6965evb's display and audio).
        let modules = "qemu-system-arm: failed to initialize module: /usr/lib/x86_64-linux-gnu/qemu/ui-opengl.so\n\
                       Only modules from the same build can be loaded.\n\
                       qemu-system-arm: failed to open module: /usr/lib/x86_64-linux-gnu/qemu/audio-alsa.so: undefined symbol: audio_calloc\n";
        assert_eq!(without_start_up_notes(format!("{modules}{lm3s}{lockup}")), lockup);
        assert_eq!(without_start_up_notes(format!("{lockup}{modules}")), format!("{lockup}{modules}"));
        // Only whole lines of exactly that shape.
        let other = "qemu-system-arm: warning: nic a b has no peer\n";
        assert_eq!(without_start_up_notes(other.to_string()), other);
        assert_eq!(
            without_start_up_notes("Timer with period zero, disabling".into()),
            "Timer with period zero, disabling"
        );
    }

    #[test]
    fn lockup_pc_is_read_from_the_register_dump() {
        let stderr = "qemu: fatal: Lockup: can't escalate 3 to HardFault (current priority -1)\n\
            R00=00000000 R01=00000000 R02=00000000 R03=00000000\n\
            R12=00000000 R13=20003fe0 R14=fffffff9 R15=000004d2\n";
        assert_eq!(lockup_pc(stderr), Some(0x4d2));
        assert_eq!(lockup_pc("nothing"), None);
    }
}
