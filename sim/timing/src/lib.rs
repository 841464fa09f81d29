//! mcubench-timing: per-core cycle cost models over decoded Thumb instructions.
//!
//! The models are tables plus a few pairwise rules, priced per straight-line block so that a QEMU
//! plugin can compute a block's cost once at translation time and add a taken-branch refill at run
//! time. They estimate; they do not simulate. What they assume:
//!
//! - Zero wait states unless [`Params::wait_states`] says otherwise. Real boards add flash wait
//!   states (e.g. 5 at 168 MHz on an STM32F4 behind its accelerator); published numbers are usually
//!   taken at low clock with 0 WS.
//! - Operand values are not visible (QEMU plugin API v1 cannot read registers), so data-dependent
//!   latencies (SDIV/UDIV, the Cortex-M3 long multiplies) use the fixed estimates in [`Params`].
//! - Pipeline interactions are only priced inside one block; a load at the end of one block and a
//!   load at the start of the next are priced as if unpaired (at most one cycle per block boundary).
//!   A block that another one *falls through* into (straight-line code cut in two, as QEMU does at
//!   pages and size limits) can be priced as its continuation with [`Model::block_after`], so that
//!   where the cut falls does not change the sum.
//! - Data wait states apply to PC-relative (literal) loads, whose address is static; other loads
//!   are priced at the core's zero-wait-state cost.
//! - Exception entry, return and tail-chaining have fixed costs ([`Model::exception_entry`],
//!   [`Model::exception_exit`], [`Model::tail_chain`]); the plugin adds them when it sees a
//!   handler start or an exception return. Late arrival, lazy FP stacking and bus contention with
//!   other masters are not modelled.
//! - The Cortex-M7 model is an approximation of a dual-issue core with branch prediction and caches
//!   (Arm publishes no cycle table): expect ±20–30 %. It is labelled as such in every report.
//!
//! Sources (each rule cites its section):
//! - [M4] Arm Cortex-M4 TRM r0p1 (DDI 0439B) §3.3.1 Table 3-1 "Cortex-M4 instruction set summary",
//!   §3.3.2 "Load/store timings"; §7.2.3 Table 7-1 "FPU instruction set" (FPv4-SP).
//! - [M3] Arm Cortex-M3 TRM r2p1 (DDI 0337I) §3.3.1 Table 3-1, §3.3.2 "Load/store timings".
//! - [M0] Arm Cortex-M0 TRM r0p0 (DDI 0432C) §3.3 Table 3-1 "Cortex-M0 instruction summary".
//! - [M0+] Arm Cortex-M0+ TRM r0p1 (DDI 0484C) §3.3 Table 3-1.
//! - [M33] LLVM schedules Cortex-M33 with its Cortex-M4 model (ARMScheduleM4.td); we do the same.
//! - [M7] LLVM ARMScheduleM7.td (latencies, dual-issue pairing) — approximate.

// The core and wait-state types of the plugin's wire format, re-exported: `Model` and `Params` take them.
pub use mcubench_wire::{Core, WaitStates};

use mcubench_thumb::{Class, FpClass, Insn, PC, SpEffect};

pub mod memory;
mod settings;
pub use settings::PARAM_NAMES;

/// Per-core constants of the timing model, for `mcubench-wire`'s [`Core`] (the one core type of
/// mcubench). The Cortex-M4F is priced as the Cortex-M4.
pub trait CoreTiming {
    /// Taken-branch pipeline refill P at zero wait states.
    fn default_branch_refill(self) -> u32;
    /// Exception entry cycles at zero wait states.
    fn exception_entry(self) -> u32;
    /// Exception return cycles, on top of the returning instruction.
    fn exception_exit(self) -> u32;
    /// Tail-chaining cycles (replaces exit + entry).
    fn tail_chain(self) -> u32;
    /// Whether the model is an approximation that must be labelled as such.
    fn approximate(self) -> bool;
}

