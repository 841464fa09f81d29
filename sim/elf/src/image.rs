//! Typed, validated load of a 32-bit little-endian ARM ELF.
//!
//! [`ElfImage::parse`] checks the file before anything else looks at it: identification,
//! header tables in bounds, section contents in bounds, symbol and string tables readable.
//! Afterwards every access is infallible and bounds-safe. Parsing never panics, whatever the
//! input (see the `robustness` test).

use std::collections::HashMap;
use std::path::{Path, PathBuf};

use object::LittleEndian as LE;
use object::elf;
use object::read::elf::{FileHeader, ProgramHeader, SectionHeader, Sym};
use serde::{Deserialize, Serialize};

use crate::error::ElfError;

const ELF_HEADER_SIZE: u64 = 52;
const PROGRAM_HEADER_SIZE: u64 = 32;
const SECTION_HEADER_SIZE: u64 = 40;
const ADDRESS_SPACE_END: u64 = 1 << 32;

/// Section names under which linkers place the Cortex-M vector table, most common first
/// (cortex-m-rt, STM32Cube/CMSIS, NXP/others, TI).
const VECTOR_TABLE_SECTIONS: &[&str] =
    &[".vector_table", ".isr_vector", ".vectors", ".isr_vectors", ".intvecs", ".vector"];

/// One section of the ELF, with its run-time (VMA) and load (LMA) address.
#[derive(Debug, Clone, PartialEq, Eq, Serialize, Deserialize)]
pub struct Section {
    /// Index in the section header table.
    pub index: usize,
    pub name: String,
    /// `sh_type` (1 PROGBITS, 8 NOBITS, 0x70000001 ARM_EXIDX, ...).
    pub sh_type: u32,
    /// SHF_ALLOC: occupies memory at run time.
    pub alloc: bool,
    /// SHF_WRITE.
    pub write: bool,
    /// SHF_EXECINSTR.
    pub exec: bool,
    /// SHF_TLS.
    pub tls: bool,
    /// SHT_NOBITS: no contents in the file (.bss and NOLOAD sections).
    pub nobits: bool,
    /// Run-time address (`sh_addr`).
    pub vma: u64,
    /// Load address: from the PT_LOAD segment that holds the section (`p_paddr` mapping);
    /// equal to `vma` when no segment maps it.
    pub lma: u64,
    pub size: u64,
    pub align: u64,
    /// Offset of the contents in the file (meaningless for NOBITS).
    pub file_offset: u64,
}

impl Section {
    /// True if the section's bytes are part of the load image (what gets programmed).
    pub fn occupies_load_image(&self) -> bool {
        self.alloc && !self.nobits && self.size > 0
    }

    /// True if `addr` lies inside the section's run-time address range.
    pub fn contains_vma(&self, addr: u64) -> bool {
        addr >= self.vma && addr - self.vma < self.size
    }
}

/// A PT_LOAD program header.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Serialize, Deserialize)]
pub struct LoadSegment {
    pub offset: u64,
    pub vaddr: u64,
    pub paddr: u64,
    pub filesz: u64,
    pub memsz: u64,
    /// `p_flags` (1 X, 2 W, 4 R).
    pub flags: u32,
}

/// ELF symbol type, reduced to what the analyzer distinguishes.
#[derive(Debug, Clone, Copy, PartialEq, Eq, PartialOrd, Ord, Hash, Serialize, Deserialize)]
#[serde(rename_all = "snake_case")]
pub enum SymbolKind {
    Function,
    Object,
    /// STT_NOTYPE: labels, linker-script symbols, assembly without `.type`.
    NoType,
}

/// ELF symbol binding.
#[derive(Debug, Clone, Copy, PartialEq, Eq, PartialOrd, Ord, Hash, Serialize, Deserialize)]
#[serde(rename_all = "snake_case")]
pub enum SymbolBinding {
    Global,
    Weak,
    Local,
}

