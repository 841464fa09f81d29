//! ARMv7-M: the Cortex-M3 and Cortex-M4 (and M4F with FPv4-SP), a 3-stage pipeline priced from
//! the TRMs' Table 3-1 and load/store timing notes.

use mcubench_thumb::{Class, Flow, FpClass, Insn, LR, SpEffect};
use mcubench_wire::Core;

use crate::Pipe;
use crate::fetch::{literal_wait, refill};
use crate::insn::{address_uses, conditional_branch, writes_pc};
use crate::params::{Multiplier, Params};

/// Fetch sources (public board measurements, read for these rules):
/// - [compendium] "Alignment rules", https://compendium.i-0.nl/docs/instruction-alignment/rules
///   (measured on an STM32 Cortex-M4 from flash at 0 WS): "Groups of three or more unaligned wide
///   instructions will take one extra cycle"; "Branches to unaligned wide instructions will take
///   one extra cycle".
/// - [jnk0le] github:jnk0le/random@3dfc2abd, "pipeline cycle test/doc/cortex_m3m4.md" (STM32F103
///   and STM32F407 measured with DWT.CYCCNT).
///
/// A wide (32-bit) instruction is unaligned when it starts at a halfword (addr % 4 == 2): it
/// straddles two fetch words.
fn unaligned_wide(insn: &Insn) -> bool {
    insn.len == 4 && insn.addr % 4 == 2
}

/// [M3]/[M4] §3.3.1 "P ... ranges from 1 to 3 depending on the alignment and width of the target
/// instruction"; [compendium]: a branch to an unaligned wide instruction costs one more cycle
/// than P = 1 (its two halves need two fetches before it can be decoded).
pub(crate) fn branch_target_extra(first: &Insn) -> u32 {
    u32::from(unaligned_wide(first))
}

/// [M3-ETM] Arm Cortex-M3 TRM r2p0 (DDI 0337G) §15.3 "Branch status interface", Table 15-3
/// "Branches and stages evaluated by the processor": B <imm> (16- and 32-bit, conditional or
/// not) and BL issue their target at decode; BX LR, BLX LR and the 16-bit MOV PC, LR too "if LR
/// is not being written during decode"; ADD PC, BX/BLX Rm (Rm ≠ LR, or LR being written), CBZ,
/// CBNZ, LDR PC, LDM to PC and the 32-bit MOV PC at execute ("the ALU register based branches
/// and LSU PC modifying instructions"; TBB/TBH are LSU PC modifying: their target is loaded).
/// A target issued at execute is fetched one pipeline stage later than one issued at decode: one
/// more refill cycle. With [`branch_target_extra`] this gives the TRM's range, Table 3-1: "P ...
/// ranges from 1 to 3 depending on the alignment and width of the target instruction, and
/// whether the processor manages to speculate the address early". The Cortex-M4 has the M3's
/// 3-stage pipeline and prefetch unit and the same definition of P ([M4] §3.3.1).
///
/// "LR being written during decode": the instruction before (in execute while the branch is
/// decoded) writes LR (`pop {r4, lr}; bx lr`, `ldr lr, [sp], #4; bx lr`).
pub(crate) fn target_at_execute(prev: Option<&Insn>, insn: &Insn) -> bool {
    let lr_written = prev.is_some_and(|p| p.writes.contains(LR));
    match insn.class {
        Class::Branch => match insn.flow {
            // CBZ/CBNZ compare a register in execute; B/Bcc <imm> are decode-time.
            Flow::Branch { .. } => insn.mnemonic.starts_with("cb"),
            Flow::Call { .. } => lr_written,
            // BX LR (a return) and BLX LR.
            Flow::Return | Flow::CallIndirect { reg: LR } => lr_written,
            _ => true,
        },
        Class::TableBranch => true,
        // MOV PC, LR (16-bit) is decode-time; every other ALU write of PC is execute-time.
        Class::Alu if writes_pc(insn) => {
            let mov_lr = insn.len == 2 && insn.mnemonic.starts_with("mov") && insn.reads.contains(LR);
            !mov_lr || lr_written
        }
        Class::Load { .. } | Class::LoadMultiple { .. } => writes_pc(insn),
        _ => false,
    }
}

