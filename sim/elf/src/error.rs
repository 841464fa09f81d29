//! Errors of the ELF analyzer.
//!
//! Every message names the file and says what to do about it: these messages end up in CI logs
//! read by firmware developers who did not write mcubench.

use std::io;
use std::path::PathBuf;

/// Why an ELF file could not be loaded.
#[derive(Debug, thiserror::Error)]
#[non_exhaustive]
pub enum ElfError {
    /// The file could not be read from disk.
    #[error("cannot read ELF file {path}: {source}; check the path and that the firmware build produced it")]
    Unreadable {
        path: PathBuf,
        #[source]
        source: io::Error,
    },

    /// The file does not start with the ELF magic.
    #[error(
        "{path} is not an ELF file (it does not start with \\x7fELF); pass the linked firmware ELF, \
         not a .bin/.hex image or a source file"
    )]
    NotElf { path: PathBuf },

    /// A header table or the ELF header itself lies (partly) past the end of the file.
    #[error(
        "{path} is truncated: the {what} ends at byte {needed} but the file has only {len} bytes; \
         the file was cut short while copying or writing: rebuild the firmware or copy it again"
    )]
    Truncated { path: PathBuf, what: &'static str, needed: u64, len: u64 },

    /// A 64-bit ELF (typically a host binary).
    #[error(
        "{path} is a 64-bit ELF; mcubench analyses 32-bit ARM Cortex-M firmware: \
         did you pass a host binary? build for a thumbv* target (or with arm-none-eabi-gcc)"
    )]
    Elf64 { path: PathBuf },

    /// A big-endian ELF.
    #[error(
        "{path} is a big-endian ELF; Cortex-M firmware is little-endian: \
         rebuild without -mbig-endian (or pass the right file)"
    )]
    BigEndian { path: PathBuf },

    /// The ELF is for another architecture.
    #[error(
        "{path} is built for another architecture (e_machine {machine}), not ARM (40): \
         build the firmware for a thumbv* target or with arm-none-eabi-gcc"
    )]
    NotArm { path: PathBuf, machine: u16 },

    /// A relocatable object or shared object rather than a linked executable.
    #[error(
        "{path} is not a linked executable (ELF type {e_type}: 1 is a relocatable .o, 3 a shared object); \
         pass the ELF produced by the final link"
    )]
    NotExecutable { path: PathBuf, e_type: u16 },

    /// No section header table (stripped with sstrip, or produced by a tool that omits it).
    #[error(
        "{path} has no section headers (it was stripped of its section header table); \
         pass the ELF as the linker produced it"
    )]
    NoSections { path: PathBuf },

    /// A section's contents lie outside the file, or its header is inconsistent.
    #[error("{path} is corrupted: section {section} (#{index}) {detail}; rebuild the firmware or copy it again")]
    CorruptedSection { path: PathBuf, section: String, index: usize, detail: String },

    /// Any other structural problem (bad header field, string table, symbol table).
    #[error("{path} is a malformed ELF: {detail}; rebuild the firmware or copy it again")]
    Malformed { path: PathBuf, detail: String },
}
