//! Differential check of the decoder against `arm-none-eabi-objdump -d` over the code of every
//! function symbol of an ELF (shared by `tests/objdump_diff.rs` and `examples/elfcheck.rs`).
#![allow(dead_code)]

use std::collections::{BTreeMap, HashMap};
use std::path::Path;
use std::process::Command;

use mcubench_thumb::{Decoder, Flow};
use object::{Object, ObjectSection, ObjectSymbol, SymbolKind};

/// A run of Thumb code (between mapping symbols) inside one function symbol.
pub struct Region {
    pub func: String,
    pub addr: u32,
    pub bytes: Vec<u8>,
}

/// Code regions of every function symbol (STT_FUNC with a size), with `$d` data excluded.
pub fn code_regions(elf: &[u8]) -> Vec<Region> {
    let file = object::File::parse(elf).expect("parse ELF");
    // Mapping symbols per section: address -> is_code.
    let mut maps: HashMap<object::SectionIndex, BTreeMap<u64, bool>> = HashMap::new();
    for s in file.symbols() {
        let Ok(name) = s.name() else { continue };
        let Some(idx) = s.section_index() else { continue };
        let code = if name == "$t" || name.starts_with("$t.") {
            true
        } else if name == "$d" || name.starts_with("$d.") || name == "$a" || name.starts_with("$a.") {
            false
        } else {
            continue;
        };
        maps.entry(idx).or_default().insert(s.address(), code);
    }
    let mut seen = std::collections::HashSet::new();
    let mut out = Vec::new();
    for s in file.symbols() {
        if s.kind() != SymbolKind::Text || s.size() == 0 {
            continue;
        }
        let Ok(name) = s.name() else { continue };
        if name.starts_with('$') {
            continue;
        }
        let Some(idx) = s.section_index() else { continue };
        let start = s.address() & !1;
        let end = start + s.size();
        if !seen.insert((start, end)) {
            continue;
        }
        let sec = file.section_by_index(idx).expect("section");
        let data = sec.data().expect("section data");
        let map = maps.get(&idx).cloned().unwrap_or_default();
        // Boundaries inside [start, end).
        let mut cuts: Vec<(u64, bool)> = Vec::new();
        let initial = map.range(..=start).next_back().map(|(_, c)| *c).unwrap_or(true);
        cuts.push((start, initial));
        for (&a, &c) in map.range(start + 1..end) {
            cuts.push((a, c));
        }
        for (i, &(a, code)) in cuts.iter().enumerate() {
            let b = cuts.get(i + 1).map(|c| c.0).unwrap_or(end);
            if !code || b <= a {
                continue;
            }
            let lo = (a - sec.address()) as usize;
            let hi = (b - sec.address()) as usize;
            out.push(Region { func: name.to_string(), addr: a as u32, bytes: data[lo..hi].to_vec() });
        }
    }
    out
}

pub struct ObjInsn {
    pub len: u8,
    pub mnemonic: String,
    pub operands: String,
}

/// `arm-none-eabi-objdump -d` parsed: address -> instruction.
pub fn objdump(path: &Path) -> HashMap<u32, ObjInsn> {
    let out = Command::new("arm-none-eabi-objdump").arg("-d").arg(path).output().expect("run arm-none-eabi-objdump");
    assert!(out.status.success(), "objdump failed: {}", String::from_utf8_lossy(&out.stderr));
    let text = String::from_utf8_lossy(&out.stdout);
    let mut map = HashMap::new();
    for line in text.lines() {
        // "   2:\te92d 4ff0 \tstmdb\tsp!, {r4, lr}"
        let mut parts = line.split('\t');
        let Some(a) = parts.next() else { continue };
        let a = a.trim();
        let Some(a) = a.strip_suffix(':') else { continue };
        let Ok(addr) = u32::from_str_radix(a, 16) else { continue };
        let Some(raw) = parts.next() else { continue };
        let raw = raw.trim();
        let len = match raw.split(' ').map(|h| h.len()).collect::<Vec<_>>().as_slice() {
            [4] => 2,
            [4, 4] => 4,
            [8] => 4, // .word data
            _ => continue,
        };
        let mnemonic = parts.next().unwrap_or("").trim().to_string();
        let operands = parts.next().unwrap_or("").trim().to_string();
        map.insert(addr, ObjInsn { len, mnemonic, operands });
    }
    map
}

const CONDS: [&str; 16] =
    ["eq", "ne", "cs", "hs", "cc", "lo", "mi", "pl", "vs", "vc", "hi", "ls", "ge", "lt", "gt", "le"];

/// Target of a direct branch as objdump prints it (`b.n 1a <f+0x4>`, `cbz r0, 20 <…>`).
pub fn objdump_target(i: &ObjInsn) -> Option<u32> {
    let m = i.mnemonic.trim_end_matches(".n").trim_end_matches(".w");
    let direct = matches!(m, "b" | "bl" | "blx" | "cbz" | "cbnz")
        || (m.len() == 3 && m.starts_with('b') && CONDS.contains(&&m[1..]))
        || (m.len() == 4 && m.starts_with("bl") && CONDS.contains(&&m[2..]));
    if !direct {
        return None;
    }
    let ops =
        if m.starts_with("cb") && !m.starts_with("cbl") { i.operands.split_once(", ")?.1 } else { i.operands.as_str() };
    u32::from_str_radix(ops.split_whitespace().next()?, 16).ok()
}

#[derive(Default, Debug)]
pub struct Report {
    pub insns: usize,
    pub branches: usize,
    pub mismatches: Vec<String>,
    pub errors: Vec<String>,
}

pub fn compare(dec: &Decoder, path: &Path) -> Report {
    let elf = std::fs::read(path).expect("read ELF");
    let regions = code_regions(&elf);
    let od = objdump(path);
    let mut rep = Report::default();
    for r in &regions {
        let (insns, err) = dec.decode_block(r.addr, &r.bytes);
        if let Some(e) = err {
            rep.errors.push(format!("{}: {e}", r.func));
        }
        let mut addr = r.addr;
        for i in &insns {
            rep.insns += 1;
            if i.addr != addr {
                rep.mismatches.push(format!("{}: address {:#x} != expected {addr:#x}", r.func, i.addr));
            }
            addr = i.addr + i.len as u32;
            let Some(o) = od.get(&i.addr) else {
                rep.mismatches.push(format!(
                    "{}: {:#x} {} {} not at an objdump instruction",
                    r.func, i.addr, i.mnemonic, i.operands
                ));
                continue;
            };
            if o.len != i.len {
                rep.mismatches.push(format!(
                    "{}: {:#x} length {} vs objdump {} ({} {})",
                    r.func, i.addr, i.len, o.len, o.mnemonic, o.operands
                ));
            }
            let mine = match i.flow {
                Flow::Branch { target } | Flow::Call { target } => Some(target),
                _ => None,
            };
            let theirs = objdump_target(o);
            if mine.is_some() {
                rep.branches += 1;
            }
            if mine != theirs {
                rep.mismatches.push(format!(
                    "{}: {:#x} target {mine:x?} ({} {}) vs objdump {theirs:x?} ({} {})",
                    r.func, i.addr, i.mnemonic, i.operands, o.mnemonic, o.operands
                ));
            }
        }
    }
    rep
}
