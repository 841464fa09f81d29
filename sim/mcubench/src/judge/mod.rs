//! Judging a run: the firmware's result records ([`protocol`]) and the verdict from QEMU's exit,
//! the records and the scenario's rules ([`verdict`]); fault status registers in words
//! ([`fault`]).

pub mod console;
pub mod fault;
pub mod protocol;
pub mod stopped;
pub mod verdict;
