//! Cortex-M33 (ARMv8-M Mainline). For now priced with the Cortex-M4 rules, as LLVM schedules it
//! (ARMScheduleM4.td); its own pipeline model replaces this.

use mcubench_thumb::Insn;
use mcubench_wire::Core;

use crate::m3m4;
use crate::params::Params;

/// Cost of `insn` after `prev`, and the extra cycles if it is a conditional branch that is taken.
pub(crate) fn cost(params: &Params, prev: Option<&Insn>, insn: &Insn) -> (u32, u32) {
    m3m4::cost(params, Core::CortexM4, prev, insn)
}
