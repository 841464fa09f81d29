//! The memory report: flash and static RAM use, per section and per symbol.
//!
//! Flash holds the load image: every allocated section with contents, at its load address
//! (LMA): code, read-only data, the vector table, `.ARM.exidx`, and the initial values of
//! `.data`. RAM holds, at run-time addresses (VMA), `.data`, `.bss`, `.uninit` and any other
//! writable section, plus stack/heap reservation sections that GCC linker scripts create
//! (`._user_heap_stack`, `.stack`, `.heap`), which are reported in their own category.
//! A `.data` section therefore counts twice: its load image in flash and its run-time copy in RAM.

use serde::{Deserialize, Serialize};

use crate::image::{ElfImage, Section, SymbolKind};

/// A named memory region of the board (from the linker script's MEMORY command).
#[derive(Debug, Clone, PartialEq, Eq, Serialize, Deserialize)]
pub struct MemoryRegion {
    pub name: String,
    pub origin: u64,
    pub length: u64,
}

impl MemoryRegion {
    pub fn new(name: impl Into<String>, origin: u64, length: u64) -> Self {
        MemoryRegion { name: name.into(), origin, length }
    }

    /// True if `addr` lies inside the region.
    pub fn contains(&self, addr: u64) -> bool {
        addr >= self.origin && addr - self.origin < self.length
    }
}

/// What a section holds.
#[derive(Debug, Clone, Copy, PartialEq, Eq, PartialOrd, Ord, Hash, Serialize, Deserialize)]
#[serde(rename_all = "snake_case")]
pub enum Category {
    /// Executable (`.text`, `.init`, veneers).
    Code,
    /// Read-only data (`.rodata`, vector table, `.ARM.exidx`).
    Rodata,
    /// Initialised writable data (`.data`); in flash this is its load image.
    Data,
    /// Zero-initialised (`.bss`).
    Bss,
    /// Not initialised at all (`.uninit`, `.noinit`).
    Uninit,
    /// Explicit stack/heap reservation (`._user_heap_stack`, `.stack`, `.heap`).
    Reservation,
}

/// Bytes per category.
#[derive(Debug, Clone, Copy, Default, PartialEq, Eq, Serialize, Deserialize)]
pub struct Breakdown {
    pub code: u64,
    pub rodata: u64,
    pub data: u64,
    pub bss: u64,
    pub uninit: u64,
    pub reservation: u64,
}

impl Breakdown {
    fn add(&mut self, category: Category, bytes: u64) {
        let slot = match category {
            Category::Code => &mut self.code,
            Category::Rodata => &mut self.rodata,
            Category::Data => &mut self.data,
            Category::Bss => &mut self.bss,
            Category::Uninit => &mut self.uninit,
            Category::Reservation => &mut self.reservation,
        };
        *slot = slot.saturating_add(bytes);
    }

    /// Sum of all categories.
    pub fn total(&self) -> u64 {
        [self.code, self.rodata, self.data, self.bss, self.uninit, self.reservation]
            .iter()
            .fold(0u64, |a, b| a.saturating_add(*b))
    }
}

/// Use of one memory (flash or RAM).
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
pub struct RegionUsage {
    /// The region's name (`FLASH`/`RAM` when no regions were given).
    pub name: String,
    /// Start address; `None` when no regions were given.
    pub origin: Option<u64>,
    /// Size of the region; `None` (unknown) when no regions were given.
    pub capacity: Option<u64>,
    /// Bytes used, reservations included (= `breakdown` total).
    pub used: u64,
    /// `used / capacity` in percent, rounded to two decimals.
    pub percent_used: Option<f64>,
    pub breakdown: Breakdown,
}

impl RegionUsage {
    fn new(name: &str, region: Option<&MemoryRegion>) -> Self {
        RegionUsage {
            name: region.map_or(name, |r| r.name.as_str()).to_owned(),
            origin: region.map(|r| r.origin),
            capacity: region.map(|r| r.length),
            used: 0,
            percent_used: None,
            breakdown: Breakdown::default(),
        }
    }

    fn finish(&mut self) {
        self.used = self.breakdown.total();
        self.percent_used = self.capacity.filter(|&c| c > 0).map(|c| {
            let percent = self.used as f64 * 100.0 / c as f64;
            (percent * 100.0).round() / 100.0
        });
    }
}

/// One allocated section.
#[derive(Debug, Clone, PartialEq, Eq, Serialize, Deserialize)]
pub struct SectionUsage {
    pub name: String,
    pub kind: Category,
    pub vma: u64,
    pub lma: u64,
    pub size: u64,
    /// Region of the run-time address (VMA); `None` if it lies outside every given region.
    pub region: Option<String>,
    /// Region of the load image (LMA) for sections with contents; `None` for NOBITS sections.
    pub load_region: Option<String>,
}

