//! Starts the guest through QEMU's QMP monitor: QEMU runs with `-S` (CPU held at reset) and a
//! QMP monitor on an inherited socket. Its greeting comes once initialisation is over (libraries,
//! ELF and plugin loaded); the runner then switches the seccomp listener to refusing and sends
//! `cont`. Virtual time does not move while the CPU is held, so a run counts exactly what a run
//! without `-S` counts. At a timeout, [`quit`] can end QEMU in order, so that its exit handlers
//! (the TCG plugin's) run.

use std::io::{BufRead, BufReader, Lines, Write};
use std::os::unix::net::UnixStream;
use std::sync::atomic::{AtomicBool, Ordering};

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

/// Runs the QMP conversation, sets `guest_started` just before `cont`, then reads (and drops)
/// QMP events until QEMU closes the socket, so that a reset loop's events cannot fill it.
/// An error means QEMU closed the link or answered unexpectedly before the guest ran.
pub(super) fn start_guest(stream: UnixStream, guest_started: &AtomicBool) -> Result<(), String> {
    let writer = stream.try_clone().map_err(|e| format!("QMP socket: {e}"))?;
    let mut monitor = Monitor { lines: BufReader::new(stream).lines(), writer };
    monitor.expect("QMP", "its greeting")?;
    monitor.execute("qmp_capabilities")?;
    monitor.expect("return", "qmp_capabilities")?;
    guest_started.store(true, Ordering::SeqCst);
    monitor.execute("cont")?;
    monitor.expect("return", "cont")?;
    while let Ok(Some(_)) = monitor.next() {}
    Ok(())
}

/// Asks QEMU to quit (QMP `quit`), on a second handle of the monitor socket while
/// [`start_guest`] reads the replies. QEMU accepts it once the guest has been started (the
/// capabilities are negotiated by then); before that it refuses, and the runner's grace ends in
/// a kill.
pub(super) fn quit(mut monitor: UnixStream) {
    let _ = monitor.write_all(b"{\"execute\":\"quit\"}\n");
}
