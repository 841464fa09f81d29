//! The mcubench QEMU TCG plugin (`sim/qemu-plugin`) from the host's side: finding or building
//! it, resolving the region markers in an ELF, the `-plugin` argument, and reading its results.
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

use std::collections::BTreeMap;
use std::path::{Path, PathBuf};
use std::process::{Command, Stdio};
use std::sync::OnceLock;

use mcubench_elf::ElfImage;
use mcubench_elf::functions::FunctionMap;

/// Environment variable that selects the plugin (`off` or a path).
pub const ENV: &str = "MCUBENCH_QEMU_PLUGIN";
/// The plugin's file name as cargo builds it.
pub const FILE_NAME: &str = "libmcubench_qemu_plugin.so";
/// First line of a results file this host reads.
pub const RESULTS_HEADER: &str = "mcubench-qemu-plugin/3";

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

/// Where the region markers are in one ELF.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub struct Markers {
    pub enter: (u64, u64),
    pub exit: (u64, u64),
    pub regions: u64,
    pub regions_count: u64,
}

impl Markers {
    /// The markers of `image`: `None` if it defines none of the three symbols (e.g. C firmware
    /// without markers), an error if it defines only some or they are unusable.
    pub fn find(image: &ElfImage) -> Result<Option<Markers>, String> {
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
}

/// The timing model's core for a board (`core=` of the plugin). mps2-an500's Cortex-M7 model is
/// an approximation and says so in its description.
pub fn timing_core(board: &crate::Board) -> mcubench_timing::Core {
    use crate::config::board::Core as B;
    use mcubench_timing::Core as T;
    match board.core {
        B::CortexM0 => T::CortexM0,
        B::CortexM3 => T::CortexM3,
        B::CortexM4F => T::CortexM4,
        B::CortexM7 => T::CortexM7,
        B::CortexM33 => T::CortexM33,
    }
}

/// The `-plugin` option value: `<so>,out=<file>[,enter=...]`. Commas in paths are doubled, as
/// QEMU's option syntax wants. No cycle estimates; see [`plugin_option_with`].
pub fn plugin_option(so: &Path, out: &Path, markers: Option<&Markers>) -> String {
    plugin_option_with(so, out, markers, None, None)
}

/// [`plugin_option`] plus `core=` (cycle estimates with that core's model) and `functions=` with
/// `profile=on` (per-function profile; needs `core`).
pub fn plugin_option_with(
    so: &Path,
    out: &Path,
    markers: Option<&Markers>,
    core: Option<mcubench_timing::Core>,
    functions: Option<&Path>,
) -> String {
    plugin_option_from(
        so,
        out,
        &PluginOptions { markers, core, functions, profile: functions.is_some(), ..PluginOptions::default() },
    )
}

/// Everything the host can ask of the plugin (arguments: `sim/qemu-plugin/src/lib.rs`).
#[derive(Debug, Clone, Default)]
pub struct PluginOptions<'a> {
    pub markers: Option<&'a Markers>,
    /// Cycle estimates with this core's model (needed by everything below).
    pub core: Option<mcubench_timing::Core>,
    /// The functions file ([`functions_file`]): shadow call stack, function regions.
    pub functions: Option<&'a Path>,
    /// Report the per-function profile (needs `functions`).
    pub profile: bool,
    /// Wait states of the cycle model.
    pub wait_states: &'a [mcubench_timing::WaitStates],
    /// The stack probe: ([lo, hi) of the stack, code ranges whose stores are ignored).
    pub stack_probe: Option<&'a StackProbeRange>,
    /// Exception handler entry addresses ([`exception_handlers`]): the plugin prices exception
    /// entry and return (needs `core`).
    pub handlers: &'a [u32],
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

/// What the stack probe watches: stores to `[lo, hi)`, except those by the code in `skip`.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct StackProbeRange {
    pub lo: u32,
    pub hi: u32,
    pub skip: Vec<(u32, u32)>,
}

/// Names of the firmware's own stack-painting helpers, whose stores the probe ignores (they
/// write the paint pattern below the stack pointer): the C protocol header's `mb_measure` (GCC
/// clones such as `mb_measure.constprop.0` included) and the Rust support crate's `measure`.
const PAINTERS: [&str; 2] = ["mb_measure", "mcubench_support::measure"];

