//! The seccomp filter that hands QEMU's path-naming system calls to the runner, and the
//! listener that answers them (seccomp user notification, Linux 5.5+).
//!
//! The filter is installed in the forked child just before it executes QEMU, so it covers QEMU
//! and everything QEMU starts, and it cannot be removed. It sends every system call that names a
//! host path or starts a program (open, exec, unlink, rename, mkdir, link, chmod, ...) to the
//! [`Listener`] and lets every other call through. The listener continues each one while QEMU
//! initialises (loading its libraries, the ELF, the TCG plugin) and refuses each one with `EACCES`
//! once the guest has been started ([`Listener::serve`]'s `guest_started`).
//!
//! After that point most such calls are the firmware's (semihosting SYS_OPEN, SYS_REMOVE,
//! SYS_RENAME and SYS_SYSTEM, whose `/bin/sh` exec is refused), but not all: glibc's malloc, in
//! whichever thread first shrinks a thread arena (often the vCPU thread, the one that also serves
//! semihosting), opens `/proc/sys/vm/overcommit_memory` once. [`origin`] tells them apart by the
//! calling thread and the shape of the call, which QEMU's semihosting code fixes: semihosting
//! runs in the vCPU thread, never in QEMU's main thread; SYS_OPEN is `open(path, flags, mode)`
//! with flags built from the guest's mode alone (access mode, `O_CREAT`, `O_TRUNC`, `O_EXCL`), so
//! never `O_CLOEXEC`, which glibc's internal opens, QEMU's `qemu_open` and the Rust plugin's opens
//! all carry. Both kinds are refused; only the firmware's become [`SemihostingEvent`]s.
//!
//! Refusing needs no look at the arguments, so the usual race of user notification (the target
//! changing a path after the check) does not apply. Whose a call is comes from the registers the
//! kernel captured at the call (flags and directory), which QEMU cannot change afterwards either;
//! only `openat2`'s flags are read from QEMU's memory. Paths are read only to say what was
//! attempted.

use std::os::fd::{AsRawFd, FromRawFd, OwnedFd, RawFd};
use std::sync::atomic::{AtomicBool, Ordering};

use super::{MAX_NAME, SemihostingEvent, quote};

/// `AUDIT_ARCH_*` of the host (linux/audit.h): the filter refuses other system call ABIs.
#[cfg(target_arch = "x86_64")]
const AUDIT_ARCH: u32 = 0xc000_003e;
#[cfg(target_arch = "aarch64")]
const AUDIT_ARCH: u32 = 0xc000_00b7;

/// The kernel's `O_LARGEFILE` (the libc crate has glibc's, 0 on 64-bit hosts): a libc may add it
/// to any open.
#[cfg(target_arch = "x86_64")]
const KERNEL_O_LARGEFILE: libc::c_int = 0o100000;
#[cfg(target_arch = "aarch64")]
const KERNEL_O_LARGEFILE: libc::c_int = 0o400000;

/// Every open flag QEMU's semihosting SYS_OPEN can pass to the host's `open` (`host_open` in
/// QEMU's semihosting/syscalls.c, 7.2 to 10.x: the access mode, `O_CREAT`, `O_TRUNC`, `O_EXCL`;
/// `O_BINARY` is 0 on Linux), plus `O_LARGEFILE`, which a libc may add, and `O_APPEND`, which the
/// guest's append modes ask for (QEMU drops it today).
const SEMIHOSTING_OPEN_FLAGS: libc::c_int =
    libc::O_ACCMODE | libc::O_CREAT | libc::O_TRUNC | libc::O_EXCL | libc::O_APPEND | KERNEL_O_LARGEFILE;

/// How a supervised system call's arguments are read for the event.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
enum Call {
    /// Directory argument (`None`: `open`, `creat`), path argument, open flags argument (`None`:
    /// `creat`, write+create+truncate).
    Open {
        dirfd: Option<usize>,
        path: usize,
        flags: Option<usize>,
    },
    /// `openat2`: directory argument, path argument, `struct open_how *` argument (flags are its
    /// first field).
    Open2 {
        dirfd: usize,
        path: usize,
        how: usize,
    },
    /// Program path argument, argv argument.
    Exec {
        path: usize,
        argv: usize,
    },
    Remove {
        path: usize,
    },
    Rename {
        from: usize,
        to: usize,
    },
    /// Anything else that names a path (path argument); never reached through semihosting.
    Other {
        path: usize,
    },
}

