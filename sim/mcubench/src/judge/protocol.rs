//! The firmware → host result protocol, version 1 (see `docs/src/reference/protocol.md`).
//!
//! Records are lines on semihosting stdout that start with [`PREFIX`]; every other line is firmware
//! log. Parsing is strict: a record with an unknown kind, a missing or unknown field, or a malformed
//! value is an error that names the stdout line number, because a half-understood record must never
//! turn into a verdict. So is a transcript out of order: `kat` or `end` before `begin`, a second
//! `begin` or `end`, a `kat` after `end`, one KAT id reported twice, and a record that does not
//! start its line (output interleaved into a record). `fault` and `panic` may come anywhere: a
//! fault can strike before `begin` or after `end`.

use std::collections::BTreeMap;

use serde::{Deserialize, Serialize};

pub const PREFIX: &str = "@mcubench/1 ";

#[derive(Debug, Clone, PartialEq, Eq, Serialize, Deserialize)]
#[serde(rename_all = "lowercase")]
pub enum KatResult {
    Pass,
    Fail,
}

#[derive(Debug, Clone, PartialEq, Eq, Serialize)]
pub struct KatRecord {
    pub id: String,
    pub alg: String,
    pub op: String,
    pub result: KatResult,
    pub ticks: u64,
    pub stack: u32,
    /// Region id whose markers wrapped the operation (optional): the host reads the operation's
    /// exact instruction count for it from the QEMU plugin.
    #[serde(skip_serializing_if = "Option::is_none")]
    pub region: Option<u32>,
    /// Heap bytes the operation took above what was in use when it started (optional: only
    /// firmware that measures its heap sends it).
    #[serde(skip_serializing_if = "Option::is_none")]
    pub heap: Option<u32>,
    /// Message bytes the operation processed (optional), for cycles per byte.
    #[serde(skip_serializing_if = "Option::is_none")]
    pub bytes: Option<u64>,
    pub out: String,
    #[serde(skip_serializing_if = "Option::is_none")]
    pub expected: Option<String>,
}

#[derive(Debug, Clone, PartialEq, Eq, Serialize)]
pub struct EndRecord {
    pub passed: u32,
    pub failed: u32,
    pub stack: u32,
    /// Whole-run heap peak in bytes (optional, as on `kat`).
    #[serde(skip_serializing_if = "Option::is_none")]
    pub heap: Option<u32>,
}

#[derive(Debug, Clone, PartialEq, Eq, Serialize)]
pub struct FaultRecord {
    pub kind: String,
    pub pc: u32,
    pub lr: u32,
    pub xpsr: u32,
    pub cfsr: u32,
    pub hfsr: u32,
}

#[derive(Debug, Clone, PartialEq, Eq)]
pub enum Record {
    Begin { fw: String },
    Kat(KatRecord),
    End(EndRecord),
    Fault(FaultRecord),
    Panic { msg: String },
}

#[derive(Debug, Clone, PartialEq, Eq, thiserror::Error)]
#[error("firmware stdout line {line}: {message}: `{text}`")]
pub struct ProtocolError {
    /// 1-based line number in the firmware's stdout.
    pub line: usize,
    pub message: String,
    pub text: String,
}

/// Everything the firmware said, in order.
#[derive(Debug, Clone, Default, PartialEq, Eq)]
pub struct Transcript {
    pub records: Vec<(usize, Record)>,
    /// Lines that are not records, with their line numbers.
    pub log: Vec<(usize, String)>,
}

