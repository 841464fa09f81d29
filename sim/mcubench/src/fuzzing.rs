//! The work the `elf` fuzz target (sim/fuzz) does with an input, as a library function so the
//! regression tests (tests/fuzz_regressions.rs) replay findings through exactly the same calls.

use std::path::Path;

use mcubench_elf::{ElfImage, MemoryReport};

use crate::config::board::BOARDS;

/// Any bytes as an ELF: parsing, the memory report and the static stack analysis must never
/// panic and always end (errors are values). The board (core: instruction set, FPU) is picked
/// from the input so every core is exercised.
pub fn exercise_elf(data: &[u8]) {
    let Ok(image) = ElfImage::parse(Path::new("fuzz.elf"), data) else { return };
    let board = &BOARDS[data.len() % BOARDS.len()];
    let _ = MemoryReport::analyze(&image, Some(&board.regions()), 10);
    let _ = MemoryReport::analyze(&image, None, 3);
    let _ = image.has_code();
    let _ = image.vector_table();
    for addr in [0, 1, 0x100, 0x2000_0000, u64::from(u32::MAX), u64::MAX] {
        let _ = image.symbolize(addr);
    }
    if let Ok((report, _)) = crate::analyze::stack::analyze(&image, board, None) {
        let _ = report.to_text(&["main"]);
        let _ = report.view(&["main", "Reset"]);
    }
}
