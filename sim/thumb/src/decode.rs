//! The decoder: capstone (Thumb + MClass + V8 mode, detail on) decodes, this module classifies.
//!
//! Capstone is run with every feature it has (it enables NEON, CRC, v8-A, … regardless of mode), so
//! all architecture filtering is done here, by instruction id and by encoding space: an instruction
//! id this module does not know is [`DecodeError::Undecodable`], never a guess.
//!
//! Threads: a capstone handle is `!Send`/`!Sync`, so [`Decoder`] holds no handle. It is a small
//! `Copy + Send + Sync` value; each thread lazily creates one capstone handle (thread-local, created on
//! the first decode of that thread and kept for the thread's lifetime). Several vCPU threads of a QEMU
//! plugin can therefore share one `Decoder` (or copies of it) without locking.

use std::cell::{Cell, RefCell};

use capstone::arch::arm::{ArchExtraMode, ArchMode, ArmCC, ArmInsn as I, ArmOperand, ArmOperandType, ArmReg, ArmShift};
use capstone::arch::{BuildsCapstone, BuildsCapstoneExtraMode, DetailsArchInsn};
use capstone::{Capstone, DisasmIter, RegId};

use crate::{Arch, Class, DecodeError, Flow, FpClass, Insn, LR, Mem, PC, Reg, RegSet, SP, SpEffect, insn_len};

/// Error of [`Decoder::new`].
#[derive(Debug, Clone, PartialEq, Eq, thiserror::Error)]
pub enum NewError {
    /// ARMv6-M and ARMv7-M (Cortex-M0/M0+/M1/M3) have no floating-point unit.
    #[error("{arch:?} has no FPU")]
    NoFpuOnArch { arch: Arch },
    /// The capstone engine could not be created.
    #[error("capstone: {0}")]
    Engine(String),
}

/// Thumb decoder for one architecture profile. Cheap to copy, `Send + Sync`; see the module docs.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Hash)]
pub struct Decoder {
    arch: Arch,
    fpu: bool,
}

/// Per-thread capstone engine.
struct Engine {
    cs: Capstone,
    /// Capstone's own IT-block state (kept inside the handle by `cs_disasm_iter`) may be non-empty:
    /// set after decoding an IT instruction; cleared by a `cs_disasm` call, which resets it.
    it_dirty: Cell<bool>,
}

thread_local! {
    static ENGINE: RefCell<Option<Engine>> = const { RefCell::new(None) };
}

fn new_capstone() -> Result<Capstone, String> {
    Capstone::new()
        .arm()
        .mode(ArchMode::Thumb)
        .extra_mode([ArchExtraMode::MClass, ArchExtraMode::V8].into_iter())
        .detail(true)
        .build()
        .map_err(|e| e.to_string())
}

fn with_engine<R>(f: impl FnOnce(&mut Engine) -> R) -> R {
    ENGINE.with(|cell| {
        let mut slot = cell.borrow_mut();
        let engine = slot.get_or_insert_with(|| Engine {
            // Decoder::new created one on some thread already, so this cannot fail for lack of the
            // ARM architecture in the build.
            cs: new_capstone().expect("capstone ARM engine"),
            it_dirty: Cell::new(false),
        });
        f(engine)
    })
}

impl Engine {
    /// Clear capstone's IT state: `cs_disasm` (not `cs_disasm_iter`) resets it.
    fn reset_it(&self) {
        if self.it_dirty.get() {
            let _ = self.cs.disasm_count(&[0x00, 0xbf], 0, 1); // nop
            self.it_dirty.set(false);
        }
    }
}

fn gpr(r: RegId) -> Option<Reg> {
    let v = r.0 as u32;
    let r0 = ArmReg::ARM_REG_R0;
    if (r0..={ ArmReg::ARM_REG_R12 }).contains(&v) {
        Some((v - r0) as Reg)
    } else if v == ArmReg::ARM_REG_SP {
        Some(SP)
    } else if v == ArmReg::ARM_REG_LR {
        Some(LR)
    } else if v == ArmReg::ARM_REG_PC {
        Some(PC)
    } else {
        None
    }
}

fn is_dreg(r: RegId) -> bool {
    ({ ArmReg::ARM_REG_D0 }..={ ArmReg::ARM_REG_D31 }).contains(&(r.0 as u32))
}

fn set(rs: &mut RegSet, r: Reg) {
    rs.0 |= 1 << r;
}

/// Instruction families; one capstone id maps to one family.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
enum Fam {
    Alu,
    Mul,
    MulAcc,
    MulLong,
    MulAccLong,
    /// DSP extension (v7E-M, optional on v8-M Mainline).
    Dsp,
    /// DSP extension long multiply-accumulate (SMLALxy, SMLALD, SMLSLD, UMAAL).
    DspLong,
    Div,
    Load(u8),
    LoadDouble,
    LoadMultiple,
    Store(u8),
    StoreDouble,
    StoreMultiple,
    B,
    Bl,
    Blx,
    Bx,
    Cbz,
    Tb {
        halfword: bool,
    },
    It,
    Barrier,
    Hint,
    /// PLD/PLI: a hint with an address.
    Preload,
    System,
    Svc,
    Bkpt,
    Udf,
    Msr,
    Fp(FpFam),
}

#[derive(Debug, Clone, Copy, PartialEq, Eq)]
enum FpFam {
    Alu,
    Compare,
    MulAcc,
    Fused,
    DivSqrt,
    Load,
    Store,
    LoadMultiple,
    StoreMultiple,
    Mov,
    System,
}

