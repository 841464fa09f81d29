//! The QEMU machines a board can run on: QEMU 7.2's Cortex-M machines that have a core mcubench
//! models, each with the one `-cpu` QEMU accepts for it, the memory QEMU maps, and the SysTick
//! clock it models. Built-in boards and the user boards of a scenario are checked against this
//! table: a machine QEMU lacks, a CPU the machine refuses, or a memory map QEMU does not back is an
//! error at load time, not a lockup or an exit code 1 at run time.
//!
//! Everything here was measured on QEMU 7.2 (Debian 12): the memory with `info mtree` (its RAM and
//! ROM regions, with their aliases), the SysTick clock by running a known number of instructions
//! under `-icount shift=0` and reading SysTick with the processor clock source. Not in the table:
//! mps3-an547 (Cortex-M55, no core model) and musca-a/musca-b1 (their boot flow did not run our
//! test firmware).

use mcubench_wire::Core;

use crate::config::board::{Layout, Region};

/// One QEMU machine.
#[derive(Debug, Clone, Copy)]
pub struct Machine {
    /// `-machine`.
    pub name: &'static str,
    /// What QEMU models, for messages.
    pub about: &'static str,
    /// The `-cpu` the machine takes (QEMU exits 1 on any other).
    pub cpu: &'static str,
    /// CPUs QEMU creates. All but the first start powered off; the timing plugin counts the
    /// first and voids the run if another runs code.
    pub vcpus: u32,
    /// SysTick clock with the processor clock source (CLKSOURCE = 1) under `-icount shift=0`.
    pub systick_hz: u64,
    /// The core boots Secure and QEMU's IDAU marks addresses with bit 28 set as Secure: code
    /// must be linked at the Secure aliases (the non-secure ones lock the core up at reset).
    pub secure_boot: bool,
    /// The RAM and ROM QEMU maps (aliases listed as regions of their own).
    pub memory: &'static [Memory],
}

/// A range of memory a machine maps.
#[derive(Debug, Clone, Copy)]
pub struct Memory {
    pub name: &'static str,
    pub origin: u64,
    pub length: u64,
    /// RAM; otherwise ROM (flash), which the guest cannot write, so no place for RAM.
    pub writable: bool,
}

const KIB: u64 = 1024;
const MIB: u64 = 1024 * KIB;

const fn ram(name: &'static str, origin: u64, length: u64) -> Memory {
    Memory { name, origin, length, writable: true }
}

const fn rom(name: &'static str, origin: u64, length: u64) -> Memory {
    Memory { name, origin, length, writable: false }
}

/// The MPS2 boards with a Cortex-M3/M4 (AN385, AN386): ZBT SSRAM1 at 0 (mirrored above it),
/// block RAM, ZBT SSRAM2/3 at 0x20000000 (mirrored) and the 16 MiB PSRAM.
const MPS2_M3_M4: &[Memory] = &[
    ram("ZBT SSRAM1", 0x0000_0000, 4 * MIB),
    ram("ZBT SSRAM1 mirror", 0x0040_0000, 4 * MIB),
    ram("block RAM", 0x0100_0000, 64 * KIB),
    ram("ZBT SSRAM2/3", 0x2000_0000, 4 * MIB),
    ram("ZBT SSRAM2/3 mirror", 0x2040_0000, 4 * MIB),
    ram("PSRAM", 0x2100_0000, 16 * MIB),
];

