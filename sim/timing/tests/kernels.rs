//! Microbenchmark kernels (kernels/*.S) priced by the models must equal the cycle counts derived
//! by hand from the TRM tables in the kernels' comments, exactly.
//!
//! Each kernel `k` is priced as the path it executes: setup block, N = 100 loop bodies (the last
//! with its branch not taken), exit block. Blocks are decoded from the assembled object file.

// Full test tier: needs QEMU and/or the Arm GCC toolchain (bash ci/setup.sh).
#![cfg(feature = "full")]

use std::collections::HashMap;
use std::path::{Path, PathBuf};
use std::process::Command;

use mcubench_thumb::{Arch, Decoder};
use mcubench_timing::{Core, Model, Multiplier, Params};
use object::{Object, ObjectSection, ObjectSymbol};

struct Kernels {
    text: Vec<u8>,
    symbols: HashMap<String, u32>,
    decoder: Decoder,
}

fn assemble(file: &str, cpu: &str, extra: &[&str], arch: Arch, fpu: bool) -> Kernels {
    let src = Path::new(env!("CARGO_MANIFEST_DIR")).join("kernels").join(file);
    // One object per call: parallel test cases assemble the same file for the same CPU.
    static SEQ: std::sync::atomic::AtomicU32 = std::sync::atomic::AtomicU32::new(0);
    let seq = SEQ.fetch_add(1, std::sync::atomic::Ordering::Relaxed);
    let out: PathBuf =
        Path::new(env!("CARGO_TARGET_TMPDIR")).join(format!("{file}-{cpu}-{}-{seq}.o", std::process::id()));
    let status = Command::new("arm-none-eabi-as")
        .args([&format!("-mcpu={cpu}"), "-mthumb"])
        .args(extra)
        .arg("-o")
        .arg(&out)
        .arg(&src)
        .status()
        .expect("arm-none-eabi-as runs; install it with `bash ci/setup.sh`");
    assert!(status.success(), "assembling {}", src.display());
    let bytes = std::fs::read(&out).unwrap();
    let _ = std::fs::remove_file(&out);
    let obj = object::File::parse(&*bytes).unwrap();
    let text = obj.section_by_name(".text").unwrap().data().unwrap().to_vec();
    let symbols = obj.symbols().filter_map(|s| Some((s.name().ok()?.to_string(), (s.address() & !1) as u32))).collect();
    Kernels { text, symbols, decoder: Decoder::new(arch, fpu).unwrap() }
}

impl Kernels {
    fn addr(&self, name: &str) -> u32 {
        *self.symbols.get(name).unwrap_or_else(|| panic!("no symbol {name}"))
    }

    fn block(&self, model: &Model, from: &str, to: &str) -> mcubench_timing::BlockCost {
        let (start, end) = (self.addr(from), self.addr(to));
        let (insns, err) = self.decoder.decode_block(start, &self.text[start as usize..end as usize]);
        assert!(err.is_none(), "{from}: {err:?}");
        model.block(&insns)
    }

    /// setup + 99 taken bodies + 1 not-taken body + exit. The first body block is entered by
    /// the loop's taken branch 99 times (the first time from the setup); inner blocks of the body
    /// are entered by the taken branch (TBB, B) before them every time.
    fn price(&self, model: &Model, k: &str, body: &[(&str, &str)]) -> u64 {
        let setup = self.block(model, k, &format!("{k}_loop"));
        let mut taken = 0;
        let mut not_taken = 0;
        for (i, (from, to)) in body.iter().enumerate() {
            let b = self.block(model, from, to);
            let last = i + 1 == body.len();
            // Inner blocks of the body end in taken branches (TBB, B) priced in fall_through.
            taken += b.fall_through + b.branch_entry + if last { b.taken_extra } else { 0 };
            not_taken += b.fall_through + if i > 0 { b.branch_entry } else { 0 };
        }
        let exit = self.block(model, &format!("{k}_exit"), &format!("{k}_end"));
        setup.fall_through + 99 * taken + not_taken + exit.fall_through
    }

    fn price_loop(&self, model: &Model, k: &str) -> u64 {
        self.price(model, k, &[(&format!("{k}_loop"), &format!("{k}_exit"))])
    }
}

