//! Runs do not interfere: eight scenario runs at once, on threads of one process, give reports
//! byte-identical to the same runs done one after another. The Rust KAT firmware wraps every
//! operation in region markers, so instruction counts and cycle estimates come from the QEMU
//! plugin and are exact (any cross-talk between runs, such as a shared plugin results file, would
//! show); every run has its own scenario file in its own directory.

// Full test tier: needs QEMU and/or the Arm GCC toolchain (bash ci/setup.sh).
#![cfg(feature = "full")]

mod common;

use std::path::Path;

use mcubench::{RunOptions, Scenario, run_scenario};

const RUNS: usize = 8;

/// The Rust KAT on `board` (mps2-an386 and mps2-an500 share one ELF but not their cycle model).
fn scenario(dir: &Path, board: &str) -> Scenario {
    let repo = common::repo();
    let path = dir.join("kat.yaml");
    let yaml = format!(
        "name: kat\nfirmware: {{ cargo: {}, vectors: {} }}\nboards: [{board}]\n\
         profiles: {{ speed: {{ opt-level: 3 }} }}\ntimeout: 60 s\n",
        repo.join("firmware/kat").display(),
        repo.join("firmware/kat/vectors").display()
    );
    std::fs::write(&path, yaml).unwrap();
    Scenario::load(&path).unwrap()
}

fn report(s: &Scenario) -> String {
    run_scenario(s, &RunOptions { jobs: 1, ..RunOptions::default() }).to_json()
}

#[test]
fn eight_runs_at_once_match_the_sequential_runs_byte_for_byte() {
    assert!(mcubench::exec::plugin::locate().unwrap().is_some(), "this test needs the plugin (exact counts)");
    // Two boards, alternating, so runs at the same time do different work.
    let names = ["mps2-an386", "mps2-an500"];
    let dirs: Vec<tempfile::TempDir> = (0..RUNS).map(|_| tempfile::tempdir().unwrap()).collect();
    let scenarios: Vec<Scenario> =
        dirs.iter().enumerate().map(|(i, d)| scenario(d.path(), names[i % names.len()])).collect();

    let sequential: Vec<String> = scenarios[..names.len()].iter().map(report).collect();
    for (name, json) in names.iter().zip(&sequential) {
        let v: serde_json::Value = serde_json::from_str(json).unwrap();
        let cell = &v["cells"][0];
        assert_eq!(cell["verdict"]["outcome"], "pass", "{name}: {json}");
        let kats = cell["kats"].as_array().unwrap();
        assert_eq!(kats.len(), 61, "{name}");
        assert!(kats.iter().all(|k| k["instructions_source"] == "plugin"), "{name}: counts must be exact: {json}");
    }

    let parallel: Vec<String> = std::thread::scope(|scope| {
        let handles: Vec<_> = scenarios.iter().map(|s| scope.spawn(move || report(s))).collect();
        handles.into_iter().map(|h| h.join().expect("no panic")).collect()
    });
    for (i, json) in parallel.iter().enumerate() {
        assert!(
            *json == sequential[i % names.len()],
            "run {i} ({}) differs from the sequential run",
            names[i % names.len()]
        );
    }
}
