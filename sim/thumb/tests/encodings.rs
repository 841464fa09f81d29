//! Hand-assembled encodings (assembled with arm-none-eabi-as, bytes checked with
//! arm-none-eabi-objdump) for each SP effect, flow kind, class and architecture check.

use mcubench_thumb::{
    Arch, Class, DecodeError, Decoder, Flow, FpClass, Insn, LR, Mem, NewError, PC, RegSet, SP, SpEffect,
};

/// Halfwords in instruction-stream order to little-endian bytes.
fn bytes(hws: &[u16]) -> Vec<u8> {
    hws.iter().flat_map(|h| h.to_le_bytes()).collect()
}

fn dec(arch: Arch, fpu: bool) -> Decoder {
    Decoder::new(arch, fpu).expect("decoder")
}

fn m4() -> Decoder {
    dec(Arch::V7EM, true)
}

fn d(addr: u32, hws: &[u16]) -> Insn {
    m4().decode(addr, &bytes(hws)).unwrap_or_else(|e| panic!("{hws:04x?}: {e}"))
}

fn sp(hws: &[u16]) -> SpEffect {
    d(0, hws).sp
}

#[test]
fn sp_push_pop_all_encodings() {
    let i = d(0, &[0xb5b0]); // push {r4, r5, r7, lr}
    assert_eq!(i.sp, SpEffect::Adjust(-16));
    assert_eq!(i.class, Class::StoreMultiple { regs: 4 });
    assert_eq!(i.mem, Some(Mem { store: true, base: SP, index: None, offset: -16, writeback: true, bytes: 16 }));
    assert_eq!((i.len, i.raw), (2, 0xb5b0));
    assert_eq!(sp(&[0xe92d, 0x4ff0]), SpEffect::Adjust(-36)); // push.w {r4-r11, lr}
    assert_eq!(sp(&[0xe92d, 0x0030]), SpEffect::Adjust(-8)); // stmdb sp!, {r4, r5}
    let i = d(0, &[0xbd10]); // pop {r4, pc}
    assert_eq!((i.sp, i.flow, i.class), (SpEffect::Adjust(8), Flow::Return, Class::LoadMultiple { regs: 2 }));
    assert!(i.writes.contains(PC) && i.writes.contains(4) && i.writes.contains(SP));
    let i = d(0, &[0xe8bd, 0x8ff0]); // ldmia.w sp!, {r4-r11, pc}
    assert_eq!((i.sp, i.flow, i.len, i.raw), (SpEffect::Adjust(36), Flow::Return, 4, 0xe8bd_8ff0));
    let i = d(0, &[0xbc30]); // pop {r4, r5}
    assert_eq!((i.sp, i.flow), (SpEffect::Adjust(8), Flow::Next));
}

#[test]
fn sp_vpush_vpop() {
    let i = d(0, &[0xed2d, 0x8a04]); // vpush {s16-s19}
    assert_eq!(i.sp, SpEffect::Adjust(-16));
    assert_eq!(i.class, Class::Fp(FpClass::StoreMultiple { regs: 4, double: false }));
    let i = d(0, &[0xed2d, 0x8b04]); // vpush {d8-d9}
    assert_eq!(i.sp, SpEffect::Adjust(-16));
    assert_eq!(i.class, Class::Fp(FpClass::StoreMultiple { regs: 2, double: true }));
    let i = d(0, &[0xecbd, 0x8b04]); // vpop {d8-d9}
    assert_eq!(i.sp, SpEffect::Adjust(16));
    assert_eq!(i.class, Class::Fp(FpClass::LoadMultiple { regs: 2, double: true }));
    assert_eq!(sp(&[0xed2d, 0x8b02]), SpEffect::Adjust(-8)); // vstmdb sp!, {d8}
    let i = d(0, &[0xecb0, 0x0a04]); // vldmia r0!, {s0-s3}
    assert_eq!(i.sp, SpEffect::None);
    assert_eq!(i.mem, Some(Mem { store: false, base: 0, index: None, offset: 0, writeback: true, bytes: 16 }));
}

