//! mcubench-thumb: Thumb / Thumb-2 decoding (ARMv6-M, ARMv7-M, ARMv7E-M with FPv4/FPv5,
//! ARMv8-M Mainline) into classified instructions, shared by the stack analyzer (`mcubench-stack`)
//! and the timing model (`mcubench-timing`).
//!
//! CONTRACT (types below are the interface both consumers code against; keep them stable).
//!
//! Decoding: [`Decoder`] (capstone in Thumb + MClass + V8 mode underneath, classified here; all
//! architecture filtering is done here). `Decoder` is `Copy + Send + Sync`; each thread that
//! decodes lazily gets its own capstone handle (thread-local), so vCPU threads of a QEMU plugin can
//! share one decoder. [`Decoder::decode`] decodes one instruction outside any IT block;
//! [`Decoder::decode_block`] decodes a straight-line run and tracks IT blocks.
//!
//! Notes on the contract as implemented:
//! - `Mem::offset` is the offset applied to the access address: 0 for post-indexed forms
//!   (`ldr r4, [sp], #8`; the base update is in [`SpEffect`] for SP) and for LDM/POP/VLDM/VPOP;
//!   `-bytes` for STMDB/PUSH/VPUSH/LDMDB.
//! - `mov pc, lr` is a [`Flow::Return`] (like `bx lr`); `mov pc, rN` otherwise a jump.
//! - BLX immediate (to ARM state) is UNDEFINED on M-profile and is reported as undecodable.
//! - SVC is [`Flow::Trap`] and writes no core register.

use mcubench_wire::Core;

/// Register numbers: 0..=12 general, 13 = SP, 14 = LR, 15 = PC.
pub type Reg = u8;
pub const SP: Reg = 13;
pub const LR: Reg = 14;
pub const PC: Reg = 15;

/// A set of core registers r0..r15 as a bit mask (bit n = rn).
#[derive(Debug, Clone, Copy, Default, PartialEq, Eq, Hash)]
pub struct RegSet(pub u16);

impl RegSet {
    pub fn contains(self, r: Reg) -> bool {
        r < 16 && self.0 & (1 << r) != 0
    }
    pub fn len(self) -> u32 {
        self.0.count_ones()
    }
    pub fn is_empty(self) -> bool {
        self.0 == 0
    }
}

/// Architecture profile of the core the code runs on.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Hash)]
pub enum Arch {
    /// Cortex-M0/M0+/M1.
    V6M,
    /// Cortex-M3.
    V7M,
    /// Cortex-M4/M7 (DSP; FPU when `fpu` is set in [`Decoder::new`]).
    V7EM,
    /// Cortex-M33/M35P/M55 mainline.
    V8MMain,
}

impl From<Core> for Arch {
    /// The instruction set `core` runs: the one mapping from cores to architectures (whether FP
    /// instructions exist too is [`Core::has_fpu`]; [`Decoder::for_core`] takes both).
    fn from(core: Core) -> Arch {
        match core {
            Core::CortexM0 | Core::CortexM0Plus => Arch::V6M,
            Core::CortexM3 => Arch::V7M,
            Core::CortexM4 | Core::CortexM4F | Core::CortexM7 => Arch::V7EM,
            Core::CortexM33 => Arch::V8MMain,
        }
    }
}

impl std::str::FromStr for Arch {
    type Err = String;

    /// `v6m`, `v7m`, `v7em` or `v8m` (ARMv8-M Mainline), as the examples and tools spell them.
    fn from_str(s: &str) -> Result<Arch, String> {
        match s {
            "v6m" => Ok(Arch::V6M),
            "v7m" => Ok(Arch::V7M),
            "v7em" => Ok(Arch::V7EM),
            "v8m" | "v8m.main" => Ok(Arch::V8MMain),
            other => Err(format!("`{other}` is not an architecture; use v6m, v7m, v7em or v8m")),
        }
    }
}

/// What kind of work an instruction does; the timing model prices by class.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Hash)]
pub enum Class {
    /// Data processing: MOV/MVN/ADD/SUB/ADC/…, shifts, compare/test, logic, bitfield, extend,
    /// REV, SSAT/USAT, CLZ, ADR, MOVW/MOVT.
    Alu,
    /// MUL/MULS (32-bit result).
    Mul,
    /// MLA, MLS.
    MulAcc,
    /// UMULL, SMULL.
    MulLong,
    /// UMLAL, SMLAL, UMAAL (and the DSP long accumulates SMLALxy, SMLALD, SMLSLD).
    MulAccLong,
    /// ARMv7E-M DSP/SIMD: SMLAD, SMUAD, SMULxy, SMLAxy, SMMUL, QADD, SADD16, UADD8, SEL, USAD8, …
    Dsp,
    /// SDIV, UDIV.
    Div,
    /// LDR/LDRH/LDRB/LDRSH/LDRSB/LDREX*, `width` bytes.
    Load { width: u8 },
    /// LDRD.
    LoadDouble,
    /// LDM/LDMDB/POP with `regs` registers.
    LoadMultiple { regs: u8 },
    /// STR/STRH/STRB/STREX*, `width` bytes.
    Store { width: u8 },
    /// STRD.
    StoreDouble,
    /// STM/STMDB/PUSH with `regs` registers.
    StoreMultiple { regs: u8 },
    /// B, Bcc, BL, BX, BLX, CBZ, CBNZ.
    Branch,
    /// TBB, TBH.
    TableBranch,
    /// IT.
    It,
    /// DMB, DSB, ISB.
    Barrier,
    /// NOP and hints (YIELD, WFE, WFI, SEV).
    Hint,
    /// MRS, MSR, CPS, SVC, BKPT, UDF, …
    System,
    /// Floating point.
    Fp(FpClass),
}

