//! ARMv6-M switch tables. Thumb-1 has no TBB/TBH, so compilers dispatch a dense `switch`
//! through a register written to PC, with the table of cases placed right after the code:
//!
//! - LLVM, table of code addresses (`-Os`/`-Oz`):
//!   `lsls rI, rJ, #2; adr rX, table; ldr rY, [rX, rI]; mov pc, rY` (`.word case + 1` entries);
//! - LLVM, table of byte offsets (`tTBB_JT` lowered for v6-M, `-O2`/`-O3`):
//!   `add rX, pc; ldrb rX, [rX, #k]; lsls rX, rX, #1; add pc, rX` (entries are halfword
//!   counts from the `add pc`'s PC), and the same with `ldrh` on a pre-doubled index.
//! - GCC: `bl __gnu_thumb1_case_uqi` (`sqi`, `uhi`, `shi`, `si`) with the case number in r0
//!   and the table right after the `bl`; libgcc's helper returns into the selected case.
//!
//! Taken as an indirect jump out of the function, the cases' calls would be missed; read here,
//! every case is followed as a jump inside the function. The number of entries comes from a
//! `cmp rJ, #N` + `bhi`/`bhs` guarding the index when the code shows one; else the table ends
//! where its data (mapping symbol) ends, at the first case's code, or at the first entry that
//! is no code address inside the function.

use std::collections::BTreeMap;

use mcubench_elf::ElfImage;
use mcubench_elf::functions::{Function, FunctionMap};
use mcubench_thumb::Insn;

/// Instructions looked at backwards from the dispatch for the shapes' earlier instructions.
const LOOKBACK: usize = 4;

/// How a table's entries turn into case addresses.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
enum Entry {
    /// A 32-bit Thumb code address (bit 0 set).
    Address,
    /// A byte or halfword: target = `base + 2 * entry`.
    Offset { width: u32, base: u32, signed: bool },
    /// A 32-bit byte offset: target = `base + entry` (bit 0, the Thumb bit, cleared).
    Words { base: u32 },
}

/// A recognised table: where it starts, its entry kind, and the register holding the case
/// number before any scaling (for the `cmp` that bounds it).
struct Table {
    start: u32,
    entry: Entry,
    index: Option<u8>,
    /// Address of the pattern's first instruction.
    first: u32,
}

/// The case addresses of a v6-M switch dispatched by `insn` (`mov pc, rY`, `add pc, rY` or
/// `bx rY`), or None when `insn` ends no such pattern. Err when the shape matches but its
/// table cannot be read (an entry out of the image or the function).
pub(crate) fn targets(
    image: &ElfImage,
    fmap: &FunctionMap,
    insns: &BTreeMap<u32, Insn>,
    insn: &Insn,
    f: &Function,
) -> Option<Result<Vec<u32>, String>> {
    if insn.len != 2 || insn.conditional {
        return None;
    }
    let prev: Vec<&Insn> = insns.range(..insn.addr).rev().take(LOOKBACK + 2).map(|(_, i)| i).collect();
    // Straight-line code only: each earlier instruction ends where the next one starts.
    let mut at = insn.addr;
    let prev: Vec<&Insn> = prev
        .into_iter()
        .take_while(|i| {
            let ok = i.addr + u32::from(i.len) == at && i.len == 2 && !i.conditional;
            at = i.addr;
            ok
        })
        .collect();
    let raw = insn.raw as u16;
    let table = if let Some(ry) = mov_pc(raw).or_else(|| bx(raw)) {
        address_table(&prev, ry)?
    } else if let Some(ry) = add_pc(raw) {
        offset_table(&prev, ry, insn.addr)?
    } else {
        return None;
    };
    let count = table.index.and_then(|r| guarded_count(insns, table.first, r));
    Some(read(image, fmap, &table, count, f))
}

/// `mov pc, Rm` (MOV register T1 with Rd = PC): Rm.
fn mov_pc(raw: u16) -> Option<u8> {
    (raw & 0xff87 == 0x4687).then_some(((raw >> 3) & 0xf) as u8)
}

