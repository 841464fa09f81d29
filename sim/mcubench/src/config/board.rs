//! Boards mcubench can run on. A board is data: the Rust target, the QEMU machine and CPU, the
//! memory map ([`Layout`]) and the SysTick clock that turns ticks into instructions under
//! `-icount shift=0`. Adding a board is adding an entry to [`BOARDS`] (and a layout if it has a
//! memory map of its own); every board's machine is one of [`crate::config::machine::MACHINES`],
//! which a test checks it against. A scenario can define boards of its own ([`Board::user`]).
//!
//! This file is the one source of the memory maps. The linker files are generated from it:
//! `linker/<layout>/memory.x` ([`Layout::memory_x`]), which cortex-m-rt's `link.x` includes for the
//! Rust firmware, and which the C firmware's linker scripts (`*.ld` under `firmware/c`) include with
//! `INCLUDE memory.x` (found through `-L linker/<layout>`) instead of a `MEMORY` block of their
//! own. The test `linker_files_are_generated_from_the_board_data` compares every file byte for byte
//! and regenerates them with [`REGENERATE_LINKER_FILES`].

use std::fmt::Write as _;

use mcubench_elf::MemoryRegion;
use mcubench_thumb::Arch;
use mcubench_wire::Core;

#[derive(Debug, Clone, Copy)]
pub struct Board {
    pub name: &'static str,
    /// The processor core: the report's label, the cycle model, the instruction set.
    pub core: Core,
    pub rust_target: &'static str,
    pub qemu_machine: &'static str,
    pub qemu_cpu: &'static str,
    /// The memory map, shared by the boards that have the same one.
    pub layout: &'static Layout,
    /// SysTick clock with the processor clock source, as QEMU models it.
    pub systick_hz: u64,
}

/// A memory map: the `MEMORY` block of the linker scripts, with the two regions cortex-m-rt's
/// `link.x` and mcubench's C scripts place sections in. Written to `linker/<name>/memory.x` by
/// [`Layout::memory_x`].
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub struct Layout {
    /// The directory under `linker/` that holds this layout's `memory.x`; also the name of its
    /// build directory (boards with the same target and layout share one ELF).
    pub name: &'static str,
    /// What the emulated board has at these addresses and why: the comment of the generated file.
    pub about: &'static [&'static str],
    /// Code, read-only data and the load image of `.data`; the vector table at its start.
    pub flash: Region,
    /// `.data`, `.bss` and the stack (cortex-m-rt starts the stack at the end of RAM).
    pub ram: Region,
    /// The scenario file that defines the layout's user board; `None` for the layouts of this
    /// file (the ones under `linker/`).
    pub defined_in: Option<&'static str>,
}

/// One region of a memory map.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub struct Region {
    pub origin: u64,
    pub length: u64,
}

impl Region {
    /// The first address after the region.
    pub fn end(&self) -> u64 {
        self.origin + self.length
    }

    pub fn contains(&self, address: u64) -> bool {
        (self.origin..self.end()).contains(&address)
    }

    pub fn overlaps(&self, other: &Region) -> bool {
        self.origin < other.end() && other.origin < self.end()
    }
}

const KIB: u64 = 1024;
const MIB: u64 = 1024 * KIB;

const MPS2: Layout = Layout {
    name: "mps2",
    about: &[
        "Arm MPS2 as modelled by QEMU. QEMU maps 4 MiB of ZBT SSRAM1 at 0x00000000 (the \"flash\":",
        "-kernel loads the ELF there and the CPU fetches the initial SP and reset vector from",
        "address 0) and 4 MiB of ZBT SSRAM2/3 at 0x20000000. Both are plain RAM in QEMU; nothing is",
        "write-protected. cortex-m-rt's link.x places the stack at the top of RAM",
        "(_stack_start = end of RAM).",
    ],
    flash: Region { origin: 0x0000_0000, length: 4 * MIB },
    ram: Region { origin: 0x2000_0000, length: 4 * MIB },
    defined_in: None,
};

