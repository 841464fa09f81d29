//! Runs untrusted firmware under QEMU so that semihosting cannot reach the host.
//!
//! With `-semihosting-config target=native`, QEMU serves a firmware's SYS_OPEN/SYS_READ/SYS_WRITE
//! from host files and runs SYS_SYSTEM's command in a host shell. Here QEMU runs with
//! `target=gdb` instead and the runner itself is QEMU's GDB peer, over a socket pair (`-chardev
//! socket,fd=N -gdb chardev:...`, no socket file, nobody else can attach). QEMU then forwards every
//! semihosting call that touches host files or commands as a GDB File-I/O request (`Fopen`,
//! `Fwrite`, `Fsystem`, ...) and waits for the answer; the CPU runs at full speed in between.
//! The runner answers them itself:
//!
//! - console output (writes to handles 1 and 2, which QEMU uses for `:tt` opened for writing or
//!   appending, and for SYS_WRITEC/SYS_WRITE0) is collected as stdout/stderr, up to
//!   [`OUTPUT_LIMIT`] per stream; past it QEMU is killed at once (it is waiting for our answer);
//! - console input (handle 0) is at end of file, as with stdin from /dev/null;
//! - SYS_TIME (`Fgettimeofday`) answers 0: no host time reaches the firmware;
//! - every other file operation (open, remove, rename, read/write/seek of another handle) and
//!   SYS_SYSTEM is refused with `EACCES`/`EBADF` and recorded as a [`SemihostingEvent`], with the
//!   path or command read from guest memory. SYS_OPEN of `:tt` never reaches us: QEMU maps it to
//!   the console handles itself.
//!
//! SYS_EXIT/SYS_EXIT_EXTENDED make QEMU send a `W<code>` stop reply and exit with that code, as
//! it does with `target=native` (0 for `ADP_Stopped_ApplicationExit`, 1 otherwise), so
//! [`ProcessEnd`] means the same thing for both runners.
//!
//! Defence in depth around that: QEMU's seccomp sandbox (`-sandbox on,obsolete=deny,
//! elevateprivileges=deny,spawn=deny,resourcecontrol=deny`: even a QEMU bug cannot start a
//! program), a private scratch directory as the working directory (removed afterwards), an
//! environment with nothing but `PATH`, no core dumps, a 4 GiB address-space limit, death with the
//! parent, the wall-clock timeout, and a kill of QEMU's whole process group at the end.
//!
//! The command line is [`qemu::command_line_with`] with the semihosting target changed,
//! `sleep=off` added to `-icount` (see [`command_line`]) and the GDB and sandbox options
//! appended. Instruction counts between semihosting calls are exact and identical to the native
//! runner's (the plugin's region counts and cycle estimates match byte for byte), but every
//! semihosting call stops the VM, and QEMU 7.2 can advance its icount clock to the next timer
//! deadline while the CPU is stopped. So what depends on virtual time is not reproducible to the
//! tick: measured on the Rust KAT firmware (61 KATs), SysTick `ticks` differ from the native
//! run by ±1 in 10–20 KATs per run, and the plugin's whole-run `insns`/`cycles` totals (which
//! include SysTick handler executions) by a few dozen instructions.

use std::fmt;
use std::io::{Read, Write};
use std::os::unix::io::AsRawFd;
use std::os::unix::net::UnixStream;
use std::path::{Path, PathBuf};
use std::process::{Command, Stdio};
use std::sync::Arc;
use std::sync::atomic::{AtomicBool, AtomicU64, Ordering};
use std::time::Duration;

use serde::Serialize;

use crate::board::Board;
use crate::protocol::{ProtocolError, Transcript};
use crate::qemu::{self, OUTPUT_LIMIT, ProcessEnd, QEMU, QemuError, QemuRun};
use crate::verdict::{Outcome, Verdict};

/// QEMU's seccomp filter: no exec/fork (so no host command, even through a QEMU bug), no
/// privilege changes, no obsolete system calls, no scheduler/resource changes.
pub const SANDBOX: &str = "on,obsolete=deny,elevateprivileges=deny,spawn=deny,resourcecontrol=deny";

