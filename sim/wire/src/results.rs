//! The results file (`out=`): what the plugin measured, written once at QEMU exit
//! ([`Results::write`]) and read by the host ([`Results::parse`]).
//!
//! # Format (version 5)
//!
//! Line-oriented text:
//!
//! ```text
//! mcubench-qemu-plugin/5
//! insns <n>
//! cycles <n>                      (with core=, when every executed block could be priced)
//! cycles-unavailable <reason>     (with core=, instead of `cycles`: e.g. an undecodable instruction ran)
//! model <free text>               (with core=: the cycle model's description)
//! region id=<id> entries=<n> completed=<n> total=<n> min=<n> max=<n>[ cycles=<n> cycles_min=<n> cycles_max=<n>][ stack_low=<addr>][ stack_bytes=<n>][ stack_unknown=<n>]
//! function id=<id> entries=<n> completed=<n> total=<n> ...   (function regions; fields as `region`)
//! site id=<id>[ ret=<addr>] completed=<n> total=<n> min=<n> max=<n>[ cycles=<n> cycles_min=<n> cycles_max=<n>]
//! call id=<id> insns=<n>[ cycles=<n>][ ret=<addr>][ bytes=<n>]
//! open id=<id> at=<snapshot>
//! interval from=<pc> to=<pc> count=<n> total=<n> min=<n> max=<n> cycles=<n> cycles_min=<n> cycles_max=<n>
//! probe low=<addr>|none           (with stack=: lowest stack address written in the whole run)
//! stack cycles=<n> insns=<n> frames=<i;j;...>   (with profile=on: one per call-tree node)
//! error <free text to end of line>
//! end
//! ```
//!
//! Lines come in this order. `insns` is the whole run's instruction count. `region` and
//! `function` lines come in ascending id order; `min` and `max` are 0 when `completed=0`. They
//! carry the three cycle fields exactly when a `cycles` line is present, and `stack_low`
//! (decimal address) when probing and a probed store happened in a completed activation. When
//! probing, `stack_bytes` is the most bytes below its entry SP that a completed activation's
//! stores reached, over the activations whose entry SP the plugin knew, and `stack_unknown`
//! (when not 0) counts the completed activations whose entry SP it did not know.
//!
//! `site` and `call` lines follow the `region` or `function` line of their id (the plugin writes
//! them for function regions only):
//!
//! * `site`: the completed activations that return to one address `ret` (decimal; the call
//!   site, see [`Site`]), with the region line's statistics; every completed activation is in
//!   exactly one site, so their `completed` add up to the region's. Without `ret`: activations
//!   with no return address (the bottom frame). In ascending `ret` order, the one without first.
//! * `call`: one completed activation, in completion order: its instructions, cycles (exactly
//!   when a `cycles` line is present), return address and, from a plugin that reads argument
//!   registers (not the QEMU 7.2 one), the bytes it processed. Only the first [`CALLS_KEPT`]
//!   completed activations of a region have a `call` line; later ones count in the totals and
//!   the sites only.
//!
//! `interval` lines (with `cycles` only) are the firmware's accesses of the DWT cycle counter
//! (`CYCCNT`, 0xE0001004), which QEMU does not model (it reads 0): one line per pair `from` →
//! `to` (decimal addresses) of an instruction that read or wrote the counter and the read that
//! came next, with the instructions and estimated cycles from the first access (exclusive) to
//! the read (inclusive) over the `count` times that pair ran, in ascending (`from`, `to`) order.
//! See [`Interval`].
//!
//! A
//! `stack` line's frames are indices into the functions file, outermost first, `-` for code
//! outside every function. Free text (model, reason, error) is one line: line breaks become
//! spaces. The final `end` line tells the host the file is complete: a file without it is a
//! run that did not end normally, and absent results are never zeros.
//!
//! The plugin creates the file at install (a contained QEMU may open no file once the guest runs)
//! and fills it at exit. What the numbers mean (activations, nesting, snapshots) is documented
//! with the plugin (`mcubench-qemu-plugin`'s `regions` and `calls` modules).

use std::collections::BTreeMap;
use std::fmt::Write as _;