/// A defined symbol (mapping symbols `$t`/`$d`/`$a`, section and file symbols are left out).
#[derive(Debug, Clone, PartialEq, Eq, Serialize, Deserialize)]
pub struct Symbol {
    /// The name as stored in the ELF (mangled for Rust).
    pub name: String,
    /// Demangled for display (Rust legacy and v0; the `::h…` hash is stripped); equal to
    /// `name` for C symbols.
    pub demangled: String,
    /// Address with the Thumb bit cleared.
    pub address: u64,
    pub size: u64,
    pub kind: SymbolKind,
    pub binding: SymbolBinding,
    /// True for a function symbol whose value has bit 0 set (Thumb code).
    pub thumb: bool,
    /// Index of the defining section; `None` for absolute symbols.
    pub section_index: Option<usize>,
    /// Name of the defining section; `None` for absolute symbols.
    pub section: Option<String>,
}

/// What an ARM mapping symbol (`$t`, `$a`, `$d`, optionally with a `.suffix`) says about the
/// bytes from its address up to the next mapping symbol of the same section.
#[derive(Debug, Clone, Copy, PartialEq, Eq, PartialOrd, Ord, Hash, Serialize, Deserialize)]
#[serde(rename_all = "snake_case")]
pub enum MappingKind {
    /// `$t`: Thumb code.
    Thumb,
    /// `$a`: ARM (A32) code; never executed on M-profile.
    Arm,
    /// `$d`: data (literal pools, TBB/TBH tables, constants in code sections).
    Data,
}

/// An ARM mapping symbol (AAELF32 §5.5.5).
#[derive(Debug, Clone, Copy, PartialEq, Eq, Serialize, Deserialize)]
pub struct MappingSymbol {
    pub address: u64,
    pub kind: MappingKind,
    pub section_index: usize,
}

/// The vector table found at a load address.
#[derive(Debug, Clone, PartialEq, Eq, Serialize, Deserialize)]
pub struct VectorTable {
    pub section: String,
    /// Load address of the table.
    pub address: u64,
    pub initial_sp: u32,
    /// Reset handler (Thumb bit set).
    pub reset: u32,
}

/// Demangle a symbol name for display: Rust legacy (`_ZN…17h<hash>E`) and v0 (`_R…`) symbols
/// lose their hash (`::h0123…` / `[0123…]`); C++ (Itanium ABI, `_Z…`: g++ and clang++) names
/// become `ns::f(int)`, `int ns::twice<int>(int)`; other names are returned unchanged.
pub fn demangle(name: &str) -> String {
    // Legacy Rust symbols use the Itanium `_ZN…E` nesting too, so tell them apart by the hash
    // segment rustc always appends; everything else that starts with `_Z` is C++.
    if (name.starts_with("_R") || is_rust_legacy(name))
        && let Ok(d) = rustc_demangle::try_demangle(name)
    {
        return format!("{d:#}");
    }
    if name.starts_with("_Z")
        && let Some(d) = demangle_cpp(name)
    {
        return d;
    }
    match rustc_demangle::try_demangle(name) {
        Ok(d) => format!("{d:#}"),
        Err(_) => name.to_owned(),
    }
}

/// An Itanium C++ name as `c++filt` prints it.
fn demangle_cpp(name: &str) -> Option<String> {
    let parse = |n: &str| cpp_demangle::Symbol::new(n).ok().and_then(|s| s.demangle().ok());
    let d = parse(name).or_else(|| {
        // GCC's C5/D5 ("unified" constructor/destructor comdat names) are not in the Itanium
        // grammar the crate implements; they print like the complete-object C1/D1.
        name.match_indices(['C', 'D'])
            .filter(|(i, _)| name[i + 1..].starts_with('5'))
            .find_map(|(i, c)| parse(&format!("{}{c}1{}", &name[..i], &name[i + 2..])))
    })?;
    Some(special_name(&d))
}

