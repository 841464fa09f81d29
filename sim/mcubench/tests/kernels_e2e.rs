//! End to end: the timing microbenchmark kernels of `sim/timing/kernels` run under QEMU with the
//! plugin (`firmware/c/kernels`: each kernel once, inside its own region markers), and each
//! region's estimated cycles, minus the constant marker overhead, equal the TRM-derived totals in
//! the kernels' comments exactly.
//!
//! The marker overhead is *measured*: region 0 runs `k_empty` (a lone `bx lr`), so
//! `overhead = cycles(region 0) - price(bx lr)`, where `price(bx lr)` is the model's cost of that
//! one instruction (1 + P: 2 on the M3/M4, 3 on the M0). Each kernel's total includes its own final
//! `bx lr`, so `expected = cycles(region k) - overhead`. (The overhead is the tail of
//! `mcubench_region_enter` after its store, `blx r8` in `mb_run_kernel`
//! (`firmware/c/kernels/harness.S`), `mov r0, r7; bl mcubench_region_exit` and that function up to
//! its store: 14 cycles on the M3/M4, 19 on the M0.) Determinism: repeated and parallel runs give
//! the same cycles.

mod common;

use std::path::Path;
use std::time::Duration;

use mcubench::Board;
use mcubench::plugin::{self, Markers, PluginResults};
use mcubench::qemu::{self, ProcessEnd};
use mcubench_elf::ElfImage;
use mcubench_thumb::{Arch, Decoder};
use mcubench_timing::{Core, Model};

/// Runs `elf` on `board` with cycle estimates and returns the results file.
fn run(elf: &Path, board: &Board) -> PluginResults {
    let so = plugin::locate().unwrap().expect("plugin enabled");
    let markers = Markers::find(&ElfImage::read(elf).unwrap()).unwrap().expect("kernel firmware has markers");
    let dir = tempfile::tempdir().unwrap();
    let out = dir.path().join("results");
    let option = plugin::plugin_option_with(&so, &out, Some(&markers), Some(plugin::timing_core(board)), None);
    let run = qemu::run_plugin(board, elf, Duration::from_secs(20), Some(&option)).unwrap();
    assert_eq!(run.end, ProcessEnd::Exited(0), "{}\n{}\n{}", run.command, run.stdout, run.stderr);
    PluginResults::read(&out).unwrap()
}

/// The model's price of one `bx lr` (0x4770).
fn bx_lr(core: Core) -> u64 {
    let arch = if matches!(core, Core::CortexM0 | Core::CortexM0Plus) { Arch::V6M } else { Arch::V7EM };
    let insn = Decoder::new(arch, false).unwrap().decode(0x100, &0x4770u16.to_le_bytes()).unwrap();
    Model::new(core).block(&[insn]).fall_through
}

/// Region cycles of each kernel (index = region id), the measured overhead subtracted.
fn kernel_cycles(elf: &str, board: &str) -> (u64, Vec<u64>) {
    let board = Board::find(board).unwrap();
    let r = run(&common::c_firmware(elf), board);
    assert!(r.errors.is_empty() && r.open.is_empty(), "{r:?}");
    assert!(matches!(r.cycles, Some(Ok(_))), "cycles unavailable: {:?}", r.cycles);
    let core = plugin::timing_core(board);
    let cycles = |id: u32| r.single_activation_cycles(id).unwrap().expect("cycles");
    let overhead = cycles(0) - bx_lr(core);
    let n = r.regions.len() as u32;
    (overhead, (1..n).map(|id| cycles(id) - overhead).collect())
}

fn check(elf: &str, board: &str, names: &[&str], expected: &[u64]) {
    let (overhead, got) = kernel_cycles(elf, board);
    eprintln!("{board} {elf}: marker overhead {overhead} cycles");
    let mut bad = Vec::new();
    for ((name, want), got) in names.iter().zip(expected).zip(&got) {
        eprintln!("  {name}: expected {want}, got {got}");
        if want != got {
            bad.push(format!("{name}: expected {want}, got {got}"));
        }
    }
    assert_eq!(got.len(), expected.len(), "one region per kernel");
    assert!(bad.is_empty(), "{board} {elf}: {}", bad.join("; "));
}

const ARMV7M: [&str; 7] = ["k_delay", "k_loads", "k_chase", "k_ldm", "k_branch", "k_mac", "k_tbb"];

#[test]
fn armv7m_kernels_on_the_cortex_m4() {
    check("kernels-armv7m", "mps2-an386", &ARMV7M, &[302, 703, 704, 1303, 503, 804, 603]);
}

#[test]
fn armv7m_kernels_on_the_cortex_m3() {
    check("kernels-armv7m", "mps2-an385", &ARMV7M, &[302, 703, 704, 1303, 503, 1704, 603]);
}

#[test]
fn fpu_and_dsp_kernels_on_the_cortex_m4f() {
    check("kernels-armv7em-fp", "mps2-an386", &["k_fmac", "k_fdiv", "k_dsp"], &[1702, 3302, 702]);
}

#[test]
fn armv6m_kernels_on_the_cortex_m0() {
    check("kernels-armv6m", "microbit", &["k_delay", "k_loads", "k_ldm", "k_mul"], &[402, 1003, 1403, 803]);
}

#[test]
fn kernel_cycles_are_deterministic() {
    let reference = kernel_cycles("kernels-armv7m", "mps2-an386");
    let parallel: Vec<_> = std::thread::scope(|s| {
        let h: Vec<_> = (0..4).map(|_| s.spawn(|| kernel_cycles("kernels-armv7m", "mps2-an386"))).collect();
        h.into_iter().map(|h| h.join().unwrap()).collect()
    });
    assert!(parallel.iter().all(|p| *p == reference), "{reference:?} vs {parallel:?}");
}
