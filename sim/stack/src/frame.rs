//! Per-function frames: SP tracked along every path of a function's control-flow graph (its
//! largest excursion is the frame), and every call site with the caller's SP depth there.

use std::collections::{BTreeMap, BTreeSet, HashMap};

use mcubench_elf::ElfImage;
use mcubench_elf::functions::{Function, FunctionMap};
use mcubench_thumb::{DecodeError, Flow, Insn, Reg, SpEffect};
use serde::{Deserialize, Serialize};

use crate::InsnSource;

/// A function's own frame.
#[derive(Debug, Clone, PartialEq, Eq, Serialize, Deserialize)]
#[serde(rename_all = "snake_case", tag = "kind")]
pub enum Frame {
    /// Largest SP excursion of the function's own code, in bytes.
    Known { bytes: u32 },
    /// SP is set from a run-time value (alloca/VLA) at `at`. `bytes` is the static part.
    Dynamic { at: u32, bytes: u32 },
    /// SP differs between paths that meet at `at`.
    Divergent { at: u32, detail: String },
    /// The code could not be followed at `at` (undecodable instruction, execution of data,
    /// falling off the function, unbalanced return).
    Unknown { at: u32, detail: String },
}

impl Frame {
    pub fn bytes(&self) -> Option<u32> {
        match self {
            Frame::Known { bytes } => Some(*bytes),
            _ => None,
        }
    }
}

/// What a call site does.
#[derive(Debug, Clone, PartialEq, Eq, Serialize, Deserialize)]
#[serde(rename_all = "snake_case", tag = "kind")]
pub enum CallKind {
    /// BL/BLX imm, or BLX Rm with a function's address built in Rm (`-mlong-calls`).
    Call { target: u32 },
    /// B/B.W/Bcc/CBZ leaving the function, fall-through into the next function, or a veneer's
    /// jump to a known address (`ldr pc, [pc, #..]`; `movw ip; movt ip; bx ip`).
    Tail { target: u32 },
    /// BLX Rm.
    Indirect,
    /// BX Rm / MOV pc / LDR pc other than a return.
    IndirectTail,
}

/// One call site with the caller's SP excursion when the callee starts.
#[derive(Debug, Clone, PartialEq, Eq, Serialize, Deserialize)]
pub struct CallSite {
    pub at: u32,
    /// Bytes of the caller's frame in use at the call (0 for a tail call after the epilogue).
    pub depth: u32,
    #[serde(flatten)]
    pub kind: CallKind,
    /// For an indirect call: the target was loaded from `[Rn, #slot]` (Rn not SP/PC), e.g. a
    /// Rust vtable method slot.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub slot: Option<u32>,
    /// For an indirect call: the target was loaded from memory at an address the code builds
    /// as a constant (`ldr rX, =sym; ldr rY, [rX, #k]`, or indexed: a table).
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub loaded_from: Option<Loaded>,
    /// For an indirect call shaped like a Rust trait-object method call: the target was loaded
    /// from `[rV, #slot]` where rV is the second word and r0 (the receiver) the first word of
    /// one fat pointer `(data, vtable)`: loaded together (`ldrd`), as two `ldr` of adjacent
    /// words through one value of their base, or passed in r0 and r1 (`sim/stack/src/vtable.rs`).
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub fat_slot: Option<u32>,
    /// For a direct call: the argument registers (r0–r3) that hold a function's Thumb address
    /// at the call, as (register, address without the Thumb bit): what `atexit(f)` registers
    /// (crate::crt).
    #[serde(default, skip_serializing_if = "Vec::is_empty")]
    pub fn_args: Vec<(u8, u32)>,
}

/// Where an indirect call's target was loaded from, when the address is a constant.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Serialize, Deserialize)]
#[serde(rename_all = "snake_case", tag = "kind")]
pub enum Loaded {
    /// The word at `addr` (a global function pointer, a struct slot, a table entry at a constant
    /// index).
    Word { addr: u32 },
    /// A word at a run-time index into the table that starts at or contains `base`.
    Table { base: u32 },
}

/// Frame and call sites of one function.
#[derive(Debug, Clone, PartialEq, Eq, Serialize, Deserialize)]
pub struct FunctionStack {
    pub name: String,
    pub demangled: String,
    pub start: u32,
    pub end: u32,
    pub frame: Frame,
    pub calls: Vec<CallSite>,
    /// Constants built by `movw`/`movt` that are Thumb addresses of functions.
    #[serde(default, skip_serializing_if = "Vec::is_empty")]
    pub address_consts: Vec<u32>,
    /// Bytes of this function's frame in use at addresses inside it that other functions
    /// branch to (libgcc's `__aeabi_ui2d` jumps into the body of `__adddf3`): such a branch is
    /// a tail call into the rest of this function. Only addresses its own paths reach.
    #[serde(default, skip_serializing_if = "Vec::is_empty")]
    pub entry_depths: Vec<(u32, u32)>,
    /// Instructions that hand the core over to other code with a new stack (`msr msp, rX`
    /// or `mov sp, rX` followed by an indirect jump: a bootloader starting its
    /// application): paths end there, leaving the analysed program.
    #[serde(default, skip_serializing_if = "Vec::is_empty")]
    pub handoffs: Vec<u32>,
    /// For a frame divergent only because an SP loop's trip count is not a constant the code
    /// shows: (trip count assumed for every such loop, frame in bytes) for the counts where
    /// SP balances at every return, the candidates for a `frames:` annotation.
    #[serde(default, skip_serializing_if = "Vec::is_empty")]
    pub frame_candidates: Vec<(u32, u32)>,
    /// The instruction that sets SP as the function's first act, before it uses any stack
    /// (crt0's `mov sp, r3` to `__stack`): the stack starts afresh there, at its top. A call
    /// of this function from code it reaches itself restarts the program's stack rather than
    /// growing it (the `crt` module).
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub stack_reset: Option<u32>,
}

/// ARM semihosting operations that do not return: SYS_EXIT (0x18) and SYS_EXIT_EXTENDED (0x20).
const SEMIHOSTING_EXITS: [i32; 2] = [0x18, 0x20];

/// `bkpt 0xab`: a semihosting call (the operation in r0).
fn is_semihosting(insn: &Insn) -> bool {
    insn.len == 2 && insn.raw == 0xbeab
}

#[derive(Debug, Clone, Copy, PartialEq, Eq)]
enum Sp {
    /// Offset from SP at entry (≤ 0 while a frame is live).
    Known(i32),
    Dynamic,
}

#[derive(Debug, Clone, PartialEq, Eq)]
struct State {
    sp: Sp,
    /// Registers with a known value: entry-SP + offset (frame pointers) or a constant (literal
    /// loads and immediate moves, for Thumb-1 `ldr r6, =-N; add sp, r6`).
    regs: [Option<Val>; 16],
    /// SP saved in the frame (`str sp, [r7, #k]`, GCC's stack save around a block-scoped VLA):
    /// (slot address, SP when saved), both relative to entry SP; `ldr sp, [r7, #k]` restores it.
    saved_sp: Option<(i32, i32)>,
}

#[derive(Debug, Clone, Copy, PartialEq, Eq)]
enum Val {
    /// Entry SP + offset.
    Sp(i32),
    Const(i32),
    /// Loaded from `[Rn, #offset]` with Rn neither SP nor PC (a vtable or struct slot).
    Slot(u32),
    /// Loaded from memory whose address is a known constant.
    Loaded(Loaded),
    /// The word at `[base + off]` (`base` as it is now), loaded by the `ldr` at `at`: one half
    /// of a two-word pair once the other half is loaded too. `slot`: the load was a plain
    /// `[Rn, #k]` with `k ≥ 0` (what [`Val::Slot`] records).
    Half {
        base: Reg,
        off: i32,
        at: u32,
        slot: bool,
    },
    /// First (data) or second (vtable) word of the fat pointer loaded together by the
    /// instruction(s) ending at the address given (`ldrd`, or two `ldr` of adjacent words).
    FatData(u32),
    FatVtable(u32),
    /// Loaded from `[rV, #slot]` where rV held `FatVtable(pair)`.
    FatSlot {
        slot: u32,
        pair: u32,
    },
    /// Loaded from `[rV, #slot]` where rV held `Half { base, off }`: a method, if the word below
    /// that half is the receiver in r0 at the call.
    HalfSlot {
        slot: u32,
        base: Reg,
        off: i32,
    },
}

/// One IT block: the addresses of its instructions with their sense (true: then).
#[derive(Debug, Clone)]
struct ItBlock {
    insns: Vec<(u32, bool)>,
    end: u32,
    /// When every instruction of the block has the IT's own condition and the block ends at
    /// a branch on that same condition (`itt ne; ldrne r5, [r4, #4]; cmpne r5, #0; bne x`):
    /// the address after that branch. With the block skipped the flags are unchanged, so the
    /// branch is not taken.
    skipped_past: Option<u32>,
}

impl ItBlock {
    /// The next instruction of the block after `addr` executed when `addr` was executed
    /// (`same`) or skipped, or the end of the block.
    fn next(&self, addr: u32, same: bool) -> u32 {
        let Some(k) = self.insns.iter().position(|(a, _)| *a == addr) else { return self.end };
        let sense = self.insns[k].1;
        let next = self.insns[k + 1..].iter().find(|(_, s)| (*s == sense) == same).map_or(self.end, |(a, _)| *a);
        match self.skipped_past {
            Some(past) if !same && next == self.end => past,
            _ => next,
        }
    }
}