/// A supervised system call: its number, its name, how its arguments read.
type Supervised = (libc::c_long, &'static str, Call);

/// The supervised system calls of this host ABI.
fn supervised() -> Vec<Supervised> {
    use Call::*;
    let mut calls = vec![
        (libc::SYS_openat, "openat", Open { dirfd: Some(0), path: 1, flags: Some(2) }),
        (libc::SYS_openat2, "openat2", Open2 { dirfd: 0, path: 1, how: 2 }),
        (libc::SYS_execve, "execve", Exec { path: 0, argv: 1 }),
        (libc::SYS_execveat, "execveat", Exec { path: 1, argv: 2 }),
        (libc::SYS_unlinkat, "unlinkat", Remove { path: 1 }),
        (libc::SYS_renameat, "renameat", Rename { from: 1, to: 3 }),
        (libc::SYS_renameat2, "renameat2", Rename { from: 1, to: 3 }),
        (libc::SYS_mkdirat, "mkdirat", Other { path: 1 }),
        (libc::SYS_mknodat, "mknodat", Other { path: 1 }),
        (libc::SYS_linkat, "linkat", Other { path: 1 }),
        (libc::SYS_symlinkat, "symlinkat", Other { path: 0 }),
        (libc::SYS_truncate, "truncate", Other { path: 0 }),
        (libc::SYS_fchmodat, "fchmodat", Other { path: 1 }),
        (libc::SYS_fchmodat2, "fchmodat2", Other { path: 1 }),
        (libc::SYS_fchownat, "fchownat", Other { path: 1 }),
    ];
    // The older calls x86_64 still has next to their `*at` forms.
    #[cfg(target_arch = "x86_64")]
    calls.extend([
        (libc::SYS_open, "open", Open { dirfd: None, path: 0, flags: Some(1) }),
        (libc::SYS_creat, "creat", Open { dirfd: None, path: 0, flags: None }),
        (libc::SYS_unlink, "unlink", Remove { path: 0 }),
        (libc::SYS_rmdir, "rmdir", Remove { path: 0 }),
        (libc::SYS_rename, "rename", Rename { from: 0, to: 1 }),
        (libc::SYS_mkdir, "mkdir", Other { path: 0 }),
        (libc::SYS_mknod, "mknod", Other { path: 0 }),
        (libc::SYS_link, "link", Other { path: 0 }),
        (libc::SYS_symlink, "symlink", Other { path: 0 }),
        (libc::SYS_chmod, "chmod", Other { path: 0 }),
        (libc::SYS_chown, "chown", Other { path: 0 }),
        (libc::SYS_lchown, "lchown", Other { path: 0 }),
    ]);
    calls
}

/// Who made a supervised call once the guest runs.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub(super) enum Origin {
    /// QEMU's semihosting, for the firmware: SYS_OPEN, SYS_REMOVE, SYS_RENAME, SYS_SYSTEM.
    Guest,
    /// QEMU itself or a library in it (glibc's malloc, ...), never on the firmware's behalf.
    Qemu,
}