/// One of the largest symbols.
#[derive(Debug, Clone, PartialEq, Eq, Serialize, Deserialize)]
pub struct SymbolUsage {
    /// Demangled, without the Rust hash.
    pub name: String,
    /// As stored in the ELF.
    pub mangled: String,
    pub kind: SymbolKind,
    pub size: u64,
    pub section: Option<String>,
    /// Address (Thumb bit cleared).
    pub address: u64,
}

/// The stack that cortex-m-rt gives the program: the rest of RAM between the end of the static
/// data (`_stack_end`) and the initial stack pointer (`_stack_start`).
#[derive(Debug, Clone, Copy, PartialEq, Eq, Serialize, Deserialize)]
pub struct StackUsage {
    /// Lowest address the stack may reach (`_stack_end`, or the end of static RAM).
    pub low: u64,
    /// Initial stack pointer (`_stack_start`).
    pub high: u64,
    /// `high - low`: the stack available.
    pub available: u64,
}

/// Flash and RAM use of a firmware image.
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
pub struct MemoryReport {
    pub flash: RegionUsage,
    pub ram: RegionUsage,
    /// Stack available to a cortex-m-rt program (`None` when `_stack_start` is absent:
    /// unknown, not zero).
    pub stack_available: Option<StackUsage>,
    /// Allocated sections with a size, sorted by VMA then name.
    pub sections: Vec<SectionUsage>,
    /// The largest functions and objects, by size (ties: by name, then address).
    pub top_symbols: Vec<SymbolUsage>,
    /// Things a person should look at: sections outside every region, regions over capacity.
    pub warnings: Vec<String>,
}

const RESERVATION_SECTIONS: &[&str] = &["._user_heap_stack", ".stack", ".heap", ".heap_stack"];
const UNINIT_PREFIXES: &[&str] = &[".uninit", ".noinit", ".no_init"];

/// The category of an allocated section.
pub fn categorize(section: &Section) -> Category {
    let name = section.name.as_str();
    let starts_with_any = |names: &[&str]| names.iter().any(|n| name == *n || name.starts_with(&format!("{n}.")));
    if section.exec {
        Category::Code
    } else if (section.write || section.nobits) && starts_with_any(RESERVATION_SECTIONS) {
        Category::Reservation
    } else if section.nobits {
        if starts_with_any(UNINIT_PREFIXES) { Category::Uninit } else { Category::Bss }
    } else if section.write {
        Category::Data
    } else {
        Category::Rodata
    }
}

impl MemoryReport {
    /// Analyze `image`. With `regions`, sections are placed by address (LMA for flash, VMA for
    /// RAM) and capacities are known; without, by flags (read-only → flash, writable or NOBITS →
    /// RAM, writable with LMA ≠ VMA → both). `top_n` bounds `top_symbols`.
    pub fn analyze(image: &ElfImage, regions: Option<&[MemoryRegion]>, top_n: usize) -> MemoryReport {
        let (flash_region, ram_region) = regions.map_or((None, None), pick_flash_and_ram);
        let mut flash = RegionUsage::new("FLASH", flash_region);
        let mut ram = RegionUsage::new("RAM", ram_region);
        let mut sections = Vec::new();
        let mut warnings = Vec::new();

        for s in image.sections() {
            // TLS templates of .tbss take no address space of their own.
            if !s.alloc || s.size == 0 || (s.tls && s.nobits) {
                continue;
            }
            let kind = categorize(s);
            let (region, load_region) = match regions {
                Some(regions) => {
                    let find = |addr: u64| regions.iter().find(|r| r.contains(addr)).map(|r| r.name.clone());
                    let region = find(s.vma);
                    let load_region = if s.occupies_load_image() { find(s.lma) } else { None };
                    if load_region.is_some() && flash_region.map(|r| &r.name) == load_region.as_ref() {
                        flash.breakdown.add(kind, s.size);
                    }
                    if region.is_some() && ram_region.map(|r| &r.name) == region.as_ref() {
                        ram.breakdown.add(kind, s.size);
                    }
                    (region, load_region)
                }
                None => {
                    let in_flash = s.occupies_load_image() && (!s.write || s.lma != s.vma);
                    let in_ram = s.write || s.nobits;
                    if in_flash {
                        flash.breakdown.add(kind, s.size);
                    }
                    if in_ram {
                        ram.breakdown.add(kind, s.size);
                    }
                    let region = if in_ram { &ram.name } else { &flash.name };
                    let load_region = if in_flash {
                        Some(flash.name.clone())
                    } else if s.occupies_load_image() {
                        Some(region.clone())
                    } else {
                        None
                    };
                    (Some(region.clone()), load_region)
                }
            };
            sections.push(SectionUsage {
                name: s.name.clone(),
                kind,
                vma: s.vma,
                lma: s.lma,
                size: s.size,
                region,
                load_region,
            });
        }
        sections.sort_by(|a, b| (a.vma, &a.name, a.lma).cmp(&(b.vma, &b.name, b.lma)));
        if let Some(regions) = regions {
            warnings.extend(Outside::find(image, regions).iter().map(Outside::to_string));
        }

        flash.finish();
        ram.finish();
        for r in [&flash, &ram] {
            if let Some(cap) = r.capacity.filter(|&c| r.used > c) {
                warnings.push(format!(
                    "{} overflows: {} bytes used of {} ({} over)",
                    r.name,
                    r.used,
                    cap,
                    r.used - cap
                ));
            }
        }

        MemoryReport {
            stack_available: stack_available(image),
            top_symbols: top_symbols(image, top_n),
            flash,
            ram,
            sections,
            warnings,
        }
    }
}