/// `bx Rm`: Rm (not LR, a return).
fn bx(raw: u16) -> Option<u8> {
    let rm = ((raw >> 3) & 0xf) as u8;
    (raw & 0xff87 == 0x4700 && rm != 14 && rm != 15).then_some(rm)
}

/// `add pc, Rm` (ADD register T2 with Rdn = PC): Rm.
fn add_pc(raw: u16) -> Option<u8> {
    (raw & 0xff87 == 0x4487).then_some(((raw >> 3) & 0xf) as u8)
}

/// `add Rdn, pc` (ADD register T2 with Rm = PC): Rdn.
fn add_reg_pc(raw: u16) -> Option<u8> {
    (raw & 0xff78 == 0x4478).then_some(((raw & 7) | ((raw >> 4) & 8)) as u8)
}

/// `ldr Rt, [Rn, Rm]`: (Rt, Rn, Rm).
fn ldr_reg(raw: u16) -> Option<(u8, u8, u8)> {
    (raw & 0xfe00 == 0x5800).then_some(((raw & 7) as u8, ((raw >> 3) & 7) as u8, ((raw >> 6) & 7) as u8))
}

/// `ldrb Rt, [Rn, #imm]` / `ldrh Rt, [Rn, #imm]`: (Rt, Rn, imm, width).
fn ldr_narrow(raw: u16) -> Option<(u8, u8, u32, u32)> {
    let (rt, rn, imm5) = ((raw & 7) as u8, ((raw >> 3) & 7) as u8, u32::from((raw >> 6) & 31));
    match raw & 0xf800 {
        0x7800 => Some((rt, rn, imm5, 1)),
        0x8800 => Some((rt, rn, imm5 * 2, 2)),
        _ => None,
    }
}

/// `lsls Rd, Rm, #imm` (imm ≠ 0): (Rd, Rm, imm).
fn lsls(raw: u16) -> Option<(u8, u8, u32)> {
    let imm = u32::from((raw >> 6) & 31);
    (raw & 0xf800 == 0 && imm != 0).then_some(((raw & 7) as u8, ((raw >> 3) & 7) as u8, imm))
}

/// `adr Rd, #imm` at `addr`: (Rd, address).
fn adr(raw: u16, addr: u32) -> Option<(u8, u32)> {
    (raw & 0xf800 == 0xa000).then(|| (((raw >> 8) & 7) as u8, ((addr + 4) & !3) + u32::from(raw & 0xff) * 4))
}

/// Whether `i` writes core register `r`.
fn writes(i: &Insn, r: u8) -> bool {
    i.writes.contains(r)
}

/// `[lsls rI, rJ, #2;] adr rX, table; ldr rY, [rX, rI]; mov pc, rY` (or the ldr's registers
/// the other way round).
fn address_table(prev: &[&Insn], ry: u8) -> Option<Table> {
    let ldr = prev.first()?;
    let (rt, rn, rm) = ldr_reg(ldr.raw as u16)?;
    if rt != ry {
        return None;
    }
    // The base register is the one an `adr` set, with no write to it since.
    let (k, rd, start) = prev.iter().enumerate().skip(1).find_map(|(k, i)| {
        adr(i.raw as u16, i.addr).filter(|(rd, _)| *rd == rn || *rd == rm).map(|(rd, start)| (k, rd, start))
    })?;
    if prev[1..k].iter().any(|j| writes(j, rd)) {
        return None;
    }
    let ri = if rd == rn { rm } else { rn };
    let mut first = prev[k].addr;
    // The case number: shifted left by 2 into the offset register by its nearest earlier write.
    let scaled = prev[1..].iter().find(|j| writes(j, ri)).and_then(|j| match lsls(j.raw as u16) {
        Some((d, m, 2)) if d == ri => Some((j.addr, m)),
        _ => None,
    });
    if let Some((at, _)) = scaled {
        first = first.min(at);
    }
    // No other instruction of the pattern before the load may change the case number, for a
    // `cmp` before the pattern to bound it.
    let index = scaled
        .filter(|(at, m)| !prev[1..].iter().any(|j| j.addr >= first && j.addr != *at && writes(j, *m)))
        .map(|(_, m)| m);
    Some(Table { start, entry: Entry::Address, index, first })
}

