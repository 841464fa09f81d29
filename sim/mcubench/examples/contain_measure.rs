//! Contained vs native runner on one ELF (mps2-an386), side by side in one invocation: wall time
//! per run, and how SysTick ticks and the plugin's results compare.
//! `cargo run --release -p mcubench --example contain_measure -- ELF [RUNS]`

use std::path::PathBuf;
use std::time::{Duration, Instant};

use mcubench::protocol::Transcript;
use mcubench::{Board, contain, qemu};

fn board() -> &'static Board {
    Board::find("mps2-an386").expect("known board")
}

fn main() {
    let mut args = std::env::args().skip(1);
    let elf = PathBuf::from(args.next().expect("usage: contain_measure ELF [RUNS] (an mps2-an386 ELF)"));
    let runs: usize = args.next().map_or(10, |v| v.parse().expect("RUNS is a number"));
    let timeout = Duration::from_secs(60);
    let ticks = |stdout: &str| Transcript::parse(stdout).unwrap().kats().map(|k| k.ticks).collect::<Vec<_>>();
    let started = Instant::now();
    let native = qemu::run(board(), &elf, timeout).unwrap();
    let reference = ticks(&native.stdout);
    let mut native_time = started.elapsed();
    let (mut contained_time, mut differing) = (Duration::ZERO, 0);
    for _ in 0..runs {
        let t = Instant::now();
        let run = contain::run_contained(board(), &elf, timeout).unwrap();
        contained_time += t.elapsed();
        let got = ticks(&run.stdout);
        if got != reference {
            differing += 1;
            let diff: Vec<_> = reference.iter().zip(&got).enumerate().filter(|(_, (a, b))| a != b).collect();
            println!("differs: {diff:?}");
        }
        let t = Instant::now();
        let again = qemu::run(board(), &elf, timeout).unwrap();
        native_time += t.elapsed();
        assert_eq!(ticks(&again.stdout), reference, "native runs differ");
    }
    // The plugin's exact counts (and cycle estimates) through both runners.
    let so = mcubench::plugin::locate().unwrap().expect("plugin");
    let image = mcubench_elf::ElfImage::read(&elf).unwrap();
    let markers = mcubench::plugin::Markers::find(&image).unwrap();
    let dir = tempfile::tempdir().unwrap();
    let results = |name: &str, contained: bool| {
        let out = dir.path().join(name);
        let core = Some(mcubench_timing::Core::CortexM4);
        let option = mcubench::plugin::plugin_option_with(&so, &out, markers.as_ref(), core, None);
        if contained {
            contain::run_contained_plugin(board(), &elf, timeout, Some(&option)).unwrap();
        } else {
            qemu::run_plugin(board(), &elf, timeout, Some(&option)).unwrap();
        }
        std::fs::read_to_string(&out).unwrap()
    };
    let native_results = results("native", false);
    for i in 0..3 {
        let got = results(&format!("contained-{i}"), true);
        let differing: Vec<_> = native_results.lines().zip(got.lines()).filter(|(a, b)| a != b).collect();
        println!(
            "plugin results: {} of {} lines differ: {differing:?}",
            differing.len(),
            native_results.lines().count()
        );
    }
    println!(
        "{} KATs; native {:?}/run, contained {:?}/run; {differing} of {runs} contained runs differ from native",
        reference.len(),
        native_time / (runs as u32 + 1),
        contained_time / runs as u32
    );
}
