//! Literal-pool words that hold a function's address only to branch to it: the CMSIS start-up
//! file's `ldr r0, =SystemInit; blx r0; ldr r0, =_start; bx r0`, `-mlong-calls` sequences and
//! `ldr.w pc, [pc, #0]` veneers. Such a load is a direct call or tail call ([`crate::frame`]
//! follows it); the word does not make the function address-taken, which would let every
//! indirect call of the program reach it (`_mainCRTStartup` reached from a stdio hook: false
//! recursion through `main`).
//!
//! A word counts only when every use of it can be seen and is the branch:
//! - it lies in a `$d` range of code (a literal pool), no word of loaded data points into that
//!   range, and no instruction within reach of a PC-relative load (±4 KiB) addresses it other
//!   than by a 4-byte `ldr` into a core register or into PC (no `adr`, `add rX, pc`, `ldrd`,
//!   `vldr` or indexed access that could);
//! - at least one such `ldr` loads it, and after each, in straight-line code, the register is
//!   read by nothing but an unconditional `blx`/`bx` through it before being overwritten;
//! - the function branched to does not read that register before writing it (it receives the
//!   register: `ldr r0, =f; blx r0` passes f's address as its first argument), following its
//!   direct calls a few levels; after a `bx` (a tail call) it must not return with it either.
//!   Everything the check cannot follow (indirect calls, stores, pushes, system calls) counts as
//!   a use, so the word stays address-taken.
//!
//! Not checked: a `movw`/`movt` pair that builds the address of a literal-pool word (no
//! compiler emits one; hand-written assembly reading its own pool through one would be missed).

use std::collections::{BTreeMap, BTreeSet, HashMap};

use mcubench_elf::ElfImage;
use mcubench_elf::functions::{DataRange, Function, FunctionMap};
use mcubench_thumb::{Flow, Insn, Reg};

use crate::InsnSource;

/// Reach of a PC-relative load (`ldr.w Rt, [pc, #±4095]`, from the aligned PC + 4), with margin.
const REACH: u32 = 4104;
/// Most instructions followed after a load before the register's use must be settled.
const MAX_SCAN: usize = 32;
/// Most direct calls followed into when checking that the callee ignores the register.
const MAX_DEPTH: u32 = 4;
/// Most instructions visited by one callee check.
const MAX_VISITS: usize = 2048;

/// Decoded code ranges, by (start, end), decoded once.
struct Code<'a> {
    image: &'a ElfImage,
    fmap: &'a FunctionMap,
    source: &'a dyn InsnSource,
    decoded: HashMap<(u32, u32), std::rc::Rc<Decoded>>,
}

struct Decoded {
    insns: BTreeMap<u32, Insn>,
    /// Decoding failed somewhere in the range.
    errors: bool,
}

impl Code<'_> {
    fn decode(&mut self, f: &Function) -> std::rc::Rc<Decoded> {
        if let Some(d) = self.decoded.get(&(f.start, f.end)) {
            return d.clone();
        }
        let (insns, errors) = crate::frame::decode_function(self.image, self.fmap, f, self.source);
        let d = std::rc::Rc::new(Decoded { insns, errors: !errors.is_empty() || !f.thumb });
        self.decoded.insert((f.start, f.end), d.clone());
        d
    }

    /// Every code range of the executable sections within `lo..hi`: the functions that overlap
    /// it (whole) and the stretches no function covers (decoded from their start).
    fn ranges_around(&self, lo: u32, hi: u32) -> Vec<Function> {
        let fs = self.fmap.functions();
        let mut out: Vec<Function> = Vec::new();
        for section in self.image.sections().iter().filter(|s| s.alloc && s.exec && !s.nobits) {
            let sec_start = section.vma as u32;
            let sec_end = u32::try_from(section.vma.saturating_add(section.size)).unwrap_or(u32::MAX);
            let (lo, hi) = (lo.max(sec_start), hi.min(sec_end));
            if lo >= hi {
                continue;
            }
            let gap = |from: u32, to: u32, out: &mut Vec<Function>| {
                if from < to {
                    out.push(Function {
                        name: format!("code at 0x{from:08x}"),
                        demangled: String::new(),
                        aliases: Vec::new(),
                        start: from,
                        end: to,
                        sized: false,
                        section_index: section.index,
                        thumb: true,
                    });
                }
            };
            // The function covering `lo`, then every one that starts in the window.
            let first = fs.partition_point(|g| g.start < lo);
            let inside = fs[first..].iter().take_while(|g| g.start < hi);
            let mut covered = lo;
            for g in self.fmap.containing(lo).into_iter().chain(inside) {
                if g.end <= lo || g.section_index != section.index || out.last().is_some_and(|l| l.start == g.start) {
                    continue;
                }
                if g.start > covered {
                    gap(covered, g.start, &mut out);
                }
                covered = covered.max(g.end);
                out.push(g.clone());
            }
            if covered < hi {
                gap(covered, hi, &mut out);
            }
        }
        out
    }
}

