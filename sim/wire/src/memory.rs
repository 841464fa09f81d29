//! The memory system of a real part, as the host hands it to the plugin's cycle model
//! (`flash=`, `prefetch=`, `icache=`, `dcache=` in [`crate::PluginArgs`]). Plain data: what the
//! numbers mean, and how they are priced, is `mcubench-timing`'s `memory` module.

/// A range of flash read through lines of `line` bytes, each read costing `wait_states` extra
/// cycles (the part's flash latency at its clock) unless a buffer or cache hides it.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub struct FlashRegion {
    /// First address.
    pub start: u32,
    /// One past the last address.
    pub end: u32,
    /// Extra cycles per flash line read (instruction fetch or data load) that misses every buffer.
    pub wait_states: u32,
    /// Bytes per flash read (the flash interface width): 16 for a 128-bit flash, 8 for 64 bits.
    pub line: u32,
}

/// Size, associativity and line length of a cache.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub struct CacheGeometry {
    /// Total bytes of data.
    pub size: u32,
    /// Ways per set (`size / line` for a fully associative cache).
    pub ways: u32,
    /// Bytes per line.
    pub line: u32,
}

impl CacheGeometry {
    /// Sets of the cache: `size / (ways × line)`.
    pub fn sets(&self) -> u32 {
        self.size / (self.ways * self.line).max(1)
    }

    /// Why the geometry is impossible, if it is: zero sizes, a line that is not a power of two,
    /// a size that is not a whole number of sets.
    pub fn check(&self) -> Result<(), String> {
        if self.size == 0 || self.ways == 0 || self.line == 0 {
            return Err(format!("size {}, ways {}, line {}: none may be 0", self.size, self.ways, self.line));
        }
        if !self.line.is_power_of_two() || self.line < 4 {
            return Err(format!("line {} is not a power of two of at least 4 bytes", self.line));
        }
        if !self.size.is_multiple_of(self.ways * self.line) || !self.sets().is_power_of_two() {
            return Err(format!(
                "size {} is not a power-of-two number of sets of {} ways × {} bytes",
                self.size, self.ways, self.line
            ));
        }
        Ok(())
    }
}

/// The memory system: flash regions (code or data there can stall), a sequential prefetch of
/// the next flash line, and optional instruction and data caches in front of the flash.
/// Addresses outside every flash region (SRAM, TCM) have no wait states.
#[derive(Debug, Clone, Default, PartialEq, Eq)]
pub struct MemoryConfig {
    pub flash: Vec<FlashRegion>,
    /// The next sequential flash line is read while the current one executes.
    pub prefetch: bool,
    /// Instruction cache in front of the flash regions.
    pub icache: Option<CacheGeometry>,
    /// Data cache in front of the flash regions (loads only; flash is not written by stores).
    pub dcache: Option<CacheGeometry>,
    /// Data loads from flash go through the instruction cache (one cache on the code bus: the
    /// STM32H5's ICACHE, the RP2040's XIP cache) when there is no data cache.
    pub unified: bool,
}

impl MemoryConfig {
    /// No flash region: nothing stalls, the model is the core's alone.
    pub fn is_empty(&self) -> bool {
        self.flash.is_empty()
    }

    /// Whether data loads need run-time addresses (memory callbacks): some flash region has
    /// wait states (loads from it can stall) or a data cache is modelled.
    pub fn data_side(&self) -> bool {
        self.flash.iter().any(|f| f.wait_states > 0)
    }
}
