//! The run trace (`trace=`): what a run did that the cycle model prices, so that the host can
//! price the same run again with other model parameters without running QEMU again
//! (`mcubench calibrate`). The plugin writes it while it prices the run live; the host replays it
//! through the same run-time pricer (`mcubench_timing::run`), so a replay with the traced run's
//! parameters gives its cycles exactly, and a replay with other parameters gives what a live run
//! with those parameters would.
//!
//! What it holds, in the order things happened:
//! * each translation block as QEMU translated it (its start, its instruction bytes and whether
//!   it starts an exception handler), numbered in translation order;
//! * each execution of a translated block (its number), and whether a function-region snapshot
//!   was taken in its exec callback (before the block's own cycles are added);
//! * each data load the memory system may price: loads from a flash region with their address
//!   and size, and a mark for a load from anywhere else (runs of them collapsed: what the memory
//!   system does with one it does with several);
//! * each marker-store snapshot, with the index of the storing instruction in the running block;
//! * each device-register access that stopped the running block before its end
//!   (`cpu_io_recompile`, see `mcubench_timing::run::Pricer::abandon`), with the index of the
//!   accessing instruction, and each read and write of the DWT cycle counter, with its address;
//! * at the end, every completed region activation: marker region or function region, its id
//!   and the numbers of its first and last snapshots (snapshots are numbered in order, both kinds
//!   together).
//!
//! Format: the line [`TRACE_HEADER`], then records of LEB128 numbers. A record's first number
//! `v` holds its kind in the low 3 bits ([`Event`]); exec records, the most frequent by far,
//! hold the block number in the rest, so a run costs about two bytes per executed block.

use std::io::Write;

/// The first line of a trace file; bumped when the format changes.
pub const TRACE_HEADER: &str = "mcubench-trace 4\n";

const EXEC: u64 = 0;
const EXEC_SNAP: u64 = 1;
const BLOCK: u64 = 2;
const LOAD: u64 = 3;
// 4: loads outside the flash in trace format 1 (they change nothing, so format 2 has none);
// device accesses since format 3 (writes of the cycle counter since format 4).
const ACCESS: u64 = 4;
const MARKER_SNAP: u64 = 5;
const ACTIVATION: u64 = 6;
const END: u64 = 7;

/// One record of a trace.
#[derive(Debug, Clone, PartialEq, Eq)]
pub enum Event<'a> {
    /// A translated block; its number is the count of `Block` records before it.
    Block { start: u32, handler: bool, bytes: &'a [u8] },
    /// Block `id` ran; `snapshot`: a function-region snapshot was taken in its exec callback.
    Exec { id: u32, snapshot: bool },
    /// A data load of `size` bytes at `addr`, inside a flash region.
    Load { addr: u32, size: u32 },
    /// A marker store by instruction `index` of the running block: a snapshot.
    MarkerSnapshot { index: u32 },
    /// A device-register access: `stopped`, the index of the accessing instruction in the
    /// running block when the block stopped there before its end; `read` or `write`, the
    /// instruction's address when it read or wrote the DWT cycle counter.
    Access { stopped: Option<u32>, read: Option<u32>, write: Option<u32> },
    /// A completed activation of region `id` (`function`: a function region, else a marker
    /// region) from snapshot `first` to snapshot `last`.
    Activation { function: bool, id: u32, first: u64, last: u64 },
    /// The run ended (the plugin's exit callback ran): a trace without it is incomplete.
    End,
}

fn put(buf: &mut Vec<u8>, mut v: u64) {
    loop {
        let byte = (v & 0x7f) as u8;
        v >>= 7;
        if v == 0 {
            buf.push(byte);
            return;
        }
        buf.push(byte | 0x80);
    }
}

/// Appends `event` to `buf` in the trace encoding.
pub fn encode(buf: &mut Vec<u8>, event: &Event<'_>) {
    match *event {
        Event::Exec { id, snapshot } => put(buf, u64::from(id) << 3 | if snapshot { EXEC_SNAP } else { EXEC }),
        Event::Block { start, handler, bytes } => {
            put(buf, BLOCK);
            put(buf, u64::from(start));
            put(buf, u64::from(handler));
            put(buf, bytes.len() as u64);
            buf.extend_from_slice(bytes);
        }
        Event::Load { addr, size } => {
            put(buf, u64::from(size) << 3 | LOAD);
            put(buf, u64::from(addr));
        }
        Event::MarkerSnapshot { index } => put(buf, u64::from(index) << 3 | MARKER_SNAP),
        Event::Access { stopped, read, write } => {
            let flags = u64::from(stopped.is_some()) | u64::from(read.is_some()) << 1 | u64::from(write.is_some()) << 2;
            put(buf, flags << 3 | ACCESS);
            for n in [stopped, read, write].into_iter().flatten() {
                put(buf, u64::from(n));
            }
        }
        Event::Activation { function, id, first, last } => {
            put(buf, u64::from(function) << 3 | ACTIVATION);
            put(buf, u64::from(id));
            put(buf, first);
            put(buf, last);
        }
        Event::End => put(buf, END),
    }
}

/// Writes a trace file through a buffer (the plugin's callbacks append; the buffer goes to the
/// file when it is large and at [`TraceWriter::finish`]).
pub struct TraceWriter<W: Write> {
    out: W,
    buf: Vec<u8>,
    /// The last load recorded was outside flash (the next such one adds nothing).
    /// The first write error; later writes are dropped and `finish` reports it.
    failed: Option<std::io::Error>,
}

const FLUSH_AT: usize = 1 << 20;

