//! The mcubench QEMU TCG plugin (`sim/qemu-plugin`) from the host's side: finding or building
//! it, and what its arguments need from the ELF (region markers, exception handlers, the stack
//! probe's range, the function table). The formats themselves (arguments, functions file,
//! results file) are `mcubench-wire`'s, shared with the plugin.
//!
//! # How the plugin is found
//!
//! Once per process, in this order:
//! 1. `MCUBENCH_QEMU_PLUGIN=off` runs without the plugin (instruction counts then come from
//!    SysTick ticks, and the report says so); any other value is the path of the plugin `.so`.
//! 2. In a source checkout (the mcubench crate's source tree is still where it was compiled, as
//!    under `cargo run` and `cargo test`): `cargo build --release -p mcubench-qemu-plugin` into
//!    `<workspace target dir>/qemu-plugin/`. Cargo makes this a no-op when it is up to date, so
//!    the plugin is never stale, and its own target directory means no lock contention with the
//!    cargo that runs the tests.
//! 3. `libmcubench_qemu_plugin.so` next to the running executable (an installed mcubench).
//!
//! Failing all three is an error that says what to do: the runner never silently replaces exact
//! counts with tick-derived ones.

use std::path::{Path, PathBuf};
use std::process::{Command, Stdio};
use std::sync::OnceLock;

use mcubench_elf::ElfImage;
use mcubench_elf::functions::FunctionMap;
use mcubench_wire::{Function, FunctionsFile, Markers, Results, StackProbeRange};

/// Environment variable that selects the plugin (`off` or a path).
pub const ENV: &str = "MCUBENCH_QEMU_PLUGIN";
/// The plugin's file name as cargo builds it.
pub const FILE_NAME: &str = "libmcubench_qemu_plugin.so";

/// Symbols the firmware defines for region markers (see `docs/src/reference/protocol.md`).
pub const ENTER_SYMBOL: &str = "mcubench_region_enter";
pub const EXIT_SYMBOL: &str = "mcubench_region_exit";
pub const REGIONS_SYMBOL: &str = "MCUBENCH_REGIONS";

/// The plugin to load, or `None` when disabled with `MCUBENCH_QEMU_PLUGIN=off`. Found or built
/// once per process; every later call returns the same answer.
pub fn locate() -> Result<Option<PathBuf>, String> {
    static FOUND: OnceLock<Result<Option<PathBuf>, String>> = OnceLock::new();
    FOUND.get_or_init(find).clone()
}

fn find() -> Result<Option<PathBuf>, String> {
    if let Some(value) = std::env::var_os(ENV).filter(|v| !v.is_empty()) {
        if value == "off" {
            return Ok(None);
        }
        let path = PathBuf::from(value);
        return if path.is_file() { Ok(Some(path)) } else { Err(format!("{ENV}={}: no such file", path.display())) };
    }
    let workspace = Path::new(env!("CARGO_MANIFEST_DIR")).join("../..");
    if workspace.join("sim/qemu-plugin/Cargo.toml").is_file() {
        return build_in(&workspace).map(Some);
    }
    if let Some(path) = std::env::current_exe().ok().and_then(|exe| Some(exe.parent()?.join(FILE_NAME)))
        && path.is_file()
    {
        return Ok(Some(path));
    }
    Err(format!(
        "the mcubench QEMU plugin ({FILE_NAME}) was not found next to the mcubench executable and there \
         is no source tree to build it from; set {ENV}=<path to {FILE_NAME}>, or {ENV}=off to count \
         instructions from SysTick ticks (resolution one tick)"
    ))
}

/// Builds the plugin with cargo in the workspace at `workspace` and returns the `.so`.
fn build_in(workspace: &Path) -> Result<PathBuf, String> {
    let target = crate::build::target_directory(workspace).map_err(|e| e.to_string())?;
    let cargo = std::env::var_os("CARGO").unwrap_or_else(|| "cargo".into());
    let out = Command::new(cargo)
        .current_dir(workspace)
        .args(["build", "--release", "--quiet", "-p", "mcubench-qemu-plugin", "--target-dir"])
        .arg(&target)
        .env_remove("CARGO_TARGET_DIR")
        .env_remove("CARGO_BUILD_TARGET")
        .stdin(Stdio::null())
        .output()
        .map_err(|e| format!("cannot run cargo to build the QEMU plugin: {e}"))?;
    if !out.status.success() {
        return Err(format!(
            "building the QEMU plugin (`cargo build --release -p mcubench-qemu-plugin`) failed:\n{}\n\
             hint: {ENV}=off runs without it (instruction counts from SysTick ticks)",
            String::from_utf8_lossy(&out.stderr).trim_end()
        ));
    }
    let so = target.join("release").join(FILE_NAME);
    if so.is_file() { Ok(so) } else { Err(format!("cargo built the QEMU plugin but {} is missing", so.display())) }
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

/// Names of the firmware's own stack-painting helpers, whose stores the probe ignores (they
/// write the paint pattern below the stack pointer): the C protocol header's `mb_measure` (GCC
/// clones such as `mb_measure.constprop.0` included) and the Rust support crate's `measure`.
const PAINTERS: [&str; 2] = ["mb_measure", "mcubench_support::measure"];

/// The stack probe for `image`: the stack from the lowest address it may reach (cortex-m-rt's
/// `_stack_end`, else the end of the static RAM data below the initial SP) up to the initial SP
/// (vector table word 0); stores by the reset handler (which paints the whole stack) and by the
/// stack-painting helpers [`PAINTERS`] are ignored. `None` without a vector table.
pub fn stack_probe_range(image: &ElfImage) -> Option<StackProbeRange> {
    let hi = image.vector_table()?.initial_sp;
    let lo = match image.symbol("_stack_end") {
        Some(s) if (s.address as u32) < hi => s.address as u32,
        _ => image
            .sections()
            .iter()
            .filter(|s| s.alloc && s.size > 0 && (s.write || s.nobits))
            .filter(|s| mcubench_elf::memory::categorize(s) != mcubench_elf::Category::Reservation)
            .map(|s| s.vma.saturating_add(s.size))
            .filter(|&end| end <= u64::from(hi))
            .max()
            .map_or(hi & !0xffff, |end| end as u32),
    };
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
    Some(StackProbeRange { lo, hi, skip })
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