impl Transcript {
    pub fn parse(stdout: &str) -> Result<Transcript, ProtocolError> {
        let mut t = Transcript::default();
        let mut order = Order::default();
        for (index, raw) in stdout.lines().enumerate() {
            let line = index + 1;
            let text = raw.strip_suffix('\r').unwrap_or(raw);
            let error = |message: String| ProtocolError { line, message, text: text.to_owned() };
            if let Some((at, _)) = text.match_indices("@mcubench/").find(|(at, _)| *at > 0) {
                return Err(error(format!(
                    "`@mcubench/` appears at column {}, but a record must start its line: output was \
                     interleaved with a record (write each record with one call, ending in a newline)",
                    at + 1
                )));
            }
            match text.strip_prefix(PREFIX) {
                Some(body) => {
                    let record = parse_record(body).map_err(error)?;
                    order.check(line, &record).map_err(error)?;
                    t.records.push((line, record));
                }
                None if text.starts_with("@mcubench/") => {
                    return Err(error("unsupported protocol version; this mcubench reads `@mcubench/1`".into()));
                }
                None => t.log.push((line, text.to_owned())),
            }
        }
        Ok(t)
    }

    pub fn kats(&self) -> impl Iterator<Item = &KatRecord> {
        self.records.iter().filter_map(|(_, r)| match r {
            Record::Kat(k) => Some(k),
            _ => None,
        })
    }

    pub fn end(&self) -> Option<&EndRecord> {
        self.records.iter().find_map(|(_, r)| match r {
            Record::End(e) => Some(e),
            _ => None,
        })
    }

    pub fn fault(&self) -> Option<&FaultRecord> {
        self.records.iter().find_map(|(_, r)| match r {
            Record::Fault(f) => Some(f),
            _ => None,
        })
    }

    pub fn panic_message(&self) -> Option<&str> {
        self.records.iter().find_map(|(_, r)| match r {
            Record::Panic { msg } => Some(msg.as_str()),
            _ => None,
        })
    }

    /// A one-line description of the last record, for timeout messages ("which test hung?").
    pub fn last_record_summary(&self) -> String {
        match self.records.last() {
            None => "no record at all".into(),
            Some((line, Record::Begin { fw })) => format!("line {line}: begin fw={fw}"),
            Some((line, Record::Kat(k))) => format!("line {line}: kat id={}", k.id),
            Some((line, Record::End(_))) => format!("line {line}: end"),
            Some((line, Record::Fault(f))) => format!("line {line}: fault pc=0x{:08x}", f.pc),
            Some((line, Record::Panic { .. })) => format!("line {line}: panic"),
        }
    }
}

/// What the records so far allow next (see the module docs).
#[derive(Default)]
struct Order {
    begin: Option<usize>,
    end: Option<usize>,
    /// KAT id → line of its record.
    kats: BTreeMap<String, usize>,
}

impl Order {
    fn check(&mut self, line: usize, record: &Record) -> Result<(), String> {
        let kind = match record {
            Record::Begin { .. } => "begin",
            Record::Kat(_) => "kat",
            Record::End(_) => "end",
            Record::Fault(_) | Record::Panic { .. } => return Ok(()),
        };
        if let Record::Begin { .. } = record {
            if let Some(first) = self.begin {
                return Err(format!(
                    "a second `begin` record (the first is on line {first}); the firmware restarted or \
                     two programs share the console"
                ));
            }
            self.begin = Some(line);
            return Ok(());
        }
        if self.begin.is_none() {
            return Err(format!("a `{kind}` record before any `begin` record; start the run with `begin`"));
        }
        if let Some(end) = self.end {
            return Err(format!("a `{kind}` record after the `end` record on line {end}; `end` must be last"));
        }
        match record {
            Record::Kat(k) => {
                if let Some(first) = self.kats.insert(k.id.clone(), line) {
                    return Err(format!(
                        "KAT `{}` is reported twice (first on line {first}); ids must be unique",
                        k.id
                    ));
                }
            }
            _ => self.end = Some(line),
        }
        Ok(())
    }
}

/// Fields of one record: `key=value` pairs, each key at most once.
struct Fields<'a> {
    kind: &'a str,
    map: BTreeMap<&'a str, &'a str>,
}

impl<'a> Fields<'a> {
    fn parse(kind: &'a str, rest: &'a str) -> Result<Self, String> {
        let mut map = BTreeMap::new();
        for token in rest.split(' ').filter(|t| !t.is_empty()) {
            let (key, value) = token.split_once('=').ok_or_else(|| format!("`{token}` is not a key=value field"))?;
            if key.is_empty() || !key.bytes().all(|b| b.is_ascii_lowercase() || b.is_ascii_digit() || b == b'_') {
                return Err(format!("`{key}` is not a field name"));
            }
            if map.insert(key, value).is_some() {
                return Err(format!("field `{key}` appears twice"));
            }
        }
        Ok(Fields { kind, map })
    }