#[derive(Debug, Clone, Copy, PartialEq, Eq, Hash)]
pub enum FpClass {
    /// VADD, VSUB, VMUL, VNMUL, VABS, VNEG, VMOV (reg/imm), VCVT*, VSEL, VMAXNM, VRINT*, …
    Alu { double: bool },
    /// VCMP, VCMPE.
    Compare { double: bool },
    /// VMLA, VMLS, VNMLA, VNMLS (chained multiply-accumulate).
    MulAcc { double: bool },
    /// VFMA, VFMS, VFNMA, VFNMS (fused).
    FusedMulAcc { double: bool },
    /// VDIV, VSQRT.
    DivSqrt { double: bool },
    /// VLDR.
    Load { double: bool },
    /// VSTR.
    Store { double: bool },
    /// VLDM/VPOP with `regs` registers of `double` size.
    LoadMultiple { regs: u8, double: bool },
    /// VSTM/VPUSH.
    StoreMultiple { regs: u8, double: bool },
    /// VMOV between one core register and one S register.
    MoveCore,
    /// VMOV between two core registers and a D register or two S registers.
    MoveCore2,
    /// VMRS, VMSR.
    System,
}

/// A memory access.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Hash)]
pub struct Mem {
    pub store: bool,
    /// Base register (PC for literal loads).
    pub base: Reg,
    /// Index register, if any.
    pub index: Option<Reg>,
    /// Immediate offset (signed) when no index register.
    pub offset: i32,
    /// The base register is updated (pre- or post-indexed, or LDM/STM with `!`).
    pub writeback: bool,
    /// Total bytes transferred.
    pub bytes: u32,
}

/// What an instruction does to SP.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Hash)]
pub enum SpEffect {
    None,
    /// SP += delta (negative: the stack grows): PUSH, STMDB sp!, VPUSH, VSTMDB sp!,
    /// SUB/ADD sp, sp, #imm (every encoding), STR Rt, [sp, #-n]!, LDR Rt, [sp], #n, POP, VPOP, LDM sp!.
    Adjust(i32),
    /// SP = reg + offset (MOV sp, Rn; ADD/SUB sp, Rn, #imm with Rn ≠ SP): frame-pointer restores.
    FromReg {
        reg: Reg,
        offset: i32,
    },
    /// Any other write to SP (SUB sp, sp, Rm; MSR MSP; LDR sp, …): unknown amount.
    Dynamic,
}

/// Control flow.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Hash)]
pub enum Flow {
    /// Falls through to the next instruction.
    Next,
    /// Direct branch (B, B.W, Bcc, CBZ, CBNZ) to `target`; falls through too when the instruction
    /// is conditional (see [`Insn::conditional`]).
    Branch { target: u32 },
    /// BL / BLX immediate to `target`.
    Call { target: u32 },
    /// BLX Rm.
    CallIndirect { reg: Reg },
    /// BX LR, POP {…, pc}, LDR pc, [sp], #4, LDM sp!, {…, pc}.
    Return,
    /// BX Rm (m ≠ LR), MOV pc, Rm, LDR pc, [Rn, …] other than a return. `literal` is the address
    /// of the word loaded when the address is PC-relative (`ldr.w pc, [pc, #imm]` veneers).
    JumpIndirect { literal: Option<u32> },
    /// TBB/TBH; `table` is the table's address when the base is PC (the usual case).
    TableBranch { table: Option<u32>, halfword: bool, index: Reg },
    /// UDF, BKPT other than semihosting (0xAB), SVC: does not continue in straight-line code.
    Trap,
}

/// One decoded instruction.
#[derive(Debug, Clone, PartialEq, Eq, Hash)]
pub struct Insn {
    pub addr: u32,
    /// 2 or 4.
    pub len: u8,
    /// Encoding: the 16-bit halfword, or for 32-bit encodings first halfword << 16 | second.
    pub raw: u32,
    /// Lowercase mnemonic as a disassembler prints it (`ldr.w`, `push`, `vmla.f32`).
    pub mnemonic: String,
    pub operands: String,
    pub class: Class,
    /// Executes conditionally: Bcc, CBZ/CBNZ, or an instruction inside an IT block.
    pub conditional: bool,
    /// Core registers read (includes address registers; PC for PC-relative).
    pub reads: RegSet,
    /// Core registers written (includes writeback and PC for branches/returns).
    pub writes: RegSet,
    pub mem: Option<Mem>,
    pub sp: SpEffect,
    /// `Rd = SP + imm` (ADD Rd, SP, #imm; MOV Rd, SP): lets the stack analyzer follow a frame
    /// pointer that is later copied back into SP.
    pub sp_copy: Option<(Reg, i32)>,
    pub flow: Flow,
}

/// Length in bytes of the instruction whose first halfword is `hw`: 32-bit encodings start with
/// 0b11101, 0b11110 or 0b11111.
pub fn insn_len(hw: u16) -> u8 {
    match hw >> 11 {
        0b11101..=0b11111 => 4,
        _ => 2,
    }
}

#[derive(Debug, Clone, PartialEq, Eq, thiserror::Error)]
pub enum DecodeError {
    #[error("0x{addr:08x}: fewer bytes than an instruction needs")]
    Truncated { addr: u32 },
    #[error("0x{addr:08x}: cannot decode {raw:#x} as a {arch:?} instruction")]
    Undecodable { addr: u32, raw: u32, arch: Arch },
    #[error("0x{addr:08x}: {mnemonic} is not available on {arch:?}")]
    NotOnArch { addr: u32, mnemonic: String, arch: Arch },
}

mod decode;
pub use decode::{Decoder, NewError};