/// Address-space limit for QEMU. QEMU 7.2 reserves a 1 GiB translation buffer and maps 16 MiB of
/// guest RAM on the MPS2 boards (about 1.3 GiB virtual in all); this leaves room for the TCG
/// plugin while bounding what a runaway can take.
pub const ADDRESS_SPACE_LIMIT: u64 = 4 << 30;

/// At most this many events are kept; later ones are only counted.
pub const MAX_EVENTS: usize = 64;

const CHARDEV_ID: &str = "mcubench-gdb";
/// Largest `m` request: QEMU 7.2's packet buffer is 4096 bytes (`PacketSize=1000`) and a reply
/// is two hex digits per byte.
const MEMORY_CHUNK: usize = 1024;
/// Longest path or command read from guest memory for an event.
const MAX_NAME: usize = 1024;

/// GDB File-I/O errno values (these are the protocol's numbers, not the host's).
mod errno {
    pub const EBADF: u32 = 9;
    pub const EACCES: u32 = 13;
    pub const EFAULT: u32 = 14;
    pub const ESPIPE: u32 = 29;
    pub const EUNKNOWN: u32 = 9999;

    pub fn name(e: u32) -> &'static str {
        match e {
            EBADF => "EBADF",
            EACCES => "EACCES",
            EFAULT => "EFAULT",
            ESPIPE => "ESPIPE",
            _ => "EUNKNOWN",
        }
    }
}

/// One thing the firmware tried through semihosting that the runner refused.
#[derive(Debug, Clone, PartialEq, Eq, Serialize)]
pub struct SemihostingEvent {
    /// The semihosting operation, e.g. `SYS_SYSTEM`, `SYS_OPEN`.
    pub call: String,
    /// What it named: the command or path (quoted, as read from guest memory), the open mode, the
    /// handle.
    pub detail: String,
    /// The error the firmware got back, e.g. `EACCES`.
    pub refused_with: String,
}

impl fmt::Display for SemihostingEvent {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        write!(f, "firmware attempted {}({}): refused ({})", self.call, self.detail, self.refused_with)
    }
}

/// What happened in a contained run: [`QemuRun`]'s fields plus what the firmware attempted.
#[derive(Debug, Clone)]
pub struct ContainedRun {
    pub end: ProcessEnd,
    /// Semihosting output on handle 1 (the protocol's records and the firmware's log).
    pub stdout: String,
    /// Semihosting output on handle 2, then QEMU's own stderr (errors, lockup register dump).
    pub stderr: String,
    /// QEMU's own stdout: UART output and the monitor under `-nographic` (not semihosting).
    pub console: String,
    pub command: String,
    /// Refused host accesses, in order (at most [`MAX_EVENTS`]).
    pub events: Vec<SemihostingEvent>,
    /// Refused accesses beyond [`MAX_EVENTS`], counted only.
    pub events_dropped: u64,
    /// The exit code QEMU reported to its GDB peer (`W` packet) on SYS_EXIT, reset or shutdown.
    pub reported_exit: Option<u8>,
    /// The GDB link failed while QEMU was running (not caused by the firmware): the run says nothing.
    pub peer_error: Option<String>,
}

impl ContainedRun {
    /// The same run as [`crate::qemu`] would describe it, for [`crate::verdict::judge`] and the report.
    pub fn as_qemu_run(&self) -> QemuRun {
        QemuRun {
            end: self.end.clone(),
            stdout: self.stdout.clone(),
            stderr: self.stderr.clone(),
            command: self.command.clone(),
        }
    }
}