impl CoreTiming for Core {
    /// [M3]/[M4] §3.3.1: "P: the number of cycles required for a pipeline refill. This ranges from
    /// 1 to 3 depending on the alignment and width of the target instruction"; 1 for the aligned,
    /// 16-bit targets of short loops at 0 WS (so `subs; bne` costs 3 cycles per iteration).
    /// [M0] taken branch 3 cycles = 1 + P with P = 2; [M0+] taken branch 2 cycles, P = 1.
    fn default_branch_refill(self) -> u32 {
        match self {
            Core::CortexM0 => 2,
            Core::CortexM0Plus | Core::CortexM3 | Core::CortexM4 | Core::CortexM4F | Core::CortexM33 => 1,
            // [M7] branch predictor: a correctly predicted taken branch costs little; 1 is a
            // middle estimate between predicted (0) and mispredicted (~5–8) cases.
            Core::CortexM7 => 1,
        }
    }

    /// Cycles from the exception being taken to the first handler instruction (stacking the
    /// 8-word frame, vector fetch, refill), at zero wait states.
    /// - [M3]/[M4]: 12 cycles (the TRMs' NVIC "Interrupt latency" text; also the timing notes,
    ///   `/work/shared/notes/timing.md`; section number not re-checked here).
    /// - [M33] and [M7]: 12, the figure Arm quotes for them (Arm community blog "A Beginner's
    ///   Guide on Interrupt Latency - and Interrupt Latency of the Arm Cortex-M processors");
    ///   for the M7 an approximation like the rest of its model.
    /// - [M0]: 16 cycles (same Arm table of zero-wait-state latencies: M0 16, M0+ 15, M3/M4 12).
    /// - [M0+] DDI 0484C §3.6.1 "Exception handling": "The worst case interrupt latency, for the
    ///   highest priority active interrupt in a zero wait-state system not using jitter
    ///   suppression, is 15 cycles."
    ///
    /// Lazy FP stacking (an FP context active on M4F/M33/M7) would add 17+ cycles at the first
    /// FP instruction of the handler; not modelled (the plugin cannot see CONTROL.FPCA).
    fn exception_entry(self) -> u32 {
        match self {
            Core::CortexM0 => 16,
            Core::CortexM0Plus => 15,
            Core::CortexM3 | Core::CortexM4 | Core::CortexM4F | Core::CortexM33 | Core::CortexM7 => 12,
        }
    }

    /// Unstacking the 8-word frame and the refill at the interrupted instruction, on top of the
    /// returning instruction itself (`bx lr`, `pop {.., pc}`, priced by [`Model::block`] as an
    /// ordinary return). The TRMs give no cycle count for it, so it is derived from the
    /// load-multiple rule of each TRM's Table 3-1: an `LDM` of the 8 stacked registers with a PC
    /// refill, 1 + N + P with N = 8: 10 on the M3/M4/M33/M7 (P = 1, the figure usually quoted for
    /// Cortex-M3 exception exit), 11 on the M0 (P = 2), 10 on the M0+ (P = 1). An estimate,
    /// documented as such.
    fn exception_exit(self) -> u32 {
        1 + 8 + self.default_branch_refill()
    }

    /// An exception taken straight from the return of another, without unstacking and
    /// restacking. [M3]/[M4] "Interrupt latency"/"Tail-chaining": 6 cycles (also in the timing
    /// notes). ARMv6-M TRMs give no number; the M0/M0+ use exit + entry (an upper bound).
    fn tail_chain(self) -> u32 {
        match self {
            Core::CortexM0 | Core::CortexM0Plus => self.exception_exit() + self.exception_entry(),
            Core::CortexM3 | Core::CortexM4 | Core::CortexM4F | Core::CortexM33 | Core::CortexM7 => 6,
        }
    }

    /// The Cortex-M7 model (see the crate documentation).
    fn approximate(self) -> bool {
        self == Core::CortexM7
    }
}

/// Cortex-M0/M0+ multiplier implementation option ([M0] §3.3: MULS is 1 or 32 cycles).
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum Multiplier {
    /// Single-cycle multiplier.
    Fast,
    /// 32-cycle iterative multiplier.
    Small,
}

