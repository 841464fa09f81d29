//! mcubench-wire: everything mcubench and its QEMU plugin exchange, defined once.
//!
//! The host (`mcubench`, MIT OR Apache-2.0) and the plugin (`mcubench-qemu-plugin`,
//! GPL-2.0-or-later because the `qemu-plugin` crate is) are built from the same tree and both
//! link this crate, which is permissively licensed, std-only and free of dependencies:
//!
//! * [`Core`]: which Cortex-M core, for every crate (the board table, the report, the timing
//!   model, the decoder's instruction set via `mcubench-thumb`, the plugin's `core=`).
//! * [`args`]: the plugin's arguments ([`PluginArgs`]), the `-plugin file.so,key=value,...` items.
//! * [`functions`]: the functions file ([`FunctionsFile`]) behind `functions=`.
//! * [`memory`]: a real part's memory system for the cycle model ([`MemoryConfig`]).
//! * [`results`]: the results file ([`Results`]) behind `out=`, versioned by [`HEADER`].
//! * [`trace`]: the run trace behind `trace=`, for pricing a run again with other parameters.
//! * [`counter`]: the cycle counter's value behind `counter=` ([`CounterValue`]).
//!
//! Each format has a writer and a strict parser; parse errors ([`Error`]) name the argument key
//! or the line. Text written by one side is read by the other with the same code, so a format
//! change is made here once (and bumps [`HEADER`] when the results file changes).

pub mod args;
pub mod counter;
mod cpu;
mod error;
pub mod functions;
pub mod memory;
pub mod results;
pub mod trace;

pub use args::{Marker, Markers, PluginArgs, StackProbeRange, WaitStates};
pub use counter::{COUNTER_RECORD_LEN, CounterValue};
pub use cpu::{Core, UnknownCore};
pub use error::Error;
pub use functions::{Function, FunctionsFile};
pub use memory::{CacheGeometry, FlashRegion, MemoryConfig};
pub use results::{
    CALLS_KEPT, Call, Cycles, DWT_CYCCNT, HEADER, Interval, OpenRegion, RegionStats, Results, Site, StackCost,
};