/// Whose the call is, from the calling thread (`main_thread`: QEMU's main thread), its arguments
/// (`args`, as the kernel captured them) and, for `openat2`, the flags read from QEMU's memory
/// (`open2_flags`; `None` if unreadable).
///
/// * Nothing QEMU's main thread does is the guest's: semihosting runs in the vCPU thread (the
///   main thread reads `/proc/<pid>/cmdline` with GLib, without `O_CLOEXEC`, when a signal ends
///   QEMU, for example).
/// * An open is the guest's if it has the shape of QEMU's semihosting SYS_OPEN: `open(path,
///   flags, mode)` (as `open`, `creat`, `openat`/`openat2` relative to the working directory)
///   with no flag beyond [`SEMIHOSTING_OPEN_FLAGS`]. glibc's internal opens (malloc's
///   `/proc/sys/vm/overcommit_memory`, locale files, `/sys/devices/system/cpu`, loading a
///   library, ...), QEMU's `qemu_open` and the plugin's carry `O_CLOEXEC`, which the guest cannot
///   ask for. An open of QEMU's own without it in a vCPU thread would be blamed on the firmware
///   (none is known); a future QEMU that added `O_CLOEXEC` to SYS_OPEN would leave the firmware's
///   opens refused but unnamed.
/// * An exec, unlink or rename is the guest's: QEMU makes none of its own once the guest runs
///   (SYS_SYSTEM is `system()`, SYS_REMOVE `remove()`, SYS_RENAME `rename()`).
/// * Anything else (mkdir, link, chmod, truncate, ...) is QEMU's: semihosting has no such call.
fn origin(call: Option<Call>, main_thread: bool, args: &[u64; 6], open2_flags: Option<u64>) -> Origin {
    if main_thread {
        return Origin::Qemu;
    }
    let at_cwd = |dirfd: usize| args[dirfd] as i32 == libc::AT_FDCWD;
    let semihosting_flags = |flags: u64| flags & !(SEMIHOSTING_OPEN_FLAGS as u32 as u64) == 0;
    let guest = match call {
        Some(Call::Open { dirfd, flags, .. }) => {
            dirfd.is_none_or(at_cwd) && flags.is_none_or(|f| semihosting_flags(args[f] & 0xffff_ffff))
        }
        Some(Call::Open2 { dirfd, .. }) => at_cwd(dirfd) && open2_flags.is_none_or(semihosting_flags),
        Some(Call::Exec { .. } | Call::Remove { .. } | Call::Rename { .. }) => true,
        Some(Call::Other { .. }) => false,
        // Not a supervised call (the filter sends no other): name it rather than hide it.
        None => true,
    };
    if guest { Origin::Guest } else { Origin::Qemu }
}

fn statement(code: u32, k: u32) -> libc::sock_filter {
    libc::sock_filter { code: code as u16, jt: 0, jf: 0, k }
}

fn jump(code: u32, k: u32, jt: u8, jf: u8) -> libc::sock_filter {
    libc::sock_filter { code: code as u16, jt, jf, k }
}

/// The classic BPF program: wrong ABI → kill, x32 system calls and `io_uring_setup` → `ENOSYS`,
/// supervised calls → user notification, everything else allowed. Written out because the
/// seccomp crates of the Rust ecosystem (seccompiler) have no user-notification action.
pub(super) fn filter() -> Vec<libc::sock_filter> {
    use libc::{BPF_ABS, BPF_JEQ, BPF_JGE, BPF_JMP, BPF_K, BPF_LD, BPF_RET, BPF_W};
    const NR: u32 = 0; // offsetof(struct seccomp_data, nr)
    const ARCH: u32 = 4; // offsetof(struct seccomp_data, arch)
    let calls = supervised();
    let mut program = vec![
        statement(BPF_LD | BPF_W | BPF_ABS, ARCH),
        jump(BPF_JMP | BPF_JEQ | BPF_K, AUDIT_ARCH, 1, 0),
        statement(BPF_RET | BPF_K, libc::SECCOMP_RET_KILL_PROCESS),
        statement(BPF_LD | BPF_W | BPF_ABS, NR),
    ];
    if cfg!(target_arch = "x86_64") {
        // x32 numbers have bit 30 set and the same AUDIT_ARCH: refuse the whole ABI.
        program.push(jump(BPF_JMP | BPF_JGE | BPF_K, 0x4000_0000, 0, 1));
        program.push(statement(BPF_RET | BPF_K, libc::SECCOMP_RET_ERRNO | libc::ENOSYS as u32));
    }
    // io_uring can open files with no system call the filter sees (IORING_OP_OPENAT): no rings.
    // QEMU then monitors its file descriptors with ppoll instead; the guest sees no difference.
    program.push(jump(BPF_JMP | BPF_JEQ | BPF_K, libc::SYS_io_uring_setup as u32, 0, 1));
    program.push(statement(BPF_RET | BPF_K, libc::SECCOMP_RET_ERRNO | libc::ENOSYS as u32));
    for (i, (nr, _, _)) in calls.iter().enumerate() {
        // On a match, skip the remaining comparisons and the `allow` to reach `notify`.
        let skip = u8::try_from(calls.len() - i).expect("fewer than 255 supervised calls");
        program.push(jump(BPF_JMP | BPF_JEQ | BPF_K, *nr as u32, skip, 0));
    }
    program.push(statement(BPF_RET | BPF_K, libc::SECCOMP_RET_ALLOW));
    program.push(statement(BPF_RET | BPF_K, libc::SECCOMP_RET_USER_NOTIF));
    program
}

