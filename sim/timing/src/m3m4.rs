//! ARMv7-M: the Cortex-M3 and Cortex-M4 (and M4F with FPv4-SP), a 3-stage pipeline priced from
//! the TRMs' Table 3-1 and load/store timing notes.

use mcubench_thumb::{Class, FpClass, Insn, SpEffect};
use mcubench_wire::Core;

use crate::fetch::{literal_wait, refill};
use crate::insn::{address_uses, conditional_branch, writes_pc};
use crate::params::{Multiplier, Params};

/// Cost of `insn` after `prev` in the same block, and the extra cycles if it is a conditional
/// branch that is taken. (Also prices the few ARMv7-M classes on the ARMv6-M model's behalf.)
pub(crate) fn cost(params: &Params, core: Core, prev: Option<&Insn>, insn: &Insn) -> (u32, u32) {
    let p = refill(params, insn);
    let m0 = matches!(core, Core::CortexM0 | Core::CortexM0Plus);
    let m3 = core == Core::CortexM3;
    let conditional_branch = conditional_branch(insn);
    let taken_pc = |base: u32| if conditional_branch { (base, p) } else { (base + p, 0) };

    match insn.class {
        // [M4]/[M3] Table 3-1 "Branches": B<cc> 1 not taken, 1+P taken; B, BL, BX, BLX 1+P;
        // CBZ/CBNZ 1 or 1+P.
        Class::Branch => taken_pc(1),
        // [M4]/[M3] TBB/TBH: 2+P.
        Class::TableBranch => (2 + p, 0),
        // [M4]/[M3] "IT instructions can be folded onto a preceding 16-bit Thumb instruction,
        // enabling an execution time of zero cycles".
        Class::It => {
            if prev.is_some_and(|p| p.len == 2) {
                (0, 0)
            } else {
                (1, 0)
            }
        }
        // ADD/MOV to PC: 1+P ([M4]/[M3]).
        Class::Alu => {
            if writes_pc(insn) {
                taken_pc(1)
            } else {
                (1, 0)
            }
        }
        // [M4] MUL, MLA, MLS, and all long multiplies: 1 cycle. [M3] MUL 1, MLA/MLS 2,
        // UMULL/SMULL 3–5, UMLAL/SMLAL 4–7.
        Class::Mul => {
            if m0 && params.m0_multiplier == Multiplier::Small {
                (32, 0)
            } else {
                (1, 0)
            }
        }
        Class::MulAcc => (if m3 { 2 } else { 1 }, 0),
        Class::MulLong => (if m3 { params.m3_multiply_long } else { 1 }, 0),
        Class::MulAccLong => (if m3 { params.m3_multiply_accumulate_long } else { 1 }, 0),
        // [M4] DSP/SIMD instructions: 1 cycle.
        Class::Dsp => (1, 0),
        // [M4]/[M3] SDIV/UDIV 2–12: fixed estimate (see Params::divide).
        Class::Div => (params.divide, 0),
        // [M4]/[M3] LDR 2; §3.3.2 pipelining: "neighboring load and store single instructions
        // can pipeline their address and data phases", so a load or store after a load or
        // store costs 1 unless it depends on the previous load's result for its address, the
        // previous instruction is STR with register offset ("other instructions cannot be
        // pipelined after STR with register offset"), or the previous is LDRD/STRD.
        Class::Load { .. } => {
            let extra = literal_wait(params, insn);
            if writes_pc(insn) {
                // [M4] LDR PC: 2+P ("LDR to PC: 2+P or more").
                return (2 + extra + p, 0);
            }
            let base = if pipelines_after(prev, insn) { 1 } else { 2 };
            (base + extra + address_dependency(prev, insn), 0)
        }
        Class::Store { .. } => {
            // [M4] "STR Rx,[Ry,#imm] is always one cycle": the data phase overlaps the next
            // instruction thanks to the write buffer. Register-offset stores are 2 unless
            // pipelined after a load/store.
            let register_offset = insn.mem.is_some_and(|m| m.index.is_some());
            let base = if !register_offset || pipelines_after(prev, insn) { 1 } else { 2 };
            (base + address_dependency(prev, insn), 0)
        }
        // [M4]/[M3] LDRD, STRD: 1+N with N = 2; they do not pipeline.
        Class::LoadDouble | Class::StoreDouble => (3 + address_dependency(prev, insn), 0),
        // [M4]/[M3] LDM/STM/PUSH/POP: 1+N; POP/LDM with PC: 1+N+P.
        Class::LoadMultiple { regs } => {
            let n = u32::from(regs);
            if writes_pc(insn) { taken_pc(1 + n) } else { (1 + n, 0) }
        }
        Class::StoreMultiple { regs } => (1 + u32::from(regs), 0),
        // [M4]/[M3] DMB/DSB/ISB: 1+B, B = 0 when the bus is idle (no outstanding writes here).
        Class::Barrier => (1, 0),
        // [M4] NOP, YIELD, SEV: 1. WFI/WFE would sleep; the plugin never sees a sleep.
        Class::Hint => (1, 0),
        // [M4] MRS/MSR 1–2 (we use 2), CPS 1.
        // SVC/BKPT/UDF trap: the instruction only; the plugin adds exception entry
        // ([`crate::CoreTiming::exception_entry`]) when the handler starts.
        Class::System => (if insn.mnemonic.starts_with("cps") { 1 } else { 2 }, 0),
        Class::Fp(fp) => (fp_cost(params, prev, insn, fp), 0),
    }
}