/// The crate writes some special names in braces; `c++filt` (and so every other tool the
/// user compares with) writes them as words.
fn special_name(d: &str) -> String {
    if let Some(inner) = d.strip_prefix("{vtable(").and_then(|r| r.strip_suffix(")}")) {
        return format!("vtable for {inner}");
    }
    if let Some(inner) = d.strip_prefix("{vtt(").and_then(|r| r.strip_suffix(")}")) {
        return format!("VTT for {inner}");
    }
    if let Some(inner) = d.strip_prefix("{virtual override thunk(").and_then(|r| r.strip_suffix(")}")) {
        // `{offset(N)}, f` / `{virtual offset(a, b)}, f`, or two offsets (covariant return).
        let mut rest = inner;
        let mut offsets = Vec::new();
        while rest.starts_with('{') {
            let Some(end) = rest.find("}, ") else { break };
            offsets.push(rest[..end].starts_with("{virtual"));
            rest = &rest[end + 3..];
        }
        return match offsets.as_slice() {
            [false] => format!("non-virtual thunk to {rest}"),
            [true] => format!("virtual thunk to {rest}"),
            _ => format!("covariant return thunk to {rest}"),
        };
    }
    d.to_owned()
}

/// `_ZN…17h<16 hex digits>E`, optionally followed by a `.suffix` (`.llvm.123`, `.cold`).
/// (Path segments may contain `.` themselves: `_ZN44_$LT$…core..fmt..Display$GT$3fmt17h…E`.)
fn is_rust_legacy(name: &str) -> bool {
    name.starts_with("_ZN")
        && name.match_indices("17h").any(|(i, _)| {
            let rest = &name[i + 3..];
            rest.len() >= 17
                && rest.as_bytes()[..16].iter().all(u8::is_ascii_hexdigit)
                && rest.as_bytes()[16] == b'E'
                && (rest.len() == 17 || rest.as_bytes()[17] == b'.')
        })
}

/// A parsed and validated 32-bit little-endian ARM ELF executable.
#[derive(Debug, Clone)]
pub struct ElfImage {
    path: PathBuf,
    data: Vec<u8>,
    entry: u64,
    sections: Vec<Section>,
    segments: Vec<LoadSegment>,
    /// Sorted by (address, name).
    symbols: Vec<Symbol>,
    /// Sorted by (section, address).
    mapping: Vec<MappingSymbol>,
    by_name: HashMap<String, usize>,
}

impl ElfImage {
    /// Read and parse the ELF at `path`.
    pub fn read(path: &Path) -> Result<ElfImage, ElfError> {
        let bytes = std::fs::read(path).map_err(|source| ElfError::Unreadable { path: path.to_owned(), source })?;
        Self::parse(path, &bytes)
    }

    /// Parse `bytes`; `path` is used only in error messages.
    pub fn parse(path: &Path, bytes: &[u8]) -> Result<ElfImage, ElfError> {
        Parser { path, data: bytes }.parse()
    }

    /// The file this image was parsed from (as given).
    pub fn path(&self) -> &Path {
        &self.path
    }

    /// The entry point as stored in the header (Thumb bit included).
    pub fn entry(&self) -> u64 {
        self.entry
    }

    /// All sections in header-table order (index 0, the null section, included).
    pub fn sections(&self) -> &[Section] {
        &self.sections
    }

    /// The first section called `name`.
    pub fn section_by_name(&self, name: &str) -> Option<&Section> {
        self.sections.iter().find(|s| s.name == name)
    }

    /// The file contents of a section (empty for NOBITS sections). Bounds were validated at parse.
    pub fn section_data(&self, section: &Section) -> &[u8] {
        if section.nobits {
            return &[];
        }
        let start = usize::try_from(section.file_offset).unwrap_or(usize::MAX);
        let len = usize::try_from(section.size).unwrap_or(usize::MAX);
        start.checked_add(len).and_then(|end| self.data.get(start..end)).unwrap_or(&[])
    }

    /// PT_LOAD segments in program-header order.
    pub fn load_segments(&self) -> &[LoadSegment] {
        &self.segments
    }

    /// Defined symbols sorted by address, then name.
    pub fn symbols(&self) -> &[Symbol] {
        &self.symbols
    }

    /// ARM mapping symbols (`$t`/`$a`/`$d`) sorted by section index, then address. Tools that
    /// strip local symbols remove them: then this is empty.
    pub fn mapping_symbols(&self) -> &[MappingSymbol] {
        &self.mapping
    }

