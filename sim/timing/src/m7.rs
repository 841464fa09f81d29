//! Cortex-M7: a 6-stage, in-order, superscalar core that issues up to two instructions a cycle,
//! with a branch target address cache. Arm publishes no cycle table for it, so this is an
//! approximation (labelled as such in every report), built as a small in-order issue model: two
//! issue slots a cycle, structural pairing restrictions, and a register scoreboard that says in
//! which cycle each consumer may read a result. Sources, and which of them measured what:
//!
//! - [TRM] Arm Cortex-M7 Processor Technical Reference Manual (DDI 0489), the component
//!   descriptions of the Prefetch Unit and the Data Processing Unit: a six-stage superscalar
//!   pipeline that can issue two instructions a cycle; the prefetch unit fetches 64 bits a cycle
//!   into a 4×64-bit queue, with a Branch Target Address Cache "for single-cycle turn-around of
//!   branch predictor state and target address" and forwarding of flags for early resolution of
//!   direct branches. Structure only: the TRM gives no pairing rules and no cycle counts. (Quoted
//!   from the TRM as read before; no copy of it was available to re-check the section numbers.)
//! - [m7-meas] github:jnk0le/random@3dfc2abd "pipeline cycle test/doc/cortex_m7.md" and its
//!   template "CM7_pipetest_tmpl.S" (STM32H743 rev Y, DWT.CYCCNT, loops of 1000): MEASURED pairing
//!   restrictions, the early/late ALU forwarding, load, multiply and bitfield latencies, LDM/STM
//!   and store-buffer timing, branch pairing and the misprediction penalty.
//! - [quinapalus] quinapalus.com "Cortex-M7 instruction cycle counts, timings, and dual-issue
//!   combinations" (STM32H730 at 480 MHz, caches on, SysTick, pairs repeated 4 and 14 times):
//!   only its method could be read here (the stored copy lacks the table and conclusions), so no
//!   rule below rests on it alone. [mastodon-m7]: Cortex-M7 dual-issue notes posted under the
//!   #CortexM7 tag (mastodawn.com/explore/tag/CortexM7): MEASURED "only one shifted-operand
//!   instruction per cycle", bitfield ops count as shifted, DSP only from the lower address of a
//!   pair, `ADD.W R1,R0,R3; ADD.W R1,R1,R2` dual issues. It also says sign and zero extends count
//!   as shifted, which [m7-meas] and [M7-llvm] contradict; the model follows those two
//!   ([`plain_extend`]).
//! - [M7-llvm] LLVM `ARMScheduleM7.td` and `ARMLatencyMutations.cpp` (Arm-contributed
//!   scheduling model, not a measurement): two load pipes, one store pipe, one MAC; EX1 address
//!   generation and shifts, EX2 ALUs; latencies where the measurements are silent (word load
//!   into an address index, multiply into an address, saturating DSP ops, divide).
//! - [M7-gcc] GCC `config/arm/cortex-m7.md` (Arm-contributed): LDRD/STRD and LDM/STM use every
//!   issue unit; divide does too.
//!
//! Rules marked INFERRED below are not measured by a public source; the others are.
//!
//! Branch direction: a direct branch costs nothing extra when predicted, taken or not; a
//! mispredicted conditional one costs `m7-mispredict` (8 cycles, 6 with early flags [m7-meas],
//! [`mispredict`]). Which branches are mispredicted is decided at run time from each
//! branch's history and the directions of the last `m7-history` branches ([`crate::run`]; how
//! the M7 predicts is INFERRED, no public source says).
//!
//! Not modelled: bank conflicts of two loads whose
//! addresses are not statically known (such loads are priced unpaired), the "slippery" half-cycle
//! slides and the fetch alignment effects of 16-bit code [m7-meas], the 64-bit fetch bandwidth
//! as a limit (64 bits a cycle sustains two 32-bit instructions a cycle, which is all that
//! issues: [m7-meas]'s template runs 40 `.w` instructions a loop in 20 cycles), unaligned
//! accesses, floating-point register dependencies (FP registers are not tracked), caches and TCM
//! wait states.

use mcubench_thumb::{Class, Flow, FpClass, Insn, PC, Reg};

use crate::insn::{accumulator, bitfield, register, shifted_constant, shifted_register};
use crate::params::Params;

/// The pipeline state the model carries from one instruction to the next: for each core
/// register, when its latest value can be read by each kind of consumer. Part of
/// [`crate::Context`], so continuation pricing keeps it across block cuts.
#[derive(Debug, Clone, Copy, Default, PartialEq, Eq, Hash)]
pub struct M7State {
    /// r0..r14 (PC is never a data dependency here).
    regs: [Entry; 15],
    /// Cycles since the last byte/halfword store issued (saturating; 0 in its own cycle), or
    /// `NONE` when there was none recently.
    subword_store_age: u8,
}

const NONE: u8 = u8::MAX;
const AGE_MAX: u8 = 15;

/// A register's latest producer: the cycles, counted from its issue cycle, at which each kind
/// of consumer may issue (0: in the same cycle, as the younger op of a pair), and its age.
#[derive(Debug, Clone, Copy, Default, PartialEq, Eq, Hash)]
struct Entry {
    ready: Ready,
    /// Cycles since the producer issued (saturating at `AGE_MAX`).
    age: u8,
}