/// What each id needs beyond the base Thumb instruction set of its family.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
enum Need {
    /// In ARMv6-M (16-bit, or the 32-bit BL/MSR/MRS/DMB/DSB/ISB/UDF.W).
    Base,
    /// ARMv7-M and later.
    V7,
    /// DSP extension: ARMv7E-M, ARMv8-M Mainline.
    Dsp,
    /// ARMv8-M only.
    V8,
    /// Floating point (fpu = true, v7E-M or v8-M).
    Fp,
}

fn family(id: u32) -> Option<(Fam, Need)> {
    use Fam as F;
    use Need as N;
    macro_rules! ids {
        ($($name:ident)|+) => { $( id == I::$name as u32 )||+ };
    }
    let r = if ids!(
        ARM_INS_ADC
            | ARM_INS_ADD
            | ARM_INS_ADR
            | ARM_INS_AND
            | ARM_INS_ASR
            | ARM_INS_BIC
            | ARM_INS_CMN
            | ARM_INS_CMP
            | ARM_INS_EOR
            | ARM_INS_LSL
            | ARM_INS_LSR
            | ARM_INS_MOV
            | ARM_INS_MOVS
            | ARM_INS_MVN
            | ARM_INS_NEG
            | ARM_INS_ORR
            | ARM_INS_REV
            | ARM_INS_REV16
            | ARM_INS_REVSH
            | ARM_INS_ROR
            | ARM_INS_RSB
            | ARM_INS_SBC
            | ARM_INS_SUB
            | ARM_INS_SUBS
            | ARM_INS_SXTB
            | ARM_INS_SXTH
            | ARM_INS_TST
            | ARM_INS_UXTB
            | ARM_INS_UXTH
    ) {
        (F::Alu, N::Base)
    } else if ids!(
        ARM_INS_ADDW
            | ARM_INS_SUBW
            | ARM_INS_BFC
            | ARM_INS_BFI
            | ARM_INS_CLZ
            | ARM_INS_MOVT
            | ARM_INS_MOVW
            | ARM_INS_ORN
            | ARM_INS_RBIT
            | ARM_INS_RRX
            | ARM_INS_SBFX
            | ARM_INS_UBFX
            | ARM_INS_SSAT
            | ARM_INS_USAT
            | ARM_INS_TEQ
    ) {
        (F::Alu, N::V7)
    } else if ids!(ARM_INS_MUL) {
        (F::Mul, N::Base)
    } else if ids!(ARM_INS_MLA | ARM_INS_MLS) {
        (F::MulAcc, N::V7)
    } else if ids!(ARM_INS_UMULL | ARM_INS_SMULL) {
        (F::MulLong, N::V7)
    } else if ids!(ARM_INS_UMLAL | ARM_INS_SMLAL) {
        (F::MulAccLong, N::V7)
    } else if ids!(
        ARM_INS_UMAAL
            | ARM_INS_SMLALBB
            | ARM_INS_SMLALBT
            | ARM_INS_SMLALTB
            | ARM_INS_SMLALTT
            | ARM_INS_SMLALD
            | ARM_INS_SMLALDX
            | ARM_INS_SMLSLD
            | ARM_INS_SMLSLDX
    ) {
        (F::DspLong, N::Dsp)
    } else if ids!(
        ARM_INS_QADD
            | ARM_INS_QADD16
            | ARM_INS_QADD8
            | ARM_INS_QASX
            | ARM_INS_QDADD
            | ARM_INS_QDSUB
            | ARM_INS_QSAX
            | ARM_INS_QSUB
            | ARM_INS_QSUB16
            | ARM_INS_QSUB8
            | ARM_INS_SADD16
            | ARM_INS_SADD8
            | ARM_INS_SASX
            | ARM_INS_SEL
            | ARM_INS_SHADD16
            | ARM_INS_SHADD8
            | ARM_INS_SHASX
            | ARM_INS_SHSAX
            | ARM_INS_SHSUB16
            | ARM_INS_SHSUB8
            | ARM_INS_SMLABB
            | ARM_INS_SMLABT
            | ARM_INS_SMLATB
            | ARM_INS_SMLATT
            | ARM_INS_SMLAD
            | ARM_INS_SMLADX
            | ARM_INS_SMLAWB
            | ARM_INS_SMLAWT
            | ARM_INS_SMLSD
            | ARM_INS_SMLSDX
            | ARM_INS_SMMLA
            | ARM_INS_SMMLAR
            | ARM_INS_SMMLS
            | ARM_INS_SMMLSR
            | ARM_INS_SMMUL
            | ARM_INS_SMMULR
            | ARM_INS_SMUAD
            | ARM_INS_SMUADX
            | ARM_INS_SMULBB
            | ARM_INS_SMULBT
            | ARM_INS_SMULTB
            | ARM_INS_SMULTT
            | ARM_INS_SMULWB
            | ARM_INS_SMULWT
            | ARM_INS_SMUSD
            | ARM_INS_SMUSDX
            | ARM_INS_SSAT16
            | ARM_INS_SSAX
            | ARM_INS_SSUB16
            | ARM_INS_SSUB8
            | ARM_INS_SXTAB
            | ARM_INS_SXTAB16
            | ARM_INS_SXTAH
            | ARM_INS_SXTB16
            | ARM_INS_UADD16
            | ARM_INS_UADD8
            | ARM_INS_UASX
            | ARM_INS_UHADD16
            | ARM_INS_UHADD8
            | ARM_INS_UHASX
            | ARM_INS_UHSAX
            | ARM_INS_UHSUB16
            | ARM_INS_UHSUB8
            | ARM_INS_UQADD16
            | ARM_INS_UQADD8
            | ARM_INS_UQASX
            | ARM_INS_UQSAX
            | ARM_INS_UQSUB16
            | ARM_INS_UQSUB8
            | ARM_INS_USAD8
            | ARM_INS_USADA8
            | ARM_INS_USAT16
            | ARM_INS_USAX
            | ARM_INS_USUB16
            | ARM_INS_USUB8
            | ARM_INS_UXTAB
            | ARM_INS_UXTAB16
            | ARM_INS_UXTAH
            | ARM_INS_UXTB16
            | ARM_INS_PKHBT
            | ARM_INS_PKHTB
    ) {
        (F::Dsp, N::Dsp)
    } else if ids!(ARM_INS_SDIV | ARM_INS_UDIV) {
        (F::Div, N::V7)
    } else if ids!(ARM_INS_LDR) {
        (F::Load(4), N::Base)
    } else if ids!(ARM_INS_LDRH | ARM_INS_LDRSH) {
        (F::Load(2), N::Base)
    } else if ids!(ARM_INS_LDRB | ARM_INS_LDRSB) {
        (F::Load(1), N::Base)
    } else if ids!(ARM_INS_LDRT | ARM_INS_LDREX) {
        (F::Load(4), N::V7)
    } else if ids!(ARM_INS_LDRHT | ARM_INS_LDRSHT | ARM_INS_LDREXH) {
        (F::Load(2), N::V7)
    } else if ids!(ARM_INS_LDRBT | ARM_INS_LDRSBT | ARM_INS_LDREXB) {
        (F::Load(1), N::V7)
    } else if ids!(ARM_INS_LDA | ARM_INS_LDAEX) {
        (F::Load(4), N::V8)
    } else if ids!(ARM_INS_LDAH | ARM_INS_LDAEXH) {
        (F::Load(2), N::V8)
    } else if ids!(ARM_INS_LDAB | ARM_INS_LDAEXB) {
        (F::Load(1), N::V8)
    } else if ids!(ARM_INS_LDRD) {
        (F::LoadDouble, N::V7)
    } else if ids!(ARM_INS_LDM | ARM_INS_POP) {
        (F::LoadMultiple, N::Base)
    } else if ids!(ARM_INS_LDMDB) {
        (F::LoadMultiple, N::V7)
    } else if ids!(ARM_INS_STR) {
        (F::Store(4), N::Base)
    } else if ids!(ARM_INS_STRH) {
        (F::Store(2), N::Base)
    } else if ids!(ARM_INS_STRB) {
        (F::Store(1), N::Base)
    } else if ids!(ARM_INS_STRT | ARM_INS_STREX) {
        (F::Store(4), N::V7)
    } else if ids!(ARM_INS_STRHT | ARM_INS_STREXH) {
        (F::Store(2), N::V7)
    } else if ids!(ARM_INS_STRBT | ARM_INS_STREXB) {
        (F::Store(1), N::V7)
    } else if ids!(ARM_INS_STL | ARM_INS_STLEX) {
        (F::Store(4), N::V8)
    } else if ids!(ARM_INS_STLH | ARM_INS_STLEXH) {
        (F::Store(2), N::V8)
    } else if ids!(ARM_INS_STLB | ARM_INS_STLEXB) {
        (F::Store(1), N::V8)
    } else if ids!(ARM_INS_STRD) {
        (F::StoreDouble, N::V7)
    } else if ids!(ARM_INS_STM | ARM_INS_PUSH) {
        (F::StoreMultiple, N::Base)
    } else if ids!(ARM_INS_STMDB) {
        (F::StoreMultiple, N::V7)
    } else if ids!(ARM_INS_B) {
        (F::B, N::Base)
    } else if ids!(ARM_INS_BL) {
        (F::Bl, N::Base)
    } else if ids!(ARM_INS_BLX) {
        (F::Blx, N::Base)
    } else if ids!(ARM_INS_BX) {
        (F::Bx, N::Base)
    } else if ids!(ARM_INS_BXNS) {
        (F::Bx, N::V8)
    } else if ids!(ARM_INS_BLXNS) {
        (F::Blx, N::V8)
    } else if ids!(ARM_INS_CBZ | ARM_INS_CBNZ) {
        (F::Cbz, N::V7)
    } else if ids!(ARM_INS_TBB) {
        (F::Tb { halfword: false }, N::V7)
    } else if ids!(ARM_INS_TBH) {
        (F::Tb { halfword: true }, N::V7)
    } else if ids!(ARM_INS_IT) {
        (F::It, N::V7)
    } else if ids!(ARM_INS_DMB | ARM_INS_DSB | ARM_INS_ISB) {
        (F::Barrier, N::Base)
    } else if ids!(ARM_INS_NOP | ARM_INS_YIELD | ARM_INS_WFE | ARM_INS_WFI | ARM_INS_SEV) {
        (F::Hint, N::Base)
    } else if ids!(ARM_INS_HINT | ARM_INS_DBG | ARM_INS_CSDB) {
        (F::Hint, N::V7)
    } else if ids!(ARM_INS_PLD | ARM_INS_PLI) {
        (F::Preload, N::V7)
    } else if ids!(ARM_INS_MRS | ARM_INS_CPS) {
        (F::System, N::Base)
    } else if ids!(ARM_INS_MSR) {
        (F::Msr, N::Base)
    } else if ids!(
        ARM_INS_CLREX
            | ARM_INS_MCR
            | ARM_INS_MCR2
            | ARM_INS_MRC
            | ARM_INS_MRC2
            | ARM_INS_MCRR
            | ARM_INS_MCRR2
            | ARM_INS_MRRC
            | ARM_INS_MRRC2
            | ARM_INS_CDP
            | ARM_INS_CDP2
            | ARM_INS_LDC
            | ARM_INS_LDC2
            | ARM_INS_LDCL
            | ARM_INS_LDC2L
            | ARM_INS_STC
            | ARM_INS_STC2
            | ARM_INS_STCL
            | ARM_INS_STC2L
    ) {
        (F::System, N::V7)
    } else if ids!(ARM_INS_SG | ARM_INS_TT | ARM_INS_TTA | ARM_INS_TTAT | ARM_INS_TTT) {
        (F::System, N::V8)
    } else if ids!(ARM_INS_SVC) {
        (F::Svc, N::Base)
    } else if ids!(ARM_INS_BKPT) {
        (F::Bkpt, N::Base)
    } else if ids!(ARM_INS_UDF | ARM_INS_TRAP) {
        // Capstone names `udf #254` (0xdefe, LLVM's trap) `trap`; it is a UDF all the same.
        (F::Udf, N::Base)
    } else if let Some(fp) = fp_family(id) {
        (F::Fp(fp), N::Fp)
    } else {
        return None;
    };
    Some(r)
}