/// IT blocks of a function whose conditions stay fixed inside the block (no instruction in the
/// block writes the flags, or only its last one, after its own condition was evaluated): every
/// instruction of such a block maps to it.
fn it_blocks(insns: &BTreeMap<u32, Insn>) -> HashMap<u32, std::rc::Rc<ItBlock>> {
    let mut out = HashMap::new();
    for (&a, i) in insns {
        if i.class != mcubench_thumb::Class::It {
            continue;
        }
        let mask = i.mnemonic.trim_end_matches(".w").trim_end_matches(".n");
        let Some(rest) = mask.strip_prefix("it") else { continue };
        let senses: Vec<bool> = std::iter::once(true).chain(rest.chars().map(|c| c == 't')).collect();
        let mut block = Vec::new();
        let mut at = a + u32::from(i.len);
        let mut flags_safe = true;
        for (k, &sense) in senses.iter().enumerate() {
            let Some(x) = insns.get(&at) else {
                flags_safe = false;
                break;
            };
            if writes_flags(x) && k + 1 < senses.len() {
                flags_safe = false;
            }
            block.push((at, sense));
            at += u32::from(x.len);
        }
        if flags_safe {
            let cond = i.operands.trim();
            let skipped_past = insns
                .get(&at)
                .filter(|b| {
                    senses.iter().all(|&s| s)
                        && matches!(b.flow, Flow::Branch { .. })
                        && b.conditional
                        && b.mnemonic.trim_end_matches(".w").trim_end_matches(".n").strip_prefix('b') == Some(cond)
                })
                .map(|b| at + u32::from(b.len));
            let b = std::rc::Rc::new(ItBlock { insns: block.clone(), end: at, skipped_past });
            for (x, _) in block {
                out.insert(x, b.clone());
            }
        }
    }
    out
}

/// Whether an instruction inside an IT block may change the condition flags.
fn writes_flags(i: &Insn) -> bool {
    let m = i.mnemonic.trim_end_matches(".w").trim_end_matches(".n");
    if ["cmp", "cmn", "tst", "teq", "vmrs", "msr"].iter().any(|p| m.starts_with(p)) {
        return true;
    }
    // Strip the condition suffix: a flag-setting data-processing form ends in `s` before it.
    let base = if m.len() > 2 { &m[..m.len() - 2] } else { m };
    base.ends_with('s')
        && !base.starts_with("pop")
        && !base.starts_with("ldm")
        && !base.starts_with("stm")
        && !base.starts_with("vpop")
        && !base.starts_with("vldm")
        && !base.starts_with("vstm")
}

/// Bytes of `f`'s frame in use just before the instruction at `addr` (entry SP minus SP there),
/// when every path that reaches it agrees: where a fault handler that pushed registers first
/// stopped, the exception frame lies that far above SP.
pub fn depth_at(image: &ElfImage, f: &Function, source: &dyn InsnSource, addr: u32) -> Option<u32> {
    let fmap = FunctionMap::new(image);
    function_stack(image, &fmap, f, source, &[addr]).entry_depths.first().map(|&(_, depth)| depth)
}

/// The memory accesses of `insns`, run in order, at addresses the constants in registers give:
/// (instruction, address) for each load or store with an immediate offset from a register known to
/// hold a constant (`known` before the first; set by literal loads, `movw`/`movt` and the rest
/// of [`const_def`]), not SP or PC. For callers that look for fixed addresses in code (the scans
/// of `mcubench` for the DWT cycle counter and the ITM, and for what a hung loop reads).
pub fn constant_accesses<'a>(
    image: &ElfImage,
    insns: impl IntoIterator<Item = &'a Insn>,
    known: [Option<u32>; 16],
) -> Vec<(&'a Insn, u32)> {
    use mcubench_thumb::Class;
    let mut regs = known.map(|v| v.map(|c| Val::Const(c as i32)));
    let mut out = Vec::new();
    for insn in insns {
        if let Some(m) = insn.mem.filter(|m| m.index.is_none() && m.base != 13 && m.base != 15)
            && matches!(
                insn.class,
                Class::Load { .. }
                    | Class::LoadDouble
                    | Class::LoadMultiple { .. }
                    | Class::Store { .. }
                    | Class::StoreDouble
                    | Class::StoreMultiple { .. }
            )
            && let Some(Val::Const(base)) = regs[usize::from(m.base) & 15]
        {
            out.push((insn, (base as u32).wrapping_add(m.offset as u32)));
        }
        let set = const_def(image, insn, &regs);
        for (r, v) in regs.iter_mut().enumerate() {
            if insn.writes.0 & (1 << r) != 0 {
                *v = None;
            }
        }
        if let Some((r, c)) = set {
            regs[usize::from(r) & 15] = Some(Val::Const(c));
        }
    }
    out
}

/// Value of a register after an instruction that sets it to a constant (`movs rd, #imm`,
/// `mov.w`, `movw`, `movt` on a known constant, `ldr rd, [pc, #imm]`, `mov rd, rm` of a known
/// constant), or computes one from a known constant the way GCC builds constants for ARMv6-M,
/// which has no wide immediates (`movs r3, #141; lsls r3, r3, #3; add sp, r3`: shifts, `negs`,
/// `mvns`).
fn const_def(image: &ElfImage, insn: &Insn, regs: &[Option<Val>; 16]) -> Option<(Reg, i32)> {
    if insn.conditional {
        return None;
    }
    let m = insn.mnemonic.trim_end_matches(".w").trim_end_matches(".n");
    if !matches!(
        m,
        "mov"
            | "movs"
            | "movw"
            | "movt"
            | "ldr"
            | "lsl"
            | "lsls"
            | "lsr"
            | "lsrs"
            | "asr"
            | "asrs"
            | "neg"
            | "negs"
            | "rsb"
            | "rsbs"
            | "mvn"
            | "mvns"
    ) {
        return None;
    }
    let ops: Vec<&str> = insn.operands.split(',').map(str::trim).collect();
    let rd = parse_reg(ops.first()?)?;
    let known = |r: &str| match regs[usize::from(parse_reg(r)?)]? {
        Val::Const(c) => Some(c),
        _ => None,
    };
    match (m, ops.as_slice()) {
        ("lsl" | "lsls" | "lsr" | "lsrs" | "asr" | "asrs", [_, n, i]) => {
            let (c, k) = (known(n)?, parse_imm(i)?);
            let k = u32::try_from(k).ok().filter(|&k| k < 32)?;
            Some((
                rd,
                match m {
                    "lsl" | "lsls" => ((c as u32) << k) as i32,
                    "lsr" | "lsrs" => ((c as u32) >> k) as i32,
                    _ => c >> k,
                },
            ))
        }
        ("neg" | "negs", [_, n]) | ("rsb" | "rsbs", [_, n, "#0"]) => Some((rd, known(n)?.wrapping_neg())),
        ("mvn" | "mvns", [_, n]) if parse_reg(n).is_some() => Some((rd, !known(n)?)),
        ("mov" | "movs", [_, r]) if parse_reg(r).is_some() => match regs[usize::from(parse_reg(r)?)]? {
            Val::Const(c) => Some((rd, c)),
            _ => None,
        },
        ("mov" | "movs" | "movw", [_, i]) => Some((rd, parse_imm(i)?)),
        ("movt", [_, i]) => match regs[usize::from(rd)]? {
            Val::Const(lo) => Some((rd, ((lo as u32 & 0xffff) | ((parse_imm(i)? as u32) << 16)) as i32)),
            _ => None,
        },
        ("ldr", _) => {
            let mem = insn.mem?;
            if mem.base != mcubench_thumb::PC || mem.index.is_some() || mem.bytes != 4 || mem.store {
                return None;
            }
            let lit = ((insn.addr.wrapping_add(4)) & !3).wrapping_add(mem.offset as u32);
            Some((rd, image.word_at(u64::from(lit))? as i32))
        }
        _ => None,
    }
}

/// The address a 4-byte access `[base, #offset]` (no index, no writeback) reaches, relative to
/// entry SP, when its base is SP or a register holding entry SP + a known offset.
fn frame_slot(m: &mcubench_thumb::Mem, state: &State) -> Option<i32> {
    if m.index.is_some() || m.writeback {
        return None;
    }
    let base = if m.base == mcubench_thumb::SP {
        match state.sp {
            Sp::Known(o) => o,
            Sp::Dynamic => return None,
        }
    } else {
        match state.regs.get(usize::from(m.base)).copied().flatten() {
            Some(Val::Sp(b)) => b,
            _ => return None,
        }
    };
    base.checked_add(m.offset)
}

/// Whether `insn` stores SP itself (`str sp, [r7, #k]`).
fn stores_sp(insn: &Insn) -> bool {
    insn.mnemonic.starts_with("str")
        && insn.mem.is_some_and(|m| m.store && m.bytes == 4)
        && insn.operands.split(',').next().map(str::trim) == Some("sp")
}

/// The saved SP `insn` (`ldr sp, [r7, #k]`) restores, relative to entry, when it loads the
/// slot SP was saved to.
fn sp_restore(insn: &Insn, state: &State) -> Option<i32> {
    let (slot, saved) = state.saved_sp?;
    let m = insn.mem?;
    let is_ldr_sp = insn.mnemonic.starts_with("ldr")
        && !m.store
        && m.bytes == 4
        && insn.operands.split(',').next().map(str::trim) == Some("sp");
    (is_ldr_sp && !insn.conditional && frame_slot(&m, state) == Some(slot)).then_some(saved)
}