/// [M4] §7.2.3 Table 7-1, FPv4-SP; double precision only exists on FPv5 (M7, priced there).
fn fp_cost(params: &Params, prev: Option<&Insn>, insn: &Insn, fp: FpClass) -> u32 {
    match fp {
        // VADD/VSUB/VMUL/VABS/VNEG/VCVT/VMOV imm/reg: 1.
        FpClass::Alu { .. } | FpClass::Compare { .. } => 1,
        // VMLA/VMLS/VNMLA/VNMLS: 3; VFMA/VFMS/VFNMA/VFNMS: 3.
        FpClass::MulAcc { .. } | FpClass::FusedMulAcc { .. } => 3,
        // VDIV/VSQRT: 14.
        FpClass::DivSqrt { .. } => 14,
        // VLDR.32: 2 (pipelines like LDR: 1 after another load/store); VLDR.64: 3.
        FpClass::Load { double } => {
            let base = if double {
                3
            } else if pipelines_after(prev, insn) {
                1
            } else {
                2
            };
            base + literal_wait(params, insn)
        }
        FpClass::Store { double } => {
            if double {
                3
            } else {
                2
            }
        }
        // VLDM/VSTM/VPUSH/VPOP: 1+N for singles, 1+2N for doubles.
        FpClass::LoadMultiple { regs, double } | FpClass::StoreMultiple { regs, double } => {
            1 + u32::from(regs) * if double { 2 } else { 1 }
        }
        // VMOV Sn<->Rt: 1 (the table gives 1, and 2 for the two-register forms).
        FpClass::MoveCore => 1,
        FpClass::MoveCore2 => 2,
        // VMRS/VMSR: 1.
        FpClass::System => 1,
    }
}

/// [M4]/[M3] §3.3.2: may this load/store pipeline behind `prev`?
fn pipelines_after(prev: Option<&Insn>, insn: &Insn) -> bool {
    let Some(prev) = prev else { return false };
    let prev_single =
        matches!(prev.class, Class::Load { .. } | Class::Store { .. } | Class::Fp(FpClass::Load { double: false }));
    if !prev_single {
        return false;
    }
    // Nothing pipelines after STR with register offset.
    if matches!(prev.class, Class::Store { .. }) && prev.mem.is_some_and(|m| m.index.is_some()) {
        return false;
    }
    // The address must not need the value the previous load is still bringing in.
    !address_uses(insn, prev.writes)
}

/// +1 when an address register of `insn` was written by the immediately preceding data
/// processing instruction: the address is generated early in the pipeline, before that
/// result is written back (timing notes, "address dependency"). A preceding load whose result
/// is the address is priced by the lost pipelining instead ([`pipelines_after`]).
pub(crate) fn address_dependency(prev: Option<&Insn>, insn: &Insn) -> u32 {
    match prev {
        Some(prev)
            if matches!(prev.class, Class::Alu | Class::Mul | Class::MulAcc | Class::Dsp)
                && prev.sp == SpEffect::None
                && address_uses(insn, prev.writes) =>
        {
            1
        }
        _ => 0,
    }
}