fn fp_family(id: u32) -> Option<FpFam> {
    macro_rules! ids {
        ($($name:ident)|+) => { $( id == I::$name as u32 )||+ };
    }
    Some(
        if ids!(
            ARM_INS_VADD
                | ARM_INS_VSUB
                | ARM_INS_VMUL
                | ARM_INS_VNMUL
                | ARM_INS_VABS
                | ARM_INS_VNEG
                | ARM_INS_VCVT
                | ARM_INS_VCVTA
                | ARM_INS_VCVTB
                | ARM_INS_VCVTM
                | ARM_INS_VCVTN
                | ARM_INS_VCVTP
                | ARM_INS_VCVTR
                | ARM_INS_VCVTT
                | ARM_INS_VSELEQ
                | ARM_INS_VSELGE
                | ARM_INS_VSELGT
                | ARM_INS_VSELVS
                | ARM_INS_VMAXNM
                | ARM_INS_VMINNM
                | ARM_INS_VRINTA
                | ARM_INS_VRINTM
                | ARM_INS_VRINTN
                | ARM_INS_VRINTP
                | ARM_INS_VRINTR
                | ARM_INS_VRINTX
                | ARM_INS_VRINTZ
                | ARM_INS_FCONSTS
                | ARM_INS_FCONSTD
                | ARM_INS_FADDS
                | ARM_INS_FADDD
                | ARM_INS_FSUBS
                | ARM_INS_FSUBD
        ) {
            FpFam::Alu
        } else if ids!(ARM_INS_VCMP | ARM_INS_VCMPE | ARM_INS_FCMPZS | ARM_INS_FCMPZD) {
            FpFam::Compare
        } else if ids!(ARM_INS_VMLA | ARM_INS_VMLS | ARM_INS_VNMLA | ARM_INS_VNMLS) {
            FpFam::MulAcc
        } else if ids!(ARM_INS_VFMA | ARM_INS_VFMS | ARM_INS_VFNMA | ARM_INS_VFNMS) {
            FpFam::Fused
        } else if ids!(ARM_INS_VDIV | ARM_INS_VSQRT) {
            FpFam::DivSqrt
        } else if ids!(ARM_INS_VLDR) {
            FpFam::Load
        } else if ids!(ARM_INS_VSTR) {
            FpFam::Store
        } else if ids!(ARM_INS_VLDMIA | ARM_INS_VLDMDB | ARM_INS_VPOP) {
            FpFam::LoadMultiple
        } else if ids!(ARM_INS_VSTMIA | ARM_INS_VSTMDB | ARM_INS_VPUSH) {
            FpFam::StoreMultiple
        } else if ids!(ARM_INS_VMOV | ARM_INS_FMDHR | ARM_INS_FMDLR) {
            FpFam::Mov
        } else if ids!(ARM_INS_VMRS | ARM_INS_VMSR | ARM_INS_FMSTAT | ARM_INS_VLLDM | ARM_INS_VLSTM) {
            FpFam::System
        } else {
            return None;
        },
    )
}

