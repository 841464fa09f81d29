//! Any bytes as an ELF: parsing, the memory report and the static stack analysis never panic
//! and always end (errors are values).
#![no_main]

use std::path::Path;

use libfuzzer_sys::fuzz_target;
use mcubench::BOARDS;
use mcubench_elf::{ElfImage, MemoryReport};

fuzz_target!(|data: &[u8]| {
    let Ok(image) = ElfImage::parse(Path::new("fuzz.elf"), data) else { return };
    // The board (core: instruction set, FPU) from the input, so every core is exercised.
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
});