/// Whether this kernel offers seccomp user notification.
pub(super) fn available() -> bool {
    std::fs::read_to_string("/proc/sys/kernel/seccomp/actions_avail")
        .is_ok_and(|actions| actions.split_whitespace().any(|a| a == "user_notif"))
}

/// In the forked child, between fork and exec: no new privileges, install `program` with a
/// listener, and send the listener over `socket` to the parent's [`Listener::receive`].
///
/// # Safety
/// Runs after fork in a possibly multi-threaded parent: only async-signal-safe system calls, no
/// allocation (`program` is built before the fork).
pub(super) unsafe fn install_and_send(program: &[libc::sock_filter], socket: RawFd) -> std::io::Result<()> {
    let last_error = std::io::Error::last_os_error;
    // SAFETY: plain system calls on memory owned by this frame or by `program`.
    unsafe {
        if libc::prctl(libc::PR_SET_NO_NEW_PRIVS, 1, 0, 0, 0) != 0 {
            return Err(last_error());
        }
        let fprog = libc::sock_fprog { len: program.len() as u16, filter: program.as_ptr().cast_mut() };
        let listener = libc::syscall(
            libc::SYS_seccomp,
            libc::SECCOMP_SET_MODE_FILTER,
            libc::SECCOMP_FILTER_FLAG_NEW_LISTENER,
            &fprog as *const libc::sock_fprog,
        );
        if listener < 0 {
            return Err(last_error());
        }
        let listener = listener as RawFd;
        // One byte of data and the descriptor as SCM_RIGHTS.
        let mut byte = [0u8; 1];
        let mut iov = libc::iovec { iov_base: byte.as_mut_ptr().cast(), iov_len: 1 };
        let mut control = [0u64; 4]; // CMSG_SPACE(sizeof(int)) = 24 bytes, 8-aligned
        let mut msg: libc::msghdr = std::mem::zeroed();
        msg.msg_iov = &mut iov;
        msg.msg_iovlen = 1;
        msg.msg_control = control.as_mut_ptr().cast();
        msg.msg_controllen = libc::CMSG_SPACE(size_of::<RawFd>() as u32) as usize;
        let cmsg = libc::CMSG_FIRSTHDR(&msg);
        (*cmsg).cmsg_level = libc::SOL_SOCKET;
        (*cmsg).cmsg_type = libc::SCM_RIGHTS;
        (*cmsg).cmsg_len = libc::CMSG_LEN(size_of::<RawFd>() as u32) as usize;
        std::ptr::write_unaligned(libc::CMSG_DATA(cmsg).cast::<RawFd>(), listener);
        let sent = libc::sendmsg(socket, &msg, libc::MSG_NOSIGNAL);
        libc::close(listener);
        if sent != 1 {
            return Err(last_error());
        }
    }
    Ok(())
}

/// The runner's end of the filter.
pub(super) struct Listener {
    fd: OwnedFd,
}

/// What the listener refused once the guest ran.
#[derive(Debug, Default)]
pub(super) struct Refusals {
    /// The firmware's attempts ([`Origin::Guest`]), at most `max_events`.
    pub events: Vec<SemihostingEvent>,
    /// The firmware's attempts beyond `max_events`.
    pub dropped: u64,
    /// QEMU's own calls ([`Origin::Qemu`]), described, at most `max_events`: refused too, never
    /// blamed on the firmware.
    pub qemu_calls: Vec<String>,
}

impl Listener {
    /// Receives the listener the child sent with [`install_and_send`]; `None` if the child closed
    /// the socket without sending (it failed before exec, and spawning reports why).
    pub(super) fn receive(socket: &std::os::unix::net::UnixStream) -> Option<Listener> {
        let mut byte = [0u8; 1];
        let mut iov = libc::iovec { iov_base: byte.as_mut_ptr().cast(), iov_len: 1 };
        let mut control = [0u64; 4];
        // SAFETY: recvmsg into buffers owned by this frame; the descriptor is taken only from an
        // SCM_RIGHTS message of the expected length.
        unsafe {
            let mut msg: libc::msghdr = std::mem::zeroed();
            msg.msg_iov = &mut iov;
            msg.msg_iovlen = 1;
            msg.msg_control = control.as_mut_ptr().cast();
            msg.msg_controllen = std::mem::size_of_val(&control);
            loop {
                let got = libc::recvmsg(socket.as_raw_fd(), &mut msg, libc::MSG_CMSG_CLOEXEC);
                if got < 0 && std::io::Error::last_os_error().kind() == std::io::ErrorKind::Interrupted {
                    continue;
                }
                if got != 1 {
                    return None;
                }
                break;
            }
            let cmsg = libc::CMSG_FIRSTHDR(&msg);
            if cmsg.is_null()
                || (*cmsg).cmsg_level != libc::SOL_SOCKET
                || (*cmsg).cmsg_type != libc::SCM_RIGHTS
                || (*cmsg).cmsg_len != libc::CMSG_LEN(size_of::<RawFd>() as u32) as usize
            {
                return None;
            }
            let fd = std::ptr::read_unaligned(libc::CMSG_DATA(cmsg).cast::<RawFd>());
            Some(Listener { fd: OwnedFd::from_raw_fd(fd) })
        }
    }

