//! Starts the guest through QEMU's QMP monitor: QEMU runs with `-S` (CPU held at reset) and a
//! QMP monitor on an inherited socket. Its greeting comes once initialisation is over (libraries,
//! ELF and plugin loaded); the runner then switches the seccomp listener to refusing and sends
//! `cont`. Virtual time does not move while the CPU is held, so a run counts exactly what a run
//! without `-S` counts. At a timeout, [`core_state`] stops the CPU and asks the monitor what it
//! was doing, and [`quit`] can end QEMU in order, so that its exit handlers (the TCG plugin's)
//! run.

use std::io::{BufRead, BufReader, Lines, Write};
use std::os::unix::net::UnixStream;
use std::sync::atomic::{AtomicBool, Ordering};
use std::sync::mpsc::{Receiver, Sender};

struct Monitor {
    lines: Lines<BufReader<UnixStream>>,
    writer: UnixStream,
}

impl Monitor {
    /// The next message, `None` once QEMU has closed the socket.
    fn next(&mut self) -> Result<Option<serde_json::Value>, String> {
        match self.lines.next() {
            None => Ok(None),
            Some(Err(e)) => Err(format!("reading QEMU's QMP monitor: {e}")),
            Some(Ok(line)) => {
                serde_json::from_str(&line).map(Some).map_err(|e| format!("QEMU's QMP monitor sent `{line}`: {e}"))
            }
        }
    }

    /// Waits for the message with `key` (`QMP` for the greeting, `return` for a reply), skipping
    /// asynchronous events.
    fn expect(&mut self, key: &str, what: &str) -> Result<(), String> {
        loop {
            let message = self.next()?.ok_or_else(|| format!("QEMU closed its QMP monitor before {what}"))?;
            if message.get(key).is_some() {
                return Ok(());
            }
            if let Some(error) = message.get("error") {
                return Err(format!("QEMU refused {what}: {error}"));
            }
        }
    }

    fn execute(&mut self, command: &str) -> Result<(), String> {
        writeln!(self.writer, "{{\"execute\":\"{command}\"}}").map_err(|e| format!("sending `{command}` to QEMU: {e}"))
    }
}

/// What the QMP conversation learnt, for the runner's other threads.
#[derive(Default)]
pub(super) struct Progress {
    /// Set just before `cont`.
    pub guest_started: AtomicBool,
    /// Set once QEMU has answered `cont`: the guest runs, the monitor takes commands.
    pub running: AtomicBool,
    /// QEMU shut down because the firmware asked for a system reset (event `SHUTDOWN`, reason
    /// `guest-reset`, under `-no-reboot`).
    pub reset: AtomicBool,
}

/// Runs the QMP conversation (setting `progress` as it goes; with `gdb`, the live cycle counter's
/// link, it waits for the link to be ready and lets it start the guest), then reads QMP messages
/// until QEMU closes the socket, so that a reset loop's events cannot fill it: events are dropped but for
/// a reset's `SHUTDOWN`, replies to commands with an `id` go to `replies` ([`core_state`] waits
/// for them, and is asked only once the guest runs: before that, its commands would cross the
/// negotiation). An error means QEMU closed the link or answered unexpectedly before the guest
/// ran.
pub(super) fn start_guest(
    stream: UnixStream,
    progress: &Progress,
    replies: &Sender<serde_json::Value>,
    gdb: Option<crate::exec::counter::LinkStart>,
) -> Result<(), String> {
    let writer = stream.try_clone().map_err(|e| format!("QMP socket: {e}"))?;
    let mut monitor = Monitor { lines: BufReader::new(stream).lines(), writer };
    monitor.expect("QMP", "its greeting")?;
    monitor.execute("qmp_capabilities")?;
    monitor.expect("return", "qmp_capabilities")?;
    match gdb {
        // The live cycle counter: its breakpoints are set before the guest runs, and its gdbstub
        // link starts the guest (QEMU 10.0, unlike 7.2, sends stops only to a link that resumed it).
        Some((ready, go)) => {
            ready.recv().map_err(|_| "the cycle counter's thread ended".to_string())??;
            progress.guest_started.store(true, Ordering::SeqCst);
            go.send(()).map_err(|_| "the cycle counter's thread ended".to_string())?;
        }
        None => {
            progress.guest_started.store(true, Ordering::SeqCst);
            monitor.execute("cont")?;
            monitor.expect("return", "cont")?;
        }
    }
    progress.running.store(true, Ordering::SeqCst);
    while let Ok(Some(message)) = monitor.next() {
        if message.get("id").is_some() {
            let _ = replies.send(message);
        } else if message["event"] == "SHUTDOWN" && message["data"]["reason"] == "guest-reset" {
            progress.reset.store(true, Ordering::SeqCst);
        }
    }
    Ok(())
}

/// At a timeout: stops the CPU, then asks the human monitor for the registers (`info
/// registers`), the fault status registers CFSR and HFSR (`x /2wx 0xe000ed28`), the 64
/// words from SP, where an exception stacks its frame (`x /64wx <SP>`), and the memory map (`info
/// mtree -f`); their text, one after the
/// other, or `None` when QEMU does not answer within a second (the guest never started, QEMU
/// is gone).
pub(super) fn core_state(mut writer: UnixStream, replies: &Receiver<serde_json::Value>) -> Option<String> {
    let mut ask = |id: u32, execute: &str, command: Option<&str>| -> Option<String> {
        let mut message = serde_json::json!({ "execute": execute, "id": id });
        if let Some(command) = command {
            message["arguments"] = serde_json::json!({ "command-line": command });
        }
        writeln!(writer, "{message}").ok()?;
        loop {
            let reply = replies.recv_timeout(std::time::Duration::from_secs(1)).ok()?;
            if reply["id"] == id {
                return Some(reply.get("return")?.as_str().unwrap_or_default().to_string());
            }
        }
    };
    ask(1, "stop", None)?;
    let registers = ask(2, "human-monitor-command", Some("info registers"))?;
    let status = ask(3, "human-monitor-command", Some("x /2wx 0xe000ed28")).unwrap_or_default();
    let sp =
        registers.split_whitespace().find_map(|w| w.strip_prefix("R13=")).and_then(|h| u32::from_str_radix(h, 16).ok());
    // 64 words: the exception frame is at SP, or above what a handler pushed before it looped.
    let frame =
        sp.and_then(|sp| ask(4, "human-monitor-command", Some(&format!("x /64wx 0x{sp:08x}")))).unwrap_or_default();
    // The memory map as this QEMU models the board: which devices it has, which it leaves out.
    let map = ask(5, "human-monitor-command", Some("info mtree -f")).unwrap_or_default();
    Some(format!("{registers}\n{status}\n{frame}\n{map}"))
}

/// Asks QEMU to quit (QMP `quit`), on a second handle of the monitor socket while
/// [`start_guest`] reads the replies. QEMU accepts it once the guest has been started (the
/// capabilities are negotiated by then); before that it refuses, and the runner's grace ends in
/// a kill.
pub(super) fn quit(mut monitor: UnixStream) {
    let _ = monitor.write_all(b"{\"execute\":\"quit\"}\n");
}