/// The M33 column: the same code on the Cortex-M33 pipeline (sim/timing/src/m33.rs): loads issue
/// in 1 cycle with a load-to-use latency of 2 (k_loads 603, k_chase 604, k_stld 603), LDM/STM of
/// N registers take N (k_ldm 1103), no fetch-alignment penalty (k_wide 602). These kernels branch
/// with 32-bit `bne.w`, so nothing dual issues.
#[rstest::rstest]
#[case("k_delay", 303, 303, 302)]
#[case("k_loads", 703, 703, 603)]
#[case("k_chase", 704, 704, 604)]
#[case("k_ldm", 1303, 1303, 1103)]
#[case("k_branch", 603, 603, 503)]
#[case("k_mac", 805, 1704, 804)]
#[case("k_wide", 802, 802, 602)]
#[case("k_wide_aligned", 603, 603, 602)]
#[case("k_wide_load", 1103, 1103, 704)]
#[case("k_ldr_straddle", 703, 703, 503)]
#[case("k_ldr_aligned", 604, 604, 504)]
#[case("k_stld", 703, 703, 603)]
fn armv7m_kernels_match_the_trm(#[case] kernel: &str, #[case] m4: u64, #[case] m3: u64, #[case] m33: u64) {
    let k = assemble("armv7m.S", "cortex-m4", &[], Arch::V7EM, false);
    assert_eq!(k.price_loop(&Model::new(Core::CortexM4), kernel), m4, "{kernel} on Cortex-M4");
    assert_eq!(k.price_loop(&Model::new(Core::CortexM33), kernel), m33, "{kernel} on Cortex-M33");
    let k3 = assemble("armv7m.S", "cortex-m3", &[], Arch::V7M, false);
    assert_eq!(k3.price_loop(&Model::new(Core::CortexM3), kernel), m3, "{kernel} on Cortex-M3");
}

/// Cortex-M33 pipeline kernels (kernels/armv8m.S), with the Cortex-M4 price of the same code
/// beside them: dual issue of a 16-bit branch, 1-cycle loads, `muls`, MAC chaining.
#[rstest::rstest]
#[case("k33_pair", 302, 402)]
#[case("k33_loads", 802, 903)]
#[case("k33_mul", 1003, 904)]
#[case("k33_flags", 403, 304)]
#[case("k33_extend", 804, 1105)]
fn cortex_m33_kernels_match_the_measurements(#[case] kernel: &str, #[case] m33: u64, #[case] m4: u64) {
    let k = assemble("armv8m.S", "cortex-m33", &[], Arch::V8MMain, false);
    assert_eq!(k.price_loop(&Model::new(Core::CortexM33), kernel), m33, "{kernel} on Cortex-M33");
    assert_eq!(k.price_loop(&Model::new(Core::CortexM4), kernel), m4, "{kernel} on Cortex-M4");
}

/// Cortex-M33 returns (kernels/armv8m.S `k33_return`, `k33_bxlr`): a loop that calls a function
/// returning with `pop {r4, pc}` or with `pop {r4, lr}; …; bx lr`, priced along its path (call,
/// callee entered by the call, the rest entered by the return), with the M4 price beside it.
#[rstest::rstest]
#[case("k33_return", 1506, 1709)]
#[case("k33_bxlr", 1306, 1609)]
fn cortex_m33_loaded_branch_targets(#[case] kernel: &str, #[case] m33: u64, #[case] m4: u64) {
    let k = assemble("armv8m.S", "cortex-m33", &[], Arch::V8MMain, false);
    let (call, after, callee) = (format!("{kernel}_loop"), format!("{kernel}_after"), format!("{kernel}_fn"));
    let (exit, callee_end) = (format!("{kernel}_exit"), format!("{kernel}_fn_end"));
    let body =
        [(call.as_str(), after.as_str()), (callee.as_str(), callee_end.as_str()), (after.as_str(), exit.as_str())];
    assert_eq!(k.price(&Model::new(Core::CortexM33), kernel, &body), m33, "{kernel} on Cortex-M33");
    assert_eq!(k.price(&Model::new(Core::CortexM4), kernel, &body), m4, "{kernel} on Cortex-M4");
}

/// The prefetch unit's speculative fetch of a conditional branch's target (kernels/armv7m.S
/// `k_spec`): a not-taken `beq.w` after 32-bit instructions waits a cycle, a not-taken `bne.w`
/// after two 16-bit instructions does not. The Cortex-M33 (no such rule): 803.
#[test]
fn speculative_branch_fetch_takes_a_fetch_slot() {
    let k = assemble("armv7m.S", "cortex-m4", &[], Arch::V7EM, false);
    let body = [("k_spec_loop", "k_spec_next"), ("k_spec_next", "k_spec_exit")];
    for core in [Core::CortexM3, Core::CortexM4] {
        assert_eq!(k.price(&Model::new(core), "k_spec", &body), 903, "{core:?}");
    }
    assert_eq!(k.price(&Model::new(Core::CortexM33), "k_spec", &body), 803);
}

