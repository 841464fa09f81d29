//! The entries of a scenario's `boards:` list: a built-in board's name, or a board of the
//! scenario's own for an ELF linked for a real part:
//!
//! ```yaml
//! boards:
//!   - mps2-an386
//!   - name: stm32h5-like
//!     core: cortex-m33
//!     qemu: { machine: mps2-an505, cpu: cortex-m33 }
//!     memory: { flash: { origin: 0x10000000, length: 2 MiB }, ram: { origin: 0x38000000, length: 640 KiB } }
//!     systick-hz: 20000000                       # optional: the machine's
//!     rust-target: thumbv8m.main-none-eabihf     # optional: the core's
//! ```
//!
//! A user board runs on one of QEMU's machines ([`crate::config::machine`]), so what can be
//! checked is checked while the YAML is read, and the error carries the key path, line and
//! column: the core is one mcubench models and the machine's CPU runs its code; the machine is one
//! QEMU has and the CPU the one it takes; each region is non-empty and ends within 32 bits; flash
//! and RAM do not overlap; both lie in memory the machine maps (RAM in writable memory; flash at a
//! Secure alias on a machine that boots Secure); the Rust target's code runs on the core; the
//! name is no built-in board's or layout's.

use std::fmt;
use std::path::Path;

use serde::de::{self, MapAccess, Visitor, value::MapAccessDeserializer};
use serde::{Deserialize, Deserializer};

use mcubench_wire::Core;

use crate::config::board::{BOARDS, Board, Layout, Region};
use crate::config::machine::{self, Machine};
use crate::config::units::Bytes;

/// One entry of `boards:`.
#[derive(Debug, Clone)]
pub enum BoardEntry {
    BuiltIn(&'static Board),
    User(UserBoard),
}

impl BoardEntry {
    pub fn name(&self) -> &str {
        match self {
            BoardEntry::BuiltIn(b) => b.name,
            BoardEntry::User(u) => &u.name,
        }
    }

    /// The board; a user board is made 'static here (see [`Board::user`]).
    pub fn board(&self, scenario: &Path) -> &'static Board {
        match self {
            BoardEntry::BuiltIn(b) => b,
            BoardEntry::User(u) => Board::user(u, scenario),
        }
    }
}

impl<'de> Deserialize<'de> for BoardEntry {
    fn deserialize<D: Deserializer<'de>>(d: D) -> Result<BoardEntry, D::Error> {
        struct Entry;
        impl<'de> Visitor<'de> for Entry {
            type Value = BoardEntry;
            fn expecting(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
                f.write_str("a board name, or a board of your own: { name, core, qemu, memory }")
            }
            fn visit_str<E: de::Error>(self, name: &str) -> Result<BoardEntry, E> {
                Board::find(name).map(BoardEntry::BuiltIn).ok_or_else(|| {
                    E::custom(format!(
                        "unknown board `{name}`; known boards: {}; or define your own with name, core, qemu and memory",
                        Board::names().join(", ")
                    ))
                })
            }
            fn visit_map<A: MapAccess<'de>>(self, map: A) -> Result<BoardEntry, A::Error> {
                let raw = RawUserBoard::deserialize(MapAccessDeserializer::new(map))?;
                UserBoard::try_from(raw).map(BoardEntry::User).map_err(de::Error::custom)
            }
        }
        d.deserialize_any(Entry)
    }
}

/// A board defined in a scenario, checked.
#[derive(Debug, Clone)]
pub struct UserBoard {
    pub name: String,
    pub core: Core,
    pub machine: &'static Machine,
    pub flash: Region,
    pub ram: Region,
    pub systick_hz: u64,
    pub rust_target: &'static str,
}

#[derive(Debug, Deserialize)]
#[serde(deny_unknown_fields, rename_all = "kebab-case")]
struct RawUserBoard {
    #[serde(deserialize_with = "board_name")]
    name: String,
    #[serde(deserialize_with = "core")]
    core: Core,
    #[serde(deserialize_with = "qemu")]
    qemu: Qemu,
    #[serde(deserialize_with = "memory")]
    memory: Memory,
    #[serde(default, deserialize_with = "systick_hz")]
    systick_hz: Option<u64>,
    rust_target: Option<String>,
}

// Where a check fails decides where the error points: serde_yaml_ng gives an error the line and
// column of the YAML node whose deserialization it leaves. So each check runs inside the
// deserialization of the node it is about (a scalar's visitor, a mapping's `visit_map`), never
// after it: a bad core points at `core:`'s value, overlapping regions at `memory:`'s mapping.