#[test]
fn sp_sub_add_immediate_every_encoding() {
    assert_eq!(sp(&[0xb084]), SpEffect::Adjust(-16)); // sub sp, #16 (T1)
    assert_eq!(sp(&[0xf5ad, 0x6d80]), SpEffect::Adjust(-1024)); // sub.w sp, sp, #1024 (T2)
    assert_eq!(sp(&[0xf2ad, 0x4d01]), SpEffect::Adjust(-1025)); // subw sp, sp, #1025 (T3)
    assert_eq!(sp(&[0xf1ad, 0x0d08]), SpEffect::Adjust(-8)); // `add sp, #-8` (gas: sub.w sp, sp, #8)
    assert_eq!(sp(&[0xb004]), SpEffect::Adjust(16)); // add sp, #16
    assert_eq!(sp(&[0xf50d, 0x7d80]), SpEffect::Adjust(256)); // add.w sp, sp, #256
    assert_eq!(sp(&[0xf20d, 0x0d01]), SpEffect::Adjust(1)); // addw sp, sp, #1
}

#[test]
fn sp_single_load_store_writeback() {
    let i = d(0, &[0xf84d, 0x4d08]); // str.w r4, [sp, #-8]!
    assert_eq!(i.sp, SpEffect::Adjust(-8));
    assert_eq!(i.class, Class::Store { width: 4 });
    assert_eq!(i.mem, Some(Mem { store: true, base: SP, index: None, offset: -8, writeback: true, bytes: 4 }));
    let i = d(0, &[0xf85d, 0x4b08]); // ldr.w r4, [sp], #8
    assert_eq!(i.sp, SpEffect::Adjust(8));
    assert!(i.writes.contains(4) && i.writes.contains(SP));
    assert_eq!(sp(&[0xe96d, 0x0102]), SpEffect::Adjust(-8)); // strd r0, r1, [sp, #-8]!
    assert_eq!(d(0, &[0xe96d, 0x0102]).class, Class::StoreDouble);
    let i = d(0, &[0xe9dd, 0x0102]); // ldrd r0, r1, [sp, #8]
    assert_eq!((i.sp, i.class), (SpEffect::None, Class::LoadDouble));
    let i = d(0, &[0xf851, 0x0904]); // ldr.w r0, [r1], #-4
    assert_eq!(i.sp, SpEffect::None);
    assert_eq!(i.mem.map(|m| (m.base, m.writeback)), Some((1, true)));
    assert!(i.writes.contains(1));
}

#[test]
fn sp_from_reg_dynamic_and_copies() {
    assert_eq!(sp(&[0x46bd]), SpEffect::FromReg { reg: 7, offset: 0 }); // mov sp, r7
    assert_eq!(sp(&[0xf1a7, 0x0d10]), SpEffect::FromReg { reg: 7, offset: -16 }); // sub.w sp, r7, #16
    assert_eq!(sp(&[0xebad, 0x0d03]), SpEffect::Dynamic); // sub.w sp, sp, r3
    assert_eq!(sp(&[0x449d]), SpEffect::Dynamic); // add sp, r3
    assert_eq!(sp(&[0xf380, 0x8808]), SpEffect::Dynamic); // msr msp, r0
    assert_eq!(sp(&[0xf8d0, 0xd000]), SpEffect::Dynamic); // ldr.w sp, [r0]
    let i = d(0, &[0xaf02]); // add r7, sp, #8
    assert_eq!((i.sp_copy, i.sp), (Some((7, 8)), SpEffect::None));
    assert_eq!(d(0, &[0x466f]).sp_copy, Some((7, 0))); // mov r7, sp
    assert_eq!(d(0, &[0xaf04]).sp_copy, Some((7, 16))); // add r7, sp, #16
    assert_eq!(d(0, &[0xf1ad, 0x0708]).sp_copy, Some((7, -8))); // sub.w r7, sp, #8
    let i = d(0, &[0x4638]); // mov r0, r7
    assert_eq!((i.sp_copy, i.sp), (None, SpEffect::None));
    assert_eq!((i.reads, i.writes), (RegSet(1 << 7), RegSet(1)));
}