const MPS2_AN505: Layout = Layout {
    name: "mps2-an505",
    about: &[
        "Arm MPS2 with the AN505 FPGA image (Cortex-M33, IoTKit) or the AN521 image (SSE-200, two",
        "Cortex-M33s, the second powered off at reset) as modelled by QEMU: both map the same memory.",
        "The M33 comes out of reset in the Secure state and QEMU's IDAU marks addresses with bit 28",
        "set as Secure. Code and data must therefore use the Secure aliases; linking at the",
        "non-secure aliases (0x00000000 / 0x28000000) makes the core lock up (QEMU aborts, exit 134).",
        "  - ZBT SSRAM1, 4 MiB at 0x00000000, Secure alias 0x10000000 (initial Secure VTOR)",
        "  - ZBT SSRAM2+3, 2 MiB + 2 MiB contiguous at 0x28000000, Secure alias 0x38000000",
    ],
    flash: Region { origin: 0x1000_0000, length: 4 * MIB },
    ram: Region { origin: 0x3800_0000, length: 4 * MIB },
    defined_in: None,
};

const MICROBIT: Layout = Layout {
    name: "microbit",
    about: &[
        "BBC micro:bit v1 (nRF51822 QFAA, Cortex-M0) as modelled by QEMU: 256 KiB of flash at",
        "0x00000000 and 16 KiB of RAM at 0x20000000. The small RAM is the point of this board: it is",
        "the tightest stack/RAM budget mcubench runs on, so keep the layout honest.",
    ],
    flash: Region { origin: 0x0000_0000, length: 256 * KIB },
    ram: Region { origin: 0x2000_0000, length: 16 * KIB },
    defined_in: None,
};

const NETDUINOPLUS2: Layout = Layout {
    name: "netduinoplus2",
    about: &[
        "Netduino Plus 2 (STM32F405RG, Cortex-M4F) as modelled by QEMU: 1 MiB of flash at 0x08000000",
        "(aliased at 0x00000000, where the core fetches the initial SP and reset vector) and the",
        "contiguous SRAM1 + SRAM2 (112 KiB + 16 KiB) at 0x20000000. The 64 KiB of CCM RAM at",
        "0x10000000 is not used.",
    ],
    flash: Region { origin: 0x0800_0000, length: MIB },
    ram: Region { origin: 0x2000_0000, length: 128 * KIB },
    defined_in: None,
};

const LM3S6965EVB: Layout = Layout {
    name: "lm3s6965evb",
    about: &[
        "TI Stellaris LM3S6965 evaluation board (Cortex-M3) as modelled by QEMU, the board of",
        "Zephyr's qemu_cortex_m3: 256 KiB of flash at 0x00000000 and 64 KiB of SRAM at 0x20000000.",
    ],
    flash: Region { origin: 0x0000_0000, length: 256 * KIB },
    ram: Region { origin: 0x2000_0000, length: 64 * KIB },
    defined_in: None,
};

