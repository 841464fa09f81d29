//! mcubench's QEMU TCG plugin (QEMU plugin API v1, as in Debian 12's QEMU 7.2).
//!
//! It counts executed guest instructions exactly and measures **regions** that firmware marks
//! with two functions the host resolves from the ELF (see [`regions`] for the semantics and the
//! results file). Load it with
//!
//! ```text
//! qemu-system-arm ... -plugin libmcubench_qemu_plugin.so,out=<file>[,enter=0x..,enter_size=N,
//!     exit=0x..,exit_size=N,regions=0x..,regions_count=N][,core=cortex-m4][,functions=<file>]
//!     [,profile=on][,wait=<start>:<end>:<fetch>:<data>]...[,stack=<lo>:<hi>][,stack_skip=<start>:<end>]...
//! ```
//!
//! Arguments (all `key=value`, unknown keys are refused):
//! * `out`: the results file, written at QEMU exit (required).
//! * `enter`, `enter_size`, `exit`, `exit_size`: address (Thumb bit ignored) and size in bytes of
//!   `mcubench_region_enter` / `mcubench_region_exit`.
//! * `regions`, `regions_count`: address of the `MCUBENCH_REGIONS` `u32` array and its length.
//!
//! * `core`: `cortex-m0`, `cortex-m0+`, `cortex-m3`, `cortex-m4`, `cortex-m33` or `cortex-m7`:
//!   estimate cycles with that core's `mcubench-timing` model.
//! * `functions`: a file of `0x<start> <size>[ <region>]` lines (one per function, from the ELF
//!   symbol table): the plugin keeps a shadow call stack over them (see [`profile`]). A line with
//!   a third column makes every call of that function an activation of **function region**
//!   `<region>` (see [`calls`]). Needs `core`.
//! * `profile=on`: report the per-function profile (`stack` lines); needs `functions`.
//! * `wait=<start>:<end>:<fetch>:<data>` (repeatable; numbers decimal or `0x` hex): wait states of
//!   the address range `[start, end)` for the cycle model (`mcubench_timing::WaitStates`); needs
//!   `core`. Without any, the model assumes zero wait states.
//! * `stack=<lo>:<hi>`: the **stack probe**: every store instruction gets a memory callback, and
//!   stores to `[lo, hi)` record the lowest address written, for the whole run and per region
//!   (see [`regions`]). `stack_skip=<start>:<end>` (repeatable): stores by instructions in that
//!   code range are not probed (the host passes the reset handler and the firmware's own
//!   stack-painting helpers, which write the whole stack with the paint pattern). Needs `core`
//!   (stores are found by decoding; a block that cannot be decoded gets callbacks on every
//!   instruction).
//! * `handler=<addr>` (repeatable): the entry address of an exception handler (the host passes
//!   words 2.. of the vector table); the cycle model then prices exception entry, return and
//!   tail-chaining (see "Exceptions" below). Needs `core`.
//!
//! The six marker arguments come all together or not at all; without them only `insns` is
//! reported.
//!
//! # How counting works, and why it is exact
//!
//! Every translation block (TB) gets one inline `ADD_U64` of its instruction count to a counter
//! (generated code, no call: nearly free). QEMU emits it after the `-icount` budget check, so a
//! TB that is cut short by the budget adds nothing and its re-translated remainder adds what it
//! runs. Memory callbacks are registered only on instructions inside the two marker functions;
//! the store address gives the region id. When such a store runs, the counter already includes
//! its whole TB, so the snapshot is `counter - (instructions after the store in that TB)`: the
//! exact count up to and including the store.
//!
//! One known inexactness affects only the whole-run `insns` total, not regions: under `-icount`,
//! a device-register access in the middle of a TB makes QEMU abandon the TB and re-run its head
//! as a new block (`cpu_io_recompile`); the abandoned TB's inline add has already happened. So
//! firmware that reads SysTick adds a few instructions to `insns` per read outside regions.
//! Marker functions and measured operations touch no device registers.
//!
//! # Cycle estimates
//!
//! With `core=`, each TB is decoded at translation ([`cost`]: `mcubench-thumb`'s
//! `decode_block`, which tracks IT blocks) and priced with the core's `mcubench-timing` model
//! (`Model::block`): its `fall_through` cost is a second inline `ADD_U64`, to a cycle counter,
//! next to the instruction count. A TB that ends in a conditional branch also gets an exec
//! callback that leaves a *pending* refill (`taken_extra`) with the TB's fall-through address;
//! the next TB's callback adds it when that TB does not start at the fall-through (the branch was
//! taken). So every TB gets an exec callback when cycles are on (the check needs the successor's
//! start address); it is a few loads and stores.
//!
//! Marker snapshots subtract the costs of the TB's instructions after the store, from a
//! per-instruction prefix sum kept for TBs that contain marker stores.
//!
//! A TB that cannot be decoded (an instruction the core does not have) adds no cycles: its exec
//! callback records the error, and the results file then says `cycles-unavailable <reason>`
//! instead of a number: never a made-up cost.
//!
//! # Exceptions
//!
//! With `handler=` addresses, the exec callback also prices exceptions (costs from
//! `mcubench_timing::Core::exception_entry`, `exception_exit`, `tail_chain`):
//!
//! * **Entry**: a TB starting at a handler address that is not the previous TB's static
//!   successor (its direct branch or call target, or its fall-through address) adds the entry
//!   cost. A handler reached by an *indirect* branch or call is therefore also read as an
//!   exception entry (firmware rarely calls its own handlers).
//! * **Return**: each active exception keeps a call depth, raised by TBs ending in a call and
//!   lowered by TBs ending in a return; a TB ending in a return at depth 0 is the exception return
//!   (QEMU resolves the EXC_RETURN branch internally, so this is the only trace of it). Its cost
//!   is added at the next TB: the exit cost, or the tail-chain cost instead of exit + entry when
//!   that TB is another handler's entry. A handler that returns other than by `bx lr`/`pop {pc}`/
//!   `ldr pc, [sp], #4` (e.g. `bx r3`) or never returns adds no exit.
//!
//! Inexactness (documented in `mcubench-timing` too): blocks are priced independently, so pairing
//! rules do not cross TB boundaries; an interrupt taken right after a not-taken conditional
//! branch is read as "taken" (+P); a TB cut short by an exception or an I/O access is priced
//! whole, like the instruction count.