    /// The bytes at run-time addresses `addr..addr + len` from the allocated, non-NOBITS section
    /// that holds them all, if any.
    pub fn bytes_at(&self, addr: u64, len: u64) -> Option<&[u8]> {
        let section = self
            .sections
            .iter()
            .find(|s| s.alloc && !s.nobits && s.contains_vma(addr) && addr + len <= s.vma + s.size)?;
        let data = self.section_data(section);
        let start = usize::try_from(addr - section.vma).ok()?;
        let end = start.checked_add(usize::try_from(len).ok()?)?;
        data.get(start..end)
    }

    /// The little-endian word at run-time address `addr`, if a loaded section holds it.
    pub fn word_at(&self, addr: u64) -> Option<u32> {
        self.bytes_at(addr, 4).map(|b| u32::from_le_bytes([b[0], b[1], b[2], b[3]]))
    }

    /// The symbol with exactly this (mangled or raw) name. When several local symbols share the
    /// name, a global or weak one wins, then the lowest address.
    pub fn symbol(&self, name: &str) -> Option<Symbol> {
        self.by_name.get(name).map(|&i| self.symbols[i].clone())
    }

    /// The function or object containing `addr` (Thumb bit ignored): its demangled name and
    /// the offset of `addr` into it. For fault PCs and LR values.
    pub fn symbolize(&self, addr: u64) -> Option<(String, u64)> {
        let addr = addr & !1;
        let containing = self
            .symbols
            .iter()
            .filter(|s| s.section_index.is_some() && s.size > 0)
            .filter(|s| addr >= s.address && addr - s.address < s.size)
            .min_by(|a, b| {
                // Prefer functions, then the innermost (smallest) symbol, then the name.
                (a.kind != SymbolKind::Function, a.size, &a.name).cmp(&(
                    b.kind != SymbolKind::Function,
                    b.size,
                    &b.name,
                ))
            });
        if let Some(s) = containing {
            return Some((s.demangled.clone(), addr - s.address));
        }
        // Assembly without `.size`: the closest preceding sized-0 label in the same code section.
        let section = self.sections.iter().find(|s| s.alloc && s.exec && s.contains_vma(addr))?;
        self.symbols
            .iter()
            .filter(|s| s.section_index == Some(section.index) && s.size == 0)
            .filter(|s| s.kind != SymbolKind::Object && s.address <= addr)
            .max_by(|a, b| (a.address, &b.name).cmp(&(b.address, &a.name)))
            .map(|s| (s.demangled.clone(), addr - s.address))
    }

    /// The vector table at a load address, if there is one: a known vector-table section, else
    /// the loaded section with the lowest load address, whose second word (reset handler) is a
    /// Thumb address inside a code section.
    pub fn vector_table(&self) -> Option<VectorTable> {
        let named =
            VECTOR_TABLE_SECTIONS.iter().filter_map(|n| self.section_by_name(n)).find(|s| s.occupies_load_image());
        let candidate = named
            .or_else(|| self.sections.iter().filter(|s| s.occupies_load_image()).min_by_key(|s| (s.lma, s.index)))?;
        let bytes = self.section_data(candidate);
        let word = |i: usize| -> Option<u32> {
            let b = bytes.get(i * 4..i * 4 + 4)?;
            Some(u32::from_le_bytes([b[0], b[1], b[2], b[3]]))
        };
        let initial_sp = word(0)?;
        let reset = word(1)?;
        let reset_in_code =
            reset & 1 == 1 && self.sections.iter().any(|s| s.alloc && s.exec && s.contains_vma(u64::from(reset & !1)));
        reset_in_code.then(|| VectorTable {
            section: candidate.name.clone(),
            address: candidate.lma,
            initial_sp,
            reset,
        })
    }

    /// True if the image has something to run: an executable allocated section with contents
    /// and a vector table at a load address. The runner treats `false` as an error ("empty ELF").
    pub fn has_code(&self) -> bool {
        self.sections.iter().any(|s| s.exec && s.occupies_load_image()) && self.vector_table().is_some()
    }
}

struct Parser<'a> {
    path: &'a Path,
    data: &'a [u8],
}

