//! The plugin's arguments: [`PluginArgs`], written by the host with [`PluginArgs::to_option`] and
//! read by the plugin with [`PluginArgs::parse`].
//!
//! # Encoding
//!
//! QEMU loads the plugin with `-plugin <file.so>,<key>=<value>,...` and hands it the
//! `<key>=<value>` items (a `,,` in the option is a literal comma, so paths may contain commas):
//!
//! ```text
//! qemu-system-arm ... -plugin libmcubench_qemu_plugin.so,out=<file>[,enter=0x..,enter_size=N,
//!     exit=0x..,exit_size=N,regions=0x..,regions_count=N][,core=cortex-m4f][,functions=<file>]
//!     [,profile=on][,wait=<start>:<end>:<fetch>:<data>]...[,stack=<lo>:<hi>][,stack_skip=<start>:<end>]...
//!     [,handler=<addr>]...[,param=<name>:<value>]...[,flash=<start>:<end>:<ws>:<line>]...
//!     [,prefetch=on][,icache=<size>:<ways>:<line>][,dcache=<size>:<ways>:<line>][,unified=on]
//!     [,region_arg=<region>:<register>]...[,trace=<file>]
//! ```
//!
//! Numbers are decimal or `0x` hexadecimal; unknown keys are refused. The keys:
//! * `out`: the results file (see [`crate::results`]), written at QEMU exit (required).
//! * `enter`, `enter_size`, `exit`, `exit_size`: address (Thumb bit ignored) and size in bytes of
//!   `mcubench_region_enter` / `mcubench_region_exit`; `regions`, `regions_count`: address of
//!   the `MCUBENCH_REGIONS` `u32` array and its length ([`Markers`]). The six come all together
//!   or not at all; without them only `insns` is reported.
//! * `core`: a [`Core::name`] (`cortex-m0`, `cortex-m0+`, `cortex-m3`, `cortex-m4`,
//!   `cortex-m4f`, `cortex-m7`, `cortex-m33`): estimate cycles with that core's model and decode
//!   its instruction set.
//! * `functions`: the functions file ([`crate::functions`]): the plugin keeps a shadow call stack
//!   over them; a function with a region makes its calls activations of that function region.
//!   Needs `core`.
//! * `profile=on` (or `off`): report the per-function profile (`stack` lines); needs `functions`.
//! * `wait=<start>:<end>:<fetch>:<data>` (repeatable): [`WaitStates`] of the range
//!   `[start, end)` for the cycle model; needs `core`. Without any, the model assumes zero wait
//!   states.
//! * `stack=<lo>:<hi>`: the stack probe ([`StackProbeRange`]): stores to `[lo, hi)` record the
//!   lowest address written, for the whole run and per region. `stack_skip=<start>:<end>`
//!   (repeatable): stores by instructions in that code range are not probed. Needs `core`.
//! * `handler=<addr>` (repeatable, Thumb bit ignored): the entry address of an exception handler;
//!   the cycle model then prices exception entry, return and tail-chaining. Needs `core`.
//! * `param=<name>:<value>` (repeatable): a parameter of the cycle model by its scenario name
//!   (`branch-refill:2`, `divide:7`, ...); the plugin refuses a name its model does not have.
//!   Needs `core`.
//! * `flash=<start>:<end>:<ws>:<line>` (repeatable), `prefetch=on|off`,
//!   `icache=<size>:<ways>:<line>`, `dcache=<size>:<ways>:<line>`, `unified=on|off` (loads
//!   through the instruction cache): the memory system
//!   ([`MemoryConfig`]). Caches and prefetch need a `flash=` region; all need `core`.
//! * `region_arg=<region>:<register>` (repeatable): each call of function region `<region>` (an
//!   index of the functions file) processes as many bytes as argument register r`<register>`
//!   (0 to 3) holds at the call's entry; the plugin reads it and reports it as the call's
//!   `bytes=` ([`crate::results`]). Needs `functions` and a plugin that can read registers (QEMU
//!   plugin API v2 or later: the plugin built for API v1 refuses it).
//! * `trace=<file>`: also write the run trace ([`crate::trace`]) to `<file>`. Needs `core`.
//! * `loop_end=on`: end the run at the first loop on itself outside every exception handler: a
//!   branch to itself, or a `wfi`/`wfe` at an `idle=<addr>` (repeatable: a sleep instruction of an
//!   idle loop, which holds nothing but sleeps, `nop`s and barriers before its branch back). Needs
//!   `core`; `idle=` needs `loop_end=on`.
//! * `counter=<file>`: the cycle counter's value at each read ([`crate::counter`]). Needs `core`.

