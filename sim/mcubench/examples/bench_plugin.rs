//! Throughput of QEMU with and without the mcubench TCG plugin, on one long workload
//! (`firmware/bench`: SHA3-256 chained 40 000 times, about 1.3e9 guest instructions on mps2-an386).
//!
//! ```text
//! cargo run --release -p mcubench --example bench_plugin [-- RUNS]
//! ```
//!
//! Builds the firmware and the plugin, then runs QEMU RUNS times (default 3) each way (plugin off,
//! plugin counting instructions, plugin also estimating cycles with the board's core model (with
//! the exception handlers of the ELF's vector table, as `mcubench run` gives them), that
//! plus the stack probe: a memory callback on every store, and cycles with the STM32F407 board
//! timing profile's memory system: flash lines, prefetch and ART caches per TB, and a memory
//! callback on every load for the data side), alternating, and prints the best
//! wall time, guest instructions per second and the ratios; then the same ratios from QEMU's CPU
//! time (user + system, best of the runs), which other work on a shared machine disturbs less.
//! Wall time is the whole QEMU process (start-up included, ~50 ms). Instructions: the plugin's
//! exact count of the chained-hash region; without the plugin, SysTick ticks × 40.
//! `MCUBENCH_QEMU` picks the QEMU (and so the plugin build). Not a test: timings depend on the
//! machine.

use std::time::{Duration, Instant};

use mcubench::build::{self, CargoFirmware};
use mcubench::exec::plugin;
use mcubench::exec::qemu::ProcessEnd;
use mcubench::exec::{self, Launch};
use mcubench::judge::protocol::Transcript;
use mcubench::{Board, Scenario};
use mcubench_elf::ElfImage;
use mcubench_wire::PluginArgs;