impl<'a> Parser<'a> {
    fn malformed(&self, detail: impl Into<String>) -> ElfError {
        ElfError::Malformed { path: self.path.to_owned(), detail: detail.into() }
    }

    fn len(&self) -> u64 {
        self.data.len() as u64
    }

    fn check_in_file(&self, what: &'static str, offset: u64, size: u64) -> Result<(), ElfError> {
        let end = offset.saturating_add(size);
        if end > self.len() {
            return Err(ElfError::Truncated { path: self.path.to_owned(), what, needed: end, len: self.len() });
        }
        Ok(())
    }

    fn parse(self) -> Result<ElfImage, ElfError> {
        let data = self.data;
        let path = || self.path.to_owned();

        // Identification, checked by hand so each case gets its own message.
        if data.len() < 4 || data[..4] != elf::ELFMAG {
            return Err(ElfError::NotElf { path: path() });
        }
        self.check_in_file("ELF identification", 0, 16)?;
        match elf::FileClass(data[4]) {
            elf::ELFCLASS32 => {}
            elf::ELFCLASS64 => return Err(ElfError::Elf64 { path: path() }),
            other => return Err(self.malformed(format!("invalid EI_CLASS {other}"))),
        }
        match elf::DataEncoding(data[5]) {
            elf::ELFDATA2LSB => {}
            elf::ELFDATA2MSB => return Err(ElfError::BigEndian { path: path() }),
            other => return Err(self.malformed(format!("invalid EI_DATA {other}"))),
        }
        self.check_in_file("ELF header", 0, ELF_HEADER_SIZE)?;
        let header = elf::FileHeader32::<LE>::parse(data).map_err(|e| self.malformed(format!("ELF header: {e}")))?;
        let endian = LE;

        let machine = header.e_machine(endian);
        if machine != elf::EM_ARM {
            return Err(ElfError::NotArm { path: path(), machine: machine.0 });
        }
        let e_type = header.e_type(endian);
        if e_type != elf::ET_EXEC && e_type != elf::ET_DYN {
            return Err(ElfError::NotExecutable { path: path(), e_type: e_type.0 });
        }

        let segments = self.load_segments(header)?;
        let (sections, table) = self.sections(header)?;
        let (symbols, mapping) = self.symbols(&table, &sections)?;

        let mut by_name: HashMap<String, usize> = HashMap::new();
        for (i, s) in symbols.iter().enumerate() {
            let better = match by_name.get(&s.name) {
                None => true,
                Some(&j) => {
                    let rank = |b: SymbolBinding| b == SymbolBinding::Local;
                    let cur = &symbols[j];
                    (rank(s.binding), s.address) < (rank(cur.binding), cur.address)
                }
            };
            if better {
                by_name.insert(s.name.clone(), i);
            }
        }

        Ok(ElfImage {
            path: path(),
            data: data.to_vec(),
            entry: u64::from(header.e_entry(endian)),
            sections: self.assign_lma(sections, &segments),
            segments,
            symbols,
            mapping,
            by_name,
        })
    }

    fn load_segments(&self, header: &'a elf::FileHeader32<LE>) -> Result<Vec<LoadSegment>, ElfError> {
        let endian = LE;
        let phoff = u64::from(header.e_phoff(endian));
        let phnum = u64::from(header.e_phnum(endian));
        if phoff == 0 || phnum == 0 {
            return Ok(Vec::new());
        }
        if u64::from(header.e_phentsize(endian)) != PROGRAM_HEADER_SIZE {
            return Err(self.malformed(format!(
                "program header entry size is {} (expected {PROGRAM_HEADER_SIZE})",
                header.e_phentsize(endian)
            )));
        }
        if phnum < u64::from(elf::PN_XNUM) {
            self.check_in_file("program header table", phoff, phnum * PROGRAM_HEADER_SIZE)?;
        }
        let headers = header
            .program_headers(endian, self.data)
            .map_err(|e| self.malformed(format!("program header table: {e}")))?;
        Ok(headers
            .iter()
            .filter(|ph| ph.p_type(endian) == elf::PT_LOAD)
            .map(|ph| LoadSegment {
                offset: u64::from(ph.p_offset(endian)),
                vaddr: u64::from(ph.p_vaddr(endian)),
                paddr: u64::from(ph.p_paddr(endian)),
                filesz: u64::from(ph.p_filesz(endian)),
                memsz: u64::from(ph.p_memsz(endian)),
                flags: ph.p_flags(endian).0,
            })
            .collect())
    }