    fn take(&mut self, key: &str) -> Result<&'a str, String> {
        self.map.remove(key).ok_or_else(|| format!("`{}` record lacks field `{key}`", self.kind))
    }

    fn take_opt(&mut self, key: &str) -> Option<&'a str> {
        self.map.remove(key)
    }

    fn finish(self) -> Result<(), String> {
        match self.map.keys().next() {
            None => Ok(()),
            Some(k) => Err(format!("`{}` record has unknown field `{k}`", self.kind)),
        }
    }
}

fn number<T: std::str::FromStr>(key: &str, value: &str) -> Result<T, String> {
    value.parse().map_err(|_| format!("field `{key}` is not a decimal number: `{value}`"))
}

fn address(key: &str, value: &str) -> Result<u32, String> {
    value
        .strip_prefix("0x")
        .filter(|h| h.len() == 8)
        .and_then(|h| u32::from_str_radix(h, 16).ok())
        .ok_or_else(|| format!("field `{key}` is not an address 0x%08x: `{value}`"))
}

fn hex(key: &str, value: &str) -> Result<String, String> {
    if value.len().is_multiple_of(2) && value.bytes().all(|b| matches!(b, b'0'..=b'9' | b'a'..=b'f')) {
        Ok(value.to_owned())
    } else {
        Err(format!("field `{key}` is not lowercase hex bytes: `{value}`"))
    }
}

fn identifier(key: &str, value: &str) -> Result<String, String> {
    if !value.is_empty() && value.bytes().all(|b| b.is_ascii_alphanumeric() || b"_./-".contains(&b)) {
        Ok(value.to_owned())
    } else {
        Err(format!("field `{key}` is not an identifier: `{value}`"))
    }
}

