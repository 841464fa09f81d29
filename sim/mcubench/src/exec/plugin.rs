//! The mcubench QEMU TCG plugin (`sim/qemu-plugin`) from the host's side: finding or building
//! it, and what its arguments need from the ELF (region markers, exception handlers, the stack
//! probe's range, the function table). The formats themselves (arguments, functions file,
//! results file) are `mcubench-wire`'s, shared with the plugin.
//!
//! # Which build, and how it is found
//!
//! The plugin is built once per QEMU plugin API ([`PluginApi`]): `libmcubench_qemu_plugin_v1.so`
//! for QEMU 7.2 to 8.2, `libmcubench_qemu_plugin_v3.so` for QEMU 9.1 to 10.x. The QEMU in use
//! decides which one ([`super::version::probe`]). Both builds are **embedded in the mcubench
//! executable**: the crate's build script (`sim/mcubench/build.rs`) builds them with cargo and
//! this module `include_bytes!`es them, so `cargo install` installs everything and the plugin
//! always matches the mcubench that loads it. Once per process and API:
//! 1. `MCUBENCH_QEMU_PLUGIN=off` runs without the plugin (instruction counts then come from
//!    SysTick ticks, and the report says so); any other value is the path of a plugin `.so`
//!    (a development build, say).
//! 2. Otherwise the embedded build is written to the per-user cache ([`cache_dir`]) under its
//!    SHA-256 (`<cache>/plugins/<hash>/<file>`), through a temporary file and a rename, so
//!    concurrent mcubench processes never see half a file, and a file already there is used
//!    only if its bytes are the embedded ones (a corrupted one is replaced).
//!
//! Whatever the source, the file's API tag (a string the plugin carries, see [`api_of`]) must
//! name the API the QEMU needs: a plugin built for another API is refused before QEMU runs,
//! never loaded to fail or crash.

use std::path::{Path, PathBuf};
use std::sync::OnceLock;

use mcubench_elf::ElfImage;
use mcubench_elf::functions::FunctionMap;
use mcubench_wire::{Function, FunctionsFile, Markers, Results, StackProbeRange};

pub use super::version::PluginApi;

/// Environment variable that selects the plugin (`off` or a path).
pub const ENV: &str = "MCUBENCH_QEMU_PLUGIN";

/// Symbols the firmware defines for region markers (see `docs/src/reference/protocol.md`).
pub const ENTER_SYMBOL: &str = "mcubench_region_enter";
pub const EXIT_SYMBOL: &str = "mcubench_region_exit";
pub const REGIONS_SYMBOL: &str = "MCUBENCH_REGIONS";

/// The plugin for the QEMU this process uses ([`super::version::program`]), or `None` when
/// disabled with `MCUBENCH_QEMU_PLUGIN=off`; see [`locate_for`].
pub fn locate() -> Result<Option<PathBuf>, String> {
    let qemu = super::version::probe(super::version::program())?;
    locate_for(qemu.api)
}

/// The plugin built for `api`, or `None` when disabled with `MCUBENCH_QEMU_PLUGIN=off`. Found or
/// built once per process and API; every later call returns the same answer.
pub fn locate_for(api: PluginApi) -> Result<Option<PathBuf>, String> {
    static FOUND: [OnceLock<Result<Option<PathBuf>, String>>; 2] = [OnceLock::new(), OnceLock::new()];
    let slot = PluginApi::ALL.iter().position(|a| *a == api).expect("every API has a slot");
    FOUND[slot].get_or_init(|| find(api).and_then(|so| checked(so, api))).clone()
}

/// Where the plugin for `api` comes from (see the module documentation).
#[derive(Debug, Clone, PartialEq, Eq)]
pub enum Source {
    /// `MCUBENCH_QEMU_PLUGIN=off`.
    Off,
    /// `MCUBENCH_QEMU_PLUGIN=<path>`.
    Given(PathBuf),
    /// The build embedded in this executable, written to (or found in) the per-user cache at
    /// this path.
    Embedded(PathBuf),
}