use std::collections::BTreeMap;
use std::path::{Path, PathBuf};

use crate::memory::{CacheGeometry, FlashRegion, MemoryConfig};
use crate::{Core, Error};

/// Wait states of a memory range, for the cycle model (`wait=`).
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub struct WaitStates {
    /// First address of the range.
    pub start: u32,
    /// One past the last address.
    pub end: u32,
    /// Extra cycles per 32-bit instruction fetch from this range.
    pub fetch: u32,
    /// Extra cycles per data load from this range.
    pub data: u32,
}

/// Where the marker functions and the region array are in guest memory (`enter=` ... `regions_count=`).
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub struct Markers {
    /// `mcubench_region_enter`: (address without the Thumb bit, size in bytes).
    pub enter: (u64, u64),
    /// `mcubench_region_exit`: (address without the Thumb bit, size in bytes).
    pub exit: (u64, u64),
    /// Address of the `MCUBENCH_REGIONS` array.
    pub regions: u64,
    /// Its length in `u32` elements.
    pub regions_count: u64,
}

/// One of the two marker functions.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum Marker {
    Enter,
    Exit,
}

impl Markers {
    /// Which marker function (if any) holds the instruction at `vaddr`.
    pub fn function_at(&self, vaddr: u64) -> Option<Marker> {
        let inside = |(start, size): (u64, u64)| vaddr >= start && vaddr < start + size;
        if inside(self.enter) {
            Some(Marker::Enter)
        } else if inside(self.exit) {
            Some(Marker::Exit)
        } else {
            None
        }
    }

    /// The region id a store to `vaddr` addresses, if it is an element of the array.
    pub fn region_id(&self, vaddr: u64) -> Option<u32> {
        let offset = vaddr.checked_sub(self.regions)?;
        (offset % 4 == 0 && offset / 4 < self.regions_count).then_some((offset / 4) as u32)
    }
}

/// What the stack probe watches (`stack=`, `stack_skip=`): stores to `[lo, hi)`, except those by
/// the code in the `skip` ranges `[start, end)`.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct StackProbeRange {
    pub lo: u32,
    pub hi: u32,
    pub skip: Vec<(u32, u32)>,
}

/// Everything the host can ask of the plugin.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct PluginArgs {
    /// The results file.
    pub out: PathBuf,
    pub markers: Option<Markers>,
    /// Cycle estimates with this core's model (needed by everything below).
    pub core: Option<Core>,
    /// The functions file: shadow call stack, function regions.
    pub functions: Option<PathBuf>,
    /// Report the per-function profile (needs `functions`).
    pub profile: bool,
    /// Wait states of the cycle model.
    pub wait_states: Vec<WaitStates>,
    /// The stack probe.
    pub stack_probe: Option<StackProbeRange>,
    /// Exception handler entry addresses (Thumb bit cleared; [`PluginArgs::parse`] sorts and
    /// deduplicates them).
    pub handlers: Vec<u32>,
    /// Cycle model parameters by name, in order (`param=`).
    pub params: Vec<(String, String)>,
    /// The memory system (`flash=`, `prefetch=`, `icache=`, `dcache=`).
    pub memory: MemoryConfig,
    /// Function regions whose calls' bytes are an argument register at entry: (region, register
    /// 0..=3), sorted by region, one register per region.
    pub region_args: Vec<(u32, u8)>,
    /// Write a run trace here (`trace=`; see [`crate::trace`]): what the cycle model priced, for
    /// the host to price again with other parameters.
    pub trace: Option<PathBuf>,
    /// End the run where the firmware first runs a branch to itself outside every exception
    /// handler (`loop_end=on`; `while (1) {}` at the end of `main`): the results are written
    /// there, with the loop's address, and QEMU exits.
    pub loop_end: bool,
    /// At every read of `DWT_CYCCNT`, write what the board's counter would read to this file
    /// (`counter=`; see [`crate::CounterValue`]), for the runner to put in the read's register: the
    /// estimated cycles since the run began or since the last write of the counter.
    pub counter: Option<PathBuf>,
    /// With `loop_end`: the addresses of idle loops' `wfi`/`wfe` (`idle=`; `while (1) { __WFI(); }`,
    /// `while (1) { __DSB(); __WFI(); }`), where the run ends too, before the core sleeps (sorted,
    /// deduplicated by [`PluginArgs::parse`]).
    pub idle: Vec<u32>,
}

