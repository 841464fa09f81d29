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
//!   The one exception is the fetch of a branch target: [`BlockCost::branch_entry`] is what a
//!   block costs more when a branch (not the instruction before it) leads into it.
//!   A block that another one *falls through* into (straight-line code cut in two, as QEMU does at
//!   pages and size limits) can be priced as its continuation with [`Model::block_after`], so that
//!   where the cut falls does not change the sum; on the Cortex-M3/M4 the run-time pricer does the
//!   same for the not-taken path of a conditional branch ([`run`]), for the prefetch state.
//! - Data wait states apply to PC-relative (literal) loads, whose address is static; other loads
//!   are priced at the core's zero-wait-state cost.
//! - Exception entry, return and tail-chaining have fixed costs ([`Model::exception_entry`],
//!   [`Model::exception_exit`], [`Model::tail_chain`]); the plugin adds them when it sees a
//!   handler start or an exception return. Late arrival, lazy FP stacking and bus contention with
//!   other masters are not modelled.
//! - The Cortex-M7 model is an approximation of a dual-issue core with branch prediction and caches
//!   (Arm publishes no cycle table): an in-order issue model with a register scoreboard, from
//!   public board measurements, with mispredictions from each branch's history; held-back rows
//!   (hand-written AES) within 13 %, CoreMark within 6 %, so expect ±20 % elsewhere. It is
//!   labelled as such in every report.
//!
//! Sources (each rule cites its section):
//! - [M4] Arm Cortex-M4 TRM r0p1 (DDI 0439B) §3.3.1 Table 3-1 "Cortex-M4 instruction set summary",
//!   §3.3.2 "Load/store timings"; §7.2.3 Table 7-1 "FPU instruction set" (FPv4-SP).
//! - [M3] Arm Cortex-M3 TRM r2p1 (DDI 0337I) §3.3.1 Table 3-1, §3.3.2 "Load/store timings".
//! - [M0] Arm Cortex-M0 TRM r0p0 (DDI 0432C) §3.3 Table 3-1 "Cortex-M0 instruction summary".
//! - [M0+] Arm Cortex-M0+ TRM r0p1 (DDI 0484C) §3.3 Table 3-1.
//! - Cortex-M3/M4 fetch and load/store measurements: compendium.i-0.nl "Alignment rules",
//!   github:jnk0le/random "pipeline cycle test/doc/cortex_m3m4.md" (cited in `m3m4.rs`).
//! - [M33] its own pipeline (`m33.rs`): Arm's description of the M33 pipeline and RP2350
//!   measurements (github:jnk0le/random "cortex_m33.md").
//! - [M7] approximate (`m7.rs`): the Cortex-M7 TRM's pipeline description, STM32H7 measurements
//!   (jnk0le/random "cortex_m7.md" and its template), and Arm's LLVM/GCC scheduling models
//!   where the measurements are silent; `m7.rs` says which rules are measured and which inferred.
//!
//! One module per core family: `m0` (ARMv6-M), `m3m4` (ARMv7-M), `m33`, `m7`; `fetch` (wait
//! states), `insn` (instruction facts), `params` (every tunable number), `core_timing`
//! (exceptions, default refill); `memory` (flash, prefetch, caches) and `run` (what a run adds
//! per executed block: refills, exceptions, continuations; shared by the plugin and the host's
//! trace replay).

// The core and wait-state types of the plugin's wire format, re-exported: `Model` and `Params` take them.
pub use mcubench_wire::{Core, WaitStates};

mod core_timing;
mod fetch;
mod insn;
mod m0;
mod m33;
mod m3m4;
mod m7;
mod params;

pub mod memory;
pub mod run;
pub use core_timing::CoreTiming;
pub use m7::Mispredict;
pub use params::{Multiplier, ParamError, ParamSpec, Params};

use mcubench_thumb::Insn;