/// Result latency per consumer kind, in cycles after the producer's issue cycle at which the
/// consumer may issue without a stall. All zero: no constraint.
#[derive(Debug, Clone, Copy, Default, PartialEq, Eq, Hash)]
struct Ready {
    /// An operand read by the late ALU (EX2), e.g. `add r0, r1, r2`'s r1 and r2.
    late: u8,
    /// A late-ALU operand of an instruction that also has an early (EX1) operand: [m7-meas]
    /// word loads "can be consumed by late ALU in next cycle, except instructions that consume
    /// one of the operands in early ALU ... even though this result is consumed in late ALU".
    late_beside_early: u8,
    /// An operand read in EX1: an inline-shifted register, the source of a bitfield/extend/REV.
    early: u8,
    /// A load/store base register (address generation in EX1).
    addr: u8,
    /// A load/store index register.
    index: u8,
    /// A multiply-accumulate's accumulator (read a stage after the late ALU).
    acc: u8,
    /// Any other multiply operand.
    mul: u8,
    /// Data stored by a store.
    store: u8,
}

/// What kind of consumer reads a register.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
enum Use {
    Late,
    LateBesideEarly,
    Early,
    Addr,
    Index,
    Acc,
    Mul,
    Store,
}

impl Ready {
    fn get(&self, u: Use) -> u8 {
        match u {
            Use::Late => self.late,
            Use::LateBesideEarly => self.late_beside_early,
            Use::Early => self.early,
            Use::Addr => self.addr,
            Use::Index => self.index,
            Use::Acc => self.acc,
            Use::Mul => self.mul,
            Use::Store => self.store,
        }
    }

    const fn uniform(late: u8, early: u8) -> Ready {
        Ready { late, late_beside_early: late, early, addr: early, index: early, acc: late, mul: late, store: 0 }
    }
}

/// The cost of `insn` after `prev` (0 when it dual issues as the younger op of a pair), given
/// whether `prev` was itself the younger op of a pair (so the cycle is full); updates `state`.
/// Returns the cycles and whether `insn` paired.
pub(crate) fn cost(
    params: &Params,
    state: &mut M7State,
    prev: Option<&Insn>,
    insn: &Insn,
    prev_paired: bool,
) -> (u32, bool) {
    let uses = uses(insn);
    // Dual issue: the older op issued alone so far this cycle, the pair is allowed, and every
    // operand is ready in this cycle (ready ≤ age; the older op's results have age 0, and their
    // ready times say what may be used in the same cycle).
    if let Some(p) = prev
        && !prev_paired
        && pairs(p, insn)
        && uses.iter().all(|&(r, u)| ready_at(state, r, u) == 0)
        && !subword_store_waits(state, insn, 0)
    {
        // [m7-meas] "shifts and rotations (aliased to mov) can enter early alu from older or
        // younger op provided that the other instruction is not inline shifted operand one or
        // bitmanip (e.g. `rev`, `bfi`, `uxtab`) op using early alu shifter".
        let early = sources_early(state, &uses, 0) && !uses_ex1_shifter(p);
        // A multi-cycle instruction that pairs (VDIV/VSQRT "dual issues with one integer
        // instruction and locks pipeline for the rest of the duration", [m7-meas]) holds issue
        // for the rest of its cycles.
        let rest = base_cycles(insn, params.divide) - 1;
        advance(state, rest.min(u32::from(AGE_MAX)) as u8);
        record(state, insn, Slot::Younger, early);
        return (rest, true);
    }
    // A new cycle: wait for the operands ([m7-meas] latencies, below).
    let mut stall = uses.iter().map(|&(r, u)| ready_at(state, r, u).saturating_sub(1)).max().unwrap_or(0);
    if subword_store_waits(state, insn, 1) {
        stall = stall.max(1);
    }
    let base = base_cycles(insn, params.divide);
    let unconditional_indirect = insn.writes.contains(PC) && !insn.conditional && !direct_branch(insn);
    let cycles = u32::from(stall) + base + if unconditional_indirect { params.branch_refill } else { 0 };
    let early = sources_early(state, &uses, 1 + stall);
    advance(state, (u32::from(stall) + base).min(u32::from(AGE_MAX)) as u8);
    record(state, insn, Slot::Older, early);
    (cycles, false)
}

/// Whether every register `insn` reads is available to the early ALU `after` cycles from now:
/// only then can an add/sub/mov/shift execute in the early ALU. [m7-meas]: "if e.g. instruction
/// X result cannot be consumed by instruction Y in next cycle, it most likely means that if
/// instruction X result is processed by regular ALU (e.g. `mov`) in following cycles, there still
/// needs to be a 1 cycle gap in processing chain to dodge stall from Y".
fn sources_early(state: &M7State, uses: &[(Reg, Use)], after: u8) -> bool {
    uses.iter().all(|&(r, _)| ready_at(state, r, Use::Early) <= after)
}

/// The extra cycles when `insn`, a conditional branch, is taken: none for a direct branch, which
/// the BTAC predicts ([TRM] "single-cycle turn-around of branch predictor state and target
/// address"; [m7-meas] "Predicted (any direction and length) taken branch is capable of dual
/// issuing with one instruction at destination address", and the template's loop of 40 `.w`
/// instructions and a taken `bne.w` runs in 20 cycles); P for a conditional indirect one.
pub(crate) fn taken_extra(params: &Params, insn: &Insn) -> u32 {
    if insn.conditional && insn.writes.contains(PC) && !direct_branch(insn) { params.branch_refill } else { 0 }
}