/// `[lsls rI, rI, #1;] add rX, pc; ldrb|ldrh rX, [rX, #k]; lsls rX, rX, #1; add pc, rX`.
fn offset_table(prev: &[&Insn], ry: u8, dispatch: u32) -> Option<Table> {
    let [shift, load, add, rest @ ..] = prev else { return None };
    match lsls(shift.raw as u16) {
        Some((d, m, 1)) if d == ry && m == ry => {}
        _ => return None,
    }
    let (rt, rn, imm, width) = ldr_narrow(load.raw as u16)?;
    if rt != ry || rn != ry || add_reg_pc(add.raw as u16) != Some(ry) {
        return None;
    }
    // ADD (register) reads PC as its address + 4 (not word-aligned).
    let start = add.addr + 4 + imm;
    let (index, first) = if width == 1 {
        (Some(ry), add.addr)
    } else {
        // A halfword table is indexed by the case number doubled just before.
        match rest.first().map(|i| (i.addr, lsls(i.raw as u16))) {
            Some((at, Some((d, m, 1)))) if d == ry => (Some(m), at),
            _ => (None, add.addr),
        }
    };
    Some(Table { start, entry: Entry::Offset { width, base: dispatch + 4, signed: false }, index, first })
}

/// Cases guarded by `cmp rJ, #N` directly followed by `bhi` to the default (N + 1 cases on the
/// fall-through) or `bhs` (N cases), with no write to rJ from there to the pattern.
fn guarded_count(insns: &BTreeMap<u32, Insn>, first: u32, index: u8) -> Option<u32> {
    let mut branch: Option<u16> = None;
    let mut next_addr = first;
    for (_, i) in insns.range(..first).rev().take(LOOKBACK + 2) {
        // Straight-line code only.
        if i.addr + u32::from(i.len) != next_addr || i.len != 2 {
            return None;
        }
        next_addr = i.addr;
        let raw = i.raw as u16;
        if let Some(b) = branch {
            // CMP Rn, #imm8 right before the branch.
            if raw & 0xf800 == 0x2800 && ((raw >> 8) & 7) as u8 == index {
                let imm = u32::from(raw & 0xff);
                return Some(if b == 0xd800 { imm + 1 } else { imm });
            }
            return None;
        }
        if raw & 0xff00 == 0xd800 || raw & 0xff00 == 0xd200 {
            branch = Some(raw & 0xff00);
            continue;
        }
        if writes(i, index) || i.conditional || !matches!(i.flow, mcubench_thumb::Flow::Next) {
            return None;
        }
    }
    None
}

