//! Board timing profiles and the `model:` key: what a real part adds to the core's cycle model
//! (clock, flash wait states, prefetch, caches) and every parameter of that model, set in a
//! scenario or a profile and resolved per board into one [`CycleModel`].
//!
//! ```yaml
//! timing: stm32f407            # a named board timing profile (`mcubench boards` lists them)
//! model:                       # overrides, on top of the profile (or of the core alone)
//!   clock: 168 MHz
//!   branch-refill: 1
//!   flash: { wait-states: 5, line: 16, prefetch: true }
//!   icache: { size: 1 KiB, ways: 64, line: 16 }     # or `off`
//!   dcache: off
//! ```
//!
//! A profile's memory binds to the board it runs on: its flash timing applies to the board's
//! FLASH region and everything else (SRAM, TCM) has no wait states, so one profile works on a
//! QEMU machine with the part's own memory map (netduinoplus2 for an STM32F4) and on one with
//! another (mps2-an386). Prices use the profile's core, which the board's QEMU CPU must run.
//!
//! The profiles are data: `sim/mcubench/timing-profiles/<name>.yaml`, each with its sources.
//! Every check runs while the YAML node it is about is read, so an error carries the file, the
//! key path, the line and the column.

use std::fmt;
use std::sync::OnceLock;

use indexmap::IndexMap;
use serde::de::{self, MapAccess, Visitor, value::MapAccessDeserializer};
use serde::{Deserialize, Deserializer};

use mcubench_timing::Params;
use mcubench_timing::memory::{CacheGeometry, FlashRegion, MemoryConfig};
use mcubench_wire::Core;

use crate::config::board::Board;
use crate::config::units::{Bytes, scalar_text};

/// The `model:` key as written: every field optional, so a scenario overrides a profile field
/// by field ([`ModelSettings::overridden_by`]).
#[derive(Debug, Clone, Default, PartialEq, Eq)]
pub struct ModelSettings {
    /// The core clock in Hz (`clock: 168 MHz`): turns cycles into time.
    pub clock_hz: Option<u64>,
    /// Core model parameters by name ([`Params::SPECS`]), each checked.
    pub params: IndexMap<String, String>,
    pub flash: Option<FlashSettings>,
    /// `Some(None)`: `off`.
    pub icache: Option<Option<CacheGeometry>>,
    pub dcache: Option<Option<CacheGeometry>>,
    /// Loads from flash go through the instruction cache when there is no data cache.
    pub unified: Option<bool>,
}

/// `model.flash`: the board's FLASH region seen through the part's flash interface.
#[derive(Debug, Clone, Copy, Default, PartialEq, Eq)]
pub struct FlashSettings {
    pub wait_states: Option<u32>,
    pub line: Option<u32>,
    pub prefetch: Option<bool>,
}

impl FlashSettings {
    fn overridden_by(self, over: FlashSettings) -> FlashSettings {
        FlashSettings {
            wait_states: over.wait_states.or(self.wait_states),
            line: over.line.or(self.line),
            prefetch: over.prefetch.or(self.prefetch),
        }
    }
}

impl ModelSettings {
    /// `self` with every field `over` sets replaced (parameters by name).
    pub fn overridden_by(&self, over: &ModelSettings) -> ModelSettings {
        let mut params = self.params.clone();
        params.extend(over.params.iter().map(|(k, v)| (k.clone(), v.clone())));
        ModelSettings {
            clock_hz: over.clock_hz.or(self.clock_hz),
            params,
            flash: match (self.flash, over.flash) {
                (Some(a), Some(b)) => Some(a.overridden_by(b)),
                (a, b) => b.or(a),
            },
            icache: over.icache.or(self.icache),
            dcache: over.dcache.or(self.dcache),
            unified: over.unified.or(self.unified),
        }
    }