/// Every supported board. Order is the order reports use.
pub const BOARDS: &[Board] = &[
    Board {
        name: "mps2-an386",
        core: Core::CortexM4F,
        rust_target: "thumbv7em-none-eabihf",
        qemu_machine: "mps2-an386",
        qemu_cpu: "cortex-m4",
        layout: &MPS2,
        systick_hz: 25_000_000,
    },
    Board {
        name: "mps2-an385",
        core: Core::CortexM3,
        rust_target: "thumbv7m-none-eabi",
        qemu_machine: "mps2-an385",
        qemu_cpu: "cortex-m3",
        layout: &MPS2,
        systick_hz: 25_000_000,
    },
    Board {
        name: "mps2-an500",
        core: Core::CortexM7,
        rust_target: "thumbv7em-none-eabihf",
        qemu_machine: "mps2-an500",
        qemu_cpu: "cortex-m7",
        layout: &MPS2,
        systick_hz: 25_000_000,
    },
    Board {
        // Boots in the Secure state: linked at the Secure aliases (see the layout).
        name: "mps2-an505",
        core: Core::CortexM33,
        rust_target: "thumbv8m.main-none-eabihf",
        qemu_machine: "mps2-an505",
        qemu_cpu: "cortex-m33",
        layout: &MPS2_AN505,
        systick_hz: 20_000_000,
    },
    Board {
        name: "microbit",
        core: Core::CortexM0,
        rust_target: "thumbv6m-none-eabi",
        qemu_machine: "microbit",
        qemu_cpu: "cortex-m0",
        layout: &MICROBIT,
        systick_hz: 16_000_000,
    },
    Board {
        // STM32F405: flash at 0x08000000, as most STM32 parts.
        name: "netduinoplus2",
        core: Core::CortexM4F,
        rust_target: "thumbv7em-none-eabihf",
        qemu_machine: "netduinoplus2",
        qemu_cpu: "cortex-m4",
        layout: &NETDUINOPLUS2,
        systick_hz: 168_000_000,
    },
    Board {
        // Zephyr's qemu_cortex_m3. SysTick: the reset value of SYSCTL RCC (200 MHz / 16).
        name: "lm3s6965evb",
        core: Core::CortexM3,
        rust_target: "thumbv7m-none-eabi",
        qemu_machine: "lm3s6965evb",
        qemu_cpu: "cortex-m3",
        layout: &LM3S6965EVB,
        systick_hz: 12_500_000,
    },
    Board {
        // Two Cortex-M33s in QEMU (no `-smp 1`); the second stays powered off and the plugin
        // voids a run in which it runs code. Same memory and SysTick as mps2-an505.
        name: "mps2-an521",
        core: Core::CortexM33,
        rust_target: "thumbv8m.main-none-eabihf",
        qemu_machine: "mps2-an521",
        qemu_cpu: "cortex-m33",
        layout: &MPS2_AN505,
        systick_hz: 20_000_000,
    },
];

/// How to regenerate the files under `linker/` after changing a [`Layout`].
pub const REGENERATE_LINKER_FILES: &str = "MCUBENCH_UPDATE_LINKER=1 cargo test -p mcubench --lib linker_files";

impl Layout {
    /// The layouts of [`BOARDS`], each once, in board order: one `linker/<name>/memory.x` each.
    pub fn all() -> Vec<&'static Layout> {
        let mut layouts: Vec<&'static Layout> = Vec::new();
        for b in BOARDS {
            if !layouts.iter().any(|l| l.name == b.layout.name) {
                layouts.push(b.layout);
            }
        }
        layouts
    }

    /// The regions as the ELF reader names them (`FLASH`, `RAM`: the names in `memory.x`).
    pub fn regions(&self) -> [MemoryRegion; 2] {
        [
            MemoryRegion::new("FLASH", self.flash.origin, self.flash.length),
            MemoryRegion::new("RAM", self.ram.origin, self.ram.length),
        ]
    }

    /// The `memory.x` for this layout: the file cortex-m-rt's `link.x` and the C linker scripts
    /// under `firmware/c` include (`INCLUDE memory.x`). `linker/<name>/memory.x` is this text.
    pub fn memory_x(&self) -> String {
        let mut out = format!("/* mcubench memory layout `{}`", self.name);
        if let Some(scenario) = self.defined_in {
            let _ = writeln!(out, " (user board {}).", self.name);
            // A path may hold `*/` or `/*`, which would end or nest the comment.
            let scenario = scenario.replace("*/", "*\u{2215}").replace("/*", "\u{2215}*");
            let _ =
                writeln!(out, " * Generated by mcubench from the board `{}` of {scenario}; do not edit.", self.name);
            let _ = writeln!(
                out,
                " * Included by cortex-m-rt's link.x (Rust firmware) and by C linker scripts (`INCLUDE memory.x`)."
            );
        } else {
            let boards: Vec<&str> = BOARDS.iter().filter(|b| b.layout.name == self.name).map(|b| b.name).collect();
            if !boards.is_empty() {
                let _ = write!(out, " (boards {})", boards.join(", "));
            }
            out.push_str(".\n");
            let _ = writeln!(
                out,
                " * Generated from sim/mcubench/src/config/board.rs; do not edit. Change the layout there, then:"
            );
            let _ = writeln!(out, " *   {REGENERATE_LINKER_FILES}");
            let _ = writeln!(
                out,
                " * Included by cortex-m-rt's link.x (Rust firmware) and by the linker scripts of firmware/c"
            );
            let _ = writeln!(out, " * (C firmware: `INCLUDE memory.x`, linked with `-L linker/{}`).", self.name);
        }
        let _ = writeln!(out, " *");
        for line in self.about {
            let _ = writeln!(out, " * {line}");
        }
        let _ = writeln!(out, " */\nMEMORY\n{{");
        for (name, region) in [("FLASH", self.flash), ("RAM  ", self.ram)] {
            let _ =
                writeln!(out, "  {name} : ORIGIN = 0x{:08X}, LENGTH = {}", region.origin, linker_size(region.length));
        }
        out.push_str("}\n");
        out
    }
}