fn main() {
    let runs: usize = std::env::args().nth(1).map_or(3, |a| a.parse().expect("RUNS is a number"));
    let repo = std::path::Path::new(env!("CARGO_MANIFEST_DIR")).join("../..").canonicalize().unwrap();
    let scenario = Scenario::from_yaml(
        &repo.join("scenarios/bench.yaml"),
        "name: bench\nfirmware: { cargo: ../firmware/bench }\nboards: [mps2-an386]\nprofiles: { speed: { opt-level: 3 } }\n",
    )
    .unwrap();
    let board: &Board = scenario.boards[0];
    let profile = &scenario.profiles[0];
    let mcubench::config::scenario::Firmware::Cargo { package_dir, bin, features } = &scenario.firmware else {
        unreachable!()
    };
    eprintln!("building firmware/bench for {} and the plugin ...", board.name);
    let root = build::target_directory(package_dir).unwrap();
    let elf = build::build(&CargoFirmware { package_dir, bin, features }, &root, board, profile).unwrap();
    let so = plugin::locate().unwrap().expect("this benchmark needs the plugin: unset MCUBENCH_QEMU_PLUGIN");
    let markers = plugin::find_markers(&ElfImage::read(&elf).unwrap()).unwrap().expect("firmware/bench has markers");
    let out = std::env::temp_dir().join(format!("mcubench-bench-plugin-{}.txt", std::process::id()));
    let image = ElfImage::read(&elf).unwrap();
    let probe = plugin::stack_probe_range(&image).expect("a stack region");
    let counting = PluginArgs { markers: Some(markers), ..PluginArgs::new(&out) };
    // With the vector table's handlers, as `mcubench run` prices every run (exception costs).
    let handlers = plugin::exception_handlers(&image);
    let estimating = PluginArgs { core: Some(board.core), handlers, ..counting.clone() };
    let probing = PluginArgs { stack_probe: Some(probe.clone()), ..estimating.clone() };
    let profile = mcubench::config::timing::TimingProfile::find("stm32f407").expect("built-in profile");
    let model = mcubench::config::timing::CycleModel::resolve(board, Some(profile), &Default::default()).unwrap();
    let memory = PluginArgs { memory: model.memory.clone(), params: model.param_args(), ..estimating.clone() };
    let [counts_only, with_cycles, with_probe, with_memory] =
        [counting, estimating, probing, memory].map(|args| args.to_option(&so));
    let modes: [Option<&str>; 5] =
        [None, Some(&counts_only), Some(&with_cycles), Some(&with_probe), Some(&with_memory)];

    let timeout = Duration::from_secs(120);
    let mut best = [Duration::MAX; 5];
    let mut best_cpu = [Duration::MAX; 5];
    let mut insns = [0u64; 5];
    let mut memory_cycles = 0;
    let mut probe_low = None;
    let mut cycles = 0;
    for _ in 0..runs {
        for (i, option) in modes.into_iter().enumerate() {
            let with = option.is_some();
            let _ = std::fs::remove_file(&out);
            let cpu_before = children_cpu();
            let start = Instant::now();
            let run = exec::execute(&Launch::new(board, &elf, timeout).with_plugin(option).contained(false))
                .map(|e| e.run)
                .unwrap();
            let wall = start.elapsed();
            assert_eq!(run.end, ProcessEnd::Exited(0), "{}\n{}", run.command, run.stderr);
            let t = Transcript::parse(&run.stdout).unwrap();
            let kat = t.kats().find(|k| k.id == "bench/sha3-256-chain").expect("bench record");
            let n = if with {
                let r = plugin::read_results(&out).unwrap();
                if i == 2 {
                    cycles = r.single_activation_cycles(kat.region.expect("region")).unwrap().expect("cycles");
                }
                if i == 3 {
                    probe_low = r.probe.flatten();
                }
                if i == 4 {
                    memory_cycles = r.single_activation_cycles(kat.region.expect("region")).unwrap().expect("cycles");
                }
                r.single_activation(kat.region.expect("region")).unwrap()
            } else {
                board.ticks_to_instructions(kat.ticks)
            };
            insns[i] = n;
            best[i] = best[i].min(wall);
            best_cpu[i] = best_cpu[i].min(children_cpu().saturating_sub(cpu_before));
        }
    }
    let _ = std::fs::remove_file(&out);
    let rate = |i: usize| insns[i] as f64 / best[i].as_secs_f64();
    println!("workload: firmware/bench on {} ({} runs each, best wall time)", board.name, runs);
    println!(
        "plugin off: {:>13} instructions (SysTick) in {:>8.3} s = {:.3} G instr/s",
        insns[0],
        best[0].as_secs_f64(),
        rate(0) / 1e9
    );
    println!(
        "plugin on:  {:>13} instructions (exact)   in {:>8.3} s = {:.3} G instr/s",
        insns[1],
        best[1].as_secs_f64(),
        rate(1) / 1e9
    );
    println!(
        "plugin on + cycles: {:>6} instructions (exact)   in {:>8.3} s = {:.3} G instr/s ({cycles} est. cycles)",
        insns[2],
        best[2].as_secs_f64(),
        rate(2) / 1e9
    );
    println!(
        "plugin on + cycles + stack probe: {:>6} instructions in {:>8.3} s = {:.3} G instr/s ({} B of stack written)",
        insns[3],
        best[3].as_secs_f64(),
        rate(3) / 1e9,
        probe_low.map_or(0, |l| probe.hi - l)
    );
    println!(
        "plugin on + cycles + stm32f407 memory system: {:>6} instructions in {:>8.3} s = {:.3} G instr/s ({memory_cycles} est. cycles at 5 WS with the ART)",
        insns[4],
        best[4].as_secs_f64(),
        rate(4) / 1e9
    );
    println!("ratio on/off: {:.1} %", 100.0 * rate(1) / rate(0));
    println!("ratio on+cycles/off: {:.1} %", 100.0 * rate(2) / rate(0));
    println!("ratio on+cycles+probe/off: {:.1} %", 100.0 * rate(3) / rate(0));
    println!("ratio on+cycles+probe/on+cycles: {:.1} %", 100.0 * rate(3) / rate(2));
    println!("ratio on+cycles+memory/off: {:.1} %", 100.0 * rate(4) / rate(0));
    println!("ratio on+cycles+memory/on+cycles (the cache model's cost): {:.1} %", 100.0 * rate(4) / rate(2));
    let cpu_rate = |i: usize| insns[i] as f64 / best_cpu[i].as_secs_f64();
    println!(
        "QEMU CPU time: off {:.3} s, on {:.3} s, on+cycles {:.3} s, on+cycles+probe {:.3} s, on+cycles+memory {:.3} s",
        best_cpu[0].as_secs_f64(),
        best_cpu[1].as_secs_f64(),
        best_cpu[2].as_secs_f64(),
        best_cpu[3].as_secs_f64(),
        best_cpu[4].as_secs_f64()
    );
    println!("CPU ratio on/off: {:.1} %", 100.0 * cpu_rate(1) / cpu_rate(0));
    println!("CPU ratio on+cycles/off: {:.1} %", 100.0 * cpu_rate(2) / cpu_rate(0));
    println!("CPU ratio on+cycles+probe/off: {:.1} %", 100.0 * cpu_rate(3) / cpu_rate(0));
    println!("CPU ratio on+cycles+memory/off: {:.1} %", 100.0 * cpu_rate(4) / cpu_rate(0));
    println!("CPU ratio on+cycles+memory/on+cycles: {:.1} %", 100.0 * cpu_rate(4) / cpu_rate(2));
}

/// User + system CPU time of this process's waited-for children so far.
fn children_cpu() -> Duration {
    // SAFETY: getrusage fills the struct it is given.
    let mut usage: libc::rusage = unsafe { std::mem::zeroed() };
    unsafe { libc::getrusage(libc::RUSAGE_CHILDREN, &mut usage) };
    let tv = |t: libc::timeval| Duration::new(t.tv_sec as u64, t.tv_usec as u32 * 1000);
    tv(usage.ru_utime) + tv(usage.ru_stime)
}
