//! Analysis of a built ELF that needs no run: the static stack bound of a board × profile cell
//! ([`stack`]), and the toolchain that produced the ELF. The memory report itself lives in
//! `mcubench-elf`.

pub mod stack;

use mcubench_elf::ElfImage;

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