use crate::Error;

/// First line of a results file: the format and its version. Both sides use this constant; it
/// changes whenever the format does.
pub const HEADER: &str = "mcubench-qemu-plugin/5";

/// How many completed activations of one region the plugin keeps one by one
/// ([`RegionStats::calls`]); later ones count only in the totals and the sites.
pub const CALLS_KEPT: usize = 4096;

/// Statistics of one region (or function region) id.
#[derive(Debug, Clone, Default, PartialEq, Eq)]
pub struct RegionStats {
    /// Activations begun.
    pub entries: u64,
    /// Activations completed.
    pub completed: u64,
    /// Instructions of the completed activations: sum, minimum and maximum.
    pub total: u64,
    pub min: u64,
    pub max: u64,
    /// Estimated cycles of the completed activations: (sum, min, max); present exactly when the
    /// run has a cycle total.
    pub cycles: Option<(u64, u64, u64)>,
    /// Stack probe: the lowest stack address a probed store wrote during a completed activation.
    pub stack_low: Option<u32>,
    /// Stack probe: the most bytes below its entry SP (SP when the activation began) that a
    /// probed store of a completed activation wrote, over the activations whose entry SP the
    /// plugin knew; `stack_unknown` counts the others.
    pub stack_bytes: Option<u32>,
    pub stack_unknown: u64,
    /// The completed activations by return address (call site; `None`: no return address).
    /// Empty for marker regions. Every completed activation is in exactly one site.
    pub sites: BTreeMap<Option<u32>, Site>,
    /// The first [`CALLS_KEPT`] completed activations, in completion order. Empty for marker
    /// regions.
    pub calls: Vec<Call>,
}

/// The completed activations of a region that returned to one address: a call site. For a
/// BL/BLX, the return address is the instruction after the call; for a tail call into the
/// region's function, the return address of the call that the tail-calling function was called
/// with; for an exception, the interrupted address.
#[derive(Debug, Clone, Default, PartialEq, Eq)]
pub struct Site {
    pub completed: u64,
    /// Instructions: sum, minimum and maximum.
    pub total: u64,
    pub min: u64,
    pub max: u64,
    /// Estimated cycles (sum, min, max); present exactly when the run has a cycle total.
    pub cycles: Option<(u64, u64, u64)>,
}

/// One completed activation.
#[derive(Debug, Clone, Copy, Default, PartialEq, Eq)]
pub struct Call {
    pub insns: u64,
    /// Estimated cycles; present exactly when the run has a cycle total.
    pub cycles: Option<u64>,
    /// Its return address (see [`Site`]); `None` for the bottom frame.
    pub ret: Option<u32>,
    /// Bytes the call processed, read from an argument register at entry. Never written by the
    /// QEMU 7.2 plugin (plugin API v1 cannot read registers); reserved for a plugin that can.
    pub bytes: Option<u64>,
}

impl Site {
    /// Adds one completed activation of `insns` instructions and `cycles` cycles.
    pub fn add(&mut self, insns: u64, cycles: u64) {
        let first = self.completed == 0;
        self.min = if first { insns } else { self.min.min(insns) };
        self.max = self.max.max(insns);
        let (sum, min, max) = self.cycles.unwrap_or_default();
        self.cycles = Some((sum + cycles, if first { cycles } else { min.min(cycles) }, max.max(cycles)));
        self.completed += 1;
        self.total += insns;
    }
}

/// The runs of one pair of DWT cycle-counter accesses, a read or a write and the next read: what
/// the firmware's own `CYCCNT` difference between two reads, or its read after writing the
/// counter (`DWT->CYCCNT = 0`), would have measured on the board, as estimated here. Like a
/// marker snapshot, an access is taken through its own instruction: an interval counts the
/// instructions after the first access up to and including the read.
#[derive(Debug, Clone, Copy, Default, PartialEq, Eq)]
pub struct Interval {
    pub count: u64,
    /// Instructions: sum, minimum and maximum over the runs.
    pub insns: (u64, u64, u64),
    /// Estimated cycles: sum, minimum and maximum over the runs.
    pub cycles: (u64, u64, u64),
}