/// Literal-pool words holding a function's address, by how the code uses them.
#[derive(Debug, Default)]
pub(crate) struct PoolWords {
    /// Used only as a branch target: a direct call, the function is not address-taken.
    pub(crate) branch_only: BTreeSet<u32>,
    /// Read only by PC-relative `ldr` into a register (the address is a constant the code
    /// builds, like a `movw`/`movt` pair): not a word of a function table in data
    /// ([`crate::vtable`]'s assumption covers it).
    pub(crate) loaded_only: BTreeSet<u32>,
}

/// Literal-pool words (their addresses) whose function address is used only as a branch
/// target or only loaded into a register; `skip`: addresses not to consider (the vector
/// table's words).
pub(crate) fn pool_words(
    image: &ElfImage,
    fmap: &FunctionMap,
    source: &dyn InsnSource,
    skip: &dyn Fn(u32) -> bool,
) -> PoolWords {
    let is_fn = |w: u32| w & 1 == 1 && fmap.at(w).is_some();
    // Candidates: aligned function addresses in literal pools; and every loaded word's value,
    // to rule out pools that data points into.
    let mut candidates = Vec::new();
    let mut pointed: Vec<u32> = Vec::new();
    for s in image.sections() {
        if !s.alloc || s.nobits || s.size < 4 {
            continue;
        }
        let data = image.section_data(s);
        let base = s.vma as u32;
        let mut off = ((4 - (base % 4)) % 4) as usize;
        while off + 4 <= data.len() {
            let addr = base.wrapping_add(off as u32);
            let w = u32::from_le_bytes([data[off], data[off + 1], data[off + 2], data[off + 3]]);
            let pool = s.exec && fmap.is_data(addr);
            if pool && is_fn(w) && !skip(addr) {
                candidates.push((addr, w));
            }
            if !s.exec || pool {
                pointed.push(w);
            }
            off += 4;
        }
    }
    let mut out = PoolWords::default();
    if candidates.is_empty() {
        return out;
    }
    pointed.sort_unstable();
    let mut code = Code { image, fmap, source, decoded: HashMap::new() };
    for (addr, w) in candidates {
        let Some(run) = fmap.data_range(addr) else { continue };
        let k = pointed.partition_point(|&p| p < run.start);
        if pointed.get(k).is_some_and(|&p| p < run.end) {
            continue; // data points into this pool: it may be read as a table
        }
        if only_loaded(&mut code, addr, run, Some(w & !1)) {
            out.branch_only.insert(addr);
        } else if only_loaded(&mut code, addr, run, None) {
            out.loaded_only.insert(addr);
        }
    }
    out
}

/// Whether every instruction that can address the word at `addr` (in the pool `run`) is a
/// 4-byte load of it into a register — whose value is only branched through, to `target`, when
/// one is given — and at least one such load exists.
fn only_loaded(code: &mut Code, addr: u32, run: DataRange, target: Option<u32>) -> bool {
    let (lo, hi) = (addr.saturating_sub(REACH), addr.saturating_add(REACH));
    let ranges = code.ranges_around(lo, hi);
    let in_run = |a: u32| a >= run.start && a < run.end;
    let mut loads = 0;
    for g in &ranges {
        let d = code.decode(g);
        if d.errors {
            return false; // code that cannot be read: a load may hide there
        }
        for (&at, i) in d.insns.range(lo..hi) {
            let pc = at.wrapping_add(4) & !3;
            match i.mem {
                // Indexed from PC (TBB/TBH, whose table starts at the unaligned PC + 4): a table
                // in this pool.
                Some(m)
                    if m.base == mcubench_thumb::PC
                        && m.index.is_some()
                        && (in_run(at.wrapping_add(4)) || in_run(pc.wrapping_add(m.offset as u32))) =>
                {
                    return false;
                }
                Some(m) if m.base == mcubench_thumb::PC && m.index.is_some() => {}
                Some(m) if m.base == mcubench_thumb::PC => {
                    let base = pc.wrapping_add(m.offset as u32);
                    let end = base.wrapping_add(m.bytes.max(1));
                    if base >= addr.wrapping_add(4) || end <= addr {
                        continue;
                    }
                    if base != addr || m.bytes != 4 || m.store {
                        return false;
                    }
                    match i.flow {
                        // `ldr.w pc, [pc, #k]`: a veneer's jump; no register holds the address.
                        Flow::JumpIndirect { literal: Some(l) } if l == addr => loads += 1,
                        Flow::Next if i.class == (mcubench_thumb::Class::Load { width: 4 }) => {
                            let Some(rd) = (0..13u8).find(|&r| i.writes.contains(r)) else { return false };
                            if i.writes.0 & !(1 << rd) != 0
                                || target.is_some_and(|t| !used_only_as_branch(code, &d, i, rd, t))
                            {
                                return false;
                            }
                            loads += 1;
                        }
                        _ => return false,
                    }
                }
                // `adr`, `add`/`sub rX, pc, #k`: an address computed from PC, into this pool or
                // not; anything else reading PC (`mov rX, pc`) may be used any way.
                _ if i.reads.contains(mcubench_thumb::PC) && matches!(i.flow, Flow::Next) => match pc_address(i, pc) {
                    Some(a) if !in_run(a) => {}
                    _ => return false,
                },
                _ => {}
            }
        }
    }
    loads > 0
}

