//! Inputs the fuzzers (sim/fuzz) found crashing, replayed through the fuzz target's own function
//! (`mcubench::fuzzing`) so a regression fails the normal test suite. One file per finding in tests/data/fuzz-elf.
//!
//! - `sp-offset-overflow.elf`: garbage code whose SP adjustments summed past i32 made the stack
//!   analysis overflow (debug builds panic); SP arithmetic is now checked and fails closed.
//! - `stray-data-symbol.elf`: a `$d` mapping symbol placed past the end of its own section, inside
//!   another code section, gave an inverted data range at which the stack analysis' decoder loop
//!   stopped advancing (the `elf` fuzzer hung on such an input; this file is its hand-made
//!   equivalent, built with arm-none-eabi-as/ld/objcopy). Data ranges are now only real ones,
//!   addresses saturate instead of wrapping, and the loop always advances.

use std::path::Path;
use std::sync::mpsc;
use std::time::Duration;

/// Far above what any of these takes (milliseconds): a hang fails the test instead of the run.
const DEADLINE: Duration = Duration::from_secs(30);

#[test]
fn fuzzer_findings_neither_panic_nor_hang() {
    let dir = Path::new(env!("CARGO_MANIFEST_DIR")).join("tests/data/fuzz-elf");
    let mut files: Vec<_> = std::fs::read_dir(&dir).unwrap().map(|e| e.unwrap().path()).collect();
    files.sort();
    assert!(files.len() >= 2, "{files:?}");
    for f in files {
        let data = std::fs::read(&f).unwrap();
        let (done, finished) = mpsc::channel();
        std::thread::spawn(move || {
            mcubench::fuzzing::exercise_elf(&data);
            let _ = done.send(());
        });
        match finished.recv_timeout(DEADLINE) {
            Ok(()) => {}
            Err(mpsc::RecvTimeoutError::Timeout) => panic!("{}: still running after {DEADLINE:?}", f.display()),
            Err(mpsc::RecvTimeoutError::Disconnected) => panic!("{}: panicked", f.display()),
        }
    }
}