impl Interval {
    /// Adds one run of `insns` instructions and `cycles` cycles.
    pub fn add(&mut self, insns: u64, cycles: u64) {
        let first = self.count == 0;
        let fold = |(sum, min, max): (u64, u64, u64), v: u64| (sum + v, if first { v } else { min.min(v) }, max.max(v));
        self.insns = fold(self.insns, insns);
        self.cycles = fold(self.cycles, cycles);
        self.count += 1;
    }
}

/// The DWT cycle counter's address (`DWT_CYCCNT`): a load from it is a read of the counter, a
/// store a write (`DWT->CYCCNT = 0` before the code timed).
pub const DWT_CYCCNT: u32 = 0xE000_1004;

/// An activation still open when QEMU exited.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub struct OpenRegion {
    pub id: u32,
    /// The instruction snapshot at its enter store.
    pub at: u64,
}

/// One call-tree node of a profile: self cost of the stack `frames` (outermost first; indices into
/// the functions file, `None` for code outside every function). `frames` is never empty.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct StackCost {
    pub frames: Vec<Option<u32>>,
    pub cycles: u64,
    pub insns: u64,
}

/// The whole-run cycle estimate (with `core=`).
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct Cycles {
    /// The cycle model's description, e.g. `cortex-m4 model: Cortex-M4 TRM table, P=1, 0 WS`.
    pub model: String,
    /// The estimate, or why there is none: the plugin could not price something that ran (then
    /// no region has cycles either).
    pub total: Result<u64, String>,
}

/// A complete results file.
#[derive(Debug, Clone, Default, PartialEq, Eq)]
pub struct Results {
    /// Whole-run instructions (exact with cycles on; counting only, each device-register access
    /// outside regions adds the rest of its TB).
    pub insns: u64,
    /// `None` without `core=`.
    pub cycles: Option<Cycles>,
    /// Marker regions by id.
    pub regions: BTreeMap<u32, RegionStats>,
    /// Function regions, by index in the scenario's `regions` list.
    pub functions: BTreeMap<u32, RegionStats>,
    /// Activations still open at exit, innermost last.
    pub open: Vec<OpenRegion>,
    /// DWT cycle-counter read pairs by (first read's address, second read's address).
    pub intervals: BTreeMap<(u32, u32), Interval>,
    /// Stack probe: `Some(lowest address written)` when probing (`Some(None)`: no probed store).
    pub probe: Option<Option<u32>>,
    /// The profile (with `profile=on`).
    pub stacks: Vec<StackCost>,
    /// Marker misuse the plugin saw (an exit that does not match the innermost open region).
    pub errors: Vec<String>,
    /// With `loop_end=on`: the run ended at the branch to itself at this address (outside every
    /// exception handler), where the counts stop.
    pub loop_end: Option<u32>,
}

/// Free text on one line.
fn one_line(s: &str) -> String {
    s.replace(['\n', '\r'], " ")
}

impl RegionStats {
    fn write(&self, kind: &str, id: u32, out: &mut String) {
        let _ = write!(
            out,
            "{kind} id={id} entries={} completed={} total={} min={} max={}",
            self.entries, self.completed, self.total, self.min, self.max
        );
        if let Some((sum, min, max)) = self.cycles {
            let _ = write!(out, " cycles={sum} cycles_min={min} cycles_max={max}");
        }
        if let Some(low) = self.stack_low {
            let _ = write!(out, " stack_low={low}");
        }
        if let Some(bytes) = self.stack_bytes {
            let _ = write!(out, " stack_bytes={bytes}");
        }
        if self.stack_unknown > 0 {
            let _ = write!(out, " stack_unknown={}", self.stack_unknown);
        }
        out.push('\n');
        for (ret, site) in &self.sites {
            let _ = write!(out, "site id={id}");
            if let Some(ret) = ret {
                let _ = write!(out, " ret={ret}");
            }
            let _ = write!(out, " completed={} total={} min={} max={}", site.completed, site.total, site.min, site.max);
            if let Some((sum, min, max)) = site.cycles {
                let _ = write!(out, " cycles={sum} cycles_min={min} cycles_max={max}");
            }
            out.push('\n');
        }
        for call in &self.calls {
            let _ = write!(out, "call id={id} insns={}", call.insns);
            if let Some(c) = call.cycles {
                let _ = write!(out, " cycles={c}");
            }
            if let Some(ret) = call.ret {
                let _ = write!(out, " ret={ret}");
            }
            if let Some(b) = call.bytes {
                let _ = write!(out, " bytes={b}");
            }
            out.push('\n');
        }
    }