/// [M4]/[M3] §3.3.2 "Load/store timings": "LDR PC,[any] is always a blocking operation. This
/// means at least two cycles for the load, and three cycles for the pipeline reload. So this
/// operation takes at least five cycles"; "TBB and TBH are also blocking operations. These are at
/// least two cycles for the load, one cycle for the add, and three cycles for the pipeline reload.
/// This means at least six cycles". A target that comes out of a load (LDR PC, LDM/POP with PC,
/// TBB/TBH) is known later than one issued at execute ([`target_at_execute`], P = 2): its refill
/// is the TRM's three cycles, one more (Table 3-1's P at the top of its range, "1 to 3 depending
/// on ... whether the processor manages to speculate the address early"). The section names LDR
/// and the table branches; an LDM/POP that loads PC loads it the same way, last.
pub(crate) fn target_loaded(insn: &Insn) -> bool {
    match insn.class {
        Class::TableBranch => true,
        Class::Load { .. } | Class::LoadMultiple { .. } => writes_pc(insn),
        _ => false,
    }
}

/// [`cost`] plus the fetch rule that spans instructions: [compendium] "groups of three or more
/// unaligned wide instructions will take one extra cycle", and "groups of unaligned wide str only
/// add the penalty cycle from a length of 4". Charged once per group, at the instruction that
/// reaches the length. (Arm knowledge article 103488664, "How does Cortex-M3 handle 32-bit
/// opcodes not aligned on word boundaries?", applies to the M3 and M4: a 3-word prefetch buffer
/// filled one aligned word per cycle, decoupled from decode; straddling instructions need two
/// of its words each.) A 16-bit instruction ends the group: the next 32-bit one starts aligned
/// or a new group.
///
/// Inside a group, a multi-cycle instruction arms the penalty again: [jnk0le]@d8db9f9 adds, from
/// IACR ePrint 2025/523, "multi-cycle instruction followed by three unaligned 32-bit
/// instructions"; [compendium]: a group that mixes memory and non-memory instructions "can cause
/// more than one delay cycle". Read as a second trigger on top of the group's own: the third
/// straddling instruction after a multi-cycle one (2 cycles or more, stalls included) pays one
/// cycle, whether or not the group has paid. (The other reading, that the multi-cycle instruction
/// restarts the group's count and so can cancel its penalty, prices Embench and MQOM, the fit
/// set, up to 1.6 % lower, away from their boards; validation.md.)
pub(crate) fn step(params: &Params, core: Core, pipe: &mut Pipe, prev: Option<&Insn>, insn: &Insn) -> (u32, u32) {
    let (c, taken) = cost(params, core, prev, insn);
    let (c, taken) = prefetch_slot(pipe, insn, c, taken);
    if !unaligned_wide(insn) {
        pipe.unaligned_run = 0;
        pipe.unaligned_stores = false;
        pipe.after_multi = None;
        return (c, taken);
    }
    let store = matches!(insn.class, Class::Store { .. });
    pipe.unaligned_stores = store && (pipe.unaligned_run == 0 || pipe.unaligned_stores);
    pipe.unaligned_run = pipe.unaligned_run.saturating_add(1);
    pipe.after_multi = pipe.after_multi.map(|n| n.saturating_add(1));
    // The penalty falls at length 3; a group of stores only so far pays it at 4 instead.
    let penalty = match pipe.unaligned_run {
        3 => !pipe.unaligned_stores,
        4 => pipe.unaligned_stores,
        _ => false,
    } || pipe.after_multi == Some(3);
    if c >= 2 {
        // Counted from the instruction after this one.
        pipe.after_multi = Some(0);
    }
    (c + u32::from(penalty), taken)
}

/// Halfwords the prefetch unit can hold ahead of the instruction being decoded: its FIFO of three
/// words ([M3-PFU]) less the word being decoded.
const FETCH_AHEAD_MAX: u32 = 4;

