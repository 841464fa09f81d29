//! Parsing never panics: truncations of a real ELF at many lengths, and random byte changes.
//! Every input gives `Ok` or `Err`; what parses is then analyzed too.

// Full test tier: needs QEMU and/or the Arm GCC toolchain (bash ci/setup.sh).
#![cfg(feature = "full")]

mod common;

use std::path::Path;

use mcubench_elf::{ElfImage, MemoryRegion, MemoryReport};

/// Deterministic 64-bit LCG (Knuth's MMIX constants).
struct Lcg(u64);

impl Lcg {
    fn next(&mut self) -> u64 {
        self.0 = self.0.wrapping_mul(6_364_136_223_846_793_005).wrapping_add(1_442_695_040_888_963_407);
        self.0 >> 33
    }

    fn below(&mut self, n: usize) -> usize {
        (self.next() % n as u64) as usize
    }
}

/// Parse and, when that works, exercise everything that reads the image.
fn exercise(bytes: &[u8]) -> bool {
    let Ok(image) = ElfImage::parse(Path::new("fuzz.elf"), bytes) else {
        return false;
    };
    let regions = [MemoryRegion::new("FLASH", 0, 4 << 20), MemoryRegion::new("RAM", 0x2000_0000, 4 << 20)];
    let _ = MemoryReport::analyze(&image, Some(&regions), 10);
    let _ = MemoryReport::analyze(&image, None, 10);
    let _ = image.has_code();
    let _ = image.vector_table();
    for addr in [0, 1, 0x41, 0x100, 0x2000_0000, u64::from(u32::MAX), u64::MAX] {
        let _ = image.symbolize(addr);
    }
    for s in image.sections() {
        let _ = image.section_data(s);
    }
    let _ = image.symbol("main");
    true
}

#[test]
fn truncations_never_panic() {
    let bytes = common::gcc_elf_bytes();
    assert!(exercise(&bytes));
    let mut parsed = 0;
    for len in (0..bytes.len()).step_by(3).chain([bytes.len() - 1]) {
        if exercise(&bytes[..len]) {
            parsed += 1;
        }
    }
    // Only cuts of the trailing padding could possibly parse; most must be rejected.
    assert!(parsed < 10, "{parsed} truncated files were accepted");
}

#[test]
fn byte_flips_never_panic() {
    let bytes = common::gcc_elf_bytes();
    let shoff = u32::from_le_bytes(bytes[32..36].try_into().unwrap()) as usize;
    let mut rng = Lcg(0x6d63_7562_656e_6368);
    let mut accepted = 0;
    for round in 0..20_000 {
        let mut b = bytes.clone();
        for _ in 0..1 + rng.below(6) {
            // Aim most changes at the structures the parser reads: ELF header, program
            // headers, section headers; the rest anywhere (symbol/string tables, contents).
            let at = match round % 4 {
                0 => rng.below(52),
                1 => 52 + rng.below(96),
                2 => shoff + rng.below(bytes.len() - shoff),
                _ => rng.below(bytes.len()),
            };
            b[at] = match rng.below(4) {
                0 => 0,
                1 => 0xff,
                2 => b[at] ^ (1 << rng.below(8)),
                _ => rng.next() as u8,
            };
        }
        if exercise(&b) {
            accepted += 1;
        }
    }
    assert!(accepted > 0, "some mutants (in contents) must still parse");
}