/// The saved-SP slot after `insn`: set by `str sp, [rN, #k]` with a known slot and SP; kept
/// unless a store of known address overlaps it, or one based on SP or the frame whose address
/// is not known. Stores through other pointers and callees are taken not to write it (it is
/// the compiler's slot, no C object).
fn track_sp_save(insn: &Insn, state: &State, sp_effect: SpEffect) -> Option<(i32, i32)> {
    let Some(m) = insn.mem.filter(|m| m.store) else { return state.saved_sp };
    if insn.conditional {
        return None;
    }
    if stores_sp(insn) {
        return match (frame_slot(&m, state), state.sp) {
            (Some(slot), Sp::Known(o)) => Some((slot, o)),
            _ => None,
        };
    }
    let (slot, saved) = state.saved_sp?;
    let range = match (frame_slot(&m, state), sp_effect, state.sp) {
        (Some(a), _, _) => Some((a, a.saturating_add(m.bytes as i32))),
        // push / stmdb sp!: the bytes just below SP.
        (None, SpEffect::Adjust(d), Sp::Known(o)) if m.base == mcubench_thumb::SP && m.writeback && d < 0 => {
            Some((o.saturating_add(d), o))
        }
        _ => None,
    };
    match range {
        Some((lo, hi)) if hi <= slot || lo >= slot.saturating_add(4) => Some((slot, saved)),
        Some(_) => None,
        // A store based on SP or the frame whose address is not known: it may be the slot.
        None if m.base == mcubench_thumb::SP
            || matches!(state.regs.get(usize::from(m.base)).copied().flatten(), Some(Val::Sp(_))) =>
        {
            None
        }
        None => Some((slot, saved)),
    }
}

/// `add sp, rN` / `add sp, sp, rN` / `sub sp, sp, rN` with a constant in rN: the SP change.
fn sp_plus_const(insn: &Insn, regs: &[Option<Val>; 16]) -> Option<i32> {
    let m = insn.mnemonic.trim_end_matches(".w").trim_end_matches(".n");
    let sign: i32 = match m {
        "add" => 1,
        "sub" => -1,
        _ => return None,
    };
    let ops: Vec<&str> = insn.operands.split(',').map(str::trim).collect();
    let rn = match ops.as_slice() {
        ["sp", r] if sign == 1 => r,
        ["sp", "sp", r] => r,
        _ => return None,
    };
    match regs[usize::from(parse_reg(rn)?)]? {
        Val::Const(c) => sign.checked_mul(c),
        _ => None,
    }
}

fn parse_reg(s: &str) -> Option<Reg> {
    match s {
        "fp" => Some(11),
        "ip" => Some(12),
        "sb" => Some(9),
        "sl" => Some(10),
        _ => s.strip_prefix('r')?.parse::<u8>().ok().filter(|&r| r <= 12),
    }
}

fn parse_imm(s: &str) -> Option<i32> {
    let s = s.strip_prefix('#')?;
    let (neg, s) = match s.strip_prefix('-') {
        Some(rest) => (true, rest),
        None => (false, s),
    };
    let v = match s.strip_prefix("0x") {
        Some(h) => u32::from_str_radix(h, 16).ok()? as i32,
        None => s.parse::<u32>().ok()? as i32,
    };
    Some(if neg { v.wrapping_neg() } else { v })
}

/// Decode `f` (skipping `$d` ranges) into an address → instruction map; errors by address.
pub(crate) fn decode_function(
    image: &ElfImage,
    fmap: &FunctionMap,
    f: &Function,
    source: &dyn InsnSource,
) -> (BTreeMap<u32, Insn>, BTreeMap<u32, String>) {
    let mut insns = BTreeMap::new();
    let mut errors = BTreeMap::new();
    let mut addr = f.start;
    while addr < f.end {
        if let Some(d) = fmap.data_range(addr) {
            addr = d.end.max(addr + 2);
            continue;
        }
        let chunk_end = fmap.next_data(addr).map_or(f.end, |d| d.start.min(f.end));
        match image.bytes_at(u64::from(addr), u64::from(chunk_end - addr)) {
            Some(bytes) => {
                for r in source.decode_block(addr, bytes) {
                    match r {
                        Ok(i) => {
                            insns.insert(i.addr, i);
                        }
                        Err(e) => {
                            let at = match &e {
                                DecodeError::Truncated { addr }
                                | DecodeError::Undecodable { addr, .. }
                                | DecodeError::NotOnArch { addr, .. } => *addr,
                            };
                            errors.insert(at, e.to_string());
                        }
                    }
                }
            }
            None => {
                errors.insert(addr, format!("0x{addr:08x}: no loaded bytes"));
            }
        }
        // Progress even if a data range were empty (FunctionMap keeps none): input is untrusted.
        addr = chunk_end.max(addr.saturating_add(2));
    }
    (insns, errors)
}

/// Number of TBB/TBH entries from a preceding `cmp Rn, #imm` on the index register.
fn table_entries_from_cmp(insns: &BTreeMap<u32, Insn>, tb: &Insn, index: Reg) -> Option<u32> {
    let reg = format!("r{index}");
    for (_, i) in insns.range(..tb.addr).rev().take(4) {
        if i.mnemonic.starts_with("cmp") {
            let ops: Vec<&str> = i.operands.split(',').map(str::trim).collect();
            if ops.len() == 2 && ops[0] == reg {
                let imm = ops[1].trim_start_matches('#');
                let n = if let Some(h) = imm.strip_prefix("0x") {
                    u32::from_str_radix(h, 16).ok()
                } else {
                    imm.parse::<u32>().ok()
                };
                return n.map(|n| n + 1);
            }
            return None;
        }
        if i.writes.contains(index) || !matches!(i.flow, Flow::Next | Flow::Branch { .. }) {
            return None;
        }
    }
    None
}

/// Targets of a TBB/TBH whose table starts at `table`.
#[allow(clippy::too_many_arguments)]
fn table_targets(
    image: &ElfImage,
    fmap: &FunctionMap,
    insns: &BTreeMap<u32, Insn>,
    tb: &Insn,
    table: u32,
    halfword: bool,
    index: Reg,
    f: &Function,
) -> Result<Vec<u32>, String> {
    let base = tb.addr + 4;
    let width = if halfword { 2 } else { 1 };
    let counted = table_entries_from_cmp(insns, tb, index);
    let data_end = fmap.data_range(table).map_or(f.end, |d| d.end.min(f.end));
    let mut targets = Vec::new();
    let mut min_target = u32::MAX;
    let mut pos = table;
    let mut n = 0u32;
    loop {
        match counted {
            Some(c) if n >= c => break,
            None if pos >= min_target || pos + width > data_end => break,
            _ => {}
        }
        let bytes = image
            .bytes_at(u64::from(pos), u64::from(width))
            .ok_or_else(|| format!("table entry at 0x{pos:08x} is not in the image"))?;
        let entry = if halfword { u32::from(u16::from_le_bytes([bytes[0], bytes[1]])) } else { u32::from(bytes[0]) };
        let target = base + 2 * entry;
        if target < pos + width && counted.is_none() {
            // Points into the table itself: padding after the last entry.
            break;
        }
        if !f.contains(target) {
            return Err(format!("table entry at 0x{pos:08x} jumps to 0x{target:08x}, outside the function"));
        }
        min_target = min_target.min(target);
        targets.push(target);
        pos += width;
        n += 1;
    }
    if targets.is_empty() {
        return Err("table has no entries".into());
    }
    Ok(targets)
}

/// Most local subroutines nested in one another (`bl` to a label whose code `bl`s to another
/// label): deeper is taken as recursion, which no frame bounds.
const MAX_SUBROUTINE_NESTING: u32 = 8;
/// Most iterations simulated to find an SP loop's trip count; a loop that runs longer is
/// treated as one whose count the code does not show.
const MAX_LOOP_TRIPS: u32 = 1 << 16;
/// Trip counts tried for an SP loop whose count the code does not show: the frame for each
/// is offered as an annotation candidate.
const CANDIDATE_TRIPS: std::ops::RangeInclusive<u32> = 1..=4;

/// A function's (or a subroutine's) instructions, decode errors and IT blocks.
struct Decoded {
    insns: BTreeMap<u32, Insn>,
    errors: BTreeMap<u32, String>,
    its: HashMap<u32, std::rc::Rc<ItBlock>>,
}

/// A local subroutine walked: its entry and the trip count assumed for unknown SP loops.
type SubKey = (u32, Option<u32>);

/// What one analysis of a function needs, with the code ranges decoded so far and the local
/// subroutines walked so far (a helper `bl`ed ten times is walked once).
struct Cx<'a> {
    image: &'a ElfImage,
    fmap: &'a FunctionMap,
    source: &'a dyn InsnSource,
    decoded: std::cell::RefCell<HashMap<(u32, u32), std::rc::Rc<Decoded>>>,
    subs: std::cell::RefCell<HashMap<SubKey, std::rc::Rc<Walked>>>,
}