/// The address `adr rX, #k` / `add(w) rX, pc, #k` / `sub(w) rX, pc, #k` computes (`pc`: the
/// aligned PC it is relative to).
fn pc_address(i: &Insn, pc: u32) -> Option<u32> {
    let m = i.mnemonic.trim_end_matches(".w").trim_end_matches(".n");
    let ops: Vec<&str> = i.operands.split(',').map(str::trim).collect();
    let imm = |s: &str| -> Option<u32> {
        let s = s.strip_prefix('#')?;
        match s.strip_prefix("0x") {
            Some(h) => u32::from_str_radix(h, 16).ok(),
            None => s.parse().ok(),
        }
    };
    match (m, ops.as_slice()) {
        ("adr", [_, k]) => Some(pc.wrapping_add(imm(k)?)),
        ("add" | "addw", [_, "pc", k]) => Some(pc.wrapping_add(imm(k)?)),
        ("sub" | "subw", [_, "pc", k]) => Some(pc.wrapping_sub(imm(k)?)),
        _ => None,
    }
}

/// `bx rX` / `blx rX` through `r`, unconditional: (is a call).
fn branch_through(i: &Insn, r: Reg) -> Option<bool> {
    if i.conditional {
        return None;
    }
    match i.flow {
        Flow::CallIndirect { reg } if reg == r => Some(true),
        Flow::JumpIndirect { literal: None }
            if i.mnemonic.starts_with("bx") && i.operands.trim() == reg_name(r) && i.mem.is_none() =>
        {
            Some(false)
        }
        _ => None,
    }
}

fn reg_name(r: Reg) -> String {
    match r {
        9 => "sb".into(),
        10 => "sl".into(),
        11 => "fp".into(),
        12 => "ip".into(),
        _ => format!("r{r}"),
    }
}

/// `bkpt 0xab`: a semihosting call, which hands r0 and r1 (and memory r1 points to) to the host.
fn is_semihosting(i: &Insn) -> bool {
    i.len == 2 && i.raw == 0xbeab
}

/// After `load` put `target`'s address in `rd`, straight-line code reads `rd` only to branch
/// through it, and the function branched to does not read it, until `rd` is overwritten or the
/// path ends with that tail call.
fn used_only_as_branch(code: &mut Code, d: &Decoded, load: &Insn, rd: Reg, target: u32) -> bool {
    let mut at = load.addr + u32::from(load.len);
    for _ in 0..MAX_SCAN {
        let Some(i) = d.insns.get(&at) else { return false };
        if let Some(call) = branch_through(i, rd) {
            if !callee_ignores(code, target, rd, !call, 0, &mut 0) {
                return false;
            }
            if !call {
                return true;
            }
            // After the call the register may still hold the address: keep following it.
            at += u32::from(i.len);
            continue;
        }
        if i.reads.contains(rd) || (is_semihosting(i) && rd <= 1) {
            return false;
        }
        if i.writes.contains(rd) && !i.conditional {
            return true;
        }
        if i.flow != Flow::Next {
            return false;
        }
        at += u32::from(i.len);
    }
    false
}

/// Whether function `f`, entered with `r` holding a value, never reads `r` before writing it
/// (its direct callees followed up to [`MAX_DEPTH`]); `tail`: `f` was jumped to, so a return
/// hands `r` on to whoever called the jumping code, which counts as a read.
fn callee_ignores(code: &mut Code, f: u32, r: Reg, tail: bool, depth: u32, visits: &mut usize) -> bool {
    if depth > MAX_DEPTH {
        return false;
    }
    let Some(g) = code.fmap.at(f).cloned() else { return false };
    let d = code.decode(&g);
    let mut seen = BTreeSet::new();
    let mut work = vec![g.start];
    while let Some(at) = work.pop() {
        if !seen.insert(at) {
            continue;
        }
        *visits += 1;
        if *visits > MAX_VISITS {
            return false;
        }
        let Some(i) = d.insns.get(&at) else { return false };
        if i.reads.contains(r) || (is_semihosting(i) && r <= 1) {
            return false;
        }
        let fall = at + u32::from(i.len);
        if i.writes.contains(r) && !i.conditional && i.flow == Flow::Next {
            continue; // overwritten: this path no longer holds the value
        }
        match i.flow {
            Flow::Next => work.push(fall),
            Flow::Branch { target } if g.contains(target) => {
                work.push(target);
                if i.conditional {
                    work.push(fall);
                }
            }
            Flow::Branch { target } => {
                if !callee_ignores(code, target, r, tail, depth + 1, visits) {
                    return false;
                }
                if i.conditional {
                    work.push(fall);
                }
            }
            Flow::Call { target } => {
                if !callee_ignores(code, target, r, false, depth + 1, visits) {
                    return false;
                }
                work.push(fall);
            }
            Flow::Return if !tail => {
                if i.conditional {
                    work.push(fall);
                }
            }
            // Indirect calls and jumps, switch tables, returns of a tail-called function,
            // traps: where the value goes is not followed.
            _ => return false,
        }
    }
    true
}