/// Cost of one straight-line block, computed once at translation time.
#[derive(Debug, Clone, Copy, Default, PartialEq, Eq)]
pub struct BlockCost {
    /// Cycles when the block runs to its end and, if it ends in a conditional branch, the branch
    /// is not taken. Unconditional branches, calls and returns are priced as taken here.
    pub fall_through: u64,
    /// Extra cycles when the block's final conditional branch is taken (0 if it has none).
    pub taken_extra: u64,
    /// Extra cycles when the block is entered by a taken branch, call, return or jump rather
    /// than by running on from the instruction before it: the refill's cost of the first
    /// instruction's alignment and width (Cortex-M3/M4; 0 on the other cores).
    pub branch_entry: u64,
}

/// Where pricing stands after an instruction: what the next instruction is priced after (its
/// predecessor, and the pipeline state the core models carry from one instruction to the next).
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct Context {
    pub prev: Insn,
    /// Cortex-M7/M33: `prev` issued as the second of a dual-issued pair (so it pairs no further).
    pub dual_issued: bool,
    /// Cortex-M3/M4: how many 32-bit instructions straddling a fetch word end here, in a row
    /// ([`m3m4`]'s fetch rule; saturates).
    pub unaligned_run: u8,
    /// Cortex-M3/M4: that run is stores only so far.
    pub unaligned_stores: bool,
    /// Cortex-M3/M4: straddling 32-bit instructions since the last multi-cycle one in that run
    /// (`None`: no multi-cycle one in the run; [`m3m4`]'s fetch rule).
    pub after_multi: Option<u8>,
    /// Cortex-M3/M4: halfwords the prefetch unit has fetched ahead of the decoder ([`m3m4`]'s
    /// speculative-fetch rule; 0 after a taken branch).
    pub fetch_ahead: u8,
    /// Cortex-M7: when each register's latest value can be read ([`m7`]'s scoreboard).
    m7: m7::M7State,
    /// Cortex-M33: registers a load before `prev` delivers too late for a register branch next
    /// ([`m33`]'s load-to-branch latency).
    m33_branch_wait: m33::BranchWait,
}

/// What continuation prices depend on besides `prev` itself ([`Context::key`]).
#[derive(Debug, Clone, Copy, PartialEq, Eq, Hash)]
pub struct ContextKey {
    prev: u32,
    dual_issued: bool,
    unaligned_run: u8,
    unaligned_stores: bool,
    after_multi: Option<u8>,
    fetch_ahead: u8,
    m7: m7::M7State,
    m33_branch_wait: m33::BranchWait,
}

impl Context {
    /// What continuation prices depend on besides `prev` itself: two contexts with the same key
    /// price every continuation alike.
    pub fn key(&self) -> ContextKey {
        ContextKey {
            prev: self.prev.addr,
            dual_issued: self.dual_issued,
            unaligned_run: self.unaligned_run,
            unaligned_stores: self.unaligned_stores,
            after_multi: self.after_multi,
            fetch_ahead: self.fetch_ahead,
            m7: self.m7,
            m33_branch_wait: self.m33_branch_wait,
        }
    }
}

/// The pipeline state carried from one instruction to the next inside [`Model::block_after`].
#[derive(Debug, Clone, Copy, Default, PartialEq, Eq)]
pub(crate) struct Pipe {
    /// See [`Context::dual_issued`].
    pub dual_issued: bool,
    /// See [`Context::unaligned_run`].
    pub unaligned_run: u8,
    /// See [`Context::unaligned_stores`].
    pub unaligned_stores: bool,
    /// See [`Context::after_multi`].
    pub after_multi: Option<u8>,
    /// See [`Context::fetch_ahead`].
    pub fetch_ahead: u8,
    /// Cortex-M7's register scoreboard.
    pub m7: m7::M7State,
    /// See [`Context::m33_branch_wait`].
    pub m33_branch_wait: m33::BranchWait,
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

