//! Function boundaries in the code of a linked Cortex-M ELF.
//!
//! A function is a Thumb code range that starts at a function symbol:
//! - `STT_FUNC` symbols in executable sections, with `st_size` when it is non-zero;
//! - a size-0 function (assembly without `.size`) ends at the next function start or the end of
//!   its section, whichever comes first, less the data (`$d`) that runs up to that end:
//!   literal pools inside it (`.ltorg` between its instructions, followed by `$t`) stay inside;
//! - symbols at the same address are aliases of one function (a global name wins for display);
//! - a function symbol that starts inside another one (libgcc's `__aeabi_l2d` inside
//!   `__aeabi_ul2d`) is a function of its own; the outer function's range still covers it.
//!
//! Bytes inside a function that a `$d` mapping symbol marks as data (literal pools, TBB/TBH
//! tables) are data up to the next `$t`/`$a` mapping symbol; [`FunctionMap::is_data`] answers
//! that. Linker fill (padding between a function's end and the next function) belongs to no
//! function. ELFs stripped of local symbols have no mapping symbols: then every byte of a
//! function is treated as code, and the decoder stops at what it cannot decode (fail closed).

use std::collections::BTreeMap;

use serde::{Deserialize, Serialize};

use crate::image::{ElfImage, MappingKind, SymbolBinding, SymbolKind};

/// One function: a Thumb code range with its names.
#[derive(Debug, Clone, PartialEq, Eq, Serialize, Deserialize)]
pub struct Function {
    /// The name shown for the function: a global alias if there is one, else the first local.
    pub name: String,
    /// Demangled form of `name`.
    pub demangled: String,
    /// Other symbol names at the same address.
    pub aliases: Vec<String>,
    /// First byte (Thumb bit cleared).
    pub start: u32,
    /// One past the last byte.
    pub end: u32,
    /// True when the size comes from `st_size`; false when it was inferred.
    pub sized: bool,
    pub section_index: usize,
    /// False for functions whose symbol has bit 0 clear (ARM state code: not executable on
    /// M-profile).
    pub thumb: bool,
}

impl Function {
    pub fn contains(&self, addr: u32) -> bool {
        addr >= self.start && addr < self.end
    }

    pub fn size(&self) -> u32 {
        self.end - self.start
    }
}

/// A data range inside a code section (from a `$d` to the next `$t`/`$a` mapping symbol or the
/// end of the section).
#[derive(Debug, Clone, Copy, PartialEq, Eq, Serialize, Deserialize)]
pub struct DataRange {
    pub start: u32,
    pub end: u32,
}

/// All functions of an image, sorted by start address.
#[derive(Debug, Clone, Default)]
pub struct FunctionMap {
    functions: Vec<Function>,
    by_start: BTreeMap<u32, usize>,
    /// Data ranges in executable sections, sorted by start.
    data: Vec<DataRange>,
    /// Mapping symbols present at all (false for stripped ELFs).
    has_mapping_symbols: bool,
}

/// A 64-bit address or size from the ELF as a 32-bit one, saturating: a value past 4 GiB (a
/// section that runs off the address space, a corrupt symbol) must not wrap to a small one.
fn address32(v: u64) -> u32 {
    u32::try_from(v).unwrap_or(u32::MAX)
}