#[test]
fn flow_direct_branches() {
    // Assembled at 0: cbz r0 @a2, beq.n @a4, b.w @a6, bl @aa, all to 0xae.
    let i = d(0xa2, &[0xb120]);
    assert_eq!((i.flow, i.conditional, i.class), (Flow::Branch { target: 0xae }, true, Class::Branch));
    let i = d(0xa4, &[0xd003]);
    assert_eq!((i.flow, i.conditional), (Flow::Branch { target: 0xae }, true));
    let i = d(0xa6, &[0xf000, 0xb802]);
    assert_eq!((i.flow, i.conditional, i.len), (Flow::Branch { target: 0xae }, false, 4));
    let i = d(0xaa, &[0xf000, 0xf800]);
    assert_eq!((i.flow, i.conditional), (Flow::Call { target: 0xae }, false));
    assert!(i.writes.contains(LR) && i.writes.contains(PC));
    assert_eq!(i.target(), Some(0xae));
    // Same encodings at another address move the target with it.
    assert_eq!(d(0x1000_00a6, &[0xf000, 0xb802]).flow, Flow::Branch { target: 0x1000_00ae });
    // blx imm (to ARM state) is UNDEFINED on M-profile: undecodable, not a guessed call.
    assert!(matches!(m4().decode(0x90, &bytes(&[0xf000, 0xe800])), Err(DecodeError::Undecodable { .. })));
}

#[test]
fn flow_indirect_returns_and_traps() {
    assert_eq!(d(0, &[0x4770]).flow, Flow::Return); // bx lr
    assert_eq!(d(0, &[0x4718]).flow, Flow::JumpIndirect { literal: None }); // bx r3
    let i = d(0, &[0x4798]); // blx r3
    assert_eq!(i.flow, Flow::CallIndirect { reg: 3 });
    assert!(i.reads.contains(3) && i.writes.contains(LR));
    assert_eq!(d(0, &[0x469f]).flow, Flow::JumpIndirect { literal: None }); // mov pc, r3
    assert_eq!(d(0, &[0x46f7]).flow, Flow::Return); // mov pc, lr
    let i = d(0, &[0xf85d, 0xfb04]); // ldr.w pc, [sp], #4
    assert_eq!((i.flow, i.sp), (Flow::Return, SpEffect::Adjust(4)));
    assert_eq!(d(0, &[0xf853, 0xf022]).flow, Flow::JumpIndirect { literal: None }); // ldr.w pc, [r3, r2, lsl #2]
    assert_eq!(d(0, &[0xf8d0, 0xf004]).flow, Flow::JumpIndirect { literal: None }); // ldr.w pc, [r0, #4]
    // ldr.w pc, [pc, #4] at 0x4a: Align(0x4e, 4) + 4 = 0x50.
    let i = d(0x4a, &[0xf8df, 0xf004]);
    assert_eq!(i.flow, Flow::JumpIndirect { literal: Some(0x50) });
    assert_eq!(i.literal_address(), Some(0x50));
    // ldr.w pc, [pc, #-8] at 0x26: Align(0x2a, 4) - 8 = 0x20.
    assert_eq!(d(0x26, &[0xf85f, 0xf008]).flow, Flow::JumpIndirect { literal: Some(0x20) });
    // ldr r0, [pc, #4] at 0x24 (literal at 0x2c) and #8 at 0x48 (0x54).
    assert_eq!(d(0x24, &[0x4801]).literal_address(), Some(0x2c));
    assert_eq!(d(0x48, &[0x4802]).literal_address(), Some(0x54));
    assert_eq!(d(0x68, &[0xeddf, 0x0a02]).literal_address(), Some(0x74)); // vldr s1, [pc, #8]
    // tbb [pc, r3] at 0x56, tbh [pc, r3, lsl #1] at 0x5a.
    let i = d(0x56, &[0xe8df, 0xf003]);
    assert_eq!(
        (i.flow, i.class),
        (Flow::TableBranch { table: Some(0x5a), halfword: false, index: 3 }, Class::TableBranch)
    );
    assert_eq!(d(0x5a, &[0xe8df, 0xf013]).flow, Flow::TableBranch { table: Some(0x5e), halfword: true, index: 3 });
    let i = d(0, &[0xde00]); // udf #0
    assert_eq!((i.flow, i.class), (Flow::Trap, Class::System));
    assert_eq!(d(0, &[0xdefe]).flow, Flow::Trap); // udf #254, which capstone calls `trap` (LLVM -O0 traps)
    assert_eq!(d(0, &[0xf7f0, 0xa000]).flow, Flow::Trap); // udf.w #0
    assert_eq!(d(0, &[0xbeab]).flow, Flow::Next); // bkpt 0xab: semihosting
    assert_eq!(d(0, &[0xbe01]).flow, Flow::Trap); // bkpt 1
    assert_eq!(d(0, &[0xdf01]).flow, Flow::Trap); // svc 1
    let v8 = dec(Arch::V8MMain, true);
    assert_eq!(v8.decode(0, &bytes(&[0x4774])).unwrap().flow, Flow::Return); // bxns lr
    assert_eq!(v8.decode(0, &bytes(&[0x479c])).unwrap().flow, Flow::CallIndirect { reg: 3 }); // blxns r3
}