/// The plugin builds embedded in this executable by `build.rs`, with their SHA-256.
fn embedded(api: PluginApi) -> (&'static [u8], &'static str) {
    match api {
        PluginApi::V1 => (
            include_bytes!(concat!(env!("OUT_DIR"), "/libmcubench_qemu_plugin_v1.so")),
            env!("MCUBENCH_PLUGIN_V1_SHA256"),
        ),
        PluginApi::V3 => (
            include_bytes!(concat!(env!("OUT_DIR"), "/libmcubench_qemu_plugin_v3.so")),
            env!("MCUBENCH_PLUGIN_V3_SHA256"),
        ),
    }
}

/// The SHA-256 of the plugin build for `api` embedded in this executable (hex), as `doctor`
/// shows it.
pub fn embedded_sha256(api: PluginApi) -> &'static str {
    embedded(api).1
}

/// The per-user cache directory for files mcubench writes once and reuses: `$XDG_CACHE_HOME/mcubench`,
/// else `$HOME/.cache/mcubench`, else `mcubench-<uid>` in the temporary directory.
pub fn cache_dir() -> PathBuf {
    let non_empty = |name: &str| std::env::var_os(name).filter(|v| !v.is_empty()).map(PathBuf::from);
    if let Some(xdg) = non_empty("XDG_CACHE_HOME").filter(|p| p.is_absolute()) {
        return xdg.join("mcubench");
    }
    if let Some(home) = non_empty("HOME").filter(|p| p.is_absolute()) {
        return home.join(".cache/mcubench");
    }
    // SAFETY: getuid has no preconditions and cannot fail.
    std::env::temp_dir().join(format!("mcubench-{}", unsafe { libc::getuid() }))
}

/// Where the plugin for `api` comes from, and the file QEMU loads.
pub fn source(api: PluginApi) -> Source {
    if let Some(value) = std::env::var_os(ENV).filter(|v| !v.is_empty()) {
        return if value == "off" { Source::Off } else { Source::Given(PathBuf::from(value)) };
    }
    let (_, hash) = embedded(api);
    Source::Embedded(cache_dir().join("plugins").join(&hash[..16]).join(api.file_name()))
}

fn find(api: PluginApi) -> Result<Option<PathBuf>, String> {
    match source(api) {
        Source::Off => Ok(None),
        Source::Given(path) if path.is_file() => Ok(Some(path)),
        Source::Given(path) => Err(format!("{ENV}={}: no such file", path.display())),
        Source::Embedded(path) => extract(embedded(api).0, &path).map(Some),
    }
}

/// Makes `path` hold exactly `bytes`: kept when it already does, else written through a
/// temporary file in the same directory and renamed over it (atomic: a concurrent reader, or
/// QEMU loading it, sees the old file or the whole new one).
fn extract(bytes: &[u8], path: &Path) -> Result<PathBuf, String> {
    if std::fs::read(path).is_ok_and(|have| have == bytes) {
        return Ok(path.to_path_buf());
    }
    let dir = path.parent().expect("a cache path has a directory");
    let failed = |what: &str, p: &Path, e: std::io::Error| {
        format!(
            "cannot {what} {} to write mcubench's QEMU plugin there: {e}; make the cache directory writable \
             (XDG_CACHE_HOME or HOME pick it), or set {ENV}=<path to a plugin .so>",
            p.display()
        )
    };
    std::fs::create_dir_all(dir).map_err(|e| failed("create", dir, e))?;
    let nanos = std::time::SystemTime::now().duration_since(std::time::UNIX_EPOCH).map_or(0, |d| d.subsec_nanos());
    let temporary = dir.join(format!(".{}.{}.{nanos}.tmp", api_file_stem(path), std::process::id()));
    std::fs::write(&temporary, bytes).map_err(|e| failed("write", &temporary, e))?;
    std::fs::rename(&temporary, path).map_err(|e| {
        let _ = std::fs::remove_file(&temporary);
        failed("rename a temporary file to", path, e)
    })?;
    Ok(path.to_path_buf())
}

fn api_file_stem(path: &Path) -> String {
    path.file_stem().map(|s| s.to_string_lossy().into_owned()).unwrap_or_default()
}