/// A size as GNU ld reads it: `4M`, `256K`, or bytes.
pub fn linker_size(bytes: u64) -> String {
    match bytes {
        b if b > 0 && b % MIB == 0 => format!("{}M", b / MIB),
        b if b > 0 && b % KIB == 0 => format!("{}K", b / KIB),
        b => b.to_string(),
    }
}

impl Board {
    pub fn find(name: &str) -> Option<&'static Board> {
        BOARDS.iter().find(|b| b.name == name)
    }

    pub fn names() -> Vec<&'static str> {
        BOARDS.iter().map(|b| b.name).collect()
    }

    /// The board's memory map for the ELF reader: `FLASH` and `RAM`.
    pub fn regions(&self) -> [MemoryRegion; 2] {
        self.layout.regions()
    }

    /// Instructions executed during `ticks` SysTick ticks under `-icount shift=0`, where one
    /// instruction is one nanosecond of virtual time.
    pub fn ticks_to_instructions(&self, ticks: u64) -> u64 {
        (u128::from(ticks) * 1_000_000_000 / u128::from(self.systick_hz)) as u64
    }

    /// Instruction set and FPU of the core, for decoding its code.
    pub fn arch(&self) -> (Arch, bool) {
        (Arch::from(self.core), self.core.has_fpu())
    }

    /// Instructions per SysTick tick: the resolution of a SysTick-based count.
    pub fn instructions_per_tick(&self) -> f64 {
        1e9 / self.systick_hz as f64
    }
}

#[cfg(test)]
mod tests {
    use std::path::{Path, PathBuf};

    use super::*;

    #[test]
    fn tick_conversion_follows_each_board_clock() {
        assert_eq!(Board::find("mps2-an386").unwrap().ticks_to_instructions(3), 120);
        assert_eq!(Board::find("mps2-an505").unwrap().ticks_to_instructions(3), 150);
        assert_eq!(Board::find("microbit").unwrap().ticks_to_instructions(2), 125);
        assert_eq!(Board::find("netduinoplus2").unwrap().ticks_to_instructions(168), 1000);
    }

    /// The repository's `linker/` directory.
    fn linker_dir() -> PathBuf {
        Path::new(env!("CARGO_MANIFEST_DIR")).join("../../linker")
    }

    /// Where `have` and `want` first differ, for the failure message.
    fn first_difference(have: &str, want: &str) -> String {
        let (mut have_lines, mut want_lines) = (have.lines(), want.lines());
        for line in 1.. {
            match (have_lines.next(), want_lines.next()) {
                (None, None) => break,
                (h, w) if h == w => continue,
                (h, w) => {
                    return format!(
                        "line {line}: the file has `{}`, board.rs gives `{}`",
                        h.unwrap_or("<end of file>"),
                        w.unwrap_or("<end of file>")
                    );
                }
            }
        }
        "line endings differ".into()
    }