/// The floating-point extension lives in the coprocessor space with coprocessor 10/11
/// (`111T 11xx xxxx xxxx  xxxx 101x xxxx xxxx`, excluding `111T 1111`, Advanced SIMD data
/// processing). Capstone also decodes Advanced SIMD (NEON) instructions under the same ids; they
/// are outside this space.
fn in_fp_space(raw: u32, len: u8) -> bool {
    if len != 4 {
        return false;
    }
    let hw0 = raw >> 16;
    let hw1 = raw & 0xffff;
    (hw0 & 0xec00) == 0xec00 && (hw0 & 0x0300) != 0x0300 && (hw1 & 0x0e00) == 0x0a00
}

/// Mutable per-call context: IT-block state of `decode_block`.
#[derive(Default)]
struct ItState {
    /// Instructions still covered by the current IT block.
    remaining: u8,
}

impl Decoder {
    /// A decoder for `arch`; `fpu` enables the floating-point instructions (FPv4-SP/FPv5, single and
    /// double precision are both accepted: the decoder does not tell FPv4-SP from FPv5-D16).
    /// Fails for an FPU on ARMv6-M/ARMv7-M, or when the capstone engine cannot be created.
    pub fn new(arch: Arch, fpu: bool) -> Result<Decoder, NewError> {
        if fpu && matches!(arch, Arch::V6M | Arch::V7M) {
            return Err(NewError::NoFpuOnArch { arch });
        }
        // Create this thread's engine now, so configuration errors surface here.
        ENGINE.with(|cell| -> Result<(), NewError> {
            let mut slot = cell.borrow_mut();
            if slot.is_none() {
                *slot = Some(Engine { cs: new_capstone().map_err(NewError::Engine)?, it_dirty: Cell::new(false) });
            }
            Ok(())
        })?;
        Ok(Decoder { arch, fpu })
    }