    /// Paste-ready YAML for a `model:` block (what `mcubench calibrate` prints), indented by
    /// `indent` spaces.
    pub fn to_yaml(&self, indent: usize) -> String {
        let pad = " ".repeat(indent);
        let mut out = String::new();
        if let Some(hz) = self.clock_hz {
            out.push_str(&format!("{pad}clock: {}\n", clock_text(hz)));
        }
        for (k, v) in &self.params {
            out.push_str(&format!("{pad}{k}: {v}\n"));
        }
        if let Some(f) = self.flash {
            let mut parts = Vec::new();
            if let Some(ws) = f.wait_states {
                parts.push(format!("wait-states: {ws}"));
            }
            if let Some(l) = f.line {
                parts.push(format!("line: {l}"));
            }
            if let Some(p) = f.prefetch {
                parts.push(format!("prefetch: {p}"));
            }
            out.push_str(&format!("{pad}flash: {{ {} }}\n", parts.join(", ")));
        }
        for (key, cache) in [("icache", self.icache), ("dcache", self.dcache)] {
            match cache {
                Some(Some(c)) => {
                    out.push_str(&format!("{pad}{key}: {{ size: {}, ways: {}, line: {} }}\n", c.size, c.ways, c.line))
                }
                Some(None) => out.push_str(&format!("{pad}{key}: off\n")),
                None => {}
            }
        }
        if let Some(u) = self.unified {
            out.push_str(&format!("{pad}unified: {u}\n"));
        }
        out
    }
}

/// `168 MHz`, `32768 Hz`: how clocks are written back.
pub fn clock_text(hz: u64) -> String {
    if hz.is_multiple_of(1_000_000) {
        format!("{} MHz", hz / 1_000_000)
    } else if hz.is_multiple_of(1_000) {
        format!("{} kHz", hz / 1_000)
    } else {
        format!("{hz} Hz")
    }
}

/// A clock written as `168 MHz`, `80MHz`, `32768 Hz`, `12.5 MHz` or a plain number of Hz.
pub fn parse_clock(text: &str) -> Result<u64, String> {
    let t = text.trim();
    let split = t.find(|c: char| !(c.is_ascii_digit() || c == '.')).unwrap_or(t.len());
    let (number, unit) = t.split_at(split);
    let n: f64 = number.parse().map_err(|_| format!("`{text}` is not a clock; write e.g. `168 MHz` or `80000000`"))?;
    let scale = match unit.trim() {
        "" | "Hz" => 1.0,
        "kHz" => 1e3,
        "MHz" => 1e6,
        "GHz" => 1e9,
        other => return Err(format!("unknown clock unit `{other}` in `{text}`; use Hz, kHz or MHz")),
    };
    let hz = (n * scale).round();
    if !(1.0..1e12).contains(&hz) {
        return Err(format!("a clock of `{text}` is impossible; give the core clock, e.g. `168 MHz`"));
    }
    Ok(hz as u64)
}

#[derive(Debug, Deserialize)]
#[serde(deny_unknown_fields, rename_all = "kebab-case")]
struct RawModel {
    #[serde(default, deserialize_with = "clock")]
    clock: Option<u64>,
    #[serde(default, deserialize_with = "branch_refill")]
    branch_refill: Option<String>,
    #[serde(default, deserialize_with = "divide")]
    divide: Option<String>,
    #[serde(default, deserialize_with = "m3_multiply_long")]
    m3_multiply_long: Option<String>,
    #[serde(default, deserialize_with = "m3_multiply_accumulate_long")]
    m3_multiply_accumulate_long: Option<String>,
    #[serde(default, deserialize_with = "m0_multiplier")]
    m0_multiplier: Option<String>,
    #[serde(default, deserialize_with = "m7_mispredict")]
    m7_mispredict: Option<String>,
    #[serde(default, deserialize_with = "m7_history")]
    m7_history: Option<String>,
    #[serde(default, deserialize_with = "flash")]
    flash: Option<FlashSettings>,
    #[serde(default, deserialize_with = "cache")]
    icache: Option<Option<CacheGeometry>>,
    #[serde(default, deserialize_with = "cache")]
    dcache: Option<Option<CacheGeometry>>,
    unified: Option<bool>,
}

