//! Every way a file can fail to load gets its own error, naming the file and what to do.

// Full test tier: needs QEMU and/or the Arm GCC toolchain (bash ci/setup.sh).
#![cfg(feature = "full")]

mod common;

use std::path::Path;

use common::{gcc, gcc_elf, gcc_elf_bytes, scratch};
use mcubench_elf::{ElfError, ElfImage};

const P: &str = "fw.elf";

fn parse(bytes: &[u8]) -> Result<ElfImage, ElfError> {
    ElfImage::parse(Path::new(P), bytes)
}

fn err(bytes: &[u8]) -> ElfError {
    let e = parse(bytes).expect_err("must be rejected");
    assert!(e.to_string().contains(P), "message names the file: {e}");
    e
}

fn u32_at(b: &[u8], off: usize) -> u32 {
    u32::from_le_bytes(b[off..off + 4].try_into().unwrap())
}

#[test]
fn unreadable_file() {
    let missing = scratch("unreadable").join("missing.elf");
    let e = ElfImage::read(&missing).unwrap_err();
    assert!(matches!(e, ElfError::Unreadable { .. }), "{e:?}");
    assert!(e.to_string().contains("missing.elf"), "{e}");
}

#[test]
fn not_an_elf() {
    for bytes in [&b""[..], b"\x7fEL", b"hello, world\n", b":020000040000FA\n"] {
        assert!(matches!(err(bytes), ElfError::NotElf { .. }));
    }
    assert!(err(b"junk").to_string().contains("not an ELF"));
}

#[test]
fn truncated_header_and_tables() {
    let bytes = gcc_elf_bytes();
    assert!(matches!(err(&bytes[..10]), ElfError::Truncated { what: "ELF identification", .. }));
    assert!(matches!(err(&bytes[..40]), ElfError::Truncated { what: "ELF header", needed: 52, len: 40, .. }));
    // The section header table is at the end of a GNU ld output: cut into it.
    let shoff = u32_at(&bytes, 32) as usize;
    let e = err(&bytes[..shoff + 100]);
    assert!(matches!(e, ElfError::Truncated { what: "section header table", .. }), "{e:?}");
    assert!(e.to_string().contains("truncated"), "{e}");
    // Program header table pointed past the end.
    let mut b = bytes.clone();
    b[28..32].copy_from_slice(&(bytes.len() as u32 - 16).to_le_bytes());
    assert!(matches!(err(&b), ElfError::Truncated { what: "program header table", .. }));
}

#[test]
fn host_binary_is_64_bit() {
    let exe = std::env::current_exe().unwrap();
    let e = ElfImage::read(&exe).unwrap_err();
    assert!(matches!(e, ElfError::Elf64 { .. }), "{e:?}");
    assert!(e.to_string().contains("host binary"), "{e}");
}

#[test]
fn big_endian() {
    let mut b = gcc_elf_bytes();
    b[5] = 2; // EI_DATA = ELFDATA2MSB
    assert!(matches!(err(&b), ElfError::BigEndian { .. }));
}

#[test]
fn not_arm() {
    let mut b = gcc_elf_bytes();
    b[18..20].copy_from_slice(&3u16.to_le_bytes()); // EM_386
    let e = err(&b);
    assert!(matches!(e, ElfError::NotArm { machine: 3, .. }), "{e:?}");
    assert!(e.to_string().contains("not ARM"), "{e}");
}

#[test]
fn relocatable_object_is_not_an_executable() {
    let dir = scratch("object");
    std::fs::write(dir.join("f.c"), "int f(int x) { return x * 3; }\n").unwrap();
    gcc(&dir, &["-mcpu=cortex-m4", "-mthumb", "-O2", "-c", "f.c", "-o", "f.o"]);
    let e = ElfImage::read(&dir.join("f.o")).unwrap_err();
    assert!(matches!(e, ElfError::NotExecutable { e_type: 1, .. }), "{e:?}");
}

#[test]
fn no_section_headers() {
    let mut b = gcc_elf_bytes();
    b[32..36].fill(0); // e_shoff
    b[48..52].fill(0); // e_shnum, e_shstrndx
    let e = err(&b);
    assert!(matches!(e, ElfError::NoSections { .. }), "{e:?}");
    assert!(e.to_string().contains("no section headers"), "{e}");
}

#[test]
fn corrupted_section_contents_past_end() {
    let image = ElfImage::read(gcc_elf()).unwrap();
    let text = image.section_by_name(".text").unwrap().index;
    let mut b = gcc_elf_bytes();
    let shoff = u32_at(&b, 32) as usize;
    let sh_size = shoff + text * 40 + 20;
    b[sh_size..sh_size + 4].copy_from_slice(&0x00ff_0000u32.to_le_bytes());
    let e = err(&b);
    match &e {
        ElfError::CorruptedSection { section, index, .. } => {
            assert_eq!((section.as_str(), *index), (".text", text));
        }
        other => panic!("expected CorruptedSection, got {other:?}"),
    }
    assert!(e.to_string().contains("past the end of the file"), "{e}");
}

#[test]
fn elf_without_code_has_no_code() {
    let script = "MEMORY { FLASH (rx) : ORIGIN = 0, LENGTH = 4M\n RAM (rwx) : ORIGIN = 0x20000000, LENGTH = 4M }\n\
                  SECTIONS { .rodata : { KEEP(*(.rodata*)) } > FLASH }\n";
    let elf = common::build("nocode", "__attribute__((used)) const int answer[4] = { 42, 43, 44, 45 };\n", script);
    let image = ElfImage::read(&elf).expect("a data-only ELF still parses");
    assert!(!image.has_code());
    assert!(image.vector_table().is_none());
    assert!(ElfImage::read(gcc_elf()).unwrap().has_code());
}