/// Tunable parts of a model. The defaults are documented per field.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct Params {
    /// Taken-branch refill P; default per core ([`CoreTiming::default_branch_refill`]).
    pub branch_refill: u32,
    /// SDIV/UDIV: 2–12 cycles with early termination ([M3]/[M4] Table 3-1). Operands are not
    /// visible to the plugin, so a fixed estimate is used: 7, the middle of the range.
    pub divide: u32,
    /// [M3] UMULL/SMULL 3–5 cycles (early termination on operand size): default 4.
    pub m3_multiply_long: u32,
    /// [M3] UMLAL/SMLAL 4–7 cycles: default 6.
    pub m3_multiply_accumulate_long: u32,
    /// Cortex-M0/M0+ multiplier option; default fast (the nRF51 and most M0+ parts).
    pub m0_multiplier: Multiplier,
    /// Per-range wait states; ranges not listed have none.
    pub wait_states: Vec<WaitStates>,
}

impl Params {
    pub fn for_core(core: Core) -> Params {
        Params {
            branch_refill: core.default_branch_refill(),
            divide: 7,
            m3_multiply_long: 4,
            m3_multiply_accumulate_long: 6,
            m0_multiplier: Multiplier::Fast,
            wait_states: Vec::new(),
        }
    }

    fn wait_at(&self, addr: u32) -> Option<&WaitStates> {
        self.wait_states.iter().find(|w| w.start <= addr && addr < w.end)
    }
}

/// Cost of one straight-line block, computed once at translation time.
#[derive(Debug, Clone, Copy, Default, PartialEq, Eq)]
pub struct BlockCost {
    /// Cycles when the block runs to its end and, if it ends in a conditional branch, the branch
    /// is not taken. Unconditional branches, calls and returns are priced as taken here.
    pub fall_through: u64,
    /// Extra cycles when the block's final conditional branch is taken (0 if it has none).
    pub taken_extra: u64,
}

/// Where pricing stands after an instruction: what the next instruction is priced after (its
/// predecessor, and on the Cortex-M7 whether that one was the second of a dual-issued pair).
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct Context {
    pub prev: Insn,
    pub dual_issued: bool,
}

/// A cycle model for one core.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct Model {
    pub core: Core,
    pub params: Params,
}

impl Model {
    pub fn new(core: Core) -> Model {
        Model { core, params: Params::for_core(core) }
    }

    pub fn with_params(core: Core, params: Params) -> Model {
        Model { core, params }
    }

    /// The model's name for reports, e.g. `cortex-m4 table model (TRM r0p1), P=1, 0 WS`.
    pub fn describe(&self) -> String {
        let source = match self.core {
            Core::CortexM0 => "Cortex-M0 TRM table",
            Core::CortexM0Plus => "Cortex-M0+ TRM table",
            Core::CortexM3 => "Cortex-M3 TRM table",
            Core::CortexM4 | Core::CortexM4F => "Cortex-M4 TRM table",
            Core::CortexM33 => "Cortex-M4 TRM table (as LLVM schedules M33)",
            Core::CortexM7 => "APPROXIMATE: LLVM ARMScheduleM7 latencies, ±20-30 %",
        };
        let ws = if self.params.wait_states.is_empty() { "0 WS".to_string() } else { "custom WS".to_string() };
        format!("{} model: {source}, P={}, {ws}", self.core.model_name(), self.params.branch_refill)
    }

    /// Exception entry cycles ([`CoreTiming::exception_entry`]), plus the refill's fetch wait states
    /// of `handler`'s memory (the vector fetch and the first handler fetch).
    pub fn exception_entry(&self, handler: u32) -> u64 {
        u64::from(self.core.exception_entry()) + u64::from(self.params.wait_at(handler).map_or(0, |w| w.fetch))
    }

    /// Exception return cycles ([`CoreTiming::exception_exit`]), on top of the returning instruction.
    pub fn exception_exit(&self) -> u64 {
        u64::from(self.core.exception_exit())
    }

    /// Tail-chain cycles ([`CoreTiming::tail_chain`]): replaces exit + entry when a handler starts
    /// straight from an exception return.
    pub fn tail_chain(&self, handler: u32) -> u64 {
        u64::from(self.core.tail_chain()) + u64::from(self.params.wait_at(handler).map_or(0, |w| w.fetch))
    }