impl<'de> Deserialize<'de> for ModelSettings {
    fn deserialize<D: Deserializer<'de>>(d: D) -> Result<ModelSettings, D::Error> {
        let raw = RawModel::deserialize(d)?;
        let mut params = IndexMap::new();
        for (name, value) in [
            ("branch-refill", raw.branch_refill),
            ("divide", raw.divide),
            ("m3-multiply-long", raw.m3_multiply_long),
            ("m3-multiply-accumulate-long", raw.m3_multiply_accumulate_long),
            ("m0-multiplier", raw.m0_multiplier),
            ("m7-mispredict", raw.m7_mispredict),
            ("m7-history", raw.m7_history),
        ] {
            if let Some(v) = value {
                params.insert(name.to_string(), v);
            }
        }
        debug_assert!(params.keys().all(|k| Params::SPECS.iter().any(|s| s.name == k)));
        Ok(ModelSettings {
            clock_hz: raw.clock,
            params,
            flash: raw.flash,
            icache: raw.icache,
            dcache: raw.dcache,
            unified: raw.unified,
        })
    }
}

fn clock<'de, D: Deserializer<'de>>(d: D) -> Result<Option<u64>, D::Error> {
    let text = scalar_text(d, "a clock such as `168 MHz`")?;
    parse_clock(&text).map(Some).map_err(de::Error::custom)
}

/// Sets a core parameter from its scenario text: a whole number (`m0-multiplier` also `fast` or
/// `small`), checked by [`Params::set`].
pub fn set_param(params: &mut Params, name: &str, text: &str) -> Result<(), String> {
    let value = match (name, text.trim()) {
        ("m0-multiplier", "fast") => 1,
        ("m0-multiplier", "small") => 32,
        (_, t) => t.parse::<u32>().map_err(|_| {
            if Params::SPECS.iter().any(|s| s.name == name) {
                format!("`{name}` is a whole number, not `{text}`")
            } else {
                format!(
                    "unknown model parameter `{name}`; known: {}",
                    Params::SPECS.iter().map(|s| s.name).collect::<Vec<_>>().join(", ")
                )
            }
        })?,
    };
    params.set(name, value).map_err(|e| e.to_string())
}

/// Every scalar parameter of `params` by name, with its value, in [`Params::SPECS`] order.
pub fn settings(params: &Params) -> Vec<(&'static str, String)> {
    Params::SPECS.iter().map(|s| (s.name, params.get(s.name).map_or(String::new(), |v| v.to_string()))).collect()
}

/// A core parameter, checked with [`Params::set`] while the node is read.
fn param<'de, D: Deserializer<'de>>(d: D, name: &str) -> Result<Option<String>, D::Error> {
    let text = scalar_text(d, "a model parameter value")?;
    set_param(&mut Params::for_core(Core::CortexM4), name, &text).map_err(de::Error::custom)?;
    Ok(Some(text))
}

fn branch_refill<'de, D: Deserializer<'de>>(d: D) -> Result<Option<String>, D::Error> {
    param(d, "branch-refill")
}
fn divide<'de, D: Deserializer<'de>>(d: D) -> Result<Option<String>, D::Error> {
    param(d, "divide")
}
fn m3_multiply_long<'de, D: Deserializer<'de>>(d: D) -> Result<Option<String>, D::Error> {
    param(d, "m3-multiply-long")
}
fn m3_multiply_accumulate_long<'de, D: Deserializer<'de>>(d: D) -> Result<Option<String>, D::Error> {
    param(d, "m3-multiply-accumulate-long")
}
fn m0_multiplier<'de, D: Deserializer<'de>>(d: D) -> Result<Option<String>, D::Error> {
    param(d, "m0-multiplier")
}
fn m7_mispredict<'de, D: Deserializer<'de>>(d: D) -> Result<Option<String>, D::Error> {
    param(d, "m7-mispredict")
}
fn m7_history<'de, D: Deserializer<'de>>(d: D) -> Result<Option<String>, D::Error> {
    param(d, "m7-history")
}

/// A whole number of cycles or bytes, 0 or more: a negative number or a fraction is an error
/// that says so (not serde's "expected u32").
fn count<'de, D: Deserializer<'de>>(d: D, what: &'static str) -> Result<u32, D::Error> {
    let text = scalar_text(d, what)?;
    text.trim().parse::<u32>().map_err(|_| {
        de::Error::custom(if text.trim().starts_with('-') {
            format!("{what} cannot be negative (`{text}`)")
        } else {
            format!("`{text}` is not {what}")
        })
    })
}