    /// `self` with cycle fields exactly when `with_cycles` (zeros where a snapshot had none).
    pub fn with_cycles(&self, with_cycles: bool) -> RegionStats {
        let keep = |c: Option<(u64, u64, u64)>| with_cycles.then(|| c.unwrap_or_default());
        RegionStats {
            cycles: keep(self.cycles),
            sites: self.sites.iter().map(|(r, s)| (*r, Site { cycles: keep(s.cycles), ..s.clone() })).collect(),
            calls: self
                .calls
                .iter()
                .map(|c| Call { cycles: with_cycles.then(|| c.cycles.unwrap_or_default()), ..*c })
                .collect(),
            ..self.clone()
        }
    }
}

impl Results {
    /// The file's text. Region lines carry cycle fields when their `cycles` is set, which must be
    /// exactly when the run has a cycle total for [`Results::parse`] to accept the text.
    pub fn write(&self) -> String {
        let mut out = format!("{HEADER}\ninsns {}\n", self.insns);
        if let Some(c) = &self.cycles {
            match &c.total {
                Ok(total) => {
                    let _ = writeln!(out, "cycles {total}");
                }
                Err(reason) => {
                    let _ = writeln!(out, "cycles-unavailable {}", one_line(reason));
                }
            }
            let _ = writeln!(out, "model {}", one_line(&c.model));
        }
        for (id, s) in &self.regions {
            s.write("region", *id, &mut out);
        }
        for (id, s) in &self.functions {
            s.write("function", *id, &mut out);
        }
        for o in &self.open {
            let _ = writeln!(out, "open id={} at={}", o.id, o.at);
        }
        for ((from, to), i) in &self.intervals {
            let (t, tmin, tmax) = i.insns;
            let (c, cmin, cmax) = i.cycles;
            let _ = writeln!(
                out,
                "interval from={from} to={to} count={} total={t} min={tmin} max={tmax} cycles={c} cycles_min={cmin} cycles_max={cmax}",
                i.count
            );
        }
        match self.probe {
            None => {}
            Some(None) => out.push_str("probe low=none\n"),
            Some(Some(low)) => {
                let _ = writeln!(out, "probe low={low}");
            }
        }
        for s in &self.stacks {
            let frames: Vec<String> = s.frames.iter().map(|f| f.map_or("-".to_string(), |i| i.to_string())).collect();
            let _ = writeln!(out, "stack cycles={} insns={} frames={}", s.cycles, s.insns, frames.join(";"));
        }
        for e in &self.errors {
            let _ = writeln!(out, "error {}", one_line(e));
        }
        if let Some(pc) = self.loop_end {
            let _ = writeln!(out, "loop pc={pc}");
        }
        out.push_str("end\n");
        out
    }