#[test]
fn classes() {
    let c = |hws: &[u16]| d(0, hws).class;
    assert_eq!(c(&[0xfb01, 0xf000]), Class::Mul); // mul.w r0, r1, r0
    assert_eq!(c(&[0x4348]), Class::Mul); // muls r0, r1
    assert_eq!(c(&[0xfb01, 0x3002]), Class::MulAcc); // mla
    assert_eq!(c(&[0xfba2, 0x0103]), Class::MulLong); // umull
    assert_eq!(c(&[0xfb82, 0x0103]), Class::MulLong); // smull
    assert_eq!(c(&[0xfbc2, 0x0103]), Class::MulAccLong); // smlal
    assert_eq!(c(&[0xfbe2, 0x0163]), Class::MulAccLong); // umaal
    assert_eq!(c(&[0xfb21, 0x3002]), Class::Dsp); // smlad
    assert_eq!(c(&[0xfb91, 0xf0f2]), Class::Div); // sdiv
    assert_eq!(c(&[0xfbb1, 0xf0f2]), Class::Div); // udiv
    assert_eq!(c(&[0x5e88]), Class::Load { width: 2 }); // ldrsh r0, [r1, r2]
    assert_eq!(
        d(0, &[0x5e88]).mem,
        Some(Mem { store: false, base: 1, index: Some(2), offset: 0, writeback: false, bytes: 2 })
    );
    assert_eq!(c(&[0x70c8]), Class::Store { width: 1 }); // strb r0, [r1, #3]
    assert_eq!(d(0, &[0x70c8]).mem.map(|m| m.offset), Some(3));
    assert_eq!(c(&[0xe8d1, 0x0f5f]), Class::Load { width: 2 }); // ldrexh
    assert_eq!(d(0, &[0xf851, 0x0c04]).mem.map(|m| m.offset), Some(-4)); // ldr.w r0, [r1, #-4]
    assert_eq!(c(&[0xc806]), Class::LoadMultiple { regs: 2 }); // ldmia r0!, {r1, r2}
    assert_eq!(c(&[0xbf08]), Class::It);
    assert_eq!(c(&[0xf3bf, 0x8f5f]), Class::Barrier); // dmb sy
    assert_eq!(c(&[0xbf00]), Class::Hint); // nop
    assert_eq!(c(&[0xf3ef, 0x8008]), Class::System); // mrs r0, msp
    assert_eq!(c(&[0xfa11, 0xf002]), Class::Alu); // lsls.w r0, r1, r2
    assert_eq!(c(&[0xee00, 0x0a81]), Class::Fp(FpClass::MulAcc { double: false })); // vmla.f32
    assert_eq!(c(&[0xee31, 0x0b02]), Class::Fp(FpClass::Alu { double: true })); // vadd.f64
    assert_eq!(c(&[0xee30, 0x0a81]), Class::Fp(FpClass::Alu { double: false })); // vadd.f32
    assert_eq!(c(&[0xeeb7, 0x0a00]), Class::Fp(FpClass::Alu { double: false })); // vmov.f32 s0, #1.0
    assert_eq!(c(&[0xeef1, 0xfa10]), Class::Fp(FpClass::System)); // vmrs APSR_nzcv, fpscr
    assert_eq!(c(&[0xeea0, 0x0a81]), Class::Fp(FpClass::FusedMulAcc { double: false })); // vfma.f32
    assert_eq!(c(&[0xee81, 0x0b02]), Class::Fp(FpClass::DivSqrt { double: true })); // vdiv.f64
    assert_eq!(c(&[0xeeb5, 0x0ac0]), Class::Fp(FpClass::Compare { double: false })); // vcmpe.f32 s0, #0
    assert_eq!(c(&[0xeeb7, 0x0ae0]), Class::Fp(FpClass::Alu { double: true })); // vcvt.f64.f32
    assert_eq!(c(&[0xed8d, 0x0a01]), Class::Fp(FpClass::Store { double: false })); // vstr s0, [sp, #4]
    assert_eq!(c(&[0xed9d, 0x0b02]), Class::Fp(FpClass::Load { double: true })); // vldr d0, [sp, #8]
    assert_eq!(d(0, &[0xed9d, 0x0b02]).mem.map(|m| m.bytes), Some(8));
    assert_eq!(c(&[0xee10, 0x0a90]), Class::Fp(FpClass::MoveCore)); // vmov r0, s1
    assert_eq!(c(&[0xec51, 0x0b11]), Class::Fp(FpClass::MoveCore2)); // vmov r0, r1, d1
}