    /// The one check of the linker files against the board data: every layout's whole `memory.x`
    /// (origin and length of every region, and anything else in the file), and no directory under
    /// `linker/` without a layout. With `MCUBENCH_UPDATE_LINKER` set, writes them instead.
    #[test]
    fn linker_files_are_generated_from_the_board_data() {
        let update = std::env::var_os("MCUBENCH_UPDATE_LINKER").is_some();
        let root = linker_dir();
        let mut problems = Vec::new();
        for layout in Layout::all() {
            let path = root.join(layout.name).join("memory.x");
            let want = layout.memory_x();
            let have = std::fs::read_to_string(&path);
            if have.as_deref().ok() == Some(want.as_str()) {
                continue;
            }
            if update {
                std::fs::create_dir_all(path.parent().unwrap()).unwrap();
                std::fs::write(&path, &want).unwrap_or_else(|e| panic!("{}: {e}", path.display()));
                eprintln!("wrote linker/{}/memory.x", layout.name);
                continue;
            }
            problems.push(match have {
                Ok(have) => format!(
                    "linker/{}/memory.x differs from layout `{}` in sim/mcubench/src/config/board.rs ({})",
                    layout.name,
                    layout.name,
                    first_difference(&have, &want)
                ),
                Err(e) => format!("linker/{}/memory.x: {e}", layout.name),
            });
        }
        for entry in std::fs::read_dir(&root).unwrap() {
            let entry = entry.unwrap();
            let name = entry.file_name().to_string_lossy().into_owned();
            if entry.file_type().unwrap().is_dir() && !Layout::all().iter().any(|l| l.name == name) {
                problems.push(format!(
                    "linker/{name} is no board's layout in sim/mcubench/src/config/board.rs: delete it, or add \
                     the layout and a board that uses it"
                ));
            }
        }
        assert!(
            problems.is_empty(),
            "{}\nThe files under linker/ are generated: change sim/mcubench/src/config/board.rs, not them, \
             then regenerate them with\n  {REGENERATE_LINKER_FILES}",
            problems.join("\n")
        );
    }

    /// The C firmware's linker scripts take their memory map from `linker/` as cortex-m-rt does,
    /// never from a `MEMORY` block of their own (which nothing would check).
    #[test]
    fn c_linker_scripts_include_the_generated_memory_map() {
        fn scripts(dir: &Path, found: &mut Vec<PathBuf>) {
            for entry in std::fs::read_dir(dir).unwrap() {
                let path = entry.unwrap().path();
                if path.is_dir() {
                    scripts(&path, found);
                } else if path.extension().is_some_and(|e| e == "ld") {
                    found.push(path);
                }
            }
        }
        let mut found = Vec::new();
        scripts(&Path::new(env!("CARGO_MANIFEST_DIR")).join("../../firmware/c"), &mut found);
        assert!(!found.is_empty(), "no linker script under firmware/c");
        for path in found {
            let text = std::fs::read_to_string(&path).unwrap();
            let code: Vec<&str> = text.lines().map(str::trim).collect();
            assert!(code.contains(&"INCLUDE memory.x"), "{}: no `INCLUDE memory.x`", path.display());
            assert!(
                !code.iter().any(|l| l.starts_with("MEMORY")),
                "{}: a MEMORY block of its own; include linker/<layout>/memory.x (`INCLUDE memory.x` and \
                 `-L linker/<layout>`) and change the map in sim/mcubench/src/config/board.rs",
                path.display()
            );
        }
    }

    #[test]
    fn layouts_are_consistent() {
        let all = Layout::all();
        for b in BOARDS {
            let layout = all.iter().find(|l| l.name == b.layout.name).unwrap();
            assert_eq!(*layout, b.layout, "{}: two layouts named `{}` with different maps", b.name, layout.name);
        }
        for l in all {
            assert!(l.flash.length > 0 && l.ram.length > 0, "{}: empty region", l.name);
            assert!(
                l.flash.end() <= l.ram.origin || l.ram.end() <= l.flash.origin,
                "{}: FLASH and RAM overlap",
                l.name
            );
            let text = l.memory_x();
            assert_eq!(
                (text.matches("/*").count(), text.matches("*/").count()),
                (1, 1),
                "{}: one comment, at the top; `/*` or `*/` in the text would break it",
                l.name
            );
        }
        assert_eq!(linker_size(4 * MIB), "4M");
        assert_eq!(linker_size(16 * KIB), "16K");
        assert_eq!(linker_size(1000), "1000");
    }
}
