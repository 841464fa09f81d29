//! The cycle counter's value behind `counter=`: at every read of `DWT_CYCCNT` the plugin writes
//! what the board's counter would read there, for the runner, which has QEMU stopped after the
//! read (a breakpoint) and puts the value in the read's register. QEMU's own counter reads 0,
//! and a plugin of the APIs Debian packages cannot write registers.
//!
//! One fixed-size record, rewritten in place at offset 0: the number of reads so far (the runner
//! tells a new read from the one it already served), the read's address and the value, all
//! little-endian.

/// Bytes in the file.
pub const COUNTER_RECORD_LEN: usize = 16;

/// The plugin's last read of the counter.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub struct CounterValue {
    /// Reads of the counter so far, this one included (1 for the first).
    pub reads: u64,
    /// Address of the load that read it.
    pub pc: u32,
    /// What the board's counter reads: estimated cycles since the run began, or since the last
    /// write of the counter (taken as a write of 0, what firmware writes), modulo 2^32.
    pub value: u32,
}

impl CounterValue {
    pub fn to_bytes(self) -> [u8; COUNTER_RECORD_LEN] {
        let mut b = [0; COUNTER_RECORD_LEN];
        b[..8].copy_from_slice(&self.reads.to_le_bytes());
        b[8..12].copy_from_slice(&self.pc.to_le_bytes());
        b[12..].copy_from_slice(&self.value.to_le_bytes());
        b
    }

    /// `None` for a file shorter than a record (no read yet).
    pub fn from_bytes(b: &[u8]) -> Option<CounterValue> {
        let b: &[u8; COUNTER_RECORD_LEN] = b.get(..COUNTER_RECORD_LEN)?.try_into().ok()?;
        let word = |r: std::ops::Range<usize>| u32::from_le_bytes(b[r].try_into().unwrap_or_default());
        Some(CounterValue {
            reads: u64::from_le_bytes(b[..8].try_into().unwrap_or_default()),
            pc: word(8..12),
            value: word(12..16),
        })
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn a_record_reads_back_as_written_and_a_short_file_is_no_record() {
        let v = CounterValue { reads: 0x1_0000_0002, pc: 0x0000_00e2, value: 0xdead_beef };
        assert_eq!(CounterValue::from_bytes(&v.to_bytes()), Some(v));
        assert_eq!(CounterValue::from_bytes(&v.to_bytes()[..15]), None);
        assert_eq!(CounterValue::from_bytes(&[]), None);
    }
}