#[test]
fn it_block_tracking() {
    // itte eq; moveq r0, r1; addeq r0, #1; subne r0, #1; adds r0, #1
    let code = bytes(&[0xbf06, 0x4608, 0x3001, 0x3801, 0x3001]);
    let (insns, err) = m4().decode_block(0x2a, &code);
    assert!(err.is_none());
    let cond: Vec<bool> = insns.iter().map(|i| i.conditional).collect();
    assert_eq!(cond, [false, true, true, true, false]);
    assert_eq!(insns.iter().map(|i| i.addr).collect::<Vec<_>>(), [0x2a, 0x2c, 0x2e, 0x30, 0x32]);
    assert_eq!(insns[1].mnemonic, "moveq");
    assert_eq!(insns[3].mnemonic, "subne");
    assert_eq!(insns[4].mnemonic, "adds");
    // decode() is outside any IT block, even right after decoding an IT instruction.
    let dec = m4();
    assert_eq!(dec.decode(0, &bytes(&[0xbf06])).unwrap().class, Class::It);
    let i = dec.decode(2, &bytes(&[0x3001])).unwrap();
    assert_eq!((i.mnemonic.as_str(), i.conditional), ("adds", false));
    // A block ending inside an IT block does not leak into the next block.
    let (insns, _) = dec.decode_block(0, &bytes(&[0xbf06, 0x4608]));
    assert!(insns[1].conditional);
    let (insns, _) = dec.decode_block(0, &bytes(&[0x3001]));
    assert_eq!((insns[0].mnemonic.as_str(), insns[0].conditional), ("adds", false));
}

#[test]
fn block_stops_at_first_error() {
    // nop; vadd.i32 q0, q1, q2 (NEON: not on any M profile); nop
    let (insns, err) = m4().decode_block(0x100, &bytes(&[0xbf00, 0xef22, 0x0844, 0xbf00]));
    assert_eq!(insns.len(), 1);
    assert_eq!(err, Some(DecodeError::Undecodable { addr: 0x102, raw: 0xef22_0844, arch: Arch::V7EM }));
    // Truncated 32-bit instruction at the end.
    let (insns, err) = m4().decode_block(0, &bytes(&[0xbf00, 0xf000]));
    assert_eq!((insns.len(), err), (1, Some(DecodeError::Truncated { addr: 2 })));
}

#[test]
fn length_comes_from_first_halfword() {
    let i = m4().decode(0, &bytes(&[0xb084, 0xf000, 0xf800, 0xbf00])).unwrap();
    assert_eq!((i.len, i.raw), (2, 0xb084));
    let i = m4().decode(0, &bytes(&[0xf000, 0xf800, 0xbf00])).unwrap();
    assert_eq!((i.len, i.raw), (4, 0xf000_f800));
    assert_eq!(m4().decode(8, &bytes(&[0xf000])), Err(DecodeError::Truncated { addr: 8 }));
    assert_eq!(m4().decode(8, &[0x00]), Err(DecodeError::Truncated { addr: 8 }));
}

fn not_on(dec: &Decoder, hws: &[u16]) -> bool {
    matches!(dec.decode(0, &bytes(hws)), Err(DecodeError::NotOnArch { .. }))
}

