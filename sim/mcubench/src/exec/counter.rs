//! The DWT cycle counter made live (`cycle-counter: estimated`): every load of `DWT_CYCCNT`
//! returns the estimated cycles, as the board's counter would, so firmware that prints its own
//! measurements prints the estimate and a delay on the counter ends.
//!
//! QEMU does not model the counter (it reads 0), and a TCG plugin of the APIs Debian packages
//! (QEMU 7.2, 10.0) cannot write registers. So the runner drives QEMU's gdbstub, on an inherited
//! socket: a breakpoint on each load of the counter that the code scan finds
//! ([`crate::analyze::debug_units::cycle_counter_loads`]); at each stop it single-steps the load,
//! reads what the plugin wrote for it (`counter=`, [`mcubench_wire::CounterValue`]) and puts it in
//! the load's register. The breakpoints do not change what the plugin counts (a stepped load is
//! one instruction, counted once).
//!
//! Limits: loads the scan does not see (an address computed at run time, `ldrd`/`ldm`) still read
//! 0; each read stops QEMU twice, a few hundred microseconds, so a long delay polled on the counter
//! is slow (about 0.8 ms a read here); QEMU steps with interrupts held off, so the load runs before
//! any interrupt that is pending at it.

use std::io::{BufReader, Read, Write};
use std::os::fd::AsRawFd;
use std::os::unix::net::UnixStream;
use std::path::Path;
use std::sync::{Arc, Mutex};

use mcubench_wire::{COUNTER_RECORD_LEN, CounterValue};

/// A load of the counter: the instruction's address and the register it loads.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub struct CounterLoad {
    pub pc: u32,
    pub rt: u8,
}

/// What a run with the live counter needs: the loads to stop at, and the plugin's `counter=` file.
#[derive(Debug, Clone, Copy)]
pub struct LiveCounter<'a> {
    pub loads: &'a [CounterLoad],
    pub file: &'a Path,
}

/// The chardev id of the gdbstub's socket.
const CHARDEV_ID: &str = "mcubench-gdb";

/// The gdbstub's socket: QEMU's end is inherited, the runner keeps the other ([`spawn`]).
pub(crate) struct GdbLink {
    ours: UnixStream,
    theirs: UnixStream,
}

impl GdbLink {
    pub(crate) fn new() -> std::io::Result<GdbLink> {
        let (ours, theirs) = UnixStream::pair()?;
        Ok(GdbLink { ours, theirs })
    }

    /// QEMU's descriptor, to inherit (clear its close-on-exec between fork and exec).
    pub(crate) fn fd(&self) -> i32 {
        self.theirs.as_raw_fd()
    }

    /// QEMU's arguments: the gdbstub on the inherited socket.
    pub(crate) fn args(&self) -> [String; 4] {
        [
            "-chardev".into(),
            format!("socket,id={CHARDEV_ID},fd={}", self.fd()),
            "-gdb".into(),
            format!("chardev:{CHARDEV_ID}"),
        ]
    }
}

/// Whether the runner has stopped the guest for good (the timeout's look at the core): the
/// server then leaves it stopped. Held while the server handles a stop, so that the guest is
/// never resumed after the timeout stopped it.
pub(crate) type Halt = Arc<Mutex<bool>>;

/// The QMP thread's side of starting a contained run with the link: the link's set-up result,
/// and the word to start the guest.
pub(crate) type LinkStart = (std::sync::mpsc::Receiver<Result<(), String>>, std::sync::mpsc::Sender<()>);

/// What the link did in a run: the reads it served, or why it stopped serving them.
pub type Service = Result<u64, String>;

/// The remote protocol's framing: `$payload#checksum`, each packet acknowledged with `+`.
struct Remote {
    reader: BufReader<UnixStream>,
    writer: UnixStream,
}

impl Remote {
    fn send(&mut self, payload: &str) -> Result<(), String> {
        let sum = payload.bytes().fold(0u8, |s, b| s.wrapping_add(b));
        // One write: QEMU is stopped while the runner talks to it, twice per load served.
        self.writer.write_all(format!("${payload}#{sum:02x}").as_bytes()).map_err(|e| format!("gdbstub: {e}"))
    }