pub mod calls;
pub mod cost;
pub mod profile;
pub mod regions;

/// The plugin API version this plugin is built for (the `plugin-api-v1` feature).
pub const BUILT_FOR_API: i64 = qemu_plugin::sys::QEMU_PLUGIN_VERSION as i64;

/// Parsed plugin arguments.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct Config {
    pub out: String,
    pub markers: Option<Markers>,
    pub core: Option<mcubench_timing::Core>,
    /// Path of the functions file (shadow stack: profile and function regions).
    pub functions: Option<String>,
    /// Report the per-function profile.
    pub profile: bool,
    /// Wait states for the cycle model.
    pub wait_states: Vec<mcubench_timing::WaitStates>,
    /// Stack probe range `[lo, hi)`.
    pub stack: Option<(u32, u32)>,
    /// Code ranges whose stores the stack probe ignores.
    pub stack_skip: Vec<(u32, u32)>,
    /// Exception handler entry addresses (Thumb bit cleared), sorted, deduplicated.
    pub handlers: Vec<u32>,
}

/// Parses a decimal or `0x` hexadecimal number.
fn number(key: &str, value: &str) -> Result<u64, String> {
    match value.strip_prefix("0x") {
        Some(hex) => u64::from_str_radix(hex, 16),
        None => value.parse(),
    }
    .map_err(|_| format!("argument `{key}` is not a number: `{value}`"))
}

/// Parses `a:b[:c...]` into exactly `n` 32-bit numbers.
fn numbers(key: &str, value: &str, n: usize) -> Result<Vec<u32>, String> {
    let parts: Vec<&str> = value.split(':').collect();
    if parts.len() != n {
        return Err(format!("argument `{key}` needs {n} `:`-separated numbers: `{value}`"));
    }
    parts
        .iter()
        .map(|p| {
            let v = number(key, p)?;
            u32::try_from(v).map_err(|_| format!("argument `{key}`: `{p}` does not fit 32 bits"))
        })
        .collect()
}

/// Parses a `<start>:<end>` range with start < end.
fn range(key: &str, value: &str) -> Result<(u32, u32), String> {
    let v = numbers(key, value, 2)?;
    if v[0] >= v[1] {
        return Err(format!("argument `{key}`: empty range `{value}`"));
    }
    Ok((v[0], v[1]))
}

/// Where the marker functions and the region array are in guest memory.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub struct Markers {
    pub enter: (u64, u64),
    pub exit: (u64, u64),
    pub regions: u64,
    pub regions_count: u64,
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

#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum Marker {
    Enter,
    Exit,
}