    /// Parses a results file strictly. A partial file (no final `end`) is an error; an error
    /// names the line.
    pub fn parse(text: &str) -> Result<Results, Error> {
        let mut lines = text.lines().enumerate().map(|(i, l)| (i + 1, l));
        match lines.next() {
            Some((_, HEADER)) => {}
            other => {
                return Err(Error::at_line(
                    Some(1),
                    format!("not a `{HEADER}` results file (first line {:?})", other.map(|o| o.1)),
                ));
            }
        }
        let mut r = Results::default();
        let mut insns = None;
        let mut cycles: Option<Result<u64, String>> = None;
        let mut model = None;
        let mut ended = false;
        // The last `region` or `function` line (is it a function region, its id): `site` and
        // `call` lines belong to it.
        let mut last: Option<(bool, u32)> = None;
        for (n, line) in lines {
            let bad = |what: &str| Error::at_line(Some(n), format!("line {n}: {what}: `{line}`"));
            if ended {
                return Err(bad("text after `end`"));
            }
            let (kind, rest) = line.split_once(' ').unwrap_or((line, ""));
            if kind != "site" && kind != "call" {
                // The previous region's sites and calls are complete.
                check_sites(&last, &r).map_err(|e| bad(&e))?;
                last = None;
            }
            match kind {
                "end" if rest.is_empty() => ended = true,
                "insns" => insns = Some(rest.parse().map_err(|_| bad("bad instruction count"))?),
                "cycles" | "cycles-unavailable" if cycles.is_some() => return Err(bad("cycles given twice")),
                "cycles" => cycles = Some(Ok(rest.parse().map_err(|_| bad("bad cycle count"))?)),
                "cycles-unavailable" => cycles = Some(Err(rest.to_string())),
                "model" if model.is_some() => return Err(bad("model given twice")),
                "model" => model = Some(rest.to_string()),
                "stack" => r.stacks.push(parse_stack(rest).map_err(bad)?),
                "error" => r.errors.push(rest.to_string()),
                "loop" if r.loop_end.is_some() => return Err(bad("loop given twice")),
                "loop" => {
                    r.loop_end = Some(
                        rest.strip_prefix("pc=").and_then(|v| v.parse().ok()).ok_or_else(|| bad("bad loop address"))?,
                    )
                }
                "probe" if r.probe.is_some() => return Err(bad("probe given twice")),
                "probe" => {
                    r.probe = Some(match rest {
                        "low=none" => None,
                        _ => Some(
                            rest.strip_prefix("low=").and_then(|v| v.parse().ok()).ok_or_else(|| bad("bad probe"))?,
                        ),
                    })
                }
                "region" | "open" | "function" | "site" | "call" | "interval" => {
                    let mut f = BTreeMap::new();
                    for token in rest.split(' ') {
                        let (k, v) = token.split_once('=').ok_or_else(|| bad("not key=value"))?;
                        let v: u64 = v.parse().map_err(|_| bad("not a number"))?;
                        if f.insert(k, v).is_some() {
                            return Err(bad("repeated field"));
                        }
                    }
                    let with_cycles = matches!(cycles, Some(Ok(_)));
                    let address =
                        |v: u64, what: &str| u32::try_from(v).map_err(|_| bad(&format!("{what} out of range")));
                    if kind == "interval" {
                        if !with_cycles {
                            return Err(bad("an interval without a cycle total"));
                        }
                        let mut take = |k: &str| f.remove(k).ok_or_else(|| bad(&format!("no `{k}`")));
                        let pair = (address(take("from")?, "from")?, address(take("to")?, "to")?);
                        let i = Interval {
                            count: take("count")?,
                            insns: (take("total")?, take("min")?, take("max")?),
                            cycles: (take("cycles")?, take("cycles_min")?, take("cycles_max")?),
                        };
                        if let Some(k) = f.keys().next() {
                            return Err(bad(&format!("unknown field `{k}`")));
                        }
                        if i.count == 0 || r.intervals.insert(pair, i).is_some() {
                            return Err(bad("an interval that never ran, or listed twice"));
                        }
                        continue;
                    }
                    let mut take = |k: &str| f.remove(k).ok_or_else(|| bad(&format!("no `{k}`")));
                    let id = u32::try_from(take("id")?).map_err(|_| bad("id out of range"))?;
                    match kind {
                        "open" => r.open.push(OpenRegion { id, at: take("at")? }),
                        "site" | "call" => {
                            let s = match last {
                                Some((function, last_id)) if last_id == id => {
                                    let map = if function { &mut r.functions } else { &mut r.regions };
                                    map.get_mut(&id).expect("listed")
                                }
                                _ => return Err(bad(&format!("`{kind}` line does not follow its region's line"))),
                            };
                            let ret = f.remove("ret").map(|v| address(v, "ret")).transpose()?;
                            if kind == "site" {
                                let mut take = |k: &str| f.remove(k).ok_or_else(|| bad(&format!("no `{k}`")));
                                let site = Site {
                                    completed: take("completed")?,
                                    total: take("total")?,
                                    min: take("min")?,
                                    max: take("max")?,
                                    cycles: if with_cycles {
                                        Some((take("cycles")?, take("cycles_min")?, take("cycles_max")?))
                                    } else {
                                        None
                                    },
                                };
                                if s.sites.insert(ret, site).is_some() {
                                    return Err(bad("site listed twice"));
                                }
                                if s.sites.values().map(|s| s.completed).sum::<u64>() > s.completed {
                                    return Err(bad("sites hold more activations than the region completed"));
                                }
                            } else {
                                let insns = f.remove("insns").ok_or_else(|| bad("no `insns`"))?;
                                let cycles = if with_cycles {
                                    Some(f.remove("cycles").ok_or_else(|| bad("no `cycles`"))?)
                                } else {
                                    None
                                };
                                s.calls.push(Call { insns, cycles, ret, bytes: f.remove("bytes") });
                                if s.calls.len() as u64 > s.completed {
                                    return Err(bad("more calls than the region completed"));
                                }
                            }
                        }
                        _ => {
                            let mut s = RegionStats {
                                entries: take("entries")?,
                                completed: take("completed")?,
                                total: take("total")?,
                                min: take("min")?,
                                max: take("max")?,
                                ..RegionStats::default()
                            };
                            if with_cycles {
                                s.cycles = Some((take("cycles")?, take("cycles_min")?, take("cycles_max")?));
                            }
                            if let Some(low) = f.remove("stack_low") {
                                s.stack_low = Some(address(low, "stack_low")?);
                            }
                            if let Some(bytes) = f.remove("stack_bytes") {
                                s.stack_bytes = Some(address(bytes, "stack_bytes")?);
                            }
                            s.stack_unknown = f.remove("stack_unknown").unwrap_or(0);
                            let function = kind == "function";
                            let map = if function { &mut r.functions } else { &mut r.regions };
                            if map.insert(id, s).is_some() {
                                return Err(bad("region listed twice"));
                            }
                            last = Some((function, id));
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
            return Err(Error::at_line(None, "partial results file (no final `end` line): QEMU did not exit normally"));
        }
        r.insns = insns.ok_or_else(|| Error::at_line(None, "results file lacks `insns`"))?;
        r.cycles = match (cycles, model) {
            (Some(total), Some(model)) => Some(Cycles { model, total }),
            (None, None) => None,
            _ => return Err(Error::at_line(None, "a cycle result without a model line, or the reverse")),
        };
        Ok(r)
    }

    /// The whole-run cycle estimate, when there is one.
    pub fn cycle_total(&self) -> Option<u64> {
        self.cycles.as_ref().and_then(|c| c.total.as_ref().ok().copied())
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

    /// The estimated cycles of region `id`'s single activation: `Ok(None)` without a cycle
    /// total, `Err` when the region did not run exactly once (see [`Results::single_activation`]).
    pub fn single_activation_cycles(&self, id: u32) -> Result<Option<u64>, String> {
        self.single_activation(id)?;
        Ok(self.regions.get(&id).and_then(|s| s.cycles).map(|c| c.0))
    }
}

/// The sites of the last region line, once complete: none, or every completed activation in
/// exactly one of them.
fn check_sites(last: &Option<(bool, u32)>, r: &Results) -> Result<(), String> {
    let Some((function, id)) = *last else { return Ok(()) };
    let s = if function { &r.functions[&id] } else { &r.regions[&id] };
    let in_sites: u64 = s.sites.values().map(|s| s.completed).sum();
    if !s.sites.is_empty() && in_sites != s.completed {
        return Err(format!("the sites of region {id} hold {in_sites} of its {} completed activations", s.completed));
    }
    Ok(())
}

/// The fields of a `stack` line: `cycles=<n> insns=<n> frames=<i;j;...>`, each once.
fn parse_stack(rest: &str) -> Result<StackCost, &'static str> {
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
            _ => return Err("bad stack field"),
        }
    }
    match (cycles, insns, frames) {
        (Some(cycles), Some(insns), Some(frames)) => Ok(StackCost { frames, cycles, insns }),
        _ => Err("stack needs cycles=, insns= and frames="),
    }
}
