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

    /// setup + 99 taken bodies + 1 not-taken body + exit.
    fn price(&self, model: &Model, k: &str, body: &[(&str, &str)]) -> u64 {
        let setup = self.block(model, k, &format!("{k}_loop"));
        let mut taken = 0;
        let mut not_taken = 0;
        for (i, (from, to)) in body.iter().enumerate() {
            let b = self.block(model, from, to);
            let last = i + 1 == body.len();
            // Inner blocks of the body end in taken branches (TBB, B) priced in fall_through.
            taken += b.fall_through + if last { b.taken_extra } else { 0 };
            not_taken += b.fall_through;
        }
        let exit = self.block(model, &format!("{k}_exit"), &format!("{k}_end"));
        setup.fall_through + 99 * taken + not_taken + exit.fall_through
    }

    fn price_loop(&self, model: &Model, k: &str) -> u64 {
        self.price(model, k, &[(&format!("{k}_loop"), &format!("{k}_exit"))])
    }
}

#[rstest::rstest]
#[case("k_delay", 302, 302)]
#[case("k_loads", 703, 703)]
#[case("k_chase", 704, 704)]
#[case("k_ldm", 1303, 1303)]
#[case("k_branch", 503, 503)]
#[case("k_mac", 804, 1704)]
fn armv7m_kernels_match_the_trm(#[case] kernel: &str, #[case] m4: u64, #[case] m3: u64) {
    let k = assemble("armv7m.S", "cortex-m4", &[], Arch::V7EM, false);
    assert_eq!(k.price_loop(&Model::new(Core::CortexM4), kernel), m4, "{kernel} on Cortex-M4");
    assert_eq!(k.price_loop(&Model::new(Core::CortexM33), kernel), m4, "{kernel} on Cortex-M33 (M4 rules)");
    let k3 = assemble("armv7m.S", "cortex-m3", &[], Arch::V7M, false);
    assert_eq!(k3.price_loop(&Model::new(Core::CortexM3), kernel), m3, "{kernel} on Cortex-M3");
}

#[test]
fn tbb_switch_matches_the_trm() {
    let k = assemble("armv7m.S", "cortex-m4", &[], Arch::V7EM, false);
    for core in [Core::CortexM3, Core::CortexM4] {
        let body = [("k_tbb_loop", "k_tbb_table"), ("k_tbb_case", "k_tbb_exit")];
        assert_eq!(k.price(&Model::new(core), "k_tbb", &body), 603, "{core:?}");
    }
}

#[rstest::rstest]
#[case("k_fmac", 1702)]
#[case("k_fdiv", 3302)]
#[case("k_dsp", 702)]
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
