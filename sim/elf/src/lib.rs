//! mcubench-elf: the ELF analyzer of mcubench.
//!
//! One module per concern, like gimli-rs/object:
//! - [`image`]: typed, validated load of a 32-bit little-endian ARM ELF (sections with VMA and
//!   LMA, load segments, symbols with demangled names, vector table);
//! - [`memory`]: the flash/RAM memory report;
//! - [`functions`]: function boundaries (symbols, sizes, mapping symbols), for the stack
//!   analyzer and the plugin's function table;
//! - [`error`]: why a file could not be loaded.
//!
//! Works on ELFs from rustc/LLVM and from arm-none-eabi-gcc alike. Parsing never panics.
//! Reading an ELF needs no instruction decoder: the static stack analyzer, which decodes the
//! code, is its own crate on top of this one (`mcubench-stack`), so `mcubench size` and every
//! other ELF user stay light.

pub mod error;
pub mod functions;
pub mod image;
pub mod memory;

pub use error::ElfError;
pub use image::{
    ElfImage, LoadSegment, MappingKind, MappingSymbol, Section, Symbol, SymbolBinding, SymbolKind, VectorTable,
    demangle,
};
pub use memory::{Breakdown, Category, MemoryRegion, MemoryReport, RegionUsage, SectionUsage, StackUsage, SymbolUsage};