/// The IoTKit / SSE-200 boards (AN505, AN521) at their Secure aliases (bit 28 set), where the
/// core boots, and their Non-secure aliases (data only: the core cannot run Non-secure code
/// without first setting up the Non-secure world).
macro_rules! mps2_tz {
    ($sram:expr) => {
        &[
            ram("ZBT SSRAM1 (Secure alias)", 0x1000_0000, 4 * MIB),
            ram("ZBT SSRAM1 mirror (Secure alias)", 0x1040_0000, 4 * MIB),
            ram("SSE SRAM (Secure alias)", 0x3000_0000, $sram),
            ram("ZBT SSRAM2+3 (Secure alias)", 0x3800_0000, 4 * MIB),
            ram("ZBT SSRAM1", 0x0000_0000, 4 * MIB),
            ram("ZBT SSRAM1 mirror", 0x0040_0000, 4 * MIB),
            ram("SSE SRAM", 0x2000_0000, $sram),
            ram("ZBT SSRAM2+3", 0x2800_0000, 4 * MIB),
            ram("PSRAM", 0x8000_0000, 16 * MIB),
        ]
    };
}

/// Every machine a board can name.
pub const MACHINES: &[Machine] = &[
    Machine {
        name: "lm3s6965evb",
        about: "TI Stellaris LM3S6965 evaluation board (Zephyr's qemu_cortex_m3)",
        cpu: "cortex-m3",
        vcpus: 1,
        // The reset value of SYSCTL RCC (SYSDIV /16 of 200 MHz); firmware that programs the PLL
        // through RCC changes it.
        systick_hz: 12_500_000,
        secure_boot: false,
        memory: &[rom("flash", 0x0000_0000, 256 * KIB), ram("SRAM", 0x2000_0000, 64 * KIB)],
    },
    Machine {
        name: "lm3s811evb",
        about: "TI Stellaris LM3S811 evaluation board",
        cpu: "cortex-m3",
        vcpus: 1,
        systick_hz: 12_500_000,
        secure_boot: false,
        memory: &[rom("flash", 0x0000_0000, 64 * KIB), ram("SRAM", 0x2000_0000, 8 * KIB)],
    },
    Machine {
        name: "microbit",
        about: "BBC micro:bit v1 (nRF51822)",
        cpu: "cortex-m0",
        vcpus: 1,
        systick_hz: 16_000_000,
        secure_boot: false,
        memory: &[rom("flash", 0x0000_0000, 256 * KIB), ram("SRAM", 0x2000_0000, 16 * KIB)],
    },
    Machine {
        name: "mps2-an385",
        about: "Arm MPS2 with the AN385 image (Cortex-M3)",
        cpu: "cortex-m3",
        vcpus: 1,
        systick_hz: 25_000_000,
        secure_boot: false,
        memory: MPS2_M3_M4,
    },
    Machine {
        name: "mps2-an386",
        about: "Arm MPS2 with the AN386 image (Cortex-M4)",
        cpu: "cortex-m4",
        vcpus: 1,
        systick_hz: 25_000_000,
        secure_boot: false,
        memory: MPS2_M3_M4,
    },
    Machine {
        name: "mps2-an500",
        about: "Arm MPS2 with the AN500 image (Cortex-M7)",
        cpu: "cortex-m7",
        vcpus: 1,
        systick_hz: 25_000_000,
        secure_boot: false,
        memory: &[
            ram("ZBT SSRAM1", 0x0000_0000, 4 * MIB),
            ram("ZBT SSRAM1 mirror", 0x0040_0000, 4 * MIB),
            ram("ZBT SSRAM2/3", 0x2000_0000, 4 * MIB),
            ram("ZBT SSRAM2/3 mirror", 0x2040_0000, 4 * MIB),
            ram("PSRAM", 0x6000_0000, 16 * MIB),
        ],
    },
    Machine {
        name: "mps2-an505",
        about: "Arm MPS2 with the AN505 image (Cortex-M33, IoTKit)",
        cpu: "cortex-m33",
        vcpus: 1,
        systick_hz: 20_000_000,
        secure_boot: true,
        memory: mps2_tz!(32 * KIB),
    },
    Machine {
        name: "mps2-an511",
        about: "Arm MPS2 with the AN511 DesignStart image (Cortex-M3)",
        cpu: "cortex-m3",
        vcpus: 1,
        systick_hz: 25_000_000,
        secure_boot: false,
        memory: &[
            ram("block RAM", 0x0000_0000, 256 * KIB),
            ram("ZBT SSRAM1", 0x0040_0000, 8 * MIB),
            ram("SRAM", 0x2000_0000, 128 * KIB),
            ram("ZBT SSRAM2/3", 0x2040_0000, 4 * MIB),
            ram("PSRAM", 0x2100_0000, 16 * MIB),
        ],
    },
    Machine {
        name: "mps2-an521",
        about: "Arm MPS2 with the AN521 image (SSE-200, two Cortex-M33s; the second starts powered off)",
        cpu: "cortex-m33",
        vcpus: 2,
        systick_hz: 20_000_000,
        secure_boot: true,
        memory: mps2_tz!(128 * KIB),
    },
    Machine {
        name: "mps3-an524",
        about: "Arm MPS3 with the AN524 image (SSE-200, two Cortex-M33s; the second starts powered off)",
        cpu: "cortex-m33",
        vcpus: 2,
        systick_hz: 32_000_000,
        secure_boot: true,
        memory: &[
            ram("BRAM (Secure alias)", 0x1000_0000, 512 * KIB),
            ram("SSE SRAM (Secure alias)", 0x3000_0000, 128 * KIB),
            rom("QSPI flash (Secure alias)", 0x3800_0000, 8 * MIB),
            ram("BRAM", 0x0000_0000, 512 * KIB),
            ram("SSE SRAM", 0x2000_0000, 128 * KIB),
            rom("QSPI flash", 0x2800_0000, 8 * MIB),
            ram("DDR", 0x6000_0000, 2048 * MIB),
        ],
    },
    Machine {
        name: "netduino2",
        about: "Netduino 2 (STM32F205, Cortex-M3)",
        cpu: "cortex-m3",
        vcpus: 1,
        systick_hz: 120_000_000,
        secure_boot: false,
        memory: &[
            rom("flash", 0x0800_0000, MIB),
            rom("flash (boot alias)", 0x0000_0000, MIB),
            ram("SRAM", 0x2000_0000, 128 * KIB),
        ],
    },
    Machine {
        name: "netduinoplus2",
        about: "Netduino Plus 2 (STM32F405, Cortex-M4F)",
        cpu: "cortex-m4",
        vcpus: 1,
        systick_hz: 168_000_000,
        secure_boot: false,
        memory: &[
            rom("flash", 0x0800_0000, MIB),
            rom("flash (boot alias)", 0x0000_0000, MIB),
            // QEMU 7.2 maps 192 KiB at 0x20000000 (the part has 112 + 16 KiB of SRAM there).
            ram("SRAM", 0x2000_0000, 192 * KIB),
        ],
    },
    Machine {
        name: "stm32vldiscovery",
        about: "STM32VLDISCOVERY (STM32F100, Cortex-M3)",
        cpu: "cortex-m3",
        vcpus: 1,
        systick_hz: 24_000_000,
        secure_boot: false,
        memory: &[
            rom("flash", 0x0800_0000, 128 * KIB),
            rom("flash (boot alias)", 0x0000_0000, 128 * KIB),
            ram("SRAM", 0x2000_0000, 8 * KIB),
        ],
    },
    Machine {
        name: "emcraft-sf2",
        about: "Emcraft SmartFusion2 SOM (M2S010, Cortex-M3)",
        cpu: "cortex-m3",
        vcpus: 1,
        systick_hz: 142_000_000,
        secure_boot: false,
        memory: &[
            rom("eNVM", 0x0000_0000, 256 * KIB),
            rom("eNVM (alias)", 0x6000_0000, 256 * KIB),
            ram("eSRAM", 0x2000_0000, 64 * KIB),
            ram("DDR", 0xa000_0000, 64 * MIB),
        ],
    },
];