/// What a misprediction of a block's final instruction costs, when that is a direct conditional
/// branch (Bcc, CBZ/CBNZ), whose direction the run-time predictor decides ([`crate::run`] keeps
/// each branch's history); `None` otherwise.
/// [m7-meas] "there is flag forwarding that can reduce branch misprediction penalty from 8 to 6
/// cycles (in case of subs + bne), instruction generating flags have to be placed at least 3
/// cycles before branch ... setting flags within 4-5 instruction slots prior to branch will
/// cause a worst case penalty": two issue slots a cycle, so a flag setter at least
/// [`EARLY_FLAGS`] instructions before the branch saves two cycles. How far the setter is, the
/// run-time pricer counts across the blocks straight-line code runs through (QEMU may cut it
/// anywhere). CBZ/CBNZ test a register, not the flags: the full penalty (INFERRED).
pub(crate) fn mispredict(params: &Params, branch: &Insn) -> Option<Mispredict> {
    if !(direct_branch(branch) && branch.conditional) {
        return None;
    }
    let saved = if branch.mnemonic.starts_with("cb") { 0 } else { 2 };
    Some(Mispredict { penalty: params.m7_mispredict, early_flags_save: saved.min(params.m7_mispredict) })
}

/// See [`mispredict`].
pub(crate) const EARLY_FLAGS: u32 = 6;

/// A conditional branch's misprediction penalty, and what flags set early save of it.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub struct Mispredict {
    pub penalty: u32,
    pub early_flags_save: u32,
}

/// Cycles an instruction occupies the issue stage when it issues in a cycle of its own.
fn base_cycles(insn: &Insn, divide: u32) -> u32 {
    match insn.class {
        // [M7-llvm] "Divisions ... cannot be dual-issued with any instructions", latency 7 (the
        // operands are not visible: `divide`, as on the other cores).
        Class::Div => divide,
        // [m7-meas] "load/store pair/multiple (incl pushpop) ... takes `ceil(regnum/2)` cycles".
        Class::LoadDouble | Class::StoreDouble => 1,
        Class::LoadMultiple { regs } | Class::StoreMultiple { regs } => u32::from(regs).div_ceil(2).max(1),
        // [M7-llvm] TBB/TBH "single-issue only; takes two cycles to issue"; the jump to the
        // loaded target is indirect (P, added by the caller). Not measured.
        Class::TableBranch => 2,
        // [m7-meas] "`vdiv.f`/`vsqrt.f` execute in 16/14 cycles"; `vdiv.d` 30 (CPI table);
        // `vsqrt.d` 30 from [M7-llvm] (not measured).
        Class::Fp(FpClass::DivSqrt { double }) => {
            if double {
                30
            } else if insn.mnemonic.starts_with("vdiv") {
                16
            } else {
                14
            }
        }
        // [m7-meas] "`vldm` behaves as regular `ldm`. (`vstm` similarly)": ceil(words/2).
        Class::Fp(FpClass::LoadMultiple { regs, double } | FpClass::StoreMultiple { regs, double }) => {
            (u32::from(regs) * if double { 2 } else { 1 }).div_ceil(2).max(1)
        }
        _ => 1,
    }
}

/// B, Bcc, BL, CBZ/CBNZ: the target is in the instruction, so the BTAC predicts it.
fn direct_branch(insn: &Insn) -> bool {
    insn.class == Class::Branch && matches!(insn.flow, Flow::Branch { .. } | Flow::Call { .. })
}

/// Whether `insn` can issue in the same cycle as `older`, as far as issue resources and
/// instruction classes go (operand readiness is the scoreboard's, in [`cost`]).
fn pairs(older: &Insn, insn: &Insn) -> bool {
    if !pairable(older) || !pairable(insn) {
        return false;
    }
    // [m7-meas] "not-taken branch can dual issue with following instruction": a conditional
    // direct branch priced not taken (the fall-through continuation) pairs as the older op; a
    // taken branch's next instruction is in another block (priced afresh, as the BTAC's
    // pairing with the destination instruction is "highly sensitive to alignment").
    if older.class == Class::Branch && !(older.conditional && direct_branch(older)) {
        return false;
    }
    // [m7-meas] "the bitfield/dsp instructions must be placed in older op"; [mastodon-m7] "DSP/SIMD
    // operations can only participate in dual-issue from the lower address of a pair ... also
    // REV"; [M7-llvm] `M7Slot0Only` for BFC/BFI and CLZ, `BeginGroup` for the DSP ops.
    if older_only(insn) {
        return false;
    }
    // [m7-meas] "multiplication, MAC: can't dual issue wrt each other ... can't dual issue with
    // stores" ([M7-llvm]: one MAC unit).
    if (mac(older) && mac(insn)) || (mac(older) && store(insn)) || (store(older) && mac(insn)) {
        return false;
    }
    // [m7-meas] operand2 dual issuing matrix: a shifted constant or inline shifted register
    // operand as the younger op cannot pair with an older op that uses the shifter (shifted
    // constant, inline shifted register, shift by constant or by register); [mastodon-m7] "Only
    // one 'shifted operand' instruction can be issued per cycle".
    if operand2_shifted(insn) && (operand2_shifted(older) || plain_shift(older)) {
        return false;
    }
    // [m7-meas] "`bfi`, `bfc`, `sbfx`, `ubfx`, `rbit`, `rev`, ..., `{s,u}xta{b,h,b16}`,
    // `pkh{bt,tb}` instructions can't be dual issued with operand2 inline_shifted_reg/
    // shifted_constant instruction": the bitmanip ops that use the EX1 shifter. A plain extend
    // (`uxtb`, `sxth`, ...) is not in that list and does not use the shifter ([`plain_extend`]),
    // so it pairs with a shifted operand2 as the older op.
    if shifter_bitmanip(older) && operand2_shifted(insn) {
        return false;
    }
    // [m7-meas] stores: "cannot dual issue two stores", "can be dual issued with load".
    if store(older) && store(insn) {
        return false;
    }
    // [m7-meas] "two loads (targeting dtcm or cache or both) can be dual issued if each one is
    // targeting different bank (even and odd words)" ([M7-llvm]: two load pipes). Known here
    // only for the same base register with offsets 4 apart mod 8; otherwise priced unpaired.
    if load(older) && load(insn) {
        return match (older.mem, insn.mem) {
            (Some(a), Some(b)) => {
                a.base == b.base
                    && a.index.is_none()
                    && b.index.is_none()
                    && !a.writeback
                    && (a.offset - b.offset).rem_euclid(8) == 4
            }
            _ => false,
        };
    }
    // [m7-meas] fpu: "arithmetic instructions cannot be dual issued (e.g `vadd.f` + `vadd.f` or
    // `vmul.f` + `vadd.f`)"; "multiply accumulate instructions cannot be dual issued with vldr,
    // vstr or any vmov". FP arithmetic beside integer instructions pairs (measured for double
    // precision: "all arithmetic instructions can dual issue with integer instructions";
    // INFERRED for single precision).
    if fp_arith(older) && fp_arith(insn) {
        return false;
    }
    if (fp_mac(older) && fp_transfer(insn)) || (fp_transfer(older) && fp_mac(insn)) {
        return false;
    }
    true
}