impl Cx<'_> {
    fn decoded(&self, f: &Function) -> std::rc::Rc<Decoded> {
        if let Some(d) = self.decoded.borrow().get(&(f.start, f.end)) {
            return d.clone();
        }
        let (insns, errors) = decode_function(self.image, self.fmap, f, self.source);
        let its = it_blocks(&insns);
        let d = std::rc::Rc::new(Decoded { insns, errors, its });
        self.decoded.borrow_mut().insert((f.start, f.end), d.clone());
        d
    }

    /// The code range a local subroutine at `target` (`bl` to a label that is no function's
    /// start) runs in: the calling function's when the label is inside it, else the function
    /// whose body holds it, else from the label to the next function, data or section end
    /// (assembly helpers placed before the first typed function of a file).
    fn subroutine_range(&self, f: &Function, target: u32) -> Option<Function> {
        if f.contains(target) {
            return Some(f.clone());
        }
        if let Some(g) = self.fmap.containing(target) {
            return Some(g.clone());
        }
        let section = self.image.sections().iter().find(|s| s.alloc && s.exec && s.contains_vma(u64::from(target)))?;
        let section_end = u32::try_from(section.vma.saturating_add(section.size)).unwrap_or(u32::MAX);
        let fs = self.fmap.functions();
        let next_fn = fs.get(fs.partition_point(|g| g.start <= target)).map_or(u32::MAX, |g| g.start);
        let next_data = self.fmap.next_data(target).map_or(u32::MAX, |d| d.start);
        let end = section_end.min(next_fn).min(next_data);
        (end > target).then(|| Function {
            name: f.name.clone(),
            demangled: f.demangled.clone(),
            aliases: Vec::new(),
            start: target,
            end,
            sized: false,
            section_index: section.index,
            thumb: true,
        })
    }
}

/// The result of walking a function or a local subroutine.
struct Walked {
    stack: FunctionStack,
    /// A return with SP not where it was at entry: the code is no subroutine (the Thumb-1 far
    /// branch LLVM emits as `bl` to a block of the same function).
    unbalanced: bool,
    /// An SP loop whose trip count the code does not show made the frame divergent.
    unknown_loop: bool,
    /// Registers the code may write (bit per register), callees' scratch registers included.
    written: u16,
}

/// The pair of a fat pointer passed in r0 and r1 at a function's entry (odd: no instruction
/// starts at an odd address, which tags the pairs loaded from memory).
const ENTRY_PAIR: u32 = 1;

/// How a walk runs: in a function (`nest` 0) or a local subroutine nested `nest` deep, and the
/// trip count assumed for SP loops whose count the code does not show (candidates only).
#[derive(Debug, Clone, Copy)]
struct Mode {
    nest: u32,
    trips: Option<u32>,
}

/// Frame and call sites of `f`; `want`: addresses inside `f` whose frame depth to record in
/// [`FunctionStack::entry_depths`] (targets of other functions' branches into its body).
pub(crate) fn function_stack(
    image: &ElfImage,
    fmap: &FunctionMap,
    f: &Function,
    source: &dyn InsnSource,
    want: &[u32],
) -> FunctionStack {
    let cx = Cx { image, fmap, source, decoded: Default::default(), subs: Default::default() };
    let w = walk(&cx, f, f.start, Mode { nest: 0, trips: None }, want);
    let mut out = w.stack;
    if w.unknown_loop && matches!(out.frame, Frame::Divergent { .. }) {
        // The frame for each trip count (the same for every such loop of the function: a
        // buffer pushed n times is popped n times), where SP then balances: paste-ready
        // candidates for a `frames:` annotation.
        cx.subs.borrow_mut().clear();
        for n in CANDIDATE_TRIPS {
            let c = walk(&cx, f, f.start, Mode { nest: 0, trips: Some(n) }, &[]);
            if let Frame::Known { bytes } = c.stack.frame {
                out.frame_candidates.push((n, bytes));
            }
        }
    }
    out
}