#[derive(Debug, Deserialize)]
#[serde(deny_unknown_fields, rename_all = "kebab-case")]
struct RawFlash {
    #[serde(default, deserialize_with = "wait_states")]
    wait_states: Option<u32>,
    #[serde(default, deserialize_with = "line")]
    line: Option<u32>,
    prefetch: Option<bool>,
}

fn wait_states<'de, D: Deserializer<'de>>(d: D) -> Result<Option<u32>, D::Error> {
    let n = count(d, "`wait-states` (flash latency in cycles, 0 or more)")?;
    if n > 1000 {
        return Err(de::Error::custom(format!("{n} wait states is not a flash latency; give cycles per line read")));
    }
    Ok(Some(n))
}

fn line<'de, D: Deserializer<'de>>(d: D) -> Result<Option<u32>, D::Error> {
    let n = count(d, "a line length in bytes")?;
    if !n.is_power_of_two() || n < 4 {
        return Err(de::Error::custom(format!("line {n}: a flash line is a power of two of at least 4 bytes")));
    }
    Ok(Some(n))
}

fn flash<'de, D: Deserializer<'de>>(d: D) -> Result<Option<FlashSettings>, D::Error> {
    let raw = RawFlash::deserialize(d)?;
    Ok(Some(FlashSettings { wait_states: raw.wait_states, line: raw.line, prefetch: raw.prefetch }))
}

#[derive(Debug, Deserialize)]
#[serde(deny_unknown_fields)]
struct RawCache {
    size: Bytes,
    #[serde(deserialize_with = "ways")]
    ways: u32,
    #[serde(deserialize_with = "cache_line")]
    line: u32,
}

fn ways<'de, D: Deserializer<'de>>(d: D) -> Result<u32, D::Error> {
    count(d, "a number of ways")
}
fn cache_line<'de, D: Deserializer<'de>>(d: D) -> Result<u32, D::Error> {
    count(d, "a line length in bytes")
}

/// `off`, or `{ size, ways, line }` with a possible geometry.
fn cache<'de, D: Deserializer<'de>>(d: D) -> Result<Option<Option<CacheGeometry>>, D::Error> {
    struct Cache;
    impl<'de> Visitor<'de> for Cache {
        type Value = Option<CacheGeometry>;
        fn expecting(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
            f.write_str("`off` or { size, ways, line }")
        }
        fn visit_str<E: de::Error>(self, v: &str) -> Result<Self::Value, E> {
            match v {
                "off" => Ok(None),
                _ => Err(E::custom(format!("`{v}`: a cache is `off` or {{ size, ways, line }}"))),
            }
        }
        fn visit_bool<E: de::Error>(self, v: bool) -> Result<Self::Value, E> {
            if v { Err(E::custom("a cache is `off` or { size, ways, line }; `true` gives no size")) } else { Ok(None) }
        }
        fn visit_map<A: MapAccess<'de>>(self, map: A) -> Result<Self::Value, A::Error> {
            let raw = RawCache::deserialize(MapAccessDeserializer::new(map))?;
            let size = u32::try_from(raw.size.0).map_err(|_| de::Error::custom("a cache of 4 GiB or more"))?;
            let g = CacheGeometry { size, ways: raw.ways, line: raw.line };
            g.check().map_err(de::Error::custom)?;
            Ok(Some(g))
        }
    }
    d.deserialize_any(Cache).map(Some)
}

/// A named board timing profile: a real part at a clock, with its sources.
#[derive(Debug, Clone)]
pub struct TimingProfile {
    pub name: String,
    /// The part and board, e.g. `STM32F407VG (STM32F4DISCOVERY) at 168 MHz`.
    pub part: String,
    pub core: Core,
    /// Built-in boards whose QEMU machine runs this core (the first one the usual choice).
    pub boards: Vec<String>,
    /// Documents (with numbers and sections) every value comes from.
    pub sources: Vec<String>,
    /// The part's flash latency table: (highest clock in Hz, wait states), rising.
    pub flash_latency: Vec<(u64, u32)>,
    pub model: ModelSettings,
}