    /// Prices a block of instructions that execute in order.
    pub fn block(&self, insns: &[Insn]) -> BlockCost {
        self.block_after(None, insns).0
    }

    /// Prices a block of instructions that execute in order straight after the instruction of
    /// `entry` (the block continues straight-line code; `None`: it starts afresh, as after a
    /// branch), and returns the context after its last instruction (`None` for an empty block
    /// without entry). `block_after(None, a ++ b)` equals `block_after(None, a)` plus
    /// `block_after(exit of a, b)` in fall-through cycles.
    pub fn block_after(&self, entry: Option<&Context>, insns: &[Insn]) -> (BlockCost, Option<Context>) {
        let mut cost = BlockCost::default();
        let mut prev: Option<&Insn> = entry.map(|e| &e.prev);
        let mut dual_issued = entry.is_some_and(|e| e.dual_issued);
        for (i, insn) in insns.iter().enumerate() {
            let last = i + 1 == insns.len();
            let (c, taken_extra) = if self.core == Core::CortexM7 {
                let (c, paired) = self.m7_cost(prev, insn, dual_issued);
                dual_issued = paired;
                (c, self.m7_taken_extra(insn))
            } else {
                self.cost(prev, insn)
            };
            cost.fall_through += u64::from(c) + u64::from(self.fetch_wait(insn));
            if last {
                cost.taken_extra = u64::from(taken_extra);
            }
            prev = Some(insn);
        }
        (cost, prev.map(|p| Context { prev: p.clone(), dual_issued }))
    }

    /// Extra fetch cycles: one wait-state penalty per 32-bit fetch, i.e. per 4 bytes of code.
    fn fetch_wait(&self, insn: &Insn) -> u32 {
        match self.params.wait_at(insn.addr) {
            // A fetch is 32 bits: a 32-bit instruction or a word-aligned pair of 16-bit ones.
            Some(w) if w.fetch > 0 && (insn.len == 4 || insn.addr.is_multiple_of(4)) => w.fetch,
            _ => 0,
        }
    }

    /// Data wait states of a literal (PC-relative) load, whose address is static.
    fn literal_wait(&self, insn: &Insn) -> u32 {
        match insn.mem {
            Some(m) if !m.store && m.base == PC => {
                let addr = (insn.addr.wrapping_add(4) & !3).wrapping_add(m.offset as u32);
                self.params.wait_at(addr).map_or(0, |w| w.data)
            }
            _ => 0,
        }
    }

    /// The branch refill including the target's fetch wait states (targets are usually in the
    /// same memory as the branch).
    fn refill(&self, insn: &Insn) -> u32 {
        self.params.branch_refill + self.params.wait_at(insn.addr).map_or(0, |w| w.fetch)
    }

    /// Whether `insn` writes PC unconditionally as part of what it does (priced as taken).
    fn writes_pc(insn: &Insn) -> bool {
        insn.writes.contains(PC)
    }

