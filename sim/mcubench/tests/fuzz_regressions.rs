//! Inputs the fuzzers (sim/fuzz) found crashing, replayed through the same calls as the fuzz
//! target so a regression fails the normal test suite. One file per finding in tests/data/fuzz-elf.
//!
//! - `sp-offset-overflow.elf`: garbage code whose SP adjustments summed past i32 made the stack
//!   analysis overflow (debug builds panic); SP arithmetic is now checked and fails closed.

use std::path::Path;

use mcubench::BOARDS;
use mcubench_elf::{ElfImage, MemoryReport};

fn replay(path: &Path) {
    let data = std::fs::read(path).unwrap();
    let Ok(image) = ElfImage::parse(Path::new("fuzz.elf"), &data) else { return };
    let board = &BOARDS[data.len() % BOARDS.len()];
    let _ = MemoryReport::analyze(&image, Some(&board.regions()), 10);
    let _ = MemoryReport::analyze(&image, None, 3);
    let _ = image.has_code();
    let _ = image.vector_table();
    for addr in [0, 1, 0x100, 0x2000_0000, u64::from(u32::MAX), u64::MAX] {
        let _ = image.symbolize(addr);
    }
    if let Ok((report, _)) = mcubench::stack::analyze(&image, board, None) {
        let _ = report.to_text(&["main"]);
        let _ = report.view(&["main", "Reset"]);
    }
}

#[test]
fn fuzzer_findings_no_longer_panic() {
    let dir = Path::new(env!("CARGO_MANIFEST_DIR")).join("tests/data/fuzz-elf");
    let mut files: Vec<_> = std::fs::read_dir(&dir).unwrap().map(|e| e.unwrap().path()).collect();
    files.sort();
    assert!(!files.is_empty());
    for f in files {
        replay(&f);
    }
}
