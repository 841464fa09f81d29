//! Running firmware: one [`execute`] for every QEMU run, contained or not. [`qemu`] builds the
//! command line and supervises the process (timeout, output cap, process group); [`contain`]
//! wraps it for untrusted firmware; [`plugin`] finds the TCG plugin and reads its results;
//! [`version`] says which QEMU runs and which plugin build it needs.

pub mod contain;
pub mod counter;
pub mod plugin;
pub mod qemu;
pub mod scratch;
pub mod version;

use std::path::Path;
use std::time::Duration;

use crate::config::board::Board;
pub use contain::SemihostingEvent;
pub use counter::{CounterLoad, LiveCounter};
pub use qemu::{ProcessEnd, QEMU, QemuError, QemuRun};

/// One run to make: which ELF on which board, with what limits.
#[derive(Debug, Clone, Copy)]
pub struct Launch<'a> {
    /// The QEMU executable ([`version::program`]: `MCUBENCH_QEMU`, else [`QEMU`] on PATH, unless
    /// a caller gives another).
    pub qemu: &'a Path,
    pub board: &'a Board,
    pub elf: &'a Path,
    /// Wall-clock limit; QEMU's whole process group is killed past it.
    pub timeout: Duration,
    /// The `-plugin` value (see [`plugin`]), if the TCG plugin is to be loaded.
    pub plugin: Option<&'a str>,
    /// Contained (the default; see [`contain`]) or native semihosting for trusted firmware.
    pub contain: bool,
    /// At the timeout, ask QEMU to quit (SIGTERM: it stops the guest and runs its exit handlers,
    /// so the TCG plugin writes what it has) and kill its process group only if it has not exited
    /// [`QUIT_GRACE`] later. Off by default: a timed-out run is killed at once.
    pub quit_on_timeout: bool,
    /// Make the DWT cycle counter live (see [`counter`]): needs the plugin with `counter=`.
    pub counter: Option<LiveCounter<'a>>,
}

/// How long QEMU may take to quit at the timeout when [`Launch::quit_on_timeout`] asks it to:
/// enough for the plugin to write a large profile; a guest stuck in a semihosting call that never
/// returns (SYS_READC) keeps QEMU from quitting, and it is killed after this.
pub const QUIT_GRACE: Duration = Duration::from_secs(5);

impl<'a> Launch<'a> {
    /// A contained run of `elf` on `board` without the plugin.
    pub fn new(board: &'a Board, elf: &'a Path, timeout: Duration) -> Launch<'a> {
        Launch {
            qemu: version::program(),
            board,
            elf,
            timeout,
            plugin: None,
            contain: true,
            quit_on_timeout: false,
            counter: None,
        }
    }

    pub fn with_plugin(self, plugin: Option<&'a str>) -> Launch<'a> {
        Launch { plugin, ..self }
    }

    pub fn contained(self, contain: bool) -> Launch<'a> {
        Launch { contain, ..self }
    }

    pub fn with_qemu(self, qemu: &'a Path) -> Launch<'a> {
        Launch { qemu, ..self }
    }

    pub fn quit_on_timeout(self, quit_on_timeout: bool) -> Launch<'a> {
        Launch { quit_on_timeout, ..self }
    }

    pub fn with_counter(self, counter: Option<LiveCounter<'a>>) -> Launch<'a> {
        Launch { counter, ..self }
    }

    /// The grace QEMU gets to quit at the timeout, if it is asked to.
    pub(crate) fn quit_grace(&self) -> Option<Duration> {
        self.quit_on_timeout.then_some(QUIT_GRACE)
    }
}

/// What happened in one run: QEMU's end and output, and (contained) what the firmware tried to
/// reach on the host.
#[derive(Debug, Clone)]
pub struct Execution {
    pub run: QemuRun,
    /// Refused host accesses, in order (at most [`contain::MAX_EVENTS`]); none when uncontained.
    pub events: Vec<SemihostingEvent>,
    /// Refused accesses beyond [`contain::MAX_EVENTS`], counted only.
    pub events_dropped: u64,
    /// QEMU's own supervised system calls after the guest started (for example glibc's malloc
    /// reading `/proc/sys/vm/overcommit_memory`), described, at most [`contain::MAX_EVENTS`]:
    /// refused like the firmware's, never blamed on it, kept for diagnostics. None when
    /// uncontained.
    pub qemu_calls: Vec<String>,
    /// Why QEMU never started the guest, when it stayed alive without doing so (a QMP failure);
    /// `None` when the guest started or QEMU ended by itself first (its stderr says why).
    pub start_error: Option<String>,
    /// With the live cycle counter: the reads it served, or why it stopped serving them.
    pub counter: Option<counter::Service>,
}

/// Runs `launch` and collects what happened, without judging it.
pub fn execute(launch: &Launch<'_>) -> Result<Execution, QemuError> {
    if launch.contain {
        contain::run_contained(launch)
    } else {
        let (run, counter) = qemu::run_uncontained(launch)?;
        Ok(Execution { run, events: Vec::new(), events_dropped: 0, qemu_calls: Vec::new(), start_error: None, counter })
    }
}