    /// Cost of `insn` after `prev` in the same block, and the extra cycles if it is a conditional
    /// branch that is taken. ARMv6-M and ARMv7-M cores.
    fn cost(&self, prev: Option<&Insn>, insn: &Insn) -> (u32, u32) {
        let p = self.refill(insn);
        let m0 = matches!(self.core, Core::CortexM0 | Core::CortexM0Plus);
        let m3 = self.core == Core::CortexM3;
        let conditional_branch = insn.conditional && Self::writes_pc(insn);
        let taken_pc = |base: u32| if conditional_branch { (base, p) } else { (base + p, 0) };

        match insn.class {
            // [M4]/[M3] Table 3-1 "Branches": B<cc> 1 not taken, 1+P taken; B, BL, BX, BLX 1+P;
            // CBZ/CBNZ 1 or 1+P. [M0] B<cc> 1 or 3, B 3, BL 4, BX/BLX 3 (P=2, BL one more).
            Class::Branch => {
                let call = matches!(insn.flow, mcubench_thumb::Flow::Call { .. });
                if m0 && call {
                    // [M0] BL is 4 cycles (32-bit instruction, 1 + P + 1); [M0+] 3.
                    (2 + p, 0)
                } else {
                    taken_pc(1)
                }
            }
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
            Class::Alu => {
                // ADD/MOV to PC: 1+P ([M4]/[M3]); [M0] MOV/ADD PC 3 = 1+P.
                if Self::writes_pc(insn) { taken_pc(1) } else { (1, 0) }
            }
            // [M4] MUL, MLA, MLS, and all long multiplies: 1 cycle. [M3] MUL 1, MLA/MLS 2,
            // UMULL/SMULL 3–5, UMLAL/SMLAL 4–7. [M0] MULS 1 or 32.
            Class::Mul => {
                if m0 && self.params.m0_multiplier == Multiplier::Small {
                    (32, 0)
                } else {
                    (1, 0)
                }
            }
            Class::MulAcc => (if m3 { 2 } else { 1 }, 0),
            Class::MulLong => (if m3 { self.params.m3_multiply_long } else { 1 }, 0),
            Class::MulAccLong => (if m3 { self.params.m3_multiply_accumulate_long } else { 1 }, 0),
            // [M4] DSP/SIMD instructions: 1 cycle.
            Class::Dsp => (1, 0),
            // [M4]/[M3] SDIV/UDIV 2–12: fixed estimate (see Params::divide).
            Class::Div => (self.params.divide, 0),
            // [M4]/[M3] LDR 2; §3.3.2 pipelining: "neighboring load and store single instructions
            // can pipeline their address and data phases", so a load or store after a load or
            // store costs 1 unless it depends on the previous load's result for its address, the
            // previous instruction is STR with register offset ("other instructions cannot be
            // pipelined after STR with register offset"), or the previous is LDRD/STRD.
            // [M0] LDR/STR 2 with no pipelining.
            Class::Load { .. } => {
                let extra = self.literal_wait(insn);
                if Self::writes_pc(insn) {
                    // [M4] LDR PC: 2+P ("LDR to PC: 2+P or more").
                    return (2 + extra + if m0 { 1 } else { 0 } + p, 0);
                }
                if m0 {
                    return (2 + extra, 0);
                }
                let base = if self.pipelines_after(prev, insn) { 1 } else { 2 };
                (base + extra + self.address_dependency(prev, insn), 0)
            }
            Class::Store { .. } => {
                if m0 {
                    return (2, 0);
                }
                // [M4] "STR Rx,[Ry,#imm] is always one cycle": the data phase overlaps the next
                // instruction thanks to the write buffer. Register-offset stores are 2 unless
                // pipelined after a load/store.
                let register_offset = insn.mem.is_some_and(|m| m.index.is_some());
                let base = if !register_offset || self.pipelines_after(prev, insn) { 1 } else { 2 };
                (base + self.address_dependency(prev, insn), 0)
            }
            // [M4]/[M3] LDRD, STRD: 1+N with N = 2; they do not pipeline.
            Class::LoadDouble | Class::StoreDouble => (3 + self.address_dependency(prev, insn), 0),
            // [M4]/[M3]/[M0] LDM/STM/PUSH/POP: 1+N; POP/LDM with PC: 1+N+P ([M0] POP {pc} 4+N:
            // P = 2 plus one, like BL; [M0+] 3+N: P = 1 plus one).
            Class::LoadMultiple { regs } => {
                let n = u32::from(regs);
                if Self::writes_pc(insn) {
                    let m0_extra = if m0 { 1 } else { 0 };
                    taken_pc(1 + n + m0_extra)
                } else {
                    (1 + n, 0)
                }
            }
            Class::StoreMultiple { regs } => (1 + u32::from(regs), 0),
            // [M4]/[M3] DMB/DSB/ISB: 1+B, B = 0 when the bus is idle (no outstanding writes here).
            // [M0] 4, [M0+] 3.
            Class::Barrier => (self.m0_special().unwrap_or(1), 0),
            // [M4] NOP, YIELD, SEV: 1. WFI/WFE would sleep; the plugin never sees a sleep.
            Class::Hint => (1, 0),
            // [M4] MRS/MSR 1–2 (we use 2), CPS 1; [M0] MRS/MSR 4, [M0+] 3, CPS 1.
            // SVC/BKPT/UDF trap: the instruction only; the plugin adds exception entry
            // ([`CoreTiming::exception_entry`]) when the handler starts.
            Class::System => (if insn.mnemonic.starts_with("cps") { 1 } else { self.m0_special().unwrap_or(2) }, 0),
            Class::Fp(fp) => (self.fp_cost(prev, insn, fp), 0),
        }
    }