/// `so` if its API tag says `api`; an error naming both and what to do otherwise.
fn checked(so: Option<PathBuf>, api: PluginApi) -> Result<Option<PathBuf>, String> {
    let Some(path) = so else { return Ok(None) };
    let bytes = std::fs::read(&path).map_err(|e| format!("cannot read the QEMU plugin {}: {e}", path.display()))?;
    match api_of(&bytes) {
        Some(n) if n == api.number() => Ok(Some(path)),
        found => Err(format!(
            "the QEMU plugin {} is {}, but this QEMU ({}) needs plugin API {api} ({}); {}",
            path.display(),
            match found {
                Some(n) => format!("built for plugin API v{n}"),
                None => "not an mcubench plugin of this version (it has no API tag)".to_string(),
            },
            api.qemu_range(),
            api.file_name(),
            match std::env::var_os(ENV).filter(|v| !v.is_empty()) {
                Some(_) => format!("point {ENV} at that build or unset it"),
                None => "reinstall mcubench".to_string(),
            }
        )),
    }
}

/// The plugin API a plugin file was built for, from the tag the plugin carries
/// (`mcubench-qemu-plugin api=v<N>`, see the plugin's `MCUBENCH_QEMU_PLUGIN_API`).
pub fn api_of(so: &[u8]) -> Option<u32> {
    const TAG: &[u8] = b"mcubench-qemu-plugin api=v";
    so.windows(TAG.len() + 2).filter(|w| w.starts_with(TAG)).find_map(|w| {
        (w[TAG.len()].is_ascii_digit() && w[TAG.len() + 1] == b'\n').then(|| u32::from(w[TAG.len()] - b'0'))
    })
}

/// The markers of `image`: `None` if it defines none of the three symbols (e.g. C firmware
/// without markers), an error if it defines only some or they are unusable.
pub fn find_markers(image: &ElfImage) -> Result<Option<Markers>, String> {
    let enter = image.symbol(ENTER_SYMBOL);
    let exit = image.symbol(EXIT_SYMBOL);
    let regions = image.symbol(REGIONS_SYMBOL);
    let (enter, exit, regions) = match (enter, exit, regions) {
        (None, None, None) => return Ok(None),
        (Some(a), Some(b), Some(c)) => (a, b, c),
        _ => {
            return Err(format!(
                "the ELF defines some but not all of {ENTER_SYMBOL}, {EXIT_SYMBOL} and {REGIONS_SYMBOL}"
            ));
        }
    };
    if enter.size == 0 || exit.size == 0 || regions.size < 4 {
        return Err(format!("{ENTER_SYMBOL}, {EXIT_SYMBOL} or {REGIONS_SYMBOL} has no size in the ELF"));
    }
    if enter.address == exit.address {
        return Err(format!(
            "{ENTER_SYMBOL} and {EXIT_SYMBOL} are the same function (merged by the compiler?); their bodies must differ"
        ));
    }
    Ok(Some(Markers {
        enter: (enter.address, enter.size),
        exit: (exit.address, exit.size),
        regions: regions.address,
        regions_count: regions.size / 4,
    }))
}

/// The exception handlers of `image`: words 2.. of its vector table (NMI, HardFault, ...,
/// external interrupts), Thumb bit cleared, sorted and deduplicated. Zero words (reserved slots)
/// are skipped; the table ends at the first word that is not a Thumb address in executable code,
/// or after 256 words (16 system exceptions and 240 interrupts, the ARMv7-M maximum).
pub fn exception_handlers(image: &ElfImage) -> Vec<u32> {
    let Some(table) = image.vector_table() else { return Vec::new() };
    let reset = table.reset & !1;
    let in_code = |a: u32| image.sections().iter().any(|s| s.alloc && s.exec && s.contains_vma(u64::from(a)));
    let mut handlers = Vec::new();
    for i in 2..256u64 {
        let Some(w) = image.word_at(table.address + 4 * i) else { break };
        if w == 0 {
            continue;
        }
        if w & 1 == 0 || !in_code(w & !1) {
            break;
        }
        // A handler shared with the reset code would make the start-up look like an exception.
        if w & !1 != reset {
            handlers.push(w & !1);
        }
    }
    handlers.sort_unstable();
    handlers.dedup();
    handlers
}