impl PluginArgs {
    /// Arguments that only count instructions, with results in `out`.
    pub fn new(out: impl Into<PathBuf>) -> PluginArgs {
        PluginArgs {
            out: out.into(),
            markers: None,
            core: None,
            functions: None,
            profile: false,
            wait_states: Vec::new(),
            stack_probe: None,
            handlers: Vec::new(),
            params: Vec::new(),
            memory: MemoryConfig::default(),
            region_args: Vec::new(),
            trace: None,
            loop_end: false,
            counter: None,
            idle: Vec::new(),
        }
    }

    /// The `<key>=<value>` items, as the plugin receives them.
    pub fn to_args(&self) -> Vec<String> {
        let mut a = vec![format!("out={}", self.out.display())];
        if let Some(m) = &self.markers {
            a.push(format!("enter=0x{:x}", m.enter.0));
            a.push(format!("enter_size={}", m.enter.1));
            a.push(format!("exit=0x{:x}", m.exit.0));
            a.push(format!("exit_size={}", m.exit.1));
            a.push(format!("regions=0x{:x}", m.regions));
            a.push(format!("regions_count={}", m.regions_count));
        }
        if let Some(core) = self.core {
            a.push(format!("core={core}"));
        }
        if let Some(f) = &self.functions {
            a.push(format!("functions={}", f.display()));
        }
        if self.profile {
            a.push("profile=on".into());
        }
        for w in &self.wait_states {
            a.push(format!("wait=0x{:x}:0x{:x}:{}:{}", w.start, w.end, w.fetch, w.data));
        }
        if let Some(p) = &self.stack_probe {
            a.push(format!("stack=0x{:x}:0x{:x}", p.lo, p.hi));
            for (start, end) in &p.skip {
                a.push(format!("stack_skip=0x{start:x}:0x{end:x}"));
            }
        }
        for h in &self.handlers {
            a.push(format!("handler=0x{h:x}"));
        }
        for (name, value) in &self.params {
            a.push(format!("param={name}:{value}"));
        }
        for f in &self.memory.flash {
            a.push(format!("flash=0x{:x}:0x{:x}:{}:{}", f.start, f.end, f.wait_states, f.line));
        }
        if self.memory.prefetch {
            a.push("prefetch=on".into());
        }
        if self.memory.unified {
            a.push("unified=on".into());
        }
        for (key, cache) in [("icache", &self.memory.icache), ("dcache", &self.memory.dcache)] {
            if let Some(c) = cache {
                a.push(format!("{key}={}:{}:{}", c.size, c.ways, c.line));
            }
        }
        for (region, register) in &self.region_args {
            a.push(format!("region_arg={region}:{register}"));
        }
        if let Some(t) = &self.trace {
            a.push(format!("trace={}", t.display()));
        }
        if self.loop_end {
            a.push("loop_end=on".into());
        }
        if let Some(c) = &self.counter {
            a.push(format!("counter={}", c.display()));
        }
        for i in &self.idle {
            a.push(format!("idle=0x{i:x}"));
        }
        a
    }

    /// The value of QEMU's `-plugin` option that loads `plugin` with these arguments: the items
    /// of [`PluginArgs::to_args`] after the path, commas in either doubled as QEMU's option
    /// syntax wants.
    pub fn to_option(&self, plugin: &Path) -> String {
        let esc = |s: &str| s.replace(',', ",,");
        let mut option = esc(&plugin.display().to_string());
        for item in self.to_args() {
            option.push(',');
            option.push_str(&esc(&item));
        }
        option
    }