    /// Barriers and MRS/MSR on ARMv6-M: [M0] 4 cycles, [M0+] 3.
    fn m0_special(&self) -> Option<u32> {
        match self.core {
            Core::CortexM0 => Some(4),
            Core::CortexM0Plus => Some(3),
            _ => None,
        }
    }

    /// [M4] §7.2.3 Table 7-1, FPv4-SP; double precision only exists on FPv5 (M7, priced there).
    fn fp_cost(&self, prev: Option<&Insn>, insn: &Insn, fp: FpClass) -> u32 {
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
                } else if self.pipelines_after(prev, insn) {
                    1
                } else {
                    2
                };
                base + self.literal_wait(insn)
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
    fn pipelines_after(&self, prev: Option<&Insn>, insn: &Insn) -> bool {
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
        !Self::address_uses(insn, prev.writes)
    }

    /// +1 when an address register of `insn` was written by the immediately preceding data
    /// processing instruction: the address is generated early in the pipeline, before that
    /// result is written back (timing.md, "address dependency"). A preceding load whose result
    /// is the address is priced by the lost pipelining instead ([`Self::pipelines_after`]).
    fn address_dependency(&self, prev: Option<&Insn>, insn: &Insn) -> u32 {
        match prev {
            Some(prev)
                if matches!(prev.class, Class::Alu | Class::Mul | Class::MulAcc | Class::Dsp)
                    && prev.sp == SpEffect::None
                    && Self::address_uses(insn, prev.writes) =>
            {
                1
            }
            _ => 0,
        }
    }

    fn address_uses(insn: &Insn, written: mcubench_thumb::RegSet) -> bool {
        insn.mem
            .is_some_and(|m| (m.base != PC && written.contains(m.base)) || m.index.is_some_and(|r| written.contains(r)))
    }

    /// [M7] approximation: ARMScheduleM7.td gives most integer instructions latency 1 and lets two
    /// independent simple instructions issue together; loads have latency 2 (a dependent use
    /// stalls one cycle); MUL latency 2; divides 7 (estimate); branches are predicted.
    /// Returns the cost and whether this instruction was the second of a dual-issued pair.
    fn m7_cost(&self, prev: Option<&Insn>, insn: &Insn, prev_paired: bool) -> (u32, bool) {
        let simple = |i: &Insn| {
            matches!(i.class, Class::Alu | Class::Load { .. } | Class::Store { .. } | Class::Hint)
                && !i.writes.contains(PC)
        };
        let independent = |p: &Insn, i: &Insn| (p.writes.0 & i.reads.0) == 0;
        if let Some(p) = prev
            && !prev_paired
            && simple(p)
            && simple(insn)
            && independent(p, insn)
            // Two memory accesses do not dual issue (one load/store pipe for this estimate).
            && !(p.mem.is_some() && insn.mem.is_some())
        {
            return (0, true);
        }
        let stall = match prev {
            Some(p)
                if matches!(p.class, Class::Load { .. } | Class::LoadDouble) && (p.writes.0 & insn.reads.0) != 0 =>
            {
                1
            }
            _ => 0,
        };
        let base = match insn.class {
            Class::Div => self.params.divide,
            Class::LoadDouble | Class::StoreDouble => 2,
            Class::LoadMultiple { regs } | Class::StoreMultiple { regs } => 1 + u32::from(regs).div_ceil(2),
            Class::TableBranch => 3,
            Class::Fp(FpClass::DivSqrt { double }) => {
                if double {
                    29
                } else {
                    14
                }
            }
            Class::Fp(FpClass::LoadMultiple { regs, .. } | FpClass::StoreMultiple { regs, .. }) => 1 + u32::from(regs),
            _ => 1,
        };
        let unconditional_pc = insn.writes.contains(PC) && !insn.conditional;
        (base + stall + if unconditional_pc { self.params.branch_refill } else { 0 }, false)
    }