/// The case addresses of `table`: `count` entries when known, else up to where the table
/// visibly ends.
fn read(
    image: &ElfImage,
    fmap: &FunctionMap,
    table: &Table,
    count: Option<u32>,
    f: &Function,
) -> Result<Vec<u32>, String> {
    let width = match table.entry {
        Entry::Address | Entry::Words { .. } => 4,
        Entry::Offset { width, .. } => width,
    };
    let data_end = fmap.data_range(table.start).map_or(f.end, |d| d.end.min(f.end));
    let mut targets = Vec::new();
    let mut min_target = u32::MAX;
    let mut pos = table.start;
    let mut n = 0u32;
    loop {
        match count {
            Some(c) if n >= c => break,
            None if pos >= min_target || pos + width > data_end => break,
            _ => {}
        }
        let bytes = image
            .bytes_at(u64::from(pos), u64::from(width))
            .ok_or_else(|| format!("switch table entry at 0x{pos:08x} is not in the image"))?;
        let target = match table.entry {
            Entry::Address => {
                let w = u32::from_le_bytes([bytes[0], bytes[1], bytes[2], bytes[3]]);
                if w & 1 == 0 || !f.contains(w & !1) || fmap.is_data(w & !1) {
                    if count.is_none() && !targets.is_empty() {
                        break;
                    }
                    return Err(format!(
                        "switch table entry at 0x{pos:08x} is 0x{w:08x}, no Thumb code address inside the function"
                    ));
                }
                w & !1
            }
            Entry::Offset { base, signed, .. } => {
                let e = match (width, signed) {
                    (2, false) => i64::from(u16::from_le_bytes([bytes[0], bytes[1]])),
                    (2, true) => i64::from(i16::from_le_bytes([bytes[0], bytes[1]])),
                    (_, false) => i64::from(bytes[0]),
                    (_, true) => i64::from(bytes[0] as i8),
                };
                let t = u32::try_from(i64::from(base) + 2 * e).unwrap_or(0);
                if t < pos + width && t >= table.start && count.is_none() {
                    // Points into the table itself: padding after the last entry.
                    break;
                }
                if !f.contains(t) || fmap.is_data(t) {
                    return Err(format!(
                        "switch table entry at 0x{pos:08x} jumps to 0x{t:08x}, outside the function's code"
                    ));
                }
                t
            }
            Entry::Words { base } => {
                let w = u32::from_le_bytes([bytes[0], bytes[1], bytes[2], bytes[3]]);
                let t = base.wrapping_add(w) & !1;
                if !f.contains(t) || fmap.is_data(t) {
                    if count.is_none() && !targets.is_empty() {
                        break;
                    }
                    return Err(format!(
                        "switch table entry at 0x{pos:08x} jumps to 0x{t:08x}, outside the function's code"
                    ));
                }
                t
            }
        };
        // Cases after the table end it (a case before it, reached backwards, does not).
        if target > table.start {
            min_target = min_target.min(target);
        }
        targets.push(target);
        pos += width;
        n += 1;
    }
    if targets.is_empty() {
        return Err(format!("switch table at 0x{:08x} has no entries", table.start));
    }
    Ok(targets)
}

/// How libgcc's Thumb-1 case helper `name` (GCC's v6-M switch: `bl __gnu_thumb1_case_uqi` with
/// the case number in r0 and the table right after the `bl`) reads its table, from
/// libgcc/config/arm/lib1funcs.S: byte or halfword entries counting halfwords from the return
/// address, or (`_si`) words counting bytes from the word-aligned return address.
fn gnu_case_entry(name: &str, bl: &Insn) -> Option<(u32, Entry)> {
    let after = bl.addr + u32::from(bl.len);
    match name {
        "__gnu_thumb1_case_uqi" => Some((after, Entry::Offset { width: 1, base: after, signed: false })),
        "__gnu_thumb1_case_sqi" => Some((after, Entry::Offset { width: 1, base: after, signed: true })),
        "__gnu_thumb1_case_uhi" => Some((after, Entry::Offset { width: 2, base: after, signed: false })),
        "__gnu_thumb1_case_shi" => Some((after, Entry::Offset { width: 2, base: after, signed: true })),
        "__gnu_thumb1_case_si" => {
            let base = (after + 3) & !3;
            Some((base, Entry::Words { base }))
        }
        _ => None,
    }
}

/// The case addresses of a GCC v6-M switch: a `bl` to libgcc's `__gnu_thumb1_case_*` helper
/// `callee` (which returns into the selected case, not after the `bl`), or None when `callee`
/// is no such helper.
pub(crate) fn gnu_case_targets(
    image: &ElfImage,
    fmap: &FunctionMap,
    insns: &BTreeMap<u32, Insn>,
    bl: &Insn,
    callee: &str,
    f: &Function,
) -> Option<Result<Vec<u32>, String>> {
    let (start, entry) = gnu_case_entry(callee, bl)?;
    let table = Table { start, entry, index: Some(0), first: bl.addr };
    let count = guarded_count(insns, bl.addr, 0);
    Some(read(image, fmap, &table, count, f))
}