/// What the code scans give a run's plugin and runner, with the decoder for `core`: the idle
/// loops' sleep instructions where the run ends with `loop_end` (`idle=`), and, with
/// `live_counter`, the loads of the DWT cycle counter to serve ([`super::counter`]).
pub fn scanned(
    image: &ElfImage,
    core: mcubench_wire::Core,
    loop_end: bool,
    live_counter: bool,
) -> Result<(Vec<u32>, Vec<super::CounterLoad>), String> {
    if !loop_end && !live_counter {
        return Ok((Vec::new(), Vec::new()));
    }
    let decoder = mcubench_thumb::Decoder::for_core(core).map_err(|e| format!("no decoder for {core}: {e}"))?;
    let functions = crate::analyze::decoded_functions(image, &decoder);
    let idle = if loop_end { crate::analyze::idle::idle_loops(&functions) } else { Vec::new() };
    let loads =
        if live_counter { crate::analyze::debug_units::cycle_counter_loads(image, &functions) } else { Vec::new() };
    Ok((idle, loads))
}

/// Names of the firmware's own stack-painting helpers, whose stores the probe ignores (they
/// write the paint pattern below the stack pointer): the C protocol header's `mb_measure` (GCC
/// clones such as `mb_measure.constprop.0` included) and the Rust support crate's `measure`.
const PAINTERS: [&str; 2] = ["mb_measure", "mcubench_support::measure"];

/// Linker-script symbols at the lowest address of the stack region (or the highest of the heap
/// below it): cortex-m-rt's `_stack_end`, CMSIS's `__StackLimit` and `__HeapLimit`, vendor
/// scripts' `_sstack`, newlib ports' `__heap_end`, `__heap_limit` and `_heap_end`.
const STACK_FLOOR_SYMBOLS: [&str; 7] =
    ["_stack_end", "__StackLimit", "_sstack", "__HeapLimit", "__heap_end", "__heap_limit", "_heap_end"];

/// Functions through which newlib's malloc grows a heap from `end` towards the stack.
const SBRK_SYMBOLS: [&str; 3] = ["_sbrk", "_sbrk_r", "sbrk"];

/// The stack region of `image`, `[low, high)`, and what `low` came from: `high` is the initial
/// SP (vector table word 0); `low` the highest of [`STACK_FLOOR_SYMBOLS`] below it, or
/// STM32CubeIDE's `_estack - _Min_Stack_Size`; without any of them, the end of the static RAM
/// data below the initial SP if the ELF has no heap (no [`SBRK_SYMBOLS`]). Otherwise the heap
/// and the stack share the memory between `end` and the initial SP and no store address tells
/// them apart: an error that says so (the probe does not guess).
pub fn stack_region(image: &ElfImage) -> Result<(u32, u32, String), String> {
    let hi = image
        .vector_table()
        .ok_or_else(|| "no vector table, so no initial SP for the stack probe".to_string())?
        .initial_sp;
    let mut floors: Vec<(u32, String)> = STACK_FLOOR_SYMBOLS
        .iter()
        .filter_map(|n| image.symbol(n).map(|s| (s.address as u32, format!("`{n}`"))))
        .collect();
    if let (Some(top), Some(size)) = (image.symbol("_estack"), image.symbol("_Min_Stack_Size")) {
        let lo = (top.address as u32).wrapping_sub(size.address as u32);
        floors.push((lo, "`_estack - _Min_Stack_Size`".into()));
    }
    // The highest; of equal ones the first named (a stack symbol before a heap one).
    if let Some((lo, from)) = floors.into_iter().filter(|(a, _)| *a < hi).rev().max_by_key(|(a, _)| *a) {
        return Ok((lo, hi, from));
    }
    if let Some(sbrk) = SBRK_SYMBOLS.iter().find(|n| image.symbol(n).is_some()) {
        return Err(format!(
            "stack region not found: the ELF grows a heap (`{sbrk}`) from `end` towards the stack and has no \
             symbol that bounds the stack ({}, `_estack - _Min_Stack_Size`), so heap and stack stores cannot be \
             told apart; define `__StackLimit` (or `__HeapLimit`) in the linker script",
            STACK_FLOOR_SYMBOLS.map(|n| format!("`{n}`")).join(", ")
        ));
    }
    let lo = image
        .sections()
        .iter()
        .filter(|s| s.alloc && s.size > 0 && (s.write || s.nobits))
        .filter(|s| mcubench_elf::memory::categorize(s) != mcubench_elf::Category::Reservation)
        .map(|s| s.vma.saturating_add(s.size))
        .filter(|&end| end <= u64::from(hi))
        .max()
        .map_or(hi & !0xffff, |end| end as u32);
    Ok((lo, hi, "the end of the static RAM data (no heap)".into()))
}