fn parse_record(body: &str) -> Result<Record, String> {
    let (kind, rest) = body.split_once(' ').unwrap_or((body, ""));
    // `panic` carries free text: everything after `msg=` is the message.
    if kind == "panic" {
        let msg = rest.strip_prefix("msg=").ok_or("`panic` record lacks field `msg`")?;
        return Ok(Record::Panic { msg: msg.to_owned() });
    }
    let mut f = Fields::parse(kind, rest)?;
    let record = match kind {
        "begin" => Record::Begin { fw: identifier("fw", f.take("fw")?)? },
        "kat" => {
            let result = match f.take("result")? {
                "pass" => KatResult::Pass,
                "fail" => KatResult::Fail,
                other => return Err(format!("field `result` must be pass or fail, not `{other}`")),
            };
            let expected = f.take_opt("expected").map(|v| hex("expected", v)).transpose()?;
            let region = f.take_opt("region").map(|v| number("region", v)).transpose()?;
            let heap = f.take_opt("heap").map(|v| number("heap", v)).transpose()?;
            let bytes = f.take_opt("bytes").map(|v| number("bytes", v)).transpose()?;
            if result == KatResult::Fail && expected.is_none() {
                return Err("a failing `kat` record must carry `expected`".into());
            }
            Record::Kat(KatRecord {
                id: identifier("id", f.take("id")?)?,
                alg: identifier("alg", f.take("alg")?)?,
                op: identifier("op", f.take("op")?)?,
                result,
                ticks: number("ticks", f.take("ticks")?)?,
                stack: number("stack", f.take("stack")?)?,
                region,
                heap,
                bytes,
                out: hex("out", f.take("out")?)?,
                expected,
            })
        }
        "end" => Record::End(EndRecord {
            passed: number("passed", f.take("passed")?)?,
            failed: number("failed", f.take("failed")?)?,
            stack: number("stack", f.take("stack")?)?,
            heap: f.take_opt("heap").map(|v| number("heap", v)).transpose()?,
        }),
        "fault" => Record::Fault(FaultRecord {
            kind: identifier("kind", f.take("kind")?)?,
            pc: address("pc", f.take("pc")?)?,
            lr: address("lr", f.take("lr")?)?,
            xpsr: address("xpsr", f.take("xpsr")?)?,
            cfsr: address("cfsr", f.take("cfsr")?)?,
            hfsr: address("hfsr", f.take("hfsr")?)?,
        }),
        other => return Err(format!("unknown record kind `{other}`; expected begin, kat, end, fault or panic")),
    };
    f.finish()?;
    Ok(record)
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn parses_a_complete_run_and_keeps_log_lines() {
        let out = "booting\n\
            @mcubench/1 begin fw=kat\n\
            @mcubench/1 kat id=sha3-256/len0 alg=SHA3-256 op=hash result=pass ticks=12 stack=344 out=a7ff\n\
            some log\r\n\
            @mcubench/1 kat id=aes-128/c1 alg=AES-128 op=encrypt result=fail ticks=3 stack=80 out=00 expected=01\n\
            @mcubench/1 end passed=1 failed=1 stack=1024\n";
        let t = Transcript::parse(out).unwrap();
        assert_eq!(t.log, vec![(1, "booting".to_string()), (4, "some log".to_string())]);
        assert_eq!(t.records.len(), 4);
        let kats: Vec<_> = t.kats().collect();
        assert_eq!(kats[0].ticks, 12);
        assert_eq!(kats[0].stack, 344);
        assert_eq!(kats[0].region, None);
        assert_eq!(kats[1].result, KatResult::Fail);
        assert_eq!(kats[1].expected.as_deref(), Some("01"));
        assert_eq!(t.end(), Some(&EndRecord { passed: 1, failed: 1, stack: 1024, heap: None }));
        assert_eq!(kats[0].heap, None);
        assert_eq!(t.last_record_summary(), "line 6: end");
    }

    #[test]
    fn kat_records_may_carry_a_region() {
        let t = Transcript::parse(
            "@mcubench/1 begin fw=x\n@mcubench/1 kat id=x alg=A op=hash result=pass ticks=1 stack=1 region=7 out=00\n",
        )
        .unwrap();
        assert_eq!(t.kats().next().unwrap().region, Some(7));
    }

    #[test]
    fn kat_and_end_records_may_carry_heap() {
        let t = Transcript::parse(
            "@mcubench/1 begin fw=x\n\
             @mcubench/1 kat id=a alg=A op=hash result=pass ticks=1 stack=1 heap=3008 out=00\n\
             @mcubench/1 kat id=b alg=A op=hash result=pass ticks=1 stack=1 heap=0 region=2 out=00\n\
             @mcubench/1 end passed=2 failed=0 stack=9 heap=11024\n",
        )
        .unwrap();
        let heaps: Vec<_> = t.kats().map(|k| k.heap).collect();
        assert_eq!(heaps, [Some(3008), Some(0)]);
        assert_eq!(t.end().unwrap().heap, Some(11024));
    }

    #[test]
    fn kat_records_may_carry_bytes() {
        let t = Transcript::parse(
            "@mcubench/1 begin fw=x\n\
             @mcubench/1 kat id=a alg=A op=hash result=pass ticks=1 stack=1 bytes=64 region=0 out=00\n\
             @mcubench/1 kat id=b alg=A op=hash result=pass ticks=1 stack=1 bytes=0 out=00\n\
             @mcubench/1 kat id=c alg=A op=hash result=pass ticks=1 stack=1 bytes=18446744073709551615 out=00\n\
             @mcubench/1 kat id=d alg=A op=hash result=pass ticks=1 stack=1 out=00\n",
        )
        .unwrap();
        let bytes: Vec<_> = t.kats().map(|k| k.bytes).collect();
        assert_eq!(bytes, [Some(64), Some(0), Some(u64::MAX), None]);
    }

    #[test]
    fn parses_fault_and_panic() {
        let t = Transcript::parse(
            "@mcubench/1 fault kind=hardfault pc=0x000004d2 lr=0xfffffff9 xpsr=0x01000003 cfsr=0x00000082 hfsr=0x40000000\n\
             @mcubench/1 panic msg=index out of bounds: the len is 3 but the index is 7\n",
        )
        .unwrap();
        assert_eq!(t.fault().unwrap().pc, 0x4d2);
        assert_eq!(t.panic_message(), Some("index out of bounds: the len is 3 but the index is 7"));
    }

    #[rstest::rstest]
    #[case("@mcubench/1 kat id=x alg=A op=hash result=pass ticks=1 stack=1", "lacks field `out`")]
    #[case("@mcubench/1 kat id=x alg=A op=hash result=ok ticks=1 stack=1 out=00", "must be pass or fail")]
    #[case("@mcubench/1 kat id=x alg=A op=hash result=pass ticks=-1 stack=1 out=00", "`ticks` is not a decimal")]
    #[case("@mcubench/1 kat id=x alg=A op=hash result=pass ticks=1 stack=1 out=0G", "not lowercase hex")]
    #[case("@mcubench/1 kat id=x alg=A op=hash result=fail ticks=1 stack=1 out=00", "must carry `expected`")]
    #[case("@mcubench/1 kat id=x id=y alg=A op=hash result=pass ticks=1 stack=1 out=00", "appears twice")]
    #[case("@mcubench/1 end passed=1 failed=0 stack=9 bonus=1", "unknown field `bonus`")]
    #[case(
        "@mcubench/1 kat id=x alg=A op=hash result=pass ticks=1 stack=1 region=r out=00",
        "`region` is not a decimal"
    )]
    #[case("@mcubench/1 kat id=x alg=A op=hash result=pass ticks=1 stack=1 region=1 region=2 out=00", "appears twice")]
    #[case("@mcubench/1 end passed=1 failed=0 stack=9 region=1", "unknown field `region`")]
    #[case("@mcubench/1 end passed=1 failed=0", "lacks field `stack`")]
    #[case(
        "@mcubench/1 kat id=x alg=A op=hash result=pass ticks=1 stack=1 heap=0x10 out=00",
        "`heap` is not a decimal"
    )]
    #[case("@mcubench/1 kat id=x alg=A op=hash result=pass ticks=1 stack=1 heap=-1 out=00", "`heap` is not a decimal")]
    #[case(
        "@mcubench/1 kat id=x alg=A op=hash result=pass ticks=1 stack=1 heap=1 heap=2 out=00",
        "`heap` appears twice"
    )]
    #[case("@mcubench/1 end passed=1 failed=0 stack=9 heap=", "`heap` is not a decimal")]
    #[case("@mcubench/1 end passed=1 failed=0 stack=9 heap=4294967296", "`heap` is not a decimal")]
    #[case("@mcubench/1 end passed=1 failed=0 stack=9 heap=1 heap=1", "`heap` appears twice")]
    #[case(
        "@mcubench/1 kat id=x alg=A op=hash result=pass ticks=1 stack=1 bytes=1k out=00",
        "`bytes` is not a decimal"
    )]
    #[case(
        "@mcubench/1 kat id=x alg=A op=hash result=pass ticks=1 stack=1 bytes=-1 out=00",
        "`bytes` is not a decimal"
    )]
    #[case("@mcubench/1 kat id=x alg=A op=hash result=pass ticks=1 stack=1 bytes= out=00", "`bytes` is not a decimal")]
    #[case(
        "@mcubench/1 kat id=x alg=A op=hash result=pass ticks=1 stack=1 bytes=18446744073709551616 out=00",
        "`bytes` is not a decimal"
    )]
    #[case(
        "@mcubench/1 kat id=x alg=A op=hash result=pass ticks=1 stack=1 bytes=1 bytes=1 out=00",
        "`bytes` appears twice"
    )]
    #[case("@mcubench/1 end passed=1 failed=0 stack=9 bytes=1", "unknown field `bytes`")]
    #[case("@mcubench/1 ending", "unknown record kind `ending`")]
    #[case("@mcubench/1 fault kind=hardfault pc=4d2 lr=0x0 xpsr=0x0 cfsr=0x0 hfsr=0x0", "not an address")]
    #[case("@mcubench/1 begin fw=a b", "`b` is not a key=value")]
    #[case("@mcubench/2 begin fw=kat", "unsupported protocol version")]
    #[case("@mcubench/1 panic", "lacks field `msg`")]
    #[case("@mcubench/1 kat id=x alg=A op=hash result=pass ticks=1 stack=1 out=00@mcubench/1 end", "column 70")]
    #[case(
        "booting @mcubench/1 begin fw=kat",
        "appears at column 9, but a record must start its line: output was interleaved"
    )]
    #[case("@mcubench/1 end passed=0 failed=0 stack=99999999999", "`stack` is not a decimal")]
    #[case("@mcubench/1 kat id=x alg=A op=hash result=pass ticks=1 stack=1 out=00 \u{0}", "is not a key=value")]
    #[case("@mcubench/1 begin fw=k\u{fffd}t", "not an identifier")]
    #[case("@mcubench/1 begin fw=", "not an identifier")]
    #[case("@mcubench/1 ", "unknown record kind ``")]
    fn malformed_records_are_errors_that_name_the_line(#[case] record: &str, #[case] expected: &str) {
        let err = Transcript::parse(&format!("log\n{record}\n")).unwrap_err();
        assert_eq!(err.line, 2);
        assert!(err.to_string().contains(expected), "{err}");
        assert!(err.to_string().starts_with("firmware stdout line 2: "), "{err}");
    }

    const BEGIN: &str = "@mcubench/1 begin fw=kat";
    const KAT_A: &str = "@mcubench/1 kat id=a alg=A op=hash result=pass ticks=1 stack=1 out=00";
    const KAT_B: &str = "@mcubench/1 kat id=b alg=A op=hash result=pass ticks=1 stack=1 out=00";
    const END: &str = "@mcubench/1 end passed=1 failed=0 stack=8";
    const FAULT: &str =
        "@mcubench/1 fault kind=hardfault pc=0x00000100 lr=0x00000001 xpsr=0x00000003 cfsr=0x00000000 hfsr=0x00000000";

    #[rstest::rstest]
    #[case(&[KAT_A, END], 1, "a `kat` record before any `begin` record")]
    #[case(&[END], 1, "a `end` record before any `begin` record")]
    #[case(&[BEGIN, KAT_A, BEGIN], 3, "a second `begin` record (the first is on line 1)")]
    #[case(&[BEGIN, KAT_A, END, END], 4, "a `end` record after the `end` record on line 3")]
    #[case(&[BEGIN, END, KAT_B], 3, "a `kat` record after the `end` record on line 2")]
    #[case(&[BEGIN, KAT_A, KAT_B, KAT_A], 4, "KAT `a` is reported twice (first on line 2)")]
    #[case(&[BEGIN, END, BEGIN], 3, "a second `begin` record")]
    fn records_out_of_order_are_errors(#[case] lines: &[&str], #[case] line: usize, #[case] expected: &str) {
        let err = Transcript::parse(&(lines.join("\n") + "\n")).unwrap_err();
        assert_eq!(err.line, line, "{err}");
        assert!(err.message.contains(expected), "{err}");
    }

    #[test]
    fn faults_and_panics_may_come_before_begin_or_after_end() {
        for lines in [vec![FAULT], vec![BEGIN, KAT_A, END, FAULT], vec![BEGIN, END, "@mcubench/1 panic msg=late"]] {
            Transcript::parse(&(lines.join("\n") + "\n")).unwrap();
        }
    }

    #[test]
    fn an_unterminated_last_line_is_still_parsed_strictly() {
        // Output cut mid-record (a timeout, the output limit) is a protocol error, not a record.
        let err = Transcript::parse(&format!("{BEGIN}\n@mcubench/1 end passed=1 fa")).unwrap_err();
        assert_eq!(err.line, 2);
        assert!(err.message.contains("is not a key=value field"), "{err}");
    }
}