/// A scalar read as text and checked by `check` while the deserializer is on it.
fn checked_scalar<'de, D: Deserializer<'de>, T>(
    d: D,
    expecting: &'static str,
    check: fn(&str) -> Result<T, String>,
) -> Result<T, D::Error> {
    struct Scalar<T> {
        expecting: &'static str,
        check: fn(&str) -> Result<T, String>,
    }
    impl<T> Visitor<'_> for Scalar<T> {
        type Value = T;
        fn expecting(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
            f.write_str(self.expecting)
        }
        fn visit_str<E: de::Error>(self, v: &str) -> Result<T, E> {
            (self.check)(v).map_err(E::custom)
        }
        fn visit_u64<E: de::Error>(self, v: u64) -> Result<T, E> {
            (self.check)(&v.to_string()).map_err(E::custom)
        }
    }
    d.deserialize_any(Scalar { expecting, check })
}

/// A mapping read as `R` and turned into `T` by `check` while the deserializer is on it.
fn checked_map<'de, D: Deserializer<'de>, R: Deserialize<'de>, T>(
    d: D,
    expecting: &'static str,
    check: fn(R) -> Result<T, String>,
) -> Result<T, D::Error> {
    struct Map<R, T> {
        expecting: &'static str,
        check: fn(R) -> Result<T, String>,
    }
    impl<'de, R: Deserialize<'de>, T> Visitor<'de> for Map<R, T> {
        type Value = T;
        fn expecting(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
            f.write_str(self.expecting)
        }
        fn visit_map<A: MapAccess<'de>>(self, map: A) -> Result<T, A::Error> {
            let raw = R::deserialize(MapAccessDeserializer::new(map))?;
            (self.check)(raw).map_err(de::Error::custom)
        }
    }
    d.deserialize_map(Map { expecting, check })
}

impl TryFrom<RawUserBoard> for UserBoard {
    type Error = String;

    fn try_from(raw: RawUserBoard) -> Result<UserBoard, String> {
        let machine = raw.qemu.machine;
        let at = format!("board `{}`", raw.name);
        if !machine.runs(raw.core) {
            return Err(format!(
                "{at}: core {} does not run on QEMU's {} (-cpu {}); pick a machine whose CPU has the core's instruction set",
                raw.core, machine.name, machine.cpu
            ));
        }
        let layout = Layout { name: "", about: &[], flash: raw.memory.flash, ram: raw.memory.ram, defined_in: None };
        machine.check_layout(&layout).map_err(|e| format!("{at}: memory: {e}"))?;
        let targets = machine::rust_targets(raw.core);
        let rust_target = match &raw.rust_target {
            None => targets[0],
            Some(t) => targets.iter().copied().find(|k| k == t).ok_or_else(|| {
                format!(
                    "{at}: rust-target `{t}` does not build code for a {}; use one of: {}",
                    raw.core,
                    targets.join(", ")
                )
            })?,
        };
        Ok(UserBoard {
            name: raw.name,
            core: raw.core,
            machine,
            flash: raw.memory.flash,
            ram: raw.memory.ram,
            systick_hz: raw.systick_hz.unwrap_or(machine.systick_hz),
            rust_target,
        })
    }
}

/// `qemu: { machine, cpu }` (`cpu` defaults to the machine's).
#[derive(Debug)]
struct Qemu {
    machine: &'static Machine,
}

fn qemu<'de, D: Deserializer<'de>>(d: D) -> Result<Qemu, D::Error> {
    checked_map(d, "{ machine, cpu }", <Qemu as TryFrom<RawQemu>>::try_from)
}

#[derive(Debug, Deserialize)]
#[serde(deny_unknown_fields)]
struct RawQemu {
    machine: MachineName,
    cpu: Option<String>,
}

/// A machine of [`crate::config::machine::MACHINES`], by name.
#[derive(Debug)]
struct MachineName(&'static Machine);

impl<'de> Deserialize<'de> for MachineName {
    fn deserialize<D: Deserializer<'de>>(d: D) -> Result<MachineName, D::Error> {
        checked_scalar(d, "a QEMU machine name", |name| {
            Machine::find(name).map(MachineName).ok_or_else(|| {
                format!("unknown QEMU machine `{name}`; mcubench runs on: {}", Machine::names().join(", "))
            })
        })
    }
}

impl TryFrom<RawQemu> for Qemu {
    type Error = String;

    fn try_from(raw: RawQemu) -> Result<Qemu, String> {
        let machine = raw.machine.0;
        match raw.cpu {
            Some(cpu) if cpu != machine.cpu => Err(format!(
                "QEMU's {} takes only -cpu {} (it exits 1 on `{cpu}`); leave `cpu` out or write {}",
                machine.name, machine.cpu, machine.cpu
            )),
            _ => Ok(Qemu { machine }),
        }
    }
}

/// `memory: { flash: { origin, length }, ram: { origin, length } }`.
#[derive(Debug)]
struct Memory {
    flash: Region,
    ram: Region,
}

fn memory<'de, D: Deserializer<'de>>(d: D) -> Result<Memory, D::Error> {
    checked_map(d, "{ flash: { origin, length }, ram: { origin, length } }", <Memory as TryFrom<RawMemory>>::try_from)
}

