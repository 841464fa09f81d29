//! Translation-time pricing of one translation block (TB): decode with `mcubench-thumb`, price
//! with `mcubench-timing`. Pure code, tested on the host without QEMU.

use mcubench_thumb::{Decoder, Flow, Insn, PC};
use mcubench_timing::{Context, Model};

/// How a TB hands control to the next one (for the profiler's shadow stack).
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum End {
    /// Falls through (the TB was cut by a size limit, a page or an I/O access).
    Next,
    /// Direct branch (conditional or not) to `target`.
    Branch { target: u32 },
    /// BL/BLX: the callee returns to `ret`.
    Call { ret: u32 },
    /// BX LR, POP {pc}, ... (also exception returns).
    Return,
    /// Indirect jump or table branch: the successor is not known statically.
    Jump,
}

/// The price of one TB.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct TbCost {
    /// Cycles when the TB runs to its end and a final conditional branch is not taken.
    pub fall_through: u64,
    /// Extra cycles when the final conditional branch is taken; 0 when there is none.
    pub taken_extra: u64,
    /// Extra cycles when the TB is entered by a taken branch, call, return or jump rather than
    /// by running on from the instruction before it (the target's alignment and width).
    pub branch_entry: u64,
    /// The TB can run on into the TB at `fall`: it ends without writing PC, or conditionally.
    pub runs_on: bool,
    /// Address after the last instruction: the successor when a conditional branch is not taken.
    pub fall: u32,
    /// `prefix[i]`: cycles of instructions `0..=i` (for the partial-TB correction at markers).
    pub prefix: Vec<u64>,
    /// `stores[i]`: instruction `i` writes memory (for the stack probe; empty unless asked).
    pub stores: Vec<bool>,
    /// SP tracking for the stack probe (empty/`None` unless asked): see [`SpSteps`].
    pub sp: SpSteps,
    pub end: End,
    /// The target of a final direct branch or call (`None` otherwise): a handler reached this
    /// way is a call or jump, not an exception entry.
    pub target: Option<u32>,
    /// The decoded instructions, kept when the TB may be the continuation of another ([`End::Next`]
    /// into it) for [`continued`]; the pricing context after the last one.
    pub insns: Vec<Insn>,
    pub exit: Option<Context>,
}

/// What a TB does to SP, for the stack probe's SP tracking (plugin API v1 cannot read SP; the
/// probe follows it from the code instead, identically on every API): `before[i]` is SP before
/// instruction `i` relative to SP at the TB's start (`None` from the first instruction that
/// sets SP by an amount the code does not show, or changes it conditionally, on), `total` SP
/// after the TB likewise, and `witness[i]` for a single store with base SP: its address minus
/// SP before it (the store's address then gives SP exactly).
#[derive(Debug, Clone, Default, PartialEq, Eq)]
pub struct SpSteps {
    pub before: Vec<Option<i32>>,
    pub total: Option<i32>,
    pub witness: Vec<Option<i32>>,
}

/// [`SpSteps`] of `insns`.
pub fn sp_steps(insns: &[Insn]) -> SpSteps {
    use mcubench_thumb::{Class, FpClass, SP, SpEffect};
    let mut cur = Some(0i32);
    let mut steps = SpSteps::default();
    for insn in insns {
        steps.before.push(cur);
        // One access (not STRD/STM/VSTM), immediate offset: address = SP (before) + offset, also
        // pre-indexed (`str r0, [sp, #-8]!`) and post-indexed (`str r0, [sp], #8`: offset 0).
        let single = matches!(insn.class, Class::Store { .. } | Class::Fp(FpClass::Store { double: false }));
        steps.witness.push(match insn.mem {
            Some(m) if single && m.store && m.base == SP && m.index.is_none() => Some(m.offset),
            _ => None,
        });
        cur = match insn.sp {
            SpEffect::None => cur,
            SpEffect::Adjust(d) if !insn.conditional => cur.and_then(|c| c.checked_add(d)),
            _ => None,
        };
    }
    steps.total = cur;
    steps
}

/// The fall-through cycles of a TB whose instructions are `insns` when it runs straight after
/// the instruction of `entry` (QEMU cut straight-line code there), and the context after it.
pub fn continued(model: &Model, entry: &Context, insns: &[Insn]) -> (u64, Option<Context>) {
    let (cost, exit) = model.block_after(Some(entry), insns);
    (cost.fall_through, exit)
}