    /// The next packet's payload; `None` at the end of the link (QEMU exited).
    fn receive(&mut self) -> Result<Option<String>, String> {
        let mut byte = [0u8];
        loop {
            match self.reader.read(&mut byte) {
                Ok(0) | Err(_) => return Ok(None),
                Ok(_) if byte[0] == b'$' => break,
                Ok(_) => {} // `+` acknowledgements
            }
        }
        let mut payload = Vec::new();
        loop {
            match self.reader.read(&mut byte) {
                Ok(0) | Err(_) => return Ok(None),
                Ok(_) if byte[0] == b'#' => break,
                Ok(_) => payload.push(byte[0]),
            }
        }
        let mut sum = [0u8; 2];
        if self.reader.read_exact(&mut sum).is_err() {
            return Ok(None);
        }
        // Not an error when it fails: after QEMU's last packet (the exit's `W`) the run may have
        // ended and its end of the link been closed before this thread acknowledges; a request
        // that needs the link says so itself.
        let _ = self.writer.write_all(b"+");
        String::from_utf8(payload).map(Some).map_err(|_| "gdbstub: a reply that is not text".to_string())
    }

    fn ask(&mut self, payload: &str) -> Result<String, String> {
        self.send(payload)?;
        self.receive()?.ok_or_else(|| format!("gdbstub: QEMU closed the link after `{payload}`"))
    }
}

/// Serves `live` on a thread of its own, over `link`: sets the link up (QEMU held at reset),
/// says how that went on `ready`, waits for `go` when given (a contained run starts the guest only
/// once the runner is ready for its semihosting calls), then resumes the guest and serves its
/// loads until QEMU ends. Returns the thread and QEMU's end of the link, to drop once QEMU has it.
pub(crate) fn spawn(
    link: GdbLink,
    live: LiveCounter<'_>,
    halt: Halt,
    ready: Option<std::sync::mpsc::Sender<Result<(), String>>>,
    go: Option<std::sync::mpsc::Receiver<()>>,
) -> (std::thread::JoinHandle<Service>, UnixStream) {
    let (ours, theirs) = (link.ours, link.theirs);
    let (loads, file) = (live.loads.to_vec(), live.file.to_path_buf());
    let thread = std::thread::spawn(move || {
        let server = prepare(ours, loads);
        if let Some(ready) = ready {
            let _ = ready.send(server.as_ref().map(|_| ()).map_err(Clone::clone));
        }
        let server = server?;
        if go.is_some_and(|go| go.recv().is_err()) {
            return Ok(0);
        }
        server.serve(&file, &halt)
    });
    (thread, theirs)
}

/// The reads served by the thread of [`spawn`], once QEMU has gone (`theirs`, QEMU's end of the
/// link, is dropped first so that the thread sees the link end).
pub(crate) fn join(server: Option<(std::thread::JoinHandle<Service>, UnixStream)>) -> Option<Service> {
    server.map(|(thread, theirs)| {
        drop(theirs);
        thread.join().unwrap_or_else(|_| Err("the cycle counter's thread panicked".into()))
    })
}

/// Sets up the link (QEMU held at reset): reads the target description, which QEMU wants read
/// before it reads or writes single registers, and puts a breakpoint on each load.
fn prepare(stream: UnixStream, loads: Vec<CounterLoad>) -> Result<Server, String> {
    let writer = stream.try_clone().map_err(|e| format!("gdbstub: {e}"))?;
    let mut remote = Remote { reader: BufReader::new(stream), writer };
    remote.ask("qSupported:xmlRegisters=arm")?;
    let mut offset = 0;
    loop {
        let part = remote.ask(&format!("qXfer:features:read:target.xml:{offset:x},fff"))?;
        match part.as_bytes().first() {
            Some(b'm') => offset += part.len() - 1,
            Some(b'l') => break,
            _ => return Err(format!("gdbstub: no target description (`{part}`)")),
        }
    }
    for load in &loads {
        let reply = remote.ask(&format!("Z0,{:x},2", load.pc))?;
        if reply != "OK" {
            return Err(format!("gdbstub: no breakpoint at 0x{:08x} (`{reply}`)", load.pc));
        }
    }
    Ok(Server { remote, loads, values: None })
}