    /// The model's name for reports, e.g. `cortex-m4 model: Cortex-M4 TRM table, P=1, 0 WS`.
    pub fn describe(&self) -> String {
        let ws = if self.params.wait_states.is_empty() { "0 WS" } else { "custom WS" };
        format!("{}, {ws}", self.describe_core())
    }

    /// The core model's name without its wait states, for reports whose memory system (with its
    /// own wait states) follows: `cortex-m4 model: Cortex-M4 TRM table, P=1`.
    pub fn describe_core(&self) -> String {
        let source = match self.core {
            Core::CortexM0 => "Cortex-M0 TRM table",
            Core::CortexM0Plus => "Cortex-M0+ TRM table",
            Core::CortexM3 => "Cortex-M3 TRM table",
            Core::CortexM4 | Core::CortexM4F => "Cortex-M4 TRM table",
            Core::CortexM33 => "Cortex-M33 pipeline (dual issue, 1-cycle loads; public measurements)",
            Core::CortexM7 => "APPROXIMATE: dual-issue pipeline from public measurements, ±20 %",
        };
        format!("{} model: {source}, P={}", self.core.model_name(), self.params.branch_refill)
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

    /// Whether mispredicted branches cost anything: the Cortex-M7 with `m7-mispredict` > 0 (the
    /// other cores' TRM tables price branches without prediction).
    pub fn predicts_branches(&self) -> bool {
        self.core == Core::CortexM7 && self.params.m7_mispredict > 0
    }

    /// What a misprediction of a block's final instruction `last` costs, when it is a direct
    /// conditional branch and the model [predicts branches](Model::predicts_branches).
    pub fn mispredict(&self, last: &Insn) -> Option<m7::Mispredict> {
        if self.predicts_branches() { m7::mispredict(&self.params, last) } else { None }
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
        let mut pipe = entry.map_or(Pipe::default(), |e| Pipe {
            dual_issued: e.dual_issued,
            unaligned_run: e.unaligned_run,
            unaligned_stores: e.unaligned_stores,
            after_multi: e.after_multi,
            fetch_ahead: e.fetch_ahead,
            m7: e.m7,
            m33_branch_wait: e.m33_branch_wait,
        });
        if entry.is_none()
            && let Some(first) = insns.first()
        {
            cost.branch_entry = u64::from(match self.core {
                Core::CortexM3 | Core::CortexM4 | Core::CortexM4F => m3m4::branch_target_extra(first),
                _ => 0,
            });
        }
        for (i, insn) in insns.iter().enumerate() {
            let last = i + 1 == insns.len();
            let (c, taken_extra) = match self.core {
                Core::CortexM7 => {
                    let (c, paired) = m7::cost(&self.params, &mut pipe.m7, prev, insn, pipe.dual_issued);
                    pipe.dual_issued = paired;
                    (c, m7::taken_extra(&self.params, insn))
                }
                Core::CortexM0 | Core::CortexM0Plus => m0::cost(&self.params, self.core, prev, insn),
                Core::CortexM33 => m33::cost(&self.params, &mut pipe, prev, insn),
                Core::CortexM3 | Core::CortexM4 | Core::CortexM4F => {
                    m3m4::step(&self.params, self.core, &mut pipe, prev, insn)
                }
            };
            cost.fall_through += u64::from(c) + u64::from(fetch::fetch_wait(&self.params, insn));
            if last {
                cost.taken_extra = u64::from(taken_extra);
            }
            prev = Some(insn);
        }
        (
            cost,
            prev.map(|p| Context {
                prev: p.clone(),
                dual_issued: pipe.dual_issued,
                unaligned_run: pipe.unaligned_run,
                unaligned_stores: pipe.unaligned_stores,
                after_multi: pipe.after_multi,
                fetch_ahead: pipe.fetch_ahead,
                m7: pipe.m7,
                m33_branch_wait: pipe.m33_branch_wait,
            }),
        )
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