    fn sections(&self, header: &'a elf::FileHeader32<LE>) -> Result<(Vec<Section>, Table<'a>), ElfError> {
        let endian = LE;
        let shoff = u64::from(header.e_shoff(endian));
        if shoff == 0 {
            return Err(ElfError::NoSections { path: self.path.to_owned() });
        }
        if u64::from(header.e_shentsize(endian)) != SECTION_HEADER_SIZE {
            return Err(self.malformed(format!(
                "section header entry size is {} (expected {SECTION_HEADER_SIZE})",
                header.e_shentsize(endian)
            )));
        }
        self.check_in_file("section header table", shoff, SECTION_HEADER_SIZE)?;
        let shnum = header.shnum(endian, self.data).map_err(|e| self.malformed(format!("section count: {e}")))?;
        if shnum == 0 {
            return Err(ElfError::NoSections { path: self.path.to_owned() });
        }
        self.check_in_file("section header table", shoff, u64::from(shnum) * SECTION_HEADER_SIZE)?;
        let table = header
            .sections(endian, self.data)
            .map_err(|e| self.malformed(format!("section header string table: {e}")))?;

        let mut sections = Vec::with_capacity(table.len());
        for (index, sh) in table.iter().enumerate() {
            let name =
                table.section_name(endian, sh).map(|n| String::from_utf8_lossy(n).into_owned()).map_err(|_| {
                    ElfError::CorruptedSection {
                        path: self.path.to_owned(),
                        section: format!("<name offset {}>", sh.sh_name(endian)),
                        index,
                        detail: "has a name outside the section name string table".into(),
                    }
                })?;
            let sh_type = sh.sh_type(endian);
            let flags = sh.sh_flags(endian);
            let has = |f: elf::SectionFlags| flags.0 & f.0 != 0;
            let section = Section {
                index,
                name,
                sh_type: sh_type.0,
                alloc: has(elf::SHF_ALLOC),
                write: has(elf::SHF_WRITE),
                exec: has(elf::SHF_EXECINSTR),
                tls: has(elf::SHF_TLS),
                nobits: sh_type == elf::SHT_NOBITS,
                vma: u64::from(sh.sh_addr(endian)),
                lma: u64::from(sh.sh_addr(endian)),
                size: u64::from(sh.sh_size(endian)),
                align: u64::from(sh.sh_addralign(endian)),
                file_offset: u64::from(sh.sh_offset(endian)),
            };
            let corrupted = |detail: String| ElfError::CorruptedSection {
                path: self.path.to_owned(),
                section: section.name.clone(),
                index,
                detail,
            };
            let in_file = sh_type != elf::SHT_NOBITS && sh_type != elf::SHT_NULL;
            if in_file && section.file_offset + section.size > self.len() {
                return Err(corrupted(format!(
                    "has contents at file bytes {:#x}..{:#x}, past the end of the file ({} bytes)",
                    section.file_offset,
                    section.file_offset + section.size,
                    self.len()
                )));
            }
            if section.alloc && section.vma + section.size > ADDRESS_SPACE_END {
                return Err(corrupted(format!(
                    "runs past the 32-bit address space ({:#x} + {:#x})",
                    section.vma, section.size
                )));
            }
            sections.push(section);
        }
        Ok((sections, table))
    }