/// SP tracked along every path of `f` from `entry`.
fn walk(cx: &Cx, f: &Function, entry: u32, mode: Mode, want: &[u32]) -> Walked {
    let (image, fmap) = (cx.image, cx.fmap);
    let mut out = FunctionStack {
        name: f.name.clone(),
        demangled: f.demangled.clone(),
        start: f.start,
        end: f.end,
        frame: Frame::Known { bytes: 0 },
        calls: Vec::new(),
        address_consts: Vec::new(),
        entry_depths: Vec::new(),
        handoffs: Vec::new(),
        frame_candidates: Vec::new(),
        stack_reset: None,
    };
    let mut walked = Walked { stack: out.clone(), unbalanced: false, unknown_loop: false, written: 0 };
    let mut address_consts = BTreeSet::new();
    if !f.thumb {
        out.frame = Frame::Unknown { at: f.start, detail: "ARM-state code (not executable on Cortex-M)".into() };
        walked.stack = out;
        return walked;
    }
    let decoded = cx.decoded(f);
    let (insns, errors, its) = (&decoded.insns, &decoded.errors, &decoded.its);
    let mut states: HashMap<u32, State> = HashMap::new();
    let mut work: Vec<u32> = vec![entry];
    // At the function's own entry, r0 and r1 may be a fat pointer passed by value (`output:
    // &mut dyn Write` of core::fmt::write): pair 1 (no instruction address is odd).
    let mut entry_regs = [None; 16];
    if entry == f.start && mode.nest == 0 {
        entry_regs[0] = Some(Val::FatData(ENTRY_PAIR));
        entry_regs[1] = Some(Val::FatVtable(ENTRY_PAIR));
    }
    states.insert(entry, State { sp: Sp::Known(0), regs: entry_regs, saved_sp: None });
    // Bytes below entry SP. An offset of i32::MIN (2 GiB) has no i32 negation: unsigned_abs.
    let mut max_depth: u32 = 0;
    let mut dynamic_at: Option<u32> = None;
    let mut failure: Option<Frame> = None;
    // Keyed by (address, kind tag, address of the site inside a local subroutine or 0).
    let mut calls: BTreeMap<(u32, u8, u32), CallSite> = BTreeMap::new();
    // SP offsets at BLs followed as jumps inside the function, and `bx lr` returns with a
    // frame live.
    let mut local_call_sps: BTreeSet<i32> = BTreeSet::new();
    let mut local_returns: Vec<(u32, i32)> = Vec::new();
    let mut handoffs: BTreeSet<u32> = BTreeSet::new();
    let mut written: u16 = 0;
    let mut stack_reset: Option<u32> = None;

    // The first instruction from the entry that moves SP, when no call, return or store comes
    // before it: SP set there starts the stack afresh (crt0).
    let first_sp_write = insns
        .range(entry..)
        .map(|(_, i)| i)
        .find(|i| i.sp != SpEffect::None || i.mem.is_some_and(|m| m.store) || !matches!(i.flow, Flow::Next))
        .filter(|i| i.sp != SpEffect::None && i.mem.is_none())
        .map(|i| i.addr);
    let depth_of = |sp: Sp| match sp {
        Sp::Known(o) => o.min(0).unsigned_abs(),
        Sp::Dynamic => 0,
    };

    'work: while let Some(addr) = work.pop() {
        let state = states[&addr].clone();
        let Some(insn) = insns.get(&addr) else {
            let detail = if let Some(e) = errors.get(&addr) {
                format!("cannot decode: {e}")
            } else if fmap.is_data(addr) {
                format!("execution reaches data (literal pool or table) at 0x{addr:08x}")
            } else {
                format!("branch into the middle of an instruction at 0x{addr:08x}")
            };
            failure.get_or_insert(Frame::Unknown { at: addr, detail });
            continue;
        };
        written |= insn.writes.0;
        // Inside an IT block whose flags stay fixed, only the first instruction is a two-way
        // choice: the ones after it are reached only on the path where they execute.
        let cond = insn.conditional && its.get(&addr).is_none_or(|b| b.insns[0].0 == addr);
        // Apply the SP effect.
        let mut next = state.clone();
        let sp_effect = match (insn.sp, sp_plus_const(insn, &state.regs)) {
            (SpEffect::Dynamic, Some(d)) => SpEffect::Adjust(d),
            (e, _) => e,
        };
        // `ldr sp, [r7, #k]` from the slot SP was saved to: SP is what was saved.
        let restored = (sp_effect == SpEffect::Dynamic).then(|| sp_restore(insn, &state)).flatten();
        let sp_effect = match (restored, state.sp) {
            (Some(v), Sp::Known(o)) => SpEffect::Adjust(v - o),
            _ => sp_effect,
        };
        // SP set from a value the code does not show, then an indirect jump with no stack use
        // in between: a hand-off to other code (a bootloader starting the application), which
        // leaves the analysed program: the path ends here.
        let unknown_sp = match sp_effect {
            SpEffect::Dynamic => true,
            SpEffect::FromReg { reg, .. } => {
                !matches!(state.regs.get(usize::from(reg)).copied().flatten(), Some(Val::Sp(_)))
            }
            _ => false,
        };
        if unknown_sp && !insn.conditional && is_handoff(insns, insn) {
            handoffs.insert(addr);
            continue;
        }
        match sp_effect {
            SpEffect::None => {}
            SpEffect::Adjust(d) => {
                if let Sp::Known(o) = next.sp {
                    // Overflowing i32 is only possible in garbage code: fail closed.
                    next.sp = o.checked_add(d).map_or_else(
                        || {
                            dynamic_at.get_or_insert(addr);
                            Sp::Dynamic
                        },
                        Sp::Known,
                    );
                }
            }
            SpEffect::FromReg { reg, offset } => {
                next.sp = match state.regs.get(usize::from(reg)).copied().flatten() {
                    Some(Val::Sp(v)) if v.checked_add(offset).is_some() => Sp::Known(v + offset),
                    // SP loaded before the function has used any stack (libgloss crt0's
                    // `mov sp, r3` to `__stack` as the reset handler's first act): the stack
                    // starts afresh at the new SP, taken to be the top of the stack being bounded
                    // (docs/src/explain/static-stack.md).
                    _ if Some(addr) == first_sp_write && state.sp == Sp::Known(0) => {
                        stack_reset.get_or_insert(addr);
                        Sp::Known(0)
                    }
                    _ => {
                        dynamic_at.get_or_insert(addr);
                        Sp::Dynamic
                    }
                };
            }
            // `mov sp, rX` before the function has used any stack: see FromReg above.
            SpEffect::Dynamic
                if insn.mnemonic.starts_with("mov")
                    && insn.operands.trim_start().starts_with("sp,")
                    && Some(addr) == first_sp_write
                    && state.sp == Sp::Known(0) =>
            {
                stack_reset.get_or_insert(addr);
                next.sp = Sp::Known(0);
            }
            SpEffect::Dynamic => {
                dynamic_at.get_or_insert(addr);
                next.sp = Sp::Dynamic;
            }
        }
        // Register tracking: writes kill, an SP copy, constant or known arithmetic defines.
        for r in 0..16u8 {
            if insn.writes.contains(r) {
                next.regs[usize::from(r)] = None;
            }
        }
        // A pair half names its base register: once the base is written it is only the slot
        // it was loaded from.
        for v in next.regs.iter_mut() {
            match *v {
                Some(Val::Half { base, off, slot, .. }) if insn.writes.contains(base) => {
                    *v = slot.then_some(Val::Slot(off as u32));
                }
                Some(Val::HalfSlot { slot, base, .. }) if insn.writes.contains(base) => *v = Some(Val::Slot(slot)),
                _ => {}
            }
        }
        // Successor addresses when the instruction executes / is skipped: inside an IT block
        // whose flags stay fixed, the other instructions of the same sense follow it.
        let len_fall = addr + u32::from(insn.len);
        let (exec_fall, skip_fall) = match its.get(&addr) {
            Some(b) if insn.conditional => (b.next(addr, true), b.next(addr, false)),
            _ => (len_fall, len_fall),
        };
        let split = cond && matches!(insn.flow, Flow::Next) && (sp_effect != SpEffect::None || its.contains_key(&addr));
        if !cond || split {
            if let Some((rd, v)) = frame_pointer_arith(insn, &state.regs) {
                next.regs[usize::from(rd)] = Some(v);
            }
            if let Some((rd, c)) = const_def(image, insn, &state.regs) {
                next.regs[usize::from(rd)] = Some(Val::Const(c));
                if insn.mnemonic.starts_with("movw") || insn.mnemonic.starts_with("movt") {
                    let c = c as u32;
                    if c & 1 == 1 && fmap.at(c).is_some() {
                        address_consts.insert(c & !1);
                    }
                }
            }
            if let Some(m) = insn.mem
                && !m.store
                && m.bytes == 4
                && !m.writeback
                && m.base != mcubench_thumb::SP
                && m.base != mcubench_thumb::PC
                && insn.class == (mcubench_thumb::Class::Load { width: 4 })
                && let Some(rd) = insn.operands.split(',').next().and_then(|r| parse_reg(r.trim()))
            {
                // From a constant address (a function pointer, struct slot or table the
                // analysis can read), else from a slot of a pointer (a vtable method).
                let v = match (state.regs[usize::from(m.base)], m.index) {
                    (Some(Val::FatVtable(pair)), None) if m.offset >= 0 => {
                        Some(Val::FatSlot { slot: m.offset as u32, pair })
                    }
                    (Some(Val::Const(c)), None) => {
                        Some(Val::Loaded(Loaded::Word { addr: (c as u32).wrapping_add(m.offset as u32) }))
                    }
                    (Some(Val::Const(c)), Some(_)) => Some(Val::Loaded(Loaded::Table { base: c as u32 })),
                    (_, None) if m.offset >= 0 => Some(Val::Slot(m.offset as u32)),
                    _ => None,
                };
                if let Some(v) = v {
                    next.regs[usize::from(rd)] = Some(v);
                }
            }
            if let Some((rd, imm)) = insn.sp_copy
                && let (Sp::Known(o), Some(slot)) = (state.sp, next.regs.get_mut(usize::from(rd)))
            {
                *slot = o.checked_add(imm).map(Val::Sp);
            }
            for (rd, v) in fat_pointer_defs(insn, &state.regs) {
                next.regs[usize::from(rd)] = Some(v);
            }
        }
        next.saved_sp = track_sp_save(insn, &state, sp_effect);
        if split {
            // Executed or not: both reach a successor; a join of different SPs is divergent.
            let skipped = state.clone();
            if let Err(fr) = propagate(&mut states, &mut work, skip_fall, skipped) {
                failure.get_or_insert(fr);
                continue 'work;
            }
        }
        if let Sp::Known(o) = next.sp {
            max_depth = max_depth.max(o.min(0).unsigned_abs());
        }
        let fall = exec_fall;
        // (target, state) pairs to follow inside the function.
        let mut succ: Vec<(u32, State)> = Vec::new();
        // The register an indirect call or jump goes through, and whether it came from a slot.
        let via = match insn.flow {
            Flow::CallIndirect { reg } => Some(reg),
            Flow::JumpIndirect { literal: None } if insn.mnemonic.starts_with("bx") => parse_reg(insn.operands.trim()),
            _ => None,
        };
        let slot = via.and_then(|r| match state.regs[usize::from(r)] {
            Some(Val::Slot(o)) => Some(o),
            Some(Val::Half { off, slot: true, .. }) => Some(off as u32),
            Some(Val::HalfSlot { slot, .. }) => Some(slot),
            _ => None,
        });
        let loaded_from = via.and_then(|r| match state.regs[usize::from(r)] {
            Some(Val::Loaded(l)) => Some(l),
            _ => None,
        });
        // The receiver in r0 is the data word of the pair whose vtable word gave the slot.
        let fat_slot = via.and_then(|r| match (state.regs[usize::from(r)], state.regs[0]) {
            (Some(Val::FatSlot { slot, pair }), Some(Val::FatData(p))) if p == pair => Some(slot),
            // Loaded separately: the target from `[rV, #k]` with rV the word at `[b, #o]`, r0 the
            // word at `[b, #o - 4]`, both still valid (b not written since).
            (Some(Val::HalfSlot { slot, base: b, off: o }), Some(Val::Half { base: b0, off: o0, .. }))
                if b == b0 && o0.checked_add(4) == Some(o) =>
            {
                Some(slot)
            }
            _ => None,
        });
        let slot = slot.or(fat_slot);
        // A register that holds a function's Thumb address (movw/movt, a literal, a copy of
        // one): the linker's veneers (`movw ip; movt ip; bx ip`, the v6-M `ldr r0, [pc]; mov ip,
        // r0; ...; bx ip`) and `-mlong-calls` (`movw r3; movt r3; blx r3`) are direct.
        let known_target = via.and_then(|r| match state.regs[usize::from(r)] {
            Some(Val::Const(c)) if c & 1 == 1 && fmap.at(c as u32).is_some() => Some(c as u32 & !1),
            _ => None,
        });
        // A call or jump through a register that holds the constant 0 (a weak undefined hook,
        // `if (&hook) hook();` with the test on another path): taking it would fault (address
        // 0 holds the initial SP, not code, and the exception's stack is counted as one),
        // so it calls nothing.
        let null_target = via.is_some_and(|r| state.regs[usize::from(r)] == Some(Val::Const(0)));
        let fn_args: Vec<(u8, u32)> = (0u8..4)
            .filter_map(|r| match state.regs[usize::from(r)] {
                Some(Val::Const(c)) if c & 1 == 1 && fmap.at(c as u32).is_some() => Some((r, c as u32 & !1)),
                _ => None,
            })
            .collect();
        let add_call = |calls: &mut BTreeMap<(u32, u8, u32), CallSite>, kind: CallKind, depth: u32, tag: u8| {
            let indirect = matches!(kind, CallKind::Indirect | CallKind::IndirectTail);
            if indirect && null_target {
                return;
            }
            let (slot, loaded_from, fat_slot) =
                if indirect { (slot, loaded_from, fat_slot) } else { (None, None, None) };
            let fn_args = if indirect { Vec::new() } else { fn_args.clone() };
            calls.entry((addr, tag, 0)).or_insert(CallSite {
                at: addr,
                depth,
                kind,
                slot,
                loaded_from,
                fat_slot,
                fn_args,
            });
        };
        let cond_state = state.clone();
        match insn.flow {
            // A semihosting SYS_EXIT does not return.
            Flow::Next
                if is_semihosting(insn)
                    && matches!(state.regs[0], Some(Val::Const(op)) if SEMIHOSTING_EXITS.contains(&op))
                    && !insn.conditional => {}
            Flow::Next => succ.push((fall, next.clone())),
            Flow::Branch { target } => {
                if f.contains(target) && !fmap.is_data(target) {
                    // A loop's back edge that moves SP (`ldmia sp!` popping a buffer in a
                    // counted loop): summarised by its trip count when the code shows it.
                    let back = match states.get(&target) {
                        Some(head) if cond && target <= addr && head.sp != next.sp => {
                            Some(sp_loop(insns, target, insn, head, &next, mode.trips))
                        }
                        _ => None,
                    };
                    match back {
                        Some(LoopOutcome::Summary { exit, deepest }) => {
                            max_depth = max_depth.max(deepest.min(0).unsigned_abs());
                            succ.push((skip_fall, exit));
                        }
                        Some(LoopOutcome::UnknownCount { delta }) => {
                            walked.unknown_loop = true;
                            failure.get_or_insert(Frame::Divergent {
                                at: target,
                                detail: format!(
                                    "the loop at 0x{target:08x}..0x{addr:08x} moves SP by {delta:+} B per iteration \
                                     and its trip count is not a constant the code shows"
                                ),
                            });
                            continue 'work;
                        }
                        Some(LoopOutcome::NotLoop) | None => {
                            succ.push((target, next.clone()));
                            if cond {
                                succ.push((skip_fall, cond_state.clone()));
                            }
                        }
                    }
                } else {
                    add_call(&mut calls, CallKind::Tail { target }, depth_of(next.sp), 0);
                    if cond {
                        succ.push((skip_fall, cond_state.clone()));
                    }
                }
            }
            Flow::Call { target } if fmap.at(target).is_none() && !fmap.is_data(target) => {
                // BL to a label that starts no function: a local subroutine (assembly helpers
                // reached with `bl label`, libgcc's `bleq Lml_s` in `__muldf3`) whose return
                // comes back here; walked on its own from the label, its frame and calls
                // count at this depth.
                let depth = depth_of(next.sp);
                let sub = if mode.nest >= MAX_SUBROUTINE_NESTING {
                    None
                } else {
                    cx.subroutine_range(f, target).map(|range| {
                        let key = (target, mode.trips);
                        let memo = cx.subs.borrow().get(&key).cloned();
                        memo.unwrap_or_else(|| {
                            let w = std::rc::Rc::new(walk(
                                cx,
                                &range,
                                target,
                                Mode { nest: mode.nest + 1, trips: mode.trips },
                                &[],
                            ));
                            cx.subs.borrow_mut().insert(key, w.clone());
                            w
                        })
                    })
                };
                match sub {
                    Some(s) if !s.unbalanced => {
                        written |= s.written;
                        walked.unknown_loop |= s.unknown_loop;
                        match &s.stack.frame {
                            Frame::Known { bytes } | Frame::Dynamic { bytes, .. } => {
                                if let Frame::Dynamic { at, .. } = s.stack.frame {
                                    dynamic_at.get_or_insert(at);
                                }
                                match depth.checked_add(*bytes) {
                                    Some(d) => max_depth = max_depth.max(d),
                                    None => {
                                        dynamic_at.get_or_insert(addr);
                                    }
                                }
                            }
                            other => {
                                failure.get_or_insert(other.clone());
                            }
                        }
                        for c in &s.stack.calls {
                            // Sites outside this function are keyed by the BL that reaches them.
                            let at = if f.contains(c.at) { c.at } else { addr };
                            let site = CallSite { at, depth: depth.saturating_add(c.depth), ..c.clone() };
                            calls.entry((at, 2, c.at)).or_insert(site);
                        }
                        address_consts.extend(s.stack.address_consts.iter().copied());
                        handoffs.extend(s.stack.handoffs.iter().copied().filter(|a| f.contains(*a)));
                        if cond {
                            succ.push((skip_fall, cond_state.clone()));
                        }
                        let mut after = next.clone();
                        for r in 0..16usize {
                            if s.written & (1 << r) != 0 {
                                after.regs[r] = None;
                            }
                        }
                        succ.push((fall, after));
                    }
                    _ if f.contains(target) => {
                        // Not a subroutine (its paths return with SP elsewhere): the Thumb-1
                        // far branch LLVM emits (`tBfar`) to a block of the same function.
                        // Follow it as a jump and, conservatively, the fall-through as well.
                        if let Sp::Known(o) = next.sp {
                            local_call_sps.insert(o);
                        }
                        succ.push((target, next.clone()));
                        succ.push((fall, next.clone()));
                        if cond {
                            succ.push((skip_fall, cond_state.clone()));
                        }
                    }
                    _ => {
                        // A call into another function's body that is no subroutine: a call of
                        // its rest (see `entry_depths`).
                        add_call(&mut calls, CallKind::Call { target }, depth, 0);
                        if cond {
                            succ.push((skip_fall, cond_state.clone()));
                        }
                        let mut after = next.clone();
                        for r in [0u8, 1, 2, 3, 12, 14] {
                            after.regs[usize::from(r)] = None;
                        }
                        succ.push((fall, after));
                    }
                }
            }
            // GCC's v6-M switch: `bl __gnu_thumb1_case_*` returns into the case its table
            // selects (the helper's own frame counts as a call at this depth).
            Flow::Call { target }
                if let Some(cases) = fmap
                    .at(target)
                    .and_then(|g| crate::switch::gnu_case_targets(image, fmap, insns, insn, &g.name, f)) =>
            {
                add_call(&mut calls, CallKind::Call { target }, depth_of(next.sp), 0);
                if cond {
                    succ.push((skip_fall, cond_state.clone()));
                }
                match cases {
                    Ok(ts) => {
                        let mut after = next.clone();
                        // The helper restores every register but LR.
                        after.regs[14] = None;
                        written |= 1 << 14;
                        for t in ts {
                            succ.push((t, after.clone()));
                        }
                    }
                    Err(e) => {
                        failure.get_or_insert(Frame::Unknown { at: addr, detail: e });
                        continue 'work;
                    }
                }
            }
            Flow::Call { .. } | Flow::CallIndirect { .. } => {
                let kind = match (insn.flow, known_target) {
                    (Flow::Call { target }, _) | (_, Some(target)) => CallKind::Call { target },
                    _ => CallKind::Indirect,
                };
                // A call to a function known not to return (`abort`, panics: crate::noreturn)
                // ends the path: what follows it is not reached from here.
                let returns = !matches!(kind, CallKind::Call { target }
                    if fmap.at(target).is_some_and(|g| crate::noreturn::reason(&g.name, &g.demangled).is_some()));
                add_call(&mut calls, kind, depth_of(next.sp), 0);
                if cond {
                    succ.push((skip_fall, cond_state.clone()));
                }
                let mut after = next.clone();
                for r in [0u8, 1, 2, 3, 12, 14] {
                    after.regs[usize::from(r)] = None;
                    written |= 1 << r;
                }
                if returns {
                    succ.push((fall, after));
                }
            }
            // `ldr pc, [sp], #8` (libgcc's `__aeabi_dcmpeq`, after `str lr, [sp, #-8]!`): a
            // return that pops more than the return address, like `ldr pc, [sp], #4`.
            Flow::JumpIndirect { literal: None }
                if insn.mem.is_some_and(|m| m.base == mcubench_thumb::SP && m.writeback && !m.store)
                    && next.sp == Sp::Known(0) =>
            {
                if cond {
                    succ.push((skip_fall, cond_state.clone()));
                }
            }
            Flow::Return => {
                if let Sp::Known(o) = next.sp
                    && o != 0
                    && insn.mnemonic.starts_with("bx")
                {
                    // `bx lr` with a frame live: the return of a local subroutine if some BL
                    // inside the function calls one at this SP (checked when all are known).
                    local_returns.push((addr, o));
                } else if next.sp != Sp::Known(0) && next.sp != Sp::Dynamic {
                    walked.unbalanced = true;
                    failure.get_or_insert(Frame::Unknown {
                        at: addr,
                        detail: format!("returns with SP {:?} relative to entry", next.sp),
                    });
                }
                if cond {
                    succ.push((skip_fall, cond_state.clone()));
                }
            }
            // An ARMv6-M switch (`mov pc`/`add pc` through a table after the code): every case
            // is a jump inside the function.
            Flow::JumpIndirect { literal: None }
                if let Some(cases) = crate::switch::targets(image, fmap, insns, insn, f) =>
            {
                match cases {
                    Ok(ts) => {
                        for t in ts {
                            succ.push((t, next.clone()));
                        }
                    }
                    Err(e) => {
                        failure.get_or_insert(Frame::Unknown { at: addr, detail: e });
                        continue 'work;
                    }
                }
            }
            Flow::JumpIndirect { literal } => {
                let target = literal.and_then(|l| image.word_at(u64::from(l)));
                match (target, known_target) {
                    (Some(t), _) if t & 1 == 1 && fmap.at(t).is_some() => {
                        add_call(&mut calls, CallKind::Tail { target: t & !1 }, depth_of(next.sp), 0)
                    }
                    (None, Some(t)) => add_call(&mut calls, CallKind::Tail { target: t }, depth_of(next.sp), 0),
                    _ => add_call(&mut calls, CallKind::IndirectTail, depth_of(next.sp), 0),
                }
                if cond {
                    succ.push((skip_fall, cond_state.clone()));
                }
            }
            Flow::TableBranch { table, halfword, index } => {
                let Some(table) = table else {
                    failure.get_or_insert(Frame::Unknown {
                        at: addr,
                        detail: "TBB/TBH with a table not addressed from PC".into(),
                    });
                    continue 'work;
                };
                match table_targets(image, fmap, insns, insn, table, halfword, index, f) {
                    Ok(ts) => {
                        for t in ts {
                            succ.push((t, next.clone()));
                        }
                    }
                    Err(e) => {
                        failure.get_or_insert(Frame::Unknown { at: addr, detail: e });
                        continue 'work;
                    }
                }
            }
            Flow::Trap => {
                // SVC returns to the next instruction (its handler runs on the exception stack
                // and is counted as a handler); UDF/BKPT stop the path.
                if insn.mnemonic.starts_with("svc") {
                    succ.push((fall, next.clone()));
                } else if cond {
                    succ.push((skip_fall, cond_state.clone()));
                }
            }
        }
        for (t, s) in succ {
            if f.contains(t) && !fmap.is_data(t) {
                if let Err(fr) = propagate(&mut states, &mut work, t, s) {
                    failure.get_or_insert(fr);
                }
            } else if t == fall || t == skip_fall {
                // Falls off the function: after a call, the callee did not return (noreturn);
                // into another function's start: a fall-through tail call; else unknown.
                // A NOP here is padding after such a call (`bl abort; nop; .word ...`).
                let after_call = matches!(insn.flow, Flow::Call { .. } | Flow::CallIndirect { .. })
                    || (insn.class == mcubench_thumb::Class::Hint && insn.mnemonic.starts_with("nop"))
                    // `mov r8, r8`: the Thumb-1 NOP that LLVM pads with after a noreturn call.
                    || insn.raw == 0x46c0
                    // Straight after a semihosting call whose operation is not a known
                    // constant (newlib's `_kill_shared`: SYS_EXIT or SYS_EXIT_EXTENDED chosen at
                    // run time): the compiler knows it does not return.
                    || after_semihosting(insns, addr);
                if after_call {
                    continue;
                }
                if fmap.at(t).is_some() {
                    add_call(&mut calls, CallKind::Tail { target: t }, depth_of(s.sp), 1);
                } else {
                    failure.get_or_insert(Frame::Unknown {
                        at: addr,
                        detail: format!("execution falls through past the end of the function to 0x{t:08x}"),
                    });
                }
            }
        }
    }
    if let Some(&(at, o)) = local_returns.iter().find(|(_, o)| !local_call_sps.contains(o)) {
        walked.unbalanced = true;
        failure.get_or_insert(Frame::Unknown {
            at,
            detail: format!("returns with SP {:?} relative to entry", Sp::Known(o)),
        });
    }
    out.calls = calls.into_values().collect();
    if out.calls.iter().any(|c| matches!(c.kind, CallKind::Tail { .. } | CallKind::IndirectTail)) {
        // A tail call's callee returns to whoever called this code: its scratch registers.
        for r in [0u8, 1, 2, 3, 12, 14] {
            written |= 1 << r;
        }
    }
    out.entry_depths = want
        .iter()
        .filter_map(|a| match states.get(a)?.sp {
            Sp::Known(o) => Some((*a, o.min(0).unsigned_abs())),
            Sp::Dynamic => None,
        })
        .collect();
    out.address_consts = address_consts.into_iter().collect();
    out.handoffs = handoffs.into_iter().collect();
    // Only a function's own entry restarts the stack (not a local subroutine's).
    out.stack_reset = stack_reset.filter(|_| mode.nest == 0 && entry == f.start);
    out.frame = if let Some(fr) = failure {
        fr
    } else if let Some(at) = dynamic_at {
        Frame::Dynamic { at, bytes: max_depth }
    } else {
        Frame::Known { bytes: max_depth }
    };
    walked.stack = out;
    walked.written = written;
    walked
}