#[test]
fn tbb_switch_matches_the_trm() {
    let k = assemble("armv7m.S", "cortex-m4", &[], Arch::V7EM, false);
    let body = [("k_tbb_loop", "k_tbb_table"), ("k_tbb_case", "k_tbb_exit")];
    for core in [Core::CortexM3, Core::CortexM4] {
        assert_eq!(k.price(&Model::new(core), "k_tbb", &body), 904, "{core:?}");
    }
    // The M33: setup 2, tbb 3 + P (the loaded offset waits as a loaded PC does), subs 1, bne.w
    // 1 (+P taken; 32-bit, so no pair), exit 2: 2 + 99×7 + 6 + 2 = 703 (2 + P for TBB: 604).
    assert_eq!(k.price(&Model::new(Core::CortexM33), "k_tbb", &body), 703);
}

#[rstest::rstest]
#[case("k_fmac", 1702)]
#[case("k_fdiv", 3302)]
#[case("k_dsp", 703)]
fn cortex_m4f_kernels_match_the_trm(#[case] kernel: &str, #[case] m4: u64) {
    let k = assemble("armv7em-fp.S", "cortex-m4", &["-mfloat-abi=hard", "-mfpu=fpv4-sp-d16"], Arch::V7EM, true);
    assert_eq!(k.price_loop(&Model::new(Core::CortexM4), kernel), m4, "{kernel}");
}

#[rstest::rstest]
#[case("k_delay", 402)]
#[case("k_loads", 1003)]
#[case("k_ldm", 1403)]
#[case("k_mul", 803)]
fn armv6m_kernels_match_the_trm(#[case] kernel: &str, #[case] m0: u64) {
    let k = assemble("armv6m.S", "cortex-m0", &[], Arch::V6M, false);
    assert_eq!(k.price_loop(&Model::new(Core::CortexM0), kernel), m0, "{kernel}");
}

#[test]
fn m0_small_multiplier_option() {
    let k = assemble("armv6m.S", "cortex-m0", &[], Arch::V6M, false);
    let params = Params { m0_multiplier: Multiplier::Small, ..Params::for_core(Core::CortexM0) };
    assert_eq!(k.price_loop(&Model::with_params(Core::CortexM0, params), "k_mul"), 13203);
}

#[test]
fn m0_plus_branches_are_cheaper() {
    // [M0+] taken branch 2, BX 2: k_delay = 1 + 99×3 + 2 + 2 = 302.
    let k = assemble("armv6m.S", "cortex-m0plus", &[], Arch::V6M, false);
    assert_eq!(k.price_loop(&Model::new(Core::CortexM0Plus), "k_delay"), 302);
}

#[test]
fn flash_wait_states_add_to_fetches_and_refills() {
    // One fetch wait state on the code: k_delay's body is `subs` (16-bit, word aligned or not)
    // and `bne`; the refill after a taken branch grows by the wait state too.
    let k = assemble("armv7m.S", "cortex-m4", &[], Arch::V7EM, false);
    let zero = k.price_loop(&Model::new(Core::CortexM4), "k_delay");
    let params = Params {
        wait_states: vec![mcubench_timing::WaitStates { start: 0, end: 0x1000, fetch: 1, data: 0 }],
        ..Params::for_core(Core::CortexM4)
    };
    let slow = k.price_loop(&Model::with_params(Core::CortexM4, params), "k_delay");
    assert!(slow > zero, "{slow} vs {zero}");
}

/// Cortex-M7 (approximate, sim/timing/src/m7.rs) on the ARMv7-M kernels, derived by hand from
/// its rules: k_delay: `subs; bne` dual issue and the predicted loop branch costs nothing more:
/// 1 + 100×1 + `bx lr` 2 = 103. k_loads: two loads to different banks ([r2], [r2,#4]) pair, the
/// third issues with `subs` beside it, `bne` alone: 3 a body, setup `mov; movs` paired 1:
/// 1 + 300 + 2 = 303. k_ldm: LDM/STM of 4 registers take 2 each and pair with nothing, `subs;
/// bne` pair: 5 a body: 1 + 500 + 2 = 503. k_mac: MLA chained on the accumulator issue every
/// cycle but never pair with each other or with `umlal` (4 + 1), `subs` pairs with `umlal`,
/// `bne` alone: 6 a body; setup `mov.w; movs` pair, `movs` 1: 2 + 600 + 2 = 604.
#[rstest::rstest]
#[case("k_delay", 103)]
#[case("k_loads", 303)]
#[case("k_ldm", 503)]
#[case("k_mac", 604)]
fn cortex_m7_kernels_match_its_rules(#[case] kernel: &str, #[case] m7: u64) {
    let k = assemble("armv7m.S", "cortex-m7", &[], Arch::V7EM, false);
    assert_eq!(k.price_loop(&Model::new(Core::CortexM7), kernel), m7, "{kernel} on Cortex-M7");
}

