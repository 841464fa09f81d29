//! Analysis of a built ELF that needs no run: the static stack bound of a board × profile cell
//! ([`stack`]), whether the ELF fits a board's memory map ([`check_fits`]), and the toolchain that
//! produced the ELF. The memory report itself lives in `mcubench-elf`.

pub mod debug_units;
pub mod idle;
pub mod stack;
pub mod table;

use mcubench_elf::ElfImage;
use mcubench_elf::memory::Outside;
use mcubench_thumb::{Decoder, Insn};

use crate::config::board::{Board, Region};

/// Each Thumb function of `image` (its demangled name) with its code decoded up to its first
/// data ([`mcubench_elf::functions::FunctionMap::code`]): what the code scans that need no run
/// walk ([`debug_units`], [`idle`]); a run that needs several decodes once.
pub fn decoded_functions(image: &ElfImage, decoder: &Decoder) -> Vec<(String, Vec<Insn>)> {
    let map = mcubench_elf::functions::FunctionMap::new(image);
    let thumb = map.functions().iter().filter(|f| f.thumb);
    thumb.filter_map(|f| Some((f.demangled.clone(), decoder.decode_block(f.start, map.code(image, f)?).0))).collect()
}

/// An ELF with sections outside a board's memory map, usually one linked for another board: those
/// bytes count in neither the board's flash nor its RAM, so its sizes for that board leave them out.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct OutsideBoard {
    pub board: &'static str,
    pub flash: Region,
    pub ram: Region,
    pub sections: Vec<Outside>,
}

impl std::fmt::Display for OutsideBoard {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        writeln!(
            f,
            "{} section(s) outside {}'s memory map (FLASH 0x{:08x}..0x{:08x}, RAM 0x{:08x}..0x{:08x}), left out of its sizes:",
            self.sections.len(),
            self.board,
            self.flash.origin,
            self.flash.end(),
            self.ram.origin,
            self.ram.end()
        )?;
        for s in &self.sections {
            writeln!(f, "  {}", s.what())?;
        }
        write!(
            f,
            "was the ELF linked for another board? Give that board's name, or no --board to place sections by their flags"
        )
    }
}

impl std::error::Error for OutsideBoard {}

/// Checks that every allocated section of `image` (run-time address, and load address for a
/// section with contents) lies in `board`'s flash or RAM.
pub fn check_fits(image: &ElfImage, board: &Board) -> Result<(), OutsideBoard> {
    let sections = Outside::find(image, &board.regions());
    if sections.is_empty() {
        return Ok(());
    }
    Err(OutsideBoard { board: board.name, flash: board.layout.flash, ram: board.layout.ram, sections })
}

/// The producers recorded in `.comment` (NUL-separated strings), without duplicates.
pub fn toolchain(image: &ElfImage) -> Vec<String> {
    let Some(section) = image.section_by_name(".comment") else { return Vec::new() };
    let mut seen = Vec::new();
    for s in image.section_data(section).split(|&b| b == 0) {
        let s = String::from_utf8_lossy(s).trim().to_string();
        if !s.is_empty() && !seen.contains(&s) {
            seen.push(s);
        }
    }
    seen
}
