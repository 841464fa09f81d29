//! Contained vs uncontained runner on one ELF (mps2-an386), interleaved in one invocation: wall
//! time per run, and whether the firmware's output and the plugin's results file (instruction and
//! cycle totals, regions) differ in any byte.
//! `cargo run --release -p mcubench --example contain_measure -- ELF [RUNS]`

use std::path::PathBuf;
use std::time::{Duration, Instant};

use mcubench::Board;
use mcubench::exec::{self, Launch};

fn board() -> &'static Board {
    Board::find("mps2-an386").expect("known board")
}

fn main() {
    let mut args = std::env::args().skip(1);
    let elf = PathBuf::from(args.next().expect("usage: contain_measure ELF [RUNS] (an mps2-an386 ELF)"));
    let runs: u32 = args.next().map_or(10, |v| v.parse().expect("RUNS is a number"));
    let timeout = Duration::from_secs(60);
    let so = mcubench::exec::plugin::locate().unwrap().expect("plugin");
    let image = mcubench_elf::ElfImage::read(&elf).unwrap();
    let markers = mcubench::exec::plugin::find_markers(&image).unwrap();
    let dir = tempfile::tempdir().unwrap();
    // One run: (stdout, plugin results, wall time).
    let once = |name: String, contained: bool| {
        let out = dir.path().join(name);
        let args =
            mcubench_wire::PluginArgs { markers, core: Some(board().core), ..mcubench_wire::PluginArgs::new(&out) };
        let option = args.to_option(&so);
        let started = Instant::now();
        let stdout = if contained {
            let run = exec::execute(&Launch::new(board(), &elf, timeout).with_plugin(Some(&option))).unwrap();
            assert!(run.events.is_empty(), "{:?}", run.events);
            run.run.stdout
        } else {
            exec::execute(&Launch::new(board(), &elf, timeout).with_plugin(Some(&option)).contained(false))
                .map(|e| e.run)
                .unwrap()
                .stdout
        };
        (stdout, std::fs::read_to_string(&out).unwrap(), started.elapsed())
    };
    let reference = once("reference".into(), false);
    let (mut native_time, mut contained_time, mut differing) = (Duration::ZERO, Duration::ZERO, 0);
    for i in 0..runs {
        let native = once(format!("native-{i}"), false);
        let contained = once(format!("contained-{i}"), true);
        native_time += native.2;
        contained_time += contained.2;
        assert_eq!((&native.0, &native.1), (&reference.0, &reference.1), "uncontained runs differ");
        if (&contained.0, &contained.1) != (&reference.0, &reference.1) {
            differing += 1;
        }
    }
    println!(
        "{} stdout bytes, {} results bytes; uncontained {:?}/run, contained {:?}/run ({:.2}x); \
         {differing} of {runs} contained runs differ from uncontained in any byte",
        reference.0.len(),
        reference.1.len(),
        native_time / runs,
        contained_time / runs,
        contained_time.as_secs_f64() / native_time.as_secs_f64(),
    );
}