impl FunctionMap {
    /// Collect the functions of `image`.
    pub fn new(image: &ElfImage) -> FunctionMap {
        let sections = image.sections();
        let exec = |idx: Option<usize>| idx.and_then(|i| sections.get(i)).filter(|s| s.alloc && s.exec && !s.nobits);

        // Data ranges from mapping symbols.
        let mut data = Vec::new();
        let mapping = image.mapping_symbols();
        for (i, m) in mapping.iter().enumerate() {
            let Some(section) = exec(Some(m.section_index)) else { continue };
            if m.kind != MappingKind::Data {
                continue;
            }
            let next = mapping[i + 1..]
                .iter()
                .find(|n| n.section_index == m.section_index && n.kind != MappingKind::Data)
                .map_or(section.vma + section.size, |n| n.address);
            // Only real ranges: a `$d` outside its own section (or a section running past 4 GiB)
            // would give an empty or inverted one, which lookups cannot skip.
            let (start, end) = (address32(m.address), address32(next));
            if start < end {
                data.push(DataRange { start, end });
            }
        }
        data.sort_by_key(|d| d.start);

        // Function symbols grouped by address.
        let mut groups: BTreeMap<u32, Vec<&crate::image::Symbol>> = BTreeMap::new();
        for s in image.symbols() {
            if s.kind != SymbolKind::Function || exec(s.section_index).is_none() {
                continue;
            }
            groups.entry(address32(s.address)).or_default().push(s);
        }
        let starts: Vec<u32> = groups.keys().copied().collect();
        let mut functions = Vec::with_capacity(groups.len());
        for (k, (&start, syms)) in groups.iter().enumerate() {
            let mut syms = syms.clone();
            // Global/weak before local, then sized before unsized, then name.
            syms.sort_by(|a, b| {
                let rank = |s: &crate::image::Symbol| (s.binding == SymbolBinding::Local, s.size == 0);
                (rank(a), &a.name).cmp(&(rank(b), &b.name))
            });
            let primary = syms[0];
            let section_index = primary.section_index.unwrap_or(0);
            let section = &sections[section_index];
            let section_end = address32(section.vma.saturating_add(section.size));
            let size = address32(syms.iter().map(|s| s.size).max().unwrap_or(0));
            let (end, sized) = if size > 0 {
                (start.saturating_add(size).min(section_end), true)
            } else {
                let next_fn = starts.get(k + 1).copied().unwrap_or(u32::MAX);
                let mut end = next_fn.min(section_end);
                // Data that runs up to the end (constants after the last instruction, with no
                // `$t` after them) is not the function's; a pool followed by code is.
                if let Some(d) = data.iter().find(|d| d.start > start && d.start < end && d.end >= end) {
                    end = d.start;
                }
                (end, false)
            };
            let mut aliases: Vec<String> = syms[1..].iter().map(|s| s.name.clone()).collect();
            aliases.dedup();
            functions.push(Function {
                name: primary.name.clone(),
                demangled: primary.demangled.clone(),
                aliases,
                start,
                end,
                sized,
                section_index,
                thumb: syms.iter().any(|s| s.thumb),
            });
        }
        let by_start = functions.iter().enumerate().map(|(i, f)| (f.start, i)).collect();
        FunctionMap { functions, by_start, data, has_mapping_symbols: !mapping.is_empty() }
    }

    pub fn functions(&self) -> &[Function] {
        &self.functions
    }

    /// The function that starts exactly at `addr` (Thumb bit ignored).
    pub fn at(&self, addr: u32) -> Option<&Function> {
        self.by_start.get(&(addr & !1)).map(|&i| &self.functions[i])
    }

    /// Index into [`FunctionMap::functions`] of the function starting at `addr`.
    pub fn index_at(&self, addr: u32) -> Option<usize> {
        self.by_start.get(&(addr & !1)).copied()
    }

    /// The function with this (raw or demangled) name or alias.
    pub fn by_name(&self, name: &str) -> Option<&Function> {
        self.functions.iter().find(|f| f.name == name || f.demangled == name || f.aliases.iter().any(|a| a == name))
    }

    /// The innermost function whose range holds `addr`.
    pub fn containing(&self, addr: u32) -> Option<&Function> {
        let addr = addr & !1;
        self.by_start.range(..=addr).rev().map(|(_, &i)| &self.functions[i]).find(|f| f.contains(addr))
    }

    /// True if `addr` lies in a `$d` range of a code section.
    pub fn is_data(&self, addr: u32) -> bool {
        let i = self.data.partition_point(|d| d.start <= addr);
        i > 0 && addr < self.data[i - 1].end
    }

    /// The data range holding `addr`, if any.
    pub fn data_range(&self, addr: u32) -> Option<DataRange> {
        let i = self.data.partition_point(|d| d.start <= addr);
        (i > 0 && addr < self.data[i - 1].end).then(|| self.data[i - 1])
    }

    /// The first data range starting at or after `addr`.
    pub fn next_data(&self, addr: u32) -> Option<DataRange> {
        let i = self.data.partition_point(|d| d.start < addr);
        self.data.get(i).copied()
    }

    /// The bytes of `f`'s code: from its start up to its first literal pool or other data.
    pub fn code<'a>(&self, image: &'a ElfImage, f: &Function) -> Option<&'a [u8]> {
        let end = self.next_data(f.start).map_or(f.end, |d| d.start.clamp(f.start, f.end));
        image.bytes_at(u64::from(f.start), u64::from(end - f.start))
    }

    /// Whether the image had mapping symbols at all.
    pub fn has_mapping_symbols(&self) -> bool {
        self.has_mapping_symbols
    }
}
