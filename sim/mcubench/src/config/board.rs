//! Boards mcubench can run on. A board is data: the Rust target, the QEMU machine and CPU, the
//! memory map (the `memory.x` from `linker/`, embedded so the binary works from any directory) and
//! the SysTick clock that turns ticks into instructions under `-icount shift=0`.

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
    /// Name of the directory under `linker/` that holds this board's `memory.x`.
    pub memory_layout: &'static str,
    /// Contents of that `memory.x`.
    pub memory_x: &'static str,
    pub flash: (u64, u64),
    pub ram: (u64, u64),
    /// SysTick clock with the processor clock source, as QEMU models it.
    pub systick_hz: u64,
}

const MPS2_MEMORY_X: &str = include_str!("../../../../linker/mps2/memory.x");
const MPS2_AN505_MEMORY_X: &str = include_str!("../../../../linker/mps2-an505/memory.x");
const MICROBIT_MEMORY_X: &str = include_str!("../../../../linker/microbit/memory.x");

const MIB: u64 = 1024 * 1024;

/// Every supported board. Order is the order reports use.
pub const BOARDS: &[Board] = &[
    Board {
        name: "mps2-an386",
        core: Core::CortexM4F,
        rust_target: "thumbv7em-none-eabihf",
        qemu_machine: "mps2-an386",
        qemu_cpu: "cortex-m4",
        memory_layout: "mps2",
        memory_x: MPS2_MEMORY_X,
        flash: (0x0000_0000, 4 * MIB),
        ram: (0x2000_0000, 4 * MIB),
        systick_hz: 25_000_000,
    },
    Board {
        name: "mps2-an385",
        core: Core::CortexM3,
        rust_target: "thumbv7m-none-eabi",
        qemu_machine: "mps2-an385",
        qemu_cpu: "cortex-m3",
        memory_layout: "mps2",
        memory_x: MPS2_MEMORY_X,
        flash: (0x0000_0000, 4 * MIB),
        ram: (0x2000_0000, 4 * MIB),
        systick_hz: 25_000_000,
    },
    Board {
        name: "mps2-an500",
        core: Core::CortexM7,
        rust_target: "thumbv7em-none-eabihf",
        qemu_machine: "mps2-an500",
        qemu_cpu: "cortex-m7",
        memory_layout: "mps2",
        memory_x: MPS2_MEMORY_X,
        flash: (0x0000_0000, 4 * MIB),
        ram: (0x2000_0000, 4 * MIB),
        systick_hz: 25_000_000,
    },
    Board {
        // Boots in the Secure state: the non-secure aliases lock up, so link at the Secure ones.
        name: "mps2-an505",
        core: Core::CortexM33,
        rust_target: "thumbv8m.main-none-eabihf",
        qemu_machine: "mps2-an505",
        qemu_cpu: "cortex-m33",
        memory_layout: "mps2-an505",
        memory_x: MPS2_AN505_MEMORY_X,
        flash: (0x1000_0000, 4 * MIB),
        ram: (0x3800_0000, 4 * MIB),
        systick_hz: 20_000_000,
    },
    Board {
        name: "microbit",
        core: Core::CortexM0,
        rust_target: "thumbv6m-none-eabi",
        qemu_machine: "microbit",
        qemu_cpu: "cortex-m0",
        memory_layout: "microbit",
        memory_x: MICROBIT_MEMORY_X,
        flash: (0x0000_0000, 256 * 1024),
        ram: (0x2000_0000, 16 * 1024),
        systick_hz: 16_000_000,
    },
];

impl Board {
    pub fn find(name: &str) -> Option<&'static Board> {
        BOARDS.iter().find(|b| b.name == name)
    }

    pub fn names() -> Vec<&'static str> {
        BOARDS.iter().map(|b| b.name).collect()
    }

    pub fn regions(&self) -> [MemoryRegion; 2] {
        [
            MemoryRegion { name: "FLASH".into(), origin: self.flash.0, length: self.flash.1 },
            MemoryRegion { name: "RAM".into(), origin: self.ram.0, length: self.ram.1 },
        ]
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
    use super::*;

    #[test]
    fn tick_conversion_follows_each_board_clock() {
        assert_eq!(Board::find("mps2-an386").unwrap().ticks_to_instructions(3), 120);
        assert_eq!(Board::find("mps2-an505").unwrap().ticks_to_instructions(3), 150);
        assert_eq!(Board::find("microbit").unwrap().ticks_to_instructions(2), 125);
    }

    #[test]
    fn memory_x_matches_the_board_map() {
        // The runner trusts `flash`/`ram` for region classification; the linker uses memory.x.
        for b in BOARDS {
            let text = b.memory_x.to_ascii_uppercase();
            assert!(text.contains(&format!("0X{:08X}", b.flash.0)), "{}: flash origin", b.name);
            assert!(text.contains(&format!("0X{:08X}", b.ram.0)), "{}: ram origin", b.name);
        }
    }
}