/// The stack probe for `image`: the stack region [`stack_region`]; stores by the reset handler
/// (which paints the whole stack) and by the stack-painting helpers [`PAINTERS`] are ignored.
/// An error says why there is no stack region.
pub fn stack_probe_range(image: &ElfImage) -> Result<StackProbeRange, String> {
    let (lo, hi, _) = stack_region(image)?;
    let map = FunctionMap::new(image);
    let reset = image.vector_table().map(|v| v.reset & !1);
    let skip = map
        .functions()
        .iter()
        .filter(|f| {
            Some(f.start) == reset
                || PAINTERS.iter().any(|p| {
                    let base = f.demangled.split('.').next().unwrap_or(&f.demangled);
                    base == *p || f.demangled.starts_with(&format!("{p}<"))
                })
        })
        .map(|f| (f.start, f.end))
        .collect();
    Ok(StackProbeRange { lo, hi, skip })
}

/// One function of the shadow stack's table: `[start, start + size)`, its display name.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct FunctionEntry {
    pub start: u32,
    pub size: u32,
    /// Demangled name.
    pub name: String,
    /// The symbol names (mangled) at this address.
    pub symbols: Vec<String>,
}

/// The functions of `image` for the plugin's shadow stack: every Thumb function of the ELF's
/// symbol table (`mcubench_elf::functions`: assembly labels without `.size` end at the next
/// function), by address.
pub fn function_table(image: &ElfImage) -> Vec<FunctionEntry> {
    FunctionMap::new(image)
        .functions()
        .iter()
        .filter(|f| f.thumb && f.end > f.start)
        .map(|f| FunctionEntry {
            start: f.start,
            size: f.end - f.start,
            name: f.demangled.clone(),
            symbols: std::iter::once(f.name.clone()).chain(f.aliases.iter().cloned()).collect(),
        })
        .collect()
}

/// The function of `table` (sorted by address, as [`function_table`] makes it) that holds
/// `addr`: the innermost when ranges nest.
pub fn function_at(table: &[FunctionEntry], addr: u32) -> Option<&FunctionEntry> {
    let i = table.partition_point(|f| f.start <= addr);
    table[..i].iter().rev().take(4).find(|f| addr < f.start.saturating_add(f.size))
}

/// For each name of a scenario's `regions`, the indices into `table` of the functions it names:
/// a demangled name (`keccak::backends::soft::keccak_p`) or a symbol name as stored in the ELF
/// (mangled, or a C name). A demangled name may name several functions (monomorphised copies of
/// a generic function): all of them. A name that names nothing is an error that says so.
pub fn resolve_regions(table: &[FunctionEntry], names: &[String], elf: &str) -> Result<Vec<Vec<usize>>, String> {
    names
        .iter()
        .map(|name| {
            let found: Vec<usize> = table
                .iter()
                .enumerate()
                .filter(|(_, f)| {
                    f.name == *name || f.symbols.iter().any(|s| s == name || mcubench_elf::demangle(s) == *name)
                })
                .map(|(i, _)| i)
                .collect();
            if !found.is_empty() {
                return Ok(found);
            }
            let similar: Vec<&str> = table
                .iter()
                .map(|f| f.name.as_str())
                .filter(|n| n.ends_with(&format!("::{name}")) || n.split('.').next() == Some(name.as_str()))
                .take(5)
                .collect();
            let hint = if similar.is_empty() {
                "; was it inlined everywhere, or is it spelled differently (`mcubench size` lists symbols)?".to_string()
            } else {
                format!("; did you mean {}?", similar.iter().map(|s| format!("`{s}`")).collect::<Vec<_>>().join(", "))
            };
            Err(format!("scenario `regions`: no function named `{name}` in {elf}{hint}"))
        })
        .collect()
}