impl Machine {
    pub fn find(name: &str) -> Option<&'static Machine> {
        MACHINES.iter().find(|m| m.name == name)
    }

    pub fn names() -> Vec<&'static str> {
        MACHINES.iter().map(|m| m.name).collect()
    }

    /// Whether code for `core` runs on this machine's CPU: the same core, or one whose
    /// instruction set the CPU executes (a Cortex-M0+ part on QEMU's cortex-m0, an M3 on an M4).
    pub fn runs(&self, core: Core) -> bool {
        cpu_runs(self.cpu, core)
    }

    /// Checks that `layout` lies in memory this machine maps: FLASH within one of its memories,
    /// RAM within one of its RAMs, and, on a machine that boots Secure, FLASH at a Secure alias.
    pub fn check_layout(&self, layout: &Layout) -> Result<(), String> {
        let within = |r: &Region, writable: bool| {
            self.memory
                .iter()
                .find(|m| (!writable || m.writable) && m.origin <= r.origin && r.end() <= m.origin + m.length)
        };
        let map = || {
            self.memory
                .iter()
                .map(|m| {
                    format!(
                        "{} 0x{:08x}..0x{:08x}{}",
                        m.name,
                        m.origin,
                        m.origin + m.length,
                        if m.writable { "" } else { " (read-only)" }
                    )
                })
                .collect::<Vec<_>>()
                .join(", ")
        };
        if within(&layout.flash, false).is_none() {
            return Err(format!(
                "flash 0x{:08x}..0x{:08x} is not memory QEMU's {} maps; it has: {}",
                layout.flash.origin,
                layout.flash.end(),
                self.name,
                map()
            ));
        }
        if within(&layout.ram, true).is_none() {
            return Err(format!(
                "ram 0x{:08x}..0x{:08x} is not RAM QEMU's {} maps; it has: {}",
                layout.ram.origin,
                layout.ram.end(),
                self.name,
                map()
            ));
        }
        if self.secure_boot && layout.flash.origin & (1 << 28) == 0 {
            return Err(format!(
                "flash at 0x{:08x} is Non-secure on {}: its core boots Secure and locks up fetching \
                 Non-secure code; link at the Secure alias 0x{:08x}",
                layout.flash.origin,
                self.name,
                layout.flash.origin | (1 << 28)
            ));
        }
        Ok(())
    }
}