    /// Parses `<key>=<value>` items strictly. The Thumb bit of `enter`, `exit` and `handler`
    /// addresses is cleared, handlers are sorted and deduplicated.
    pub fn parse<S: AsRef<str>>(raw: &[S]) -> Result<PluginArgs, Error> {
        let mut out = None;
        let mut args = PluginArgs::new(PathBuf::new());
        let mut stack = None;
        let mut stack_skip = Vec::new();
        let mut nums = BTreeMap::new();
        for arg in raw {
            let arg = arg.as_ref();
            let (key, value) =
                arg.split_once('=').ok_or_else(|| Error::arg(None, format!("argument `{arg}` is not key=value")))?;
            let err = |message: String| Error::arg(Some(key), message);
            match key {
                "out" => out = Some(PathBuf::from(value)),
                "core" => args.core = Some(value.parse().map_err(|e: crate::UnknownCore| err(e.to_string()))?),
                "functions" => args.functions = Some(PathBuf::from(value)),
                "trace" => args.trace = Some(PathBuf::from(value)),
                "profile" => {
                    args.profile = match value {
                        "on" => true,
                        "off" => false,
                        _ => return Err(err(format!("argument `profile` is `on` or `off`, not `{value}`"))),
                    }
                }
                "wait" => {
                    let v = numbers(key, value, 4)?;
                    if v[0] >= v[1] {
                        return Err(err(format!("argument `wait`: empty range `{value}`")));
                    }
                    args.wait_states.push(WaitStates { start: v[0], end: v[1], fetch: v[2], data: v[3] });
                }
                "stack" => stack = Some(range(key, value)?),
                "stack_skip" => stack_skip.push(range(key, value)?),
                "handler" => {
                    let v = u32::try_from(number(key, value)?)
                        .map_err(|_| err(format!("argument `handler`: `{value}` does not fit 32 bits")))?;
                    args.handlers.push(v & !1);
                }
                "param" => {
                    let (name, v) = value
                        .split_once(':')
                        .filter(|(n, v)| !n.is_empty() && !v.is_empty())
                        .ok_or_else(|| err(format!("argument `param` is `<name>:<value>`, not `{value}`")))?;
                    args.params.push((name.to_string(), v.to_string()));
                }
                "flash" => {
                    let v = numbers(key, value, 4)?;
                    if v[0] >= v[1] {
                        return Err(err(format!("argument `flash`: empty range `{value}`")));
                    }
                    if !v[3].is_power_of_two() {
                        return Err(err(format!("argument `flash`: line {} is not a power of two", v[3])));
                    }
                    args.memory.flash.push(FlashRegion { start: v[0], end: v[1], wait_states: v[2], line: v[3] });
                }
                "unified" => {
                    args.memory.unified = match value {
                        "on" => true,
                        "off" => false,
                        _ => return Err(err(format!("argument `unified` is `on` or `off`, not `{value}`"))),
                    }
                }
                "counter" => args.counter = Some(PathBuf::from(value)),
                "idle" => {
                    let v = u32::try_from(number(key, value)?)
                        .map_err(|_| err(format!("argument `idle`: `{value}` does not fit 32 bits")))?;
                    args.idle.push(v & !1);
                }
                "loop_end" => {
                    args.loop_end = match value {
                        "on" => true,
                        "off" => false,
                        _ => return Err(err(format!("argument `loop_end` is `on` or `off`, not `{value}`"))),
                    }
                }
                "prefetch" => {
                    args.memory.prefetch = match value {
                        "on" => true,
                        "off" => false,
                        _ => return Err(err(format!("argument `prefetch` is `on` or `off`, not `{value}`"))),
                    }
                }
                "icache" | "dcache" => {
                    let v = numbers(key, value, 3)?;
                    let g = CacheGeometry { size: v[0], ways: v[1], line: v[2] };
                    g.check().map_err(|e| err(format!("argument `{key}`: {e}")))?;
                    if key == "icache" {
                        args.memory.icache = Some(g);
                    } else {
                        args.memory.dcache = Some(g);
                    }
                }
                "region_arg" => {
                    let v = numbers(key, value, 2)?;
                    if v[1] > 3 {
                        return Err(err(format!(
                            "argument `region_arg`: register r{} is not an argument register (r0 .. r3)",
                            v[1]
                        )));
                    }
                    if args.region_args.iter().any(|(r, _)| *r == v[0]) {
                        return Err(err(format!("argument `region_arg`: region {} is given twice", v[0])));
                    }
                    args.region_args.push((v[0], v[1] as u8));
                }
                "enter" | "enter_size" | "exit" | "exit_size" | "regions" | "regions_count" => {
                    nums.insert(key, number(key, value)?);
                }
                _ => return Err(err(format!("unknown argument `{key}`"))),
            }
        }
        args.out = out.ok_or_else(|| Error::arg(Some("out"), "argument `out=<file>` is required"))?;
        args.markers = match nums.len() {
            0 => None,
            6 => {
                let m = Markers {
                    enter: (nums["enter"] & !1, nums["enter_size"]),
                    exit: (nums["exit"] & !1, nums["exit_size"]),
                    regions: nums["regions"],
                    regions_count: nums["regions_count"],
                };
                if m.enter.1 == 0 || m.exit.1 == 0 || m.regions_count == 0 {
                    return Err(Error::arg(None, "marker functions and the region array must have a non-zero size"));
                }
                if m.enter.0 < m.exit.0 + m.exit.1 && m.exit.0 < m.enter.0 + m.enter.1 {
                    return Err(Error::arg(None, "`enter` and `exit` overlap (were the marker functions merged?)"));
                }
                Some(m)
            }
            _ => {
                return Err(Error::arg(
                    None,
                    "enter, enter_size, exit, exit_size, regions, regions_count come all together",
                ));
            }
        };
        args.stack_probe = match stack {
            Some((lo, hi)) => Some(StackProbeRange { lo, hi, skip: stack_skip }),
            None if !stack_skip.is_empty() => {
                return Err(Error::arg(Some("stack_skip"), "`stack_skip=` needs `stack=`"));
            }
            None => None,
        };
        if args.core.is_none() {
            for (given, key, what) in [
                (args.functions.is_some(), "functions", "`functions=` (profile, function regions)"),
                (!args.wait_states.is_empty(), "wait", "`wait=` (wait states)"),
                (args.stack_probe.is_some(), "stack", "`stack=` (stack probe)"),
                (!args.handlers.is_empty(), "handler", "`handler=` (exception costs)"),
                (!args.params.is_empty(), "param", "`param=` (cycle model parameters)"),
                (!args.memory.flash.is_empty(), "flash", "`flash=` (memory system)"),
                (args.trace.is_some(), "trace", "`trace=` (run trace)"),
                (args.loop_end, "loop_end", "`loop_end=on` (the end at a branch to itself)"),
                (args.counter.is_some(), "counter", "`counter=` (the cycle counter's value)"),
                (!args.idle.is_empty(), "idle", "`idle=` (the end at an idle loop)"),
            ] {
                if given {
                    return Err(Error::arg(Some(key), format!("{what} needs `core=`")));
                }
            }
        }
        if args.memory.flash.is_empty()
            && (args.memory.prefetch
                || args.memory.unified
                || args.memory.icache.is_some()
                || args.memory.dcache.is_some())
        {
            return Err(Error::arg(
                Some("flash"),
                "`prefetch=`, `unified=`, `icache=` and `dcache=` need a `flash=` region",
            ));
        }
        if !args.region_args.is_empty() && args.functions.is_none() {
            return Err(Error::arg(Some("region_arg"), "`region_arg=` (bytes from a register) needs `functions=`"));
        }
        args.region_args.sort_unstable();
        if args.profile && args.functions.is_none() {
            return Err(Error::arg(Some("profile"), "`profile=on` needs `functions=`"));
        }
        if !args.idle.is_empty() && !args.loop_end {
            return Err(Error::arg(Some("idle"), "`idle=` (the end at an idle loop) needs `loop_end=on`"));
        }
        args.handlers.sort_unstable();
        args.handlers.dedup();
        args.idle.sort_unstable();
        args.idle.dedup();
        Ok(args)
    }
}