    /// A decoder for the code of `core`: its instruction set, with FP instructions when it has an
    /// FPU. Fails only when the capstone engine cannot be created.
    pub fn for_core(core: mcubench_wire::Core) -> Result<Decoder, NewError> {
        Decoder::new(Arch::from(core), core.has_fpu())
    }

    pub fn arch(&self) -> Arch {
        self.arch
    }

    pub fn fpu(&self) -> bool {
        self.fpu
    }

    /// One instruction at `addr`; `bytes` starts at addr (2 or more bytes; only the instruction's
    /// own 2 or 4 bytes are used, the length comes from the first halfword). Outside any IT block.
    pub fn decode(&self, addr: u32, bytes: &[u8]) -> Result<Insn, DecodeError> {
        with_engine(|eng| {
            eng.reset_it();
            let mut it = ItState::default();
            let mut iter =
                eng.cs.disasm_iter(&[], 0).map_err(|_| DecodeError::Undecodable { addr, raw: 0, arch: self.arch })?;
            self.decode_one(eng, &mut iter, addr, bytes, &mut it)
        })
    }

    /// Straight-line sequence (a QEMU translation block or a function body) decoded in order,
    /// tracking IT blocks so that instructions inside an IT block get `conditional = true`. Stops at
    /// the first error and returns it with what was decoded before it. Trailing bytes shorter than
    /// an instruction give [`DecodeError::Truncated`].
    pub fn decode_block(&self, addr: u32, bytes: &[u8]) -> (Vec<Insn>, Option<DecodeError>) {
        with_engine(|eng| {
            eng.reset_it();
            let mut out = Vec::with_capacity(bytes.len() / 3 + 1);
            let mut it = ItState::default();
            let mut off = 0usize;
            // One capstone instruction buffer for the whole block (reset per instruction).
            let Ok(mut iter) = eng.cs.disasm_iter(&[], 0) else {
                return (out, Some(DecodeError::Undecodable { addr, raw: 0, arch: self.arch }));
            };
            while off < bytes.len() {
                let a = addr.wrapping_add(off as u32);
                match self.decode_one(eng, &mut iter, a, &bytes[off..], &mut it) {
                    Ok(insn) => {
                        off += insn.len as usize;
                        out.push(insn);
                    }
                    Err(e) => return (out, Some(e)),
                }
            }
            (out, None)
        })
    }