/// [M3-PFU] Arm Cortex-M3 TRM r2p0 (DDI 0337G) §1.4 "Prefetch Unit": the PFU "fetches
/// instructions from the memory system that can supply one word each cycle" and "buffers up to
/// three word fetches in its FIFO"; "in the case of conditionally executed branches, the address
/// is speculatively presented (consuming a fetch slot on the bus), and the forwarded result
/// determines if the branch path flushes the fetch queue or is preserved". [jnk0le]'s M3/M4
/// template (`CM3_pipetest_tmpl.S`, STM32F103/F407): a not-taken `bne.w` closing a loop of 32-bit
/// instructions "will also take 2 cycles if there is less than 2 compressed instructions" in it.
///
/// So the model counts the halfwords fetched ahead of the decoder: a taken branch flushes the
/// queue (0 at a block entered by a branch; the refill P brings the target just in time), each
/// cycle brings one word (2 halfwords) while the FIFO has room, each instruction consumes its
/// length. A B<cond> with an immediate target (decode-time, Table 15-3) takes its cycle's fetch
/// slot for the target: when not taken, the queue needs a word fetched ahead to cover the lost
/// slot, else the next instruction waits one cycle. Taken, it costs 1 + P as before (the stall
/// is removed from the taken extra). A branch, call or return that is always taken empties the
/// queue; a block entered by a branch starts empty, and the not-taken path of a conditional
/// branch continues its block's state (the run-time pricer prices it as a continuation,
/// [`crate::run`]). Approximations: halfword rather than aligned-word bookkeeping; loads do not
/// take fetch slots (code and data on separate buses, I-Code and D-Code/System); the cycle of a
/// straddling-run penalty does not count as a fetch cycle.
fn prefetch_slot(pipe: &mut Pipe, insn: &Insn, c: u32, taken: u32) -> (u32, u32) {
    let len = u32::from(insn.len / 2);
    let ahead = u32::from(pipe.fetch_ahead);
    let speculative = insn.class == Class::Branch
        && conditional_branch(insn)
        && matches!(insn.flow, Flow::Branch { .. })
        && !insn.mnemonic.starts_with("cb");
    if !speculative {
        // A branch, call or return that is always taken flushes the queue.
        let flushed = writes_pc(insn) && !conditional_branch(insn);
        pipe.fetch_ahead = if flushed { 0 } else { (ahead + 2 * c).saturating_sub(len).min(FETCH_AHEAD_MAX) as u8 };
        return (c, taken);
    }
    // The branch's own cycle fetches the target, not the next word.
    let fetched = 2 * c.saturating_sub(1);
    if ahead + fetched >= len {
        pipe.fetch_ahead = (ahead + fetched - len).min(FETCH_AHEAD_MAX) as u8;
        (c, taken)
    } else {
        // One cycle waiting for the next word (fetched in it); a taken branch does not wait.
        pipe.fetch_ahead = (ahead + fetched + 2 - len).min(FETCH_AHEAD_MAX) as u8;
        (c + 1, taken.saturating_sub(1))
    }
}

/// Cost of `insn` after `prev` in the same block, and the extra cycles if it is a conditional
/// branch that is taken. (Also prices the few ARMv7-M classes on the ARMv6-M model's behalf.)
pub(crate) fn cost(params: &Params, core: Core, prev: Option<&Insn>, insn: &Insn) -> (u32, u32) {
    let m0 = matches!(core, Core::CortexM0 | Core::CortexM0Plus);
    let m3 = core == Core::CortexM3;
    // [M3-ETM]: one more refill cycle when the target is issued at execute (M3/M4 only: the
    // ARMv6-M model prices its few ARMv7-M classes here without it).
    let p = refill(params, insn)
        + if m0 { 0 } else { u32::from(target_at_execute(prev, insn)) + u32::from(target_loaded(insn)) };
    let conditional_branch = conditional_branch(insn);
    let taken_pc = |base: u32| if conditional_branch { (base, p) } else { (base + p, 0) };

    match insn.class {
        // [M4]/[M3] Table 3-1 "Branches": B<cc> 1 not taken, 1+P taken; B, BL, BX, BLX 1+P;
        // CBZ/CBNZ 1 or 1+P.
        Class::Branch => taken_pc(1),
        // [M4]/[M3] TBB/TBH: Table 3-1 2+P; §3.3.2 "two cycles for the load, one cycle for the
        // add, and three cycles for the pipeline reload" ([`target_loaded`]): the add is its own
        // cycle (Table 3-1 with P at most 3 would give five, not six). ARMv6-M has no TBB/TBH.
        Class::TableBranch => (3 + p, 0),
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
                // [M4] LDR PC: 2+P ("LDR to PC: 2+P or more"); P = 3 ([`target_loaded`]).
                return (2 + extra + p, 0);
            }
            let base = if pipelines_after(core, prev, insn) { 1 } else { 2 };
            (base + extra + address_dependency(prev, insn), 0)
        }
        Class::Store { .. } => {
            // [M4] "STR Rx,[Ry,#imm] is always one cycle": the data phase overlaps the next
            // instruction thanks to the write buffer. Register-offset stores are 2 unless
            // pipelined after a load/store.
            let register_offset = insn.mem.is_some_and(|m| m.index.is_some());
            let base = if !register_offset || pipelines_after(core, prev, insn) { 1 } else { 2 };
            (base + address_dependency(prev, insn) + store_address_late(core, prev, insn), 0)
        }
        // [M4]/[M3] LDRD, STRD: 1+N with N = 2; they do not pipeline.
        Class::LoadDouble | Class::StoreDouble => (3 + address_dependency(prev, insn), 0),
        // [M4]/[M3] LDM/STM/PUSH/POP: 1+N; POP/LDM with PC: 1+N+P (P = 3, [`target_loaded`]).
        // [jnk0le] "stores can't be pipelined with following load multiple (but can with
        // `stm`)": one more cycle after a single store.
        Class::LoadMultiple { regs } => {
            let n = 1 + u32::from(regs) + u32::from(prev.is_some_and(|p| matches!(p.class, Class::Store { .. })));
            if writes_pc(insn) { taken_pc(n) } else { (n, 0) }
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
        Class::Fp(fp) => (fp_cost(params, core, prev, insn, fp), 0),
    }
}