/// Prices the TB at `start` whose instruction bytes are `bytes` (contiguous, each instruction's
/// own 2 or 4 bytes). `prefix` is only filled when `want_prefix` (it costs O(n²) pricing),
/// `stores` only when `want_stores`.
/// An error says why the TB has no price; it is reported, never replaced by a made-up cost.
pub fn price(
    decoder: &Decoder,
    model: &Model,
    start: u32,
    bytes: &[u8],
    want_prefix: bool,
    want_stores: bool,
) -> Result<TbCost, String> {
    let (insns, err) = decoder.decode_block(start, bytes);
    if let Some(e) = err {
        return Err(format!("undecodable instruction in the block at 0x{start:08x}: {e}"));
    }
    let Some(last) = insns.last() else { return Err(format!("empty block at 0x{start:08x}")) };
    let (cost, exit) = model.block_after(None, &insns);
    let prefix = if want_prefix {
        (0..insns.len()).map(|i| model.block(&insns[..=i]).fall_through).collect()
    } else {
        Vec::new()
    };
    let stores = if want_stores { insns.iter().map(writes_memory).collect() } else { Vec::new() };
    let sp = if want_stores { sp_steps(&insns) } else { SpSteps::default() };
    Ok(TbCost {
        fall_through: cost.fall_through,
        taken_extra: cost.taken_extra,
        branch_entry: cost.branch_entry,
        runs_on: !last.writes.contains(PC) || last.conditional,
        fall: last.addr.wrapping_add(u32::from(last.len)),
        prefix,
        stores,
        sp,
        end: end_of(last),
        target: match last.flow {
            Flow::Branch { target } | Flow::Call { target } => Some(target),
            _ => None,
        },
        exit,
        insns,
    })
}

/// Whether `insn` writes memory: STR*, STRD, STM/PUSH, VSTR/VSTM/VPUSH.
pub fn writes_memory(insn: &Insn) -> bool {
    use mcubench_thumb::{Class, FpClass};
    matches!(
        insn.class,
        Class::Store { .. }
            | Class::StoreDouble
            | Class::StoreMultiple { .. }
            | Class::Fp(FpClass::Store { .. } | FpClass::StoreMultiple { .. })
    ) || insn.mem.is_some_and(|m| m.store)
}

/// Whether `insn` reads data memory: LDR*, LDRD, LDM/POP, VLDR/VLDM/VPOP (for the data side of
/// the memory system).
pub fn reads_memory(insn: &Insn) -> bool {
    use mcubench_thumb::{Class, FpClass};
    matches!(
        insn.class,
        Class::Load { .. }
            | Class::LoadDouble
            | Class::LoadMultiple { .. }
            | Class::Fp(FpClass::Load { .. } | FpClass::LoadMultiple { .. })
    ) || insn.mem.is_some_and(|m| !m.store)
}

/// Whether load `insn` may read an address for which `flash` holds: not for loads from the stack
/// (SP-based, the stack is writable memory), nor for a literal load whose address is not flash.
pub fn may_load_from(insn: &Insn, flash: impl Fn(u32) -> bool) -> bool {
    match insn.mem {
        Some(m) if m.base == mcubench_thumb::SP => false,
        Some(m) if m.base == PC && m.index.is_none() => {
            let first = (insn.addr.wrapping_add(4) & !3).wrapping_add(m.offset as u32);
            let last = first.wrapping_add(m.bytes.max(1) - 1);
            flash(first) || flash(last)
        }
        _ => true,
    }
}