impl StackProbeRange {
    /// The probe for `image`: the stack from the lowest address it may reach (cortex-m-rt's
    /// `_stack_end`, else the end of the static RAM data below the initial SP) up to the initial
    /// SP (vector table word 0); stores by the reset handler (which paints the whole stack) and
    /// by the stack-painting helpers [`PAINTERS`] are ignored. `None` without a vector table.
    pub fn for_image(image: &ElfImage) -> Option<StackProbeRange> {
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
}

/// [`plugin_option`] with every option.
pub fn plugin_option_from(so: &Path, out: &Path, o: &PluginOptions<'_>) -> String {
    let esc = |p: &Path| p.display().to_string().replace(',', ",,");
    let mut s = format!("{},out={}", esc(so), esc(out));
    if let Some(m) = o.markers {
        s.push_str(&format!(
            ",enter=0x{:x},enter_size={},exit=0x{:x},exit_size={},regions=0x{:x},regions_count={}",
            m.enter.0, m.enter.1, m.exit.0, m.exit.1, m.regions, m.regions_count
        ));
    }
    if let Some(core) = o.core {
        s.push_str(&format!(",core={}", core.label()));
    }
    if let Some(f) = o.functions {
        s.push_str(&format!(",functions={}", esc(f)));
    }
    if o.profile {
        s.push_str(",profile=on");
    }
    for w in o.wait_states {
        s.push_str(&format!(",wait=0x{:x}:0x{:x}:{}:{}", w.start, w.end, w.fetch, w.data));
    }
    if let Some(p) = o.stack_probe {
        s.push_str(&format!(",stack=0x{:x}:0x{:x}", p.lo, p.hi));
        for (a, b) in &p.skip {
            s.push_str(&format!(",stack_skip=0x{a:x}:0x{b:x}"));
        }
    }
    for h in o.handlers {
        s.push_str(&format!(",handler=0x{h:x}"));
    }
    s
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

/// The functions file: `0x<start> <size>[ <region>]` per function of `table`, the region column
/// for the functions `regions` (from [`resolve_regions`]) names.
pub fn functions_file(table: &[FunctionEntry], regions: &[Vec<usize>]) -> String {
    let mut region_of = vec![None; table.len()];
    for (id, indices) in regions.iter().enumerate() {
        for &i in indices {
            region_of[i] = Some(id);
        }
    }
    table
        .iter()
        .zip(region_of)
        .map(|(f, r)| match r {
            Some(id) => format!("0x{:x} {} {id}\n", f.start, f.size),
            None => format!("0x{:x} {}\n", f.start, f.size),
        })
        .collect()
}

/// One region id's statistics (semantics: `sim/qemu-plugin/src/regions.rs`).
#[derive(Debug, Clone, Default, PartialEq, Eq)]
pub struct RegionStats {
    pub entries: u64,
    pub completed: u64,
    pub total: u64,
    pub min: u64,
    pub max: u64,
    /// Estimated cycles of the completed activations: (sum, min, max); present exactly when the
    /// run has a cycle total.
    pub cycles: Option<(u64, u64, u64)>,
    /// Stack probe: the lowest stack address a probed store wrote during a completed activation.
    pub stack_low: Option<u32>,
}

/// One call-tree node of a profile: self cost of the stack `frames` (outermost first; indices into
/// the functions file the host passed, `None` for code outside every function).
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct StackCost {
    pub frames: Vec<Option<u32>>,
    pub cycles: u64,
    pub insns: u64,
}

/// A complete results file.
#[derive(Debug, Clone, Default, PartialEq, Eq)]
pub struct PluginResults {
    /// Whole-run instructions (TB-granular: device-register reads outside regions may add a few).
    pub insns: u64,
    pub regions: BTreeMap<u32, RegionStats>,
    /// Function regions, by index in the scenario's `regions` list.
    pub functions: BTreeMap<u32, RegionStats>,
    /// Stack probe: `Some(lowest address written)` when probing (`Some(None)`: no probed store).
    pub probe: Option<Option<u32>>,
    /// Region ids still open at exit.
    pub open: Vec<u32>,
    /// Marker misuse the plugin saw (an exit that does not match the innermost open region).
    pub errors: Vec<String>,
    /// Whole-run estimated cycles: `None` without `core=`; `Some(Err(reason))` when the plugin
    /// could not price something that ran (then no region has cycles either).
    pub cycles: Option<Result<u64, String>>,
    /// The cycle model's description (with `core=`).
    pub model: Option<String>,
    /// The profile (with `functions=`).
    pub stacks: Vec<StackCost>,
}

impl PluginResults {
    /// Reads a results file strictly. A missing or partial file (no final `end`) is an error:
    /// absent results are never zeros.
    pub fn read(path: &Path) -> Result<PluginResults, String> {
        let text = std::fs::read_to_string(path)
            .map_err(|e| format!("the QEMU plugin wrote no results file {}: {e}", path.display()))?;
        if text.is_empty() {
            // The plugin creates the file at install and fills it at QEMU's exit.
            return Err(format!(
                "the QEMU plugin wrote no results to {} (QEMU ended before its exit callbacks ran)",
                path.display()
            ));
        }
        Self::parse(&text).map_err(|e| format!("{}: {e}", path.display()))
    }

    pub fn parse(text: &str) -> Result<PluginResults, String> {
        let mut lines = text.lines().enumerate().map(|(i, l)| (i + 1, l));
        match lines.next() {
            Some((_, RESULTS_HEADER)) => {}
            other => {
                return Err(format!("not a `{RESULTS_HEADER}` results file (first line {:?})", other.map(|o| o.1)));
            }
        }
        let mut r = PluginResults::default();
        let mut insns = None;
        let mut ended = false;
        for (n, line) in lines {
            let bad = |what: &str| format!("line {n}: {what}: `{line}`");
            if ended {
                return Err(bad("text after `end`"));
            }
            let (kind, rest) = line.split_once(' ').unwrap_or((line, ""));
            match kind {
                "end" if rest.is_empty() => ended = true,
                "insns" => insns = Some(rest.parse().map_err(|_| bad("bad instruction count"))?),
                "cycles" | "cycles-unavailable" if r.cycles.is_some() => return Err(bad("cycles given twice")),
                "cycles" => r.cycles = Some(Ok(rest.parse().map_err(|_| bad("bad cycle count"))?)),
                "cycles-unavailable" => r.cycles = Some(Err(rest.to_string())),
                "model" if r.model.is_some() => return Err(bad("model given twice")),
                "model" => r.model = Some(rest.to_string()),
                "stack" => {
                    let mut cycles = None;
                    let mut insns = None;
                    let mut frames = None;
                    for token in rest.split(' ') {
                        match token.split_once('=') {
                            Some(("cycles", v)) if cycles.is_none() => cycles = v.parse::<u64>().ok(),
                            Some(("insns", v)) if insns.is_none() => insns = v.parse::<u64>().ok(),
                            Some(("frames", v)) if frames.is_none() => {
                                frames = v
                                    .split(';')
                                    .map(|f| if f == "-" { Some(None) } else { f.parse::<u32>().ok().map(Some) })
                                    .collect::<Option<Vec<_>>>()
                            }
                            _ => return Err(bad("bad stack field")),
                        }
                    }
                    match (cycles, insns, frames) {
                        (Some(cycles), Some(insns), Some(frames)) => r.stacks.push(StackCost { frames, cycles, insns }),
                        _ => return Err(bad("stack needs cycles=, insns= and frames=")),
                    }
                }
                "error" => r.errors.push(rest.to_string()),
                "probe" if r.probe.is_some() => return Err(bad("probe given twice")),
                "probe" => {
                    r.probe = Some(match rest {
                        "low=none" => None,
                        _ => Some(
                            rest.strip_prefix("low=").and_then(|v| v.parse().ok()).ok_or_else(|| bad("bad probe"))?,
                        ),
                    })
                }
                "region" | "open" | "function" => {
                    let mut f = BTreeMap::new();
                    for token in rest.split(' ') {
                        let (k, v) = token.split_once('=').ok_or_else(|| bad("not key=value"))?;
                        let v: u64 = v.parse().map_err(|_| bad("not a number"))?;
                        if f.insert(k, v).is_some() {
                            return Err(bad("repeated field"));
                        }
                    }
                    let mut take = |k: &str| f.remove(k).ok_or_else(|| bad(&format!("no `{k}`")));
                    let id = u32::try_from(take("id")?).map_err(|_| bad("id out of range"))?;
                    if kind == "open" {
                        take("at")?;
                        r.open.push(id);
                    } else {
                        let mut s = RegionStats {
                            entries: take("entries")?,
                            completed: take("completed")?,
                            total: take("total")?,
                            min: take("min")?,
                            max: take("max")?,
                            cycles: None,
                            stack_low: None,
                        };
                        if matches!(r.cycles, Some(Ok(_))) {
                            s.cycles = Some((take("cycles")?, take("cycles_min")?, take("cycles_max")?));
                        }
                        if let Some(low) = f.remove("stack_low") {
                            s.stack_low = Some(u32::try_from(low).map_err(|_| bad("stack_low out of range"))?);
                        }
                        let map = if kind == "region" { &mut r.regions } else { &mut r.functions };
                        if map.insert(id, s).is_some() {
                            return Err(bad("region listed twice"));
                        }
                    }
                    if let Some(k) = f.keys().next() {
                        return Err(bad(&format!("unknown field `{k}`")));
                    }
                }
                _ => return Err(bad("unknown line")),
            }
        }
        if !ended {
            return Err("partial results file (no final `end` line): QEMU did not exit normally".into());
        }
        r.insns = insns.ok_or("results file lacks `insns`")?;
        if r.cycles.is_some() != r.model.is_some() {
            return Err("a cycle result without a model line, or the reverse".into());
        }
        Ok(r)
    }

    /// The estimated cycles of region `id`'s single activation: `Ok(None)` without a cycle
    /// model, `Err` when the region did not run exactly once (see [`Self::single_activation`]).
    pub fn single_activation_cycles(&self, id: u32) -> Result<Option<u64>, String> {
        self.single_activation(id)?;
        Ok(self.regions.get(&id).and_then(|s| s.cycles).map(|c| c.0))
    }

    /// The exact instruction count of region `id`, which must have run exactly once.
    pub fn single_activation(&self, id: u32) -> Result<u64, String> {
        match self.regions.get(&id) {
            Some(s) if s.completed == 1 && s.entries == 1 => Ok(s.total),
            Some(s) => Err(format!(
                "region {id} was entered {} times and completed {} times; a KAT's region must run exactly once",
                s.entries, s.completed
            )),
            None => Err(format!("the QEMU plugin saw no activation of region {id}")),
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn parses_a_results_file() {
        let r = PluginResults::parse(
            "mcubench-qemu-plugin/3\ninsns 1000\n\
             region id=0 entries=1 completed=1 total=500 min=500 max=500\n\
             region id=3 entries=2 completed=1 total=7 min=7 max=7\nopen id=3 at=900\nerror oops\nend\n",
        )
        .unwrap();
        assert_eq!(r.insns, 1000);
        assert_eq!(r.single_activation(0), Ok(500));
        assert!(r.single_activation(3).unwrap_err().contains("entered 2 times"));
        assert!(r.single_activation(4).unwrap_err().contains("no activation"));
        assert_eq!(r.open, vec![3]);
        assert_eq!(r.errors, vec!["oops".to_string()]);
    }

    #[test]
    fn parses_cycles_models_and_stacks() {
        let r = PluginResults::parse(
            "mcubench-qemu-plugin/3\ninsns 10\ncycles 25\nmodel cortex-m4 model\n\
             region id=0 entries=1 completed=1 total=5 min=5 max=5 cycles=9 cycles_min=9 cycles_max=9\n\
             stack cycles=20 insns=8 frames=0;-;3\nend\n",
        )
        .unwrap();
        assert_eq!(r.cycles, Some(Ok(25)));
        assert_eq!(r.model.as_deref(), Some("cortex-m4 model"));
        assert_eq!(r.single_activation_cycles(0), Ok(Some(9)));
        assert_eq!(r.stacks, vec![StackCost { frames: vec![Some(0), None, Some(3)], cycles: 20, insns: 8 }]);
        let f = PluginResults::parse(
            "mcubench-qemu-plugin/3\ninsns 10\ncycles 25\nmodel m\n\
             region id=0 entries=1 completed=1 total=5 min=5 max=5 cycles=9 cycles_min=9 cycles_max=9 stack_low=100\n\
             function id=1 entries=4 completed=4 total=8 min=2 max=2 cycles=16 cycles_min=4 cycles_max=4\n\
             probe low=96\nend\n",
        )
        .unwrap();
        assert_eq!(f.regions[&0].stack_low, Some(100));
        assert_eq!(f.functions[&1].cycles, Some((16, 4, 4)));
        assert_eq!(f.functions[&1].stack_low, None);
        assert_eq!(f.probe, Some(Some(96)));
        let u = PluginResults::parse(
            "mcubench-qemu-plugin/3\ninsns 10\ncycles-unavailable undecodable 0x1 at 0x2\nmodel m\n\
             region id=0 entries=1 completed=1 total=5 min=5 max=5\nend\n",
        )
        .unwrap();
        assert_eq!(u.cycles, Some(Err("undecodable 0x1 at 0x2".into())));
        assert_eq!(u.single_activation_cycles(0), Ok(None));
        for (text, expected) in [
            ("mcubench-qemu-plugin/3\ninsns 1\ncycles 2\nend\n", "without a model"),
            (
                "mcubench-qemu-plugin/3\ninsns 1\ncycles 2\nmodel m\nregion id=0 entries=1 completed=1 total=1 min=1 max=1\nend\n",
                "no `cycles`",
            ),
            ("mcubench-qemu-plugin/3\ninsns 1\ncycles 2\ncycles 3\nmodel m\nend\n", "twice"),
            ("mcubench-qemu-plugin/3\ninsns 1\nstack cycles=1 frames=0\nend\n", "stack needs"),
        ] {
            let e = PluginResults::parse(text).unwrap_err();
            assert!(e.contains(expected), "{text:?}: {e}");
        }
    }

    #[test]
    fn partial_or_malformed_files_are_errors() {
        for (text, expected) in [
            ("", "not a `mcubench-qemu-plugin/3`"),
            ("mcubench-qemu-plugin/3\ninsns 5\n", "partial results file"),
            ("mcubench-qemu-plugin/3\nend\n", "lacks `insns`"),
            ("mcubench-qemu-plugin/3\ninsns x\nend\n", "bad instruction count"),
            ("mcubench-qemu-plugin/3\ninsns 1\nregion id=1 entries=1\nend\n", "no `completed`"),
            (
                "mcubench-qemu-plugin/3\ninsns 1\nregion id=1 entries=1 completed=1 total=1 min=1 max=1 x=1\nend\n",
                "unknown field",
            ),
            ("mcubench-qemu-plugin/3\ninsns 1\nend\nmore\n", "after `end`"),
            ("mcubench-qemu-plugin/3\ninsns 1\nbogus\nend\n", "unknown line"),
        ] {
            let e = PluginResults::parse(text).unwrap_err();
            assert!(e.contains(expected), "{text:?}: {e}");
        }
        let missing = PluginResults::read(Path::new("/nonexistent/mcubench-results")).unwrap_err();
        assert!(missing.contains("wrote no results file"), "{missing}");
    }

    #[test]
    fn option_escapes_commas_and_lists_markers() {
        let m = Markers { enter: (0x100, 24), exit: (0x118, 26), regions: 0x2000_0008, regions_count: 256 };
        assert_eq!(
            plugin_option(Path::new("/a,b/p.so"), Path::new("/t/out"), Some(&m)),
            "/a,,b/p.so,out=/t/out,enter=0x100,enter_size=24,exit=0x118,exit_size=26,regions=0x20000008,regions_count=256"
        );
        assert_eq!(plugin_option(Path::new("/p.so"), Path::new("/o"), None), "/p.so,out=/o");
        assert_eq!(
            plugin_option_with(
                Path::new("/p.so"),
                Path::new("/o"),
                None,
                Some(mcubench_timing::Core::CortexM0Plus),
                Some(Path::new("/f,n"))
            ),
            "/p.so,out=/o,core=cortex-m0+,functions=/f,,n,profile=on"
        );
        let ws = [mcubench_timing::WaitStates { start: 0, end: 0x40_0000, fetch: 1, data: 2 }];
        let probe = StackProbeRange { lo: 0x2000_0000, hi: 0x2000_4000, skip: vec![(0x40, 0x60)] };
        assert_eq!(
            plugin_option_from(
                Path::new("/p.so"),
                Path::new("/o"),
                &PluginOptions {
                    core: Some(mcubench_timing::Core::CortexM4),
                    functions: Some(Path::new("/f")),
                    wait_states: &ws,
                    stack_probe: Some(&probe),
                    handlers: &[0x100, 0x140],
                    ..PluginOptions::default()
                }
            ),
            "/p.so,out=/o,core=cortex-m4,functions=/f,wait=0x0:0x400000:1:2,stack=0x20000000:0x20004000,stack_skip=0x40:0x60,handler=0x100,handler=0x140"
        );
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