#[derive(Debug, Deserialize)]
#[serde(deny_unknown_fields, rename_all = "kebab-case")]
struct RawProfile {
    name: String,
    part: String,
    core: String,
    boards: Vec<String>,
    sources: Vec<String>,
    /// `- [168, 5]`: up to 168 MHz, 5 wait states.
    #[serde(default)]
    flash_latency: Vec<(f64, u32)>,
    model: ModelSettings,
}

/// The built-in profiles' files, in the order `mcubench boards` lists them.
const PROFILE_FILES: &[(&str, &str)] = &[
    ("stm32f407.yaml", include_str!("../../timing-profiles/stm32f407.yaml")),
    ("stm32l476.yaml", include_str!("../../timing-profiles/stm32l476.yaml")),
    ("stm32l4r5.yaml", include_str!("../../timing-profiles/stm32l4r5.yaml")),
    ("stm32h563.yaml", include_str!("../../timing-profiles/stm32h563.yaml")),
    ("nrf52840.yaml", include_str!("../../timing-profiles/nrf52840.yaml")),
    ("rp2040.yaml", include_str!("../../timing-profiles/rp2040.yaml")),
    ("rp2040-sram.yaml", include_str!("../../timing-profiles/rp2040-sram.yaml")),
];

impl TimingProfile {
    /// Parses a profile file; `file` names it in errors.
    pub fn parse(file: &str, text: &str) -> Result<TimingProfile, String> {
        let raw: RawProfile = serde_yaml_ng::from_str(text).map_err(|e| format!("{file}: {e}"))?;
        let core: Core = raw.core.parse().map_err(|e: mcubench_wire::UnknownCore| format!("{file}: {e}"))?;
        let mut flash_latency = Vec::new();
        for (mhz, ws) in raw.flash_latency {
            let hz = (mhz * 1e6).round() as u64;
            if flash_latency.last().is_some_and(|&(h, w)| h >= hz || w > ws) {
                return Err(format!("{file}: flash-latency must rise in clock and wait states"));
            }
            flash_latency.push((hz, ws));
        }
        for b in &raw.boards {
            let board = Board::find(b).ok_or_else(|| format!("{file}: unknown board `{b}`"))?;
            if !crate::config::machine::cpu_runs(board.qemu_cpu, core) {
                return Err(format!("{file}: board `{b}` (-cpu {}) does not run a {core}", board.qemu_cpu));
            }
        }
        Ok(TimingProfile {
            name: raw.name,
            part: raw.part,
            core,
            boards: raw.boards,
            sources: raw.sources,
            flash_latency,
            model: raw.model,
        })
    }

    /// Every built-in profile.
    pub fn all() -> &'static [TimingProfile] {
        static ALL: OnceLock<Vec<TimingProfile>> = OnceLock::new();
        ALL.get_or_init(|| {
            PROFILE_FILES
                .iter()
                // Built-in data, checked by a unit test: a parse error here is a bug in this crate.
                .map(|(file, text)| TimingProfile::parse(file, text).unwrap_or_else(|e| panic!("{e}")))
                .collect()
        })
    }

    pub fn find(name: &str) -> Option<&'static TimingProfile> {
        TimingProfile::all().iter().find(|p| p.name == name)
    }

    pub fn names() -> Vec<&'static str> {
        TimingProfile::all().iter().map(|p| p.name.as_str()).collect()
    }

    /// Wait states at `hz` from the latency table; an error past its end.
    pub fn wait_states_at(&self, hz: u64) -> Result<Option<u32>, String> {
        let Some(&(max, _)) = self.flash_latency.last() else { return Ok(None) };
        match self.flash_latency.iter().find(|&&(h, _)| hz <= h) {
            Some(&(_, ws)) => Ok(Some(ws)),
            None => Err(format!(
                "the {} runs at most {} (its flash latency table ends there); lower `model.clock`",
                self.name,
                clock_text(max)
            )),
        }
    }
}

/// A profile by name, checked while the YAML is read.
#[derive(Debug, Clone)]
pub struct ProfileName(pub &'static TimingProfile);

impl<'de> Deserialize<'de> for ProfileName {
    fn deserialize<D: Deserializer<'de>>(d: D) -> Result<ProfileName, D::Error> {
        let name = scalar_text(d, "a board timing profile name")?;
        TimingProfile::find(&name).map(ProfileName).ok_or_else(|| {
            de::Error::custom(format!(
                "unknown board timing profile `{name}`; known: {} (`mcubench boards` lists them)",
                TimingProfile::names().join(", ")
            ))
        })
    }
}