/// The QEMU command line for a contained run: [`qemu::command_line_with`] with `target=gdb`, the
/// CPU held at reset until the runner attaches (`-S`), the GDB stub on the inherited socket `fd`,
/// and the seccomp sandbox.
pub fn command_line(board: &Board, elf: &Path, plugin: Option<&str>, fd: i32) -> Vec<String> {
    let mut args = qemu::command_line_with(board, elf, plugin);
    let target =
        args.iter().position(|a| a.starts_with("enable=on,target=")).expect("qemu.rs sets -semihosting-config");
    args[target] = "enable=on,target=gdb".into();
    // The VM stops while the runner answers a semihosting call, and QEMU may then "warp" the
    // icount clock over the idle time: with the default `sleep=on` by host time, with
    // `sleep=off` straight to the next timer deadline (no host time). Either way SysTick
    // readings and whole-run totals can move by a tick (see the module docs); region counts
    // from the plugin are exact.
    let icount = args.iter().position(|a| a == "-icount").expect("qemu.rs sets -icount") + 1;
    if !args[icount].contains("sleep=") {
        args[icount].push_str(",sleep=off");
    }
    args.extend([
        "-S".to_string(),
        "-chardev".into(),
        format!("socket,id={CHARDEV_ID},fd={fd}"),
        "-gdb".into(),
        format!("chardev:{CHARDEV_ID}"),
        "-sandbox".into(),
        SANDBOX.into(),
    ]);
    args
}

pub fn run_contained(board: &Board, elf: &Path, timeout: Duration) -> Result<ContainedRun, QemuError> {
    run_contained_with(QEMU.as_ref(), board, elf, timeout, None)
}

/// Like [`run_contained`], loading the TCG plugin with this `-plugin` value when given.
pub fn run_contained_plugin(
    board: &Board,
    elf: &Path,
    timeout: Duration,
    plugin: Option<&str>,
) -> Result<ContainedRun, QemuError> {
    run_contained_with(QEMU.as_ref(), board, elf, timeout, plugin)
}

/// Like [`run_contained_plugin`] with an explicit QEMU executable.
pub fn run_contained_with(
    qemu: &Path,
    board: &Board,
    elf: &Path,
    timeout: Duration,
    plugin: Option<&str>,
) -> Result<ContainedRun, QemuError> {
    use std::os::unix::process::CommandExt;

    // The ELF path must not depend on the working directory we give QEMU.
    let elf = std::path::absolute(elf).map_err(QemuError::Spawn)?;
    let scratch = ScratchDir::new().map_err(QemuError::Spawn)?;
    let (ours, theirs) = UnixStream::pair().map_err(QemuError::Spawn)?;
    let fd = theirs.as_raw_fd();
    let args = command_line(board, &elf, plugin, fd);
    let command = std::iter::once(qemu.display().to_string()).chain(args.iter().cloned()).collect::<Vec<_>>().join(" ");

    let mut cmd = Command::new(qemu);
    cmd.args(&args)
        .current_dir(&scratch.0)
        .env_clear()
        .stdin(Stdio::null())
        .stdout(Stdio::piped())
        .stderr(Stdio::piped())
        .process_group(0);
    if let Some(path) = std::env::var_os("PATH") {
        cmd.env("PATH", path);
    }
    // SAFETY: only async-signal-safe calls (fcntl, setrlimit, prctl) between fork and exec.
    unsafe {
        cmd.pre_exec(move || {
            // Both ends are close-on-exec (so no other child inherits them); QEMU keeps its end.
            if libc::fcntl(fd, libc::F_SETFD, 0) != 0 {
                return Err(std::io::Error::last_os_error());
            }
            let no_core = libc::rlimit { rlim_cur: 0, rlim_max: 0 };
            let space = libc::rlimit { rlim_cur: ADDRESS_SPACE_LIMIT, rlim_max: ADDRESS_SPACE_LIMIT };
            if libc::setrlimit(libc::RLIMIT_CORE, &no_core) != 0 || libc::setrlimit(libc::RLIMIT_AS, &space) != 0 {
                return Err(std::io::Error::last_os_error());
            }
            libc::prctl(libc::PR_SET_PDEATHSIG, libc::SIGKILL);
            Ok(())
        });
    }
    let spawned = cmd.spawn();
    drop(theirs);
    let mut child = spawned.map_err(|e| {
        if e.kind() == std::io::ErrorKind::NotFound { QemuError::NotFound } else { QemuError::Spawn(e) }
    })?;

    let overflow = Arc::new(AtomicBool::new(false));
    let console = qemu::collect(child.stdout.take().expect("piped"), overflow.clone());
    let qemu_stderr = qemu::collect(child.stderr.take().expect("piped"), overflow.clone());
    let peer_overflow = overflow.clone();
    let peer = std::thread::spawn(move || {
        let mut peer = Peer::new(ours, peer_overflow);
        let error = peer.serve().err().map(|e| e.to_string());
        (peer, error)
    });

    // Short polls: a QEMU that died must not leave the GDB peer waiting long.
    let end = qemu::supervise(&mut child, timeout, &overflow, Duration::from_millis(20))?;
    qemu::kill_group(child.id());
    let (peer, link_error) = peer.join().unwrap_or_else(|_| panic!("the GDB peer thread panicked"));
    let console = console.join().unwrap_or_default();
    let qemu_stderr = qemu_stderr.join().unwrap_or_default();
    drop(scratch);

    // A broken link only matters while QEMU was alive and not killed by us: QEMU closing the
    // socket as it exits, aborts or is killed is the normal end of the conversation.
    let peer_error = match (&end, link_error) {
        (ProcessEnd::Exited(_) | ProcessEnd::Signalled(_), Some(e)) if !peer.link_closed => Some(e),
        _ => None,
    };
    let mut stderr = String::from_utf8_lossy(&peer.stderr).into_owned();
    stderr.push_str(&String::from_utf8_lossy(&qemu_stderr));
    Ok(ContainedRun {
        end,
        stdout: String::from_utf8_lossy(&peer.stdout).into_owned(),
        stderr,
        console: String::from_utf8_lossy(&console).into_owned(),
        command,
        events: peer.events,
        events_dropped: peer.events_dropped,
        reported_exit: peer.exit,
        peer_error,
    })
}