/// An instruction that sets SP from a value the code does not show (`msr msp, rX`,
/// `mov sp, rX`) is a hand-off when an indirect jump or call follows it within a few
/// instructions that touch neither SP nor the stack (`ldr rY, [rX, #4]`, barriers): the
/// bootloader sequence that starts an application with its own stack.
fn is_handoff(insns: &BTreeMap<u32, Insn>, set_sp: &Insn) -> bool {
    let mut at = set_sp.addr + u32::from(set_sp.len);
    for _ in 0..8 {
        let Some(i) = insns.get(&at) else { return false };
        let uses_stack = i.sp != SpEffect::None
            || i.writes.contains(mcubench_thumb::SP)
            || i.mem.is_some_and(|m| m.base == mcubench_thumb::SP);
        if i.conditional || uses_stack || is_semihosting(i) {
            return false;
        }
        match i.flow {
            Flow::JumpIndirect { .. } | Flow::CallIndirect { .. } => return true,
            Flow::Next => at += u32::from(i.len),
            _ => return false,
        }
    }
    false
}

/// What a back edge that moves SP is. Returned once per such back edge and matched at once, so
/// the large `Summary` is not boxed.
#[allow(clippy::large_enum_variant)]
enum LoopOutcome {
    /// Not a loop this analysis summarises (its body branches, or SP moves by a run-time
    /// amount): SP is divergent at its head, as for any join of different SPs.
    NotLoop,
    /// A loop whose trip count the code shows: the state after its last iteration and the
    /// deepest SP offset any iteration reaches.
    Summary { exit: State, deepest: i32 },
    /// A straight-line loop that moves SP by `delta` per iteration a number of times the code
    /// does not show (a register argument).
    UnknownCount { delta: i32 },
}