/// The cycle model of one board in one profile: what the plugin gets and the report shows.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct CycleModel {
    pub core: Core,
    pub params: Params,
    pub memory: MemoryConfig,
    pub clock_hz: Option<u64>,
    /// The board timing profile, if one was named.
    pub profile: Option<String>,
}

/// A setting [`CycleModel::resolve`] refuses: the key it is under (`model.icache`, `timing`),
/// so a scenario can point at it, and why. Displays as `key: message`.
#[derive(Debug, Clone, PartialEq, Eq, thiserror::Error)]
#[error("{key}: {message}")]
pub struct ModelError {
    pub key: String,
    pub message: String,
}

impl ModelError {
    fn new(key: impl Into<String>, message: impl Into<String>) -> ModelError {
        ModelError { key: key.into(), message: message.into() }
    }
}

impl CycleModel {
    /// Resolves `settings` (on top of `profile`, if any) for `board`; an error names the key
    /// that is impossible and says why (the caller adds where that key is).
    pub fn resolve(
        board: &Board,
        profile: Option<&TimingProfile>,
        settings: &ModelSettings,
    ) -> Result<CycleModel, ModelError> {
        let core = profile.map_or(board.core, |p| p.core);
        if !crate::config::machine::cpu_runs(board.qemu_cpu, core) {
            return Err(ModelError::new(
                "timing",
                format!(
                    "profile `{}` is a {} part; board `{}` runs -cpu {}, which does not run its code; pick a board of {}",
                    profile.map_or("", |p| p.name.as_str()),
                    core.label(),
                    board.name,
                    board.qemu_cpu,
                    profile.map_or(String::new(), |p| p.boards.join(", "))
                ),
            ));
        }
        let merged = match profile {
            Some(p) => p.model.overridden_by(settings),
            None => settings.clone(),
        };
        let mut params = Params::for_core(core);
        for (name, value) in &merged.params {
            set_param(&mut params, name, value).map_err(|e| ModelError::new(format!("model.{name}"), e))?;
        }
        let mut memory = MemoryConfig::default();
        if let Some(flash) = merged.flash {
            // A clock set here without wait states takes them from the part's latency table.
            let from_table = match (profile, settings.clock_hz, settings.flash.and_then(|f| f.wait_states)) {
                (Some(p), Some(hz), None) => p.wait_states_at(hz).map_err(|e| ModelError::new("model.clock", e))?,
                _ => None,
            };
            let wait_states = from_table.or(flash.wait_states).ok_or_else(|| {
                ModelError::new(
                    "model.flash",
                    "give `wait-states` (the part's flash latency at its clock, in cycles per line read)",
                )
            })?;
            let region = board.layout.flash;
            let end = region.end().min(u64::from(u32::MAX)) as u32;
            memory.flash.push(FlashRegion {
                start: region.origin as u32,
                end,
                wait_states,
                line: flash.line.unwrap_or(16),
            });
            memory.prefetch = flash.prefetch.unwrap_or(false);
        }
        for (key, cache) in [("icache", merged.icache.flatten()), ("dcache", merged.dcache.flatten())] {
            let Some(c) = cache else { continue };
            if memory.flash.is_empty() {
                return Err(ModelError::new(
                    format!("model.{key}"),
                    "a cache in front of no flash; give `model.flash` too",
                ));
            }
            if u64::from(c.size) > board.layout.flash.length {
                return Err(ModelError::new(
                    format!("model.{key}"),
                    format!(
                        "a {} B cache is larger than the board's {} B of flash; give a `size` of at most that",
                        c.size, board.layout.flash.length
                    ),
                ));
            }
            if key == "icache" {
                memory.icache = Some(c);
            } else {
                memory.dcache = Some(c);
            }
        }
        memory.unified = merged.unified.unwrap_or(false);
        if memory.unified && memory.icache.is_none() {
            return Err(ModelError::new("model.unified", "loads through an instruction cache, but `icache` is off"));
        }
        Ok(CycleModel { core, params, memory, clock_hz: merged.clock_hz, profile: profile.map(|p| p.name.clone()) })
    }