/// The verdict for a contained run: [`crate::verdict::judge`], except that any refused host
/// access makes a run that would pass (or say nothing) fail, and is named in every message.
pub fn judge(
    run: &ContainedRun,
    transcript: Result<&Transcript, &ProtocolError>,
    timeout_secs: f64,
    symbolize: &dyn Fn(u32) -> String,
) -> Verdict {
    if let Some(e) = &run.peer_error {
        return Verdict {
            outcome: Outcome::SetupError,
            message: format!("the runner lost QEMU's GDB link ({e}); QEMU: {}", run.command),
        };
    }
    let base = crate::verdict::judge(&run.as_qemu_run(), transcript, timeout_secs, symbolize);
    if run.events.is_empty() {
        return base;
    }
    let mut attempts: Vec<String> = run.events.iter().map(|e| e.to_string()).collect();
    if run.events_dropped > 0 {
        attempts.push(format!("and {} more", run.events_dropped));
    }
    let outcome = match base.outcome {
        Outcome::Pass | Outcome::NoVerdict => Outcome::Fail,
        other => other,
    };
    let mut message = format!(
        "the firmware tried to reach the host through semihosting, which mcubench refuses (only console \
         output and exit are allowed): {}",
        attempts.join("; ")
    );
    if !base.message.is_empty() {
        message.push_str("; besides: ");
        message.push_str(&base.message);
    }
    Verdict { outcome, message }
}

/// A private directory for QEMU's working directory, removed on drop.
struct ScratchDir(PathBuf);

impl ScratchDir {
    fn new() -> std::io::Result<ScratchDir> {
        use std::os::unix::fs::DirBuilderExt;
        static NEXT: AtomicU64 = AtomicU64::new(0);
        let base = std::env::temp_dir();
        loop {
            let n = NEXT.fetch_add(1, Ordering::Relaxed);
            let nanos =
                std::time::SystemTime::now().duration_since(std::time::UNIX_EPOCH).map_or(0, |d| d.subsec_nanos());
            let dir = base.join(format!("mcubench-qemu-{}-{n}-{nanos:08x}", std::process::id()));
            match std::fs::DirBuilder::new().mode(0o700).create(&dir) {
                Ok(()) => return Ok(ScratchDir(dir)),
                Err(e) if e.kind() == std::io::ErrorKind::AlreadyExists => continue,
                Err(e) => return Err(e),
            }
        }
    }
}