    /// Answers notifications until every process under the filter has gone: continue while
    /// `guest_started` is false, refuse with `EACCES` after, recording each refusal (up to
    /// `max_events` of each kind) as the firmware's or QEMU's own ([`origin`]).
    pub(super) fn serve(self, guest_started: &AtomicBool, max_events: usize) -> Refusals {
        let calls = supervised();
        let mut refusals = Refusals::default();
        // The first notification is the forked child's exec of QEMU: its thread becomes QEMU's
        // main thread (thread id = process id).
        let mut main_thread = None;
        loop {
            let mut poll = libc::pollfd { fd: self.fd.as_raw_fd(), events: libc::POLLIN, revents: 0 };
            // SAFETY: one pollfd owned by this frame.
            let ready = unsafe { libc::poll(&mut poll, 1, -1) };
            if ready < 0 {
                if std::io::Error::last_os_error().kind() == std::io::ErrorKind::Interrupted {
                    continue;
                }
                break;
            }
            if poll.revents & libc::POLLIN == 0 {
                // POLLHUP: no process is left under the filter.
                break;
            }
            // SAFETY: the kernel requires a zeroed request; both structs are plain data.
            let mut request: libc::seccomp_notif = unsafe { std::mem::zeroed() };
            if unsafe { libc::ioctl(self.fd.as_raw_fd(), libc::SECCOMP_IOCTL_NOTIF_RECV, &mut request) } != 0 {
                // ENOENT: the caller died before we read its request; EINTR: try again.
                continue;
            }
            let mut response: libc::seccomp_notif_resp = unsafe { std::mem::zeroed() };
            response.id = request.id;
            let main_thread = *main_thread.get_or_insert(request.pid) == request.pid;
            if guest_started.load(Ordering::SeqCst) {
                let known = calls.iter().find(|(nr, _, _)| *nr == libc::c_long::from(request.data.nr));
                let call = known.map(|c| c.2);
                let open2_flags = match call {
                    Some(Call::Open2 { how, .. }) => open_how_flags(request.pid as libc::pid_t, request.data.args[how]),
                    _ => None,
                };
                match origin(call, main_thread, &request.data.args, open2_flags) {
                    Origin::Guest if refusals.events.len() < max_events => {
                        refusals.events.push(describe(call, &request));
                    }
                    Origin::Guest => refusals.dropped += 1,
                    Origin::Qemu if refusals.qemu_calls.len() < max_events => {
                        let name = known.map_or("?", |c| c.1);
                        refusals.qemu_calls.push(describe_own(name, call, &request, open2_flags));
                    }
                    Origin::Qemu => {}
                }
                response.error = -libc::EACCES;
            } else {
                response.flags = libc::SECCOMP_USER_NOTIF_FLAG_CONTINUE as u32;
            }
            // SAFETY: a response for the request just received. ENOENT (caller gone) is fine.
            unsafe { libc::ioctl(self.fd.as_raw_fd(), libc::SECCOMP_IOCTL_NOTIF_SEND, &response) };
        }
        refusals
    }
}