/// Parses a decimal or `0x` hexadecimal number.
fn number(key: &str, value: &str) -> Result<u64, Error> {
    match value.strip_prefix("0x") {
        Some(hex) => u64::from_str_radix(hex, 16),
        None => value.parse(),
    }
    .map_err(|_| Error::arg(Some(key), format!("argument `{key}` is not a number: `{value}`")))
}

/// Parses `a:b[:c...]` into exactly `n` 32-bit numbers.
fn numbers(key: &str, value: &str, n: usize) -> Result<Vec<u32>, Error> {
    let parts: Vec<&str> = value.split(':').collect();
    if parts.len() != n {
        return Err(Error::arg(Some(key), format!("argument `{key}` needs {n} `:`-separated numbers: `{value}`")));
    }
    parts
        .iter()
        .map(|p| {
            let v = number(key, p)?;
            u32::try_from(v).map_err(|_| Error::arg(Some(key), format!("argument `{key}`: `{p}` does not fit 32 bits")))
        })
        .collect()
}

/// Parses a `<start>:<end>` range with start < end.
fn range(key: &str, value: &str) -> Result<(u32, u32), Error> {
    let v = numbers(key, value, 2)?;
    if v[0] >= v[1] {
        return Err(Error::arg(Some(key), format!("argument `{key}`: empty range `{value}`")));
    }
    Ok((v[0], v[1]))
}