    /// The parameters that differ from the core's defaults, for the plugin's `param=`.
    pub fn param_args(&self) -> Vec<(String, String)> {
        let defaults = settings(&Params::for_core(self.core));
        settings(&self.params)
            .into_iter()
            .zip(defaults)
            .filter(|(a, b)| a != b)
            .map(|((k, v), _)| (k.to_string(), v))
            .collect()
    }

    /// Every effective value, by scenario key, for the report.
    pub fn effective(&self) -> IndexMap<String, String> {
        let mut m = IndexMap::new();
        if let Some(p) = &self.profile {
            m.insert("timing".into(), p.clone());
        }
        m.insert("core".into(), self.core.to_string());
        if let Some(hz) = self.clock_hz {
            m.insert("clock".into(), clock_text(hz));
        }
        for (k, v) in settings(&self.params) {
            m.insert(k.into(), v);
        }
        let cache = |c: Option<CacheGeometry>| {
            c.map_or("off".to_string(), |c| format!("{} B, {}-way, {} B lines", c.size, c.ways, c.line))
        };
        match self.memory.flash.first() {
            None => {
                m.insert("flash".into(), "0 WS (no memory system)".into());
            }
            Some(f) => {
                m.insert(
                    "flash".into(),
                    format!("0x{:08x}..0x{:08x}, {} WS, {} B lines", f.start, f.end, f.wait_states, f.line),
                );
                m.insert("prefetch".into(), self.memory.prefetch.to_string());
                m.insert("icache".into(), cache(self.memory.icache));
                m.insert("dcache".into(), cache(self.memory.dcache));
                m.insert("unified".into(), self.memory.unified.to_string());
            }
        }
        m
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn every_built_in_profile_parses_and_resolves_on_its_boards() {
        assert!(TimingProfile::all().len() >= 5);
        for p in TimingProfile::all() {
            assert!(!p.sources.is_empty(), "{}: no sources", p.name);
            assert!(p.model.clock_hz.is_some(), "{}: no clock", p.name);
            for b in &p.boards {
                let board = Board::find(b).unwrap();
                let m = CycleModel::resolve(board, Some(p), &ModelSettings::default())
                    .unwrap_or_else(|e| panic!("{} on {b}: {e}", p.name));
                assert_eq!(m.core, p.core);
                // The table agrees with the profile's own wait states at its own clock.
                if let (Ok(Some(ws)), Some(f)) = (p.wait_states_at(m.clock_hz.unwrap()), m.memory.flash.first()) {
                    assert_eq!(ws, f.wait_states, "{}: the latency table and model.flash disagree", p.name);
                }
            }
        }
    }

    #[test]
    fn a_clock_without_wait_states_takes_them_from_the_table() {
        let p = TimingProfile::find("stm32f407").unwrap();
        let board = Board::find("netduinoplus2").unwrap();
        let at = |mhz: u64| {
            let s = ModelSettings { clock_hz: Some(mhz * 1_000_000), ..Default::default() };
            CycleModel::resolve(board, Some(p), &s).map(|m| m.memory.flash[0].wait_states)
        };
        assert_eq!(at(168), Ok(5));
        assert_eq!(at(24), Ok(0));
        assert!(at(200).unwrap_err().to_string().contains("at most 168 MHz"));
        // A profile for another core on a board whose CPU cannot run it.
        let h5 = TimingProfile::find("stm32h563").unwrap();
        let e = CycleModel::resolve(Board::find("mps2-an385").unwrap(), Some(h5), &ModelSettings::default());
        assert!(e.unwrap_err().to_string().contains("Cortex-M33 part"));
    }

    #[test]
    fn clocks_parse_with_units_and_zero_is_refused() {
        assert_eq!(parse_clock("168 MHz"), Ok(168_000_000));
        assert_eq!(parse_clock("12.5MHz"), Ok(12_500_000));
        assert_eq!(parse_clock("32768"), Ok(32768));
        assert!(parse_clock("0 MHz").unwrap_err().contains("impossible"));
        assert!(parse_clock("5 furlongs").is_err());
        assert_eq!(clock_text(250_000_000), "250 MHz");
    }
}
