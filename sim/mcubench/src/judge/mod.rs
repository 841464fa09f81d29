//! Judging a run: the firmware's result records ([`protocol`]) and the verdict from QEMU's exit,
//! the records and the scenario's rules ([`verdict`]).

pub mod console;
pub mod protocol;
pub mod verdict;