/// [M4] §7.2.3 Table 7-1, FPv4-SP; double precision only exists on FPv5 (M7, priced there).
fn fp_cost(params: &Params, core: Core, prev: Option<&Insn>, insn: &Insn, fp: FpClass) -> u32 {
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
            } else if pipelines_after(core, prev, insn) {
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
fn pipelines_after(core: Core, prev: Option<&Insn>, insn: &Insn) -> bool {
    let Some(prev) = prev else { return false };
    // [jnk0le] "stores cannot be pipelined with following load instructions (adds extra cycle to
    // store)" — measured on the M3 and M4, narrower than the TRM's "neighboring load and store
    // single instructions can pipeline". Stores after stores still pipeline.
    let is_load = matches!(insn.class, Class::Load { .. } | Class::Fp(FpClass::Load { .. }));
    if is_load && matches!(prev.class, Class::Store { .. }) {
        return false;
    }
    // [jnk0le] "32bit opcode loads (`ldr.w`, `ldrb.w`) may fail to pipeline correctly if they
    // are not positioned at word aligned boundaries" (M3 and M4): a straddling load needs two
    // fetch words before it decodes, too late to overlap its address phase with the previous
    // access's data phase. Read as never pipelining: the source gives no condition under which
    // it still does.
    if is_load && unaligned_wide(insn) {
        return false;
    }
    // [jnk0le] "[cm3] only first load in a chain can be pre or post indexed mode": on the M3 a
    // writeback load never pipelines behind a load. (On the M4 only the same base register,
    // which the address check below already catches: the base was just written back.)
    if core == Core::CortexM3 && is_load && insn.mem.is_some_and(|m| m.writeback) {
        return false;
    }
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

/// [jnk0le] stores: "base address and offset must be available 1 cycle earlier than normally";
/// "post and pre indexed stores cannot be chained back to back on same register base address";
/// "[cm3] pre and post indexed stores effectively execute in 1 cycle when preceeding instruction
/// is not an load". So +1 for a store after a single load or store that wrote (loaded, or wrote
/// back) a register the store's address uses, and on the M3 +1 for a pre/post-indexed store
/// right after a load. SP-based writebacks (PUSH/POP, which are multiples) are not single
/// loads/stores and are left out, as [`address_dependency`] leaves SP adjustments out.
fn store_address_late(core: Core, prev: Option<&Insn>, insn: &Insn) -> u32 {
    let Some(prev) = prev else { return 0 };
    let prev_load = matches!(prev.class, Class::Load { .. });
    if !(prev_load || matches!(prev.class, Class::Store { .. })) {
        return 0;
    }
    if address_uses(insn, prev.writes) {
        return 1;
    }
    u32::from(core == Core::CortexM3 && prev_load && insn.mem.is_some_and(|m| m.writeback))
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

#[cfg(test)]
mod tests {
    use crate::{Core, Model};
    use mcubench_thumb::Decoder;

    fn insns(addr: u32, halfwords: &[u16]) -> Vec<mcubench_thumb::Insn> {
        let bytes: Vec<u8> = halfwords.iter().flat_map(|h| h.to_le_bytes()).collect();
        // The M4F's decoder: every M3/M4 instruction and the FP loads.
        let (insns, err) = Decoder::for_core(Core::CortexM4F).unwrap().decode_block(addr, &bytes);
        assert!(err.is_none(), "{err:?}");
        insns
    }

    /// [compendium]: three straddling 32-bit instructions cost one cycle more, stores only from
    /// four; a branch to a straddling one costs one more. Word aligned: nothing.
    #[test]
    fn straddling_wide_instructions() {
        let m = Model::new(Core::CortexM4);
        let add = [0xf101, 0x0101]; // add.w r1, r1, #1
        let str = [0xf8c2, 0x1004]; // str.w r1, [r2, #4]
        let adds: Vec<u16> = add.repeat(3);
        let unaligned = m.block(&insns(0x102, &adds));
        assert_eq!((unaligned.fall_through, unaligned.branch_entry), (4, 1));
        let aligned = m.block(&insns(0x100, &adds));
        assert_eq!((aligned.fall_through, aligned.branch_entry), (3, 0));
        // Four adds: still one extra cycle for the group.
        assert_eq!(m.block(&insns(0x102, &add.repeat(4))).fall_through, 5);
        // A 16-bit instruction (movs r0, #0) ends the group: 2 + 1 + 2, no penalty.
        let broken = [add, add, [0x2000, 0x2000]].concat();
        assert_eq!(m.block(&insns(0x102, &broken[..5])).fall_through, 3);
        // Stores: 3 pay nothing extra (1 each), 4 pay one.
        assert_eq!(m.block(&insns(0x102, &str.repeat(3))).fall_through, 3);
        assert_eq!(m.block(&insns(0x102, &str.repeat(4))).fall_through, 5);
        // The run is carried across a cut: the same sum wherever the block is cut.
        let four = insns(0x102, &add.repeat(4));
        for cut in 1..4 {
            let (a, exit) = m.block_after(None, &four[..cut]);
            let (b, _) = m.block_after(exit.as_ref(), &four[cut..]);
            assert_eq!(a.fall_through + b.fall_through, 5, "cut at {cut}");
            assert_eq!(b.branch_entry, 0, "a continuation is not entered by a branch");
        }
        // Other cores have no such rule.
        assert_eq!(Model::new(Core::CortexM33).block(&insns(0x102, &adds)).branch_entry, 0);
    }

    /// [jnk0le]@d8db9f9 (ePrint 2025/523): a multi-cycle instruction followed by three straddling
    /// ones costs one more cycle, on top of the group's own; on the M3 as on the M4.
    #[test]
    fn multi_cycle_instruction_arms_the_straddling_penalty_again() {
        let ldr = [0xf8d2, 0x3004]; // ldr.w r3, [r2, #4]: 2 cycles
        let add = [0xf101, 0x0101]; // add.w r1, r1, #1
        let code = [ldr, add, add, add].concat();
        for core in [Core::CortexM3, Core::CortexM4] {
            let m = Model::new(core);
            // Word aligned: 2 + 1 + 1 + 1.
            assert_eq!(m.block(&insns(0x100, &code)).fall_through, 5);
            // Straddling: the group pays at the second add, the load's three at the third.
            assert_eq!(m.block(&insns(0x102, &code)).fall_through, 7, "{core:?}");
            // Two adds after the load: only the group's cycle.
            assert_eq!(m.block(&insns(0x102, &code[..6])).fall_through, 5);
            // Carried across a cut like the group's count.
            let all = insns(0x102, &code);
            for cut in 1..all.len() {
                let (a, exit) = m.block_after(None, &all[..cut]);
                let (b, _) = m.block_after(exit.as_ref(), &all[cut..]);
                assert_eq!(a.fall_through + b.fall_through, 7, "cut at {cut}");
            }
        }
    }

    /// [jnk0le]: a load right after a store does not pipeline; a store after a load does.
    #[test]
    fn load_after_store_does_not_pipeline() {
        let m = Model::new(Core::CortexM4);
        // str r1, [r2]; ldr r3, [r2, #4]; str r3, [r2, #8]
        assert_eq!(m.block(&insns(0x100, &[0x6011, 0x6853, 0x6093])).fall_through, 1 + 2 + 1);
        // ldr r3, [r2, #4]; ldr r1, [r2]: 2 + 1 (pipelined)
        assert_eq!(m.block(&insns(0x100, &[0x6853, 0x6811])).fall_through, 3);
        // str r1, [r2]; ldmia r2, {r3, r4}: 1 + (1 + 2 + 1)
        assert_eq!(m.block(&insns(0x100, &[0x6011, 0xca18])).fall_through, 5);
    }

    /// [jnk0le]: a 32-bit load at a halfword does not pipeline behind the load before it; word
    /// aligned it does. Across a block cut too (the previous instruction is carried).
    #[test]
    fn straddling_wide_load_does_not_pipeline() {
        let ldr = [0x6813]; // ldr r3, [r2]
        let wide = [0xf8d2, 0x1004]; // ldr.w r1, [r2, #4]
        let vldr = [0xed92, 0x0a01]; // vldr s0, [r2, #4]
        for core in [Core::CortexM3, Core::CortexM4] {
            let m = Model::new(core);
            // At 0x100 the ldr.w starts at 0x102 (straddles): 2 + 2; at 0x102 it is aligned: 2 + 1.
            let pair = [&ldr[..], &wide].concat();
            assert_eq!(m.block(&insns(0x100, &pair)).fall_through, 4, "{core:?}");
            assert_eq!(m.block(&insns(0x102, &pair)).fall_through, 3, "{core:?}");
            let all = insns(0x100, &pair);
            let (a, exit) = m.block_after(None, &all[..1]);
            let (b, _) = m.block_after(exit.as_ref(), &all[1..]);
            assert_eq!(a.fall_through + b.fall_through, 4, "cut, {core:?}");
        }
        // A VLDR is a 32-bit load too (M4F).
        let m = Model::new(Core::CortexM4);
        let fp = [&ldr[..], &vldr].concat();
        assert_eq!(m.block(&insns(0x100, &fp)).fall_through, 4);
        assert_eq!(m.block(&insns(0x102, &fp)).fall_through, 3);
    }

    /// Cortex-M3 TRM Table 15-3: decode-time branches pay P = 1, execute-time ones P = 2; §3.3.2:
    /// a target loaded from memory P = 3.
    #[test]
    fn refill_by_where_the_target_is_issued() {
        let m = Model::new(Core::CortexM4);
        // (halfwords, fall-through, taken extra)
        let cases: &[(&[u16], u64, u64)] = &[
            (&[0x4770], 2, 0),             // bx lr: decode time
            (&[0x468e, 0x4770], 1 + 3, 0), // mov lr, r1; bx lr: LR written during decode
            (&[0x4718], 3, 0),             // bx r3
            (&[0x46f7], 2, 0),             // mov pc, lr (16-bit): decode time
            (&[0x468e, 0x46f7], 1 + 3, 0), // mov lr, r1; mov pc, lr
            (&[0xb101], 1, 2),             // cbz r1: execute time
            (&[0xd1fe], 1 + 1, 0),         // bne: decode time (1 + P taken); alone after a branch, nothing
            //                                fetched ahead covers its speculative fetch slot: 2 not taken
            (&[0xe7fe], 2, 0),             // b
            (&[0xf7ff, 0xfff5], 2, 0),     // bl
            (&[0xbd10], 1 + 2 + 3, 0),     // pop {r4, pc}: LDM to PC, a loaded target
            (&[0xf85d, 0xfb04], 2 + 3, 0), // ldr.w pc, [sp], #4: "at least five cycles"
            (&[0xe8df, 0xf001], 3 + 3, 0), // tbb [pc, r1]: load 2, add 1, "at least six cycles"
        ];
        for (hw, fall, taken) in cases {
            let b = m.block(&insns(0x100, hw));
            assert_eq!((b.fall_through, b.taken_extra), (*fall, *taken), "{hw:04x?}");
        }
    }

    /// jnk0le: a store's base is needed a cycle early; M3: a pre/post-indexed store after a load.
    #[test]
    fn late_store_bases() {
        let m4 = Model::new(Core::CortexM4);
        let m3 = Model::new(Core::CortexM3);
        // str.w r1, [r3], #4 twice: the second's base was just written back.
        assert_eq!(m4.block(&insns(0x100, &[0xf843, 0x1b04, 0xf843, 0x1b04])).fall_through, 1 + 2);
        // ldr r4, [r2]; str r1, [r4]: the base is the loaded value.
        assert_eq!(m4.block(&insns(0x100, &[0x6814, 0x6021])).fall_through, 2 + 2);
        // ldr r4, [r2]; str.w r4, [r5, #-4]!: M4 1 (pipelined), M3 2.
        let wb = insns(0x100, &[0x6814, 0xf845, 0x4d04]);
        assert_eq!((m4.block(&wb).fall_through, m3.block(&wb).fall_through), (2 + 1, 2 + 2));
    }
}