    fn symbols(&self, table: &Table<'a>, sections: &[Section]) -> Result<(Vec<Symbol>, Vec<MappingSymbol>), ElfError> {
        let endian = LE;
        let symtab = table
            .symbols(endian, self.data, elf::SHT_SYMTAB)
            .map_err(|e| self.malformed(format!("symbol table: {e}")))?;
        let mut symbols = Vec::new();
        let mut mapping = Vec::new();
        for (i, sym) in symtab.iter().enumerate().skip(1) {
            let kind = match sym.st_type() {
                elf::STT_FUNC => SymbolKind::Function,
                elf::STT_OBJECT => SymbolKind::Object,
                elf::STT_NOTYPE => SymbolKind::NoType,
                _ => continue,
            };
            let binding = match sym.st_bind() {
                elf::STB_GLOBAL => SymbolBinding::Global,
                elf::STB_WEAK => SymbolBinding::Weak,
                elf::STB_LOCAL => SymbolBinding::Local,
                _ => continue,
            };
            let shndx = sym.st_shndx(endian);
            if shndx == elf::SHN_UNDEF || shndx == elf::SHN_COMMON {
                continue;
            }
            let section_index = if shndx == elf::SHN_XINDEX {
                symtab.shndx(endian, object::SymbolIndex(i)).map(|x| x as usize)
            } else {
                shndx.index().map(usize::from)
            };
            let section_index = match section_index {
                Some(x) if x < sections.len() => Some(x),
                Some(x) => {
                    return Err(self.malformed(format!(
                        "symbol #{i} refers to section #{x}, but there are only {} sections",
                        sections.len()
                    )));
                }
                None if shndx == elf::SHN_ABS => None,
                // Other reserved indices (processor/OS specific): nothing to place.
                None => continue,
            };
            let name = symtab
                .symbol_name(endian, sym)
                .map_err(|_| self.malformed(format!("symbol #{i} has a name outside the symbol string table")))?;
            if name.is_empty() {
                continue;
            }
            if name.starts_with(b"$") {
                // An ARM mapping symbol ($t, $a, $d, possibly with a `.suffix`): not a function
                // or object, but it tells code from data inside code sections.
                let kind = match name.get(1..2) {
                    Some(b"t") => Some(MappingKind::Thumb),
                    Some(b"a") => Some(MappingKind::Arm),
                    Some(b"d") => Some(MappingKind::Data),
                    _ => None,
                };
                let plain = name.len() == 2 || name.get(2) == Some(&b'.');
                if let (Some(kind), true, Some(section_index), true) =
                    (kind, plain, section_index, sym.st_bind() == elf::STB_LOCAL)
                {
                    mapping.push(MappingSymbol { address: u64::from(sym.st_value(endian)), kind, section_index });
                }
                continue;
            }
            let name = String::from_utf8_lossy(name).into_owned();
            let value = u64::from(sym.st_value(endian));
            let thumb = kind == SymbolKind::Function && value & 1 == 1;
            symbols.push(Symbol {
                demangled: demangle(&name),
                name,
                address: if thumb { value & !1 } else { value },
                size: u64::from(sym.st_size(endian)),
                kind,
                binding,
                thumb,
                section: section_index.map(|x| sections[x].name.clone()),
                section_index,
            });
        }
        symbols.sort_by(|a, b| (a.address, &a.name, a.size, a.kind).cmp(&(b.address, &b.name, b.size, b.kind)));
        mapping.sort_by_key(|m| (m.section_index, m.address, m.kind));
        mapping.dedup();
        Ok((symbols, mapping))
    }

    /// Load address of each allocated section: the PT_LOAD segment whose file image holds the
    /// section's contents (NOBITS: whose memory range holds it) maps VMA to LMA by `p_paddr`.
    fn assign_lma(&self, mut sections: Vec<Section>, segments: &[LoadSegment]) -> Vec<Section> {
        for s in sections.iter_mut().filter(|s| s.alloc && s.size > 0) {
            let holds = |seg: &&LoadSegment| {
                let in_memory = s.vma >= seg.vaddr && s.vma + s.size <= seg.vaddr + seg.memsz;
                let in_file =
                    s.nobits || (s.file_offset >= seg.offset && s.file_offset + s.size <= seg.offset + seg.filesz);
                in_memory && in_file
            };
            if let Some(seg) = segments.iter().find(holds) {
                s.lma = seg.paddr + (s.vma - seg.vaddr);
            }
        }
        sections
    }
}

type Table<'a> = object::read::elf::SectionTable<'a, elf::FileHeader32<LE>, &'a [u8]>;