impl<W: Write> TraceWriter<W> {
    pub fn new(mut out: W) -> TraceWriter<W> {
        let failed = out.write_all(TRACE_HEADER.as_bytes()).err();
        TraceWriter { out, buf: Vec::with_capacity(FLUSH_AT + 64), failed }
    }

    pub fn event(&mut self, event: &Event<'_>) {
        encode(&mut self.buf, event);
        if self.buf.len() >= FLUSH_AT {
            self.flush();
        }
    }

    fn flush(&mut self) {
        if self.failed.is_none() {
            self.failed = self.out.write_all(&self.buf).err();
        }
        self.buf.clear();
    }

    /// Writes [`Event::End`] and everything buffered.
    pub fn finish(&mut self) -> std::io::Result<()> {
        self.event(&Event::End);
        self.flush();
        if let Some(e) = self.failed.take() {
            return Err(e);
        }
        self.out.flush()
    }
}

/// Reads the records of a trace file's bytes, in order.
pub struct TraceReader<'a> {
    data: &'a [u8],
    pos: usize,
}

impl<'a> TraceReader<'a> {
    /// Checks the header; `Err` says what is wrong.
    pub fn new(data: &'a [u8]) -> Result<TraceReader<'a>, String> {
        match data.strip_prefix(TRACE_HEADER.as_bytes()) {
            Some(_) => Ok(TraceReader { data, pos: TRACE_HEADER.len() }),
            None => Err(format!("not a trace file of this version (the first line is not `{}`)", TRACE_HEADER.trim())),
        }
    }

    fn number(&mut self) -> Result<u64, String> {
        let mut v = 0u64;
        for shift in (0..64).step_by(7) {
            let byte = *self.data.get(self.pos).ok_or_else(|| format!("truncated at byte {}", self.pos))?;
            self.pos += 1;
            v |= u64::from(byte & 0x7f) << shift;
            if byte & 0x80 == 0 {
                return Ok(v);
            }
        }
        Err(format!("a number longer than 64 bits at byte {}", self.pos))
    }

    fn u32(&mut self) -> Result<u32, String> {
        let at = self.pos;
        u32::try_from(self.number()?).map_err(|_| format!("a number too large for 32 bits at byte {at}"))
    }

    /// The next record; `Ok(None)` at the end of the data.
    pub fn next_event(&mut self) -> Result<Option<Event<'a>>, String> {
        if self.pos == self.data.len() {
            return Ok(None);
        }
        let at = self.pos;
        let v = self.number()?;
        let high = || u32::try_from(v >> 3).map_err(|_| format!("a number too large for 32 bits at byte {at}"));
        Ok(Some(match v & 7 {
            EXEC => Event::Exec { id: high()?, snapshot: false },
            EXEC_SNAP => Event::Exec { id: high()?, snapshot: true },
            BLOCK => {
                let start = self.u32()?;
                let handler = self.number()? != 0;
                let n = self.number()? as usize;
                let bytes = self
                    .data
                    .get(self.pos..self.pos.saturating_add(n))
                    .ok_or_else(|| format!("a block's bytes truncated at byte {}", self.pos))?;
                self.pos += n;
                Event::Block { start, handler, bytes }
            }
            LOAD => Event::Load { size: high()?, addr: self.u32()? },
            MARKER_SNAP => Event::MarkerSnapshot { index: high()? },
            ACCESS => {
                let mut field = |bit: u64| if v & 1 << bit != 0 { self.u32().map(Some) } else { Ok(None) };
                let (stopped, read, write) = (field(3)?, field(4)?, field(5)?);
                Event::Access { stopped, read, write }
            }
            ACTIVATION => Event::Activation {
                function: v >> 3 != 0,
                id: self.u32()?,
                first: self.number()?,
                last: self.number()?,
            },
            _ => Event::End,
        }))
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn every_record_round_trips() {
        let events = [
            Event::Block { start: 0x0800_0100, handler: true, bytes: &[0x70, 0x47, 0x00, 0xbf] },
            Event::Exec { id: 0, snapshot: false },
            Event::Exec { id: 70_000, snapshot: true },
            Event::Load { addr: 0x0800_1234, size: 8 },
            Event::MarkerSnapshot { index: 3 },
            Event::Access { stopped: Some(2), read: None, write: None },
            Event::Access { stopped: None, read: Some(0xE000_0100), write: None },
            Event::Access { stopped: Some(0), read: Some(0x200), write: None },
            Event::Access { stopped: Some(1), read: None, write: Some(0x1_0204) },
            Event::Activation { function: true, id: 2, first: 5, last: 1 << 40 },
            Event::Activation { function: false, id: 0, first: 0, last: 1 },
        ];
        let mut w = TraceWriter::new(Vec::new());
        for e in &events {
            w.event(e);
        }
        w.finish().unwrap();
        let data = w.out;
        let mut r = TraceReader::new(&data).unwrap();
        let mut back = Vec::new();
        while let Some(e) = r.next_event().unwrap() {
            back.push(e);
        }
        let mut want = events.to_vec();
        want.push(Event::End);
        assert_eq!(back, want);
        assert!(TraceReader::new(b"mcubench-trace 1\n").is_err(), "format 1 had loads outside the flash");
        assert!(TraceReader::new(b"mcubench-trace 2\n").is_err(), "format 2 had no device accesses");
        let mut cut = TraceReader::new(&data[..data.len() - 3]).unwrap();
        let e = std::iter::from_fn(|| cut.next_event().transpose()).find_map(Result::err).unwrap();
        assert!(e.contains("truncated"), "{e}");
    }
}