impl Drop for ScratchDir {
    fn drop(&mut self) {
        let _ = std::fs::remove_dir_all(&self.0);
    }
}

// ---- the GDB remote serial protocol peer -----------------------------------------------------

/// One argument of a File-I/O request: a number or a `pointer/length` pair (strings).
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
enum Arg {
    Num(u64),
    Buf(u64, u64),
}

impl Arg {
    fn num(self) -> u64 {
        match self {
            Arg::Num(n) | Arg::Buf(n, _) => n,
        }
    }
}

/// Parses `Fname,arg,arg/len,...` (the leading `F` already removed).
fn parse_request(body: &str) -> Option<(&str, Vec<Arg>)> {
    let mut parts = body.split(',');
    let name = parts.next()?;
    let hex = |s: &str| u64::from_str_radix(s, 16).ok();
    let args = parts
        .map(|p| match p.split_once('/') {
            Some((a, b)) => Some(Arg::Buf(hex(a)?, hex(b)?)),
            None => hex(p).map(Arg::Num),
        })
        .collect::<Option<Vec<_>>>()?;
    Some((name, args))
}

fn checksum(data: &[u8]) -> u8 {
    data.iter().fold(0u8, |a, b| a.wrapping_add(*b))
}

/// A reply to a File-I/O request: a result, or -1 with an errno.
fn reply(result: Result<u64, u32>) -> String {
    match result {
        Ok(n) => format!("F{n:x}"),
        Err(e) => format!("F-1,{e:x}"),
    }
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

/// GDB File-I/O open flags as words.
fn open_mode(flags: u64) -> String {
    let access = match flags & 3 {
        0 => "read",
        1 => "write",
        _ => "read+write",
    };
    let mut words = vec![access];
    if flags & 0x8 != 0 {
        words.push("append");
    }
    if flags & 0x200 != 0 {
        words.push("create");
    }
    if flags & 0x400 != 0 {
        words.push("truncate");
    }
    words.join("+")
}

#[derive(Debug, thiserror::Error)]
enum LinkError {
    #[error("{0}")]
    Io(#[from] std::io::Error),
    #[error("malformed packet from QEMU: {0}")]
    Protocol(String),
}

enum Next {
    Continue,
    /// Stop serving (output limit reached: QEMU waits for an answer it will not get and is killed).
    Stop,
}

struct Peer {
    io: UnixStream,
    inbuf: Vec<u8>,
    stdout: Vec<u8>,
    stderr: Vec<u8>,
    events: Vec<SemihostingEvent>,
    events_dropped: u64,
    exit: Option<u8>,
    overflow: Arc<AtomicBool>,
    /// QEMU closed the link (it exited or was killed): the normal end.
    link_closed: bool,
}

impl Peer {
    fn new(io: UnixStream, overflow: Arc<AtomicBool>) -> Peer {
        Peer {
            io,
            inbuf: Vec::new(),
            stdout: Vec::new(),
            stderr: Vec::new(),
            events: Vec::new(),
            events_dropped: 0,
            exit: None,
            overflow,
            link_closed: false,
        }
    }

    fn serve(&mut self) -> Result<(), LinkError> {
        // QEMU holds the CPU at reset (-S) until told to continue.
        self.send("c")?;
        while let Some(packet) = self.receive()? {
            let Some(&kind) = packet.as_bytes().first() else { continue };
            match kind {
                b'F' => {
                    if let Next::Stop = self.file_io(&packet[1..])? {
                        return Ok(());
                    }
                }
                b'W' => self.exit = u8::from_str_radix(&packet[1..packet.len().min(3)], 16).ok(),
                // A stop for another reason (none is set up): let it run on.
                b'T' | b'S' => self.send("c")?,
                _ => {}
            }
        }
        Ok(())
    }

    /// Reads one packet and acknowledges it; `None` when QEMU closed the link.
    fn receive(&mut self) -> Result<Option<String>, LinkError> {
        loop {
            if let Some(start) = self.inbuf.iter().position(|&b| b == b'$') {
                if let Some(hash) = self.inbuf[start..].iter().position(|&b| b == b'#').map(|h| start + h)
                    && self.inbuf.len() >= hash + 3
                {
                    let data = self.inbuf[start + 1..hash].to_vec();
                    let sum = std::str::from_utf8(&self.inbuf[hash + 1..hash + 3])
                        .ok()
                        .and_then(|s| u8::from_str_radix(s, 16).ok());
                    self.inbuf.drain(..hash + 3);
                    if sum != Some(checksum(&data)) {
                        return Err(LinkError::Protocol(format!(
                            "bad checksum on `{}`",
                            String::from_utf8_lossy(&data)
                        )));
                    }
                    // QEMU may exit right after its last packet (`W` on SYS_EXIT) and close the
                    // link before the acknowledgement: the packet arrived whole, so keep it.
                    if let Err(e) = self.write_raw(b"+")
                        && !self.link_closed
                    {
                        return Err(e);
                    }
                    return String::from_utf8(data)
                        .map(Some)
                        .map_err(|e| LinkError::Protocol(format!("not text: {e}")));
                }
            } else {
                // Acknowledgements (`+`) and anything else outside a packet.
                self.inbuf.clear();
            }
            let mut buf = [0u8; 16 * 1024];
            let n = match self.io.read(&mut buf) {
                Ok(n) => n,
                Err(e) if e.kind() == std::io::ErrorKind::ConnectionReset => 0,
                Err(e) if e.kind() == std::io::ErrorKind::Interrupted => continue,
                Err(e) => return Err(e.into()),
            };
            if n == 0 {
                self.link_closed = true;
                return Ok(None);
            }
            self.inbuf.extend_from_slice(&buf[..n]);
        }
    }

    fn send(&mut self, data: &str) -> Result<(), LinkError> {
        let packet = format!("${data}#{:02x}", checksum(data.as_bytes()));
        self.write_raw(packet.as_bytes())
    }

    fn write_raw(&mut self, bytes: &[u8]) -> Result<(), LinkError> {
        let written = self.io.write_all(bytes);
        if let Err(e) = &written
            && matches!(e.kind(), std::io::ErrorKind::BrokenPipe | std::io::ErrorKind::ConnectionReset)
        {
            // QEMU exited or was killed: the normal end of the conversation.
            self.link_closed = true;
        }
        Ok(written?)
    }

    /// Sends a request and returns the answer.
    fn request(&mut self, data: &str) -> Result<String, LinkError> {
        self.send(data)?;
        self.receive()?.ok_or_else(|| LinkError::Protocol("link closed while a request was pending".into()))
    }

    /// Reads guest memory; `None` if QEMU cannot (no memory there).
    fn read_memory(&mut self, addr: u64, len: usize) -> Result<Option<Vec<u8>>, LinkError> {
        let mut out = Vec::with_capacity(len);
        while out.len() < len {
            let n = (len - out.len()).min(MEMORY_CHUNK);
            let answer = self.request(&format!("m{:x},{n:x}", addr.wrapping_add(out.len() as u64)))?;
            if answer.len() != 2 * n {
                return Ok(None);
            }
            for pair in answer.as_bytes().chunks(2) {
                let byte = std::str::from_utf8(pair).ok().and_then(|s| u8::from_str_radix(s, 16).ok());
                out.push(byte.ok_or_else(|| LinkError::Protocol(format!("bad memory reply `{answer}`")))?);
            }
        }
        Ok(Some(out))
    }

    fn write_memory(&mut self, addr: u64, data: &[u8]) -> Result<bool, LinkError> {
        let hex: String = data.iter().map(|b| format!("{b:02x}")).collect();
        Ok(self.request(&format!("M{addr:x},{:x}:{hex}", data.len()))? == "OK")
    }

    /// A string argument (`pointer/length`, length including the NUL), quoted for an event.
    fn name(&mut self, arg: Option<&Arg>) -> Result<String, LinkError> {
        let Some(&Arg::Buf(addr, len)) = arg else { return Ok("?".into()) };
        let len = (len as usize).min(MAX_NAME);
        Ok(match self.read_memory(addr, len)? {
            Some(bytes) => quote(&bytes),
            None => format!("<unreadable 0x{addr:08x}>"),
        })
    }

    fn refuse(&mut self, call: &str, detail: String, errno: u32) -> Result<Next, LinkError> {
        if self.events.len() < MAX_EVENTS {
            self.events.push(SemihostingEvent { call: call.into(), detail, refused_with: errno::name(errno).into() });
        } else {
            self.events_dropped += 1;
        }
        self.answer(Err(errno))
    }

    fn answer(&mut self, result: Result<u64, u32>) -> Result<Next, LinkError> {
        self.send(&reply(result))?;
        Ok(Next::Continue)
    }

    fn file_io(&mut self, body: &str) -> Result<Next, LinkError> {
        let Some((name, args)) = parse_request(body) else {
            return self.refuse("an unknown semihosting call", quote(body.as_bytes()), errno::EUNKNOWN);
        };
        let num = |i: usize| args.get(i).map_or(u64::MAX, |a| a.num());
        let console = |fd: u64| fd <= 2;
        match name {
            "write" => {
                let (fd, addr, len) = (num(0), num(1), num(2));
                if fd != 1 && fd != 2 {
                    return self.refuse("SYS_WRITE", format!("handle {fd}"), errno::EBADF);
                }
                let kept = if fd == 1 { self.stdout.len() } else { self.stderr.len() };
                let room = OUTPUT_LIMIT.saturating_sub(kept);
                let take = (len as usize).min(room);
                let mut got = 0;
                while got < take {
                    let n = (take - got).min(64 * 1024);
                    let Some(bytes) = self.read_memory(addr.wrapping_add(got as u64), n)? else { break };
                    if fd == 1 { &mut self.stdout } else { &mut self.stderr }.extend_from_slice(&bytes);
                    got += n;
                }
                if got == take && take < len as usize {
                    // Over the limit: no answer; the runner kills QEMU while it waits for one.
                    self.overflow.store(true, Ordering::Relaxed);
                    return Ok(Next::Stop);
                }
                if got == 0 && len > 0 {
                    return self.answer(Err(errno::EFAULT));
                }
                self.answer(Ok(got as u64))
            }
            // Console input is at end of file, as stdin from /dev/null is natively.
            "read" if num(0) == 0 => self.answer(Ok(0)),
            "read" => self.refuse("SYS_READ", format!("handle {}", num(0)), errno::EBADF),
            "open" => {
                let path = self.name(args.first())?;
                let mode = open_mode(num(1));
                self.refuse("SYS_OPEN", format!("{path}, {mode}"), errno::EACCES)
            }
            "close" if console(num(0)) => self.answer(Ok(0)),
            "close" => self.refuse("SYS_CLOSE", format!("handle {}", num(0)), errno::EBADF),
            "lseek" if console(num(0)) => self.answer(Err(errno::ESPIPE)),
            "lseek" => self.refuse("SYS_SEEK", format!("handle {}", num(0)), errno::EBADF),
            // A pipe natively: not a terminal.
            "isatty" if console(num(0)) => self.answer(Ok(0)),
            "isatty" => self.refuse("SYS_ISTTY", format!("handle {}", num(0)), errno::EBADF),
            "fstat" if console(num(0)) => {
                // SYS_FLEN of the console: an all-zero `struct stat` (size 0), as for a pipe.
                let ok = self.write_memory(num(1), &[0u8; 64])?;
                self.answer(if ok { Ok(0) } else { Err(errno::EFAULT) })
            }
            "fstat" => self.refuse("SYS_FLEN", format!("handle {}", num(0)), errno::EBADF),
            "stat" => {
                let path = self.name(args.first())?;
                self.refuse("stat", path, errno::EACCES)
            }
            "gettimeofday" => {
                // SYS_TIME: the epoch, always. No host time reaches the firmware.
                let tv = num(0);
                let ok = tv == 0 || self.write_memory(tv, &[0u8; 12])?;
                self.answer(if ok { Ok(0) } else { Err(errno::EFAULT) })
            }
            // `system(NULL)` asks whether there is a shell: there is none.
            "system" if matches!(args.first(), Some(Arg::Buf(_, 0)) | Some(Arg::Num(0))) => self.answer(Ok(0)),
            "system" => {
                let command = self.name(args.first())?;
                self.refuse("SYS_SYSTEM", command, errno::EACCES)
            }
            "unlink" => {
                let path = self.name(args.first())?;
                self.refuse("SYS_REMOVE", path, errno::EACCES)
            }
            "rename" => {
                let from = self.name(args.first())?;
                let to = self.name(args.get(1))?;
                self.refuse("SYS_RENAME", format!("{from} → {to}"), errno::EACCES)
            }
            other => self.refuse("an unknown semihosting call", format!("F{other}"), errno::EUNKNOWN),
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn requests_are_parsed_with_numbers_and_buffers() {
        assert_eq!(
            parse_request("write,00000001,203ffbe0,0000001d"),
            Some(("write", vec![Arg::Num(1), Arg::Num(0x203f_fbe0), Arg::Num(0x1d)]))
        );
        assert_eq!(
            parse_request("open,203ffad8/19,00000601,000001a4"),
            Some(("open", vec![Arg::Buf(0x203f_fad8, 0x19), Arg::Num(0x601), Arg::Num(0x1a4)]))
        );
        assert_eq!(parse_request("system,zz/1"), None);
    }

    #[test]
    fn replies_and_checksums_follow_the_protocol() {
        assert_eq!(reply(Ok(0x1d)), "F1d");
        assert_eq!(reply(Err(errno::EACCES)), "F-1,d");
        // `$OK#9a` is the canonical example.
        assert_eq!(checksum(b"OK"), 0x9a);
    }

    #[test]
    fn names_are_quoted_printable_and_bounded() {
        assert_eq!(quote(b"touch /tmp/x\0"), "`touch /tmp/x`");
        assert_eq!(quote(b"a\nb\x1b"), "`a\\nb\\u{1b}`");
        assert_eq!(quote(&[b'a'; 300]).chars().count(), 203);
        assert_eq!(open_mode(0x601), "write+create+truncate");
        assert_eq!(open_mode(0), "read");
    }

    #[test]
    fn an_event_reads_as_a_sentence() {
        let e =
            SemihostingEvent { call: "SYS_SYSTEM".into(), detail: "`touch /x`".into(), refused_with: "EACCES".into() };
        assert_eq!(e.to_string(), "firmware attempted SYS_SYSTEM(`touch /x`): refused (EACCES)");
    }

    #[test]
    fn the_command_line_differs_from_the_native_one_only_in_containment() {
        let board = Board::find("mps2-an386").unwrap();
        let native = qemu::command_line(board, Path::new("/fw.elf"));
        let contained = command_line(board, Path::new("/fw.elf"), None, 7);
        let changed: Vec<_> = native.iter().zip(&contained).filter(|(a, b)| a != b).collect();
        assert_eq!(
            changed,
            [
                (&"enable=on,target=native".to_string(), &"enable=on,target=gdb".to_string()),
                (&"shift=0".to_string(), &"shift=0,sleep=off".to_string())
            ]
        );
        assert_eq!(
            contained[native.len()..].join(" "),
            format!("-S -chardev socket,id=mcubench-gdb,fd=7 -gdb chardev:mcubench-gdb -sandbox {SANDBOX}")
        );
    }

    #[test]
    fn a_scratch_dir_is_private_and_removed() {
        use std::os::unix::fs::PermissionsExt;
        let dir = ScratchDir::new().unwrap();
        let path = dir.0.clone();
        assert_eq!(std::fs::metadata(&path).unwrap().permissions().mode() & 0o777, 0o700);
        std::fs::write(path.join("core"), b"x").unwrap();
        drop(dir);
        assert!(!path.exists());
    }
}