/// The event for a refused call, with its arguments read from the caller's memory.
fn describe(call: Option<Call>, request: &libc::seccomp_notif) -> SemihostingEvent {
    let pid = request.pid as libc::pid_t;
    let args = request.data.args;
    let path = |i: usize| quote(&read_string(pid, args[i]));
    let (call, detail) = match call {
        Some(Call::Open { path: p, flags, .. }) => {
            let flags = flags.map_or(libc::O_WRONLY | libc::O_CREAT | libc::O_TRUNC, |f| args[f] as libc::c_int);
            ("SYS_OPEN", format!("{}, {}", path(p), open_mode(flags)))
        }
        Some(Call::Open2 { path: p, how, .. }) => {
            let flags = open_how_flags(pid, args[how]).unwrap_or(0);
            ("SYS_OPEN", format!("{}, {}", path(p), open_mode(flags as libc::c_int)))
        }
        Some(Call::Exec { path: p, argv }) => {
            // system() runs `sh -c <command>`: name the command; anything else in full.
            let argv = read_argv(pid, args[argv]);
            let detail = match argv.as_slice() {
                [_, c, command] if c == b"-c" => quote(command),
                _ => {
                    let mut words = vec![path(p)];
                    words.extend(argv.iter().skip(1).map(|a| quote(a)));
                    words.join(" ")
                }
            };
            ("SYS_SYSTEM", detail)
        }
        Some(Call::Remove { path: p }) => ("SYS_REMOVE", path(p)),
        Some(Call::Rename { from, to }) => ("SYS_RENAME", format!("{}, {}", path(from), path(to))),
        // Never the guest's (see `origin`); kept for completeness.
        Some(Call::Other { path: p }) => ("host call", path(p)),
        None => ("unknown system call", format!("{}", request.data.nr)),
    };
    SemihostingEvent { call: call.into(), detail, refused_with: "EACCES".into() }
}

/// QEMU's own refused call as a line for diagnostics, e.g.
/// ``openat(`/proc/sys/vm/overcommit_memory`, read+cloexec): refused (EACCES)``.
fn describe_own(name: &str, call: Option<Call>, request: &libc::seccomp_notif, open2_flags: Option<u64>) -> String {
    let pid = request.pid as libc::pid_t;
    let args = request.data.args;
    let path = |i: usize| quote(&read_string(pid, args[i]));
    let detail = match call {
        Some(Call::Open { path: p, flags: Some(f), .. }) => {
            format!("{}, {}", path(p), open_mode(args[f] as libc::c_int))
        }
        Some(Call::Open2 { path: p, .. }) => {
            format!("{}, {}", path(p), open_mode(open2_flags.unwrap_or(0) as libc::c_int))
        }
        Some(
            Call::Open { path: p, .. }
            | Call::Exec { path: p, .. }
            | Call::Remove { path: p }
            | Call::Other { path: p },
        ) => path(p),
        Some(Call::Rename { from, to }) => format!("{}, {}", path(from), path(to)),
        None => format!("system call {}", request.data.nr),
    };
    format!("{name}({detail}): refused (EACCES)")
}

/// The flags of the `struct open_how` at `address` in process `pid` (its first field).
fn open_how_flags(pid: libc::pid_t, address: u64) -> Option<u64> {
    read_bytes(pid, address, 8).try_into().ok().map(u64::from_ne_bytes)
}

/// How a host `open` flags word reads in an event, in the terms of semihosting's modes.
pub(super) fn open_mode(flags: libc::c_int) -> String {
    let mut parts = vec![match flags & libc::O_ACCMODE {
        libc::O_WRONLY => "write",
        libc::O_RDWR => "read+write",
        _ => "read",
    }];
    for (bit, name) in [
        (libc::O_CREAT, "create"),
        (libc::O_TRUNC, "truncate"),
        (libc::O_APPEND, "append"),
        (libc::O_EXCL, "exclusive"),
        (libc::O_CLOEXEC, "cloexec"),
    ] {
        if flags & bit != 0 {
            parts.push(name);
        }
    }
    parts.join("+")
}

/// Up to `len` bytes at `address` in process `pid`, fewer where its memory ends.
fn read_bytes(pid: libc::pid_t, address: u64, len: usize) -> Vec<u8> {
    let mut out = Vec::with_capacity(len);
    let mut address = address;
    while out.len() < len {
        // Never cross a page in one read, so a string ending just before unmapped memory reads.
        let to_page_end = 4096 - (address % 4096) as usize;
        let want = (len - out.len()).min(to_page_end);
        let mut buf = vec![0u8; want];
        let local = libc::iovec { iov_base: buf.as_mut_ptr().cast(), iov_len: want };
        let remote = libc::iovec { iov_base: address as *mut libc::c_void, iov_len: want };
        // SAFETY: reads into `buf`, which is `want` bytes long.
        let got = unsafe { libc::process_vm_readv(pid, &local, 1, &remote, 1, 0) };
        if got <= 0 {
            break;
        }
        out.extend_from_slice(&buf[..got as usize]);
        address += got as u64;
    }
    out
}