#[test]
fn arch_checks() {
    let v6 = dec(Arch::V6M, false);
    assert!(not_on(&v6, &[0xe92d, 0x4ff0])); // push.w
    assert!(not_on(&v6, &[0xb120])); // cbz
    assert!(not_on(&v6, &[0xbf08])); // it
    assert!(not_on(&v6, &[0xfb91, 0xf0f2])); // sdiv
    for ok in [
        &[0xf000u16, 0xf800][..],
        &[0xf3bf, 0x8f5f],
        &[0xf3ef, 0x8008],
        &[0xf380, 0x8808],
        &[0xf7f0, 0xa000],
        &[0xb5b0],
        &[0x4348],
    ] {
        assert!(v6.decode(0, &bytes(ok)).is_ok(), "{ok:04x?} on v6-M");
    }
    let v7 = dec(Arch::V7M, false);
    assert!(not_on(&v7, &[0xfb21, 0x3002])); // smlad
    assert!(not_on(&v7, &[0xfbe2, 0x0163])); // umaal
    assert!(not_on(&v7, &[0xee30, 0x0a81])); // vadd.f32
    assert!(not_on(&v7, &[0x4774])); // bxns
    assert!(v7.decode(0, &bytes(&[0xfbc2, 0x0103])).is_ok()); // smlal
    assert!(v7.decode(0, &bytes(&[0xe8df, 0xf003])).is_ok()); // tbb
    let m4_nofp = dec(Arch::V7EM, false);
    assert!(not_on(&m4_nofp, &[0xee30, 0x0a81]));
    assert!(not_on(&m4_nofp, &[0xed2d, 0x8b04])); // vpush
    assert!(m4_nofp.decode(0, &bytes(&[0xfb21, 0x3002])).is_ok()); // smlad
    assert!(dec(Arch::V8MMain, true).decode(0, &bytes(&[0xee30, 0x0a81])).is_ok());
    // NEON is undecodable everywhere.
    for d in [m4(), dec(Arch::V8MMain, true)] {
        assert!(matches!(d.decode(0, &bytes(&[0xef22, 0x0844])), Err(DecodeError::Undecodable { .. })));
    }
    assert_eq!(Decoder::new(Arch::V6M, true), Err(NewError::NoFpuOnArch { arch: Arch::V6M }));
    assert_eq!(Decoder::new(Arch::V7M, true), Err(NewError::NoFpuOnArch { arch: Arch::V7M }));
}

#[test]
fn each_core_decodes_its_instruction_set() {
    use mcubench_wire::Core;
    let vadd = [0xee30, 0x0a81];
    for core in Core::ALL {
        let d = Decoder::for_core(core).unwrap();
        assert_eq!((d.arch(), d.fpu()), (Arch::from(core), core.has_fpu()), "{core}");
        assert_eq!(not_on(&d, &vadd), !core.has_fpu(), "{core}: vadd.f32");
    }
    assert_eq!(Arch::from(Core::CortexM0Plus), Arch::V6M);
    assert_eq!(Arch::from(Core::CortexM3), Arch::V7M);
    assert_eq!(Arch::from(Core::CortexM4F), Arch::V7EM);
    assert_eq!(Arch::from(Core::CortexM33), Arch::V8MMain);
}

#[test]
fn usable_from_several_threads() {
    fn assert_send_sync<T: Send + Sync + Copy>() {}
    assert_send_sync::<Decoder>();
    let dec = m4();
    let code = bytes(&[0xb5b0, 0xb084, 0xbf06, 0x4608, 0x3001, 0x3801, 0xe8bd, 0x8ff0]);
    let expected = dec.decode_block(0x800, &code);
    std::thread::scope(|s| {
        let hs: Vec<_> = (0..4)
            .map(|_| {
                s.spawn(|| {
                    for _ in 0..200 {
                        assert_eq!(dec.decode_block(0x800, &code), expected);
                    }
                })
            })
            .collect();
        for h in hs {
            h.join().expect("thread");
        }
    });
}

/// Source registers capstone reports without an access type are still reads: Rm of the
/// extend-and-adds, the source of SSAT/USAT, Rm of PKHBT/PKHTB. A timing model that missed them
/// would price `uxtab r0, r1, r2` as independent of the instruction that wrote r2.
#[test]
fn sources_without_an_access_type_are_reads() {
    let r0_r1_r2 = (RegSet(0b110), RegSet(0b001));
    for (hws, name) in [
        ([0xfa51, 0xf082], "uxtab r0, r1, r2"),
        ([0xfa01, 0xf092], "sxtah r0, r1, r2, ror #8"),
        ([0xeac1, 0x4002], "pkhbt r0, r1, r2, lsl #16"),
        ([0xeac1, 0x4022], "pkhtb r0, r1, r2, asr #16"),
    ] {
        let i = d(0, &hws);
        assert_eq!((i.reads, i.writes), r0_r1_r2, "{name}");
    }
    for (hws, name) in [([0xf301, 0x0007], "ssat r0, #8, r1"), ([0xf3a1, 0x0008], "usat16 r0, #8, r1")] {
        let i = d(0, &hws);
        assert_eq!((i.reads, i.writes), (RegSet(0b010), RegSet(0b001)), "{name}");
    }
}