/// Instructions that can take either issue slot.
fn pairable(i: &Insn) -> bool {
    match i.class {
        // An ALU write to PC is a branch that is not predicted: alone.
        Class::Alu | Class::Hint | Class::Load { .. } | Class::Store { .. } => !i.writes.contains(PC),
        // [m7-meas] "`it` instruction cannot be tripple issued": it pairs with one instruction.
        Class::It => true,
        Class::Mul | Class::MulAcc | Class::MulLong | Class::MulAccLong | Class::Dsp => true,
        // [m7-meas] the template's `nop.w; bne.w` pair, and "not-taken branch can dual issue with
        // following instruction". Indirect branches (BX, BLX) are left alone (not measured).
        Class::Branch => direct_branch(i),
        // [m7-meas] "`vldr.f` can be dual issed"; `vstr.f` pairs except beside a MAC (above);
        // "`vdiv.f`/`vsqrt.f` ... dual issues with one integer instruction".
        Class::Fp(
            FpClass::Load { double: false }
            | FpClass::Store { double: false }
            | FpClass::Alu { double: false }
            | FpClass::Compare { double: false }
            | FpClass::MulAcc { double: false }
            | FpClass::FusedMulAcc { double: false }
            | FpClass::DivSqrt { double: false }
            | FpClass::MoveCore,
        ) => true,
        // [m7-meas] "load/store pair/multiple (incl pushpop) cannot dual issue with preceeding or
        // folowing instructions"; "`vstr.d`, `vldr.d` can't dual issue with anything"; "moving
        // two registers (fpu to integer and integer to fpu) cannot be dual issued with anything".
        // Double-precision arithmetic: "sometimes ... very inconsistent": alone. Divide, TBB,
        // barriers and system instructions: [M7-llvm] single issue.
        _ => false,
    }
}

/// Slot 0 (older op) only: bitfield, extend, REV, PKH, CLZ and the DSP/SIMD instructions other
/// than multiplies ([m7-meas] "bitfield and DSP instructions except multiplication").
fn older_only(i: &Insn) -> bool {
    bitmanip(i) || i.mnemonic.starts_with("clz") || (i.class == Class::Dsp && !dsp_multiply(i))
}

/// Bitfield, extend, byte-reverse and pack instructions.
fn bitmanip(i: &Insn) -> bool {
    bitfield(i) || i.mnemonic.starts_with("pkh")
}

/// The bitmanip ops that use the early-ALU (EX1) shifter: all but the plain extends.
fn shifter_bitmanip(i: &Insn) -> bool {
    bitmanip(i) && !plain_extend(i)
}

/// UXTB, UXTH, SXTB, SXTH, UXTB16, SXTB16 (optionally rotated; not the accumulating
/// `{s,u}xta*`): older op only like every bitmanip op, and their result is an address a cycle
/// late ([m7-meas] names `uxtb` for both), but they neither read their source in EX1 nor occupy
/// the EX1 shifter. [m7-meas] lists which bitmanip ops read early ("`sbfx`, `ubfx`, `rbit`,
/// `rev`, `rev16`, `revsh`"; "`bfi`, `pkh{bt,tb}` and `{s,u}xta{b,h,b16}`") and which cannot
/// pair with a shifted operand2 (the same set plus `bfc`), both times without the plain
/// extends, and gives `uxtab` (not `uxtb`) as its example of a "bitmanip ... op using early alu
/// shifter"; [M7-llvm] (Arm's model) gives `(t|t2)(S|U)XT(B|H)` the SIMD and ALU units without
/// `M7UnitShift1` and a normal EX2 read (`ReadALU`), where `(S|U)XTA`, `PKH`, `SBFX/UBFX` and
/// `REV/RBIT` take `M7UnitShift1` and read at EX1 (`M7Read_ISS`). [mastodon-m7] disagrees ("sign
/// and zero extension operations _also_ count as having shifted operands", noting that this
/// contradicts other reverse engineers); the model follows the measurement that lists the
/// instructions one by one and Arm's own model, which agree.
fn plain_extend(i: &Insn) -> bool {
    let m = i.mnemonic.as_str();
    (m.starts_with("uxt") || m.starts_with("sxt")) && !m[3..].starts_with('a')
}