/// The prepared link, serving the loads while the guest runs.
struct Server {
    remote: Remote,
    loads: Vec<CounterLoad>,
    /// The plugin's `counter=` file, opened at the first stop (the plugin creates it at load).
    values: Option<std::fs::File>,
}

impl Server {
    /// Resumes the guest (QEMU 10.0, unlike 7.2, sends stops only to a link that resumed it), then
    /// serves every stop at a load until QEMU ends (or `halt`). Returns the reads served.
    fn serve(mut self, file: &Path, halt: &Halt) -> Result<u64, String> {
        let mut served = 0u64;
        let mut stop = self.remote.ask("c")?;
        loop {
            // `T05`: a breakpoint; anything else (the timeout's stop, the exit) ends the service.
            if !stop.starts_with("T05") {
                return Ok(served);
            }
            let halted = halt.lock().unwrap_or_else(|p| p.into_inner());
            if *halted {
                return Ok(served);
            }
            let stepped = self.remote.ask("s")?;
            if !stepped.starts_with('T') {
                return Ok(served);
            }
            if let Some(read) = self.read_value(file)?
                && read.reads > served
                && let Some(load) = self.loads.iter().find(|l| l.pc == read.pc)
            {
                served = read.reads;
                let reply = self.remote.ask(&format!("P{:x}={}", load.rt, hex_le(read.value)))?;
                if reply != "OK" {
                    return Err(format!("gdbstub: cannot set r{} at 0x{:08x} (`{reply}`)", load.rt, load.pc));
                }
            }
            self.remote.send("c")?;
            drop(halted);
            stop = self.next()?;
        }
    }

    /// The plugin's record of the last read; `None` before the first.
    fn read_value(&mut self, file: &Path) -> Result<Option<CounterValue>, String> {
        use std::os::unix::fs::FileExt;
        let f = match &mut self.values {
            Some(f) => f,
            none => none.insert(std::fs::File::open(file).map_err(|e| format!("cannot read {}: {e}", file.display()))?),
        };
        let mut b = [0u8; COUNTER_RECORD_LEN];
        Ok(f.read_exact_at(&mut b, 0).ok().and_then(|()| CounterValue::from_bytes(&b)))
    }

    /// The next stop reply (`None`, the end of the link, as an exit).
    fn next(&mut self) -> Result<String, String> {
        Ok(self.remote.receive()?.unwrap_or_else(|| "W00".into()))
    }
}

fn hex_le(v: u32) -> String {
    v.to_le_bytes().iter().map(|b| format!("{b:02x}")).collect()
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn values_go_to_the_register_little_endian() {
        assert_eq!(hex_le(0x0000_0da9), "a90d0000");
        assert_eq!(hex_le(u32::MAX), "ffffffff");
    }

    #[test]
    fn packets_are_framed_with_their_checksum_and_acknowledged() {
        let (a, b) = UnixStream::pair().unwrap();
        let mut remote = Remote { reader: BufReader::new(a.try_clone().unwrap()), writer: a };
        remote.send("c").unwrap();
        let mut peer = b;
        let mut got = [0u8; 5];
        peer.read_exact(&mut got).unwrap();
        assert_eq!(&got, b"$c#63");
        peer.write_all(b"+$T05thread:01;#07").unwrap();
        assert_eq!(remote.receive().unwrap().as_deref(), Some("T05thread:01;"));
        let mut ack = [0u8];
        peer.read_exact(&mut ack).unwrap();
        assert_eq!(&ack, b"+");
        drop(peer);
        assert_eq!(remote.receive().unwrap(), None);
    }

    /// QEMU's last packet (the exit) may be read after the run ended and closed the link: its
    /// acknowledgement then cannot be sent, which is no error.
    #[test]
    fn the_last_packet_is_read_after_the_link_closed() {
        let (a, mut peer) = UnixStream::pair().unwrap();
        let mut remote = Remote { reader: BufReader::new(a.try_clone().unwrap()), writer: a };
        peer.write_all(b"$W00#b7").unwrap();
        drop(peer);
        assert_eq!(remote.receive().unwrap().as_deref(), Some("W00"));
        assert_eq!(remote.receive().unwrap(), None);
    }
}