fn end_of(last: &Insn) -> End {
    match last.flow {
        Flow::Next if !last.writes.contains(PC) => End::Next,
        Flow::Branch { target } => End::Branch { target },
        Flow::Call { .. } | Flow::CallIndirect { .. } => End::Call { ret: last.addr.wrapping_add(u32::from(last.len)) },
        Flow::Return => End::Return,
        _ => End::Jump,
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use mcubench_wire::Core;

    fn halfwords(hw: &[u16]) -> Vec<u8> {
        hw.iter().flat_map(|h| h.to_le_bytes()).collect()
    }

    #[test]
    fn loads_that_cannot_reach_flash_are_not_watched() {
        let flash = |a: u32| (0x0800_0000..0x0810_0000).contains(&a);
        // ldr r0, [sp, #4]; pop {r4, pc}; ldr r0, [r1]; ldr r0, [pc, #8] at 0x08000100 (literal at
        // 0x0800010c, flash) and the same at 0x20000100 (literal in SRAM).
        let decode = |at: u32, hw: &[u16]| {
            let (insns, err) = Decoder::for_core(Core::CortexM4).unwrap().decode_block(at, &halfwords(hw));
            assert!(err.is_none());
            insns
        };
        let got =
            |at| decode(at, &[0x9801, 0x6808, 0x4802]).iter().map(|i| may_load_from(i, flash)).collect::<Vec<_>>();
        assert_eq!(got(0x0800_0100), [false, true, true]);
        assert_eq!(got(0x2000_0100), [false, true, false]);
        assert!(!may_load_from(&decode(0x0800_0100, &[0xbd10])[0], flash), "pop is a load from the stack");
    }

    #[test]
    fn a_delay_loop_block_on_the_m4() {
        // subs r0, #1; bne .-2  → 1 + 1 not taken, +1 (P) taken.
        let d = Decoder::for_core(Core::CortexM4F).unwrap();
        let m = Model::new(Core::CortexM4F);
        let c = price(&d, &m, 0x100, &halfwords(&[0x3801, 0xd1fd]), true, true).unwrap();
        assert_eq!((c.fall_through, c.taken_extra, c.fall), (2, 1, 0x104));
        assert_eq!(c.prefix, vec![1, 2]);
        assert_eq!(c.stores, vec![false, false]);
        // push {r4, lr}; str r0, [r1]; ldr r2, [r1]
        let s = price(&d, &m, 0x100, &halfwords(&[0xb510, 0x6008, 0x680a]), false, true).unwrap();
        assert_eq!(s.stores, vec![true, true, false]);
        assert_eq!(c.end, End::Branch { target: 0x100 });
    }

    #[test]
    fn sp_steps_follow_the_frame_and_witness_sp_based_stores() {
        let d = Decoder::for_core(Core::CortexM4F).unwrap();
        let m = Model::new(Core::CortexM4F);
        // push {r4, lr}; sub sp, #16; str r0, [sp, #4]; str r1, [r2]; add sp, #16; pop {r4, pc}
        let c =
            price(&d, &m, 0x100, &halfwords(&[0xb510, 0xb084, 0x9001, 0x6011, 0xb004, 0xbd10]), false, true).unwrap();
        assert_eq!(c.sp.before, vec![Some(0), Some(-8), Some(-24), Some(-24), Some(-24), Some(-8)]);
        assert_eq!(c.sp.total, Some(0));
        assert_eq!(c.sp.witness, vec![None, None, Some(4), None, None, None]);
        // str r0, [sp, #-8]! (f84d 0d08): address SP - 8, then SP moves by -8.
        let c = price(&d, &m, 0x100, &halfwords(&[0xf84d, 0x0d08, 0x4770]), false, true).unwrap();
        assert_eq!((c.sp.witness[0], c.sp.before[1], c.sp.total), (Some(-8), Some(-8), Some(-8)));
        // mov sp, r0: unknown from there on.
        let c = price(&d, &m, 0x100, &halfwords(&[0xb082, 0x4685, 0x4770]), false, true).unwrap();
        assert_eq!((c.sp.before.clone(), c.sp.total), (vec![Some(0), Some(-8), None], None));
    }

    #[test]
    fn branch_entry_and_running_on() {
        let d = Decoder::for_core(Core::CortexM4).unwrap();
        let m = Model::new(Core::CortexM4);
        // add.w r1, r1, #1 at a halfword: a branch to it costs one more; it runs on.
        let c = price(&d, &m, 0x102, &halfwords(&[0xf101, 0x0101]), false, false).unwrap();
        assert_eq!((c.fall_through, c.branch_entry, c.runs_on), (1, 1, true));
        let c = price(&d, &m, 0x100, &halfwords(&[0xf101, 0x0101]), false, false).unwrap();
        assert_eq!(c.branch_entry, 0);
        // subs; bne runs on when not taken; bx lr never runs on.
        assert!(price(&d, &m, 0x100, &halfwords(&[0x3801, 0xd1fd]), false, false).unwrap().runs_on);
        assert!(!price(&d, &m, 0x100, &halfwords(&[0x4770]), false, false).unwrap().runs_on);
    }

    #[test]
    fn calls_returns_and_undecodable_blocks() {
        let d = Decoder::for_core(Core::CortexM4F).unwrap();
        let m = Model::new(Core::CortexM4F);
        // bl (f000 f800) returns to the next instruction.
        let c = price(&d, &m, 0x200, &halfwords(&[0xf000, 0xf800]), false, false).unwrap();
        assert_eq!(c.end, End::Call { ret: 0x204 });
        assert_eq!(c.target, Some(0x204));
        assert_eq!(price(&d, &m, 0x300, &halfwords(&[0x4770]), false, false).unwrap().end, End::Return);
        // A Thumb-2 multiply is not ARMv6-M: an error, not a cost.
        let e = price(
            &Decoder::for_core(Core::CortexM0).unwrap(),
            &Model::new(Core::CortexM0),
            0x400,
            &halfwords(&[0xfb00, 0x1203]),
            false,
            false,
        )
        .unwrap_err();
        assert!(e.contains("0x00000400"), "{e}");
    }
}
