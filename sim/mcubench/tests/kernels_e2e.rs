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

// Full test tier: needs QEMU and/or the Arm GCC toolchain (bash ci/setup.sh).
#![cfg(feature = "full")]

mod common;

use std::path::Path;
use std::time::Duration;

use mcubench::Board;
use mcubench::exec::plugin;
use mcubench::exec::qemu::ProcessEnd;
use mcubench::exec::{self, Launch};
use mcubench_elf::ElfImage;
use mcubench_thumb::{Arch, Decoder};
use mcubench_timing::{Core, Model};
use mcubench_wire::{PluginArgs, Results};

/// Runs `elf` on `board` with cycle estimates and returns the results file.
fn run(elf: &Path, board: &Board) -> Results {
    let so = plugin::locate().unwrap().expect("plugin enabled");
    let image = ElfImage::read(elf).unwrap();
    let markers = plugin::find_markers(&image).unwrap().expect("kernel firmware has markers");
    let dir = tempfile::tempdir().unwrap();
    let out = dir.path().join("results");
    // The vector table's handlers, so exceptions are priced (k_svc).
    let handlers = plugin::exception_handlers(&image);
    assert!(!handlers.is_empty(), "the kernel firmware has a vector table");
    let args = PluginArgs { markers: Some(markers), core: Some(board.core), handlers, ..PluginArgs::new(&out) };
    let option = args.to_option(&so);
    let run =
        exec::execute(&Launch::new(board, elf, Duration::from_secs(20)).with_plugin(Some(&option)).contained(false))
            .map(|e| e.run)
            .unwrap();
    assert_eq!(run.end, ProcessEnd::Exited(0), "{}\n{}\n{}", run.command, run.stdout, run.stderr);
    plugin::read_results(&out).unwrap()
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
    assert!(r.cycle_total().is_some(), "cycles unavailable: {:?}", r.cycles);
    let core = board.core;
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

/// `k_svc` (firmware/c/kernels/harness.S) takes an SVCall exception inside its region: svc 2 +
/// entry 12 + handler `bx lr` 2 + exit 10 + `bx lr` 2 = 28 on the M3/M4; on the M0 svc 4 +
/// entry 16 + 3 + exit 11 + 3 = 37.
/// k_wide, k_wide_aligned and k_stld are the fetch-alignment and store-then-load rules
/// (sim/timing/kernels/armv7m.S): a loop of three straddling 32-bit instructions entered by a
/// branch to a straddling target (802) vs the same loop word aligned (603); k_wide_load a
/// straddling load followed by three straddling adds, which pays the run's cycle and the load's
/// (1103); k_ldr_straddle a straddling `ldr.w` that does not pipeline behind the load before it
/// (703) vs the same pair with the `ldr.w` word aligned (604). k_bxr, k_cbz, k_call and k_strwb
/// (sim/timing/kernels/armv7m-refill.S) are the refill of execute-time branches
/// (P = 2: BX Rm, CBZ, BX LR after LR is written, POP {pc}) and the late store bases; k_spec the
/// fetch slot a not-taken conditional branch loses to its speculative target fetch (which also
/// makes the 32-bit `bne.w` closing most kernels cost 2 when not taken).
const ARMV7M: [&str; 19] = [
    "k_delay",
    "k_loads",
    "k_chase",
    "k_ldm",
    "k_branch",
    "k_mac",
    "k_tbb",
    "k_svc",
    "k_wide",
    "k_wide_aligned",
    "k_stld",
    "k_bxr",
    "k_cbz",
    "k_call",
    "k_strwb",
    "k_spec",
    "k_wide_load",
    "k_ldr_straddle",
    "k_ldr_aligned",
];

#[test]
fn armv7m_kernels_on_the_cortex_m4() {
    check(
        "kernels-armv7m",
        "mps2-an386",
        &ARMV7M,
        &[303, 703, 704, 1303, 603, 805, 904, 28, 802, 603, 703, 605, 604, 2110, 1304, 903, 1103, 703, 604],
    );
}

#[test]
fn armv7m_kernels_on_the_cortex_m3() {
    check(
        "kernels-armv7m",
        "mps2-an385",
        &ARMV7M,
        &[303, 703, 704, 1303, 603, 1704, 904, 28, 802, 603, 703, 605, 604, 2110, 1404, 903, 1103, 703, 604],
    );
}

#[test]
fn fpu_and_dsp_kernels_on_the_cortex_m4f() {
    check("kernels-armv7em-fp", "mps2-an386", &["k_fmac", "k_fdiv", "k_dsp"], &[1702, 3302, 703]);
}

/// The Cortex-M33 pipeline kernels (sim/timing/kernels/armv8m.S, built for mps2-an505): dual
/// issue of a 16-bit branch, 1-cycle loads with a load-to-use stall, `muls`, MAC chaining; k_svc
/// with the M33's exception costs (as the M4's: 28); late flags of a shifted-register `subs.w`;
/// an extend's rotation is not a shifted register (k33_extend); a loaded branch target waits two
/// cycles (k33_return, k33_bxlr: calls returning with `pop {pc}` or `pop {lr}; …; bx lr`).
#[test]
fn armv8m_kernels_on_the_cortex_m33() {
    check(
        "kernels-armv8m",
        "mps2-an505",
        &["k33_pair", "k33_loads", "k33_mul", "k_svc", "k33_flags", "k33_extend", "k33_return", "k33_bxlr"],
        &[302, 802, 1003, 28, 403, 804, 1506, 1306],
    );
}

/// The Cortex-M7 kernels (sim/timing/kernels/armv7em-m7.S, built for mps2-an500, QEMU's Cortex-M7
/// board): dual issue with early-ALU forwarding, load/byte-load/MAC latencies, the shifter and
/// bitfield rules, store pairing; and k_svc with the M7's costs: `svc` 1 (a single-issue system
/// instruction) + entry 12 + `bx lr` 2 + exit 10 + `bx lr` 2 = 27; plain extends (k7_extend).
/// Each is the kernel's static total (every branch predicted) plus what the run-time branch
/// predictor adds: each loop runs once from cold, so its closing `bne.w` is mispredicted twice
/// (the first taken back-edge, not yet seen; the exit), 8 cycles each after `subs` (+16), 6 each
/// in k7_early, whose `subs` is seven slots before the branch (+12).
#[test]
fn armv7em_kernels_on_the_cortex_m7() {
    check(
        "kernels-armv7em-m7",
        "mps2-an500",
        &[
            "k7_pair",
            "k7_late",
            "k7_loads",
            "k7_ldb",
            "k7_mac",
            "k7_shift",
            "k7_bitfield",
            "k7_stores",
            "k_svc",
            "k7_extend",
            "k7_early",
        ],
        &[219, 319, 319, 419, 519, 519, 520, 619, 27, 520, 415],
    );
}

#[test]
fn armv6m_kernels_on_the_cortex_m0() {
    check(
        "kernels-armv6m",
        "microbit",
        &["k_delay", "k_loads", "k_ldm", "k_mul", "k_svc"],
        &[402, 1003, 1403, 803, 37],
    );
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

/// Function regions on the kernels themselves (`regions: [k_delay, ...]`): no marker overhead, so
/// each call's cycles must equal the static price of the path the kernel runs (setup, 99 taken
/// loop bodies, one not taken, exit), priced by `Model` from the ELF's bytes with the same wait
/// states. At zero wait states that is the TRM total; with one flash fetch wait state it is
/// larger, and still exact and deterministic. `k_empty` (a lone `bx lr`) counts 1 instruction.
mod function_regions {
    use super::*;
    use mcubench_timing::{Params, WaitStates};

    /// (kernel, loop body blocks as (from, to) labels; empty: `K_loop`..`K_exit`)
    const KERNELS: [(&str, &[(&str, &str)]); 13] = [
        ("k_delay", &[]),
        ("k_loads", &[]),
        ("k_chase", &[]),
        ("k_ldm", &[]),
        ("k_branch", &[]),
        ("k_mac", &[]),
        ("k_tbb", &[("k_tbb_loop", "k_tbb_table"), ("k_tbb_case", "k_tbb_exit")]),
        ("k_wide", &[]),
        ("k_wide_aligned", &[]),
        ("k_stld", &[]),
        ("k_wide_load", &[]),
        ("k_ldr_straddle", &[]),
        ("k_ldr_aligned", &[]),
    ];

    fn run_functions(elf: &Path, board: &Board, names: &[&str], ws: &[WaitStates]) -> Results {
        let so = plugin::locate().unwrap().expect("plugin enabled");
        let image = ElfImage::read(elf).unwrap();
        let table = plugin::function_table(&image);
        let names: Vec<String> = names.iter().map(|s| s.to_string()).collect();
        let regions = plugin::resolve_regions(&table, &names, "kernels").unwrap();
        let dir = tempfile::tempdir().unwrap();
        let functions = dir.path().join("functions");
        std::fs::write(&functions, plugin::functions_file(&table, &regions)).unwrap();
        let out = dir.path().join("results");
        let args = PluginArgs {
            core: Some(board.core),
            functions: Some(functions),
            wait_states: ws.to_vec(),
            ..PluginArgs::new(&out)
        };
        let option = args.to_option(&so);
        let run = exec::execute(
            &Launch::new(board, elf, Duration::from_secs(20)).with_plugin(Some(&option)).contained(false),
        )
        .map(|e| e.run)
        .unwrap();
        assert_eq!(run.end, ProcessEnd::Exited(0), "{}\n{}", run.command, run.stderr);
        plugin::read_results(&out).unwrap()
    }

    /// The static price of kernel `k` in `image` with `model` (as in sim/timing/tests/kernels.rs).
    fn static_price(image: &ElfImage, model: &Model, k: &str, body: &[(&str, &str)]) -> u64 {
        let decoder = Decoder::new(Arch::V7EM, true).unwrap();
        let addr = |name: &str| image.symbol(name).unwrap_or_else(|| panic!("no symbol {name}")).address;
        let block = |from: &str, to: &str| {
            let (a, b) = (addr(from), addr(to));
            let (insns, err) = decoder.decode_block(a as u32, image.bytes_at(a, b - a).unwrap());
            assert!(err.is_none(), "{from}: {err:?}");
            model.block(&insns)
        };
        let default_body = [(format!("{k}_loop"), format!("{k}_exit"))];
        let body: Vec<(String, String)> = if body.is_empty() {
            default_body.to_vec()
        } else {
            body.iter().map(|(a, b)| (a.to_string(), b.to_string())).collect()
        };
        let (mut taken, mut not_taken) = (0, 0);
        for (i, (from, to)) in body.iter().enumerate() {
            let b = block(from, to);
            // The first body block is entered by the loop branch 99 times, inner ones every time.
            taken += b.fall_through + b.branch_entry + if i + 1 == body.len() { b.taken_extra } else { 0 };
            not_taken += b.fall_through + if i > 0 { b.branch_entry } else { 0 };
        }
        let setup = block(k, &format!("{k}_loop"));
        let exit = block(&format!("{k}_exit"), &format!("{k}_end"));
        setup.fall_through + 99 * taken + not_taken + exit.fall_through
    }

    fn cycles_per_kernel(ws: &[WaitStates]) -> Vec<u64> {
        let board = Board::find("mps2-an386").unwrap();
        let elf = common::c_firmware("kernels-armv7m");
        let mut names = vec!["k_empty"];
        names.extend(KERNELS.iter().map(|k| k.0));
        let r = run_functions(&elf, board, &names, ws);
        assert!(r.cycle_total().is_some(), "{:?}", r.cycles);
        let empty = &r.functions[&0];
        assert_eq!(
            (empty.completed, empty.total, empty.cycles.unwrap().0),
            (1, 1, bx_lr(Core::CortexM4) + ws_fetch(ws))
        );
        (1..names.len() as u32)
            .map(|id| {
                let s = &r.functions[&id];
                assert_eq!((s.entries, s.completed), (1, 1), "{}", names[id as usize]);
                s.cycles.unwrap().0
            })
            .collect()
    }

    /// `bx lr` at k_empty pays the fetch wait state (k_empty is word aligned) and the refill's.
    fn ws_fetch(ws: &[WaitStates]) -> u64 {
        ws.first().map_or(0, |w| 2 * u64::from(w.fetch))
    }

    #[test]
    fn kernel_calls_cost_their_trm_totals_and_the_static_price_with_wait_states() {
        let zero = cycles_per_kernel(&[]);
        assert_eq!(
            zero,
            [303, 703, 704, 1303, 603, 805, 904, 802, 603, 703, 1103, 703, 604],
            "TRM totals at 0 WS, no marker overhead"
        );
        let ws = [WaitStates { start: 0, end: 0x40_0000, fetch: 1, data: 0 }];
        let slow = cycles_per_kernel(&ws);
        let image = ElfImage::read(&common::c_firmware("kernels-armv7m")).unwrap();
        let model =
            Model::with_params(Core::CortexM4, Params { wait_states: ws.to_vec(), ..Params::for_core(Core::CortexM4) });
        for (i, (k, body)) in KERNELS.iter().enumerate() {
            let expected = static_price(&image, &model, k, body);
            eprintln!("{k}: 0 WS {}, 1 fetch WS {} (static price {expected})", zero[i], slow[i]);
            assert!(slow[i] > zero[i], "{k}: a wait state costs cycles");
            assert_eq!(slow[i], expected, "{k}: plugin with 1 fetch WS vs the static price");
        }
        assert_eq!(cycles_per_kernel(&ws), slow, "deterministic");
    }

    #[test]
    fn the_cycle_model_says_custom_wait_states() {
        let board = Board::find("mps2-an386").unwrap();
        let ws = [WaitStates { start: 0, end: 0x40_0000, fetch: 1, data: 1 }];
        let r = run_functions(&common::c_firmware("kernels-armv7m"), board, &["k_delay"], &ws);
        assert!(r.cycles.as_ref().is_some_and(|c| c.model.contains("custom WS")), "{:?}", r.cycles);
    }
}