/// The loop from `head` to the conditional branch `br` back to it, first entered in state
/// `entry` and reaching `br` in state `after` (one iteration). Summarised when its body is
/// straight-line code that moves SP by a constant, and its counter register is a constant at
/// entry that the body adds an immediate to (`subs r3, #1`; `adds r3, #4; cmp r3, #64`):
/// the trip count is found by running the counter through the branch's condition. `trips`
/// overrides an unknown count (annotation candidates).
fn sp_loop(
    insns: &BTreeMap<u32, Insn>,
    head: u32,
    br: &Insn,
    entry: &State,
    after: &State,
    trips: Option<u32>,
) -> LoopOutcome {
    let (Sp::Known(sp0), Sp::Known(sp1)) = (entry.sp, after.sp) else { return LoopOutcome::NotLoop };
    let Some(cc) = br.mnemonic.trim_end_matches(".w").trim_end_matches(".n").strip_prefix('b') else {
        return LoopOutcome::NotLoop;
    };
    // The body: straight-line, unconditional, SP moved only by constants.
    let mut body: Vec<&Insn> = Vec::new();
    let (mut rel, mut min_rel) = (0i32, 0i32);
    let mut at = head;
    while at < br.addr {
        let Some(i) = insns.get(&at) else { return LoopOutcome::NotLoop };
        if i.conditional || i.flow != Flow::Next || is_semihosting(i) {
            return LoopOutcome::NotLoop;
        }
        match i.sp {
            SpEffect::None => {}
            SpEffect::Adjust(d) => {
                let Some(r) = rel.checked_add(d) else { return LoopOutcome::NotLoop };
                rel = r;
                min_rel = min_rel.min(rel);
            }
            _ => return LoopOutcome::NotLoop,
        }
        body.push(i);
        at += u32::from(i.len);
    }
    if at != br.addr || rel == 0 || sp0.checked_add(rel) != Some(sp1) {
        return LoopOutcome::NotLoop;
    }
    let count = loop_count(&body, cc, entry);
    let Some(n) = count.or(trips).filter(|n| *n > 0) else { return LoopOutcome::UnknownCount { delta: rel } };
    // Deepest point: in the first iteration when the loop pops, in the last when it pushes.
    let last = i32::try_from(n - 1).ok().and_then(|k| k.checked_mul(rel)).and_then(|x| sp0.checked_add(x));
    let total = i32::try_from(n).ok().and_then(|k| k.checked_mul(rel)).and_then(|x| sp0.checked_add(x));
    let (Some(last), Some(total)) = (last, total) else { return LoopOutcome::NotLoop };
    let Some(deepest) = sp0.min(last).checked_add(min_rel) else { return LoopOutcome::NotLoop };
    let mut exit = after.clone();
    exit.sp = Sp::Known(total);
    // Registers the body writes hold first-iteration values in `after`: forget them.
    for i in &body {
        for r in 0..16u8 {
            if i.writes.contains(r) {
                exit.regs[usize::from(r)] = None;
            }
        }
    }
    LoopOutcome::Summary { exit, deepest }
}

/// Trip count of a loop `body` closed by a branch on condition `cc`, entered in `entry`: its
/// counter (the register of the last flag-setting instruction, `subs`/`adds`/`cmp`/`cmn` with
/// an immediate) must be a constant at entry and change only by immediates in the body.
fn loop_count(body: &[&Insn], cc: &str, entry: &State) -> Option<u32> {
    let ops = |i: &Insn| -> Vec<String> { i.operands.split(',').map(|s| s.trim().to_string()).collect() };
    let base = |i: &Insn| i.mnemonic.trim_end_matches(".w").trim_end_matches(".n").to_string();
    let setter = body.iter().rposition(|i| sets_flags(&base(i)))?;
    let so = ops(body[setter]);
    let counter = parse_reg(so.first()?)?;
    let Some(Val::Const(mut v)) = entry.regs[usize::from(counter)] else { return None };
    // Each body instruction's effect on the counter: an immediate added (None: leaves it).
    let mut steps: Vec<Option<i32>> = Vec::with_capacity(body.len());
    for i in body {
        if !i.writes.contains(counter) {
            steps.push(None);
            continue;
        }
        let o = ops(i);
        let imm = match o.as_slice() {
            [d, k] if parse_reg(d) == Some(counter) => parse_imm(k)?,
            [d, n, k] if parse_reg(d) == Some(counter) && parse_reg(n) == Some(counter) => parse_imm(k)?,
            _ => return None,
        };
        steps.push(Some(match base(i).as_str() {
            "add" | "adds" | "addw" => imm,
            "sub" | "subs" | "subw" => imm.checked_neg()?,
            _ => return None,
        }));
    }
    let setter_base = base(body[setter]);
    let compare_imm = match (setter_base.as_str(), so.as_slice()) {
        ("cmp", [_, k]) => Some(-parse_imm(k)?),
        ("cmn", [_, k]) => Some(parse_imm(k)?),
        ("adds" | "subs", _) => None,
        _ => return None,
    };
    for n in 1..=MAX_LOOP_TRIPS {
        let mut flags = None;
        for (k, step) in steps.iter().enumerate() {
            let before = v;
            if let Some(d) = step {
                v = v.wrapping_add(*d);
            }
            if k == setter {
                // The flags of `before + d` (adds/subs) or `v + imm` (cmn/cmp).
                let (x, d) = match (compare_imm, step) {
                    (Some(c), _) => (v, c),
                    (None, Some(d)) => (before, *d),
                    (None, None) => return None,
                };
                flags = Some(add_flags(x, d));
            }
        }
        if !cond_holds(cc, flags?)? {
            return Some(n);
        }
    }
    None
}