/// Whether QEMU's `cpu` executes code built for `core` (see [`Machine::runs`]).
pub fn cpu_runs(cpu: &str, core: Core) -> bool {
    use Core::*;
    match cpu {
        "cortex-m0" => matches!(core, CortexM0 | CortexM0Plus),
        "cortex-m3" => matches!(core, CortexM0 | CortexM0Plus | CortexM3),
        "cortex-m4" => matches!(core, CortexM0 | CortexM0Plus | CortexM3 | CortexM4 | CortexM4F),
        "cortex-m7" => matches!(core, CortexM0 | CortexM0Plus | CortexM3 | CortexM4 | CortexM4F | CortexM7),
        "cortex-m33" => matches!(core, CortexM0 | CortexM0Plus | CortexM3 | CortexM4 | CortexM4F | CortexM33),
        _ => false,
    }
}

/// The Rust targets whose code runs on `core`, the first the default for a user board that
/// names none.
pub fn rust_targets(core: Core) -> &'static [&'static str] {
    use Core::*;
    match core {
        CortexM0 | CortexM0Plus => &["thumbv6m-none-eabi"],
        CortexM3 => &["thumbv7m-none-eabi", "thumbv6m-none-eabi"],
        CortexM4 => &["thumbv7em-none-eabi", "thumbv7m-none-eabi", "thumbv6m-none-eabi"],
        CortexM4F | CortexM7 => {
            &["thumbv7em-none-eabihf", "thumbv7em-none-eabi", "thumbv7m-none-eabi", "thumbv6m-none-eabi"]
        }
        CortexM33 => &[
            "thumbv8m.main-none-eabihf",
            "thumbv8m.main-none-eabi",
            "thumbv8m.base-none-eabi",
            "thumbv7em-none-eabihf",
            "thumbv7em-none-eabi",
            "thumbv7m-none-eabi",
            "thumbv6m-none-eabi",
        ],
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::config::board::BOARDS;

    /// Every built-in board runs on a machine of the table, with its CPU, inside its memory and
    /// with its SysTick clock.
    #[test]
    fn built_in_boards_agree_with_their_machines() {
        for b in BOARDS {
            let m =
                Machine::find(b.qemu_machine).unwrap_or_else(|| panic!("{}: no machine {}", b.name, b.qemu_machine));
            assert_eq!(b.qemu_cpu, m.cpu, "{}", b.name);
            assert!(m.runs(b.core), "{}", b.name);
            assert_eq!(b.systick_hz, m.systick_hz, "{}", b.name);
            m.check_layout(b.layout).unwrap_or_else(|e| panic!("{}: {e}", b.name));
            assert!(rust_targets(b.core).contains(&b.rust_target), "{}: {}", b.name, b.rust_target);
        }
    }

    #[test]
    fn machines_are_consistent() {
        for (i, m) in MACHINES.iter().enumerate() {
            assert!(!MACHINES[..i].iter().any(|o| o.name == m.name), "{} twice", m.name);
            assert!(Core::ALL.iter().any(|c| m.runs(*c)), "{}: no core runs on {}", m.name, m.cpu);
            assert!(m.memory.iter().all(|r| r.length > 0 && r.origin + r.length <= 1 << 32), "{}", m.name);
            assert!(m.memory.iter().any(|r| r.writable), "{}: no RAM", m.name);
        }
    }

    #[test]
    fn layouts_outside_the_machine_are_refused() {
        let lm3s = Machine::find("lm3s6965evb").unwrap();
        let layout = |flash: (u64, u64), ram: (u64, u64)| Layout {
            name: "t",
            about: &[],
            flash: Region { origin: flash.0, length: flash.1 },
            ram: Region { origin: ram.0, length: ram.1 },
            defined_in: None,
        };
        assert!(lm3s.check_layout(&layout((0, 256 * KIB), (0x2000_0000, 64 * KIB))).is_ok());
        let e = lm3s.check_layout(&layout((0x0800_0000, 256 * KIB), (0x2000_0000, 64 * KIB))).unwrap_err();
        assert!(e.starts_with("flash 0x08000000..0x08040000 is not memory QEMU's lm3s6965evb maps; it has: flash 0x00000000..0x00040000 (read-only), SRAM"), "{e}");
        let e = lm3s.check_layout(&layout((0, 256 * KIB), (0x2000_0000, 128 * KIB))).unwrap_err();
        assert!(e.starts_with("ram 0x20000000..0x20020000 is not RAM"), "{e}");
        // RAM in flash: mapped, but read-only.
        let e = lm3s.check_layout(&layout((0, 128 * KIB), (128 * KIB, 64 * KIB))).unwrap_err();
        assert!(e.starts_with("ram 0x00020000..0x00030000 is not RAM"), "{e}");
        let an521 = Machine::find("mps2-an521").unwrap();
        let e = an521.check_layout(&layout((0, 4 * MIB), (0x3800_0000, 4 * MIB))).unwrap_err();
        assert!(e.contains("Secure alias 0x10000000"), "{e}");
    }

    #[test]
    fn cores_run_on_cpus_with_their_instruction_set() {
        assert!(cpu_runs("cortex-m0", Core::CortexM0Plus));
        assert!(cpu_runs("cortex-m4", Core::CortexM3));
        assert!(!cpu_runs("cortex-m3", Core::CortexM4F));
        assert!(!cpu_runs("cortex-m33", Core::CortexM7), "double-precision FPU");
        assert!(!cpu_runs("cortex-m55", Core::CortexM33));
        assert_eq!(rust_targets(Core::CortexM33)[0], "thumbv8m.main-none-eabihf");
    }
}