    fn m7_taken_extra(&self, insn: &Insn) -> u32 {
        if insn.conditional && insn.writes.contains(PC) { self.params.branch_refill } else { 0 }
    }
}

#[cfg(test)]
mod exception_tests {
    use super::*;

    #[test]
    fn exception_costs_per_core() {
        let table = [
            (Core::CortexM0, 16, 11, 27),
            (Core::CortexM0Plus, 15, 10, 25),
            (Core::CortexM3, 12, 10, 6),
            (Core::CortexM4, 12, 10, 6),
            (Core::CortexM4F, 12, 10, 6),
            (Core::CortexM33, 12, 10, 6),
            (Core::CortexM7, 12, 10, 6),
        ];
        for (core, entry, exit, tail) in table {
            assert_eq!(
                (core.exception_entry(), core.exception_exit(), core.tail_chain()),
                (entry, exit, tail),
                "{core:?}"
            );
        }
        // Fetch wait states of the handler's memory add to entry and tail-chain.
        let ws = vec![WaitStates { start: 0, end: 0x1000, fetch: 3, data: 0 }];
        let m = Model::with_params(Core::CortexM4, Params { wait_states: ws, ..Params::for_core(Core::CortexM4) });
        assert_eq!((m.exception_entry(0x100), m.exception_exit(), m.tail_chain(0x100)), (15, 10, 9));
        assert_eq!(m.exception_entry(0x2000), 12);
    }
}

#[cfg(test)]
mod continuation_tests {
    use super::*;
    use mcubench_thumb::Decoder;

    /// Straight-line code cut anywhere and priced as a block and its continuation costs what the
    /// whole block costs, on every core: where QEMU cuts a block cannot change the estimate.
    #[test]
    fn a_block_cut_anywhere_and_continued_costs_the_same() {
        // ldr r0,[r1]; ldr r2,[r1,#4]; adds r0,r2; str r0,[r1]; it eq; moveq r3,r4;
        // ldr.w r5,[r1,#8]; adds r6,r5,#1; mov r7,r8; add r9,r10; ldr r0,[r0]; ldr r2,[r0]; muls r0,r2
        let halfwords: &[u16] = &[
            0x6808, 0x684a, 0x1880, 0x6008, 0xbf08, 0x4623, 0xf8d1, 0x5008, 0x1c6e, 0x4647, 0x44d1, 0x6800, 0x6802,
            0x4350,
        ];
        let bytes: Vec<u8> = halfwords.iter().flat_map(|h| h.to_le_bytes()).collect();
        for core in [Core::CortexM0, Core::CortexM3, Core::CortexM4F, Core::CortexM33, Core::CortexM7] {
            let decoder = Decoder::for_core(core).unwrap();
            let (insns, err) = decoder.decode_block(0x100, if core == Core::CortexM0 { &bytes[..8] } else { &bytes });
            assert!(err.is_none(), "{core:?}: {err:?}");
            let model = Model::new(core);
            let whole = model.block(&insns).fall_through;
            for cut in 1..insns.len() {
                let (head, exit) = model.block_after(None, &insns[..cut]);
                let (tail, _) = model.block_after(exit.as_ref(), &insns[cut..]);
                assert_eq!(head.fall_through + tail.fall_through, whole, "{core:?} cut at {cut}");
            }
            // Here, without the context, some cut costs more: what continuation pricing removes.
            let apart: u64 = (1..insns.len())
                .map(|cut| model.block(&insns[..cut]).fall_through + model.block(&insns[cut..]).fall_through)
                .max()
                .unwrap();
            assert!(apart >= whole, "{core:?}");
        }
    }
}