/// N, Z, C, V of `x + d` computed as the core does: `d` < 0 is a subtraction of `-d`
/// (C = no borrow). ARMv7-M ARM A2.2.1 (AddWithCarry).
fn add_flags(x: i32, d: i32) -> (bool, bool, bool, bool) {
    let r = x.wrapping_add(d);
    let (c, v) = if d < 0 {
        let m = d.wrapping_neg();
        ((x as u32) >= (m as u32), ((x ^ m) & (x ^ r)) < 0)
    } else {
        ((x as u32).checked_add(d as u32).is_none(), (!(x ^ d) & (x ^ r)) < 0)
    };
    (r < 0, r == 0, c, v)
}

/// Whether condition `cc` holds for flags (N, Z, C, V). ARMv7-M ARM A7.3 (condition codes).
fn cond_holds(cc: &str, (n, z, c, v): (bool, bool, bool, bool)) -> Option<bool> {
    Some(match cc {
        "eq" => z,
        "ne" => !z,
        "cs" | "hs" => c,
        "cc" | "lo" => !c,
        "mi" => n,
        "pl" => !n,
        "vs" => v,
        "vc" => !v,
        "hi" => c && !z,
        "ls" => !c || z,
        "ge" => n == v,
        "lt" => n != v,
        "gt" => !z && n == v,
        "le" => z || n != v,
        _ => return None,
    })
}

/// Whether an unconditional instruction (mnemonic without `.w`/`.n`) sets the APSR flags.
fn sets_flags(m: &str) -> bool {
    if ["cmp", "cmn", "tst", "teq", "msr", "vmrs"].iter().any(|p| m.starts_with(p)) {
        return true;
    }
    m.ends_with('s') && !m.starts_with('v') && !["pop", "ldm", "stm", "mrs", "push"].iter().any(|p| m.starts_with(p))
}

/// `addr` is at most 3 straight-line instructions after a semihosting `bkpt 0xab`.
fn after_semihosting(insns: &BTreeMap<u32, Insn>, addr: u32) -> bool {
    for (_, i) in insns.range(..=addr).rev().take(4) {
        if is_semihosting(i) {
            return true;
        }
        if !matches!(i.flow, Flow::Next) || i.conditional {
            return false;
        }
    }
    false
}

/// The condition codes an instruction in an IT block carries as a mnemonic suffix.
const CONDITIONS: [&str; 16] =
    ["eq", "ne", "cs", "hs", "cc", "lo", "mi", "pl", "vs", "vc", "hi", "ls", "ge", "lt", "gt", "le"];

/// What an instruction defines of a fat pointer `(data, vtable)`: `ldrd rD, rV, [Rn, #k]` loads
/// one whole; an `ldr` is a [`Val::Half`], the word at `[base, #off]`, dropped on the path where
/// its base is written. LLVM also loads the pair's words separately (`ldr.w r0, [r6, #8]!; ldr
/// r1, [r6, #4]`, or in different blocks, one of them conditionally, next to other words of the
/// same struct), so which two halves form the pair is decided at the call: r0 the word just
/// below the one the target was loaded through. `mov rd, rm` copies a tracked word. Every other
/// write has already cleared the register.
fn fat_pointer_defs(insn: &Insn, regs: &[Option<Val>; 16]) -> Vec<(Reg, Val)> {
    // A conditional instruction is only applied to the state in which it executes (an IT
    // block splits the state), so it defines pair words like an unconditional one.
    let m = insn.mnemonic.trim_end_matches(".w").trim_end_matches(".n");
    // `ldrne`, `movne`: the condition suffix of an instruction in an IT block.
    let m = match m.len().checked_sub(2).map(|k| m.split_at(k)) {
        Some((op, c)) if insn.conditional && CONDITIONS.contains(&c) => op,
        _ => m,
    };
    let ops: Vec<&str> = insn.operands.split(',').map(str::trim).collect();
    // A pair on the stack (a fat pointer spilled or built in the frame) counts too.
    let plain_load = |mem: &mcubench_thumb::Mem| !mem.store && mem.base != mcubench_thumb::PC && mem.index.is_none();
    match (m, ops.as_slice()) {
        ("ldrd", [d, v, ..]) => match (insn.mem, parse_reg(d), parse_reg(v)) {
            (Some(mem), Some(d), Some(v)) if plain_load(&mem) && mem.bytes == 8 && d != v => {
                vec![(d, Val::FatData(insn.addr)), (v, Val::FatVtable(insn.addr))]
            }
            _ => Vec::new(),
        },
        ("ldr", [d, ..]) => {
            let (Some(mem), Some(d)) = (insn.mem, parse_reg(d)) else { return Vec::new() };
            // A word loaded through a half: a method slot, should that half be a vtable word.
            if let Some(Val::Half { base, off, .. }) = regs[usize::from(mem.base)]
                && plain_load(&mem)
                && mem.bytes == 4
                && !mem.writeback
                && mem.offset >= 0
            {
                return vec![(d, Val::HalfSlot { slot: mem.offset as u32, base, off })];
            }
            // A load through a vtable word is a method slot (`Val::FatSlot`), one from a
            // constant address a word the analysis reads (`Val::Loaded`): not pair halves.
            if !plain_load(&mem)
                || mem.bytes != 4
                || d == mem.base
                || matches!(regs[usize::from(mem.base)], Some(Val::FatVtable(_) | Val::Const(_)))
            {
                return Vec::new();
            }
            // The word's offset from the base as it is after the instruction: pre-indexed
            // `[Rn, #k]!` leaves Rn at the word, post-indexed `[Rn], #k` moves it past.
            let post = insn.operands.contains("],");
            let off = match (mem.writeback, post) {
                (false, _) => mem.offset,
                (true, false) => 0,
                (true, true) => mem.offset.checked_neg().unwrap_or(i32::MIN),
            };
            let half = Val::Half {
                base: mem.base,
                off,
                at: insn.addr,
                slot: !mem.writeback && mem.offset >= 0 && mem.base != mcubench_thumb::SP,
            };
            vec![(d, half)]
        }
        ("mov", [d, r]) => match (parse_reg(d), parse_reg(r).and_then(|r| regs[usize::from(r)])) {
            (
                Some(d),
                Some(
                    v @ (Val::FatData(_)
                    | Val::FatVtable(_)
                    | Val::FatSlot { .. }
                    | Val::Half { .. }
                    | Val::HalfSlot { .. }),
                ),
            ) => {
                vec![(d, v)]
            }
            _ => Vec::new(),
        },
        _ => Vec::new(),
    }
}

/// `add`/`sub` of an immediate to a register with a known value (the -O0 epilogue
/// `adds r7, #16; mov sp, r7`): the destination and its new value.
fn frame_pointer_arith(insn: &Insn, regs: &[Option<Val>; 16]) -> Option<(Reg, Val)> {
    let m = insn.mnemonic.trim_end_matches(".w").trim_end_matches(".n");
    let sign: i32 = match m {
        "add" | "adds" | "addw" => 1,
        "sub" | "subs" | "subw" => -1,
        _ => return None,
    };
    if insn.conditional {
        return None;
    }
    let ops: Vec<&str> = insn.operands.split(',').map(str::trim).collect();
    let (rd, rn, k) = match ops.as_slice() {
        [d, i] => (parse_reg(d)?, parse_reg(d)?, parse_imm(i)?),
        [d, n, i] => (parse_reg(d)?, parse_reg(n)?, parse_imm(i)?),
        _ => return None,
    };
    Some((
        rd,
        match regs[usize::from(rn)]? {
            Val::Sp(base) => Val::Sp(base.checked_add(sign.checked_mul(k)?)?),
            Val::Const(c) => Val::Const(c.wrapping_add(sign.wrapping_mul(k))),
            Val::Slot(_)
            | Val::Loaded(_)
            | Val::Half { .. }
            | Val::FatData(_)
            | Val::FatVtable(_)
            | Val::HalfSlot { .. }
            | Val::FatSlot { .. } => return None,
        },
    ))
}

fn propagate(states: &mut HashMap<u32, State>, work: &mut Vec<u32>, at: u32, s: State) -> Result<(), Frame> {
    match states.get_mut(&at) {
        None => {
            states.insert(at, s);
            work.push(at);
            Ok(())
        }
        Some(old) => {
            let sp = match (old.sp, s.sp) {
                (Sp::Known(a), Sp::Known(b)) if a != b => {
                    return Err(Frame::Divergent {
                        at,
                        detail: format!("SP is entry{a:+} on one path and entry{b:+} on another"),
                    });
                }
                (Sp::Known(a), Sp::Known(_)) => Sp::Known(a),
                _ => Sp::Dynamic,
            };
            let mut regs = old.regs;
            for (r, v) in regs.iter_mut().zip(s.regs.iter()) {
                if *r != *v {
                    *r = None;
                }
            }
            let saved_sp = if old.saved_sp == s.saved_sp { old.saved_sp } else { None };
            if sp != old.sp || regs != old.regs || saved_sp != old.saved_sp {
                old.sp = sp;
                old.regs = regs;
                old.saved_sp = saved_sp;
                work.push(at);
            }
            Ok(())
        }
    }
}