/// The Cortex-M7 kernels (kernels/armv7em-m7.S), one rule each, with the totals derived by hand
/// in the file's comments from the rules' sources (which are measured and which inferred is
/// said there): early-ALU forwarding within a pair (k7_pair) against a late-ALU producer
/// (k7_late), bank-paired loads (k7_loads), byte-load latency (k7_ldb), MAC chaining and
/// multiply latency (k7_mac), the one-shifter rule and early shifted operands (k7_shift),
/// bitfield ops as older op only and their late address use (k7_bitfield), store pairing and
/// byte-store throughput (k7_stores), plain extends beside shifted operands and shifts (k7_extend).
#[rstest::rstest]
#[case("k7_pair", 203)]
#[case("k7_late", 303)]
#[case("k7_loads", 303)]
#[case("k7_ldb", 403)]
#[case("k7_mac", 503)]
#[case("k7_shift", 503)]
#[case("k7_bitfield", 504)]
#[case("k7_stores", 603)]
#[case("k7_extend", 504)]
#[case("k7_early", 403)]
fn cortex_m7_kernels_match_the_measurements(#[case] kernel: &str, #[case] m7: u64) {
    let k = assemble("armv7em-m7.S", "cortex-m7", &[], Arch::V7EM, false);
    assert_eq!(k.price_loop(&Model::new(Core::CortexM7), kernel), m7, "{kernel} on Cortex-M7");
}

/// Branch refill by where the target is issued, and late store bases (kernels/armv7m-refill.S):
/// execute-time branches (BX Rm, CBZ, BX LR after LR is written, POP {pc}) pay P = 2, decode-time
/// ones (B, Bcc, BL, BX LR) P = 1 (Cortex-M3 TRM Table 15-3); a store whose base a load/store just
/// wrote pays 1, and on the M3 a pre-indexed store after a load (jnk0le cortex_m3m4.md).
#[rstest::rstest]
#[case(Core::CortexM4, 605, 604, 2110, 1304)]
#[case(Core::CortexM3, 605, 604, 2110, 1404)]
fn branch_refill_and_store_base_kernels(
    #[case] core: Core,
    #[case] bxr: u64,
    #[case] cbz: u64,
    #[case] call: u64,
    #[case] strwb: u64,
) {
    let (cpu, arch) = if core == Core::CortexM3 { ("cortex-m3", Arch::V7M) } else { ("cortex-m4", Arch::V7EM) };
    let k = assemble("armv7m-refill.S", cpu, &[], arch, false);
    let m = Model::new(core);
    assert_eq!(k.price(&m, "k_bxr", &[("k_bxr_loop", "k_bxr_next"), ("k_bxr_next", "k_bxr_exit")]), bxr, "k_bxr");
    // k_cbz: the CBZ block ends in a taken conditional branch, so its taken extra is added here
    // (Kernels::price counts it only for the last block): setup + 100 × (cbz taken) + the
    // subs/bne block 99 times taken, once not, entered by the CBZ's branch + exit.
    let setup = k.block(&m, "k_cbz", "k_cbz_loop").fall_through;
    let cbz_block = k.block(&m, "k_cbz_loop", "k_cbz_skip");
    let tail = k.block(&m, "k_cbz_next", "k_cbz_exit");
    let exit = k.block(&m, "k_cbz_exit", "k_cbz_end").fall_through;
    let per = cbz_block.fall_through + cbz_block.taken_extra + tail.fall_through + tail.branch_entry;
    assert_eq!(setup + 100 * per + 99 * tail.taken_extra + exit, cbz, "k_cbz");
    let call_body = [
        ("k_call_loop", "k_call_ret"),
        ("k_call_leaf", "k_call_pop"),
        ("k_call_ret", "k_call_ret2"),
        ("k_call_pop", "k_call_leaf_end"),
        ("k_call_ret2", "k_call_exit"),
    ];
    assert_eq!(k.price(&m, "k_call", &call_body), call, "k_call");
    assert_eq!(k.price_loop(&m, "k_strwb"), strwb, "k_strwb");
}

/// Cortex-M33 VMOV between core and FP registers (kernels/armv8m-fp.S): 2 cycles to two core
/// registers, 1 the other way, and a one-register move's result waits a cycle.
#[test]
fn cortex_m33_fp_moves_match_the_measurements() {
    let k = assemble("armv8m-fp.S", "cortex-m33", &[], Arch::V8MMain, true);
    assert_eq!(k.price_loop(&Model::new(Core::CortexM33), "k33_vmov"), 901);
}