/// The DSP multiplies (SMLAD, SMUAD, SMULxy, SMLAxy, SMMUL, ...): the MAC unit. [m7-meas]:
/// "`smlaxy`,`smlalxy`,`smulxy` ... can be dual issued with dsp/bitmanip and operand2
/// inline_shifted_reg/shifted_constant instructions as well as execute in any opcode slot".
fn dsp_multiply(i: &Insn) -> bool {
    i.class == Class::Dsp && i.mnemonic.starts_with("sm")
}

/// Uses the multiply-accumulate unit.
fn mac(i: &Insn) -> bool {
    matches!(i.class, Class::Mul | Class::MulAcc | Class::MulLong | Class::MulAccLong) || dsp_multiply(i)
}

fn store(i: &Insn) -> bool {
    matches!(i.class, Class::Store { .. } | Class::Fp(FpClass::Store { .. }))
}

fn load(i: &Insn) -> bool {
    matches!(i.class, Class::Load { .. } | Class::Fp(FpClass::Load { .. }))
}

fn fp_arith(i: &Insn) -> bool {
    matches!(
        i.class,
        Class::Fp(
            FpClass::Alu { .. }
                | FpClass::Compare { .. }
                | FpClass::MulAcc { .. }
                | FpClass::FusedMulAcc { .. }
                | FpClass::DivSqrt { .. }
        )
    )
}

fn fp_mac(i: &Insn) -> bool {
    matches!(i.class, Class::Fp(FpClass::MulAcc { .. } | FpClass::FusedMulAcc { .. }))
}

fn fp_transfer(i: &Insn) -> bool {
    matches!(i.class, Class::Fp(FpClass::Load { .. } | FpClass::Store { .. } | FpClass::MoveCore))
        || (i.class == Class::Fp(FpClass::Alu { double: false }) && i.mnemonic.starts_with("vmov"))
}

/// An operand2 that goes through the EX1 shifter: an inline shifted register or a shifted 8-bit
/// constant (a data-processing instruction; a load's scaled index is address generation).
fn operand2_shifted(i: &Insn) -> bool {
    i.class == Class::Alu && !bitmanip(i) && (shifted_register(i) || shifted_constant(i))
}

/// Whether `i` occupies the EX1 shifter: a shifted operand2 or a shifter bitmanip op.
fn uses_ex1_shifter(i: &Insn) -> bool {
    operand2_shifted(i) || shifter_bitmanip(i)
}

/// A plain shift or rotate (`lsl.w r2, r3, #12`, `ror.w r2, r3, r4`), not RRX.
fn plain_shift(i: &Insn) -> bool {
    i.class == Class::Alu && ["lsl", "lsr", "asr", "ror"].iter().any(|m| i.mnemonic.starts_with(m))
}

/// [m7-meas] "result of early alu can be forwarded to late alu in 0 cycles, or early alu next
/// cycle: `add`, `sub`, reg-reg or simple and constructed constants (not shifted ones); `mov`,
/// reg-reg or simple and constructed constants (not shifted ones) + simple shifts and rotations
/// (aliased to mov) except rrx"; "`movw` + `movt` pair can dual issue with mutual dependency".
/// [mastodon-m7]: `ADD.W R1, R0, R3; ADD.W R1, R1, R2` dual issue.
fn early_alu(i: &Insn) -> bool {
    if i.class != Class::Alu || i.writes.contains(PC) || operand2_shifted(i) {
        return false;
    }
    let m = i.mnemonic.as_str();
    let stem = m.split('.').next().unwrap_or(m);
    matches!(stem, "add" | "adds" | "addw" | "sub" | "subs" | "subw" | "mov" | "movs" | "movw" | "movt" | "adr")
        || (plain_shift(i) && i.operands.rsplit(',').next().is_some_and(|t| t.trim().starts_with('#')))
}

/// [m7-meas] "`add`, `sub` and non shifting `mov` can enter early alu from older op only", while
/// "shifts and rotations (aliased to mov) can enter early alu from older or younger op".
fn early_from_younger(i: &Insn) -> bool {
    plain_shift(i)
}

/// Saturating and absolute-difference DSP ops: [M7-llvm] `M7WriteSIMD2`/`M7WriteShSIMD2`
/// latency 2 (QADD, UQADD, QDADD, SSAT, USAT, USAD8, ...). Not measured.
fn two_cycle_dsp(i: &Insn) -> bool {
    let m = i.mnemonic.as_str();
    ["qadd", "qsub", "qasx", "qsax", "qdadd", "qdsub", "uqadd", "uqsub", "uqasx", "uqsax", "ssat", "usat", "usad"]
        .iter()
        .any(|p| m.starts_with(p))
}