/// The NUL-terminated string at `address`, at most [`MAX_NAME`] bytes.
fn read_string(pid: libc::pid_t, address: u64) -> Vec<u8> {
    let mut bytes = read_bytes(pid, address, MAX_NAME);
    if let Some(end) = bytes.iter().position(|&b| b == 0) {
        bytes.truncate(end);
    }
    bytes
}

/// The first few entries of a NULL-terminated `char *argv[]`.
fn read_argv(pid: libc::pid_t, address: u64) -> Vec<Vec<u8>> {
    const WORD: usize = size_of::<usize>();
    let table = read_bytes(pid, address, 8 * WORD);
    table
        .chunks_exact(WORD)
        .map(|w| usize::from_ne_bytes(w.try_into().expect("one word")) as u64)
        .take_while(|&p| p != 0)
        .map(|p| read_string(pid, p))
        .collect()
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn open_flags_read_as_semihosting_modes() {
        assert_eq!(open_mode(libc::O_RDONLY), "read");
        assert_eq!(open_mode(libc::O_WRONLY | libc::O_CREAT | libc::O_TRUNC), "write+create+truncate");
        assert_eq!(open_mode(libc::O_RDWR | libc::O_CREAT | libc::O_APPEND), "read+write+create+append");
        assert_eq!(open_mode(libc::O_RDONLY | libc::O_CLOEXEC), "read+cloexec");
    }

    /// The arguments of a call by its name, with `set` filled in.
    fn call(name: &str) -> Option<Call> {
        supervised().into_iter().find(|c| c.1 == name).map(|c| c.2)
    }

    fn args(set: &[(usize, u64)]) -> [u64; 6] {
        let mut args = [0u64; 6];
        for &(i, v) in set {
            args[i] = v;
        }
        args
    }

    const CWD: u64 = libc::AT_FDCWD as u32 as u64;

    /// [`origin`] of a call from a thread other than QEMU's main thread (the vCPU thread).
    fn origin_of(call: Option<Call>, args: &[u64; 6], open2_flags: Option<u64>) -> Origin {
        origin(call, false, args, open2_flags)
    }

    #[test]
    fn nothing_from_qemus_main_thread_is_the_guests() {
        // QEMU 7.2 on SIGTERM, in its main thread (GLib's g_file_get_contents, no O_CLOEXEC):
        // `openat(AT_FDCWD, "/proc/<pid>/cmdline", O_RDONLY)`.
        let cmdline = args(&[(0, CWD), (2, libc::O_RDONLY as u64)]);
        assert_eq!(origin(call("openat"), true, &cmdline, None), Origin::Qemu);
        assert_eq!(origin(call("execve"), true, &args(&[]), None), Origin::Qemu);
        assert_eq!(origin(call("openat"), false, &cmdline, None), Origin::Guest);
    }

    #[test]
    fn glibcs_own_open_is_qemus_and_the_same_path_from_semihosting_is_the_guests() {
        use libc::{O_CLOEXEC, O_CREAT, O_RDONLY, O_RDWR, O_TRUNC, O_WRONLY};
        // strace of QEMU 7.2 running a newlib firmware under the profiling plugin: malloc in the
        // vCPU thread, `openat(AT_FDCWD, "/proc/sys/vm/overcommit_memory", O_RDONLY|O_CLOEXEC)`.
        let malloc = args(&[(0, CWD), (2, (O_RDONLY | O_CLOEXEC) as u64)]);
        assert_eq!(origin_of(call("openat"), &malloc, None), Origin::Qemu);
        // The firmware's SYS_OPEN of the same path, mode "r": `openat(AT_FDCWD, path, O_RDONLY)`.
        let guest = args(&[(0, CWD), (2, O_RDONLY as u64)]);
        assert_eq!(origin_of(call("openat"), &guest, None), Origin::Guest);
        // Every mode of the semihosting open table: r, r+, w, w+, a, a+ (QEMU drops O_APPEND).
        let modes = [O_RDONLY, O_RDWR, O_WRONLY | O_CREAT | O_TRUNC, O_RDWR | O_CREAT | O_TRUNC, O_WRONLY | O_CREAT];
        for flags in modes.into_iter().chain([O_RDWR | O_CREAT, O_WRONLY | O_CREAT | libc::O_APPEND]) {
            assert_eq!(
                origin_of(call("openat"), &args(&[(0, CWD), (2, flags as u64)]), None),
                Origin::Guest,
                "{flags:o}"
            );
            assert_eq!(
                origin_of(call("openat"), &args(&[(0, CWD), (2, (flags | O_CLOEXEC) as u64)]), None),
                Origin::Qemu
            );
        }
        // glibc may add O_LARGEFILE; an int argument's upper register half is not the flags.
        let large = (O_RDONLY | KERNEL_O_LARGEFILE) as u64 | 0xffff_ffff_0000_0000;
        assert_eq!(origin_of(call("openat"), &args(&[(0, CWD), (2, large)]), None), Origin::Guest);
        // Relative to a directory descriptor: never `open(path, ...)`.
        assert_eq!(origin_of(call("openat"), &args(&[(0, 3), (2, O_RDONLY as u64)]), None), Origin::Qemu);
        // openat2 by its `open_how` flags.
        assert_eq!(origin_of(call("openat2"), &args(&[(0, CWD)]), Some(O_RDONLY as u64)), Origin::Guest);
        assert_eq!(origin_of(call("openat2"), &args(&[(0, CWD)]), Some((O_RDONLY | O_CLOEXEC) as u64)), Origin::Qemu);
    }

    #[test]
    fn exec_remove_and_rename_are_the_guests_other_path_calls_qemus() {
        for name in ["execve", "execveat", "unlinkat", "renameat", "renameat2"] {
            assert_eq!(origin_of(call(name), &args(&[(0, CWD)]), None), Origin::Guest, "{name}");
        }
        for name in ["mkdirat", "linkat", "symlinkat", "truncate", "fchmodat", "fchownat"] {
            assert_eq!(origin_of(call(name), &args(&[(0, CWD)]), None), Origin::Qemu, "{name}");
        }
        #[cfg(target_arch = "x86_64")]
        {
            let o_rdonly = args(&[(1, libc::O_RDONLY as u64)]);
            assert_eq!(origin_of(call("open"), &o_rdonly, None), Origin::Guest);
            let cloexec = args(&[(1, (libc::O_RDONLY | libc::O_CLOEXEC) as u64)]);
            assert_eq!(origin_of(call("open"), &cloexec, None), Origin::Qemu);
            assert_eq!(origin_of(call("creat"), &args(&[]), None), Origin::Guest);
            for name in ["unlink", "rmdir", "rename"] {
                assert_eq!(origin_of(call(name), &args(&[]), None), Origin::Guest, "{name}");
            }
            assert_eq!(origin_of(call("mkdir"), &args(&[]), None), Origin::Qemu);
        }
    }

    #[test]
    fn the_program_ends_in_allow_then_notify_and_every_match_reaches_notify() {
        let program = filter();
        let n = program.len();
        assert_eq!(program[n - 2].k, libc::SECCOMP_RET_ALLOW);
        assert_eq!(program[n - 1].k, libc::SECCOMP_RET_USER_NOTIF);
        let calls = supervised();
        let first = n - 2 - calls.len();
        // Just before the supervised calls: io_uring_setup refused outright.
        assert_eq!(program[first - 2].k, libc::SYS_io_uring_setup as u32);
        assert_eq!(program[first - 1].k, libc::SECCOMP_RET_ERRNO | libc::ENOSYS as u32);
        for (i, (nr, _, _)) in calls.iter().enumerate() {
            let at = first + i;
            assert_eq!(program[at].k, *nr as u32);
            assert_eq!(at + 1 + usize::from(program[at].jt), n - 1, "call {nr}");
        }
    }

    #[test]
    fn strings_are_read_from_another_process_up_to_the_nul() {
        // Our own process stands in for QEMU: process_vm_readv works on it too.
        let text = b"/etc/hostname\0garbage";
        let pid = std::process::id() as libc::pid_t;
        assert_eq!(read_string(pid, text.as_ptr() as u64), b"/etc/hostname");
        let words = [c"sh".as_ptr() as usize, c"-c".as_ptr() as usize, c"touch /x".as_ptr() as usize, 0];
        assert_eq!(read_argv(pid, words.as_ptr() as u64), [&b"sh"[..], b"-c", b"touch /x"]);
        assert!(read_string(pid, 0).is_empty());
    }
}