impl Config {
    /// Parses `key=value` arguments strictly.
    pub fn parse(raw: &[String]) -> Result<Config, String> {
        let mut out = None;
        let mut core = None;
        let mut functions = None;
        let mut profile = false;
        let mut wait_states = Vec::new();
        let mut stack = None;
        let mut stack_skip = Vec::new();
        let mut handlers = Vec::new();
        let mut nums = std::collections::BTreeMap::new();
        for arg in raw {
            let (key, value) = arg.split_once('=').ok_or_else(|| format!("argument `{arg}` is not key=value"))?;
            match key {
                "out" => out = Some(value.to_string()),
                "core" => core = Some(cost::parse_core(value).ok_or_else(|| {
                    format!(
                        "unknown core `{value}` (cortex-m0, cortex-m0+, cortex-m3, cortex-m4, cortex-m33, cortex-m7)"
                    )
                })?),
                "functions" => functions = Some(value.to_string()),
                "profile" => {
                    profile = match value {
                        "on" => true,
                        "off" => false,
                        _ => return Err(format!("argument `profile` is `on` or `off`, not `{value}`")),
                    }
                }
                "wait" => {
                    let v = numbers(key, value, 4)?;
                    if v[0] >= v[1] {
                        return Err(format!("argument `wait`: empty range `{value}`"));
                    }
                    wait_states.push(mcubench_timing::WaitStates { start: v[0], end: v[1], fetch: v[2], data: v[3] });
                }
                "stack" => stack = Some(range(key, value)?),
                "stack_skip" => stack_skip.push(range(key, value)?),
                "handler" => {
                    let v = number(key, value)?;
                    let v =
                        u32::try_from(v).map_err(|_| format!("argument `handler`: `{value}` does not fit 32 bits"))?;
                    handlers.push(v & !1);
                }
                "enter" | "enter_size" | "exit" | "exit_size" | "regions" | "regions_count" => {
                    nums.insert(key, number(key, value)?);
                }
                _ => return Err(format!("unknown argument `{key}`")),
            }
        }
        let out = out.ok_or("argument `out=<file>` is required")?;
        let markers = match nums.len() {
            0 => None,
            6 => {
                let m = Markers {
                    enter: (nums["enter"] & !1, nums["enter_size"]),
                    exit: (nums["exit"] & !1, nums["exit_size"]),
                    regions: nums["regions"],
                    regions_count: nums["regions_count"],
                };
                if m.enter.1 == 0 || m.exit.1 == 0 || m.regions_count == 0 {
                    return Err("marker functions and the region array must have a non-zero size".into());
                }
                if m.enter.0 < m.exit.0 + m.exit.1 && m.exit.0 < m.enter.0 + m.enter.1 {
                    return Err("`enter` and `exit` overlap (were the marker functions merged?)".into());
                }
                Some(m)
            }
            _ => return Err("enter, enter_size, exit, exit_size, regions, regions_count come all together".into()),
        };
        if core.is_none() {
            for (given, what) in [
                (functions.is_some(), "`functions=` (profile, function regions)"),
                (!wait_states.is_empty(), "`wait=` (wait states)"),
                (stack.is_some(), "`stack=` (stack probe)"),
                (!handlers.is_empty(), "`handler=` (exception costs)"),
            ] {
                if given {
                    return Err(format!("{what} needs `core=`"));
                }
            }
        }
        if profile && functions.is_none() {
            return Err("`profile=on` needs `functions=`".into());
        }
        if !stack_skip.is_empty() && stack.is_none() {
            return Err("`stack_skip=` needs `stack=`".into());
        }
        handlers.sort_unstable();
        handlers.dedup();
        Ok(Config { out, markers, core, functions, profile, wait_states, stack, stack_skip, handlers })
    }
}

/// Length of a Thumb instruction from its first halfword (QEMU 7.2's instruction-bytes call can
/// return more bytes than the instruction has).
pub fn thumb_len(first_halfword: u16) -> usize {
    match first_halfword >> 11 {
        0b11101..=0b11111 => 4,
        _ => 2,
    }
}

// The QEMU glue references symbols that only QEMU provides, so host unit tests leave it out.
#[cfg(not(test))]
mod glue;

#[cfg(test)]
mod tests {
    use super::*;

    fn args(list: &[&str]) -> Vec<String> {
        list.iter().map(|s| s.to_string()).collect()
    }

