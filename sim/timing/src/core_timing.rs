//! Per-core constants: the default taken-branch refill, exception entry, return and
//! tail-chaining, whether the core's model is labelled approximate, and whether state crosses
//! a not-taken branch.

use mcubench_wire::Core;

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
    /// Whether pipeline state crosses into the not-taken path of a conditional branch, so that
    /// path is priced as the branch block's continuation (`run::TbPrice::carries`).
    fn not_taken_continues(self) -> bool;
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
            // [M7] direct branches are priced as predicted (no refill, m7.rs); P applies to
            // indirect ones (BX, POP {pc}, LDR pc): 1, a middle estimate between predicted (0)
            // and mispredicted (6-8, jnk0le/random cortex_m7.md) cases.
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
    /// returning instruction itself (`bx lr`, `pop {.., pc}`, priced by [`crate::Model::block`] as an
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

    /// The M3/M4 prefetch unit's speculative fetch state (`m3m4`'s fetch-ahead rule) carries
    /// into the instruction after a not-taken branch; the other models carry nothing there.
    fn not_taken_continues(self) -> bool {
        matches!(self, Core::CortexM3 | Core::CortexM4 | Core::CortexM4F)
    }
}