/// The register an instruction reads in EX1 as a shifter input: an inline shifted operand2
/// register ([m7-meas] "inline shifted/rotated (register) operand is consumed in early ALU
/// (source must be available a cycle earlier than normally)"), or the source of a bitfield,
/// extending add, REV or PKH ([m7-meas] "`sbfx`, `ubfx`, `rbit`,`rev` ... execute in early alu
/// and can't source from late ALU of previous cycle"; "in `bfi`, `pkh{bt,tb}` and
/// `{s,u}xta{b,h,b16}` instructions the 'extracted' or shifted ... register consume its operand
/// in early ALU"): the last register operand in each of these forms. Not the plain extends
/// ([`plain_extend`]), which read in EX2.
fn early_operand(i: &Insn) -> Option<Reg> {
    if !(shifter_bitmanip(i) || (operand2_shifted(i) && shifted_register(i))) {
        return None;
    }
    i.operands.split(',').map(str::trim).rev().find_map(register)
}

/// Which registers `insn` reads, and how.
fn uses(insn: &Insn) -> Vec<(Reg, Use)> {
    let early = early_operand(insn);
    let acc = accumulator(insn);
    let stores = matches!(
        insn.class,
        Class::Store { .. }
            | Class::StoreDouble
            | Class::StoreMultiple { .. }
            | Class::Fp(FpClass::Store { .. } | FpClass::StoreMultiple { .. })
    );
    // A direct conditional branch (CBZ/CBNZ) is predicted: its register, like the flags of Bcc,
    // is checked when the branch resolves, not at issue.
    if direct_branch(insn) {
        return Vec::new();
    }
    (0..15u8)
        .filter(|&r| insn.reads.contains(r))
        .map(|r| {
            let u = match insn.mem {
                Some(m) if m.index == Some(r) => Use::Index,
                Some(m) if m.base == r => Use::Addr,
                _ if stores => Use::Store,
                _ if acc.is_some_and(|a| a.contains(r)) => Use::Acc,
                _ if mac(insn) => Use::Mul,
                _ if early == Some(r) => Use::Early,
                // BX/BLX Rm: the target is needed to redirect fetch (INFERRED: as an address).
                _ if insn.class == Class::Branch => Use::Addr,
                _ if early.is_some() => Use::LateBesideEarly,
                _ => Use::Late,
            };
            (r, u)
        })
        .collect()
}

/// Cycles from now until `r` can be read as `u` (0: in the current cycle).
fn ready_at(state: &M7State, r: Reg, u: Use) -> u8 {
    let e = &state.regs[usize::from(r)];
    e.ready.get(u).saturating_sub(e.age)
}

/// Whether a byte/halfword store must wait one cycle to issue `after` cycles from now:
/// [m7-meas] "store buffer doesn't merge series of consecutive stores, so `strb` and `strh` will
/// clog the store buffer with RMW operations. When doing one byte/half store every cycle, the
/// throughput is ... 2 cycles per store if targeting even/odd bank and 2.4 cycles for unit
/// stride advancing `strb`. (`strh` is still 2 cycles)": a sub-word store in the cycle right
/// after another waits one (one bank: 4 a store, not modelled; addresses are not static).
fn subword_store_waits(state: &M7State, insn: &Insn, after: u8) -> bool {
    matches!(insn.class, Class::Store { width } if width < 4)
        && state.subword_store_age != NONE
        && state.subword_store_age.saturating_add(after) < 2
}

/// Time passes: `cycles` more cycles since every producer issued.
fn advance(state: &mut M7State, cycles: u8) {
    for e in &mut state.regs {
        e.age = e.age.saturating_add(cycles).min(AGE_MAX);
    }
    if state.subword_store_age != NONE {
        state.subword_store_age = state.subword_store_age.saturating_add(cycles).min(AGE_MAX);
    }
}

#[derive(Debug, Clone, Copy, PartialEq, Eq)]
enum Slot {
    /// The first instruction of its cycle (or alone in it).
    Older,
    /// Dual issued after another one.
    Younger,
}

/// Enters `insn`'s results into the scoreboard, issued in the current cycle in `slot`, with its
/// sources available to the early ALU (`early`) or not.
fn record(state: &mut M7State, insn: &Insn, slot: Slot, early: bool) {
    let wb_base = insn.mem.filter(|m| m.writeback && m.base != PC).map(|m| m.base);
    let ready = result_latency(insn, slot, early);
    for r in (0..15u8).filter(|&r| insn.writes.contains(r)) {
        let ready = if Some(r) == wb_base { BASE_UPDATE } else { ready };
        state.regs[usize::from(r)] = Entry { ready, age: 0 };
    }
    if matches!(insn.class, Class::Store { width } if width < 4) {
        state.subword_store_age = 0;
    }
}

/// A pre/post-indexed base update (the AGU's result in EX1): [m7-meas] "pre indexed and post
/// indexed loads can be dual issued if there is no bank conflict and resulting address is not
/// reused in same cycle (can be issued back to back every cycle)"; [M7-llvm] `M7BaseUpdate`
/// "bypassable out of EX1". Usable by anything from the next cycle.
const BASE_UPDATE: Ready =
    Ready { late: 1, late_beside_early: 1, early: 1, addr: 1, index: 1, acc: 1, mul: 1, store: 1 };