/// The functions file's text: every function of `table`, with its function region for the
/// functions `regions` (from [`resolve_regions`]) names.
pub fn functions_file(table: &[FunctionEntry], regions: &[Vec<usize>]) -> String {
    let mut functions: Vec<Function> =
        table.iter().map(|f| Function { start: f.start, size: f.size, region: None }).collect();
    for (id, indices) in (0..).zip(regions) {
        for &i in indices {
            functions[i].region = Some(id);
        }
    }
    FunctionsFile { functions }.write()
}

/// Reads the plugin's results file at `path` strictly. A missing, empty or partial file (no final
/// `end`) is an error: absent results are never zeros.
pub fn read_results(path: &Path) -> Result<Results, String> {
    let text = std::fs::read_to_string(path)
        .map_err(|e| format!("the QEMU plugin wrote no results file {}: {e}", path.display()))?;
    if text.is_empty() {
        // The plugin creates the file at install and fills it at QEMU's exit.
        return Err(format!(
            "the QEMU plugin wrote no results to {} (QEMU ended before its exit callbacks ran)",
            path.display()
        ));
    }
    Results::parse(&text).map_err(|e| format!("{}: {e}", path.display()))
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn the_api_tag_is_found_in_a_plugin_file() {
        let so = b"\x7fELF...mcubench-qemu-plugin api=v?\n\0...mcubench-qemu-plugin api=v3\n\0...";
        assert_eq!(api_of(so), Some(3));
        assert_eq!(api_of(b"mcubench-qemu-plugin api=v1\n"), Some(1));
        assert_eq!(api_of(b"\x7fELF no tag"), None);
        let dir = tempdir("tag");
        let old = dir.join("libmcubench_qemu_plugin_v1.so");
        std::fs::write(&old, b"mcubench-qemu-plugin api=v1\n\0").unwrap();
        assert_eq!(checked(Some(old.clone()), PluginApi::V1), Ok(Some(old.clone())));
        assert_eq!(checked(None, PluginApi::V3), Ok(None));
        let e = checked(Some(old.clone()), PluginApi::V3).unwrap_err();
        assert!(
            e.starts_with(&format!(
                "the QEMU plugin {} is built for plugin API v1, but this QEMU (QEMU 9.1 to 10.x) needs plugin API v3 \
                 (libmcubench_qemu_plugin_v3.so)",
                old.display()
            )),
            "{e}"
        );
        std::fs::write(&old, b"\x7fELF").unwrap();
        let e = checked(Some(old), PluginApi::V1).unwrap_err();
        assert!(e.contains("not an mcubench plugin of this version (it has no API tag)"), "{e}");
        std::fs::remove_dir_all(&dir).unwrap();
    }

    #[test]
    fn each_embedded_build_carries_its_api_tag() {
        for api in PluginApi::ALL {
            let (bytes, hash) = embedded(api);
            assert_eq!(api_of(bytes), Some(api.number()), "the embedded {} build", api.file_name());
            assert_eq!(hash.len(), 64, "{hash}");
        }
    }

    #[test]
    fn extraction_writes_once_and_replaces_a_corrupted_file() {
        let dir = tempdir("extract");
        let path = dir.join("cache/plugins/0123/libmcubench_qemu_plugin_v1.so");
        assert_eq!(extract(b"plugin bytes", &path), Ok(path.clone()));
        assert_eq!(std::fs::read(&path).unwrap(), b"plugin bytes");
        let written = std::fs::metadata(&path).unwrap().modified().unwrap();
        std::thread::sleep(std::time::Duration::from_millis(20));
        assert_eq!(extract(b"plugin bytes", &path), Ok(path.clone()));
        assert_eq!(std::fs::metadata(&path).unwrap().modified().unwrap(), written, "an intact file is kept");
        std::fs::write(&path, b"plugin by").unwrap();
        assert_eq!(extract(b"plugin bytes", &path), Ok(path.clone()));
        assert_eq!(std::fs::read(&path).unwrap(), b"plugin bytes");
        let leftovers: Vec<_> =
            std::fs::read_dir(path.parent().unwrap()).unwrap().map(|e| e.unwrap().file_name()).collect();
        assert_eq!(leftovers.len(), 1, "no temporary files are left: {leftovers:?}");
        std::fs::create_dir_all(dir.join("ro")).unwrap();
        let blocked = dir.join("ro/file/libmcubench_qemu_plugin_v1.so");
        std::fs::write(dir.join("ro/file"), b"").unwrap();
        let e = extract(b"x", &blocked).unwrap_err();
        assert!(e.starts_with(&format!("cannot create {}", dir.join("ro/file").display())), "{e}");
        assert!(e.contains(&format!("set {ENV}=")), "{e}");
        std::fs::remove_dir_all(&dir).unwrap();
    }

    fn tempdir(name: &str) -> PathBuf {
        let dir = std::env::temp_dir().join(format!("mcubench-plugin-{name}-{}", std::process::id()));
        std::fs::create_dir_all(&dir).unwrap();
        dir
    }

    #[test]
    fn missing_empty_or_malformed_results_files_are_errors() {
        let missing = read_results(Path::new("/nonexistent/mcubench-results")).unwrap_err();
        assert!(missing.contains("wrote no results file"), "{missing}");
        let dir = std::env::temp_dir().join(format!("mcubench-plugin-test-{}", std::process::id()));
        std::fs::create_dir_all(&dir).unwrap();
        let file = dir.join("results");
        std::fs::write(&file, "").unwrap();
        let empty = read_results(&file).unwrap_err();
        assert!(empty.contains("before its exit callbacks ran"), "{empty}");
        std::fs::write(&file, format!("{}\ninsns 5\n", mcubench_wire::HEADER)).unwrap();
        let partial = read_results(&file).unwrap_err();
        assert!(partial.starts_with(&format!("{}: partial results file", file.display())), "{partial}");
        std::fs::write(&file, format!("{}\ninsns 5\nend\n", mcubench_wire::HEADER)).unwrap();
        assert_eq!(read_results(&file).map(|r| r.insns), Ok(5));
        std::fs::remove_dir_all(&dir).unwrap();
    }

    #[test]
    fn regions_resolve_by_demangled_or_symbol_name_and_unknown_names_are_errors() {
        let f = |start: u32, name: &str, symbol: &str| FunctionEntry {
            start,
            size: 16,
            name: name.into(),
            symbols: vec![symbol.into()],
        };
        let table = vec![
            f(0x100, "crc32", "crc32"),
            f(0x200, "keccak::backends::soft::keccak_p", "_ZN6keccak8backends4soft8keccak_p17h0123456789abcdefE"),
            f(0x300, "keccak::backends::soft::keccak_p", "_ZN6keccak8backends4soft8keccak_p17hfedcba9876543210E"),
            f(0x400, "mb_measure.constprop.0", "mb_measure.constprop.0"),
        ];
        let names = |v: &[&str]| v.iter().map(|s| s.to_string()).collect::<Vec<_>>();
        let r = resolve_regions(
            &table,
            &names(&[
                "crc32",
                "keccak::backends::soft::keccak_p",
                "_ZN6keccak8backends4soft8keccak_p17h0123456789abcdefE",
            ]),
            "x.elf",
        )
        .unwrap();
        assert_eq!(r, vec![vec![0], vec![1, 2], vec![1]]);
        assert_eq!(functions_file(&table, &r[..2]), "0x100 16 0\n0x200 16 1\n0x300 16 1\n0x400 16\n");
        let e = resolve_regions(&table, &names(&["keccak_p"]), "x.elf").unwrap_err();
        assert!(
            e.contains("no function named `keccak_p` in x.elf; did you mean `keccak::backends::soft::keccak_p`"),
            "{e}"
        );
        let e = resolve_regions(&table, &names(&["mb_measure"]), "x.elf").unwrap_err();
        assert!(e.contains("did you mean `mb_measure.constprop.0`"), "{e}");
        let e = resolve_regions(&table, &names(&["nothing"]), "x.elf").unwrap_err();
        assert!(e.contains("`nothing`") && e.contains("inlined"), "{e}");
    }
}