#[derive(Debug, Deserialize)]
#[serde(deny_unknown_fields)]
struct RawMemory {
    #[serde(deserialize_with = "region")]
    flash: Region,
    #[serde(deserialize_with = "region")]
    ram: Region,
}

impl TryFrom<RawMemory> for Memory {
    type Error = String;

    fn try_from(raw: RawMemory) -> Result<Memory, String> {
        if raw.flash.overlaps(&raw.ram) {
            return Err(format!(
                "flash 0x{:08x}..0x{:08x} and ram 0x{:08x}..0x{:08x} overlap; the linker would place code and data on the same bytes",
                raw.flash.origin,
                raw.flash.end(),
                raw.ram.origin,
                raw.ram.end()
            ));
        }
        Ok(Memory { flash: raw.flash, ram: raw.ram })
    }
}

#[derive(Debug, Deserialize)]
#[serde(deny_unknown_fields)]
struct RawRegion {
    origin: u64,
    length: Bytes,
}

fn region<'de, D: Deserializer<'de>>(d: D) -> Result<Region, D::Error> {
    checked_map(d, "{ origin, length }", |raw: RawRegion| {
        let region = Region { origin: raw.origin, length: raw.length.0 };
        if region.length == 0 {
            return Err("length is 0; a region needs at least one byte".into());
        }
        if region.origin.checked_add(region.length).is_none_or(|end| end > 1 << 32) {
            return Err(format!(
                "origin 0x{:x} + length 0x{:x} ends past 0xffffffff, the end of a Cortex-M's address space",
                region.origin, region.length
            ));
        }
        Ok(region)
    })
}

fn board_name<'de, D: Deserializer<'de>>(d: D) -> Result<String, D::Error> {
    checked_scalar(d, "a board name", |name| {
        let valid = name.chars().next().is_some_and(|c| c.is_ascii_alphanumeric())
            && name.chars().all(|c| c.is_ascii_alphanumeric() || "._-".contains(c));
        if !valid {
            return Err(format!(
                "`{name}` is not a valid board name (letters, digits, . _ -, starting with a letter or digit)"
            ));
        }
        if Board::find(name).is_some() {
            return Err(format!(
                "`{name}` is a built-in board; name yours differently, or list the built-in by its name alone"
            ));
        }
        if BOARDS.iter().any(|b| b.layout.name == name) {
            return Err(format!(
                "`{name}` names a built-in memory layout (linker/{name}); name your board differently"
            ));
        }
        Ok(name.to_string())
    })
}

fn core<'de, D: Deserializer<'de>>(d: D) -> Result<Core, D::Error> {
    checked_scalar(d, "a core, e.g. cortex-m4f", |name| {
        name.parse().map_err(|e: mcubench_wire::UnknownCore| e.to_string())
    })
}

fn systick_hz<'de, D: Deserializer<'de>>(d: D) -> Result<Option<u64>, D::Error> {
    checked_scalar(d, "a SysTick clock in Hz, e.g. 25000000", |text| match text.parse::<u64>() {
        Ok(0) => Err("a SysTick clock of 0 Hz; give the clock QEMU models for the machine, in Hz".into()),
        Ok(hz) => Ok(Some(hz)),
        Err(_) => Err(format!("`{text}` is not a SysTick clock; write the clock in Hz, e.g. 25000000")),
    })
}

impl Board {
    /// A scenario's board, with `'static` lifetime like the built-ins: the board, its layout and
    /// their strings are leaked. That is a few hundred bytes per user board per scenario load,
    /// and a process loads a handful of scenarios; the rest of mcubench keeps `&'static Board`.
    pub fn user(def: &UserBoard, scenario: &Path) -> &'static Board {
        fn leak(s: String) -> &'static str {
            Box::leak(s.into_boxed_str())
        }
        let name = leak(def.name.clone());
        let m = def.machine;
        let about: Vec<&'static str> = vec![
            leak(format!("User board `{name}` ({}), run on QEMU's {} (-cpu {}):", def.core.label(), m.name, m.cpu)),
            leak(format!("{}.", m.about)),
        ];
        let layout: &'static Layout = Box::leak(Box::new(Layout {
            name,
            about: Box::leak(about.into_boxed_slice()),
            flash: def.flash,
            ram: def.ram,
            defined_in: Some(leak(scenario.display().to_string())),
        }));
        Box::leak(Box::new(Board {
            name,
            core: def.core,
            rust_target: def.rust_target,
            qemu_machine: m.name,
            qemu_cpu: m.cpu,
            layout,
            systick_hz: def.systick_hz,
        }))
    }

    /// Whether the board is defined by a scenario rather than built in.
    pub fn is_user(&self) -> bool {
        self.layout.defined_in.is_some()
    }
}