/// An allocated section whose run-time address (or, for a section with contents, load address)
/// lies outside every memory region: its bytes count in no region. Usually an ELF linked for
/// another board.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct Outside {
    pub section: String,
    /// The address outside every region: the VMA, or the LMA if `load_image`.
    pub address: u64,
    pub size: u64,
    /// The section's run-time copy is inside a region, its load image (at `address`) is not.
    pub load_image: bool,
}

impl Outside {
    /// The sections of `image` outside every one of `regions`, in section-header order; a section
    /// outside at its VMA is reported once, at its VMA.
    pub fn find(image: &ElfImage, regions: &[MemoryRegion]) -> Vec<Outside> {
        let inside = |addr: u64| regions.iter().any(|r| r.contains(addr));
        image
            .sections()
            .iter()
            .filter(|s| s.alloc && s.size > 0 && !(s.tls && s.nobits))
            .filter_map(|s| {
                let (address, load_image) = if !inside(s.vma) {
                    (s.vma, false)
                } else if s.occupies_load_image() && !inside(s.lma) {
                    (s.lma, true)
                } else {
                    return None;
                };
                Some(Outside { section: s.name.clone(), address, size: s.size, load_image })
            })
            .collect()
    }

    /// `section .text at 0x08000040 (2384 bytes)`, or `the load image of section .data at …`.
    pub fn what(&self) -> String {
        let what = if self.load_image { "the load image of section" } else { "section" };
        format!("{what} {} at {:#010x} ({} bytes)", self.section, self.address, self.size)
    }
}

impl std::fmt::Display for Outside {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        write!(f, "{} lies outside every memory region", self.what())
    }
}

/// Flash: the first region named like FLASH/ROM, else the first. RAM: the first other region
/// named like RAM, else the first other region.
fn pick_flash_and_ram(regions: &[MemoryRegion]) -> (Option<&MemoryRegion>, Option<&MemoryRegion>) {
    let named = |r: &MemoryRegion, words: &[&str]| {
        let upper = r.name.to_ascii_uppercase();
        words.iter().any(|w| upper.contains(w))
    };
    let flash = regions.iter().position(|r| named(r, &["FLASH", "ROM"])).or((!regions.is_empty()).then_some(0));
    let others = || regions.iter().enumerate().filter(move |(i, _)| Some(*i) != flash).map(|(_, r)| r);
    let ram = others().find(|r| named(r, &["RAM"])).or_else(|| others().next());
    (flash.map(|i| &regions[i]), ram)
}

fn stack_available(image: &ElfImage) -> Option<StackUsage> {
    let high = image.symbol("_stack_start")?.address;
    let low = match image.symbol("_stack_end") {
        Some(s) => s.address,
        None => image
            .sections()
            .iter()
            .filter(|s| s.alloc && s.size > 0 && (s.write || s.nobits))
            .filter(|s| categorize(s) != Category::Reservation)
            .map(|s| s.vma.saturating_add(s.size))
            .filter(|&end| end <= high)
            .max()?,
    };
    // `checked_sub`, not `then_some(high - low)`: that would be evaluated before the check.
    let available = high.checked_sub(low)?;
    Some(StackUsage { low, high, available })
}

fn top_symbols(image: &ElfImage, top_n: usize) -> Vec<SymbolUsage> {
    let sections = image.sections();
    let mut symbols: Vec<SymbolUsage> = image
        .symbols()
        .iter()
        .filter(|s| s.size > 0 && matches!(s.kind, SymbolKind::Function | SymbolKind::Object))
        .filter(|s| s.section_index.and_then(|i| sections.get(i)).is_some_and(|sec| sec.alloc))
        .map(|s| SymbolUsage {
            name: s.demangled.clone(),
            mangled: s.name.clone(),
            kind: s.kind,
            size: s.size,
            section: s.section.clone(),
            address: s.address,
        })
        .collect();
    symbols.sort_by(|a, b| {
        b.size
            .cmp(&a.size)
            .then_with(|| a.name.cmp(&b.name))
            .then_with(|| a.address.cmp(&b.address))
            .then_with(|| a.mangled.cmp(&b.mangled))
    });
    symbols.truncate(top_n);
    symbols
}