/// When each kind of consumer may issue after `insn` (issued in `slot`, its sources available
/// to the early ALU or not).
fn result_latency(insn: &Insn, slot: Slot, early: bool) -> Ready {
    match insn.class {
        // [m7-meas] "word loads can be consumed by late ALU in next cycle, except instructions
        // that consume one of the operands in early ALU"; "all multiplications and multiply
        // accumulates can't consume `ldr` result from previous cycle"; "accumulate dependency
        // ... can consume `ldrb` result from previous cycle"; stores "can store any result in
        // same cycle, including `ldr`,`ldrh`,`ldrb`". Address uses: [M7-llvm] LoadLatency 2
        // ("best case for load-use") for a base, and "word loads into B operand of a
        // load/store ... cannot bypass their scheduling stage" (+1) for an index (not measured).
        // LDRD/LDM: [M7-llvm] `WriteLd` and `M7LoadLatency1`, as a word load.
        Class::Load { width: 4 } | Class::LoadDouble | Class::LoadMultiple { .. } => {
            Ready { late: 1, late_beside_early: 2, early: 2, addr: 2, index: 3, acc: 1, mul: 2, store: 0 }
        }
        // [m7-meas] "byte/half loads can be consumed in secend cycle by late ALU (1 extra cycle of
        // result latency), or third in early ALU"; addresses as the early ALU ([M7-llvm]
        // `M7SlowLoad` latency 2 read at EX1: 3).
        Class::Load { .. } => {
            Ready { late: 2, late_beside_early: 2, early: 3, addr: 3, index: 3, acc: 1, mul: 2, store: 0 }
        }
        // [m7-meas] "all multiplications and multiply accumulates have 1 additional cycle of
        // result latency"; "all multiply accumulates can be chained on accumulator dependency
        // each cycle". Into an address: [M7-llvm] "Multiplies into any address generation cannot
        // bypass from EX3 ... first legal bypass is EX4->EX1", latency 4 (not measured). Into a
        // store's data: [M7-llvm] store data is read at EX3 (`M7Read_EX2`), so the next cycle.
        _ if mac(insn) => {
            Ready { late: 2, late_beside_early: 2, early: 3, addr: 4, index: 4, acc: 1, mul: 2, store: 1 }
        }
        // [M7-llvm] latency-2 DSP ops (not measured).
        _ if two_cycle_dsp(insn) => Ready { store: 0, acc: 1, ..Ready::uniform(2, 3) },
        // [m7-meas] early-ALU results forward "to late alu in 0 cycles, or early alu next cycle"
        // (so an address or a shifted operand can use them in the next cycle too), when the
        // instruction executes early: as the older op (a shift also as the younger one), with
        // its sources there in time (`sources_early`).
        _ if early_alu(insn) && early && (slot == Slot::Older || early_from_younger(insn)) => {
            Ready { late: 0, late_beside_early: 0, early: 1, addr: 1, index: 1, acc: 0, mul: 0, store: 0 }
        }
        // Everything else that writes a core register finishes in the late ALU (EX2): the next
        // cycle for late-ALU, multiply and accumulate operands ("late ALU from the same cycle"
        // for the accumulator), one more for EX1 consumers: [m7-meas] "bitfield/dsp instruction
        // ... result cannot be used as index or address by load/store instructions in next
        // cycle (1 extra cycle latency)", `rev` "result can't be used by AGU, another
        // `rev*`,`rbit` instruction or as inline shifted operand next cycle", and an inline
        // shifted operand's "source must be available a cycle earlier than normally". For
        // ordinary late-ALU results feeding an address: INFERRED from the same early/late ALU
        // split and [M7-llvm]'s address operands read at EX1 (`M7Read_ISS`). Divides block issue
        // for their duration, so their result is there when the next instruction issues.
        Class::Div => Ready::uniform(1, 1),
        _ => Ready { store: 0, acc: 0, ..Ready::uniform(1, 2) },
    }
}

#[cfg(test)]
mod tests {
    use crate::{Core, Model};
    use mcubench_thumb::Decoder;

    fn cycles(halfwords: &[u16]) -> u64 {
        let bytes: Vec<u8> = halfwords.iter().flat_map(|h| h.to_le_bytes()).collect();
        let (insns, err) = Decoder::for_core(Core::CortexM7).unwrap().decode_block(0x100, &bytes);
        assert!(err.is_none(), "{err:?}");
        Model::new(Core::CortexM7).block(&insns).fall_through
    }

    /// [m7-meas]'s pairing restrictions, one pair each.
    #[test]
    fn dual_issue_restrictions() {
        // ldr r1, [r2]; ldr r3, [r2, #4]: different banks, pair. [r2, #8]: same bank, not.
        assert_eq!(cycles(&[0x6811, 0x6853]), 1);
        assert_eq!(cycles(&[0x6811, 0x6893]), 2);
        // str r1, [r2]; str r3, [r2, #4]: two stores never pair; ldr + str pair.
        assert_eq!(cycles(&[0x6011, 0x6053]), 2);
        assert_eq!(cycles(&[0x6811, 0x6053]), 1);
        // add.w r0, r1, r2, lsl #4; add.w r3, r4, r5, lsl #4: one shifter per cycle. With a plain
        // add.w r0, r1, r2 first they pair.
        assert_eq!(cycles(&[0xeb01, 0x1002, 0xeb04, 0x1305]), 2);
        assert_eq!(cycles(&[0xeb01, 0x0002, 0xeb04, 0x1305]), 1);
        // ldmia r2, {r3, r4, r5, r6}: ceil(4/2) = 2, alone.
        assert_eq!(cycles(&[0xca78]), 2);
        // uxtb r1, r3 as the younger op cannot pair (older only): adds r4, #1; uxtb r1, r3 = 2.
        assert_eq!(cycles(&[0x3401, 0xb2d9]), 2);
        // ... but as the older op it pairs: uxtb r1, r3; adds r4, #1 = 1.
        assert_eq!(cycles(&[0xb2d9, 0x3401]), 1);
    }

