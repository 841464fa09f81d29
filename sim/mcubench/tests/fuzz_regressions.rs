//! Inputs the fuzzers (sim/fuzz) found crashing, replayed through the fuzz target's own function
//! (`mcubench::fuzzing`) so a regression fails the normal test suite. One file per finding in tests/data/fuzz-elf.
//!
//! - `sp-offset-overflow.elf`: garbage code whose SP adjustments summed past i32 made the stack
//!   analysis overflow (debug builds panic); SP arithmetic is now checked and fails closed.

use std::path::Path;

#[test]
fn fuzzer_findings_no_longer_panic() {
    let dir = Path::new(env!("CARGO_MANIFEST_DIR")).join("tests/data/fuzz-elf");
    let mut files: Vec<_> = std::fs::read_dir(&dir).unwrap().map(|e| e.unwrap().path()).collect();
    files.sort();
    assert!(!files.is_empty());
    for f in files {
        mcubench::fuzzing::exercise_elf(&std::fs::read(&f).unwrap());
    }
}