    fn decode_one<'b>(
        &self,
        eng: &Engine,
        iter: &mut DisasmIter<'_, 'b>,
        addr: u32,
        bytes: &'b [u8],
        it: &mut ItState,
    ) -> Result<Insn, DecodeError> {
        if bytes.len() < 2 {
            return Err(DecodeError::Truncated { addr });
        }
        let hw0 = u16::from_le_bytes([bytes[0], bytes[1]]);
        let len = insn_len(hw0);
        if bytes.len() < len as usize {
            return Err(DecodeError::Truncated { addr });
        }
        let raw =
            if len == 4 { (hw0 as u32) << 16 | u16::from_le_bytes([bytes[2], bytes[3]]) as u32 } else { hw0 as u32 };
        let in_it = it.remaining > 0;
        if in_it {
            it.remaining -= 1;
        }
        let undecodable = DecodeError::Undecodable { addr, raw, arch: self.arch };
        if len == 2 && raw & 0xff00 == 0xbf00 && raw & 0xf != 0 {
            // IT: capstone now holds IT state in the handle.
            eng.it_dirty.set(true);
        }

        let cs = &eng.cs;
        iter.reset(&bytes[..len as usize], addr as u64);
        let Some(ci) = iter.next() else {
            return Err(undecodable);
        };
        if ci.len() != len as usize {
            return Err(undecodable);
        }
        let id = ci.id().0;
        let mnemonic = ci.mnemonic().unwrap_or("").to_string();
        let not_on_arch = || DecodeError::NotOnArch { addr, mnemonic: mnemonic.clone(), arch: self.arch };
        let Some((fam, need)) = family(id) else {
            return Err(undecodable);
        };
        // Architecture filter.
        let ok = match need {
            Need::Base => {
                self.arch != Arch::V6M
                    || len == 2
                    || matches!(fam, Fam::Bl | Fam::Msr | Fam::Barrier | Fam::Udf)
                    || id == I::ARM_INS_MRS as u32
            }
            Need::V7 => self.arch != Arch::V6M,
            Need::Dsp => matches!(self.arch, Arch::V7EM | Arch::V8MMain),
            Need::V8 => self.arch == Arch::V8MMain,
            Need::Fp => {
                if !in_fp_space(raw, len) {
                    return Err(undecodable);
                }
                self.fpu && matches!(self.arch, Arch::V7EM | Arch::V8MMain)
            }
        };
        if !ok {
            return Err(not_on_arch());
        }
        // DSP-only long multiplies share nothing with the v7-M ones; UMLAL/SMLAL are base v7-M.
        let detail = cs.insn_detail(&ci).map_err(|_| undecodable.clone())?;
        let arch_detail = detail.arch_detail();
        let Some(arm) = arch_detail.arm() else {
            return Err(undecodable);
        };
        let ops: Vec<ArmOperand> = arm.operands().collect();
        let cc = arm.cc();
        let writeback = arm.writeback();

        let mut reads = RegSet::default();
        let mut writes = RegSet::default();
        for r in detail.regs_read() {
            if let Some(g) = gpr(*r) {
                set(&mut reads, g);
            }
        }
        for r in detail.regs_write() {
            if let Some(g) = gpr(*r) {
                set(&mut writes, g);
            }
        }
        // Registers in operands that capstone's access lists may miss: register-shifted operands,
        // address registers, and source registers capstone gives no access for (Rm of
        // UXTAB/SXTAH and the other extend-and-adds, Rn of SSAT/USAT, Rm of PKHBT/PKHTB).
        for (i, o) in ops.iter().enumerate() {
            if let ArmOperandType::Reg(r) = &o.op_type
                && i > 0
                && o.access.is_none()
                && let Some(g) = gpr(*r)
            {
                set(&mut reads, g);
            }
            match &o.shift {
                ArmShift::AsrReg(r)
                | ArmShift::LslReg(r)
                | ArmShift::LsrReg(r)
                | ArmShift::RorReg(r)
                | ArmShift::RrxReg(r) => {
                    if let Some(g) = gpr(*r) {
                        set(&mut reads, g);
                    }
                }
                _ => {}
            }
            if let ArmOperandType::Mem(m) = &o.op_type {
                if let Some(b) = gpr(m.base()) {
                    set(&mut reads, b);
                    if writeback {
                        set(&mut writes, b);
                    }
                }
                if let Some(x) = gpr(m.index()) {
                    set(&mut reads, x);
                }
            }
        }

        // Operand helpers.
        let reg_at = |i: usize| -> Option<Reg> {
            match ops.get(i).map(|o| &o.op_type) {
                Some(ArmOperandType::Reg(r)) => gpr(*r),
                _ => None,
            }
        };
        let imm_at = |i: usize| -> Option<i32> {
            match ops.get(i).map(|o| &o.op_type) {
                Some(ArmOperandType::Imm(v)) => Some(*v),
                _ => None,
            }
        };
        let mem_pos = ops.iter().position(|o| matches!(o.op_type, ArmOperandType::Mem(_)));
        // Post-indexed: a memory operand followed by the (immediate) offset.
        let post_imm = mem_pos.and_then(|p| imm_at(p + 1)).filter(|_| writeback);
        let list_regs = |from: usize| -> (RegSet, u8, bool) {
            let mut rs = RegSet::default();
            let mut n = 0u8;
            let mut dbl = false;
            for o in &ops[from.min(ops.len())..] {
                if let ArmOperandType::Reg(r) = o.op_type {
                    n += 1;
                    if let Some(g) = gpr(r) {
                        set(&mut rs, g);
                    }
                    dbl |= is_dreg(r);
                }
            }
            (rs, n, dbl)
        };
        let any_double = ops.iter().any(|o| matches!(o.op_type, ArmOperandType::Reg(r) if is_dreg(r)));

        let mut mem: Option<Mem> = None;
        let mut sp = SpEffect::None;
        let mut sp_copy = None;
        let mut flow = Flow::Next;
        let mut conditional = in_it || !matches!(cc, ArmCC::ARM_CC_AL | ArmCC::ARM_CC_INVALID);

        let mem_from_op = |store: bool, bytes: u32| -> Option<Mem> {
            let p = mem_pos?;
            let ArmOperandType::Mem(m) = &ops[p].op_type else { return None };
            let base = gpr(m.base())?;
            let index = gpr(m.index());
            let mut offset = if index.is_some() { 0 } else { m.disp() };
            if ops[p].subtracted && offset > 0 {
                offset = -offset;
            }
            Some(Mem { store, base, index, offset, writeback, bytes })
        };
        // SP change of a single load/store with writeback on base SP.
        let ls_sp = |m: &Mem| -> SpEffect {
            if m.base == SP && m.writeback { SpEffect::Adjust(post_imm.unwrap_or(m.offset)) } else { SpEffect::None }
        };

        let class = match fam {
            Fam::Alu => {
                let rd = reg_at(0);
                if id == I::ARM_INS_ADD as u32
                    || id == I::ARM_INS_ADDW as u32
                    || id == I::ARM_INS_SUB as u32
                    || id == I::ARM_INS_SUBW as u32
                {
                    let neg = id == I::ARM_INS_SUB as u32 || id == I::ARM_INS_SUBW as u32;
                    // Forms: (rd, imm) = rd op= imm; (rd, rn, imm); (rd, rm) / (rd, rn, rm[, shift]).
                    let (src, imm) = match (reg_at(1), imm_at(1), imm_at(2)) {
                        (None, Some(i), _) => (rd, Some(i)),
                        (Some(rn), _, Some(i)) => (Some(rn), Some(i)),
                        (Some(rn), _, None) => (Some(rn), None),
                        _ => (None, None),
                    };
                    let signed = imm.map(|i| if neg { i.wrapping_neg() } else { i });
                    if rd == Some(SP) {
                        sp = match (src, signed) {
                            (Some(SP), Some(d)) => SpEffect::Adjust(d),
                            (Some(r), Some(d)) if r != PC => SpEffect::FromReg { reg: r, offset: d },
                            _ => SpEffect::Dynamic,
                        };
                    } else if let (Some(d), Some(SP), Some(off)) = (rd, src, signed)
                        && d != PC
                    {
                        sp_copy = Some((d, off));
                    }
                } else if id == I::ARM_INS_MOV as u32
                    && ops.len() == 2
                    && let (Some(d), Some(s)) = (rd, reg_at(1))
                {
                    if d == SP {
                        sp = if s == SP { SpEffect::Adjust(0) } else { SpEffect::FromReg { reg: s, offset: 0 } };
                    } else if s == SP && d != PC {
                        sp_copy = Some((d, 0));
                    }
                }
                if rd == Some(PC) && writes.contains(PC) {
                    flow = if id == I::ARM_INS_MOV as u32 && reg_at(1) == Some(LR) {
                        Flow::Return
                    } else {
                        Flow::JumpIndirect { literal: None }
                    };
                }
                Class::Alu
            }
            Fam::Mul => Class::Mul,
            Fam::MulAcc => Class::MulAcc,
            Fam::MulLong => Class::MulLong,
            Fam::MulAccLong | Fam::DspLong => Class::MulAccLong,
            Fam::Dsp => Class::Dsp,
            Fam::Div => Class::Div,
            Fam::Load(w) => {
                let m = mem_from_op(false, w as u32).ok_or_else(|| undecodable.clone())?;
                sp = ls_sp(&m);
                let rt = reg_at(0);
                if rt == Some(SP) {
                    sp = SpEffect::Dynamic;
                }
                if rt == Some(PC) {
                    flow = if m.base == SP && m.writeback && post_imm == Some(4) {
                        Flow::Return
                    } else if m.base == PC && m.index.is_none() {
                        Flow::JumpIndirect {
                            literal: Some(((addr.wrapping_add(4)) & !3).wrapping_add(m.offset as u32)),
                        }
                    } else {
                        Flow::JumpIndirect { literal: None }
                    };
                }
                mem = Some(m);
                Class::Load { width: w }
            }
            Fam::Store(w) => {
                let m = mem_from_op(true, w as u32).ok_or_else(|| undecodable.clone())?;
                sp = ls_sp(&m);
                mem = Some(m);
                Class::Store { width: w }
            }
            Fam::LoadDouble | Fam::StoreDouble => {
                let store = fam == Fam::StoreDouble;
                let m = mem_from_op(store, 8).ok_or_else(|| undecodable.clone())?;
                sp = ls_sp(&m);
                if !store && (reg_at(0) == Some(SP) || reg_at(1) == Some(SP)) {
                    sp = SpEffect::Dynamic;
                }
                mem = Some(m);
                if store { Class::StoreDouble } else { Class::LoadDouble }
            }
            Fam::LoadMultiple | Fam::StoreMultiple => {
                let store = fam == Fam::StoreMultiple;
                let stack = id == I::ARM_INS_POP as u32 || id == I::ARM_INS_PUSH as u32;
                let (base, list_from, wb) =
                    if stack { (SP, 0, true) } else { (reg_at(0).ok_or_else(|| undecodable.clone())?, 1, writeback) };
                let (rs, n, _) = list_regs(list_from);
                let bytes = 4 * n as u32;
                let down =
                    id == I::ARM_INS_PUSH as u32 || id == I::ARM_INS_STMDB as u32 || id == I::ARM_INS_LDMDB as u32;
                let offset = if down { -(bytes as i32) } else { 0 };
                mem = Some(Mem { store, base, index: None, offset, writeback: wb, bytes });
                if wb {
                    set(&mut reads, base);
                    set(&mut writes, base);
                }
                if base == SP && wb {
                    sp = SpEffect::Adjust(if down { -(bytes as i32) } else { bytes as i32 });
                }
                if !store && rs.contains(SP) {
                    sp = SpEffect::Dynamic;
                }
                if !store && rs.contains(PC) {
                    flow = if base == SP && wb { Flow::Return } else { Flow::JumpIndirect { literal: None } };
                }
                if store { Class::StoreMultiple { regs: n } } else { Class::LoadMultiple { regs: n } }
            }
            Fam::B => {
                let t = imm_at(0).ok_or_else(|| undecodable.clone())?;
                flow = Flow::Branch { target: t as u32 };
                Class::Branch
            }
            Fam::Cbz => {
                let t = imm_at(1).ok_or_else(|| undecodable.clone())?;
                flow = Flow::Branch { target: t as u32 };
                conditional = true;
                Class::Branch
            }
            Fam::Bl => {
                let t = imm_at(0).ok_or_else(|| undecodable.clone())?;
                flow = Flow::Call { target: t as u32 };
                Class::Branch
            }
            Fam::Blx => {
                if let Some(r) = reg_at(0) {
                    flow = Flow::CallIndirect { reg: r };
                } else if let Some(t) = imm_at(0) {
                    flow = Flow::Call { target: t as u32 };
                } else {
                    return Err(undecodable);
                }
                set(&mut writes, LR);
                Class::Branch
            }
            Fam::Bx => {
                let r = reg_at(0).ok_or_else(|| undecodable.clone())?;
                flow = if r == LR { Flow::Return } else { Flow::JumpIndirect { literal: None } };
                Class::Branch
            }
            Fam::Tb { halfword } => {
                let p = mem_pos.ok_or_else(|| undecodable.clone())?;
                let ArmOperandType::Mem(m) = &ops[p].op_type else { return Err(undecodable) };
                let base = gpr(m.base()).ok_or_else(|| undecodable.clone())?;
                let index = gpr(m.index()).ok_or_else(|| undecodable.clone())?;
                let table = (base == PC).then(|| addr.wrapping_add(4));
                flow = Flow::TableBranch { table, halfword, index };
                mem = Some(Mem {
                    store: false,
                    base,
                    index: Some(index),
                    offset: 0,
                    writeback: false,
                    bytes: if halfword { 2 } else { 1 },
                });
                Class::TableBranch
            }
            Fam::It => {
                let mask = raw & 0xf;
                it.remaining = 4 - mask.trailing_zeros() as u8;
                conditional = in_it;
                Class::It
            }
            Fam::Barrier => Class::Barrier,
            Fam::Hint | Fam::Preload => Class::Hint,
            Fam::System => Class::System,
            Fam::Msr => {
                // SYSm: MSP 8, PSP 9, MSP_NS 0x88, PSP_NS 0x89 (v8-M security extension).
                let sysm = raw & 0xff;
                if len == 4 && matches!(sysm, 0x08 | 0x09 | 0x88 | 0x89) {
                    sp = SpEffect::Dynamic;
                }
                Class::System
            }
            Fam::Svc => {
                // Capstone lists LR as written (exception entry); the caller's LR survives.
                writes = RegSet::default();
                flow = Flow::Trap;
                Class::System
            }
            Fam::Bkpt => {
                if imm_at(0) != Some(0xab) {
                    flow = Flow::Trap;
                }
                Class::System
            }
            Fam::Udf => {
                flow = Flow::Trap;
                Class::System
            }
            Fam::Fp(f) => {
                let double = any_double;
                Class::Fp(match f {
                    FpFam::Alu => FpClass::Alu { double },
                    FpFam::Compare => FpClass::Compare { double },
                    FpFam::MulAcc => FpClass::MulAcc { double },
                    FpFam::Fused => FpClass::FusedMulAcc { double },
                    FpFam::DivSqrt => FpClass::DivSqrt { double },
                    FpFam::Load | FpFam::Store => {
                        let store = f == FpFam::Store;
                        let m = mem_from_op(store, if double { 8 } else { 4 }).ok_or_else(|| undecodable.clone())?;
                        mem = Some(m);
                        if store { FpClass::Store { double } } else { FpClass::Load { double } }
                    }
                    FpFam::LoadMultiple | FpFam::StoreMultiple => {
                        let store = f == FpFam::StoreMultiple;
                        let stack = id == I::ARM_INS_VPOP as u32 || id == I::ARM_INS_VPUSH as u32;
                        let (base, list_from, wb) = if stack {
                            (SP, 0, true)
                        } else {
                            (reg_at(0).ok_or_else(|| undecodable.clone())?, 1, writeback)
                        };
                        let (_, n, dbl) = list_regs(list_from);
                        let bytes = n as u32 * if dbl { 8 } else { 4 };
                        let down = id == I::ARM_INS_VPUSH as u32
                            || id == I::ARM_INS_VSTMDB as u32
                            || id == I::ARM_INS_VLDMDB as u32;
                        mem = Some(Mem {
                            store,
                            base,
                            index: None,
                            offset: if down { -(bytes as i32) } else { 0 },
                            writeback: wb,
                            bytes,
                        });
                        set(&mut reads, base);
                        if wb {
                            set(&mut writes, base);
                            if base == SP {
                                sp = SpEffect::Adjust(if down { -(bytes as i32) } else { bytes as i32 });
                            }
                        }
                        if store {
                            FpClass::StoreMultiple { regs: n, double: dbl }
                        } else {
                            FpClass::LoadMultiple { regs: n, double: dbl }
                        }
                    }
                    FpFam::Mov => {
                        let cores = ops
                            .iter()
                            .filter(|o| matches!(o.op_type, ArmOperandType::Reg(r) if gpr(r).is_some()))
                            .count();
                        match cores {
                            0 => FpClass::Alu { double },
                            1 => FpClass::MoveCore,
                            _ => FpClass::MoveCore2,
                        }
                    }
                    FpFam::System => FpClass::System,
                })
            }
        };

        // Any other write to SP is dynamic; any other write to PC an indirect jump.
        if sp == SpEffect::None && writes.contains(SP) {
            sp = SpEffect::Dynamic;
        }
        if flow == Flow::Next && writes.contains(PC) {
            flow = Flow::JumpIndirect { literal: None };
        }
        if flow != Flow::Next && flow != Flow::Trap {
            set(&mut writes, PC);
        }
        // capstone lists PC as read by BL/BLX/SVC (return address); keep reads to what the
        // instruction addresses: PC-relative operands.
        if matches!(fam, Fam::Bl | Fam::Blx | Fam::Svc) {
            reads.0 &= !(1 << PC);
        }

        Ok(Insn {
            addr,
            len,
            raw,
            mnemonic,
            operands: ci.op_str().unwrap_or("").to_string(),
            class,
            conditional,
            reads,
            writes,
            mem,
            sp,
            sp_copy,
            flow,
        })
    }
}

impl Insn {
    /// Address of the word a PC-relative load or store addresses (`ldr rt, [pc, #imm]`, `vldr`,
    /// `ldr.w pc, [pc, #imm]`): Align(addr + 4, 4) + offset. `None` for other instructions.
    pub fn literal_address(&self) -> Option<u32> {
        let m = self.mem?;
        (m.base == PC && m.index.is_none() && !m.writeback)
            .then(|| (self.addr.wrapping_add(4) & !3).wrapping_add(m.offset as u32))
    }

    /// Direct branch or call target, if any.
    pub fn target(&self) -> Option<u32> {
        match self.flow {
            Flow::Branch { target } | Flow::Call { target } => Some(target),
            _ => None,
        }
    }
}