    /// Plain extends (`uxtb`, `sxth`, ...) against the bitmanip ops that use the EX1 shifter
    /// (`uxtab`, `rev`, ...): [m7-meas]'s lists and [M7-llvm]'s units (see `plain_extend`).
    #[test]
    fn plain_extends_do_not_use_the_early_shifter() {
        // uxtb.w r0, r1, ror #8; eor.w r2, r2, r3, ror #24: a plain extend pairs with a shifted
        // operand2 as the older op: 1. uxtab r0, r4, r1 in its place takes the shifter: 2.
        assert_eq!(cycles(&[0xfa5f, 0xf091, 0xea82, 0x6233]), 1);
        assert_eq!(cycles(&[0xfa54, 0xf081, 0xea82, 0x6233]), 2);
        // eors r1, r2; uxtb r0, r1: the extend reads its source in EX2, so the late result of
        // the cycle before is in time: 2. rev r0, r1 reads in EX1 and waits one: 3.
        assert_eq!(cycles(&[0x4051, 0xb2c8]), 2);
        assert_eq!(cycles(&[0x4051, 0xba08]), 3);
        // uxtb.w r5, r3, ror #16; lsrs r4, r0, #24 | uxtb r6, r1; ldr.w sl, [r2, r4, lsl #2]: the
        // younger shift runs in the early ALU beside a plain extend, so its result is the next
        // cycle's index: 2. Beside uxtab r5, r7, r3 (a shifter user) it runs late and the load
        // waits one: 3.
        assert_eq!(cycles(&[0xfa5f, 0xf5a3, 0x0e04, 0xb2ce, 0xf852, 0xa024]), 2);
        assert_eq!(cycles(&[0xfa57, 0xf583, 0x0e04, 0xb2ce, 0xf852, 0xa024]), 3);
    }

    /// A VDIV that pairs with an integer instruction still takes its 16 cycles.
    #[test]
    fn a_paired_divide_keeps_its_cycles() {
        // adds r4, #1; vdiv.f32 s0, s1, s2 (0xee80 0x0a81): paired, 16 in all.
        let bytes: Vec<u8> = [0x3401u16, 0xee80, 0x0a81].iter().flat_map(|h| h.to_le_bytes()).collect();
        let (insns, err) = Decoder::new(mcubench_thumb::Arch::V7EM, true).unwrap().decode_block(0x100, &bytes);
        assert!(err.is_none(), "{err:?}");
        assert!(insns[1].mnemonic.starts_with("vdiv"), "{:?}", insns[1].mnemonic);
        assert_eq!(Model::new(Core::CortexM7).block(&insns).fall_through, 16);
    }

    /// The early/late ALU forwarding of [m7-meas].
    #[test]
    fn early_alu_forwards_in_the_same_cycle() {
        // adds r0, r1, r2; adds r3, r0, r4: an add's result feeds the younger add in the same
        // cycle ([mastodon-m7] ADD.W R1,R0,R3; ADD.W R1,R1,R2 pairs).
        assert_eq!(cycles(&[0x1888, 0x1903]), 1);
        // eors r0, r1; adds r3, r0, r4: a logic result is late, so no pair (and no stall).
        assert_eq!(cycles(&[0x4048, 0x1903]), 2);
        // eors r0, r1; ldr r3, [r0]: a late result as the next cycle's address waits one.
        assert_eq!(cycles(&[0x4048, 0x6803]), 3);
        // adds r0, r1, r2; ldr r3, [r0]: an early result as the next cycle's address does not.
        assert_eq!(cycles(&[0x1888, 0x6803]), 2);
        // ldr r0, [r1]; str r0, [r2]: "can store any result in same cycle, including ldr".
        assert_eq!(cycles(&[0x6808, 0x6010]), 1);
        // ldr r0, [r1]; adds r0, #4; ldr r3, [r0]: the add waits for nothing but runs in the
        // late ALU (its source is not early in time), so the address waits one: 1 + 1 + 2 = 4.
        assert_eq!(cycles(&[0x6808, 0x3004, 0x6803]), 4);
    }

    /// [m7-meas]'s load and multiply latencies.
    #[test]
    fn load_and_multiply_latencies() {
        // ldr r0, [r1]; adds r2, r0, #1: word load feeds the late ALU next cycle: 2.
        assert_eq!(cycles(&[0x6808, 0x1c42]), 2);
        // ldrb r0, [r1]; adds r2, r0, #1: byte load, one more: 3.
        assert_eq!(cycles(&[0x7808, 0x1c42]), 3);
        // ldr r0, [r1]; muls r2, r0: a multiply cannot take a load result next cycle: 3.
        assert_eq!(cycles(&[0x6808, 0x4342]), 3);
        // muls r0, r1; adds r2, r0, #1: multiply result latency 2: 3.
        assert_eq!(cycles(&[0x4348, 0x1c42]), 3);
        // A result two instructions back still counts: ldrb r0, [r1]; adds r3, #1 (pairs);
        // adds r2, r0, #1 one cycle later waits one: 1 + 1 + 1 = 3.
        assert_eq!(cycles(&[0x7808, 0x3301, 0x1c42]), 3);
    }
}