    #[test]
    fn parses_marker_arguments_and_clears_the_thumb_bit() {
        let c = Config::parse(&args(&[
            "out=/tmp/x",
            "enter=0x101",
            "enter_size=8",
            "exit=0x109",
            "exit_size=8",
            "regions=0x20000000",
            "regions_count=256",
        ]))
        .unwrap();
        let m = c.markers.unwrap();
        assert_eq!(m.enter, (0x100, 8));
        assert_eq!(m.function_at(0x106), Some(Marker::Enter));
        assert_eq!(m.function_at(0x108), Some(Marker::Exit));
        assert_eq!(m.function_at(0x110), None);
        assert_eq!(m.region_id(0x2000_0008), Some(2));
        assert_eq!(m.region_id(0x2000_0009), None);
        assert_eq!(m.region_id(0x2000_0400), None);
        assert_eq!(Config::parse(&args(&["out=f"])).unwrap().markers, None);
        let c = Config::parse(&args(&["out=f", "core=cortex-m0+", "functions=/tmp/f"])).unwrap();
        assert_eq!(c.core, Some(mcubench_timing::Core::CortexM0Plus));
        assert_eq!(c.functions.as_deref(), Some("/tmp/f"));
        assert!(!c.profile);
        let c = Config::parse(&args(&[
            "out=f",
            "core=cortex-m4",
            "functions=/tmp/f",
            "profile=on",
            "wait=0x0:0x400000:1:2",
            "wait=0x20000000:0x20010000:0:0",
            "stack=0x20000000:0x20010000",
            "stack_skip=0x100:0x140",
            "handler=0x201",
            "handler=0x101",
            "handler=0x200",
        ]))
        .unwrap();
        assert_eq!(c.handlers, vec![0x100, 0x200]);
        assert!(c.profile);
        assert_eq!(
            c.wait_states,
            vec![
                mcubench_timing::WaitStates { start: 0, end: 0x40_0000, fetch: 1, data: 2 },
                mcubench_timing::WaitStates { start: 0x2000_0000, end: 0x2001_0000, fetch: 0, data: 0 }
            ]
        );
        assert_eq!(c.stack, Some((0x2000_0000, 0x2001_0000)));
        assert_eq!(c.stack_skip, vec![(0x100, 0x140)]);
    }

    #[test]
    fn refuses_bad_arguments() {
        for (list, expected) in [
            (&["enter=1"][..], "come all together"),
            (&["out=f", "bogus=1"][..], "unknown argument"),
            (&["enter=0x100"][..], "come all together"),
            (&[][..], "out=<file>"),
            (&["out=f", "enter=zz"][..], "not a number"),
            (&["out=f", "core=cortex-a9"][..], "unknown core"),
            (&["out=f", "functions=x"][..], "needs `core=`"),
            (&["out=f", "wait=0:4:1:1"][..], "needs `core=`"),
            (&["out=f", "stack=0:4"][..], "needs `core=`"),
            (&["out=f", "handler=0x100"][..], "needs `core=`"),
            (&["out=f", "core=cortex-m4", "profile=on"][..], "needs `functions=`"),
            (&["out=f", "core=cortex-m4", "profile=yes"][..], "`on` or `off`"),
            (&["out=f", "core=cortex-m4", "wait=0:4:1"][..], "needs 4"),
            (&["out=f", "core=cortex-m4", "wait=8:4:1:1"][..], "empty range"),
            (&["out=f", "core=cortex-m4", "stack=0:0x100000000"][..], "32 bits"),
            (&["out=f", "core=cortex-m4", "stack_skip=0:4"][..], "needs `stack=`"),
        ] {
            let mut l = args(list);
            if !list.iter().any(|a| a.starts_with("out=")) && expected != "out=<file>" {
                l.push("out=f".into());
            }
            let e = Config::parse(&l).unwrap_err();
            assert!(e.contains(expected), "{list:?}: {e}");
        }
        let merged = args(&[
            "out=f",
            "enter=0x100",
            "enter_size=8",
            "exit=0x100",
            "exit_size=8",
            "regions=0x0",
            "regions_count=1",
        ]);
        assert!(Config::parse(&merged).unwrap_err().contains("overlap"));
    }

    #[test]
    fn thumb_instruction_length_from_the_first_halfword() {
        assert_eq!(thumb_len(0x4770), 2); // bx lr
        assert_eq!(thumb_len(0xf000), 4); // bl prefix
        assert_eq!(thumb_len(0xe92d), 4); // push.w
        assert_eq!(thumb_len(0xe7fe), 2); // b .
    }
}
